//! CEL rules natively and inside a component (issue 31): the rules program of the CEL crate
//! (`plugins/cel/examples/rules.rs`: compile checked against a schema, evaluate with the cost
//! budget on) run natively and, built for `wasm32-wasip2`, as a WASI command in wasmtime with
//! the server's engine settings (epoch interruption on; the plugins' fat LTO). Prints both
//! tables' figures side by side and component/native ratios, measured in the same run.
//!
//! Run: `cargo bench -p wasm-apiserver --bench cel_component`

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../tests/it/common/wasi_command.rs"]
mod wasi_command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cargo(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(root())
        // As plugins/build.sh builds components; the native build is unaffected.
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The rows of a rules table: name and its numbers.
fn rows(table: &str) -> Vec<(String, Vec<f64>)> {
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| rule"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let numbers = cells[1..].iter().map(|c| c.parse().unwrap()).collect();
            (cells[0].to_string(), numbers)
        })
        .collect()
}

fn main() {
    cargo(&[
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "-p",
        "wasm-apiserver-cel",
        "--example",
        "rules",
    ]);
    let native = String::from_utf8(cargo(&[
        "run",
        "--release",
        "-q",
        "-p",
        "wasm-apiserver-cel",
        "--example",
        "rules",
    ]))
    .unwrap();
    let wasm = root().join("target/wasm32-wasip2/release/examples/rules.wasm");
    let (ok, component, stderr) = wasi_command::run(&wasm, &["rules"]);
    assert!(ok, "{stderr}");
    println!(
        "| rule | compile µs native | in a component | ratio | evaluate µs native | in a component | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for ((name, n), (_, c)) in rows(&native).into_iter().zip(rows(&component)) {
        println!(
            "| {name} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} |",
            n[0],
            c[0],
            c[0] / n[0],
            n[1],
            c[1],
            c[1] / n[1]
        );
    }
}

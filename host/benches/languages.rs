//! The widgets strategy in Rust, Python (componentize-py) and JavaScript (componentize-js),
//! measured in one run: component size, cold load (compile + instantiate + describe + smoke
//! run, no artifact cache), the compiler's peak memory (a `plugin precompile` child, its
//! `ru_maxrss`), the linear memory a warm instance holds, the first call on a new instance
//! (instantiation included; a thread's instance is replaced after a trap or 10,000 calls), and
//! the cost of one create sequence
//! and one update (prepare, validate, warnings, canonicalize) per call — each as a ratio to
//! Rust's.
//!
//! Run: `bash plugins/build.sh && bash plugins/build-languages.sh &&
//!       cargo bench -p wasm-apiserver --bench languages`

mod common;

use common::measure;
use serde_json::{json, Value};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use wasm_apiserver::plugin::{plugin_memory_in_use, PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{sequence, Strategy};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Peak resident memory of `wasm-apiserver plugin precompile` compiling `file`, bytes.
fn compile_peak_rss(file: &Path) -> u64 {
    let bin = common::root().join("target/release/wasm-apiserver");
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = std::process::Command::new(bin)
        .args(["plugin", "precompile", "--out"])
        .arg(out.path())
        .stdin(std::fs::File::open(file).unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("target/release/wasm-apiserver (cargo build --release)");
    let mut status = 0;
    // SAFETY: plain wait4 on our own child with valid out-pointers.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(pid > 0 && status == 0, "precompile failed: {status}");
    // Already reaped by wait4; this only tells std so (it answers ECHILD).
    let _ = child.wait();
    usage.ru_maxrss as u64 * 1024
}

fn widget() -> Value {
    json!({"apiVersion": "example.dev/v1", "kind": "Widget",
           "metadata": {"name": "w1", "namespace": "default", "uid": "5c4a1c9e-1d6b-4c3a-9a8e-0f6d2a7b9c11",
                        "creationTimestamp": "2026-11-25T10:00:00Z",
                        "labels": {"app": "demo", "tier": "web"}},
           "spec": {"size": "medium", "minReplicas": 1, "maxReplicas": 8, "storageClass": "fast"}})
}

struct Row {
    name: &'static str,
    size: u64,
    load_ms: f64,
    compile_rss: u64,
    instance_mem: usize,
    first_call_ms: f64,
    create_ns: f64,
    update_ns: f64,
}

fn main() {
    let root = common::root();
    let plugins = [
        ("rust", root.join("target/plugins/widgets.wasm")),
        (
            "python",
            root.join("target/lang-plugins/widgets-python.wasm"),
        ),
        (
            "javascript",
            root.join("target/lang-plugins/widgets-js.wasm"),
        ),
    ];
    let mut rows = Vec::new();
    for (name, file) in &plugins {
        assert!(
            file.exists(),
            "{} missing: run plugins/build.sh and plugins/build-languages.sh",
            file.display()
        );
        let size = std::fs::metadata(file).unwrap().len();
        // Cold: a fresh runtime without a disk cache compiles from scratch.
        let runtime = PluginRuntime::new(RuntimeConfig::default()).unwrap();
        // Loading leaves this thread a warm instance (describe, smoke run): its memory is the
        // difference.
        let before = plugin_memory_in_use();
        let t = Instant::now();
        let s = runtime.load_file(file).unwrap();
        let load_ms = t.elapsed().as_secs_f64() * 1e3;
        let compile_rss = compile_peak_rss(file);

        let obj = widget();
        let created = sequence::create(&s, &obj, &sequence::no_meta_validation).unwrap();
        let instance_mem = plugin_memory_in_use().saturating_sub(before);
        let old = created.object.clone();
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(6);
        // A new instance: the first call on a fresh thread (instantiation included), median
        // of 5.
        let mut firsts: Vec<f64> = (0..5)
            .map(|_| {
                let (s, obj) = (s.clone(), obj.clone());
                std::thread::spawn(move || {
                    let t = Instant::now();
                    sequence::create(&s, &obj, &sequence::no_meta_validation).unwrap();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .join()
                .unwrap()
            })
            .collect();
        firsts.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let first_call_ms = firsts[2];
        let n = if *name == "rust" { 2000 } else { 300 };
        let create_ns = measure(n, || {
            black_box(sequence::create(&s, &obj, &sequence::no_meta_validation).unwrap());
        });
        let update_ns = measure(n, || {
            let p = s.prepare_for_update(&new, &old).unwrap();
            black_box(s.validate_update(&p, &old).unwrap());
            black_box(s.warnings_on_update(&p, &old).unwrap());
            black_box(s.canonicalize(&p).unwrap());
        });
        rows.push(Row {
            name,
            size,
            load_ms,
            compile_rss,
            instance_mem,
            first_call_ms,
            create_ns,
            update_ns,
        });
    }
    let rust = &rows[0];
    println!(
        "{:<11} {:>9} {:>14} {:>12} {:>13} {:>13} {:>16} {:>17}",
        "language",
        "size (MB)",
        "cold load",
        "compile RSS",
        "instance mem",
        "new instance",
        "create sequence",
        "update (4 hooks)"
    );
    for r in &rows {
        println!(
            "{:<11} {:>9.1} {:>7.0} ms x{:<3.0} {:>8} MiB {:>9} MiB {:>7.2} ms x{:<3.0} {:>8.1} µs x{:<4.0} {:>8.1} µs x{:<4.0}",
            r.name,
            r.size as f64 / 1e6,
            r.load_ms,
            r.load_ms / rust.load_ms,
            r.compile_rss >> 20,
            r.instance_mem >> 20,
            r.first_call_ms,
            r.first_call_ms / rust.first_call_ms,
            r.create_ns / 1e3,
            r.create_ns / rust.create_ns,
            r.update_ns / 1e3,
            r.update_ns / rust.update_ns,
        );
    }
}

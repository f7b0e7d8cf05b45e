//! The CEL crate's and the CRD crate's tests inside a component (issues 31 and 32):
//! `plugins/build.sh` builds each crate's unit tests for `wasm32-wasip2`
//! (`target/test-plugins/{cel,apiextensions}-tests.wasm`), and they run
//! here as a WASI command in wasmtime — the checker, the libraries, the cost budget and the
//! ported kube cases, as a CRD strategy plugin would run them.

use crate::common::wasi_command;
use std::path::Path;

/// Run `target/test-plugins/<name>.wasm` (a crate's unit tests as a WASI command) and check
/// that at least `at_least` tests ran and every one passed.
fn run_tests_in_component(name: &str, at_least: usize) {
    let wasm =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../target/test-plugins/{name}.wasm"));
    let (ok, stdout, stderr) = wasi_command::run(&wasm, &[name, "--test-threads=1"]);
    assert!(ok, "{stdout}\n{stderr}");
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("test result: ok."))
        .unwrap_or_else(|| panic!("{stdout}"));
    let passed: usize = summary
        .split_whitespace()
        .nth(3)
        .and_then(|n| n.parse().ok())
        .unwrap();
    // Every test of the crate ran (none filtered out, none ignored).
    assert!(
        passed >= at_least && summary.contains(" 0 failed; 0 ignored;"),
        "{summary}"
    );
}

#[test]
fn the_cel_tests_pass_inside_a_component() {
    run_tests_in_component("cel-tests", 30);
}

/// The CRD crate's tests — the cases ported from apiextensions-apiserver (pruning,
/// defaulting, structural and schema validation, CEL rules with ratcheting, list types, CRD
/// validation, conversion reviews) — inside a component, as the `customresources` plugin
/// runs that code.
#[test]
fn the_apiextensions_tests_pass_inside_a_component() {
    run_tests_in_component("apiextensions-tests", 25);
}

//! The CEL crate's tests inside a component (issue 31, item 5): `plugins/build.sh` builds the
//! crate's unit tests for `wasm32-wasip2` (`target/test-plugins/cel-tests.wasm`), and they run
//! here as a WASI command in wasmtime — the checker, the libraries, the cost budget and the
//! ported kube cases, as a CRD strategy plugin would run them.

use crate::common::wasi_command;
use std::path::Path;

#[test]
fn the_cel_tests_pass_inside_a_component() {
    let wasm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-plugins/cel-tests.wasm");
    let (ok, stdout, stderr) = wasi_command::run(&wasm, &["cel-tests", "--test-threads=1"]);
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
        passed >= 30 && summary.contains(" 0 failed; 0 ignored;"),
        "{summary}"
    );
}

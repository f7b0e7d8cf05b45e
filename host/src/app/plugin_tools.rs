//! `wasm-apiserver plugin check|test|precompile`: the plugin author tools, run offline on one
//! component file.

use crate::cli::PluginLimits;
use crate::plugin::{admission_fixtures, fixtures, PluginRuntime};

/// `plugin check FILE`: load, validate and describe. Exit code 0 when it loads, 1 otherwise.
/// Errors: the runtime cannot start.
pub fn check(file: &std::path::Path, limits: &PluginLimits) -> anyhow::Result<i32> {
    use crate::strategy::Strategy;
    let runtime = PluginRuntime::new(limits.runtime_config())?;
    match runtime.load_file(file) {
        Ok(s) => {
            let d = s.description();
            println!(
                "ok: {} serves {} ({}, kind {}, {}) — WIT {}@{}, sha256 {}",
                file.display(),
                d.group_resource(),
                d.api_version(),
                d.kind,
                if d.namespaced {
                    "namespaced"
                } else {
                    "cluster-scoped"
                },
                crate::plugin::WIT_PACKAGE,
                s.wit_version(),
                s.sha256()
            );
            println!("{}", serde_json::to_string_pretty(d)?);
            Ok(0)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(1)
        }
    }
}

/// `plugin test FILE DIR`: run the fixture cases (a strategy's, `plugin/fixtures.rs`, or an
/// admission policy's, `plugin/admission_fixtures.rs`). Exit code 0 when every case passes (and
/// there is one), 1 otherwise. Errors: the runtime cannot start, DIR cannot be read.
pub fn test(
    file: &std::path::Path,
    dir: &std::path::Path,
    limits: &PluginLimits,
) -> anyhow::Result<i32> {
    let runtime = PluginRuntime::new(limits.runtime_config())?;
    let bytes = std::fs::read(file)?;
    // (name, passed, report) per case.
    let results: Vec<(String, bool, String)> =
        if crate::plugin::admission_plugin::is_admission(&bytes) {
            let name = file.file_stem().unwrap_or_default().to_string_lossy();
            let policy = match runtime.load_admission(&name, &bytes) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(1);
                }
            };
            admission_fixtures::run_dir(&policy, dir)?
                .into_iter()
                .map(|r| (r.name, r.passed, r.report))
                .collect()
        } else {
            let strategy = match runtime.load_file(file) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(1);
                }
            };
            fixtures::run_dir(&strategy, dir)?
                .into_iter()
                .map(|r| (r.name, r.passed, r.report))
                .collect()
        };
    let failed = results.iter().filter(|r| !r.1).count();
    for (name, passed, report) in &results {
        if *passed {
            println!("PASS {name}");
        } else {
            println!("FAIL {name}\n{report}");
        }
    }
    println!(
        "plugin test {}: {} passed, {} failed",
        file.display(),
        results.len() - failed,
        failed
    );
    Ok(if failed == 0 && !results.is_empty() {
        0
    } else {
        1
    })
}

/// `plugin precompile --out OUT`: compile the component read from standard input into a
/// precompiled artifact (the server runs this in a child process). Errors: unreadable input,
/// a component that does not compile, OUT not writable.
pub fn precompile(out: &std::path::Path) -> anyhow::Result<i32> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)?;
    PluginRuntime::new(crate::plugin::RuntimeConfig::default())?.precompile_to(&bytes, out)?;
    Ok(0)
}

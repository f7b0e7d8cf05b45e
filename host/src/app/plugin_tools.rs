//! `wasm-apiserver plugin check|test|precompile`: the plugin author tools, run offline on one
//! component file.

use crate::cli::PluginLimits;
use crate::plugin::{fixtures, PluginRuntime};

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

/// `plugin test FILE DIR`: run the fixture cases. Exit code 0 when every case passes (and
/// there is one), 1 otherwise. Errors: the runtime cannot start, DIR cannot be read.
pub fn test(
    file: &std::path::Path,
    dir: &std::path::Path,
    limits: &PluginLimits,
) -> anyhow::Result<i32> {
    let runtime = PluginRuntime::new(limits.runtime_config())?;
    let strategy = match runtime.load_file(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    let results = fixtures::run_dir(&strategy, dir)?;
    let failed = results.iter().filter(|r| !r.passed).count();
    for r in &results {
        if r.passed {
            println!("PASS {}", r.name);
        } else {
            println!("FAIL {}\n{}", r.name, r.report);
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

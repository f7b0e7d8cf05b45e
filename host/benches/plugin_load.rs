//! Plugin load cost (issue 17, item 3): for every standard plugin, the wall time and peak RSS
//! of a cold compile — `wasm-apiserver plugin precompile`, the child process the server
//! compiles in — and the time to load it from the precompiled cache (`plugin check` with a
//! warm `--plugin-cache-dir`: engine, deserialize, instantiate, describe, smoke run), each the
//! median of `PLUGIN_LOAD_ROUNDS` (3) runs. Peak RSS is the child's `ru_maxrss` from `wait4`.
//! Targets: cold < 1 s and < 300 MB, cached < 50 ms.
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench plugin_load`

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Run `cmd` with `stdin` piped in; (wall time, peak RSS in KiB, success).
// The child is reaped by `wait4` (which also gives its peak RSS), not `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run(mut cmd: Command, stdin: &[u8]) -> (Duration, i64, bool) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (start.elapsed(), usage.ru_maxrss, ok)
}

fn median<T: Copy + Ord>(mut v: Vec<T>) -> T {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("PLUGIN_LOAD_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let exe = env!("CARGO_BIN_EXE_wasm-apiserver");
    println!(
        "{:<22} {:>9} {:>10} {:>12} {:>12}",
        "plugin", "size KiB", "cold ms", "cold peak MB", "cached ms"
    );
    for p in [
        "pods",
        "configmaps",
        "namespaces",
        "leases",
        "events",
        "events-k8s-io",
        "roles",
        "clusterroles",
        "rolebindings",
        "clusterrolebindings",
        "widgets",
    ] {
        let file = root().join(format!("target/plugins/{p}.wasm"));
        let bytes = std::fs::read(&file).expect("bash plugins/build.sh first");
        let dir = tempfile::tempdir().unwrap();
        let (mut cold, mut peak) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            let mut cmd = Command::new(exe);
            cmd.args(["plugin", "precompile", "--out"])
                .arg(dir.path().join(format!("{i}.cwasm")));
            let (t, rss, ok) = run(cmd, &bytes);
            assert!(ok, "{p}: precompile failed");
            cold.push(t);
            peak.push(rss);
        }
        // Cached: `plugin check` once to fill a cache, then timed runs that deserialize it.
        let cache = dir.path().join("cache");
        let check = || {
            let mut cmd = Command::new(exe);
            cmd.args(["plugin", "check"])
                .arg(&file)
                .arg("--plugin-cache-dir")
                .arg(&cache);
            cmd
        };
        assert!(run(check(), b"").2, "{p}: check failed");
        let cached: Vec<Duration> = (0..rounds).map(|_| run(check(), b"").0).collect();
        println!(
            "{:<22} {:>9} {:>10.0} {:>12.0} {:>12.1}",
            p,
            bytes.len() / 1024,
            median(cold).as_secs_f64() * 1000.0,
            median(peak) as f64 / 1024.0,
            median(cached).as_secs_f64() * 1000.0
        );
    }
}

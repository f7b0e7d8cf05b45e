//! Server memory after start with the standard plugins (pods, configmaps, namespaces, widgets),
//! cold (empty plugin cache: every component compiled) and warm (the cache from the cold run),
//! against the peak of compiling the largest plugin in-process (`plugin check`, what the server
//! itself held before compiles moved to a child process).
//!
//! `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench startup_memory`

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn bin() -> PathBuf {
    root().join("target/release/wasm-apiserver")
}

fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Start the server, wait until it listens, settle, and return (RSS, peak RSS) in KiB and
/// the start-up time.
fn start(plugins: &Path, data: &Path) -> (u64, u64, Duration) {
    let started = Instant::now();
    let mut child = Command::new(bin())
        .args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--plugin-dir",
        ])
        .arg(plugins)
        .arg("--data-dir")
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run the server (cargo build --release first)");
    let out = BufReader::new(child.stdout.take().unwrap());
    for line in out.lines().map_while(Result::ok) {
        if line.starts_with("wasm-apiserver listening on") {
            break;
        }
    }
    let took = started.elapsed();
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id();
    let r = (status_kib(pid, "VmRSS"), status_kib(pid, "VmHWM"), took);
    let _ = child.kill();
    let _ = child.wait();
    r
}

fn main() {
    let status = Command::new("cargo")
        .args([
            "build",
            "--release",
            "-p",
            "wasm-apiserver",
            "--bin",
            "wasm-apiserver",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins.d");
    std::fs::create_dir_all(&plugins).unwrap();
    for p in ["pods", "configmaps", "namespaces", "widgets"] {
        std::fs::copy(
            root().join(format!("target/plugins/{p}.wasm")),
            plugins.join(format!("{p}.wasm")),
        )
        .expect("bash plugins/build.sh first");
    }
    let data = dir.path().join("data");
    let (cold_rss, cold_peak, cold_t) = start(&plugins, &data);
    let (warm_rss, warm_peak, warm_t) = start(&plugins, &data);

    // The in-process compile of the largest plugin, as the server did it before.
    let t = Instant::now();
    let mut check = Command::new(bin())
        .args(["plugin", "check"])
        .arg(plugins.join("pods.wasm"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = check.id();
    let mut peak = 0;
    while check.try_wait().unwrap().is_none() {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(v) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(v);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mib = |k: u64| k as f64 / 1024.0;
    println!(
        "server after start, cold cache: RSS {:.1} MiB, peak {:.1} MiB, listening after {:.2} s",
        mib(cold_rss),
        mib(cold_peak),
        cold_t.as_secs_f64()
    );
    println!(
        "server after start, warm cache: RSS {:.1} MiB, peak {:.1} MiB, listening after {:.2} s",
        mib(warm_rss),
        mib(warm_peak),
        warm_t.as_secs_f64()
    );
    println!(
        "in-process compile of pods.wasm (plugin check): peak {:.1} MiB in {:.2} s",
        mib(peak),
        t.elapsed().as_secs_f64()
    );
    println!(
        "cold RSS / in-process compile peak: {:.3}",
        cold_rss as f64 / peak.max(1) as f64
    );
}

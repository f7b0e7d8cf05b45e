//! What several benchmarks share: a server process on loopback with a plugin folder, the
//! ~2 KB two-container pod they measure with, this process's CPU time and the median-of-batches
//! timer. Included with
//! `mod common;` (not a bench target itself).

#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A running server binary; killed when dropped, with its temporary directory.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:<port>` (the plain port).
    pub url: String,
    /// `https://127.0.0.1:<port>` (the secure port).
    pub secure_url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// [`Server::spawn`] serving the plugin folder `plugins` (from
    /// [`Server::dir_with_plugins`]) with its data in `<dir>/data` and the shared precompiled
    /// plugin cache of the tests (`target/test-plugin-cache`), then `configure`'s arguments.
    pub fn spawn_with_plugins(
        dir: tempfile::TempDir,
        plugins: &Path,
        configure: impl FnOnce(&mut Command),
    ) -> Server {
        let data = dir.path().join("data");
        Server::spawn(dir, |cmd| {
            cmd.arg("--plugin-dir")
                .arg(plugins)
                .arg("--data-dir")
                .arg(data)
                .arg("--plugin-cache-dir")
                .arg(root().join("target/test-plugin-cache"));
            configure(cmd);
        })
    }

    /// A temporary directory holding `plugins.d/` with the named standard plugins copied from
    /// `target/plugins` (panics if `bash plugins/build.sh` has not run); returns the
    /// directory and the plugin folder.
    pub fn dir_with_plugins(plugins: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("plugins.d");
        std::fs::create_dir_all(&folder).unwrap();
        for p in plugins {
            std::fs::copy(
                root().join(format!("target/plugins/{p}.wasm")),
                folder.join(format!("{p}.wasm")),
            )
            .expect("bash plugins/build.sh first");
        }
        (dir, folder)
    }

    /// The server binary listening on loopback (`--secure-port 0 --port 0`, `RUST_LOG=warn`,
    /// stderr discarded) with the arguments `configure` adds; waits for its
    /// `wasm-apiserver listening on http://…` line. Panics when it exits without one.
    pub fn spawn(dir: tempfile::TempDir, configure: impl FnOnce(&mut Command)) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"));
        cmd.args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--port",
            "0",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        configure(&mut cmd);
        let mut child = cmd.spawn().expect("the server binary");
        let out = BufReader::new(child.stdout.take().unwrap());
        // `listening on https://…` comes first, then `http://…`.
        let mut secure_url = String::new();
        let url = out
            .lines()
            .map_while(Result::ok)
            .find_map(|line| {
                if let Some(u) = line.strip_prefix("wasm-apiserver listening on https://") {
                    secure_url = format!("https://{u}");
                }
                line.strip_prefix("wasm-apiserver listening on http://")
                    .map(|u| format!("http://{u}"))
            })
            .expect("the server did not start");
        Server {
            child,
            url,
            secure_url,
            _dir: dir,
        }
    }

    /// The server's temporary directory (its data under `data/`, certificates under
    /// `data/pki/` when [`Server::spawn_with_plugins`] made it).
    pub fn dir(&self) -> &Path {
        self._dir.path()
    }
}

/// A ~1.9 KB (2.5 KB once defaulted) pod with two containers, ports, env, resources, a volume
/// mount, a probe, a node selector and a toleration, named `web-7d4b9c8f6d-x2x9k` in
/// `default`.
pub fn pod() -> Value {
    let container = |name: &str, image: &str| {
        json!({
            "name": name, "image": image,
            "command": ["/bin/server", "--config", "/etc/app/config.yaml", "--verbose"],
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                      {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
            "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "REGION", "value": "eu-west-1"},
                    {"name": "FEATURE_FLAGS", "value": "alpha,beta,gamma"}],
            "resources": {"requests": {"cpu": "250m", "memory": "128Mi"},
                          "limits": {"cpu": "500m", "memory": "256Mi"}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}
        })
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "web-7d4b9c8f6d-x2x9k", "namespace": "default",
            "uid": "5f0c3b8e-7a55-4d0c-9d59-3c1c2b6f7e21",
            "creationTimestamp": "2026-11-21T08:00:00Z",
            "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d4b9c8f6d", "team": "platform"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                            "kubectl.kubernetes.io/default-container": "web"}
        },
        "spec": {
            "containers": [container("web", "registry.example.dev/web:1.4.2"),
                           container("sidecar", "registry.example.dev/proxy:2.0.1")],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}]
        }
    })
}

/// This process's user + system CPU time (`getrusage(RUSAGE_SELF)`), µs.
pub fn self_cpu_us() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// utime + stime of process `pid`, µs (`/proc/<pid>/stat` fields 14 and 15, in clock ticks of
/// 10 ms).
pub fn proc_cpu_us(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name, which may contain spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    ticks as f64 * 10_000.0
}

/// Median ns per call over 7 batches of `n` calls (after `n / 10 + 1` warm-up calls).
pub fn measure(n: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..n / 10 + 1 {
        f();
    }
    let mut samples: Vec<f64> = (0..7)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[samples.len() / 2]
}

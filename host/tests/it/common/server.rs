//! A real `wasm-apiserver` process for integration tests: the built binary, the standard plugins
//! (and optionally test plugins) in a temp plugin dir, the embedded store in a temp data dir or
//! a real etcd, a secure port and a plain loopback port chosen by the system, and the
//! generated admin kubeconfig, with which the installed `kubectl` talks HTTPS to it (the CA
//! verified, authenticated by the admin client certificate).
//!
//! Unless a test passes `--authorization-mode`, the server runs with `AlwaysAllow`, so the
//! HTTP-level tests can talk plain HTTP to [`TestServer::url`] anonymously; the security
//! suite passes the mode it tests.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasm_apiserver_storage::testing::etcd::EtcdServer;

/// Which storage the server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The embedded SQLite store.
    Embedded,
    /// A real etcd started for the test.
    Etcd,
}

/// A running server; killed on drop.
pub struct TestServer {
    child: Child,
    /// The plain-HTTP port: `http://127.0.0.1:<port>`.
    pub url: String,
    /// The secure port: `https://<address>:<port>`.
    pub secure_url: String,
    /// The temp dir holding plugins, data, kubeconfig and kubectl's cache.
    pub dir: tempfile::TempDir,
    _etcd: Option<EtcdServer>,
    log: Arc<Mutex<Vec<String>>>,
    stdout: Arc<Mutex<Vec<String>>>,
}

fn plugin_cache_dir() -> PathBuf {
    super::repo_root().join("target/test-plugin-cache")
}

impl TestServer {
    /// Start with the standard plugins.
    pub fn start(backend: Backend) -> TestServer {
        TestServer::start_with(
            backend,
            &["pods", "configmaps", "namespaces", "widgets"],
            &[],
        )
    }

    /// Start with the named plugins (from `target/plugins` or `target/test-plugins`) and extra
    /// flags.
    pub fn start_with(backend: Backend, plugins: &[&str], extra_args: &[&str]) -> TestServer {
        TestServer::start_configured(backend, plugins, extra_args, |_| {})
    }

    /// [`TestServer::start_with`], with `configure` applied to the command before it is
    /// spawned (resource limits, environment). `--plugin-cache-dir` in `extra_args` replaces
    /// the shared test cache.
    pub fn start_configured(
        backend: Backend,
        plugins: &[&str],
        extra_args: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let plugin_dir = super::plugin_dir(dir.path(), plugins);
        let etcd = (backend == Backend::Etcd).then(EtcdServer::start);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"));
        // `--plugin-dir` in `extra_args` replaces the prepared folder.
        if !extra_args.contains(&"--plugin-dir") {
            cmd.arg("--plugin-dir").arg(&plugin_dir);
        }
        cmd.arg("--data-dir").arg(dir.path().join("data"));
        if !extra_args.contains(&"--plugin-cache-dir") {
            cmd.arg("--plugin-cache-dir").arg(plugin_cache_dir());
        }
        cmd.args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--port",
            "0",
        ]);
        if !extra_args
            .iter()
            .any(|a| a.starts_with("--authorization-mode"))
        {
            cmd.arg("--authorization-mode=AlwaysAllow");
        }
        cmd.args(extra_args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(e) = &etcd {
            cmd.arg("--etcd-servers").arg(&e.endpoint);
        }
        configure(&mut cmd);
        let mut child = cmd.spawn().expect("start wasm-apiserver");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let l = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line);
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let printed = Arc::new(Mutex::new(Vec::new()));
        let p = printed.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("wasm-apiserver listening on ") {
                    let _ = tx.send(url.to_string());
                }
                p.lock().unwrap().push(line);
            }
        });
        // The secure port is announced first, then the plain one.
        let mut urls = Vec::new();
        while urls.len() < 2 {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(u) => urls.push(u),
                Err(_) => {
                    let _ = child.kill();
                    panic!("server did not start:\n{}", log.lock().unwrap().join("\n"));
                }
            }
        }
        TestServer {
            child,
            secure_url: urls[0].clone(),
            url: urls[1].clone(),
            dir,
            _etcd: etcd,
            log,
            stdout: printed,
        }
    }

    /// Kill the server (SIGKILL, like a crash) and wait for it to exit.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The endpoint of the etcd under an etcd-backed server.
    pub fn etcd_endpoint(&self) -> Option<String> {
        self._etcd.as_ref().map(|e| e.endpoint.clone())
    }

    /// Stop the etcd under an etcd-backed server (fault tests).
    pub fn stop_etcd(&mut self) {
        self._etcd.as_mut().expect("an etcd-backed server").stop();
    }

    /// The server's process id (to send it signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A field of the server's `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
    pub fn memory_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc status"))
    }

    /// Wait for the server process to exit, at most `timeout`; its exit status, or `None`
    /// if it is still running.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Some(st) = self.child.try_wait().unwrap() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// What the server printed on standard output for its user (the kubeconfig's path, the
    /// encryption key's fingerprint, the listening addresses).
    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The admin kubeconfig the server generated (HTTPS, namespace `default`).
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("data/admin.kubeconfig")
    }

    /// Run the installed kubectl against this server; returns (success, stdout, stderr).
    pub fn kubectl(&self, args: &[&str]) -> (bool, String, String) {
        let out = self.kubectl_cmd(args).output().expect("run kubectl");
        decode(out)
    }

    /// kubectl with a kubeconfig whose user is only the bearer `token` (the admin kubeconfig's
    /// cluster and CA): (success, stdout then stderr).
    pub fn kubectl_with_token(&self, token: &str, args: &[&str]) -> (bool, String) {
        let mut config: serde_json::Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(self.kubeconfig()).unwrap()).unwrap();
        config["users"][0]["user"] = serde_json::json!({ "token": token });
        let path = self.dir.path().join("token.kubeconfig");
        std::fs::write(&path, serde_yaml_ng::to_string(&config).unwrap()).unwrap();
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&path)
            .arg("--cache-dir")
            .arg(self.dir.path().join("kube-cache"))
            .args(args)
            .env_remove("KUBECONFIG")
            .output()
            .expect("run kubectl");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// A kubectl command ready to run (for stdin or env tweaks).
    pub fn kubectl_cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.dir.path().join("kube-cache"))
            .args(args)
            .env_remove("KUBECONFIG")
            .current_dir(self.dir.path());
        c
    }

    /// `kubectl apply` the `default` Namespace (idempotent), for tests that create namespaced
    /// objects there.
    pub fn create_default_namespace(&self) {
        let ns = self.file(
            "ns.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n",
        );
        self.ok(&["apply", "-f", ns.to_str().unwrap()]);
    }

    /// kubectl that must succeed; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args);
        assert!(
            ok,
            "kubectl {args:?} failed:\nstdout: {out}\nstderr: {err}\nserver log:\n{}",
            self.tail()
        );
        out
    }

    /// kubectl that must fail; returns stdout + stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args);
        assert!(!ok, "kubectl {args:?} should have failed:\n{out}");
        format!("{out}{err}")
    }

    /// Write a file in the test dir and return its path.
    pub fn file(&self, name: &str, content: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        p
    }

    fn tail(&self) -> String {
        let log = self.log.lock().unwrap();
        log.iter()
            .rev()
            .take(20)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Wait until `f` holds or panic after `timeout`.
    pub fn eventually(&self, timeout: Duration, what: &str, mut f: impl FnMut() -> bool) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if f() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("timed out waiting for {what}");
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decode(out: Output) -> (bool, String, String) {
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Start the server binary in `dir` (no plugins, a data dir of its own) with `args`, expecting
/// it to refuse to start; returns what it printed on stderr. Panics if it started.
pub fn refused_start(dir: &std::path::Path, args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"))
        .args(["--bind-address", "127.0.0.1", "--secure-port", "0"])
        .args(args)
        .arg("--plugin-dir")
        .arg(dir.join("plugins.d"))
        .arg("--data-dir")
        .arg(dir.join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success(), "the server started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A path under the repository.
pub fn repo_path(p: &str) -> PathBuf {
    super::repo_root().join(p)
}

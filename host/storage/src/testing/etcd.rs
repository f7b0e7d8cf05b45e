//! A real, single-member etcd for tests (the role of `k8s.io/apiserver/pkg/storage/etcd3/
//! testing/testserver` and `integration/framework/etcd.go` in Kubernetes): a child `etcd`
//! process on free loopback ports with a private data directory, killed and removed on drop.
//! Faults are simulated with [`EtcdServer::stop`] (SIGKILL) and [`EtcdServer::restart`].

use std::fs::{File, OpenOptions};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long [`EtcdServer::start`] and [`EtcdServer::restart`] wait for etcd to serve clients.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// The line etcd 3.4 (`--logger zap`) logs once it serves client requests
/// (`embed/serve.go`, after `ReadyNotify`).
const READY_LINE: &str = "serving client traffic";

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A running test etcd. `endpoint` is its client URL, e.g. `http://127.0.0.1:40123`.
#[derive(Debug)]
pub struct EtcdServer {
    /// The client URL (`--advertise-client-urls`), for `Etcd3Config::endpoints`.
    pub endpoint: String,
    /// The client port on 127.0.0.1.
    pub client_port: u16,
    /// The peer port on 127.0.0.1.
    pub peer_port: u16,
    /// Temporary directory holding `data/` (etcd's `--data-dir`) and `etcd.log` (its stderr).
    pub dir: PathBuf,
    extra_args: Vec<String>,
    tls: Option<EtcdTls>,
    /// In a cluster: this member's name and `--initial-cluster`.
    cluster: Option<(String, String)>,
    child: Option<Child>,
}

/// PEM files for a TLS-serving test etcd ([`EtcdServer::start_tls`]).
#[derive(Clone, Debug)]
pub struct EtcdTls {
    /// etcd's serving certificate (`--cert-file`); must name `127.0.0.1` (IP SAN).
    pub cert_file: PathBuf,
    /// Its private key (`--key-file`).
    pub key_file: PathBuf,
    /// CA that signs client certificates (`--trusted-ca-file`); with it etcd requires a client
    /// certificate (`--client-cert-auth`).
    pub client_ca_file: PathBuf,
}

impl EtcdServer {
    /// Start etcd on free loopback ports with a fresh data directory and wait (up to 30 s)
    /// until it serves client requests.
    ///
    /// Panics: if `etcd` is not on `PATH` ("etcd not found: run ./setup.sh --test ..."), or it
    /// does not become ready (the panic message includes the tail of its log).
    pub fn start() -> EtcdServer {
        Self::start_with_args(&[])
    }

    /// [`EtcdServer::start`] with extra etcd flags, kept for [`EtcdServer::restart`], e.g.
    /// `["--experimental-watch-progress-notify-interval=200ms"]` or
    /// `["--auto-compaction-retention=1"]`.
    pub fn start_with_args(extra_args: &[&str]) -> EtcdServer {
        Self::start_inner(extra_args, None)
    }

    /// Start etcd serving clients over TLS with client-certificate authentication:
    /// `endpoint` is `https://127.0.0.1:P`. Panics as [`EtcdServer::start`] does.
    pub fn start_tls(tls: EtcdTls) -> EtcdServer {
        Self::start_inner(&[], Some(tls))
    }

    fn start_inner(extra_args: &[&str], tls: Option<EtcdTls>) -> EtcdServer {
        let mut server = Self::unstarted(extra_args, tls);
        server.spawn();
        server
    }

    fn unstarted(extra_args: &[&str], tls: Option<EtcdTls>) -> EtcdServer {
        if !etcd_on_path() {
            panic!("etcd not found: run ./setup.sh --test (installs Debian's etcd-server)");
        }
        let (client_port, peer_port) = free_port_pair();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "wasm-apiserver-etcd-{}-{}-{nanos}",
            std::process::id(),
            NEXT_ID.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("create etcd temp dir");
        EtcdServer {
            endpoint: format!(
                "{}://127.0.0.1:{client_port}",
                if tls.is_some() { "https" } else { "http" }
            ),
            client_port,
            peer_port,
            dir,
            extra_args: extra_args.iter().map(|s| s.to_string()).collect(),
            tls,
            cluster: None,
            child: None,
        }
    }

    /// Whether the etcd process is running (not stopped).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The etcd process id while it runs (benchmarks read its CPU time from `/proc`).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kill etcd (SIGKILL, like a crash) and wait for it to exit; the data directory stays.
    /// Idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stop etcd if it runs, then start it again with the same data directory, ports and flags,
    /// and wait until it serves clients. Panics as [`EtcdServer::start`] does.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// The path of etcd's log (its stderr, appended across restarts).
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("etcd.log")
    }

    fn spawn(&mut self) {
        let offset = self.launch();
        self.wait_ready(offset);
    }

    /// Start the process; returns the log offset its readiness is looked for from.
    fn launch(&mut self) -> u64 {
        let log_path = self.log_path();
        let log_offset = std::fs::metadata(&log_path).map(|m| m.len()).unwrap_or(0);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("open etcd log");
        let client_url = self.endpoint.clone();
        let mut tls_args: Vec<std::ffi::OsString> = Vec::new();
        if let Some(tls) = &self.tls {
            tls_args.push("--cert-file".into());
            tls_args.push(tls.cert_file.clone().into());
            tls_args.push("--key-file".into());
            tls_args.push(tls.key_file.clone().into());
            tls_args.push("--trusted-ca-file".into());
            tls_args.push(tls.client_ca_file.clone().into());
            tls_args.push("--client-cert-auth".into());
        }
        let peer_url = format!("http://127.0.0.1:{}", self.peer_port);
        let (name, initial_cluster) = self
            .cluster
            .clone()
            .unwrap_or_else(|| ("default".into(), format!("default={peer_url}")));
        // A port picked free may be taken by the time etcd binds it; that shows as an early exit.
        let child = Command::new("etcd")
            .arg("--data-dir")
            .arg(self.dir.join("data"))
            .args(["--name", &name])
            .args(["--listen-client-urls", &client_url])
            .args(["--advertise-client-urls", &client_url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &initial_cluster])
            .args(["--logger", "zap", "--log-outputs", "stderr"])
            .args(&tls_args)
            .args(&self.extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                panic!("etcd not found: run ./setup.sh --test (installs Debian's etcd-server)")
            }
            Err(e) => panic!("starting etcd: {e}"),
        };
        self.child = Some(child);
        log_offset
    }

    /// Wait (up to [`START_TIMEOUT`]) until the member serves clients; panics with its log's
    /// tail otherwise.
    fn wait_ready(&mut self, log_offset: u64) {
        let log_path = self.log_path();
        let mut last_error = None;
        let deadline = Instant::now() + START_TIMEOUT;
        let addr = SocketAddr::from(([127, 0, 0, 1], self.client_port));
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    last_error = Some(format!("etcd exited early with {status}"));
                }
            }
            if self.child.is_none() || Instant::now() > deadline {
                let tail = log_tail(&log_path, log_offset);
                self.stop();
                panic!(
                    "etcd at {} did not become ready ({}); log {}:\n{tail}",
                    self.endpoint,
                    last_error.unwrap_or_else(|| format!("timeout {START_TIMEOUT:?}")),
                    log_path.display()
                );
            }
            let listening = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok();
            if listening && log_contains(&log_path, log_offset, READY_LINE) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // A few ms for the gRPC server behind the listener.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A real etcd cluster of `n` members on loopback (each an [`EtcdServer`] with its own data
/// directory), for tests of several servers over one storage that survives losing a member.
#[derive(Debug)]
pub struct EtcdCluster {
    /// The members; [`EtcdServer::stop`] one to kill it, [`EtcdServer::restart`] to bring it back.
    pub members: Vec<EtcdServer>,
}

impl EtcdCluster {
    /// Start `n` members together (a member serves only once a quorum is up) and wait until
    /// each serves clients. Panics as [`EtcdServer::start`] does.
    pub fn start(n: usize) -> EtcdCluster {
        let mut members: Vec<EtcdServer> =
            (0..n).map(|_| EtcdServer::unstarted(&[], None)).collect();
        let initial = members
            .iter()
            .enumerate()
            .map(|(i, m)| format!("m{i}=http://127.0.0.1:{}", m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        for (i, m) in members.iter_mut().enumerate() {
            m.cluster = Some((format!("m{i}"), initial.clone()));
        }
        let offsets: Vec<u64> = members.iter_mut().map(|m| m.launch()).collect();
        for (m, offset) in members.iter_mut().zip(offsets) {
            m.wait_ready(offset);
        }
        EtcdCluster { members }
    }

    /// Every member's client URL, comma-separated (`--etcd-servers`).
    pub fn endpoints(&self) -> String {
        self.members
            .iter()
            .map(|m| m.endpoint.clone())
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether an `etcd` executable is on `PATH`.
fn etcd_on_path() -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join("etcd").is_file()))
        .unwrap_or(false)
}

/// Two distinct free loopback ports, picked by binding port 0 (both held until both picked).
fn free_port_pair() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let b = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let pair = (
        a.local_addr().expect("local addr").port(),
        b.local_addr().expect("local addr").port(),
    );
    drop((a, b));
    pair
}

/// Whether the log, from byte `offset` on, contains `needle`.
fn log_contains(path: &Path, offset: u64, needle: &str) -> bool {
    read_from(path, offset).contains(needle)
}

/// The last 40 lines of the log from byte `offset` on.
fn log_tail(path: &Path, offset: u64) -> String {
    let text = read_from(path, offset);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn read_from(path: &Path, offset: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut out = Vec::new();
    if let Ok(mut f) = File::open(path) {
        if f.seek(SeekFrom::Start(offset)).is_ok() {
            let _ = f.read_to_end(&mut out);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

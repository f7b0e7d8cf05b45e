//! The server running inside the test process (`wasm_apiserver::app::serve_on` on a loopback
//! listener, on a runtime of its own): for the HTTP-shape tests (status codes, `metav1.Status`
//! bodies, discovery, negotiation), which need the router, the filters and the registry but not
//! a separate process. The end-to-end suites (kubectl, memory, signals, the CLI) start the binary
//! ([`super::server::TestServer`]).

use super::server::Backend;
use clap::Parser;
use std::time::Duration;
use wasm_apiserver::admission::Plugins;
use wasm_apiserver::app::{serve_with_admission, Compile, Listeners};
use wasm_apiserver::cli::Cli;
use wasm_apiserver_storage::testing::etcd::EtcdServer;

/// A server in this process; shut down (and its runtime stopped) on drop.
pub struct InProcessServer {
    /// The plain-HTTP port: `http://127.0.0.1:<port>`.
    pub url: String,
    /// The temp dir holding plugins and data.
    pub dir: tempfile::TempDir,
    etcd: Option<EtcdServer>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcessServer {
    /// Start with the standard plugins.
    pub fn start(backend: Backend) -> InProcessServer {
        InProcessServer::start_with(
            backend,
            &["pods", "configmaps", "namespaces", "widgets"],
            &[],
        )
    }

    /// Start with the named plugins (from `target/plugins` or `target/test-plugins`) and extra
    /// flags; the precompiled plugins come from the shared test cache.
    pub fn start_with(backend: Backend, plugins: &[&str], extra_args: &[&str]) -> InProcessServer {
        InProcessServer::start_with_admission(backend, plugins, extra_args, Plugins::standard())
    }

    /// [`InProcessServer::start_with`], with the admission members `admission` (in order).
    pub fn start_with_admission(
        backend: Backend,
        plugins: &[&str],
        extra_args: &[&str],
        admission: Plugins,
    ) -> InProcessServer {
        let dir = tempfile::tempdir().unwrap();
        let plugin_dir = super::plugin_dir(dir.path(), plugins);
        let etcd = (backend == Backend::Etcd).then(EtcdServer::start);
        let mut args: Vec<String> = vec![
            "wasm-apiserver".into(),
            "--plugin-dir".into(),
            plugin_dir.display().to_string(),
            "--data-dir".into(),
            dir.path().join("data").display().to_string(),
            "--plugin-cache-dir".into(),
            super::repo_root()
                .join("target/test-plugin-cache")
                .display()
                .to_string(),
            // Plugin files do not change under these tests; no folder watcher per server.
            "--plugin-reload=false".into(),
            "--bind-address".into(),
            "127.0.0.1".into(),
        ];
        // Anonymous plain-HTTP requests are what these tests send (see `server.rs`).
        if !extra_args
            .iter()
            .any(|a| a.starts_with("--authorization-mode"))
        {
            args.push("--authorization-mode=AlwaysAllow".into());
        }
        if let Some(e) = &etcd {
            args.push("--etcd-servers".into());
            args.push(e.endpoint.clone());
        }
        args.extend(extra_args.iter().map(|a| a.to_string()));
        let cli = Cli::parse_from(args);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, address) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let secure = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let _ = ready.send(plain.local_addr().unwrap());
                let listener = Listeners {
                    secure,
                    insecure: Some(plain),
                };
                let shutdown = async move {
                    let _ = stopped.await;
                };
                let served = serve_with_admission(
                    cli.serve,
                    listener,
                    shutdown,
                    Compile::InProcess,
                    admission,
                );
                if let Err(e) = served.await {
                    panic!("in-process server failed: {e:#}");
                }
            });
            rt.shutdown_timeout(Duration::from_secs(1));
        });
        let address = address
            .recv_timeout(Duration::from_secs(30))
            .expect("the in-process server binds");
        let url = format!("http://{address}");
        let server = InProcessServer {
            url,
            dir,
            etcd,
            stop: Some(stop),
            thread: Some(thread),
        };
        server.wait_ready();
        server
    }

    /// The endpoint of the etcd under an etcd-backed server.
    pub fn etcd_endpoint(&self) -> Option<String> {
        self.etcd.as_ref().map(|e| e.endpoint.clone())
    }

    /// Wait until the server serves: the listener is bound before the plugins load, and a
    /// connection made meanwhile waits in its backlog, so the first answer means "loaded".
    fn wait_ready(&self) {
        use std::io::{Read, Write};
        let address = self.url.trim_start_matches("http://");
        let mut conn = std::net::TcpStream::connect(address).expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(300)))
            .unwrap();
        conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer)
            .expect("the in-process server answers");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

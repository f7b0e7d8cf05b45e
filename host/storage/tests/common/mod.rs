//! The storage test harness every suite of this crate uses: a backend per case — a fresh
//! embedded store in a temporary directory, an etcd of the case's own (`etcd3_isolated`), or
//! one etcd shared by the running cases under a unique path prefix (`etcd3_shared`; reference
//! counted, killed when the last case using it ends, so no process outlives the tests).
#![allow(dead_code)] // each test binary uses part of it

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::etcd3::{Etcd3, Etcd3Config};
use wasm_apiserver_storage::testing::conformance::TestContext;
use wasm_apiserver_storage::testing::etcd::EtcdServer;

/// etcd flags for every test etcd: progress notifications every 200 ms
/// (`RunOptionalTestProgressNotify`, and they advance a watch cache's resourceVersion for
/// consistent reads; etcd's default is 10 minutes).
pub const ETCD_ARGS: &[&str] = &["--experimental-watch-progress-notify-interval=200ms"];

/// A context and whatever must outlive it (temporary directory, etcd process or lease).
pub struct Harness {
    pub ctx: TestContext,
    pub _keep: Box<dyn Any + Send>,
}

pub async fn embedded() -> Harness {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = EmbeddedOptions {
        synchronous_full: false,
        progress_interval: Duration::from_millis(200),
        lease_check_interval: Duration::from_millis(100),
        ..EmbeddedOptions::default()
    };
    let backend = Embedded::open(dir.path(), opts)
        .await
        .expect("open the embedded store");
    let ctx = TestContext::for_backend("embedded", Arc::new(backend), "/registry");
    Harness {
        ctx,
        _keep: Box::new(dir),
    }
}

pub async fn connect(server: &EtcdServer) -> Etcd3 {
    let mut cfg = Etcd3Config::new([server.endpoint.clone()]);
    cfg.dial_timeout = Duration::from_secs(10);
    cfg.request_timeout = Duration::from_secs(10);
    cfg.compaction_interval = None;
    Etcd3::connect(cfg).await.expect("connect to etcd")
}

pub async fn start_etcd() -> EtcdServer {
    tokio::task::spawn_blocking(|| EtcdServer::start_with_args(ETCD_ARGS))
        .await
        .expect("start etcd")
}

/// An etcd of its own.
pub async fn etcd3_isolated() -> Harness {
    let server = start_etcd().await;
    let backend = connect(&server).await;
    let ctx = TestContext::for_backend("etcd3", Arc::new(backend), "/registry");
    Harness {
        ctx,
        _keep: Box::new(server),
    }
}

/// The shared etcd and the number of running cases using it.
static SHARED: Mutex<(Option<Arc<EtcdServer>>, usize)> = Mutex::new((None, 0));
static NEXT_PREFIX: AtomicU64 = AtomicU64::new(0);

/// A running case's hold on the shared etcd; the last one to go kills it.
struct SharedLease(Option<Arc<EtcdServer>>);

impl Drop for SharedLease {
    fn drop(&mut self) {
        drop(self.0.take());
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        shared.1 -= 1;
        if shared.1 == 0 {
            // Kills etcd and removes its directory.
            shared.0 = None;
        }
    }
}

async fn shared_server() -> SharedLease {
    // Start (at most one) etcd under the lock, on a blocking thread; concurrent cases wait.
    tokio::task::spawn_blocking(|| {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if shared.0.is_none() {
            shared.0 = Some(Arc::new(EtcdServer::start_with_args(ETCD_ARGS)));
        }
        shared.1 += 1;
        SharedLease(shared.0.clone())
    })
    .await
    .expect("start the shared etcd")
}

/// The shared etcd, under a path prefix of this case's own.
pub async fn etcd3_shared() -> Harness {
    let lease = shared_server().await;
    let server = lease.0.clone().expect("shared etcd");
    let backend = connect(&server).await;
    let prefix = format!("/registry-{}", NEXT_PREFIX.fetch_add(1, Ordering::SeqCst));
    let ctx = TestContext::for_backend("etcd3", Arc::new(backend), &prefix);
    Harness {
        ctx,
        _keep: Box::new(lease),
    }
}

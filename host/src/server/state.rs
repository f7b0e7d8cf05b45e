//! What every handler shares: the served snapshot, the storage backend (for `/readyz`),
//! watch and request deadlines, and the shutdown signals.

use crate::registry::Served;
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_storage::factory::AnyBackend;

/// What every handler shares.
pub struct AppState {
    /// What is served (published by the plugin manager when a plugin changes).
    pub served: Arc<Served>,
    /// The storage backend, for `/readyz`.
    pub backend: AnyBackend,
    /// Default watch duration when the client gives no `timeoutSeconds`.
    pub watch_timeout: Duration,
    /// `host:port` for legacy discovery's `serverAddressByClientCIDRs`.
    pub address: String,
    /// Set to `true` when the server starts shutting down: open watches end (as
    /// kube-apiserver closes them), so graceful shutdown only waits for short requests.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// Set at SIGTERM, before the shutdown delay: `/readyz` fails from then on.
    pub terminating: std::sync::atomic::AtomicBool,
    /// Deadline of a non-long-running request (`--request-timeout`); see [`timeout`].
    pub request_timeout: Duration,
    /// Who a request comes from (`--client-ca-file`, `--token-auth-file`,
    /// `--anonymous-auth`).
    pub authenticator: crate::authentication::Authenticator,
    /// Whether they may (`--authorization-mode`).
    pub authorizer: crate::authorization::Authorizer,
    /// Auditing, when `--audit-policy-file` and `--audit-log-path` are given.
    pub audit: Option<super::audit::Auditing>,
    /// Uploaded strategy plugin components (`components.rs`).
    pub components: wasm_apiserver_storage::blob_store::BlobStore,
    /// `--max-plugin-component-bytes`: the largest upload.
    pub max_component_bytes: u64,
    /// `--max-requests-inflight`, `--max-mutating-requests-inflight`.
    pub in_flight: super::max_in_flight::InFlightLimits,
}

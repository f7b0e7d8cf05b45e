//! What every handler shares: the served snapshot, the storage backend (for `/readyz`),
//! the watch deadline, the authorizer (reviews, escalation checks) and the shutdown signals.
//! The filters' own state is theirs ([`super::filters::HandlerChain`]).

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
    /// Whether they may (`--authorization-mode`): the access reviews and the escalation
    /// checks of RBAC writes ask it.
    pub authorizer: crate::authorization::Authorizer,
    /// The admission chain, bound to each write request and run by the registry Store.
    pub admission: crate::admission::Chain,
    /// Uploaded strategy plugin components (`components.rs`).
    pub components: wasm_apiserver_storage::blob_store::BlobStore,
    /// `--max-plugin-component-bytes`: the largest upload.
    pub max_component_bytes: u64,
    /// Service-account tokens (the TokenRequest API, the JWKS); `None` in unit tests.
    pub service_accounts: Option<Arc<crate::authentication::ServiceAccountTokens>>,
    /// The encryption at rest in use: its `kms` providers' health is in `/readyz`.
    pub encryption: wasm_apiserver_storage::value::ReloadableTransformers,
}

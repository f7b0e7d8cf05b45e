//! The handler chain, in one place: kube-apiserver's `DefaultBuildHandlerChain`
//! (`k8s.io/apiserver/pkg/server/config.go`). From the outside in:
//!
//! ```text
//! request info → request metrics → retry-after → wait group → timeout → authentication
//!   → audit → impersonation → max-in-flight → authorization → handler
//! ```
//!
//! Request info is outermost so every later filter and the handler read the same
//! [`RequestInfo`](crate::server::request_info::RequestInfo); request metrics (kube instruments
//! the route instead) time everything inside; the timeout covers authentication and the
//! handler; audit sees the authenticated user and records impersonation and the authorization
//! decision; watches (long-running) pass the timeout and the in-flight limits. Retry-after
//! (only with `--shutdown-send-retry-after`) and the wait group are graceful termination's:
//! outside the timeout, as kube places `WithRetryAfter` and `WithWaitGroup`.

use super::audit::{with_audit, Auditing};
use super::authentication::with_authentication;
use super::authorization::with_authorization;
use super::impersonation::with_impersonation;
use super::max_in_flight::{with_max_in_flight, InFlightLimits};
use super::request_info::with_request_info;
use super::request_metrics::observe;
use super::retry_after::with_retry_after;
use super::timeout::with_timeout;
use super::wait_group::{with_wait_group, WaitGroups};
use crate::authentication::Authenticator;
use crate::authorization::Authorizer;
use crate::registry::Served;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::Router;
use std::sync::Arc;
use std::time::Duration;

/// What the filters need, each its own part.
pub struct HandlerChain {
    /// What is served (request metrics label only served resources).
    pub served: Arc<Served>,
    /// `--request-timeout`.
    pub request_timeout: Duration,
    /// Who a request comes from.
    pub authenticator: Authenticator,
    /// Auditing, when configured; without it the audit filter is left out.
    pub audit: Option<Auditing>,
    /// Whether they may (impersonation and authorization).
    pub authorizer: Authorizer,
    /// `--max-requests-inflight`, `--max-mutating-requests-inflight`.
    pub in_flight: InFlightLimits,
    /// The requests graceful termination waits for.
    pub wait_groups: WaitGroups,
    /// `--shutdown-send-retry-after`: 429 for new requests once the server stops accepting.
    pub send_retry_after: bool,
}

impl HandlerChain {
    /// `handler` inside every filter, in kube's order (layers are added innermost first).
    pub fn build<S: Clone + Send + Sync + 'static>(self, handler: Router<S>) -> Router<S> {
        let mut router = handler
            .layer(from_fn_with_state(
                self.authorizer.clone(),
                with_authorization,
            ))
            .layer(from_fn_with_state(
                Arc::new(self.in_flight),
                with_max_in_flight,
            ))
            .layer(from_fn_with_state(self.authorizer, with_impersonation));
        if let Some(auditing) = self.audit {
            router = router.layer(from_fn_with_state(auditing, with_audit));
        }
        router = router
            .layer(from_fn_with_state(
                Arc::new(self.authenticator),
                with_authentication,
            ))
            .layer(from_fn_with_state(self.request_timeout, with_timeout))
            .layer(from_fn_with_state(
                self.wait_groups.clone(),
                with_wait_group,
            ));
        if self.send_retry_after {
            router = router.layer(from_fn_with_state(
                self.wait_groups.not_accepting,
                with_retry_after,
            ));
        }
        router
            .layer(from_fn_with_state(self.served, observe))
            .layer(from_fn(with_request_info))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::log_backend::{LogBackend, LogOptions};
    use crate::audit::Policy;
    use crate::authorization::rbac::RbacAuthorizer;
    use crate::authorization::AuthorizationMode;
    use crate::server::request_info::PARSED;
    use crate::server::AppState;
    use axum::body::Body;
    use axum::http::{Method, Request};
    use tower::ServiceExt;
    use wasm_apiserver_storage::blob_store::BlobStore;
    use wasm_apiserver_storage::factory::{AnyBackend, BackendConfig};

    /// Every filter on (audit at RequestResponse, impersonation asked, both in-flight limits)
    /// in front of the real router, on this thread: each request builds its `RequestInfo`
    /// once, whatever path it takes through the filters and the resource handler.
    #[tokio::test]
    async fn request_info_is_read_once_per_request() {
        let dir = tempfile::tempdir().unwrap();
        let backend = AnyBackend::open(&BackendConfig::Embedded(
            dir.path().join("data"),
            Default::default(),
        ))
        .await
        .unwrap();
        let served = Arc::new(Served::default());
        let authorizer = Authorizer::new(
            vec![AuthorizationMode::AlwaysAllow],
            Arc::new(RbacAuthorizer::new(Default::default())),
        );
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        let state = Arc::new(AppState {
            served: served.clone(),
            backend: backend.clone(),
            watch_timeout: Duration::from_secs(1),
            address: "127.0.0.1:0".into(),
            shutdown,
            terminating: Default::default(),
            authorizer: authorizer.clone(),
            admission: Default::default(),
            components: BlobStore::new(backend.backend(), "/registry"),
            max_component_bytes: 1 << 20,
            service_accounts: None,
            encryption: Default::default(),
        });
        let policy = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n",
        )
        .unwrap();
        let log = LogBackend::start(&LogOptions {
            path: dir.path().join("audit.log"),
            max_size_mib: 0,
            max_backup: 0,
        })
        .unwrap();
        let chain = HandlerChain {
            served,
            request_timeout: Duration::from_secs(5),
            authenticator: Authenticator {
                anonymous: true,
                ..Default::default()
            },
            audit: Some(Auditing {
                policy: Arc::new(policy),
                backend: log.clone(),
            }),
            authorizer,
            in_flight: InFlightLimits::new(10, 10),
            wait_groups: WaitGroups::new(state.shutdown.clone()),
            send_retry_after: true,
        };
        let app = crate::server::router(state, chain);
        let requests = [
            (
                Method::GET,
                "/api/v1/namespaces/default/pods?limit=1&fieldSelector=metadata.name%3Da",
            ),
            (Method::GET, "/api/v1/pods?watch=1&timeoutSeconds=1"),
            (
                Method::POST,
                "/apis/example.dev/v1/namespaces/d/widgets?dryRun=All",
            ),
            (Method::DELETE, "/api/v1/namespaces/d/configmaps/c"),
            (Method::GET, "/api/v1"),
            (Method::GET, "/healthz"),
            (Method::GET, "/version?x=1"),
        ];
        for (method, uri) in requests {
            let before = PARSED.with(|p| p.get());
            let req = Request::builder()
                .method(method.clone())
                .uri(uri)
                .header("impersonate-user", "jane")
                .body(Body::from("{}"))
                .unwrap();
            let resp = app.clone().oneshot(req).await.unwrap();
            let _ = axum::body::to_bytes(resp.into_body(), usize::MAX).await;
            let parsed = PARSED.with(|p| p.get()) - before;
            assert_eq!(
                parsed, 1,
                "{method} {uri}: RequestInfo built {parsed} times"
            );
        }
        log.shutdown();
    }
}

//! The deadline of non-long-running requests (`k8s.io/apiserver/pkg/server/filters/timeout.go`
//! `WithTimeoutForNonLongRunningRequests`, `--request-timeout`, 60 s by default): a request
//! that has not been answered in time — a slow plugin chain, a stalled storage, or a client
//! that stops sending its body half-way — is answered 504 `Timeout` and its work is dropped.
//! Watches are long-running and exempt (they end at their own `timeoutSeconds`).

use super::state::AppState;
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Whether a request is long-running (`BasicLongRunningRequestCheck` with the `watch` verb):
/// `?watch=true|1` or a `/watch/` path.
pub fn is_long_running(req: &Request) -> bool {
    // The same parse and value rule as the handler's, so a request is exempt exactly when it
    // is served as a watch.
    let query = super::authorization::parsed_query(req.uri());
    super::options::query_bool(&query, "watch").unwrap_or(false)
        || super::request_info::parse(req.uri().path()).is_some_and(|i| i.watch_path)
}

/// Run the request under [`AppState::request_timeout`] unless it is long-running. Errors: 504
/// `Timeout: request did not complete within requested timeout - context deadline exceeded`,
/// as kube answers. As in kube, the handler is not cancelled at the deadline: a write under
/// way completes (or fails) on its own, only its answer is no longer awaited.
pub async fn with_timeout(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    if is_long_running(&req) {
        return next.run(req).await;
    }
    let handler = tokio::spawn(next.run(req));
    match tokio::time::timeout(state.request_timeout, handler).await {
        Ok(Ok(resp)) => resp,
        // The handler panicked: answered as kube's panic recovery does.
        Ok(Err(e)) => {
            tracing::error!(error = %e, "request handler panicked");
            ApiError::internal("the server has encountered an unexpected error").into_response()
        }
        Err(_) => ApiError::timeout(
            "request did not complete within requested timeout - context deadline exceeded",
            0,
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(uri: &str) -> bool {
        is_long_running(
            &Request::builder()
                .uri(uri)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
    }

    #[test]
    fn watches_by_query_or_path() {
        assert!(watch("/api/v1/pods?a=1&watch=True"));
        assert!(watch("/api/v1/pods?watch"));
        assert!(!watch("/api/v1/pods?watch=false&x=1"));
        assert!(!watch("/api/v1/pods?watcher=1"));
        // The handler's rule: the last value counts.
        assert!(!watch("/api/v1/pods?watch=1&watch=0"));
        assert!(watch("/api/v1/watch/pods"));
    }
}

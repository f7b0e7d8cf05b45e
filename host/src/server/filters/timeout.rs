//! The deadline of non-long-running requests (`k8s.io/apiserver/pkg/server/filters/timeout.go`
//! `WithTimeoutForNonLongRunningRequests`, `--request-timeout`, 60 s by default): a request
//! that has not been answered in time — a slow plugin chain, a stalled storage, or a client
//! that stops sending its body half-way — is answered 504 `Timeout` and its work is dropped.
//! Watches are long-running and exempt (they end at their own `timeoutSeconds`).

use crate::server::context::request_info;
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// Run the request under `timeout` (`--request-timeout`) unless it is long-running
/// ([`RequestInfo::long_running`](crate::server::request_info::RequestInfo)). Errors: 504
/// `Timeout: request did not complete within requested timeout - context deadline exceeded`,
/// as kube answers. As in kube, the handler is not cancelled at the deadline: a write under
/// way completes (or fails) on its own, only its answer is no longer awaited.
pub async fn with_timeout(State(timeout): State<Duration>, req: Request, next: Next) -> Response {
    if request_info(&req).long_running {
        return next.run(req).await;
    }
    let handler = tokio::spawn(next.run(req));
    match tokio::time::timeout(timeout, handler).await {
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

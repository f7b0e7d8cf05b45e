//! `--shutdown-send-retry-after` (`k8s.io/apiserver/pkg/server/filters/with_retry_after.go`
//! `WithRetryAfter`): once the shutdown delay has elapsed, the server keeps its listener open
//! until the requests in flight are done and answers every new request — on a new or an
//! existing connection — 429 `The apiserver is shutting down, please try again later.` (plain
//! text, as kube's `http.Error`) with `Retry-After: 5` and, on HTTP/1, `Connection: close`
//! (HTTP/2 connections were sent GOAWAY when the delay elapsed). Health probes and metrics
//! are served throughout ([`super::wait_group::EXEMPT_PATH_PREFIXES`]).

use super::wait_group::is_exempt;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode, Version};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::watch;

/// The text of kube's 429.
pub const MESSAGE: &str = "The apiserver is shutting down, please try again later.";

/// Answer 429 once `not_accepting` is `true`, unless the path is exempt.
pub async fn with_retry_after(
    State(not_accepting): State<watch::Receiver<bool>>,
    req: Request,
    next: Next,
) -> Response {
    if !*not_accepting.borrow() || is_exempt(req.uri().path()) {
        return next.run(req).await;
    }
    let mut resp = (StatusCode::TOO_MANY_REQUESTS, format!("{MESSAGE}\n")).into_response();
    let h = resp.headers_mut();
    h.insert("Retry-After", HeaderValue::from_static("5"));
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        "X-Content-Type-Options",
        HeaderValue::from_static("nosniff"),
    );
    // "Connection" is not allowed in HTTP/2 (RFC 9113 §8.2.2).
    if req.version() < Version::HTTP_2 {
        h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

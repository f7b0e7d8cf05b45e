//! The requests graceful termination waits for (`k8s.io/apiserver/pkg/server/filters/
//! waitgroup.go` `WithWaitGroup`, `watch_termination.go`, `k8s.io/apimachinery/pkg/util/
//! waitgroup` `SafeWaitGroup`): every non-long-running request is counted from the moment it
//! passes this filter until its answer's body is written, watches in a group of their own.
//! Once the server stops accepting requests ([`RequestWaitGroup::wait`] has begun), a new
//! request is answered 503 `apiserver is shutting down` with `Retry-After: 1`, as kube's — the
//! health and metrics paths excepted, which kube keeps serving.
//!
//! Beyond kube: a request still receiving its body when the server stops accepting (a client
//! stalled mid-body, which kube waits for until the request timeout) is answered the same 503
//! at once — nothing of it has been processed — so it cannot hold the shutdown.

use crate::server::context::request_info;
use crate::server::holding_body::holding;
use crate::status::ApiError;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Body as _, Frame, SizeHint};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::watch;

/// Paths served whatever the shutdown stage (kube's `pathPrefixesExemptFromRetryAfter`).
pub const EXEMPT_PATH_PREFIXES: &[&str] = &["/readyz", "/livez", "/healthz", "/metrics"];

/// Whether `path` is one of [`EXEMPT_PATH_PREFIXES`].
pub fn is_exempt(path: &str) -> bool {
    EXEMPT_PATH_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// The bit of [`RequestWaitGroup`]'s word saying a wait has begun; the rest counts.
const WAITING: usize = 1 << (usize::BITS - 1);

/// kube's `SafeWaitGroup`: a count of requests in flight that refuses new ones once
/// [`wait`](Self::wait) has begun. One atomic word holds the count and the waiting bit, so an
/// add either lands before the wait began (and is waited for) or is refused.
#[derive(Debug, Default)]
pub struct RequestWaitGroup {
    word: AtomicUsize,
    done: tokio::sync::Notify,
}

/// One request counted in a [`RequestWaitGroup`], until dropped.
#[derive(Debug)]
pub struct InFlight(Arc<RequestWaitGroup>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.word.fetch_sub(1, Ordering::AcqRel) == WAITING | 1 {
            self.0.done.notify_waiters();
        }
    }
}

impl RequestWaitGroup {
    /// Count one request; `None` once a wait has begun.
    pub fn add(self: &Arc<Self>) -> Option<InFlight> {
        self.word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w & WAITING == 0).then_some(w + 1)
            })
            .ok()
            .map(|_| InFlight(self.clone()))
    }

    /// Refuse new requests from now on and wait until those in flight are done.
    pub async fn wait(&self) {
        self.word.fetch_or(WAITING, Ordering::AcqRel);
        loop {
            let done = self.done.notified();
            tokio::pin!(done);
            done.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            done.await;
        }
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.word.load(Ordering::Acquire) & !WAITING
    }
}

/// The two groups kube keeps (`NonLongRunningRequestWaitGroup`, `WatchRequestWaitGroup`),
/// and the signal that the server stopped accepting requests.
#[derive(Clone, Debug)]
pub struct WaitGroups {
    /// Every request but watches.
    pub non_long_running: Arc<RequestWaitGroup>,
    /// Watches.
    pub watches: Arc<RequestWaitGroup>,
    /// `true` once the server stops accepting requests (after `--shutdown-delay-duration`).
    pub not_accepting: watch::Receiver<bool>,
}

impl WaitGroups {
    /// Groups for a server whose stop is signalled on `not_accepting`.
    pub fn new(not_accepting: watch::Receiver<bool>) -> WaitGroups {
        WaitGroups {
            non_long_running: Default::default(),
            watches: Default::default(),
            not_accepting,
        }
    }
}

/// kube's 503 for a request arriving while the server drains (`waitGroupWriteRetryAfterTo
/// Response`): a Status, `Retry-After: 1` (another replica is likely up).
fn shutting_down() -> Response {
    let mut resp = ApiError::service_unavailable("apiserver is shutting down").into_response();
    resp.headers_mut()
        .insert("Retry-After", HeaderValue::from_static("1"));
    resp
}

/// `WithWaitGroup` and `WithWatchTerminationDuringShutdown`: count the request in its group
/// (its answer's body holds the count), or refuse it once the group is draining; answer a
/// request whose body is still arriving when the server stops accepting.
pub async fn with_wait_group(
    State(groups): State<WaitGroups>,
    req: Request,
    next: Next,
) -> Response {
    let long_running = request_info(&req).long_running;
    let group = if long_running {
        &groups.watches
    } else {
        &groups.non_long_running
    };
    let Some(in_flight) = group.add() else {
        if is_exempt(req.uri().path()) {
            return next.run(req).await;
        }
        return shutting_down();
    };
    // Watches end on their own at the stop; a request without a body (or whose body is
    // all here) is waited for.
    if long_running || req.body().is_end_stream() {
        return held(next.run(req).await, in_flight);
    }
    let (parts, body) = req.into_parts();
    let received = Arc::new(AtomicBool::new(false));
    let body = Body::new(Receiving {
        inner: body,
        received: received.clone(),
    });
    let mut not_accepting = groups.not_accepting.clone();
    let stalled = async move {
        let _ = not_accepting.wait_for(|stop| *stop).await;
        if received.load(Ordering::SeqCst) {
            // Processing, or answering: waited for.
            std::future::pending::<()>().await;
        }
    };
    let resp = tokio::select! {
        resp = next.run(Request::from_parts(parts, body)) => resp,
        _ = stalled => shutting_down(),
    };
    held(resp, in_flight)
}

/// `resp` with `in_flight` released when its body has been written (or dropped).
fn held(resp: Response, in_flight: InFlight) -> Response {
    let (parts, body) = resp.into_parts();
    Response::from_parts(parts, holding(body, in_flight))
}

/// A request body that records when it has been received whole.
struct Receiving {
    inner: Body,
    received: Arc<AtomicBool>,
}

impl http_body::Body for Receiving {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_))))
            || self.inner.is_end_stream()
        {
            self.received.store(true, Ordering::SeqCst);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wait_refuses_new_requests_and_returns_when_those_in_flight_end() {
        let g = Arc::new(RequestWaitGroup::default());
        let a = g.add().unwrap();
        let b = g.add().unwrap();
        assert_eq!(g.in_flight(), 2);
        let waiting = tokio::spawn({
            let g = g.clone();
            async move { g.wait().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(g.add().is_none(), "refused once the wait began");
        drop(a);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "one still in flight");
        drop(b);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the wait ends with the last request")
            .unwrap();
        // An empty group's wait returns at once.
        let empty = Arc::new(RequestWaitGroup::default());
        tokio::time::timeout(Duration::from_millis(100), empty.wait())
            .await
            .unwrap();
    }
}

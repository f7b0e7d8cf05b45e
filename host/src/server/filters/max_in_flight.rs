//! The in-flight limits (`k8s.io/apiserver/pkg/server/filters/maxinflight.go`
//! `WithMaxInFlightLimit`): at most `--max-requests-inflight` read-only and
//! `--max-mutating-requests-inflight` mutating (POST, PUT, PATCH, DELETE) requests are served
//! at once; long-running requests (watches) are not counted; a request over the limit is
//! answered 429 at once with `Retry-After: 1` — unless its user is in `system:masters`, who
//! always gets an answer, as kube does. (kube writes a plain-text 429; here it is a
//! `metav1.Status` with reason `TooManyRequests`, like every other answer.) 0 disables a
//! limit.

use crate::authentication::user::SYSTEM_PRIVILEGED_GROUP;
use crate::server::context::{request_info, user_ref};
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The two limits.
#[derive(Debug)]
pub struct InFlightLimits {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl InFlightLimits {
    /// Limits of `read_only` and `mutating` requests at once (0: unlimited).
    pub fn new(read_only: usize, mutating: usize) -> InFlightLimits {
        let sem = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        InFlightLimits {
            read_only: sem(read_only),
            mutating: sem(mutating),
        }
    }
}

/// Serve the request within its limit, or answer 429.
pub async fn with_max_in_flight(
    State(limits): State<Arc<InFlightLimits>>,
    req: Request,
    next: Next,
) -> Response {
    if request_info(&req).long_running {
        return next.run(req).await;
    }
    let mutating = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let limit = if mutating {
        &limits.mutating
    } else {
        &limits.read_only
    };
    let Some(limit) = limit else {
        return next.run(req).await;
    };
    match limit.clone().try_acquire_owned() {
        Ok(_permit) => next.run(req).await,
        Err(_) if user_ref(&req).in_group(SYSTEM_PRIVILEGED_GROUP) => next.run(req).await,
        Err(_) => {
            DROPPED_REQUESTS
                .with_label_values(&[if mutating { "mutating" } else { "readOnly" }])
                .inc();
            ApiError::too_many_requests("Too many requests, please try again later.", 1)
                .into_response()
        }
    }
}

/// `apiserver_dropped_requests_total{request_kind}` (`readOnly`, `mutating`): requests answered
/// 429 by the in-flight limits (`pkg/endpoints/metrics` `DroppedRequests`).
static DROPPED_REQUESTS: std::sync::LazyLock<prometheus::IntCounterVec> =
    std::sync::LazyLock::new(|| {
        crate::metrics::counter_vec(
            "apiserver_dropped_requests_total",
            "Number of requests dropped with 'Try again later' response.",
            &["request_kind"],
        )
    });

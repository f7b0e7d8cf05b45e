//! The admission webhooks' metrics, named and labelled as kube's
//! (`k8s.io/apiserver/pkg/admission/metrics/metrics.go`):
//!
//! - `apiserver_admission_webhook_admission_duration_seconds{name, type, operation, rejected}`
//!   and `apiserver_admission_webhook_request_total{name, type, operation, code, rejected}`:
//!   one per call (`type` is `admit` or `validating`; `code` 200 for an answer that allows, a
//!   denial's Status code, a failed call's HTTP status — 503 when there was no answer —, 0 for
//!   this server's own error);
//! - `apiserver_admission_webhook_rejection_count{name, type, operation, error_type,
//!   rejection_code}`: one per refusal (`error_type` `no_error` for a denial,
//!   `calling_webhook_error` for a failed call under `failurePolicy: Fail`,
//!   `apiserver_internal_error`);
//! - `apiserver_admission_webhook_fail_open_count{name, type}`: one per failed call
//!   `failurePolicy: Ignore` admitted.
//!
//! The `name` values are webhook names, which only those who may write admission
//! configuration create.

use std::sync::LazyLock;
use std::time::Duration;

/// kube's buckets (seconds).
const BUCKETS: [f64; 8] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0];

static DURATION: LazyLock<prometheus::HistogramVec> = LazyLock::new(|| {
    crate::metrics::histogram_vec(
        "apiserver_admission_webhook_admission_duration_seconds",
        "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
        &BUCKETS,
        &["name", "type", "operation", "rejected"],
    )
});

static REQUESTS: LazyLock<prometheus::IntCounterVec> = LazyLock::new(|| {
    crate::metrics::counter_vec(
        "apiserver_admission_webhook_request_total",
        "Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
        &["name", "type", "operation", "code", "rejected"],
    )
});

static REJECTIONS: LazyLock<prometheus::IntCounterVec> = LazyLock::new(|| {
    crate::metrics::counter_vec(
        "apiserver_admission_webhook_rejection_count",
        "Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
        &["name", "type", "operation", "error_type", "rejection_code"],
    )
});

static FAIL_OPEN: LazyLock<prometheus::IntCounterVec> = LazyLock::new(|| {
    crate::metrics::counter_vec(
        "apiserver_admission_webhook_fail_open_count",
        "Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).",
        &["name", "type"],
    )
});

/// One call of webhook `name` of `kind` (`admit` or `validating`) for `operation`, answered
/// with `code`, that took `elapsed`; `rejected` when it refused the request.
pub fn observe_call(
    name: &str,
    kind: &str,
    operation: &str,
    code: u16,
    rejected: bool,
    elapsed: Duration,
) {
    let rejected = if rejected { "true" } else { "false" };
    DURATION
        .with_label_values(&[name, kind, operation, rejected])
        .observe(elapsed.as_secs_f64());
    let code = code.min(600).to_string();
    REQUESTS
        .with_label_values(&[name, kind, operation, &code, rejected])
        .inc();
}

/// A refusal by (or because of) webhook `name`: `error_type` as kube's, with `code`.
pub fn observe_rejection(name: &str, kind: &str, operation: &str, error_type: &str, code: u16) {
    REJECTIONS
        .with_label_values(&[
            name,
            kind,
            operation,
            error_type,
            &code.min(600).to_string(),
        ])
        .inc();
}

/// A failed call of webhook `name` that `failurePolicy: Ignore` admitted.
pub fn observe_fail_open(name: &str, kind: &str) {
    FAIL_OPEN.with_label_values(&[name, kind]).inc();
}

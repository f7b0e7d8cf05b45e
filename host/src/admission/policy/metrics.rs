//! The admission policies' metrics, named and labelled as kube's
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/validating/metrics/metrics.go`,
//! `…/mutating/metrics/metrics.go`):
//!
//! - `apiserver_validating_admission_policy_check_total` and `…_check_duration_seconds`
//!   `{policy, policy_binding, error_type, enforcement_action}`: one per validation decision
//!   that denies (once per action of the binding: `deny`, `warn`, `audit`) and per error a
//!   `failurePolicy: Ignore` admitted (`allow`), as kube's validating dispatcher observes them
//!   (a validation that passes is not counted);
//! - `apiserver_mutating_admission_policy_check_total` and `…_check_duration_seconds`
//!   `{policy, policy_binding, error_type}`: one per mutation applied (`no_error`) or failed.
//!
//! `error_type`: `no_error`, `compile_error` (the policy did not compile), `out_of_budget` (the
//! cost limit), `invalid_error` (anything else). The label values are names of policy objects,
//! which only those who may write admission configuration create.

use std::sync::LazyLock;
use std::time::Duration;

/// kube's buckets (seconds), from its CEL benchmarks.
const BUCKETS: [f64; 5] = [0.0000005, 0.001, 0.01, 0.1, 1.0];

static VALIDATING_CHECKS: LazyLock<prometheus::IntCounterVec> = LazyLock::new(|| {
    crate::metrics::counter_vec(
        "apiserver_validating_admission_policy_check_total",
        "Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.",
        &["policy", "policy_binding", "error_type", "enforcement_action"],
    )
});

static VALIDATING_DURATION: LazyLock<prometheus::HistogramVec> = LazyLock::new(|| {
    crate::metrics::histogram_vec(
        "apiserver_validating_admission_policy_check_duration_seconds",
        "Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.",
        &BUCKETS,
        &["policy", "policy_binding", "error_type", "enforcement_action"],
    )
});

static MUTATING_CHECKS: LazyLock<prometheus::IntCounterVec> = LazyLock::new(|| {
    crate::metrics::counter_vec(
        "apiserver_mutating_admission_policy_check_total",
        "Mutation admission policy check total, labeled by policy and further identified by binding.",
        &["policy", "policy_binding", "error_type"],
    )
});

static MUTATING_DURATION: LazyLock<prometheus::HistogramVec> = LazyLock::new(|| {
    crate::metrics::histogram_vec(
        "apiserver_mutating_admission_policy_check_duration_seconds",
        "Mutation admission latency for individual mutation expressions in seconds, labeled by policy and binding.",
        &BUCKETS,
        &["policy", "policy_binding", "error_type"],
    )
});

/// The `error_type` of an evaluation's error message (`None`: no error): the cost limit is
/// `out_of_budget`, a policy that does not compile `compile_error`.
pub fn error_type(error: Option<&str>, compile_error: bool) -> &'static str {
    match error {
        None => "no_error",
        Some(_) if compile_error => "compile_error",
        Some(e) if e.contains(wasm_apiserver_cel::runtime_cost::COST_LIMIT_EXCEEDED) => {
            "out_of_budget"
        }
        Some(_) => "invalid_error",
    }
}

/// One validation decision of `policy` with `binding`, enforced as `action` (`allow`, `deny`,
/// `warn`, `audit`), that took `elapsed`.
pub fn observe_validation(
    policy: &str,
    binding: &str,
    error_type: &str,
    action: &str,
    elapsed: Duration,
) {
    let labels = [policy, binding, error_type, action];
    VALIDATING_CHECKS.with_label_values(&labels).inc();
    VALIDATING_DURATION
        .with_label_values(&labels)
        .observe(elapsed.as_secs_f64());
}

/// One mutation of `policy` with `binding`, that took `elapsed`.
pub fn observe_mutation(policy: &str, binding: &str, error_type: &str, elapsed: Duration) {
    let labels = [policy, binding, error_type];
    MUTATING_CHECKS.with_label_values(&labels).inc();
    MUTATING_DURATION
        .with_label_values(&labels)
        .observe(elapsed.as_secs_f64());
}

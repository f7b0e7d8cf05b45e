//! The `ValidatingAdmissionPolicy` admission member: kube's validating policy plugin
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/validating/{plugin,dispatcher,validator}.go`)
//! in the validating stage, after the strategy. For each policy (by name) whose
//! `matchConstraints` match the request, each of its bindings whose `matchResources` match:
//! its `matchConditions` (all true, else the policy does not apply), its `variables`, then
//! each validation — false answers its `messageExpression`, else its `message`, else
//! `failed expression: <expression>`, with its `reason` (`Invalid` by default, kube's codes);
//! an error (a compile error, a run-time error, the cost limit) is decided by the policy's
//! `failurePolicy` (`Fail` denies with the error's text, `Ignore` admits). A denial is
//! enforced per the binding's `validationActions`: `Deny` refuses the request with the first
//! denial (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding
//! '<b>' denied request: <message>`), `Warn` adds a `Warning` header (`Validation failed for
//! ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>`), `Audit` adds the failure
//! to the request's audit annotation `validation.policy.admission.k8s.io/validation_failure`
//! (kube's JSON array of message, policy, binding, expression index, actions). The policy's
//! `auditAnnotations` that evaluate to a non-empty string are added as `<policy>/<key>`
//! (values of several bindings or params deduplicated, sorted and joined with `, `).
//!
//! Each decision is counted in kube's `apiserver_validating_admission_policy_check_total` and
//! timed in `…_check_duration_seconds` (`metrics.rs`).
//!
//! Admission configuration resources are exempt (`rules.go`
//! `IsExemptAdmissionConfigurationResource`), so a bad policy can always be removed. Objects
//! are seen in the storage version; `params` is each param object of a binding's `paramRef`
//! (`params.rs`: evaluated once per param; `null` without `paramKind` or `paramRef`), and
//! `authorizer` asks the server's authorizer about the requesting user (`authorizer.rs`).

use super::authorizer::RequestAuthorizer;
use super::compiled::{CompiledPolicy, REASONS};
use super::invocations::invocations;
use super::matching::{storage_version, RequestFacts};
use super::metrics;
use super::params::Params;
use super::source::PolicySource;
use crate::admission::exempt::is_exempt;
use crate::admission::interface::{wait_ready, Admission, AdmissionFuture, Attributes, Operation};
use crate::status::ApiError;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_cel::limits::PER_CALL_LIMIT;
use wasm_apiserver_cel::{Expression, Value as Cel};

/// The admission member; enforces what `source` holds.
pub struct ValidatingAdmissionPolicy {
    pub source: Arc<PolicySource>,
    /// What `authorizer` asks.
    pub authorizer: crate::authorization::Authorizer,
}

/// What one validation of one binding decided.
#[derive(Clone)]
struct Denial {
    message: String,
    reason: &'static str,
    /// The validation's index (`expressionIndex` of an `Audit` failure).
    index: usize,
    /// For the metrics: `no_error` for a validation that was false, else the error's type.
    error_type: &'static str,
    /// How long the decision took.
    elapsed: Duration,
}

/// What one evaluation of a policy decided: its denials and its audit annotations.
#[derive(Clone, Default)]
struct Evaluation {
    denials: Vec<Denial>,
    /// Errors `failurePolicy: Ignore` admitted: their type and duration (for the metrics).
    ignored: Vec<(&'static str, Duration)>,
    /// `auditAnnotations` that failed under `failurePolicy: Fail`: they deny whatever the
    /// binding's actions (kube's `AuditAnnotationActionError`).
    annotation_errors: Vec<String>,
    /// `auditAnnotations` that evaluated to a non-empty string (keys not yet prefixed).
    annotations: Vec<(String, String)>,
}

/// cel-go's name of a value's type, for messages.
fn cel_type_name(v: &Cel) -> &'static str {
    match v {
        Cel::List(_) => "list",
        Cel::Map(_) => "map",
        Cel::Int(_) => "int",
        Cel::UInt(_) => "uint",
        Cel::Float(_) => "double",
        Cel::String(_) => "string",
        Cel::Bytes(_) => "bytes",
        Cel::Bool(_) => "bool",
        Cel::Duration(_) => "google.protobuf.Duration",
        Cel::Timestamp(_) => "google.protobuf.Timestamp",
        Cel::Null => "null_type",
        _ => "object",
    }
}

/// kube's `maxAuditAnnotationValueLength`.
const MAX_AUDIT_ANNOTATION_VALUE: usize = 10 * 1024;

/// A request's policy evaluations run on its own task when they are cheap — an estimated
/// cost (CEL cost units, summed over the policies, bindings and params) of at most this, and
/// inputs (objects, request, param objects) of at most [`INLINE_MAX_INPUT_BYTES`] together,
/// converted at most [`INLINE_MAX_CONVERTED_BYTES`] over all expressions —, else on a
/// blocking thread. Together they keep the work near tokio's ~100 µs between two awaits.
pub const INLINE_MAX_COST: u64 = 10_000;
/// See [`INLINE_MAX_COST`].
pub const INLINE_MAX_INPUT_BYTES: usize = 16 * 1024;
/// See [`INLINE_MAX_COST`]: the inputs' size times the number of expressions.
pub const INLINE_MAX_CONVERTED_BYTES: u64 = 256 * 1024;

/// The (approximate) serialized size of `values` together, or `None` past `limit` bytes (the
/// walk stops there).
fn size_within<'a>(values: impl IntoIterator<Item = &'a Value>, limit: usize) -> Option<usize> {
    let mut left = limit;
    for v in values {
        if !smaller_than_left(v, &mut left) {
            return None;
        }
    }
    Some(limit - left)
}

/// Whether `v` fits in `left` bytes, taking them off.
fn smaller_than_left(v: &Value, left: &mut usize) -> bool {
    fn take(left: &mut usize, n: usize) -> bool {
        match left.checked_sub(n) {
            Some(l) => {
                *left = l;
                true
            }
            None => false,
        }
    }
    fn size(v: &Value, left: &mut usize) -> bool {
        match v {
            Value::Null | Value::Bool(_) | Value::Number(_) => take(left, 8),
            Value::String(s) => take(left, s.len() + 2),
            Value::Array(a) => take(left, 2) && a.iter().all(|x| size(x, left)),
            Value::Object(m) => {
                take(left, 2)
                    && m.iter()
                        .all(|(k, x)| take(left, k.len() + 4) && size(x, left))
            }
        }
    }
    size(v, left)
}

/// The variables every expression of a request sees.
pub(crate) struct Inputs<'a> {
    pub object: &'a Value,
    pub old_object: &'a Value,
    pub request: &'a Value,
    pub namespace_object: &'a Value,
    pub params: &'a Value,
    /// `authorizer` (and `authorizer.requestResource`): the server's, for the requesting user.
    pub authorizer: Option<Arc<RequestAuthorizer>>,
}

/// The variables every expression is evaluated with, by reference: an expression converts
/// only those it reads to CEL values.
pub(super) fn bind<'a>(
    inputs: &'a Inputs<'a>,
    variables: &'a Value,
) -> [(&'static str, &'a Value); 6] {
    [
        ("object", inputs.object),
        ("oldObject", inputs.old_object),
        ("request", inputs.request),
        ("namespaceObject", inputs.namespace_object),
        ("params", inputs.params),
        ("variables", variables),
    ]
}

/// Evaluate `e` with `vars` and, when it reads it, `authorizer` bound to the request's.
pub(super) fn evaluate_expression(
    e: &Expression,
    vars: &[(&str, &Value)],
    inputs: &Inputs<'_>,
) -> Result<Cel, wasm_apiserver_cel::EvalError> {
    match &inputs.authorizer {
        Some(a) if e.references("authorizer") || e.references("authorizer.requestResource") => {
            e.evaluate_authorized_request(vars, a.clone(), a.request.clone(), PER_CALL_LIMIT)
        }
        _ => e.evaluate_with_limit(vars, PER_CALL_LIMIT),
    }
    .map(|r| r.value)
}

/// kube's `expression '<e>' resulted in error: <err>` (`cel/filter.go`).
pub(super) fn eval(
    e: &Expression,
    source: &str,
    vars: &[(&str, &Value)],
    inputs: &Inputs<'_>,
) -> Result<Cel, String> {
    evaluate_expression(e, vars, inputs)
        .map_err(|err| format!("expression '{source}' resulted in error: {err}"))
}

/// A policy's `matchConditions` (any false: `Ok(None)`, the policy does not apply; else an
/// error is `Err`, decided by `failurePolicy`), then its `variables` ([`evaluate_variables`]).
pub(super) fn conditions_and_variables(
    match_conditions: &[(String, Expression)],
    variables: &[(String, Expression)],
    inputs: &Inputs<'_>,
) -> Result<Option<serde_json::Map<String, Value>>, String> {
    if !conditions_hold(match_conditions, inputs)? {
        return Ok(None);
    }
    Ok(Some(evaluate_variables(variables, inputs)))
}

/// Whether every `matchConditions` entry holds (`Err`: one failed, and none was false).
pub(crate) fn conditions_hold(
    match_conditions: &[(String, Expression)],
    inputs: &Inputs<'_>,
) -> Result<bool, String> {
    let empty = Value::Object(serde_json::Map::new());
    let bound = bind(inputs, &empty);
    let mut condition_error = None;
    for (name, c) in match_conditions {
        match evaluate_expression(c, &bound, inputs) {
            Ok(Cel::Bool(false)) => return Ok(false),
            Ok(_) => {}
            Err(e) => {
                condition_error
                    .get_or_insert(format!("failed to evaluate match condition '{name}': {e}"));
            }
        }
    }
    match condition_error {
        Some(e) => Err(e),
        None => Ok(true),
    }
}

/// A policy's `variables`, evaluated in order and bound as JSON: a value JSON cannot hold (a
/// quantity, an IP, a duration …) is left out, and so is a variable whose evaluation failed —
/// an expression reading it then fails, per `failurePolicy` (kube binds them lazily as CEL
/// values).
pub(super) fn evaluate_variables(
    variables: &[(String, Expression)],
    inputs: &Inputs<'_>,
) -> serde_json::Map<String, Value> {
    let mut values = serde_json::Map::new();
    for (name, e) in variables {
        let current = Value::Object(values.clone());
        let bound = bind(inputs, &current);
        if let Ok(v) = evaluate_expression(e, &bound, inputs) {
            if let Ok(j) = v.json() {
                values.insert(name.clone(), j);
            }
        }
    }
    values
}

/// Evaluate `policy` (the same for each of its bindings while there are no params): the
/// failed validations, and the errors `failurePolicy: Fail` turns into denials; empty admits.
fn evaluate(policy: &CompiledPolicy, inputs: &Inputs<'_>) -> Evaluation {
    let ignored = std::cell::RefCell::new(Vec::new());
    let compiled = policy.error.is_none();
    let error_at = |message: String, elapsed: Duration| -> Vec<Denial> {
        let error_type = metrics::error_type(Some(&message), !compiled);
        if policy.ignore_failures {
            ignored.borrow_mut().push((error_type, elapsed));
            Vec::new()
        } else {
            vec![Denial {
                message,
                reason: "Invalid",
                index: 0,
                error_type,
                elapsed,
            }]
        }
    };
    let error = |message: String| error_at(message, Duration::ZERO);
    let denied = |denials: Vec<Denial>| Evaluation {
        denials,
        ignored: ignored.borrow().clone(),
        ..Evaluation::default()
    };
    if let Some(e) = &policy.error {
        return denied(error(format!("failed to configure policy: {e}")));
    }
    let variables =
        match conditions_and_variables(&policy.match_conditions, &policy.variables, inputs) {
            Ok(None) => return Evaluation::default(),
            Ok(Some(v)) => v,
            Err(e) => return denied(error(e)),
        };
    let vars_value = Value::Object(variables);
    let bound = bind(inputs, &vars_value);
    let mut denials = Vec::new();
    for (index, v) in policy.validations.iter().enumerate() {
        let start = Instant::now();
        match eval(&v.expression, &v.source, &bound, inputs) {
            Err(e) => denials.extend(error_at(e, start.elapsed())),
            Ok(Cel::Bool(true)) => {}
            Ok(_) => {
                let from_expression = v.message_expression.as_ref().and_then(|m| {
                    match evaluate_expression(m, &bound, inputs).ok()? {
                        Cel::String(s) => {
                            let s = s.trim().to_string();
                            (!s.is_empty() && !s.contains('\n') && s.len() <= 5 * 1024).then_some(s)
                        }
                        _ => None,
                    }
                });
                let message = from_expression
                    .or_else(|| {
                        v.message
                            .as_deref()
                            .map(str::trim)
                            .filter(|m| !m.is_empty())
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| format!("failed expression: {}", v.source.trim()));
                denials.push(Denial {
                    message,
                    reason: v.reason,
                    index,
                    error_type: "no_error",
                    elapsed: start.elapsed(),
                });
            }
        }
    }
    // auditAnnotations (validator.go): a string is published (trimmed, empty excluded,
    // at most 10 KiB), null excluded, an error or another type decided by failurePolicy.
    let mut annotations = Vec::new();
    let mut annotation_errors = Vec::new();
    for (key, source, e) in &policy.audit_annotations {
        match evaluate_expression(e, &bound, inputs) {
            Ok(Cel::String(v)) => {
                let v = v.trim();
                if !v.is_empty() {
                    let mut end = v.len().min(MAX_AUDIT_ANNOTATION_VALUE);
                    while !v.is_char_boundary(end) {
                        end -= 1;
                    }
                    annotations.push((key.clone(), v[..end].to_string()));
                }
            }
            Ok(Cel::Null) => {}
            Ok(other) => annotation_errors.extend(error(format!(
                "valueExpression '{source}' resulted in unsupported return type: {}. Return type must be either string or null.",
                cel_type_name(&other)
            )).into_iter().map(|d| d.message)),
            Err(err) => annotation_errors.extend(error(format!(
                "valueExpression '{source}' resulted in error: {err}"
            )).into_iter().map(|d| d.message)),
        }
    }
    let ignored = ignored.into_inner();
    Evaluation {
        denials,
        ignored,
        annotation_errors,
        annotations,
    }
}

/// `o` without `metadata.managedFields` (`null` for no object): what expressions see —
/// borrowed when there are none to strip (a create's object, before the field manager ran).
pub(crate) fn without_managed_fields(o: Option<&Value>) -> std::borrow::Cow<'_, Value> {
    use std::borrow::Cow;
    match o {
        None => Cow::Owned(Value::Null),
        Some(o) if o.pointer("/metadata/managedFields").is_none() => Cow::Borrowed(o),
        Some(o) => {
            let mut o = o.clone();
            if let Some(m) = o.pointer_mut("/metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
            Cow::Owned(o)
        }
    }
}

/// The `request` variable of `a` (`CreateAdmissionRequest`), without the matched `kind` and
/// `resource` ([`matched_request`] adds them).
pub(crate) fn base_request(a: &Attributes<'_>, name: &str) -> Value {
    let d = &a.store.description;
    let user = json!({"username": a.user.name, "uid": a.user.uid,
        "groups": a.user.groups, "extra": a.user.extra});
    json!({
        "requestKind": {"group": d.group, "version": d.version, "kind": d.kind},
        "requestResource": {"group": d.group, "version": d.version, "resource": d.plural},
        "subResource": a.subresource, "requestSubResource": a.subresource,
        "name": name, "namespace": a.namespace, "operation": a.operation.as_str(),
        "userInfo": user, "dryRun": a.dry_run, "options": null,
    })
}

/// `base` with the `kind` and `resource` a policy matched in `version`.
pub(crate) fn matched_request(
    base: &Value,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Value {
    let mut request = base.clone();
    request["kind"] = json!({"group": group, "version": version, "kind": kind});
    request["resource"] = json!({"group": group, "version": version, "resource": plural});
    request
}

impl ValidatingAdmissionPolicy {
    async fn check(&self, a: &Attributes<'_>, object: Option<&Value>) -> Result<(), ApiError> {
        let d = &a.store.description;
        if is_exempt(&d.group, &d.plural) {
            return Ok(());
        }
        if !self.source.synced() {
            let name = object.map(|o| accessor(o).name()).unwrap_or(a.name);
            wait_ready(a, name, || self.source.synced()).await?;
        }
        let set = self.source.current();
        if set.is_empty() {
            return Ok(());
        }
        let facts = RequestFacts::of(a, object).await;
        let request = facts.request(a);
        let storage_version = storage_version(a);
        let (name, namespace_object, namespace_error) = (
            facts.name.as_str(),
            &facts.namespace_object,
            &facts.namespace_error,
        );
        let matched = invocations(
            set.policies.values().map(|(_, p)| p),
            |name| set.bindings_of(name),
            a,
            &request,
            storage_version,
            namespace_error,
        )
        .await;
        if matched.is_empty() {
            return Ok(());
        }
        let strip = |o: Option<&Value>| without_managed_fields(o).into_owned();
        let base_request = base_request(a, name);
        let authorizer = RequestAuthorizer::for_request(self.authorizer.clone(), a, name);
        let inputs = (
            strip(object),
            strip(a.old_object),
            strip(namespace_object.as_deref()),
            base_request,
            (d.group.clone(), d.kind.clone(), d.plural.clone()),
        );
        // CEL runs off the async workers — its cost is bounded per expression, the objects'
        // size by the request body limit —, unless it is cheap: then the hand-off to a
        // blocking thread (a wake-up and two context switches) costs more than the work.
        // Cheap: the expressions' estimated cost, and what converting their inputs to CEL
        // values costs (each expression converts the inputs it references: at most all of
        // them — the objects, the request, every param object — per evaluation).
        let (mut cost, mut expressions) = (0u64, 0u64);
        let mut all_inputs = vec![&inputs.0, &inputs.1, &inputs.2, &inputs.3];
        for m in &matched {
            let mut calls = 0u64;
            for (_, params) in &m.bindings {
                match params {
                    Params::Unset => calls += 1,
                    Params::Objects(objects) => {
                        calls += objects.len().max(1) as u64;
                        all_inputs.extend(objects.iter().map(|o| &**o));
                    }
                }
            }
            cost = cost.saturating_add(m.policy.estimated_max_cost().saturating_mul(calls));
            expressions = expressions.saturating_add(m.policy.expression_count() as u64 * calls);
        }
        let inline = cost <= INLINE_MAX_COST
            && size_within(all_inputs, INLINE_MAX_INPUT_BYTES).is_some_and(|bytes| {
                (bytes as u64).saturating_mul(expressions) <= INLINE_MAX_CONVERTED_BYTES
            });
        let evaluate_all = move || {
            let (object, old_object, namespace_object, base_request, (group, kind, plural)) =
                inputs;
            matched
                .into_iter()
                .map(|m| {
                    let request =
                        matched_request(&base_request, &group, &m.version, &kind, &plural);
                    let null = Value::Null;
                    let mut inputs = Inputs {
                        object: &object,
                        old_object: &old_object,
                        request: &request,
                        namespace_object: &namespace_object,
                        params: &null,
                        authorizer: Some(authorizer.clone()),
                    };
                    // Without params every binding of a policy sees the same decisions:
                    // evaluated once; with params, once per param object.
                    let mut without_params: Option<Evaluation> = None;
                    let evaluations: Vec<Evaluation> = m
                        .bindings
                        .iter()
                        .map(|(_, params)| match params {
                            Params::Unset => without_params
                                .get_or_insert_with(|| evaluate(&m.policy, &inputs))
                                .clone(),
                            Params::Objects(objects) => {
                                let mut all = Evaluation::default();
                                for p in objects {
                                    inputs.params = p;
                                    let e = evaluate(&m.policy, &inputs);
                                    all.denials.extend(e.denials);
                                    all.ignored.extend(e.ignored);
                                    all.annotation_errors.extend(e.annotation_errors);
                                    all.annotations.extend(e.annotations);
                                }
                                inputs.params = &null;
                                all
                            }
                        })
                        .collect();
                    (m, evaluations)
                })
                .collect::<Vec<_>>()
        };
        let decided = match inline {
            // A panic is the request's 500, as from the blocking thread.
            true => std::panic::catch_unwind(std::panic::AssertUnwindSafe(evaluate_all)).map_err(
                |_| ApiError::internal("admission policy evaluation panicked".to_string()),
            )?,
            false => tokio::task::spawn_blocking(evaluate_all)
                .await
                .map_err(|e| {
                    ApiError::internal(format!("admission policy evaluation panicked: {e}"))
                })?,
        };
        let mut denied: Option<(String, &'static str)> = None;
        let mut deny = |message: String, reason: &'static str| {
            denied.get_or_insert((message, reason));
        };
        // `Audit` failures, published as one annotation (validating/dispatcher.go).
        let mut audit_failures: Vec<Value> = Vec::new();
        for (m, evaluations) in decided {
            let policy = &m.policy;
            // Each key's values across bindings and params, deduplicated and sorted, joined
            // (`auditAnnotationCollector.publish`), as `<policy>/<key>`.
            let mut published: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
                Default::default();
            for e in &evaluations {
                for (k, v) in &e.annotations {
                    published.entry(k).or_default().insert(v);
                }
            }
            for (k, values) in published {
                let values: Vec<&str> = values.into_iter().collect();
                a.annotate(&format!("{}/{k}", policy.name), values.join(", "));
            }
            for (binding, error) in &m.config_errors {
                if policy.ignore_failures {
                    continue;
                }
                let message = match binding {
                    Some(b) => format!(
                        "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {error}",
                        policy.name
                    ),
                    None => format!(
                        "ValidatingAdmissionPolicy '{}' denied request: {error}",
                        policy.name
                    ),
                };
                deny(message, "Invalid");
            }
            for ((binding, _), evaluation) in m.bindings.iter().zip(&evaluations) {
                for error in &evaluation.annotation_errors {
                    deny(
                        format!(
                            "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {error}",
                            policy.name, binding.name
                        ),
                        "Invalid",
                    );
                }
                let observe = |error_type: &str, action: &str, elapsed: Duration| {
                    metrics::observe_validation(
                        &policy.name,
                        &binding.name,
                        error_type,
                        action,
                        elapsed,
                    )
                };
                for (error_type, elapsed) in &evaluation.ignored {
                    observe(error_type, "allow", *elapsed);
                }
                for denial in &evaluation.denials {
                    for (action, taken) in [
                        ("deny", binding.deny),
                        ("audit", binding.audit),
                        ("warn", binding.warn),
                    ] {
                        if taken {
                            observe(denial.error_type, action, denial.elapsed);
                        }
                    }
                    if binding.audit {
                        audit_failures.push(json!({"message": denial.message,
                            "policy": policy.name, "binding": binding.name,
                            "expressionIndex": denial.index,
                            "validationActions": binding.actions}));
                    }
                    if binding.warn {
                        a.warn(format!(
                            "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                            policy.name, binding.name, denial.message
                        ));
                    }
                    if binding.deny {
                        deny(
                            format!(
                                "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
                                policy.name, binding.name, denial.message
                            ),
                            denial.reason,
                        );
                    }
                }
            }
        }
        if !audit_failures.is_empty() {
            a.annotate(
                "validation.policy.admission.k8s.io/validation_failure",
                Value::Array(audit_failures).to_string(),
            );
        }
        let Some((message, reason)) = denied else {
            return Ok(());
        };
        // admission.NewForbidden, then the decision's reason and its code.
        let mut e = ApiError::forbidden(&a.store.gr, name, &message);
        e.reason = reason;
        e.code = REASONS
            .iter()
            .find(|(r, _)| *r == reason)
            .map_or(422, |(_, c)| *c);
        if let Some(details) = e.details.as_mut() {
            details["causes"] = json!([{"message": message}]);
        }
        Err(e)
    }
}

impl Admission for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn handles(&self, _: Operation) -> bool {
        true
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(self.check(attributes, object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::policy::compiled::compile_policy;

    #[test]
    fn cheap_evaluations_of_small_objects_stay_on_the_request_s_task() {
        let small = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        let n = size_within([&small], 100).unwrap();
        assert!(n > 20 && n < 100, "{n}");
        assert_eq!(size_within([&small, &small], 100), Some(2 * n));
        assert_eq!(size_within([&small], 20), None);
        let big = json!({"data": {"k": "x".repeat(INLINE_MAX_INPUT_BYTES)}});
        assert_eq!(size_within([&small, &big], INLINE_MAX_INPUT_BYTES), None);
        let cost = |expression: &str| {
            let p = json!({"metadata": {"name": "p"}, "spec": {
                "validations": [{"expression": expression}]}});
            let (compiled, errs) = compile_policy(&p);
            assert!(errs.is_empty(), "{errs:?}");
            compiled.estimated_max_cost()
        };
        assert!(cost("object.metadata.name.size() < 250") <= INLINE_MAX_COST);
        // A walk over every key of every entry of a list is not cheap.
        assert!(
            cost("object.spec.containers.all(c, c.env.all(e, e.name.startsWith('X')))")
                > INLINE_MAX_COST
        );
    }
}

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
//! ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>`), `Audit` is not recorded
//! yet (the request is admitted).
//!
//! Admission configuration resources are exempt (`rules.go`
//! `IsExemptAdmissionConfigurationResource`), so a bad policy can always be removed. Objects
//! are seen in the storage version; `params` is `null` (no `paramKind` yet) and `authorizer`
//! is not bound yet (an expression calling it fails, per `failurePolicy`).

use super::compiled::{CompiledBinding, CompiledPolicy, REASONS};
use super::matching::MatchRequest;
use super::resources::GROUP;
use super::source::PolicySource;
use crate::admission::interface::{Admission, AdmissionFuture, Attributes, Operation};
use crate::status::ApiError;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_cel::limits::PER_CALL_LIMIT;
use wasm_apiserver_cel::{Expression, Value as Cel};

/// The admission member; enforces what `source` holds.
pub struct ValidatingAdmissionPolicy {
    pub source: Arc<PolicySource>,
}

/// What one validation of one binding decided.
struct Denial {
    message: String,
    reason: &'static str,
}

/// The variables every expression of a request sees.
struct Inputs {
    object: Value,
    old_object: Value,
    request: Value,
    namespace_object: Value,
}

fn labels(obj: Option<&Value>) -> Option<BTreeMap<String, String>> {
    let obj = obj?;
    Some(
        accessor(obj)
            .labels()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

/// kube's `expression '<e>' resulted in error: <err>` (`cel/filter.go`).
fn eval(e: &Expression, source: &str, vars: &[(&str, &Value)]) -> Result<Cel, String> {
    e.evaluate_with_limit(vars, PER_CALL_LIMIT)
        .map(|r| r.value)
        .map_err(|err| format!("expression '{source}' resulted in error: {err}"))
}

/// Evaluate `policy` for one binding: `Ok(None)` admits, `Ok(Some(denials))` lists the
/// failed validations (and the errors `failurePolicy: Fail` turns into denials).
fn evaluate(policy: &CompiledPolicy, inputs: &Inputs) -> Vec<Denial> {
    let error = |message: String| -> Vec<Denial> {
        if policy.ignore_failures {
            Vec::new()
        } else {
            vec![Denial {
                message,
                reason: "Invalid",
            }]
        }
    };
    if let Some(e) = &policy.error {
        return error(format!("failed to configure policy: {e}"));
    }
    let null = Value::Null;
    let mut variables = serde_json::Map::new();
    let base = |variables: &Value| -> Vec<(&'static str, Value)> {
        vec![
            ("object", inputs.object.clone()),
            ("oldObject", inputs.old_object.clone()),
            ("request", inputs.request.clone()),
            ("namespaceObject", inputs.namespace_object.clone()),
            ("params", null.clone()),
            ("variables", variables.clone()),
        ]
    };
    let vars_value = Value::Object(variables.clone());
    let owned = base(&vars_value);
    let bound: Vec<(&str, &Value)> = owned.iter().map(|(n, v)| (*n, v)).collect();
    // matchConditions: any false → the policy does not apply; else an error fails.
    let mut condition_error = None;
    for (name, c) in &policy.match_conditions {
        match c.evaluate_with_limit(&bound, PER_CALL_LIMIT) {
            Ok(r) if r.value == Cel::Bool(false) => return Vec::new(),
            Ok(_) => {}
            Err(e) => {
                condition_error
                    .get_or_insert(format!("failed to evaluate match condition '{name}': {e}"));
            }
        }
    }
    if let Some(e) = condition_error {
        return error(e);
    }
    for (name, e) in &policy.variables {
        let current = Value::Object(variables.clone());
        let owned = base(&current);
        let bound: Vec<(&str, &Value)> = owned.iter().map(|(n, v)| (*n, v)).collect();
        if let Ok(r) = e.evaluate_with_limit(&bound, PER_CALL_LIMIT) {
            if let Ok(j) = r.value.json() {
                variables.insert(name.clone(), j);
            }
        }
    }
    let vars_value = Value::Object(variables);
    let owned = base(&vars_value);
    let bound: Vec<(&str, &Value)> = owned.iter().map(|(n, v)| (*n, v)).collect();
    let mut denials = Vec::new();
    for v in &policy.validations {
        match eval(&v.expression, &v.source, &bound) {
            Err(e) => denials.extend(error(e)),
            Ok(Cel::Bool(true)) => {}
            Ok(_) => {
                let from_expression = v.message_expression.as_ref().and_then(|m| {
                    match m.evaluate_with_limit(&bound, PER_CALL_LIMIT).ok()?.value {
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
                });
            }
        }
    }
    denials
}

impl ValidatingAdmissionPolicy {
    async fn check(&self, a: &Attributes<'_>, object: Option<&Value>) -> Result<(), ApiError> {
        let set = self.source.current();
        let d = &a.store.description;
        if set.is_empty() || d.group == GROUP {
            return Ok(());
        }
        let name = match a.name {
            "" => object.map(|o| accessor(o).name()).unwrap_or(""),
            n => n,
        };
        let is_namespace = d.group.is_empty() && d.plural == "namespaces";
        let namespace = if is_namespace { name } else { a.namespace };
        // The request's namespace, read once (from the watch cache) when a policy may need it.
        let namespace_object = if namespace.is_empty() || is_namespace {
            None
        } else {
            match a.resources.get("", "v1", "namespaces") {
                Some(ns) => ns.get("", namespace, "0").await.ok(),
                None => None,
            }
        };
        let namespace_labels = if is_namespace {
            labels(object.or(a.old_object))
        } else {
            labels(namespace_object.as_ref())
        };
        let operation = a.operation.as_str();
        let request = MatchRequest {
            operation,
            group: &d.group,
            version: &d.version,
            resource: &d.plural,
            subresource: a.subresource,
            namespace,
            name,
            labels: labels(object),
            old_labels: labels(a.old_object),
            namespace_labels,
        };
        let strip = |o: Option<&Value>| {
            o.cloned().map_or(Value::Null, |mut o| {
                if let Some(m) = o.pointer_mut("/metadata").and_then(Value::as_object_mut) {
                    m.remove("managedFields");
                }
                o
            })
        };
        let gvk = json!({"group": d.group, "version": d.version, "kind": d.kind});
        let gvr = json!({"group": d.group, "version": d.version, "resource": d.plural});
        let inputs = Inputs {
            object: strip(object),
            old_object: strip(a.old_object),
            namespace_object: strip(namespace_object.as_ref()),
            request: json!({
                "kind": gvk, "resource": gvr, "subResource": a.subresource,
                "requestKind": gvk, "requestResource": gvr, "requestSubResource": a.subresource,
                "name": name, "namespace": a.namespace, "operation": operation,
                "userInfo": {"username": a.user.name, "uid": a.user.uid,
                    "groups": a.user.groups, "extra": a.user.extra},
                "dryRun": a.dry_run, "options": null,
            }),
        };
        let mut denied: Option<(String, &'static str)> = None;
        for (_, policy) in set.policies.values() {
            let matches = policy.match_constraints.matches(&request);
            let bindings: Vec<&CompiledBinding> = set.bindings_of(&policy.name).collect();
            if bindings.is_empty() || matches == Ok(false) {
                continue;
            }
            for binding in bindings {
                let configured = match (&matches, &binding.error) {
                    (Err(e), _) => Err(format!("failed to configure policy: {e}")),
                    (_, Some(e)) => Err(format!("failed to configure binding: {e}")),
                    _ => match binding.match_resources.matches(&request) {
                        Ok(false) => continue,
                        Ok(true) => Ok(()),
                        Err(e) => Err(format!("failed to configure binding: {e}")),
                    },
                };
                let denials = match configured {
                    Ok(()) => evaluate(policy, &inputs),
                    Err(_) if policy.ignore_failures => Vec::new(),
                    Err(message) => vec![Denial {
                        message,
                        reason: "Invalid",
                    }],
                };
                for denial in denials {
                    if binding.warn {
                        a.warn(format!(
                            "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                            policy.name, binding.name, denial.message
                        ));
                    }
                    if binding.deny && denied.is_none() {
                        denied = Some((
                            format!(
                                "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
                                policy.name, binding.name, denial.message
                            ),
                            denial.reason,
                        ));
                    }
                }
            }
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

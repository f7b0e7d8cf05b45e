//! The `WasmAdmissionPolicy` admission member: runs the loaded `AdmissionPlugin` policies
//! (`source.rs`) as kube's webhook dispatchers run webhooks
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go`) —
//! mutating policies in the mutating stage, one after another in name order, each seeing the
//! object as the previous one left it; validating ones in the validating stage, after the
//! strategy — but in-process: each call is kube's `AdmissionRequest` as JSON
//! (`k8s.io/api/admission/v1`; `kind`/`resource` in the storage version the objects are in,
//! `requestKind`/`requestResource` in the request's), on a blocking thread, under the plugin
//! runtime's deadline and memory cap, its context reads answered from the watch cache
//! (`context.rs`).
//!
//! - Matching: the object's `rules` (else the component's own), `namespaceSelector` and
//!   `objectSelector`, as `MatchResources` with `matchPolicy: Equivalent`
//!   (`policy/matching.rs`).
//! - A denial (`allowed: false`) is, per `spec.mode`: `Enforce` — the request is refused as
//!   kube refuses a webhook's denial (`webhook/errors/statuserror.go` `ToStatusErr`: `admission
//!   plugin "<name>" denied the request: <message>`, the denial's code, 400 for a code below
//!   400, except 0 which is 403 Forbidden as the contract says); `Warn` — a `Warning` header
//!   `admission plugin "<name>" would deny the request: <message>`; `Audit` — an entry of the
//!   audit annotation [`AUDIT_FAILURES`]. A policy's audit annotations are added as
//!   `<policy>/<key>`, as kube prefixes a webhook's.
//!   A policy's own warnings are always added.
//! - A failure (trap, deadline, memory cap, a mutated object that changes its identity, a
//!   configuration error such as an unreadable namespace) is decided by `failurePolicy`:
//!   `Fail` refuses the request with a 500 (`failed calling admission plugin "<name>": …`,
//!   kube's `failed calling webhook`), `Ignore` skips the policy.
//! - No lock-out: the admission configuration resources (`admissionregistration.k8s.io`) and
//!   the host's own (`wasm-apiserver.dev`: StrategyPlugins, AdmissionPlugins, components) are
//!   never subject to a policy, so a bad one can always be removed.
//! - That an `AdmissionPlugin`'s author may read what it grants is `PolicyAuthorization`'s
//!   check (`admission/policy_authorization.rs`), which cannot be disabled.
//!
//! - Reinvocation ([`crate::admission::reinvocation`]): a policy that changes the object asks
//!   for the mutating stage's second run, so that the `IfNeeded` MutatingAdmissionPolicies and
//!   webhooks that ran before it see the change; the wasm policies themselves run once (as
//!   webhooks with `reinvocationPolicy: Never`: an `AdmissionPlugin` has no such field yet).
//!
//! Not yet: `matchConditions`.

use super::context::CacheReads;
use super::resources::Mode;
use super::source::{LoadedPolicy, WasmPolicySource};
use crate::admission::exempt::is_exempt;
use crate::admission::interface::{wait_ready, Admission, AdmissionFuture, Attributes, Operation};
use crate::admission::policy::matching::{storage_version, RequestFacts};
use crate::admission::webhook::review::denied_message;
use crate::plugin::wit::admission_v0_1::AdmissionResponse;
use crate::status::{ApiError, ApiResult};
use serde_json::{json, Value};
use std::sync::Arc;

/// The admission member.
pub struct WasmAdmissionPolicy {
    /// The policies to run.
    pub source: Arc<WasmPolicySource>,
}

/// A policy's denial as kube answers a webhook's (`ToStatusErr`).
fn denial_error(policy: &str, r: &AdmissionResponse) -> ApiError {
    let denied_by = format!("admission plugin {policy:?} denied the request");
    let (code, reason, message) = match &r.denial {
        Some(d) => (d.code, d.reason.as_str(), d.message.as_str()),
        None => (0, "", ""),
    };
    let message = denied_message(&denied_by, message, reason);
    let code = match code {
        0 => 403,
        c if c < 400 => 400,
        c => c,
    };
    let mut e = ApiError::bad_request(message);
    e.code = code;
    e.reason = match crate::status::known_reason(reason) {
        Some(r) => r,
        None if code == 403 => "Forbidden",
        None if code == 400 => "BadRequest",
        None => "",
    };
    e
}

/// A policy that failed, as `failurePolicy: Fail` answers it.
fn failure(policy: &str, error: impl std::fmt::Display) -> ApiError {
    ApiError::internal(format!(
        "failed calling admission plugin {policy:?}: {error}"
    ))
}

/// A call's fault without the runtime's `strategy plugin "<component>"` subject (the policy
/// is named by [`failure`]): `failed in validate: …`, `exceeded its deadline of 300 ms in …`.
fn fault_text(fault: &crate::strategy::PluginFault) -> String {
    let text = fault.to_string();
    let rest = text
        .strip_prefix("strategy plugin \"")
        .and_then(|t| t.split_once("\" "))
        .map(|(_, rest)| rest.to_string());
    rest.unwrap_or(text)
}

/// The identity a mutated object must keep.
fn identity(o: &Value) -> (Value, Value, Value, Value) {
    (
        o["apiVersion"].clone(),
        o["kind"].clone(),
        o.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        o.pointer("/metadata/namespace")
            .cloned()
            .unwrap_or(Value::Null),
    )
}

impl WasmAdmissionPolicy {
    /// Run the matching policies of one stage on `object` (`None` for a delete): the object
    /// as the mutating policies changed it (`None`: unchanged).
    async fn run(
        &self,
        a: &Attributes<'_>,
        object: Option<&Value>,
        mutating: bool,
    ) -> ApiResult<Option<Value>> {
        let d = &a.store.description;
        if is_exempt(&d.group, &d.plural) {
            return Ok(None);
        }
        if !self.source.synced() {
            let name = object
                .map(|o| o["metadata"]["name"].as_str().unwrap_or(""))
                .unwrap_or(a.name);
            wait_ready(a, name, || self.source.synced()).await?;
        }
        let (current, folder) = (self.source.current(), self.source.folder());
        // The objects' policies and the plugin folder's (`folder.rs`), in name order.
        let mut policies: Vec<&Arc<LoadedPolicy>> = current
            .values()
            .chain(folder.values())
            .filter(|p| p.plugin.description().mutating == mutating)
            .collect();
        if !folder.is_empty() {
            policies.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if policies.is_empty() {
            return Ok(None);
        }
        let facts = RequestFacts::of(a, object).await;
        let request = facts.request(a);
        let storage = storage_version(a);
        let mut matched = Vec::new();
        for p in policies {
            match p.matcher.matches_equivalent(&request, storage) {
                Ok(None) => {}
                Ok(Some(_)) => matched.push(p.clone()),
                Err(e) => {
                    let e = facts.namespace_error.clone().unwrap_or(e);
                    if !p.spec.ignore_failures {
                        return Err(failure(&p.name, e));
                    }
                }
            }
        }
        if matched.is_empty() {
            return Ok(None);
        }
        let user = json!({"username": a.user.name, "uid": a.user.uid,
            "groups": a.user.groups, "extra": a.user.extra});
        let group = &d.group;
        let review = json!({
            "uid": uuid::Uuid::new_v4().to_string(),
            "kind": {"group": group, "version": storage, "kind": d.kind},
            "resource": {"group": group, "version": storage, "resource": d.plural},
            "subResource": a.subresource,
            "requestKind": {"group": group, "version": d.version, "kind": d.kind},
            "requestResource": {"group": group, "version": d.version, "resource": d.plural},
            "requestSubResource": a.subresource,
            "name": facts.name, "namespace": a.namespace, "operation": a.operation.as_str(),
            "userInfo": user, "dryRun": a.dry_run, "options": null,
        });
        let calls = Calls {
            policies: matched,
            review,
            old_object: a.old_object.cloned().unwrap_or(Value::Null),
            object: object.cloned().unwrap_or(Value::Null),
            mutating,
            snapshot: a.snapshot.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        // Every matched policy on one blocking thread, one after the other: one hand-off per
        // stage, and the request serialized once per state of the object.
        let outcome = tokio::task::spawn_blocking(move || calls.run())
            .await
            .map_err(|e| ApiError::internal(format!("admission plugins panicked: {e}")))?;
        for w in outcome.warnings {
            a.warn(w);
        }
        for (k, v) in outcome.annotations {
            a.annotate(&k, v);
        }
        outcome.result
    }
}

/// The matched policies of one stage and what they are called with, run off the async workers.
struct Calls {
    policies: Vec<Arc<LoadedPolicy>>,
    /// The `AdmissionRequest` but for `object` and `oldObject`.
    review: Value,
    old_object: Value,
    object: Value,
    mutating: bool,
    snapshot: Arc<crate::registry::Snapshot>,
    runtime: tokio::runtime::Handle,
}

/// What the policies of a stage decided: the refusal or the mutated object (`None`: not
/// changed), and the warnings to add either way.
struct Outcome {
    result: ApiResult<Option<Value>>,
    warnings: Vec<String>,
    /// Audit annotations: each policy's own (`<policy>/<key>`), and the `Audit`-mode
    /// denials as one [`AUDIT_FAILURES`] entry.
    annotations: Vec<(String, String)>,
}

/// The audit annotation listing the denials of validating policies in `Audit` mode (a JSON
/// array of `{"plugin", "message"}`), as kube's
/// `validation.policy.admission.k8s.io/validation_failure` lists a ValidatingAdmissionPolicy's;
/// mutating policies' are [`AUDIT_MUTATION_FAILURES`] (an annotation is written once).
pub const AUDIT_FAILURES: &str = "admission.wasm-apiserver.dev/validation_failure";
/// [`AUDIT_FAILURES`] of the mutating stage.
pub const AUDIT_MUTATION_FAILURES: &str = "admission.wasm-apiserver.dev/mutation_failure";

/// The `AdmissionRequest` as JSON text: the review's fields and the two objects, borrowed.
#[derive(serde::Serialize)]
struct Review<'a> {
    #[serde(flatten)]
    fields: &'a Value,
    object: &'a Value,
    #[serde(rename = "oldObject")]
    old_object: &'a Value,
}

impl Calls {
    fn run(mut self) -> Outcome {
        let (mut warnings, mut annotations, mut failures) = (Vec::new(), Vec::new(), Vec::new());
        let result = self.decide(&mut warnings, &mut annotations, &mut failures);
        if !failures.is_empty() {
            annotations.push((
                AUDIT_FAILURES.to_string(),
                Value::Array(failures).to_string(),
            ));
        }
        Outcome {
            result,
            warnings,
            annotations,
        }
    }

    fn decide(
        &mut self,
        warnings: &mut Vec<String>,
        annotations: &mut Vec<(String, String)>,
        failures: &mut Vec<Value>,
    ) -> ApiResult<Option<Value>> {
        let mut changed = false;
        let mut text: Option<String> = None;
        for p in &self.policies {
            let request = match &text {
                Some(t) => t,
                None => text.insert(
                    serde_json::to_string(&Review {
                        fields: &self.review,
                        object: &self.object,
                        old_object: &self.old_object,
                    })
                    .map_err(ApiError::internal)?,
                ),
            };
            let reads = Arc::new(CacheReads {
                policy: p.name.clone(),
                snapshot: self.snapshot.clone(),
                declared: p.plugin.description().context_reads.clone(),
                runtime: self.runtime.clone(),
            });
            let response = match p
                .plugin
                .admit(self.mutating, request, &p.spec.settings, reads)
            {
                Ok(r) => r,
                Err(fault) if p.spec.ignore_failures => {
                    tracing::warn!(policy = %p.name, error = %fault, "admission plugin failed; ignored (failurePolicy: Ignore)");
                    continue;
                }
                Err(fault) => return Err(failure(&p.name, fault_text(&fault))),
            };
            warnings.extend(response.warnings.iter().cloned());
            // Prefixed with the policy's name, as kube prefixes a webhook's.
            for (k, v) in &response.audit_annotations {
                annotations.push((format!("{}/{k}", p.name), v.clone()));
            }
            if !response.allowed {
                let e = denial_error(&p.name, &response);
                match p.spec.mode {
                    Mode::Enforce => return Err(e),
                    Mode::Warn => warnings.push(e.message.replacen(
                        "denied the request",
                        "would deny the request",
                        1,
                    )),
                    Mode::Audit => failures.push(json!({"plugin": p.name, "message": e.message})),
                }
                continue;
            }
            let Some(mutated) = response.mutated_object.as_deref().filter(|_| self.mutating) else {
                continue;
            };
            let checked = serde_json::from_str::<Value>(mutated)
                .map_err(|e| format!("its mutated object is not JSON: {e}"))
                .and_then(|m| {
                    if identity(&m) == identity(&self.object) {
                        Ok(m)
                    } else {
                        Err(
                            "its mutated object changes apiVersion, kind, name or namespace"
                                .to_string(),
                        )
                    }
                });
            match checked {
                Ok(m) => {
                    self.object = m;
                    changed = true;
                    text = None;
                }
                Err(e) if p.spec.ignore_failures => {
                    tracing::warn!(policy = %p.name, error = %e, "admission plugin failed; ignored (failurePolicy: Ignore)")
                }
                Err(e) => return Err(failure(&p.name, e)),
            }
        }
        Ok(changed.then(|| std::mem::take(&mut self.object)))
    }
}

impl Admission for WasmAdmissionPolicy {
    fn name(&self) -> &'static str {
        "WasmAdmissionPolicy"
    }

    fn handles(&self, _: Operation) -> bool {
        true
    }

    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move {
            if attributes.reinvocation.lock().unwrap().is_reinvoke() {
                return Ok(());
            }
            let mutated = self.run(attributes, object.as_deref(), true).await?;
            if let (Some(m), Some(obj)) = (mutated, object) {
                if m != *obj {
                    *obj = m;
                    attributes
                        .reinvocation
                        .lock()
                        .unwrap()
                        .set_should_reinvoke();
                }
            }
            Ok(())
        })
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move { self.run(attributes, object, false).await.map(drop) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::wit::admission_v0_1::Denial;

    fn denied(code: u16, reason: &str, message: &str) -> AdmissionResponse {
        AdmissionResponse {
            allowed: false,
            denial: Some(Denial {
                code,
                reason: reason.into(),
                message: message.into(),
            }),
            warnings: Vec::new(),
            audit_annotations: Vec::new(),
            mutated_object: None,
        }
    }

    #[test]
    fn denials_are_answered_as_kube_answers_a_webhooks() {
        let e = denial_error("p", &denied(0, "", "no"));
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(e.message, "admission plugin \"p\" denied the request: no");
        let e = denial_error("p", &denied(200, "", ""));
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        assert_eq!(
            e.message,
            "admission plugin \"p\" denied the request without explanation"
        );
        let e = denial_error("p", &denied(422, "Invalid", ""));
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert_eq!(
            e.message,
            "admission plugin \"p\" denied the request: Invalid"
        );
        let e = denial_error("p", &denied(429, "Custom", "slow down"));
        assert_eq!((e.code, e.reason), (429, ""));
    }
}

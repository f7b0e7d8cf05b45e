//! The `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook` admission members: kube's
//! webhook plugins (`k8s.io/apiserver/pkg/admission/plugin/webhook/{generic/webhook.go,
//! mutating/dispatcher.go,validating/dispatcher.go}`) calling the webhooks of the
//! `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s this server holds
//! (configurations in name order, webhooks in their order).
//!
//! - Matching (`ShouldCallHook`): a webhook with no rule matches nothing; its `rules`,
//!   `namespaceSelector`, `objectSelector` and `matchPolicy` as `policy/matching.rs` decides
//!   them (a namespace that does not exist, when the selector needs its labels, answers 404);
//!   then its `matchConditions` (CEL: `object`, `oldObject`, `request`, `authorizer`) — one
//!   false skips the webhook, an error refuses the request (403) under `failurePolicy: Fail`
//!   and skips the webhook under `Ignore`.
//! - A dry run reaches only webhooks with `sideEffects` `None` or `NoneOnDryRun`; another
//!   answers 400 `admission webhook "<name>" does not support dry run`.
//! - The review: `AdmissionReview` `v1` (or `v1beta1`, the first the webhook accepts), `kind`
//!   and `resource` in the storage version the objects are in (kube converts the objects to
//!   the version the rule matched; this server hands every admission member the storage
//!   version), `requestKind`/`requestResource` in the request's, `options` the operation's
//!   options object. POSTed with the webhook's `timeoutSeconds` (also sent as `?timeout=`;
//!   kube sends the lesser of it and the request's remaining time).
//! - The answer (`VerifyAdmissionResponse`, `review.rs`): warnings become `Warning` headers,
//!   `auditAnnotations` audit annotations `<webhook>/<key>`; a denial is the request's answer
//!   (`ToStatusErr`: `admission webhook "<name>" denied the request: <message>`, the webhook's
//!   code, 400 below 400).
//! - A failed call (connection, timeout, an answer that does not verify) is, under
//!   `failurePolicy: Fail`, a 500 `failed calling webhook "<name>": …`; under `Ignore` the
//!   webhook is skipped and the audit annotation
//!   `failed-open.{validating,mutation}.webhook.admission.k8s.io/round_<r>_index_<i>` names it
//!   (`i` counts the validating webhooks called for the request, every mutating webhook).
//! - Validating webhooks are called concurrently; the first refusal in webhook order answers
//!   (kube answers with the first to finish; here the answer does not depend on timing).
//! - Mutating webhooks run one after another on the object as the previous left it; a JSON
//!   Patch answer is applied within a PATCH request's bounds (`limits::apply_json_patch`) and
//!   may not change apiVersion, kind, name or namespace (500; kube lets a create's patch rename
//!   the object and answers an update's with 400). Each call adds `mutation.webhook.admission.k8s.io/round_<r>_index_<i>` (`{"configuration",
//!   "webhook", "mutated"}`). `reinvocationPolicy: IfNeeded` (kube's
//!   `webhookReinvokeContext`, [`crate::admission::reinvocation`]): when a webhook changes
//!   the object, the member asks for the mutating stage's second run (round 1), in which the
//!   `IfNeeded` webhooks called before the change are called again, in order — also those
//!   called after the last change when another member (a MutatingAdmissionPolicy, a wasm
//!   policy) changed the object after this member. The
//!   `patch.webhook.admission.k8s.io/…` annotation (kube's, at `Request` level) is not
//!   written: the audit annotations here have no level, and a patch may carry data.
//! - Admission configuration resources are exempt (`IsExemptAdmissionConfigurationResource`).
//!
//! Each call is counted in kube's webhook metrics (`metrics.rs`).

use super::configuration::CompiledWebhook;
use super::metrics;
use super::review::{denial, options, request_review, verify_response, AdmissionResponse};
use crate::admission::exempt::is_exempt;
use crate::admission::interface::{wait_ready, Admission, AdmissionFuture, Attributes, Operation};
use crate::admission::policy::authorizer::RequestAuthorizer;
use crate::admission::policy::dispatcher::{
    base_request, conditions_hold, matched_request, without_managed_fields, Inputs,
};
use crate::admission::policy::matching::{storage_version, RequestFacts};
use crate::admission::policy::mutating::dispatcher::keeps_identity;
use crate::admission::policy::mutating::patch::within_size;
use crate::admission::policy::source::PolicySource;
use crate::authorization::Authorizer;
use crate::status::{ApiError, ApiResult};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;
use wasm_apiserver_apimachinery::GroupResource;

/// The audit annotation prefix of a validating webhook that failed open.
pub const VALIDATING_FAILED_OPEN: &str = "failed-open.validating.webhook.admission.k8s.io/";
/// The audit annotation prefix of a mutating webhook that failed open.
pub const MUTATING_FAILED_OPEN: &str = "failed-open.mutation.webhook.admission.k8s.io/";
/// The audit annotation prefix of each mutating webhook call.
pub const MUTATION: &str = "mutation.webhook.admission.k8s.io/";

/// The `ValidatingAdmissionWebhook` member.
pub struct ValidatingAdmissionWebhook {
    pub source: Arc<PolicySource>,
    /// What `authorizer` in `matchConditions` asks.
    pub authorizer: Authorizer,
}

/// The `MutatingAdmissionWebhook` member.
pub struct MutatingAdmissionWebhook {
    pub source: Arc<PolicySource>,
    /// What `authorizer` in `matchConditions` asks.
    pub authorizer: Authorizer,
}

/// Why a call did not answer.
enum CallFailure {
    /// kube's `ErrCallingWebhook`: decided by `failurePolicy`; the text after `failed calling
    /// webhook "<name>": `, and the code for the metrics.
    Calling(String, u16),
    /// An answer of this server's own, whatever the `failurePolicy` (a dry run the webhook
    /// does not support).
    Status(ApiError),
}

/// The request as every webhook of one request sees it.
struct Request<'a> {
    a: &'a Attributes<'a>,
    /// kube's `AdmissionRequest` but for `uid`, `object` and `oldObject`.
    review: Value,
    old_object: Value,
    authorizer: Authorizer,
}

impl Request<'_> {
    fn new<'a>(a: &'a Attributes<'a>, name: &str, authorizer: &Authorizer) -> Request<'a> {
        let d = &a.store.description;
        let mut review = matched_request(
            &base_request(a, name),
            &d.group,
            storage_version(a),
            &d.kind,
            &d.plural,
        );
        review["options"] = options(a);
        Request {
            a,
            review,
            old_object: a.old_object.cloned().unwrap_or(Value::Null),
            authorizer: authorizer.clone(),
        }
    }

    /// `ShouldCallHook` for `hook` on `object`, with `facts` looked up for it.
    fn should_call(
        &self,
        hook: &CompiledWebhook,
        facts: &RequestFacts,
        object: Option<&Value>,
    ) -> ApiResult<bool> {
        if !hook.has_rules {
            return Ok(false);
        }
        let request = facts.request(self.a);
        let storage = storage_version(self.a);
        let rules = match &hook.match_resources {
            Ok(rules) => rules,
            // A selector that does not parse fails only the requests the rules match (kube's
            // matchers run after the rules decide).
            Err(e) => {
                return match hook.rules_only.matches_equivalent(&request, storage) {
                    Ok(None) => Ok(false),
                    _ => Err(ApiError::internal(e)),
                }
            }
        };
        match rules.matches_equivalent(&request, storage) {
            Ok(None) => return Ok(false),
            Ok(Some(_)) => {}
            Err(_) => {
                let namespaces = GroupResource {
                    group: String::new(),
                    resource: "namespaces".into(),
                };
                return Err(ApiError::not_found(&namespaces, &facts.namespace));
            }
        }
        let conditions = match &hook.match_conditions {
            Ok(c) if c.is_empty() => return Ok(true),
            Ok(c) => Ok(c),
            Err(e) => Err(e.clone()),
        };
        let held = conditions.and_then(|c| {
            let object = without_managed_fields(object);
            let old_object = without_managed_fields(self.a.old_object);
            let null = Value::Null;
            let inputs = Inputs {
                object: &object,
                old_object: &old_object,
                request: &self.review,
                namespace_object: &null,
                params: &null,
                authorizer: Some(RequestAuthorizer::for_request(
                    self.authorizer.clone(),
                    self.a,
                    &facts.name,
                )),
            };
            conditions_hold(c, &inputs)
        });
        match held {
            Ok(h) => Ok(h),
            Err(_) if !hook.fail => Ok(false),
            Err(e) => Err(ApiError::forbidden(&self.a.store.gr, &facts.name, &e)),
        }
    }

    /// Call `hook` with `object` (`Null` for a delete).
    async fn call(
        &self,
        hook: &CompiledWebhook,
        object: &Value,
        mutating: bool,
    ) -> Result<AdmissionResponse, CallFailure> {
        if self.a.dry_run && !hook.dry_run_safe {
            return Err(CallFailure::Status(ApiError::bad_request(format!(
                "admission webhook {:?} does not support dry run",
                hook.name
            ))));
        }
        let Some(version) = hook.review_version else {
            return Err(CallFailure::Calling(
                "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)".into(),
                400,
            ));
        };
        let client = hook
            .client
            .as_ref()
            .map_err(|e| CallFailure::Calling(format!("could not get REST client: {e}"), 500))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let review = request_review(version, &uid, &self.review, object, &self.old_object);
        let answer = client
            .post(&review, Some(hook.timeout))
            .await
            .map_err(|e| {
                CallFailure::Calling(
                    format!("failed to call webhook: {e}"),
                    e.status.unwrap_or(503),
                )
            })?;
        verify_response(version, &uid, mutating, &answer).map_err(|e| {
            CallFailure::Calling(format!("received invalid webhook response: {e}"), 503)
        })
    }

    /// Warnings and audit annotations of `hook`'s answer.
    fn record(&self, hook: &CompiledWebhook, r: &AdmissionResponse) {
        for w in &r.warnings {
            self.a.warn(w.clone());
        }
        for (k, v) in &r.audit_annotations {
            self.a.annotate(&format!("{}/{k}", hook.name), v.clone());
        }
    }
}

/// The webhooks of `configurations`, in order, each with its index.
fn webhooks<'a>(
    configurations: impl Iterator<Item = &'a Arc<super::configuration::CompiledWebhookConfiguration>>,
) -> Vec<Arc<CompiledWebhook>> {
    configurations
        .flat_map(|c| c.webhooks.iter().cloned())
        .collect()
}

/// The mutating member's name (`--enable-admission-plugins`, its reinvocation record).
const MUTATING: &str = "MutatingAdmissionWebhook";

/// Whether `a` is exempt, else wait until the source is loaded.
async fn applies(
    a: &Attributes<'_>,
    source: &PolicySource,
    object: Option<&Value>,
) -> ApiResult<bool> {
    let d = &a.store.description;
    if is_exempt(&d.group, &d.plural) {
        return Ok(false);
    }
    if !source.synced() {
        let name = object
            .and_then(|o| o.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or(a.name);
        wait_ready(a, name, || source.synced()).await?;
    }
    Ok(true)
}

impl ValidatingAdmissionWebhook {
    async fn check(&self, a: &Attributes<'_>, object: Option<&Value>) -> ApiResult<()> {
        if !applies(a, &self.source, object).await? {
            return Ok(());
        }
        let set = self.source.current();
        if set.validating_webhooks.is_empty() {
            return Ok(());
        }
        let hooks = webhooks(set.validating_webhooks.values().map(|(_, c)| c));
        let facts = RequestFacts::of(a, object).await;
        let request = Request::new(a, &facts.name, &self.authorizer);
        let mut matched = Vec::new();
        for hook in &hooks {
            if request.should_call(hook, &facts, object)? {
                matched.push(hook);
            }
        }
        if matched.is_empty() {
            return Ok(());
        }
        let null = Value::Null;
        let object = object.unwrap_or(&null);
        let operation = a.operation.as_str();
        let calls = matched.iter().map(|hook| async {
            let start = Instant::now();
            let r = request.call(hook, object, false).await;
            (r, start.elapsed())
        });
        let answers = futures::future::join_all(calls).await;
        let mut first: Option<ApiError> = None;
        // The index in the failed-open annotation is among the webhooks called, as kube's.
        for (i, (hook, (answer, elapsed))) in matched.into_iter().zip(answers).enumerate() {
            let kind = "validating";
            let refusal = match answer {
                Ok(r) => {
                    request.record(hook, &r);
                    if r.allowed {
                        metrics::observe_call(&hook.name, kind, operation, 200, false, elapsed);
                        continue;
                    }
                    let e = denial(&hook.name, r.result.as_ref());
                    metrics::observe_call(&hook.name, kind, operation, e.code, true, elapsed);
                    metrics::observe_rejection(&hook.name, kind, operation, "no_error", e.code);
                    e
                }
                Err(CallFailure::Calling(reason, code)) => {
                    metrics::observe_call(&hook.name, kind, operation, code, hook.fail, elapsed);
                    let message = format!("failed calling webhook {:?}: {reason}", hook.name);
                    if !hook.fail {
                        tracing::warn!(webhook = %hook.name, error = %message, "failed calling webhook, failing open");
                        metrics::observe_fail_open(&hook.name, kind);
                        a.annotate(
                            &format!("{VALIDATING_FAILED_OPEN}round_0_index_{i}"),
                            hook.name.clone(),
                        );
                        continue;
                    }
                    metrics::observe_rejection(
                        &hook.name,
                        kind,
                        operation,
                        "calling_webhook_error",
                        code,
                    );
                    ApiError::internal(message)
                }
                Err(CallFailure::Status(e)) => {
                    metrics::observe_call(&hook.name, kind, operation, 0, true, elapsed);
                    metrics::observe_rejection(
                        &hook.name,
                        kind,
                        operation,
                        "apiserver_internal_error",
                        0,
                    );
                    e
                }
            };
            first.get_or_insert(refusal);
        }
        first.map_or(Ok(()), Err)
    }
}

impl MutatingAdmissionWebhook {
    async fn mutate(&self, a: &Attributes<'_>, object: Option<&mut Value>) -> ApiResult<()> {
        if !applies(a, &self.source, object.as_deref()).await? {
            return Ok(());
        }
        let set = self.source.current();
        if set.mutating_webhooks.is_empty() {
            return Ok(());
        }
        let hooks = webhooks(set.mutating_webhooks.values().map(|(_, c)| c));
        let mut current = object.as_deref().cloned();
        let mut facts = RequestFacts::of(a, current.as_ref()).await;
        let request = Request::new(a, &facts.name, &self.authorizer);
        // kube's dispatcher with its reinvocation context: in the second run (round 1) only
        // the webhooks the record names; a change sends the `IfNeeded` webhooks called before
        // it there.
        let (mut record, round) = {
            let mut r = a.reinvocation.lock().unwrap();
            (r.take(MUTATING), usize::from(r.is_reinvoke()))
        };
        if round == 1 {
            record.begin_reinvoke(current.as_ref());
        }
        let mut changed_any = false;
        for (i, hook) in hooks.iter().enumerate() {
            let key = format!("{}/{}", hook.configuration, hook.name);
            if round == 1 && !record.should_reinvoke(&key) {
                continue;
            }
            if !request.should_call(hook, &facts, current.as_ref())? {
                continue;
            }
            if self.call(&request, hook, round, i, &mut current).await? {
                record.require_reinvoking_previously_invoked();
                changed_any = true;
                facts = RequestFacts::of(a, current.as_ref()).await;
            }
            if hook.reinvoke {
                record.add_invoked(key);
            }
        }
        record.end(current.as_ref());
        {
            let mut r = a.reinvocation.lock().unwrap();
            r.put(MUTATING, record);
            if changed_any {
                r.set_should_reinvoke();
            }
        }
        if let (Some(obj), Some(m)) = (object, current) {
            *obj = m;
        }
        Ok(())
    }

    /// Call `hook` (index `i`, in `round`) and apply its patch to `current`: whether it
    /// changed the object.
    async fn call(
        &self,
        request: &Request<'_>,
        hook: &CompiledWebhook,
        round: usize,
        i: usize,
        current: &mut Option<Value>,
    ) -> ApiResult<bool> {
        let (a, kind, operation) = (request.a, "admit", request.a.operation.as_str());
        let start = Instant::now();
        let null = Value::Null;
        // The patch is read once the answer allows; one that cannot be read is a failed call.
        let answer = request
            .call(hook, current.as_ref().unwrap_or(&null), true)
            .await
            .and_then(|r| {
                let ops = match r.allowed {
                    true => decode_patch(&r).map_err(|e| CallFailure::Calling(e, 503))?,
                    false => None,
                };
                Ok((r, ops))
            });
        let elapsed = start.elapsed();
        let mut changed = false;
        let outcome = match answer {
            Ok((r, ops)) => {
                request.record(hook, &r);
                if !r.allowed {
                    let e = denial(&hook.name, r.result.as_ref());
                    metrics::observe_call(&hook.name, kind, operation, e.code, true, elapsed);
                    metrics::observe_rejection(&hook.name, kind, operation, "no_error", e.code);
                    Err(e)
                } else {
                    let applied = match (ops, current.as_mut()) {
                        (None, _) => Ok(false),
                        (Some(_), None) => Err(ApiError::internal(format!(
                            "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                            hook.name
                        ))),
                        (Some(ops), Some(obj)) => apply(obj, &ops),
                    };
                    match applied {
                        Ok(c) => {
                            changed = c;
                            metrics::observe_call(&hook.name, kind, operation, 200, false, elapsed);
                            Ok(())
                        }
                        Err(e) => {
                            metrics::observe_call(&hook.name, kind, operation, 0, true, elapsed);
                            metrics::observe_rejection(
                                &hook.name,
                                kind,
                                operation,
                                "apiserver_internal_error",
                                0,
                            );
                            Err(e)
                        }
                    }
                }
            }
            Err(CallFailure::Calling(reason, code)) => {
                metrics::observe_call(&hook.name, kind, operation, code, hook.fail, elapsed);
                let message = format!("failed calling webhook {:?}: {reason}", hook.name);
                if hook.fail {
                    metrics::observe_rejection(
                        &hook.name,
                        kind,
                        operation,
                        "calling_webhook_error",
                        code,
                    );
                    Err(ApiError::internal(message))
                } else {
                    tracing::warn!(webhook = %hook.name, error = %message, "failed calling webhook, failing open");
                    metrics::observe_fail_open(&hook.name, kind);
                    a.annotate(
                        &format!("{MUTATING_FAILED_OPEN}round_{round}_index_{i}"),
                        hook.name.clone(),
                    );
                    Ok(())
                }
            }
            Err(CallFailure::Status(e)) => {
                metrics::observe_call(&hook.name, kind, operation, 0, true, elapsed);
                metrics::observe_rejection(
                    &hook.name,
                    kind,
                    operation,
                    "apiserver_internal_error",
                    0,
                );
                Err(e)
            }
        };
        let note =
            json!({"configuration": hook.configuration, "webhook": hook.name, "mutated": changed});
        a.annotate(
            &format!("{MUTATION}round_{round}_index_{i}"),
            note.to_string(),
        );
        outcome.map(|()| changed)
    }
}

/// The JSON Patch of an allowing answer (`None`: none, or no operation). Errors, as kube's
/// mutating dispatcher words them: `unsupported patch type "…"`, `received undecodable patch
/// in webhook response: …`.
fn decode_patch(r: &AdmissionResponse) -> Result<Option<json_patch::Patch>, String> {
    let Some((bytes, patch_type)) = &r.patch else {
        return Ok(None);
    };
    if patch_type != "JSONPatch" {
        return Err(format!("unsupported patch type {patch_type:?}"));
    }
    let ops: json_patch::Patch = serde_json::from_slice(bytes)
        .map_err(|e| format!("received undecodable patch in webhook response: {e}"))?;
    Ok((!ops.0.is_empty()).then_some(ops))
}

/// Apply a webhook's JSON Patch `ops` to `obj`: whether it changed. Errors (500, kube's
/// `NewInternalError`): a patch that does not apply or is too large; one that changes the
/// object's apiVersion, kind, name or namespace (kube decodes the patched object into its
/// type and the registry refuses such a change later; refused here at once).
fn apply(obj: &mut Value, ops: &json_patch::Patch) -> ApiResult<bool> {
    let patched = crate::limits::apply_json_patch(obj, &ops.0)
        .map_err(|e| ApiError::internal(e.message))
        .and_then(|p| within_size(p).map_err(ApiError::internal))
        .and_then(|p| keeps_identity(obj, p).map_err(ApiError::internal))?;
    let changed = patched != *obj;
    *obj = patched;
    Ok(changed)
}

impl Admission for ValidatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionWebhook"
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

impl Admission for MutatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        MUTATING
    }

    fn handles(&self, _: Operation) -> bool {
        true
    }

    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(self.mutate(attributes, object))
    }
}

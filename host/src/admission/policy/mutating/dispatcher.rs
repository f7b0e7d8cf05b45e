//! The `MutatingAdmissionPolicy` admission member: kube's mutating policy plugin
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/mutating/{plugin,dispatcher}.go`) in the
//! mutating stage, before the strategy and the validating policies. For each policy (by name)
//! whose `matchConstraints` match, each of its bindings whose `matchResources` match, each of
//! the binding's params: its `matchConditions` (all true, else the policy does not apply), its
//! `variables`, then its mutations in order, each seeing the object as the previous one left
//! it — an `ApplyConfiguration` merged by the resource's schema, a `JSONPatch` applied
//! ([`super::patch`]). An error (a compile error, a run-time error, a type mismatch, a patch
//! that does not apply) is decided by the policy's `failurePolicy`: `Fail` refuses the request
//! with kube's `policy '<p>' with binding '<b>' denied request: <error>` (code 403, reason
//! `Invalid`), `Ignore` skips that mutation.
//!
//! `reinvocationPolicy: IfNeeded` (kube's `policyReinvokeContext`,
//! [`crate::admission::reinvocation`]): when a mutation changed the object, the member asks
//! for the mutating stage's second run, in which the invoked policies that asked for it run
//! once more, in order — also when only another member (a webhook, a wasm policy) changed the
//! object after this member's first run.
//!
//! Each mutation is counted in kube's `apiserver_mutating_admission_policy_check_total` and
//! timed in `…_check_duration_seconds` (`super::super::metrics`), its error or not, whatever
//! the failure policy then decides.
//!
//! Admission configuration resources are exempt, as for the validating member.

use super::super::authorizer::RequestAuthorizer;
use super::super::dispatcher::{
    base_request, bind, conditions_hold, eval, evaluate_variables, matched_request,
    without_managed_fields, Inputs,
};
use super::super::invocations::{invocations, Invocation};
use super::super::matching::{storage_version, RequestFacts};
use super::super::metrics;
use super::super::params::Params;
use super::super::source::PolicySource;
use super::compiled::{CompiledMutatingPolicy, PatchType};
use super::patch::{apply_configuration, json_patch};
use crate::admission::exempt::is_exempt;
use crate::admission::interface::{wait_ready, Admission, AdmissionFuture, Attributes, Operation};
use crate::fieldmanager::field_manager::FieldManager;
use crate::status::ApiError;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_cel::mutation::{object_json, OBJECT};

/// The admission member; applies what `source` holds.
pub struct MutatingAdmissionPolicy {
    pub source: Arc<PolicySource>,
    /// What `authorizer` asks.
    pub authorizer: crate::authorization::Authorizer,
}

/// One binding (with one of its params) of a matched policy: kube's `PolicyInvocation`.
struct Call<'a> {
    policy: &'a CompiledMutatingPolicy,
    binding: &'a str,
    params: Value,
}

impl Call<'_> {
    /// The call's name in the reinvocation record (kube's `key`: policy, binding, param).
    fn key(&self) -> String {
        let p = accessor(&self.params);
        format!(
            "{}/{}/{}/{}",
            self.policy.name,
            self.binding,
            p.namespace(),
            p.name()
        )
    }
}

/// The member's name (`--enable-admission-plugins`, the reinvocation record's key).
const NAME: &str = "MutatingAdmissionPolicy";

/// Why a request is refused: the first error of a `failurePolicy: Fail` policy.
type Refusal = String;

/// What the mutations of one call did.
struct Applied {
    /// The object is not what it was.
    changed: bool,
    /// A mutation applied (kube's `UpdateObject`, which marks the attributes dirty whether
    /// or not the object changed).
    applied: bool,
}

/// Run the mutations of `call` on `object`: `Ok(None)` when its match conditions exclude
/// it, or when it is `skip`ped (in the second run, a call not to be run again: its match
/// conditions are still evaluated, as kube's dispatcher does before asking), else what it
/// did.
fn run(
    call: &Call<'_>,
    object: &mut Value,
    others: &OtherInputs,
    schema: &FieldManager,
    skip: bool,
) -> Result<Option<Applied>, Refusal> {
    let policy = call.policy;
    let refuse = |e: String| -> Result<Option<Applied>, Refusal> {
        if policy.ignore_failures {
            Ok(None)
        } else {
            Err(format!(
                "policy '{}' with binding '{}' denied request: {e}",
                policy.name, call.binding
            ))
        }
    };
    let observe = |error: Option<&str>, elapsed: Duration| {
        let error_type = metrics::error_type(error, policy.error.is_some());
        metrics::observe_mutation(&policy.name, call.binding, error_type, elapsed);
    };
    if let Some(e) = &policy.error {
        let e = format!("failed to configure policy: {e}");
        observe(Some(&e), Duration::ZERO);
        return refuse(e);
    }
    let conditions = {
        let seen = without_managed_fields(Some(&*object));
        let inputs = others.inputs(&seen, &call.params);
        conditions_hold(&policy.match_conditions, &inputs)
    };
    match conditions {
        Ok(false) => return Ok(None),
        Ok(true) if skip => return Ok(None),
        Ok(true) => {}
        Err(e) => return refuse(e),
    }
    let (mut changed, mut applied) = (false, false);
    for m in &policy.mutations {
        let start = Instant::now();
        // Each mutation sees the object as the previous one left it, and the variables
        // evaluated on it (kube binds them lazily per evaluation).
        let evaluated = {
            let seen = without_managed_fields(Some(&*object));
            let inputs = others.inputs(&seen, &call.params);
            let variables = Value::Object(evaluate_variables(&policy.variables, &inputs));
            eval(
                &m.expression,
                &m.source,
                &bind(&inputs, &variables),
                &inputs,
            )
        };
        let value = match evaluated {
            Ok(v) => v,
            Err(e) => {
                observe(Some(&e), start.elapsed());
                refuse(e)?;
                continue;
            }
        };
        let patched = match m.patch_type {
            PatchType::ApplyConfiguration => object_json(&value, OBJECT)
                .map_err(|e| format!("type mismatch: {e}"))
                .and_then(|patch| apply_configuration(schema.schema(), object, patch)),
            PatchType::JsonPatch => wasm_apiserver_cel::mutation::json_patch(&value)
                .and_then(|patch| json_patch(object, patch)),
        };
        match patched.and_then(|p| keeps_identity(object, p)) {
            Ok(p) => {
                observe(None, start.elapsed());
                applied = true;
                if p != *object {
                    changed = true;
                    *object = p;
                }
            }
            Err(e) => {
                observe(Some(&e), start.elapsed());
                refuse(e)?;
            }
        }
    }
    Ok(Some(Applied { changed, applied }))
}

/// A mutated object must keep its apiVersion, kind, name and namespace (kube converts it back
/// to the request's kind and the store refuses a renamed object; here it is refused at once).
pub(crate) fn keeps_identity(old: &Value, new: Value) -> Result<Value, String> {
    let id = |o: &Value| {
        (
            o.get("apiVersion").cloned(),
            o.get("kind").cloned(),
            accessor(o).name().to_string(),
            accessor(o).namespace().to_string(),
        )
    };
    if id(old) == id(&new) {
        Ok(new)
    } else {
        Err("the mutation changes apiVersion, kind, name or namespace".into())
    }
}

/// What every call of a request sees besides the object and params.
struct OtherInputs {
    old_object: Value,
    namespace_object: Value,
    request: Value,
    authorizer: Arc<RequestAuthorizer>,
}

impl OtherInputs {
    /// The variables of one evaluation, on `object` with `params`.
    fn inputs<'a>(&'a self, object: &'a Value, params: &'a Value) -> Inputs<'a> {
        Inputs {
            object,
            old_object: &self.old_object,
            request: &self.request,
            namespace_object: &self.namespace_object,
            params,
            authorizer: Some(self.authorizer.clone()),
        }
    }
}

/// Every call of `matched`, in order: each binding of each policy, once per param object.
fn calls(matched: &[(Invocation<CompiledMutatingPolicy>, Value)]) -> Vec<(Call<'_>, &Value)> {
    let mut out = Vec::new();
    for (m, request) in matched {
        for (binding, params) in &m.bindings {
            let params: Vec<Value> = match params {
                Params::Unset => vec![Value::Null],
                Params::Objects(objects) => objects.iter().map(|p| (**p).clone()).collect(),
            };
            for p in params {
                out.push((
                    Call {
                        policy: &m.policy,
                        binding: &binding.name,
                        params: p,
                    },
                    request,
                ));
            }
        }
    }
    out
}

impl MutatingAdmissionPolicy {
    async fn mutate(&self, a: &Attributes<'_>, object: &mut Value) -> Result<(), ApiError> {
        let d = &a.store.description;
        if is_exempt(&d.group, &d.plural) {
            return Ok(());
        }
        if !self.source.synced() {
            let name = accessor(object).name().to_string();
            wait_ready(a, &name, || self.source.synced()).await?;
        }
        let set = self.source.current();
        if set.mutating_is_empty() {
            return Ok(());
        }
        let facts = RequestFacts::of(a, Some(object)).await;
        let request = facts.request(a);
        let matched = invocations(
            set.mutating_policies.values().map(|(_, p)| p),
            |name| set.mutating_bindings_of(name),
            a,
            &request,
            storage_version(a),
            &facts.namespace_error,
        )
        .await;
        if matched.is_empty() {
            return Ok(());
        }
        let name = facts.name.clone();
        // Configuration errors: refused per failurePolicy before any mutation runs.
        for m in &matched {
            if m.policy.ignore_failures {
                continue;
            }
            if let Some((binding, e)) = m.config_errors.first() {
                let message = match binding {
                    Some(b) => format!(
                        "policy '{}' with binding '{b}' denied request: {e}",
                        m.policy.name
                    ),
                    None => format!("policy \"{}\" denied request: {e}", m.policy.name),
                };
                // kube's `addConfigError` gives no reason: the 403 keeps `Forbidden`.
                return Err(refused(a, &name, message, "Forbidden"));
            }
        }
        let base = base_request(a, &name);
        let matched: Vec<(Invocation<CompiledMutatingPolicy>, Value)> = matched
            .into_iter()
            .map(|m| {
                let r = matched_request(&base, &d.group, &m.version, &d.kind, &d.plural);
                (m, r)
            })
            .collect();
        let old_object = without_managed_fields(a.old_object).into_owned();
        let namespace_object =
            without_managed_fields(facts.namespace_object.as_deref()).into_owned();
        let field_manager = a.store.storage_field_manager.clone();
        let mut current = object.clone();
        let authorizer = RequestAuthorizer::for_request(self.authorizer.clone(), a, &name);
        let (mut record, is_reinvoke) = {
            let mut r = a.reinvocation.lock().unwrap();
            (r.take(NAME), r.is_reinvoke())
        };
        if is_reinvoke {
            record.begin_reinvoke(Some(&current));
        }
        // CEL runs off the async workers: its cost is bounded per expression, the objects'
        // size by the request body limit.
        let decided = tokio::task::spawn_blocking(move || {
            let mut others = OtherInputs {
                old_object,
                namespace_object,
                request: Value::Null,
                authorizer,
            };
            // kube's dispatcher: in the second run only the calls the record names; a change
            // sends the `IfNeeded` calls invoked before it to the second run, and at the end,
            // when any mutation applied (kube's dirty attributes, set by every applied patch
            // whether or not it changed the object), those invoked since too.
            let mut dirty = false;
            for (call, request) in calls(&matched) {
                let key = call.key();
                let skip = is_reinvoke && !record.should_reinvoke(&key);
                others.request = request.clone();
                // Only a policy that was invoked (its match conditions held) is reinvoked.
                let Some(done) = run(&call, &mut current, &others, &field_manager, skip)? else {
                    continue;
                };
                if done.changed {
                    record.require_reinvoking_previously_invoked();
                }
                dirty |= done.applied;
                if call.policy.reinvoke_if_needed {
                    record.add_invoked(key);
                }
            }
            if dirty {
                record.require_reinvoking_previously_invoked();
            }
            record.end(Some(&current));
            Ok::<_, Refusal>((current, record, dirty))
        })
        .await
        .map_err(|e| ApiError::internal(format!("admission policy evaluation panicked: {e}")))?;
        match decided {
            Ok((mutated, record, dirty)) => {
                *object = mutated;
                let mut r = a.reinvocation.lock().unwrap();
                r.put(NAME, record);
                if dirty {
                    r.set_should_reinvoke();
                }
                Ok(())
            }
            Err(message) => Err(refused(a, &name, message, "Invalid")),
        }
    }
}

/// kube's refusal (`generic/policy_dispatcher.go`): `admission.NewForbidden` with the policy
/// error's message and `reason` (`Invalid` for a mutation's error, `Forbidden` for a
/// configuration error).
fn refused(a: &Attributes<'_>, name: &str, message: String, reason: &'static str) -> ApiError {
    let mut e = ApiError::forbidden(&a.store.gr, name, &message);
    e.message = message.clone();
    e.reason = reason;
    if let Some(details) = e.details.as_mut() {
        details["causes"] = json!([{"message": message}]);
    }
    e
}

impl Admission for MutatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        NAME
    }

    fn handles(&self, operation: Operation) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
    }

    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move {
            match object {
                Some(o) => self.mutate(attributes, o).await,
                None => Ok(()),
            }
        })
    }
}

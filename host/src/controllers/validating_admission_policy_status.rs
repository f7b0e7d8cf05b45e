//! The ValidatingAdmissionPolicy status controller
//! (`pkg/controller/validatingadmissionpolicystatus/controller.go`): a policy whose
//! `metadata.generation` is past its `status.observedGeneration` is type-checked against the
//! kinds it matches ([`crate::admission::policy::type_checking`]) and gets
//! `status: {observedGeneration, typeChecking: {expressionWarnings}}` through its status
//! subresource (`typeChecking: {}` when every expression checks; `conditions` are left as they
//! are). As kube's, it looks again only when the policy changes, not when a schema does.
//!
//! Driven by a watch of the policies from the watch cache, like the namespace controller.

use crate::admission::policy::type_checking;
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{ListOptions, Served, Store};
use crate::status::ApiResult;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The controller's name (`--controllers`, kube-controller-manager's).
pub const NAME: &str = "validatingadmissionpolicy-status-controller";

const GROUP: &str = "admissionregistration.k8s.io";
const RESOURCE: &str = "validatingadmissionpolicies";

/// Start the controller; abort the returned task to stop it.
pub fn start(served: Arc<Served>) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        loop {
            let snapshot = served.load();
            let Some(policies) = snapshot.resources.get(GROUP, "v1", RESOURCE) else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let list = match policies.list("", &ListOptions::default()).await {
                Ok(list) => list,
                Err(e) => {
                    tracing::warn!(error = %e, "{NAME}: cannot list policies");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            for policy in policies.decode_items(&list).unwrap_or_default() {
                let generation = policy["metadata"]["generation"].as_i64().unwrap_or(0);
                if generation <= policy["status"]["observedGeneration"].as_i64().unwrap_or(0) {
                    continue;
                }
                // Up to 10 kinds × every expression compiled: off the async workers.
                let (p, s) = (policy.clone(), snapshot.clone());
                let warnings =
                    tokio::task::spawn_blocking(move || type_checking::check(&p, &s.resources))
                        .await
                        .unwrap_or_default();
                if let Err(e) = write_status(&policies, &policy, generation, warnings).await {
                    // Gone or changed meanwhile: the next round sees it as it is.
                    if e.code != 404 && e.code != 409 {
                        tracing::warn!(error = %e, "{NAME}: cannot write a policy's status");
                    }
                }
            }
            super::wait_for_change(&policies, &list.resource_version.to_string()).await;
        }
    })
    .abort_handle()
}

/// Write `observedGeneration` and `typeChecking` for `generation`, unless the policy moved on
/// to another spec meanwhile (a later round checks that one).
async fn write_status(
    policies: &Store,
    policy: &Value,
    generation: i64,
    warnings: Vec<Value>,
) -> ApiResult<()> {
    let name = wasm_apiserver_apimachinery::meta::accessor(policy)
        .name()
        .to_string();
    let mut type_checking = json!({});
    if !warnings.is_empty() {
        type_checking["expressionWarnings"] = json!(warnings);
    }
    let patch = Arc::new(move |current: &Value| {
        let mut new = current.clone();
        if current["metadata"]["generation"].as_i64() == Some(generation) {
            new["status"]["observedGeneration"] = json!(generation);
            new["status"]["typeChecking"] = type_checking.clone();
        }
        Ok(new)
    });
    policies
        .update(
            "",
            &name,
            UpdatedObject::Patch(patch),
            &crate::registry::UpdateOptions::host(Subresource::Status),
        )
        .await?;
    Ok(())
}

//! What kube-apiserver's namespace REST storage adds to the generic Store
//! (`pkg/registry/core/namespace/storage/storage.go`): deleting a namespace first only marks it
//! (`deletionTimestamp`, `status.phase: Terminating`) and answers it; it is removed by a later
//! delete once `spec.finalizers` is empty — which the namespace controller brings about after
//! emptying it ([`finalize_namespace`], `FinalizeREST`).

use super::deletion::{DeleteOptions, DeleteResult};
use super::store::Store;
use crate::status::{ApiError, ApiResult};
use futures::FutureExt;
use serde_json::{json, Value};
use wasm_apiserver_storage::{ResponseMeta, UpdateOutcome};

/// The finalizer the namespace controller owns (`api.FinalizerKubernetes`).
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

fn spec_finalizers(ns: &Value) -> Vec<String> {
    ns.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `ns` is being deleted.
pub fn is_terminating(ns: &Value) -> bool {
    wasm_apiserver_apimachinery::meta::accessor(ns).is_terminating()
}

/// Write `f(current)` to namespace `name` directly (a `GuaranteedUpdate` without the strategy,
/// as kube's namespace storage does). Errors: the storage's, 404 when it is gone.
async fn rewrite(
    store: &Store,
    name: &str,
    preconditions: &wasm_apiserver_storage::Preconditions,
    f: impl Fn(&mut Value) + Send + Sync + Clone + 'static,
) -> ApiResult<Value> {
    let key = store.key("", name);
    let mut update = move |mut existing: Value, _: ResponseMeta| {
        let f = f.clone();
        async move {
            f(&mut existing);
            Ok(UpdateOutcome {
                object: existing,
                ttl: None,
            })
        }
        .boxed()
    };
    store
        .storage
        .guaranteed_update(&key, false, preconditions, &mut update, None)
        .await
        .map_err(|e| ApiError::from_storage(&e, &store.gr, name))
}

/// `REST.Delete`: the first delete marks the namespace Terminating and returns it; a delete
/// of a terminating namespace whose `spec.finalizers` is empty removes it (through the generic
/// delete, so metadata finalizers still apply).
pub async fn delete_namespace(
    store: &Store,
    name: &str,
    opts: &DeleteOptions,
) -> ApiResult<DeleteResult> {
    let existing = store.get("", name, "").await?;
    opts.preconditions
        .check(&store.key("", name), &existing)
        .map_err(|e| ApiError::conflict(&store.gr, name, &e.to_string()))?;
    if !is_terminating(&existing) {
        // The generic delete below runs admission itself; marking is this REST's own.
        if let Some(admission) = &opts.admission {
            admission.admit_delete(&existing).await?;
        }
        let mark = |ns: &mut Value| {
            if !is_terminating(ns) {
                ns["metadata"]["deletionTimestamp"] =
                    json!(wasm_apiserver_apimachinery::time::now());
                ns["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            }
            ns["status"]["phase"] = json!("Terminating");
        };
        if opts.dry_run {
            let mut preview = existing;
            mark(&mut preview);
            return Ok(DeleteResult::Pending(preview));
        }
        let marked = rewrite(store, name, &opts.preconditions, mark).await?;
        return Ok(DeleteResult::Pending(marked));
    }
    if !spec_finalizers(&existing).is_empty() {
        return Ok(DeleteResult::Pending(existing));
    }
    store.delete("", name, opts).await
}

/// `FinalizeREST`: remove `token` from the namespace's `spec.finalizers`. Returns the
/// namespace as written.
pub async fn finalize_namespace(store: &Store, name: &str, token: &str) -> ApiResult<Value> {
    let token = token.to_string();
    rewrite(store, name, &Default::default(), move |ns: &mut Value| {
        if let Some(f) = ns
            .pointer_mut("/spec/finalizers")
            .and_then(Value::as_array_mut)
        {
            f.retain(|x| x != &json!(token));
        }
    })
    .await
}

/// Whether `ns` still carries the controller's finalizer.
pub fn has_kubernetes_finalizer(ns: &Value) -> bool {
    spec_finalizers(ns)
        .iter()
        .any(|f| f == FINALIZER_KUBERNETES)
}

//! The namespace controller (`pkg/controller/namespace/deletion/namespaced_resources_deleter.go`
//! `Delete`): for each namespace being deleted that still carries the `kubernetes` finalizer,
//! every namespaced resource served — plugin-served ones included — is emptied in it through
//! the registry (`deletecollection`, so delete hooks, graceful deletion and finalizers apply);
//! progress goes into the namespace's conditions (`NamespaceContentRemaining`,
//! `NamespaceFinalizersRemaining`, `NamespaceDeletionContentFailure`, …, with kube's reasons
//! and messages); once nothing is left the finalizer is removed and the namespace deleted.
//!
//! Driven by a watch of namespaces from the watch cache; while a namespace terminates it is
//! retried every [`RETRY`] (kube requeues with back-off).

use crate::registry::deletion::DeleteOptions;
use crate::registry::namespace_rest::{
    delete_namespace, finalize_namespace, has_kubernetes_finalizer, is_terminating,
    FINALIZER_KUBERNETES,
};
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{ListOptions, Served, Snapshot, Store};
use crate::status::ApiResult;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_apimachinery::conditions::transition_time;

/// How soon a terminating namespace is looked at again.
pub const RETRY: Duration = Duration::from_millis(250);

/// Start the controller; abort the returned task to stop it.
pub fn start(served: Arc<Served>) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        loop {
            let snapshot = served.load();
            let Some(namespaces) = snapshot.resources.get("", "v1", "namespaces") else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let (pending, rv) = match namespaces.list("", &ListOptions::default()).await {
                Ok(list) => {
                    let items = namespaces.decode_items(&list).unwrap_or_default();
                    let pending: Vec<Arc<Value>> =
                        items.into_iter().filter(|n| is_terminating(n)).collect();
                    (pending, list.resource_version)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "namespace controller: cannot list namespaces");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            for ns in &pending {
                // Gone meanwhile (the list may trail the delete): nothing to do.
                if let Err(e) = sync(&snapshot, &namespaces, ns).await.or_else(|e| {
                    if e.code == 404 {
                        Ok(())
                    } else {
                        Err(e)
                    }
                }) {
                    tracing::warn!(namespace = wasm_apiserver_apimachinery::meta::accessor(ns).name(), error = %e, "namespace deletion");
                }
            }
            if !pending.is_empty() {
                tokio::time::sleep(RETRY).await;
                continue;
            }
            // Nothing terminating: wait for a change (or a new snapshot) before looking again.
            super::wait_for_change(&namespaces, &rv.to_string()).await;
        }
    })
    .abort_handle()
}

fn condition(kind: &str, status: bool, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": if status { "True" } else { "False" },
           "reason": reason, "message": message})
}

/// One pass over namespace `ns`.
async fn sync(snapshot: &Snapshot, namespaces: &Store, ns: &Value) -> ApiResult<()> {
    let name = wasm_apiserver_apimachinery::meta::accessor(ns)
        .name()
        .to_string();
    if !has_kubernetes_finalizer(ns) {
        delete_namespace(namespaces, &name, &DeleteOptions::default()).await?;
        return Ok(());
    }
    let mut failures = Vec::new();
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for store in snapshot.resources.iter() {
        if !store.description.namespaced || store.read_only {
            continue;
        }
        if let Err(e) = store
            .delete_collection(&name, &ListOptions::default(), &DeleteOptions::default())
            .await
        {
            failures.push(format!("{}: {}", store.gr, e.message));
        }
        match store.list(&name, &ListOptions::default()).await {
            Ok(list) => {
                let items = store.decode_items(&list).unwrap_or_default();
                if !items.is_empty() {
                    remaining.insert(store.gr.to_string(), items.len());
                }
                for item in items {
                    for f in wasm_apiserver_apimachinery::meta::accessor(&item).finalizers() {
                        *finalizers.entry(f).or_default() += 1;
                    }
                }
            }
            Err(e) => failures.push(format!("{}: {}", store.gr, e.message)),
        }
    }
    let content_remaining = if remaining.is_empty() {
        condition(
            "NamespaceContentRemaining",
            false,
            "ContentRemoved",
            "All content successfully removed",
        )
    } else {
        let parts: Vec<String> = remaining
            .iter()
            .map(|(gr, n)| format!("{gr} has {n} resource instances"))
            .collect();
        condition(
            "NamespaceContentRemaining",
            true,
            "SomeResourcesRemain",
            &format!("Some resources are remaining: {}", parts.join(", ")),
        )
    };
    let finalizers_remaining = if finalizers.is_empty() {
        condition(
            "NamespaceFinalizersRemaining",
            false,
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished",
        )
    } else {
        let parts: Vec<String> = finalizers
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        condition(
            "NamespaceFinalizersRemaining",
            true,
            "SomeFinalizersRemain",
            &format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        )
    };
    let content_failure = if failures.is_empty() {
        condition(
            "NamespaceDeletionContentFailure",
            false,
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        )
    } else {
        condition(
            "NamespaceDeletionContentFailure",
            true,
            "ContentDeletionFailed",
            &format!(
                "Failed to delete all resource types, {} remaining: {}",
                failures.len(),
                failures.join(", ")
            ),
        )
    };
    let conditions = vec![
        condition(
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        condition(
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        content_failure,
        content_remaining,
        finalizers_remaining,
    ];
    set_conditions(namespaces, &name, ns, conditions).await?;
    if remaining.is_empty() && failures.is_empty() {
        finalize_namespace(namespaces, &name, FINALIZER_KUBERNETES).await?;
        delete_namespace(namespaces, &name, &DeleteOptions::default()).await?;
    }
    Ok(())
}

/// Write the conditions when they changed (`updateNamespaceStatusFunc`), through the status
/// subresource, keeping each unchanged condition's `lastTransitionTime`.
async fn set_conditions(
    namespaces: &Store,
    name: &str,
    ns: &Value,
    wanted: Vec<Value>,
) -> ApiResult<()> {
    let current = ns["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let same = |a: &Value, b: &Value| {
        ["type", "status", "reason", "message"]
            .iter()
            .all(|k| a.get(*k) == b.get(*k))
    };
    if current.len() == wanted.len() && current.iter().zip(&wanted).all(|(a, b)| same(a, b)) {
        return Ok(());
    }
    let conditions: Vec<Value> = wanted
        .into_iter()
        .map(|mut c| {
            c["lastTransitionTime"] = transition_time(
                &current,
                c["type"].as_str().unwrap_or(""),
                c["status"].as_str().unwrap_or(""),
            );
            c
        })
        .collect();
    let patch = Arc::new(move |current: &Value| {
        let mut new = current.clone();
        new["status"]["conditions"] = json!(conditions);
        Ok(new)
    });
    namespaces
        .update(
            "",
            name,
            UpdatedObject::Patch(patch),
            &crate::registry::UpdateOptions::host(Subresource::Status),
        )
        .await?;
    Ok(())
}

//! Keeps the RBAC authorizer's [`Policy`] equal to the stored Roles, ClusterRoles,
//! RoleBindings and ClusterRoleBindings, as kube's authorizer reads them from informer caches:
//! one list and one watch per resource through the registry (served by the watch cache), the
//! policy rebuilt after each change — never a storage read per request.
//!
//! When the RBAC resources are first served (at start, or when their plugins are loaded), the
//! bootstrap ClusterRoles and ClusterRoleBindings that are missing are created
//! (`pkg/registry/rbac/rest/storage_rbac.go` `ensureRBACPolicy`; existing objects are left
//! as they are — kube would also add missing rules to `autoupdate` ones). While no RBAC
//! resource is served, the policy is the bootstrap policy alone.

use super::bootstrap_policy;
use super::cluster_role_aggregation::aggregate;
use super::policy::Policy;
use super::rbac_authorizer::RbacAuthorizer;
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{ListOptions, Served, Snapshot, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_storage::WatchEvent;

const GROUP: &str = "rbac.authorization.k8s.io";
/// The four resources, in [`Policy::from_objects`]'s order.
const RESOURCES: [&str; 4] = [
    "clusterroles",
    "roles",
    "clusterrolebindings",
    "rolebindings",
];

/// Start keeping `rbac`'s policy in step with what `served` serves.
pub fn watch_policy(served: Arc<Served>, rbac: Arc<RbacAuthorizer>) {
    tokio::spawn(async move {
        loop {
            let snapshot = served.load();
            let stores: Vec<Option<Arc<Store>>> = RESOURCES
                .iter()
                .map(|r| snapshot.resources.get(GROUP, "v1", r))
                .collect();
            if stores.iter().all(Option::is_none) {
                rbac.set_policy(bootstrap_policy::policy());
                snapshot_changed(&served, &snapshot).await;
                continue;
            }
            ensure_bootstrap_policy(&stores).await;
            if let Err(e) = follow(&served, &snapshot, &stores, &rbac).await {
                tracing::warn!(error = %e, "RBAC policy watch failed; re-listing");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    });
}

/// Wait until a new snapshot is published.
async fn snapshot_changed(served: &Served, snapshot: &Arc<Snapshot>) {
    while Arc::ptr_eq(&served.load(), snapshot) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Create the bootstrap ClusterRoles and ClusterRoleBindings that do not exist.
async fn ensure_bootstrap_policy(stores: &[Option<Arc<Store>>]) {
    let pairs = [
        (&stores[0], bootstrap_policy::cluster_roles()),
        (&stores[2], bootstrap_policy::cluster_role_bindings()),
    ];
    for (store, objects) in pairs {
        let Some(store) = store else { continue };
        for obj in objects {
            match store
                .create("", obj, &crate::registry::CreateOptions::host())
                .await
            {
                Ok(created) => tracing::info!(
                    resource = %store.gr,
                    name = wasm_apiserver_apimachinery::meta::accessor(&created.object).name(),
                    "created bootstrap RBAC policy"
                ),
                Err(e) if e.code == 409 => {}
                Err(e) => {
                    tracing::warn!(resource = %store.gr, error = %e, "cannot create bootstrap RBAC policy")
                }
            }
        }
    }
}

type Objects = BTreeMap<(String, String), Arc<Value>>;

/// Write the aggregated ClusterRoles whose stored rules differ from what their selectors
/// gather (the aggregation controller's `syncClusterRole`); their watch events bring the new
/// rules into the policy.
fn write_aggregated(store: &Option<Arc<Store>>, cluster_roles: &Objects) {
    let Some(store) = store.clone() else { return };
    let changed = aggregate(cluster_roles.values());
    if changed.is_empty() {
        return;
    }
    tokio::spawn(async move {
        for (name, rules) in changed {
            let patch = Arc::new(move |current: &Value| {
                let mut new = current.clone();
                new["rules"] = rules.clone();
                Ok(new)
            });
            if let Err(e) = store
                .update(
                    "",
                    &name,
                    UpdatedObject::Patch(patch),
                    &crate::registry::UpdateOptions::host(Subresource::Main),
                )
                .await
            {
                tracing::warn!(name, error = %e, "cannot write the aggregated rules of a ClusterRole");
            }
        }
    });
}

fn key(obj: &Value) -> (String, String) {
    let m = wasm_apiserver_apimachinery::meta::accessor(obj);
    (m.namespace().to_string(), m.name().to_string())
}

fn build(objects: &[Objects]) -> Policy {
    let values = |i: usize| objects[i].values().map(|v| v.as_ref());
    Policy::from_objects(values(0), values(1), values(2), values(3))
}

/// List, then apply watch events until the snapshot changes (`Ok`) or a watch fails.
async fn follow(
    served: &Served,
    snapshot: &Arc<Snapshot>,
    stores: &[Option<Arc<Store>>],
    rbac: &RbacAuthorizer,
) -> Result<(), String> {
    let mut objects: Vec<Objects> = vec![Objects::new(); RESOURCES.len()];
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(usize, WatchEvent)>(256);
    let mut forwarders = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let Some(store) = store else { continue };
        let list = store
            .list("", &ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        for item in store.decode_items(&list).map_err(|e| e.to_string())? {
            objects[i].insert(key(&item), item);
        }
        let opts = ListOptions {
            resource_version: list.resource_version.to_string(),
            ..Default::default()
        };
        let mut events = store.watch("", &opts).await.map_err(|e| e.to_string())?;
        let tx = tx.clone();
        forwarders.push(tokio::spawn(async move {
            while let Some(ev) = events.recv().await {
                if tx.send((i, ev)).await.is_err() {
                    return;
                }
            }
        }));
    }
    drop(tx);
    rbac.set_policy(build(&objects));
    write_aggregated(&stores[0], &objects[0]);
    // One ticker for the snapshot check, so a steady stream of events cannot starve it.
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let result = loop {
        tokio::select! {
            ev = rx.recv() => {
                let Some(first) = ev else { break Err("watch closed".to_string()) };
                let mut batch = vec![first];
                while let Ok(more) = rx.try_recv() {
                    batch.push(more);
                }
                let mut failed = None;
                for (i, ev) in batch {
                    match ev {
                        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                            if let Ok(v) = o.to_arc() {
                                objects[i].insert(key(&v), v);
                            }
                        }
                        WatchEvent::Deleted(o) => match o.to_arc() {
                            Ok(v) => {
                                objects[i].remove(&key(&v));
                            }
                            // A revoked grant must not linger: re-list.
                            Err(e) => failed = Some(e.to_string()),
                        },
                        WatchEvent::Bookmark(_) => {}
                        WatchEvent::Error(e) => failed = Some(e.to_string()),
                    }
                }
                rbac.set_policy(build(&objects));
                write_aggregated(&stores[0], &objects[0]);
                if let Some(e) = failed {
                    break Err(e);
                }
            }
            _ = tick.tick() => {
                if !Arc::ptr_eq(&served.load(), snapshot) {
                    break Ok(());
                }
            }
        }
    };
    for f in forwarders {
        f.abort();
    }
    result
}

//! The garbage collector's writes (`pkg/controller/garbagecollector/operations.go`): deletes
//! through the registry and its admission chain as kube's `generic-garbage-collector`
//! service account, and metadata updates (owner references, finalizers) as the host.

use super::garbagecollector::{GarbageCollector, GARBAGE_COLLECTOR_USER};
use super::graph::{owner_refs, Node};
use crate::admission::AdmissionRequest;
use crate::authentication::UserInfo;
use crate::registry::deletion::DeleteOptions;
use crate::registry::propagation::PropagationPolicy;
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::Store;
use crate::status::{ApiError, ApiResult};
use serde_json::Value;
use std::sync::Arc;
use wasm_apiserver_apimachinery::meta::accessor;

impl GarbageCollector {
    /// `deleteObject`: preconditioned on the uid and the resourceVersion the decision was made
    /// on; on a conflict, deleted anyway if the owner references are still the same, left
    /// for a new decision otherwise. Namespaces go through their own deletion (Terminating,
    /// the immortal ones refused).
    pub(super) async fn delete(
        &self,
        store: &Arc<Store>,
        node: &Node,
        obj: &Value,
        policy: PropagationPolicy,
    ) -> ApiResult<()> {
        let uid = accessor(obj).uid().to_string();
        let mut opts = DeleteOptions {
            preconditions: wasm_apiserver_storage::Preconditions {
                uid: Some(uid.clone()),
                resource_version: Some(accessor(obj).resource_version().to_string()),
            },
            propagation_policy: Some(policy),
            admission: self.admission.bind(AdmissionRequest {
                store: store.clone(),
                snapshot: self.served.load(),
                namespace: node.namespace.clone(),
                name: node.name.clone(),
                subresource: String::new(),
                audit: None,
                user: UserInfo {
                    name: GARBAGE_COLLECTOR_USER.into(),
                    groups: vec![
                        "system:serviceaccounts".into(),
                        "system:serviceaccounts:kube-system".into(),
                        crate::authentication::user::ALL_AUTHENTICATED.into(),
                    ],
                    ..Default::default()
                },
                dry_run: false,
            }),
            ..Default::default()
        };
        for attempt in 0..2 {
            let result =
                crate::registry::rest::delete(store, &node.namespace, &node.name, &opts).await;
            match result {
                Ok(_) => return Ok(()),
                // Gone, or a namespace that may not be deleted.
                Err(e) if e.code == 404 || e.code == 403 => return Ok(()),
                Err(e) if e.code == 409 && attempt == 0 => {
                    match store.get(&node.namespace, &node.name, "").await {
                        Ok(live) if accessor(&live).uid() != uid => return Ok(()),
                        Ok(live) if owner_refs(&live) == owner_refs(obj) => {
                            opts.preconditions.resource_version = None;
                        }
                        // Its owners changed: the new state is looked at afresh.
                        Ok(_) => return Err(e),
                        Err(g) if g.code == 404 => return Ok(()),
                        Err(g) => return Err(g),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Update `metadata` of the object `uid` through the registry (a patch of the current
    /// object; gone or replaced: nothing to do).
    pub(super) async fn update_metadata(
        &self,
        store: &Store,
        node: &Node,
        uid: &str,
        edit: impl Fn(&mut serde_json::Map<String, Value>) -> bool + Send + Sync + 'static,
    ) -> ApiResult<()> {
        let expected = uid.to_string();
        let gr = store.gr.clone();
        let name = node.name.clone();
        let patch = Arc::new(move |current: &Value| -> ApiResult<Value> {
            if current.is_null() || accessor(current).uid() != expected {
                return Err(ApiError::not_found(&gr, &name));
            }
            let mut obj = current.clone();
            let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
                return Err(ApiError::not_found(&gr, &name));
            };
            if !edit(m) {
                // Nothing to change: an unchanged object is a no-op update.
                return Ok(current.clone());
            }
            Ok(obj)
        });
        match store
            .update(
                &node.namespace,
                &node.name,
                UpdatedObject::Patch(patch),
                &crate::registry::UpdateOptions::host(Subresource::Main),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.code == 404 => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn patch_owner_refs(
        &self,
        store: &Store,
        node: &Node,
        uid: &str,
        edit: impl Fn(&mut Vec<Value>) + Send + Sync + 'static,
    ) -> ApiResult<()> {
        self.update_metadata(store, node, uid, move |m| {
            let Some(refs) = m.get_mut("ownerReferences").and_then(Value::as_array_mut) else {
                return false;
            };
            let before = refs.clone();
            edit(refs);
            if *refs == before {
                return false;
            }
            if refs.is_empty() {
                m.remove("ownerReferences");
            }
            true
        })
        .await
    }

    pub(super) async fn remove_finalizer(
        &self,
        uid: &str,
        finalizer: &'static str,
    ) -> ApiResult<()> {
        let Some(node) = self.graph().nodes.get(uid).cloned() else {
            return Ok(());
        };
        let Some(store) = self.store(&node.resource) else {
            return Ok(());
        };
        self.update_metadata(&store, &node, uid, move |m| {
            let Some(f) = m.get_mut("finalizers").and_then(Value::as_array_mut) else {
                return false;
            };
            let before = f.len();
            f.retain(|x| x.as_str() != Some(finalizer));
            if f.len() == before {
                return false;
            }
            if f.is_empty() {
                m.remove("finalizers");
            }
            true
        })
        .await
    }
}

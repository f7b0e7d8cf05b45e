//! The Store's delete path (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`
//! `Delete`, `DeleteCollection`, with `rest.BeforeDelete` and
//! `updateForGracefulDeletionAndFinalizers`): preconditions, admission on the object being
//! deleted, the strategy's delete checks and grace period, the garbage-collection finalizers
//! a propagation policy asks for, then either a pending deletion (`deletionTimestamp`) or the
//! storage delete. The rest of the Store is in `store.rs`.

use super::propagation::{deletion_finalizers, PropagationPolicy};
use super::store::{blocking, Store};
use super::write_admission::WriteAdmission;
use super::ListOptions;
use crate::status::{ApiError, ApiResult};
use crate::strategy::StrategyError;
use futures::FutureExt;
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_apiserver_apimachinery::meta::{accessor, accessor_mut};
use wasm_apiserver_storage::{Preconditions, ResponseMeta, StorageError, UpdateOutcome};

/// The result of a delete.
#[derive(Clone, Debug)]
pub enum DeleteResult {
    /// The object is gone; this was its last state.
    Deleted(Value),
    /// The object remains, terminating (graceful deletion or finalizers); its current state.
    Pending(Value),
}

/// The answer of [`Store::delete_collection`].
#[derive(Clone, Debug)]
pub struct DeletedCollection {
    /// The objects deleted or marked for deletion, each in its last state.
    pub items: Vec<Value>,
    /// The resourceVersion the collection was listed at.
    pub resource_version: u64,
}

/// `metav1.DeleteOptions` as far as the Store uses them.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    /// The request's admission (run on the object being deleted).
    pub admission: Option<Arc<dyn WriteAdmission>>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `preconditions`.
    pub preconditions: Preconditions,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `propagationPolicy` (or `orphanDependents`); `None`: what the object's finalizers say,
    /// else background.
    pub propagation_policy: Option<PropagationPolicy>,
    /// `orphanDependents` as sent (a pending delete answers 202 when it is `false`).
    pub orphan_dependents: Option<bool>,
}

/// How many times [`Store::delete`] starts over when the object changes under it.
pub const DELETE_ATTEMPTS: usize = 5;

impl Store {
    /// `Store.DeleteCollection`: list under `ns` with `list_opts`, then delete each object
    /// with `opts` (an object already gone is skipped). Returns what was deleted (or marked
    /// for deletion) and the list's resourceVersion. Errors: the list's, or the first delete
    /// that fails otherwise than 404.
    pub async fn delete_collection(
        &self,
        ns: &str,
        list_opts: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<DeletedCollection> {
        let list = self.list(ns, list_opts).await?;
        let mut items = Vec::new();
        for item in self.decode_items(&list)? {
            let name = accessor(&item).name();
            let item_ns = accessor(&item).namespace();
            match self.delete(item_ns, name, opts).await {
                Ok(DeleteResult::Deleted(o)) | Ok(DeleteResult::Pending(o)) => items.push(o),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(DeletedCollection {
            items,
            resource_version: list.resource_version,
        })
    }

    /// `Store.Delete`: preconditions, graceful deletion (`CheckGracefulDelete`), finalizers,
    /// then the storage delete (`rest.BeforeDelete`, `updateForGracefulDeletionAndFinalizers`).
    ///
    /// kube computes the deletion's update inside `GuaranteedUpdate` from the current object;
    /// here an update that lost a race with another write starts the delete over (at most
    /// [`DELETE_ATTEMPTS`] times), so a concurrent update is never a 409 to the deleter.
    pub async fn delete(
        &self,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteResult> {
        for _ in 1..DELETE_ATTEMPTS {
            if let Some(result) = self.delete_attempt(ns, name, opts).await? {
                return Ok(result);
            }
        }
        self.delete_attempt(ns, name, opts)
            .await?
            .ok_or_else(|| ApiError::optimistic_lock(&self.gr, name))
    }

    /// One try of [`Store::delete`]; `None` when the object changed under it.
    ///
    /// Admission sees the current object after the preconditions (store.go `Delete`:
    /// `deleteValidation`), before the strategy's delete checks.
    async fn delete_attempt(
        &self,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<Option<DeleteResult>> {
        let key = self.key(ns, name);
        let existing = self
            .in_storage_version(self.get(ns, name, "").await?)
            .await?;
        // BeforeDelete checks the preconditions early: a failure is 409 Conflict.
        opts.preconditions
            .check(&key, &existing)
            .map_err(|e| ApiError::conflict(&self.gr, name, &e.to_string()))?;
        if let Some(admission) = &opts.admission {
            admission.admit_delete(&existing).await?;
        }
        // validate-delete against the stored object.
        let strategy = self.strategy();
        let gk = self.gk.clone();
        let (n, e) = (name.to_string(), existing.clone());
        let requested = opts.grace_period_seconds.map(|g| g.max(0));
        let (errs, grace) = blocking(move || {
            let errs = strategy.validate_delete(&e)?;
            let terminating = accessor(&e).is_terminating();
            let grace = if terminating {
                None
            } else {
                strategy.check_graceful_delete(&e, requested)?
            };
            Ok::<_, StrategyError>((errs, grace))
        })
        .await?
        .map_err(|e| ApiError::from_strategy(e, &gk, &n))?;
        if !errs.is_empty() {
            return Err(ApiError::invalid(&self.gk, name, &errs));
        }
        let terminating = accessor(&existing).is_terminating();
        let stored_grace = accessor(&existing).deletion_grace_period_seconds();
        // The garbage-collection finalizers the policy asks for; not while a graceful
        // deletion is pending (kube: "finalizers cannot be updated via DeleteOptions if a
        // deletion is already pending").
        let graceful_pending = terminating && stored_grace.unwrap_or(0) > 0;
        let current = accessor(&existing).finalizers();
        let mut new_finalizers = if graceful_pending {
            None
        } else {
            deletion_finalizers(&current, opts.propagation_policy)
        };
        if !terminating && !self.finalizers_on_delete.is_empty() {
            let mut f = new_finalizers.clone().unwrap_or_else(|| current.clone());
            for x in &self.finalizers_on_delete {
                if !f.contains(x) {
                    f.push(x.clone());
                }
            }
            if f != current {
                new_finalizers = Some(f);
            }
        }
        let has_finalizers = !new_finalizers.as_ref().unwrap_or(&current).is_empty();
        let graceful = grace.filter(|g| *g > 0);
        if terminating || graceful.is_some() || has_finalizers {
            // Pending: set (or shorten) deletionTimestamp instead of deleting.
            if terminating && !has_finalizers && stored_grace.unwrap_or(0) == 0 {
                // Recovery path: an already-terminating object with no grace left goes now.
                return self.delete_now(&key, name, opts, existing).await.map(Some);
            }
            let new_grace = match (terminating, graceful, stored_grace) {
                (false, g, _) => Some(g.unwrap_or(0)),
                (true, Some(g), Some(s)) if g < s => Some(g),
                (true, _, s) => {
                    let requested_shorter = requested.zip(s).is_some_and(|(r, s)| r < s);
                    if requested_shorter {
                        requested
                    } else if new_finalizers.is_some() {
                        // Only the finalizers change (e.g. Orphan → Foreground).
                        None
                    } else {
                        return Ok(Some(DeleteResult::Pending(existing)));
                    }
                }
            };
            let mut updated = existing.clone();
            {
                let m = accessor_mut(&mut updated).into_map();
                match &new_finalizers {
                    Some(f) if f.is_empty() => {
                        m.remove("finalizers");
                    }
                    Some(f) => {
                        m.insert("finalizers".into(), json!(f));
                    }
                    None => {}
                }
            }
            if let Some(new_grace) = new_grace {
                let m = accessor_mut(&mut updated).into_map();
                m.insert(
                    "deletionTimestamp".into(),
                    json!(wasm_apiserver_apimachinery::time::now_plus(new_grace)),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(new_grace));
                if !terminating {
                    if let Some(g) = m
                        .get("generation")
                        .and_then(Value::as_i64)
                        .filter(|g| *g > 0)
                    {
                        m.insert("generation".into(), json!(g + 1));
                    }
                }
            }
            if opts.dry_run {
                return Ok(Some(DeleteResult::Pending(updated)));
            }
            let pre = Preconditions {
                uid: None,
                resource_version: Some(accessor(&existing).resource_version().to_string()),
            };
            let new_obj = updated.clone();
            let mut write = move |_: Value, _: ResponseMeta| {
                let o = new_obj.clone();
                async move {
                    Ok(UpdateOutcome {
                        object: o,
                        ttl: None,
                    })
                }
                .boxed()
            };
            let stored = match self
                .storage
                .guaranteed_update(&key, false, &pre, &mut write, None)
                .await
            {
                Ok(stored) => stored,
                // Changed since it was read: start over from the current object.
                Err(StorageError::InvalidObj { .. }) => return Ok(None),
                Err(other) => return Err(self.storage_err(other, name)),
            };
            if new_grace.unwrap_or(0) == 0 && !has_finalizers {
                return self.delete_now(&key, name, opts, stored).await.map(Some);
            }
            return Ok(Some(DeleteResult::Pending(stored)));
        }
        self.delete_now(&key, name, opts, existing).await.map(Some)
    }

    async fn delete_now(
        &self,
        key: &str,
        name: &str,
        opts: &DeleteOptions,
        existing: Value,
    ) -> ApiResult<DeleteResult> {
        if opts.dry_run {
            return Ok(DeleteResult::Deleted(existing));
        }
        let pre = opts.preconditions.clone();
        let mut validate = |_: Value| async { Ok(()) }.boxed();
        self.storage
            .delete(key, &pre, &mut validate, Some(existing))
            .await
            .map(DeleteResult::Deleted)
            .map_err(|e| self.storage_err(e, name))
    }
}

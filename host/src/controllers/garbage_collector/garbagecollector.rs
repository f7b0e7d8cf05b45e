//! The garbage collector's work (`pkg/controller/garbagecollector/garbagecollector.go`): a
//! queue of items (one at a time each, as client-go's work queue, retried with back-off),
//! workers that decide on a complete graph only, and the decisions — `attemptToDeleteItem`,
//! `processDeletingDependentsItem`, `orphanDependents`.

use super::graph::{owner_refs, Graph, Node, OwnerRef, ResourceKey};
use crate::registry::propagation::{
    PropagationPolicy, FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS,
};
use crate::registry::{Served, Store};
use crate::status::{ApiError, ApiResult};
use futures::FutureExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Semaphore};
use wasm_apiserver_apimachinery::meta::accessor;

/// Items processed at once (kube's `--concurrent-gc-syncs`, default 20).
pub const WORKERS: usize = 20;

/// How soon a monitor whose watch failed watches again.
pub const RETRY: Duration = Duration::from_millis(500);

/// How often workers look whether the graph is complete before deciding anything.
const SYNC_POLL: Duration = Duration::from_millis(50);

/// The wait before retry `n` (1-based) of a failed item: 5 ms doubling, at most 1000 s.
fn backoff(n: u32) -> Duration {
    let ms = 5u64.saturating_mul(1u64 << (n - 1).min(30));
    Duration::from_millis(ms).min(Duration::from_secs(1000))
}

/// What a worker does with an object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Item {
    /// `attemptToDeleteItem`: delete it if its owners are gone.
    AttemptToDelete(String),
    /// `processDeletingDependentsItem`: a foreground deletion's progress.
    DeleteDependents(String),
    /// `orphanDependents`: free its dependents, then drop the `orphan` finalizer.
    OrphanDependents(String),
}

/// Where an item is: queued, or being processed (and queued again once done when `dirty`),
/// as client-go's work queue never runs one item twice at once.
pub(super) enum ItemState {
    Queued,
    Processing { dirty: bool },
}

/// Who the garbage collector's deletes are made as: kube's controller-manager service
/// account for it.
pub const GARBAGE_COLLECTOR_USER: &str =
    "system:serviceaccount:kube-system:generic-garbage-collector";

/// The garbage collector's shared state.
pub struct GarbageCollector {
    pub(super) served: Arc<Served>,
    /// The admission chain its deletes go through.
    pub(super) admission: crate::admission::Chain,
    pub(super) graph: Mutex<Graph>,
    pub(super) items: Mutex<HashMap<Item, ItemState>>,
    pub(super) queue: mpsc::UnboundedSender<Item>,
    /// Consecutive failures of an item, for its back-off.
    pub(super) failures: Mutex<HashMap<Item, u32>>,
    /// Resources whose monitor has delivered its initial events.
    pub(super) synced: Mutex<HashSet<ResourceKey>>,
}

/// Start the garbage collector (a fresh graph): its monitors and workers, stopped by
/// aborting the returned tasks.
pub fn start(
    served: Arc<Served>,
    admission: crate::admission::Chain,
) -> Vec<tokio::task::AbortHandle> {
    let (gc, rx) = GarbageCollector::new(served, admission);
    vec![
        tokio::spawn(gc.clone().run_monitors()).abort_handle(),
        tokio::spawn(gc.run_workers(rx)).abort_handle(),
    ]
}

impl GarbageCollector {
    /// A collector with an empty graph, and the receiving end of its work queue.
    pub(super) fn new(
        served: Arc<Served>,
        admission: crate::admission::Chain,
    ) -> (Arc<GarbageCollector>, mpsc::UnboundedReceiver<Item>) {
        let (queue, rx) = mpsc::unbounded_channel();
        let gc = Arc::new(GarbageCollector {
            served,
            admission,
            graph: Mutex::new(Graph::default()),
            items: Mutex::new(HashMap::new()),
            queue,
            failures: Mutex::new(HashMap::new()),
            synced: Mutex::new(HashSet::new()),
        });
        (gc, rx)
    }

    pub(super) fn add(&self, item: Item) {
        let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        match items.get_mut(&item) {
            None => {
                items.insert(item.clone(), ItemState::Queued);
                let _ = self.queue.send(item);
            }
            Some(ItemState::Queued) => {}
            Some(ItemState::Processing { dirty }) => *dirty = true,
        }
    }

    pub(super) fn done(&self, item: &Item) {
        let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ItemState::Processing { dirty: true }) = items.get(item) {
            items.insert(item.clone(), ItemState::Queued);
            let _ = self.queue.send(item.clone());
        } else {
            items.remove(item);
        }
    }

    pub(super) fn graph(&self) -> std::sync::MutexGuard<'_, Graph> {
        self.graph.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) async fn run_workers(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Item>) {
        let slots = Arc::new(Semaphore::new(WORKERS));
        // The items in progress belong to this task: aborting it (leadership lost) aborts them.
        let mut tasks = tokio::task::JoinSet::new();
        while let Some(item) = rx.recv().await {
            while tasks.try_join_next().is_some() {}
            // Nothing is decided on a partial graph (kube waits for its monitors' caches):
            // an owner's dependents must all be known before it is orphaned or released.
            while !self.synced() {
                tokio::time::sleep(SYNC_POLL).await;
            }
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return;
            };
            {
                let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
                items.insert(item.clone(), ItemState::Processing { dirty: false });
            }
            let gc = self.clone();
            tasks.spawn(async move {
                let work = async {
                    match &item {
                        Item::AttemptToDelete(uid) => gc.attempt_to_delete(uid).await,
                        Item::DeleteDependents(uid) => gc.delete_dependents(uid).await,
                        Item::OrphanDependents(uid) => gc.orphan_dependents(uid).await,
                    }
                };
                let result = std::panic::AssertUnwindSafe(work)
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| Err(ApiError::internal("garbage collector: panicked")));
                drop(permit);
                match result {
                    Ok(()) => {
                        gc.failures().remove(&item);
                        gc.done(&item);
                    }
                    Err(e) => {
                        // Exponential back-off per item (client-go's default controller rate
                        // limiter: 5 ms doubling up to 1000 s).
                        let delay = {
                            let mut failures = gc.failures();
                            let n = failures.entry(item.clone()).or_insert(0);
                            *n = n.saturating_add(1);
                            backoff(*n)
                        };
                        tracing::debug!(?item, error = %e, ?delay, "garbage collector: will retry");
                        tokio::time::sleep(delay).await;
                        {
                            let mut items = gc.items.lock().unwrap_or_else(|p| p.into_inner());
                            if let Some(ItemState::Processing { dirty }) = items.get_mut(&item) {
                                *dirty = true;
                            }
                        }
                        gc.done(&item);
                    }
                }
            });
        }
    }

    fn failures(&self) -> std::sync::MutexGuard<'_, HashMap<Item, u32>> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether every served resource's monitor has had its initial events.
    fn synced(&self) -> bool {
        let synced = self.synced.lock().unwrap_or_else(|p| p.into_inner());
        self.served
            .load()
            .resources
            .iter()
            .filter(|s| !s.read_only)
            .all(|s| synced.contains(&ResourceKey::of(s)))
    }

    pub(super) fn store(&self, key: &ResourceKey) -> Option<Arc<Store>> {
        self.served
            .load()
            .resources
            .get(&key.group, &key.version, &key.plural)
    }

    /// The served resource of an owner reference's kind (its group; any served version).
    pub(super) fn owner_store(&self, owner: &OwnerRef) -> Option<Arc<Store>> {
        let group = owner
            .api_version
            .rsplit_once('/')
            .map_or("", |(g, _)| g)
            .to_string();
        let snapshot = self.served.load();
        let found = snapshot
            .resources
            .iter()
            .find(|s| s.description.group == group && s.description.kind == owner.kind)
            .cloned();
        found
    }

    /// The object of `uid` as stored now, with its store; `None` when it is gone or replaced.
    pub(super) async fn live(&self, uid: &str) -> ApiResult<Option<(Node, Arc<Store>, Value)>> {
        let Some(node) = self.graph().nodes.get(uid).cloned() else {
            return Ok(None);
        };
        let Some(store) = self.store(&node.resource) else {
            return Ok(None);
        };
        match store.get(&node.namespace, &node.name, "").await {
            Ok(obj) if accessor(&obj).uid() == uid => Ok(Some((node, store, obj))),
            Ok(_) => Ok(None),
            Err(e) if e.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `attemptToDeleteItem`.
    pub(super) async fn attempt_to_delete(&self, uid: &str) -> ApiResult<()> {
        let Some((node, store, obj)) = self.live(uid).await? else {
            return Ok(());
        };
        if accessor(&obj).is_terminating() {
            if accessor(&obj)
                .finalizers()
                .iter()
                .any(|f| f == FINALIZER_DELETE_DEPENDENTS)
            {
                self.add(Item::DeleteDependents(uid.to_string()));
            }
            return Ok(());
        }
        let owners = owner_refs(&obj);
        if owners.is_empty() {
            return Ok(());
        }
        let (mut solid, mut dangling, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
        for owner in &owners {
            match self.classify(&node, owner).await? {
                OwnerState::Solid => solid.push(owner.uid.clone()),
                OwnerState::Dangling => dangling.push(owner.uid.clone()),
                OwnerState::WaitingForDependents => waiting.push(owner.uid.clone()),
            }
        }
        if !solid.is_empty() {
            // A live owner keeps it: the references to owners that are gone, or that wait
            // for their dependents (they would wait for ever), go.
            if dangling.is_empty() && waiting.is_empty() {
                return Ok(());
            }
            let drop: HashSet<String> = dangling.into_iter().chain(waiting).collect();
            return self
                .patch_owner_refs(&store, &node, uid, move |refs| {
                    refs.retain(|r| !drop.contains(r["uid"].as_str().unwrap_or("")))
                })
                .await;
        }
        let dependents = self.graph().dependents_of(uid);
        let policy = if !waiting.is_empty() && !dependents.is_empty() {
            // A dependent that itself waits for its dependents may be in a cycle with this
            // object: make this object's references non-blocking first (kube's cycle
            // breaking, false positives included).
            let cycle = {
                let g = self.graph();
                dependents
                    .iter()
                    .any(|d| g.nodes.get(d).is_some_and(Node::waiting_for_dependents))
            };
            if cycle {
                self.patch_owner_refs(&store, &node, uid, |refs| {
                    for r in refs.iter_mut() {
                        if r.get("blockOwnerDeletion") == Some(&Value::Bool(true)) {
                            r["blockOwnerDeletion"] = Value::Bool(false);
                        }
                    }
                })
                .await?;
            }
            PropagationPolicy::Foreground
        } else {
            let f = accessor(&obj).finalizers();
            if f.iter().any(|x| x == FINALIZER_ORPHAN_DEPENDENTS) {
                PropagationPolicy::Orphan
            } else if f.iter().any(|x| x == FINALIZER_DELETE_DEPENDENTS) {
                PropagationPolicy::Foreground
            } else {
                PropagationPolicy::Background
            }
        };
        self.delete(&store, &node, &obj, policy).await
    }

    /// Whether `owner` of the dependent `node` exists (`isDangling`, and whether it waits for
    /// its dependents). An owner is looked up by its kind's resource, in the dependent's
    /// namespace when namespaced; a graph node stands for it only when its coordinates match.
    pub(super) async fn classify(&self, node: &Node, owner: &OwnerRef) -> ApiResult<OwnerState> {
        let Some(store) = self.owner_store(owner) else {
            // No served resource of that kind: unresolvable, never collected.
            return Ok(OwnerState::Solid);
        };
        let namespaced_owner = store.description.namespaced;
        if namespaced_owner && node.namespace.is_empty() {
            // A cluster-scoped dependent cannot have a namespaced owner: unresolvable.
            return Ok(OwnerState::Solid);
        }
        let ns = if namespaced_owner {
            &node.namespace
        } else {
            ""
        };
        if let Some(known) = self.graph().nodes.get(&owner.uid) {
            let same = known.resource.group == store.description.group
                && known.resource.plural == store.description.plural
                && known.name == owner.name
                && known.namespace == ns;
            if same {
                // In the graph: it exists (the graph trails storage; a stale "exists" only
                // delays, its deletion event brings the dependent back).
                return Ok(if known.waiting_for_dependents() {
                    OwnerState::WaitingForDependents
                } else {
                    OwnerState::Solid
                });
            }
        }
        match store.get(ns, &owner.name, "").await {
            Ok(o) if accessor(&o).uid() != owner.uid => Ok(OwnerState::Dangling),
            Ok(o) => Ok(
                if accessor(&o).is_terminating()
                    && accessor(&o)
                        .finalizers()
                        .iter()
                        .any(|f| f == FINALIZER_DELETE_DEPENDENTS)
                {
                    OwnerState::WaitingForDependents
                } else {
                    OwnerState::Solid
                },
            ),
            Err(e) if e.code == 404 => Ok(OwnerState::Dangling),
            // A name no object can have (the lookup is refused): unresolvable, not retried.
            Err(e) if e.code == 400 || e.code == 422 => Ok(OwnerState::Solid),
            Err(e) => Err(e),
        }
    }

    /// `processDeletingDependentsItem`: the owner `uid` is deleted in the foreground; once no
    /// dependent blocks it, its `foregroundDeletion` finalizer goes; until then its blocking
    /// dependents not yet being deleted are looked at.
    pub(super) async fn delete_dependents(&self, uid: &str) -> ApiResult<()> {
        let blocking = {
            let g = self.graph();
            let Some(owner) = g.nodes.get(uid) else {
                return Ok(());
            };
            if !owner.waiting_for_dependents() {
                return Ok(());
            }
            let mut blocking = Vec::new();
            for dep in g.dependents_of(uid) {
                let Some(d) = g.nodes.get(&dep) else { continue };
                if d.owners
                    .iter()
                    .any(|o| o.uid == uid && o.block_owner_deletion)
                {
                    blocking.push((dep, d.deleting));
                }
            }
            blocking
        };
        if blocking.is_empty() {
            return self
                .remove_finalizer(uid, FINALIZER_DELETE_DEPENDENTS)
                .await;
        }
        for (dep, deleting) in blocking {
            if !deleting {
                self.add(Item::AttemptToDelete(dep));
            }
        }
        Ok(())
    }

    /// `orphanDependents`: every dependent loses its references to `uid`, then the owner its
    /// `orphan` finalizer.
    pub(super) async fn orphan_dependents(&self, uid: &str) -> ApiResult<()> {
        let dependents = self.graph().dependents_of(uid);
        for dep in dependents {
            let Some(node) = self.graph().nodes.get(&dep).cloned() else {
                continue;
            };
            let Some(store) = self.store(&node.resource) else {
                continue;
            };
            let owner = uid.to_string();
            self.patch_owner_refs(&store, &node, &dep, move |refs| {
                refs.retain(|r| r["uid"].as_str() != Some(owner.as_str()))
            })
            .await?;
        }
        self.remove_finalizer(uid, FINALIZER_ORPHAN_DEPENDENTS)
            .await
    }
}

/// What an owner reference points at.
pub(super) enum OwnerState {
    /// The owner exists (or cannot be resolved, so is taken as existing).
    Solid,
    /// No object of that name and uid.
    Dangling,
    /// The owner is being deleted in the foreground.
    WaitingForDependents,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_from_5_ms_to_1000_s() {
        assert_eq!(backoff(1), Duration::from_millis(5));
        assert_eq!(backoff(2), Duration::from_millis(10));
        assert_eq!(backoff(10), Duration::from_millis(2560));
        assert_eq!(backoff(40), Duration::from_secs(1000));
    }

    #[test]
    fn an_item_is_queued_once_and_again_after_a_change_while_processed() {
        let (gc, mut rx) = GarbageCollector::new(Arc::default(), Default::default());
        let item = Item::AttemptToDelete("u".into());
        gc.add(item.clone());
        gc.add(item.clone());
        assert_eq!(rx.try_recv().ok(), Some(item.clone()));
        assert!(rx.try_recv().is_err(), "queued twice");
        // Being processed: a new add marks it dirty, and done queues it again once.
        gc.items
            .lock()
            .unwrap()
            .insert(item.clone(), ItemState::Processing { dirty: false });
        gc.add(item.clone());
        assert!(rx.try_recv().is_err(), "run twice at once");
        gc.done(&item);
        assert_eq!(rx.try_recv().ok(), Some(item.clone()));
        // Done without a change: forgotten.
        gc.items
            .lock()
            .unwrap()
            .insert(item.clone(), ItemState::Processing { dirty: false });
        gc.done(&item);
        assert!(gc.items.lock().unwrap().is_empty());
    }
}

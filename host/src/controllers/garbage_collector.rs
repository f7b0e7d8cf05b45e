//! The garbage collector (`pkg/controller/garbagecollector` of kube-controller-manager): the
//! dependency graph of every served resource, built from watches of the watch cache (one
//! monitor per resource, `graph_builder.go`), and a work queue of the objects to look at
//! (`garbagecollector.go`):
//!
//! - **background**: an object whose owners are all gone (absent, or another object under
//!   the owner's name — uid mismatch) is deleted; one that still has a live owner has its
//!   dangling references removed instead (`attemptToDeleteItem`);
//! - **foreground**: an owner deleted with `propagationPolicy=Foreground` carries the
//!   `foregroundDeletion` finalizer; its dependents are deleted (themselves in the foreground
//!   when they have dependents), and the finalizer is removed once no dependent with
//!   `blockOwnerDeletion` is left (`processDeletingDependentsItem`);
//! - **orphan**: an owner deleted with `propagationPolicy=Orphan` carries the `orphan`
//!   finalizer; its references are removed from every dependent, then the finalizer
//!   (`orphanDependents`).
//!
//! Owners are resolved by group and kind among the served resources, looked up in the
//! dependent's namespace when namespaced. A cluster-scoped dependent naming a namespaced owner,
//! or an owner of a kind nobody serves, is never resolved, so never collected (as kube,
//! where such references are unresolvable). Writes go through the registry (hooks, finalizers
//! and preconditions apply); every delete is preconditioned on the uid the decision was made
//! on.

use crate::admission::AdmissionRequest;
use crate::authentication::UserInfo;
use crate::registry::deletion::DeleteOptions;
use crate::registry::propagation::{
    PropagationPolicy, FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS,
};
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{ListOptions, Served, Store};
use crate::status::{ApiError, ApiResult};
use futures::FutureExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Semaphore};
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::{ResourceVersionMatch, WatchEvent};

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

/// How often the set of served resources is compared with the monitors running (a plugin
/// loaded is watched this soon; nothing is decided until it is).
const RESYNC_MONITORS: Duration = Duration::from_millis(200);

/// A served resource: group, version, plural.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ResourceKey {
    group: String,
    version: String,
    plural: String,
}

impl ResourceKey {
    fn of(store: &Store) -> ResourceKey {
        let d = &store.description;
        ResourceKey {
            group: d.group.clone(),
            version: d.version.clone(),
            plural: d.plural.clone(),
        }
    }
}

/// One `metadata.ownerReferences` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OwnerRef {
    uid: String,
    api_version: String,
    kind: String,
    name: String,
    block_owner_deletion: bool,
}

fn owner_refs(obj: &Value) -> Vec<OwnerRef> {
    let s = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    accessor(obj)
        .owner_references()
        .iter()
        .map(|o| OwnerRef {
            uid: s(o, "uid"),
            api_version: s(o, "apiVersion"),
            kind: s(o, "kind"),
            name: s(o, "name"),
            block_owner_deletion: o.get("blockOwnerDeletion").and_then(Value::as_bool)
                == Some(true),
        })
        .collect()
}

/// A node of the graph: an object as last observed.
#[derive(Clone, Debug)]
struct Node {
    resource: ResourceKey,
    namespace: String,
    name: String,
    owners: Vec<OwnerRef>,
    deleting: bool,
    finalizers: Vec<String>,
}

impl Node {
    fn has_finalizer(&self, f: &str) -> bool {
        self.finalizers.iter().any(|x| x == f)
    }

    fn waiting_for_dependents(&self) -> bool {
        self.deleting && self.has_finalizer(FINALIZER_DELETE_DEPENDENTS)
    }
}

/// The dependency graph (`GraphBuilder.uidToNode`): objects by uid, and for each owner uid the
/// uids of the objects naming it.
#[derive(Default)]
struct Graph {
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, HashSet<String>>,
}

impl Graph {
    fn unlink(&mut self, uid: &str, owners: &[OwnerRef]) {
        for o in owners {
            if let Some(d) = self.dependents.get_mut(&o.uid) {
                d.remove(uid);
                if d.is_empty() {
                    self.dependents.remove(&o.uid);
                }
            }
        }
    }

    fn dependents_of(&self, uid: &str) -> Vec<String> {
        self.dependents
            .get(uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// What a worker does with an object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Item {
    /// `attemptToDeleteItem`: delete it if its owners are gone.
    AttemptToDelete(String),
    /// `processDeletingDependentsItem`: a foreground deletion's progress.
    DeleteDependents(String),
    /// `orphanDependents`: free its dependents, then drop the `orphan` finalizer.
    OrphanDependents(String),
}

/// Where an item is: queued, or being processed (and queued again once done when `dirty`),
/// as client-go's work queue never runs one item twice at once.
enum ItemState {
    Queued,
    Processing { dirty: bool },
}

/// Who the garbage collector's deletes are made as: kube's controller-manager service
/// account for it.
pub const GARBAGE_COLLECTOR_USER: &str =
    "system:serviceaccount:kube-system:generic-garbage-collector";

/// The garbage collector's shared state.
pub struct GarbageCollector {
    served: Arc<Served>,
    /// The admission chain its deletes go through.
    admission: crate::admission::Chain,
    graph: Mutex<Graph>,
    items: Mutex<HashMap<Item, ItemState>>,
    queue: mpsc::UnboundedSender<Item>,
    /// Consecutive failures of an item, for its back-off.
    failures: Mutex<HashMap<Item, u32>>,
    /// Resources whose monitor has delivered its initial events.
    synced: Mutex<HashSet<ResourceKey>>,
}

/// Start the garbage collector (a fresh graph): its monitors and workers, stopped by
/// aborting the returned tasks.
pub fn start(
    served: Arc<Served>,
    admission: crate::admission::Chain,
) -> Vec<tokio::task::AbortHandle> {
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
    vec![
        tokio::spawn(gc.clone().run_monitors()).abort_handle(),
        tokio::spawn(gc.run_workers(rx)).abort_handle(),
    ]
}

/// The monitor tasks, aborted with the task that owns them.
struct Monitors(HashMap<ResourceKey, tokio::task::JoinHandle<()>>);

impl Drop for Monitors {
    fn drop(&mut self) {
        for task in self.0.values() {
            task.abort();
        }
    }
}

impl GarbageCollector {
    fn add(&self, item: Item) {
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

    fn done(&self, item: &Item) {
        let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ItemState::Processing { dirty: true }) = items.get(item) {
            items.insert(item.clone(), ItemState::Queued);
            let _ = self.queue.send(item.clone());
        } else {
            items.remove(item);
        }
    }

    fn graph(&self) -> std::sync::MutexGuard<'_, Graph> {
        self.graph.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One monitor per served resource, started and stopped as plugins come and go.
    async fn run_monitors(self: Arc<Self>) {
        let mut monitors = Monitors(HashMap::new());
        loop {
            let running = &mut monitors.0;
            let snapshot = self.served.load();
            let mut served = HashSet::new();
            // Read-only resources (the plugins' own status objects) are never deleted here;
            // as owners they are looked up live.
            for store in snapshot.resources.iter().filter(|s| !s.read_only) {
                let key = ResourceKey::of(store);
                served.insert(key.clone());
                running
                    .entry(key.clone())
                    .or_insert_with(|| tokio::spawn(self.clone().monitor(key)));
            }
            running.retain(|k, task| {
                let keep = served.contains(k) && !task.is_finished();
                if !keep {
                    task.abort();
                }
                keep
            });
            tokio::time::sleep(RESYNC_MONITORS).await;
        }
    }

    /// Watch one resource from the cache (initial events, then changes) into the graph. After
    /// a restart, objects not in the new initial events are taken as deleted.
    async fn monitor(self: Arc<Self>, key: ResourceKey) {
        loop {
            let Some(store) =
                self.served
                    .load()
                    .resources
                    .get(&key.group, &key.version, &key.plural)
            else {
                return;
            };
            let opts = ListOptions {
                send_initial_events: Some(true),
                resource_version_match: ResourceVersionMatch::NotOlderThan,
                allow_watch_bookmarks: true,
                ..Default::default()
            };
            let mut events = match store.watch("", &opts).await {
                Ok(w) => w,
                Err(e) => {
                    tracing::debug!(resource = %store.gr, error = %e, "garbage collector: cannot watch");
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            };
            let mut initial: Option<HashSet<String>> = Some(HashSet::new());
            while let Some(event) = events.recv().await {
                match event {
                    WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                        let Ok(obj) = o.to_arc() else { continue };
                        if let Some(seen) = initial.as_mut() {
                            seen.insert(accessor(&obj).uid().to_string());
                        }
                        self.observe(&key, &obj);
                    }
                    WatchEvent::Deleted(o) => {
                        if let Ok(obj) = o.to_arc() {
                            self.observe_deleted(accessor(&obj).uid());
                        }
                    }
                    WatchEvent::Bookmark(b) => {
                        let end = b.pointer("/metadata/annotations/k8s.io~1initial-events-end")
                            == Some(&Value::from("true"));
                        if let (true, Some(seen)) = (end, initial.take()) {
                            self.forget_missing(&key, &seen);
                            self.synced
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .insert(key.clone());
                        }
                    }
                    WatchEvent::Error(e) => {
                        tracing::debug!(resource = %store.gr, error = %e, "garbage collector: watch ended");
                        break;
                    }
                }
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    /// `processGraphChanges` for an added or updated object.
    fn observe(&self, key: &ResourceKey, obj: &Value) {
        let uid = accessor(obj).uid().to_string();
        if uid.is_empty() {
            return;
        }
        let node = Node {
            resource: key.clone(),
            namespace: accessor(obj).namespace().to_string(),
            name: accessor(obj).name().to_string(),
            owners: owner_refs(obj),
            deleting: accessor(obj).is_terminating(),
            finalizers: accessor(obj).finalizers(),
        };
        let mut work = Vec::new();
        {
            let mut g = self.graph();
            let old = g.nodes.get(&uid).cloned();
            if let Some(old) = &old {
                g.unlink(&uid, &old.owners);
                // An owner this object stopped naming may have been waiting for it.
                for o in old.owners.iter().filter(|o| !node.owners.contains(o)) {
                    if g.nodes
                        .get(&o.uid)
                        .is_some_and(Node::waiting_for_dependents)
                    {
                        work.push(Item::DeleteDependents(o.uid.clone()));
                    }
                }
            }
            for o in &node.owners {
                g.dependents
                    .entry(o.uid.clone())
                    .or_default()
                    .insert(uid.clone());
            }
            // An owner not in the graph may be absent: verify (kube's virtual nodes).
            let owners_changed = old.as_ref().is_none_or(|o| o.owners != node.owners);
            if owners_changed && node.owners.iter().any(|o| !g.nodes.contains_key(&o.uid)) {
                work.push(Item::AttemptToDelete(uid.clone()));
            }
            if node.deleting && node.has_finalizer(FINALIZER_ORPHAN_DEPENDENTS) {
                work.push(Item::OrphanDependents(uid.clone()));
            }
            if node.waiting_for_dependents() {
                // On the transition only: its dependents are looked at once (kube's
                // `startsWaitingForDependentsDeleted`), whatever later updates of it do.
                if !old.as_ref().is_some_and(Node::waiting_for_dependents) {
                    work.extend(g.dependents_of(&uid).into_iter().map(Item::AttemptToDelete));
                }
                work.push(Item::DeleteDependents(uid.clone()));
            }
            // A dependent now being deleted may unblock its foreground owners.
            if node.deleting && !old.as_ref().is_some_and(|o| o.deleting) {
                for o in &node.owners {
                    if g.nodes
                        .get(&o.uid)
                        .is_some_and(Node::waiting_for_dependents)
                    {
                        work.push(Item::DeleteDependents(o.uid.clone()));
                    }
                }
            }
            g.nodes.insert(uid, node);
        }
        for w in work {
            self.add(w);
        }
    }

    /// `processGraphChanges` for a deleted object: its dependents may be orphans now, and its
    /// foreground owners may be done waiting.
    fn observe_deleted(&self, uid: &str) {
        let mut work = Vec::new();
        {
            let mut g = self.graph();
            let Some(node) = g.nodes.remove(uid) else {
                return;
            };
            g.unlink(uid, &node.owners);
            work.extend(g.dependents_of(uid).into_iter().map(Item::AttemptToDelete));
            for o in &node.owners {
                if g.nodes
                    .get(&o.uid)
                    .is_some_and(Node::waiting_for_dependents)
                {
                    work.push(Item::DeleteDependents(o.uid.clone()));
                }
            }
        }
        for w in work {
            self.add(w);
        }
    }

    /// After a re-list of `key`: what was not listed again was deleted meanwhile.
    fn forget_missing(&self, key: &ResourceKey, seen: &HashSet<String>) {
        let gone: Vec<String> = self
            .graph()
            .nodes
            .iter()
            .filter(|(uid, n)| n.resource == *key && !seen.contains(*uid))
            .map(|(uid, _)| uid.clone())
            .collect();
        for uid in gone {
            self.observe_deleted(&uid);
        }
    }

    async fn run_workers(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Item>) {
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

    fn store(&self, key: &ResourceKey) -> Option<Arc<Store>> {
        self.served
            .load()
            .resources
            .get(&key.group, &key.version, &key.plural)
    }

    /// The served resource of an owner reference's kind (its group; any served version).
    fn owner_store(&self, owner: &OwnerRef) -> Option<Arc<Store>> {
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
    async fn live(&self, uid: &str) -> ApiResult<Option<(Node, Arc<Store>, Value)>> {
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
    async fn attempt_to_delete(&self, uid: &str) -> ApiResult<()> {
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

    /// `deleteObject`: preconditioned on the uid and the resourceVersion the decision was made
    /// on; on a conflict, deleted anyway if the owner references are still the same, left
    /// for a new decision otherwise. Namespaces go through their own deletion (Terminating,
    /// the immortal ones refused).
    async fn delete(
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

    /// Whether `owner` of the dependent `node` exists (`isDangling`, and whether it waits for
    /// its dependents). An owner is looked up by its kind's resource, in the dependent's
    /// namespace when namespaced; a graph node stands for it only when its coordinates match.
    async fn classify(&self, node: &Node, owner: &OwnerRef) -> ApiResult<OwnerState> {
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
    async fn delete_dependents(&self, uid: &str) -> ApiResult<()> {
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
    async fn orphan_dependents(&self, uid: &str) -> ApiResult<()> {
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

    /// Update `metadata` of the object `uid` through the registry (a patch of the current
    /// object; gone or replaced: nothing to do).
    async fn update_metadata(
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

    async fn patch_owner_refs(
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

    async fn remove_finalizer(&self, uid: &str, finalizer: &'static str) -> ApiResult<()> {
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

/// What an owner reference points at.
enum OwnerState {
    /// The owner exists (or cannot be resolved, so is taken as existing).
    Solid,
    /// No object of that name and uid.
    Dangling,
    /// The owner is being deleted in the foreground.
    WaitingForDependents,
}

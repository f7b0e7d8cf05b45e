//! The graph builder (`pkg/controller/garbagecollector/graph_builder.go`): one monitor per
//! served resource watching the watch cache (initial events, then changes), started and
//! stopped as plugins come and go, and `processGraphChanges`, which keeps the
//! [`Graph`](super::graph::Graph) and queues the work each change calls for.

use super::garbagecollector::{GarbageCollector, Item, RETRY};
use super::graph::{owner_refs, Node, ResourceKey};
use crate::registry::propagation::FINALIZER_ORPHAN_DEPENDENTS;
use crate::registry::ListOptions;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::{ResourceVersionMatch, WatchEvent};

/// How often the set of served resources is compared with the monitors running (a plugin
/// loaded is watched this soon; nothing is decided until it is).
const RESYNC_MONITORS: Duration = Duration::from_millis(200);

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
    /// One monitor per served resource, started and stopped as plugins come and go.
    pub(super) async fn run_monitors(self: Arc<Self>) {
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
                        let end = accessor(&b).annotation("k8s.io/initial-events-end") == "true";
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
    pub(super) fn observe(&self, key: &ResourceKey, obj: &Value) {
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
    pub(super) fn observe_deleted(&self, uid: &str) {
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
    pub(super) fn forget_missing(&self, key: &ResourceKey, seen: &HashSet<String>) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::propagation::FINALIZER_DELETE_DEPENDENTS;
    use serde_json::json;
    use tokio::sync::mpsc::UnboundedReceiver;

    fn key() -> ResourceKey {
        ResourceKey {
            group: String::new(),
            version: "v1".into(),
            plural: "configmaps".into(),
        }
    }

    fn object(uid: &str, owners: &[&str], deleting: bool, finalizers: &[&str]) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|o| {
                json!({"apiVersion": "v1", "kind": "ConfigMap", "name": o, "uid": o,
                            "blockOwnerDeletion": true})
            })
            .collect();
        let mut o = json!({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": uid, "namespace": "default", "uid": uid,
                                        "ownerReferences": refs, "finalizers": finalizers}});
        if deleting {
            o["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        o
    }

    fn queued(rx: &mut UnboundedReceiver<Item>) -> Vec<Item> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    fn collector() -> (Arc<GarbageCollector>, UnboundedReceiver<Item>) {
        GarbageCollector::new(Arc::default(), Default::default())
    }

    #[test]
    fn a_dependent_of_an_unknown_owner_is_looked_at() {
        let (gc, mut rx) = collector();
        gc.observe(&key(), &object("owner", &[], false, &[]));
        assert_eq!(queued(&mut rx), []);
        // Its owner is in the graph: nothing to verify.
        gc.observe(&key(), &object("child", &["owner"], false, &[]));
        assert_eq!(queued(&mut rx), []);
        // An owner the graph has not seen may be absent (kube's virtual node).
        gc.observe(&key(), &object("orphan", &["ghost"], false, &[]));
        assert_eq!(queued(&mut rx), [Item::AttemptToDelete("orphan".into())]);
        // An update that does not change the owners is not looked at again.
        gc.done(&Item::AttemptToDelete("orphan".into()));
        gc.observe(&key(), &object("orphan", &["ghost"], false, &[]));
        assert_eq!(queued(&mut rx), []);
    }

    #[test]
    fn an_owner_deleted_in_the_foreground_looks_at_its_dependents_once() {
        let (gc, mut rx) = collector();
        gc.observe(&key(), &object("owner", &[], false, &[]));
        gc.observe(&key(), &object("child", &["owner"], false, &[]));
        let fg = [FINALIZER_DELETE_DEPENDENTS];
        gc.observe(&key(), &object("owner", &[], true, &fg));
        assert_eq!(
            queued(&mut rx),
            [
                Item::AttemptToDelete("child".into()),
                Item::DeleteDependents("owner".into())
            ]
        );
        gc.done(&Item::AttemptToDelete("child".into()));
        gc.done(&Item::DeleteDependents("owner".into()));
        // A later update of the waiting owner: its progress only.
        gc.observe(&key(), &object("owner", &[], true, &fg));
        assert_eq!(queued(&mut rx), [Item::DeleteDependents("owner".into())]);
        gc.done(&Item::DeleteDependents("owner".into()));
        // The dependent starts deleting, then is gone: the owner's progress each time.
        gc.observe(&key(), &object("child", &["owner"], true, &[]));
        assert_eq!(queued(&mut rx), [Item::DeleteDependents("owner".into())]);
        gc.done(&Item::DeleteDependents("owner".into()));
        gc.observe_deleted("child");
        assert_eq!(queued(&mut rx), [Item::DeleteDependents("owner".into())]);
    }

    #[test]
    fn an_orphaning_owner_and_a_deleted_owner() {
        let (gc, mut rx) = collector();
        gc.observe(&key(), &object("owner", &[], false, &[]));
        gc.observe(&key(), &object("a", &["owner"], false, &[]));
        gc.observe(&key(), &object("b", &["owner"], false, &[]));
        gc.observe(
            &key(),
            &object("owner", &[], true, &[FINALIZER_ORPHAN_DEPENDENTS]),
        );
        assert_eq!(queued(&mut rx), [Item::OrphanDependents("owner".into())]);
        // The owner gone: each dependent may be garbage now.
        gc.observe_deleted("owner");
        let mut items = queued(&mut rx);
        items.sort_by_key(|i| format!("{i:?}"));
        assert_eq!(
            items,
            [
                Item::AttemptToDelete("a".into()),
                Item::AttemptToDelete("b".into())
            ]
        );
        assert!(
            gc.graph().dependents_of("owner").len() == 2,
            "edges stay until the dependents change"
        );
    }

    #[test]
    fn a_relist_forgets_what_it_no_longer_lists() {
        let (gc, mut rx) = collector();
        gc.observe(&key(), &object("owner", &[], false, &[]));
        gc.observe(&key(), &object("child", &["owner"], false, &[]));
        let seen: HashSet<String> = ["child".to_string()].into();
        gc.forget_missing(&key(), &seen);
        assert!(!gc.graph().nodes.contains_key("owner"));
        assert_eq!(queued(&mut rx), [Item::AttemptToDelete("child".into())]);
    }
}

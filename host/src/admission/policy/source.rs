//! The policies and bindings this server enforces, compiled: kube's policy source
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_source.go`), fed by a list
//! and a watch of both resources through their Stores (served by the watch cache) and by each
//! write's [`AfterWrite`](crate::registry::after_write::AfterWrite) hook, so a policy created
//! on this server is enforced before its create returns and on the others within a watch
//! event. An older view of an object (by resourceVersion) never replaces a newer one.

use super::compiled::{compile_binding, compile_policy, CompiledBinding, CompiledPolicy};
use crate::registry::{ListOptions, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::WatchEvent;

/// Which of the two resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Policy,
    Binding,
}

/// What is enforced now: every compiled policy and binding by name, with the resourceVersion
/// each was compiled from.
#[derive(Default)]
pub struct PolicySet {
    pub policies: BTreeMap<String, (u64, Arc<CompiledPolicy>)>,
    pub bindings: BTreeMap<String, (u64, Arc<CompiledBinding>)>,
}

impl PolicySet {
    /// Whether there is nothing to enforce.
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty() || self.bindings.is_empty()
    }

    /// The bindings of the policy `name`, by name.
    pub fn bindings_of<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = Arc<CompiledBinding>> + 'a {
        self.bindings
            .values()
            .filter(move |(_, b)| b.policy_name == name)
            .map(|(_, b)| b.clone())
    }
}

/// The compiled policies and bindings, swapped as a whole on each change.
#[derive(Default)]
pub struct PolicySource {
    current: RwLock<Arc<PolicySet>>,
    /// The resourceVersion each deleted object was deleted at, so that a late copy (a write's
    /// hook after the delete's watch event) does not bring it back; cleared by a list.
    deleted: std::sync::Mutex<BTreeMap<(bool, String), u64>>,
    /// Which kinds' first full list has been loaded (bit 0 policies, bit 1 bindings).
    listed: std::sync::atomic::AtomicU8,
}

fn rv(obj: &Value) -> u64 {
    accessor(obj).resource_version().parse().unwrap_or(0)
}

impl PolicySource {
    /// Whether both resources have been listed once (until then the member cannot tell
    /// whether a policy applies).
    pub fn synced(&self) -> bool {
        self.listed.load(std::sync::atomic::Ordering::SeqCst) == 3
    }

    /// What is enforced now.
    pub fn current(&self) -> Arc<PolicySet> {
        self.current.read().unwrap().clone()
    }

    fn change(&self, f: impl FnOnce(&mut PolicySet)) {
        let mut current = self.current.write().unwrap();
        let mut next = PolicySet {
            policies: current.policies.clone(),
            bindings: current.bindings.clone(),
        };
        f(&mut next);
        *current = Arc::new(next);
    }

    /// A written or watched object of `kind`: compiled unless what is known is as new (or
    /// it was deleted since). The check is made again under the lock: compiling happens
    /// outside it.
    pub fn observe(&self, kind: Kind, obj: &Value) {
        let (name, rv) = (accessor(obj).name().to_string(), rv(obj));
        let stale = |set: &PolicySet| {
            let known = match kind {
                Kind::Policy => set.policies.get(&name).map(|(r, _)| *r),
                Kind::Binding => set.bindings.get(&name).map(|(r, _)| *r),
            };
            let deleted = self
                .deleted
                .lock()
                .unwrap()
                .get(&(kind == Kind::Policy, name.clone()))
                .copied();
            known.is_some_and(|k| k >= rv) || deleted.is_some_and(|d| d >= rv)
        };
        if stale(&self.current()) {
            return;
        }
        let (policy, binding) = match kind {
            Kind::Policy => (Some(Arc::new(compile_policy(obj).0)), None),
            Kind::Binding => (None, Some(Arc::new(compile_binding(obj)))),
        };
        let mut current = self.current.write().unwrap();
        if stale(&current) {
            return;
        }
        let mut next = PolicySet {
            policies: current.policies.clone(),
            bindings: current.bindings.clone(),
        };
        match (policy, binding) {
            (Some(p), _) => drop(next.policies.insert(name, (rv, p))),
            (_, Some(b)) => drop(next.bindings.insert(name, (rv, b))),
            _ => {}
        }
        *current = Arc::new(next);
    }

    /// The object `name` of `kind` was deleted at `rv`.
    pub fn forget(&self, kind: Kind, name: &str, rv: u64) {
        self.deleted
            .lock()
            .unwrap()
            .insert((kind == Kind::Policy, name.to_string()), rv);
        self.change(|s| {
            match kind {
                Kind::Policy => drop(s.policies.remove(name)),
                Kind::Binding => drop(s.bindings.remove(name)),
            };
        })
    }

    /// A full list of `kind`: what it does not hold is gone.
    fn replace(&self, kind: Kind, objects: &[Arc<Value>]) {
        self.deleted
            .lock()
            .unwrap()
            .retain(|(policy, _), _| *policy != (kind == Kind::Policy));
        let names: Vec<&str> = objects.iter().map(|o| accessor(o).name()).collect();
        self.change(|s| match kind {
            Kind::Policy => s.policies.retain(|n, _| names.contains(&n.as_str())),
            Kind::Binding => s.bindings.retain(|n, _| names.contains(&n.as_str())),
        });
        for o in objects {
            self.observe(kind, o);
        }
        let bit = if kind == Kind::Policy { 1 } else { 2 };
        self.listed
            .fetch_or(bit, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Keep `source` in step with the two Stores (policies, bindings): list, then watch; on a
/// failed watch, list again after half a second. Runs on a spawned task until the process ends.
pub fn watch_policies(stores: Vec<Arc<Store>>, source: Arc<PolicySource>) {
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow(&stores, &source).await {
                tracing::warn!(error = %e, "admission policy watch failed; re-listing");
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
}

async fn follow(stores: &[Arc<Store>], source: &PolicySource) -> Result<(), String> {
    let kinds = [Kind::Policy, Kind::Binding];
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Kind, WatchEvent)>(256);
    let mut forwarders = Vec::new();
    for (store, kind) in stores.iter().zip(kinds) {
        let list = store
            .list("", &ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let items = store.decode_items(&list).map_err(|e| e.to_string())?;
        source.replace(kind, &items);
        let opts = ListOptions {
            resource_version: list.resource_version.to_string(),
            ..Default::default()
        };
        let mut events = store.watch("", &opts).await.map_err(|e| e.to_string())?;
        let tx = tx.clone();
        forwarders.push(tokio::spawn(async move {
            while let Some(ev) = events.recv().await {
                if tx.send((kind, ev)).await.is_err() {
                    return;
                }
            }
        }));
    }
    drop(tx);
    let result = loop {
        let Some((kind, ev)) = rx.recv().await else {
            break Err("watch closed".to_string());
        };
        match ev {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                if let Ok(v) = o.to_arc() {
                    source.observe(kind, &v);
                }
            }
            WatchEvent::Deleted(o) => match o.to_arc() {
                Ok(v) => source.forget(kind, accessor(&v).name(), rv(&v)),
                Err(e) => break Err(e.to_string()),
            },
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => break Err(e.to_string()),
        }
    };
    for f in forwarders {
        f.abort();
    }
    result
}

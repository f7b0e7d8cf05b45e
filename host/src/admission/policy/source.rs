//! The admission policies and bindings this server enforces (validating and mutating), and
//! the webhook configurations it calls, compiled: kube's policy source
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_source.go`) and webhook
//! source (`…/webhook/configuration/*_webhook_manager.go`), fed by a list
//! and a watch of the six resources through their Stores (served by the watch cache) and by each
//! write's [`AfterWrite`](crate::registry::after_write::AfterWrite) hook, so a policy created
//! on this server is enforced before its create returns and on the others within a watch
//! event. An older view of an object (by resourceVersion) never replaces a newer one.

use super::compiled::{compile_binding, compile_policy, CompiledBinding, CompiledPolicy};
use super::mutating::compiled::{compile_mutating_policy, CompiledMutatingPolicy};
use crate::admission::webhook::configuration::{
    compile_configuration, CompiledWebhookConfiguration,
};
use crate::registry::{ListOptions, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::WatchEvent;

/// Which of the six resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Policy,
    Binding,
    MutatingPolicy,
    MutatingBinding,
    /// `ValidatingWebhookConfiguration`.
    ValidatingWebhooks,
    /// `MutatingWebhookConfiguration`.
    MutatingWebhooks,
}

impl Kind {
    /// All six, in the order their Stores are made.
    pub const ALL: [Kind; 6] = [
        Kind::Policy,
        Kind::Binding,
        Kind::MutatingPolicy,
        Kind::MutatingBinding,
        Kind::ValidatingWebhooks,
        Kind::MutatingWebhooks,
    ];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Compiled objects by name, with the resourceVersion each was compiled from.
pub type Compiled<T> = BTreeMap<String, (u64, Arc<T>)>;

/// What is enforced now: every compiled policy, binding and webhook configuration by name.
#[derive(Default, Clone)]
pub struct PolicySet {
    pub policies: Compiled<CompiledPolicy>,
    pub bindings: Compiled<CompiledBinding>,
    pub mutating_policies: Compiled<CompiledMutatingPolicy>,
    pub mutating_bindings: Compiled<CompiledBinding>,
    pub validating_webhooks: Compiled<CompiledWebhookConfiguration>,
    pub mutating_webhooks: Compiled<CompiledWebhookConfiguration>,
}

/// One compiled object of any kind.
enum One {
    Policy(Arc<CompiledPolicy>),
    Binding(Arc<CompiledBinding>),
    MutatingPolicy(Arc<CompiledMutatingPolicy>),
    Webhooks(Arc<CompiledWebhookConfiguration>),
}

impl PolicySet {
    /// Whether no ValidatingAdmissionPolicy can apply (no policy, or no binding).
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty() || self.bindings.is_empty()
    }

    /// Whether no MutatingAdmissionPolicy can apply.
    pub fn mutating_is_empty(&self) -> bool {
        self.mutating_policies.is_empty() || self.mutating_bindings.is_empty()
    }

    /// The bindings of the validating policy `name`, by name.
    pub fn bindings_of(&self, name: &str) -> Vec<Arc<CompiledBinding>> {
        bindings_of(&self.bindings, name)
    }

    /// The bindings of the mutating policy `name`, by name.
    pub fn mutating_bindings_of(&self, name: &str) -> Vec<Arc<CompiledBinding>> {
        bindings_of(&self.mutating_bindings, name)
    }

    fn known(&self, kind: Kind, name: &str) -> Option<u64> {
        match kind {
            Kind::Policy => self.policies.get(name).map(|(r, _)| *r),
            Kind::Binding => self.bindings.get(name).map(|(r, _)| *r),
            Kind::MutatingPolicy => self.mutating_policies.get(name).map(|(r, _)| *r),
            Kind::MutatingBinding => self.mutating_bindings.get(name).map(|(r, _)| *r),
            Kind::ValidatingWebhooks => self.validating_webhooks.get(name).map(|(r, _)| *r),
            Kind::MutatingWebhooks => self.mutating_webhooks.get(name).map(|(r, _)| *r),
        }
    }

    fn insert(&mut self, kind: Kind, name: String, rv: u64, one: One) {
        match (kind, one) {
            (Kind::Policy, One::Policy(p)) => drop(self.policies.insert(name, (rv, p))),
            (Kind::Binding, One::Binding(b)) => drop(self.bindings.insert(name, (rv, b))),
            (Kind::MutatingPolicy, One::MutatingPolicy(p)) => {
                drop(self.mutating_policies.insert(name, (rv, p)))
            }
            (Kind::MutatingBinding, One::Binding(b)) => {
                drop(self.mutating_bindings.insert(name, (rv, b)))
            }
            (Kind::ValidatingWebhooks, One::Webhooks(w)) => {
                drop(self.validating_webhooks.insert(name, (rv, w)))
            }
            (Kind::MutatingWebhooks, One::Webhooks(w)) => {
                drop(self.mutating_webhooks.insert(name, (rv, w)))
            }
            _ => {}
        }
    }

    /// Keep only the objects of `kind` for which `keep(name, resourceVersion)` holds.
    fn retain(&mut self, kind: Kind, keep: impl Fn(&str, u64) -> bool) {
        match kind {
            Kind::Policy => self.policies.retain(|n, (rv, _)| keep(n, *rv)),
            Kind::Binding => self.bindings.retain(|n, (rv, _)| keep(n, *rv)),
            Kind::MutatingPolicy => self.mutating_policies.retain(|n, (rv, _)| keep(n, *rv)),
            Kind::MutatingBinding => self.mutating_bindings.retain(|n, (rv, _)| keep(n, *rv)),
            Kind::ValidatingWebhooks => self.validating_webhooks.retain(|n, (rv, _)| keep(n, *rv)),
            Kind::MutatingWebhooks => self.mutating_webhooks.retain(|n, (rv, _)| keep(n, *rv)),
        }
    }
}

fn bindings_of(bindings: &Compiled<CompiledBinding>, name: &str) -> Vec<Arc<CompiledBinding>> {
    bindings
        .values()
        .filter(|(_, b)| b.policy_name == name)
        .map(|(_, b)| b.clone())
        .collect()
}

/// The compiled policies and bindings, swapped as a whole on each change.
#[derive(Default)]
pub struct PolicySource {
    current: RwLock<Arc<PolicySet>>,
    /// The resourceVersion each deleted object was deleted at, so that a late copy (a write's
    /// hook after the delete's watch event) does not bring it back; cleared by a list.
    deleted: std::sync::Mutex<BTreeMap<(Kind, String), u64>>,
    /// Which kinds' first full list has been loaded ([`Kind::bit`]).
    listed: std::sync::atomic::AtomicU8,
}

fn rv(obj: &Value) -> u64 {
    accessor(obj).resource_version().parse().unwrap_or(0)
}

impl PolicySource {
    /// Whether the six resources have been listed once (until then the members cannot tell
    /// whether a policy applies).
    pub fn synced(&self) -> bool {
        let all = Kind::ALL.iter().fold(0, |b, k| b | k.bit());
        self.listed.load(std::sync::atomic::Ordering::SeqCst) == all
    }

    /// What is enforced now.
    pub fn current(&self) -> Arc<PolicySet> {
        self.current.read().unwrap().clone()
    }

    fn change(&self, f: impl FnOnce(&mut PolicySet)) {
        let mut current = self.current.write().unwrap();
        let mut next = (**current).clone();
        f(&mut next);
        *current = Arc::new(next);
    }

    /// A written or watched object of `kind`: compiled unless what is known is as new (or
    /// it was deleted since). The check is made again under the lock: compiling happens
    /// outside it.
    pub fn observe(&self, kind: Kind, obj: &Value) {
        let (name, rv) = (accessor(obj).name().to_string(), rv(obj));
        let stale = |set: &PolicySet| {
            let deleted = self
                .deleted
                .lock()
                .unwrap()
                .get(&(kind, name.clone()))
                .copied();
            set.known(kind, &name).is_some_and(|k| k >= rv) || deleted.is_some_and(|d| d >= rv)
        };
        if stale(&self.current()) {
            return;
        }
        let one = match kind {
            Kind::Policy => One::Policy(Arc::new(compile_policy(obj).0)),
            Kind::Binding | Kind::MutatingBinding => One::Binding(Arc::new(compile_binding(obj))),
            Kind::MutatingPolicy => One::MutatingPolicy(Arc::new(compile_mutating_policy(obj).0)),
            Kind::ValidatingWebhooks => One::Webhooks(Arc::new(compile_configuration(obj, false))),
            Kind::MutatingWebhooks => One::Webhooks(Arc::new(compile_configuration(obj, true))),
        };
        let mut current = self.current.write().unwrap();
        if stale(&current) {
            return;
        }
        let mut next = (**current).clone();
        next.insert(kind, name, rv, one);
        *current = Arc::new(next);
    }

    /// The object `name` of `kind` was deleted at `rv`.
    /// A copy newer than the delete (an object created again, seen through its write's
    /// hook before the delete's watch event) stays.
    pub fn forget(&self, kind: Kind, name: &str, rv: u64) {
        let mut deleted = self.deleted.lock().unwrap();
        let at = deleted.entry((kind, name.to_string())).or_insert(rv);
        *at = (*at).max(rv);
        drop(deleted);
        self.change(|s| s.retain(kind, |n, known| n != name || known > rv))
    }

    /// A full list of `kind` at `list_rv`: what it does not hold is gone, unless it was
    /// written after the list (seen through its write's hook first).
    fn replace(&self, kind: Kind, objects: &[Arc<Value>], list_rv: u64) {
        self.deleted.lock().unwrap().retain(|(k, _), _| *k != kind);
        let names: Vec<&str> = objects.iter().map(|o| accessor(o).name()).collect();
        self.change(|s| s.retain(kind, |n, known| names.contains(&n) || known > list_rv));
        for o in objects {
            self.observe(kind, o);
        }
        self.listed
            .fetch_or(kind.bit(), std::sync::atomic::Ordering::SeqCst);
    }
}

/// Keep `source` in step with the six Stores (in [`Kind::ALL`]'s order): list, then watch; on a
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
    let kinds = Kind::ALL;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Kind, WatchEvent)>(256);
    let mut forwarders = Vec::new();
    for (store, kind) in stores.iter().zip(kinds) {
        let list = store
            .list("", &ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let items = store.decode_items(&list).map_err(|e| e.to_string())?;
        source.replace(kind, &items, list.resource_version);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding(name: &str, rv: u64) -> Value {
        json!({"metadata": {"name": name, "resourceVersion": rv.to_string()},
               "spec": {"policyName": "p"}})
    }

    #[test]
    fn late_deletes_and_old_lists_do_not_drop_newer_objects() {
        let source = PolicySource::default();
        source.observe(Kind::MutatingBinding, &binding("b", 10));
        // Deleted at 12, created again at 15 (seen through its write's hook), then the
        // delete's watch event arrives: the new one stays.
        source.observe(Kind::MutatingBinding, &binding("b", 15));
        source.forget(Kind::MutatingBinding, "b", 12);
        assert_eq!(source.current().mutating_bindings["b"].0, 15);
        // A list at 14 without it (listed before the create) keeps it too; one at 16 drops it.
        source.replace(Kind::MutatingBinding, &[], 14);
        assert!(source.current().mutating_bindings.contains_key("b"));
        source.replace(Kind::MutatingBinding, &[], 16);
        assert!(!source.current().mutating_bindings.contains_key("b"));
        // A delete newer than what is known drops it, and a late older copy does not return.
        source.observe(Kind::MutatingBinding, &binding("c", 20));
        source.forget(Kind::MutatingBinding, "c", 21);
        source.observe(Kind::MutatingBinding, &binding("c", 20));
        assert!(!source.current().mutating_bindings.contains_key("c"));
        // The kinds are apart: a validating binding of the same name is untouched.
        source.observe(Kind::Binding, &binding("c", 22));
        assert!(source.current().bindings.contains_key("c"));
    }
}

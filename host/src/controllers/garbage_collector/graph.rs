//! The dependency graph (`pkg/controller/garbagecollector/graph.go`): a node per observed
//! object (its owners, whether it is being deleted, its finalizers), and for each owner uid
//! the uids of the objects naming it.

use crate::registry::propagation::FINALIZER_DELETE_DEPENDENTS;
use crate::registry::Store;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use wasm_apiserver_apimachinery::meta::accessor;

/// A served resource: group, version, plural.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct ResourceKey {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) plural: String,
}

impl ResourceKey {
    pub(super) fn of(store: &Store) -> ResourceKey {
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
pub(super) struct OwnerRef {
    pub(super) uid: String,
    pub(super) api_version: String,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) block_owner_deletion: bool,
}

pub(super) fn owner_refs(obj: &Value) -> Vec<OwnerRef> {
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
pub(super) struct Node {
    pub(super) resource: ResourceKey,
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) owners: Vec<OwnerRef>,
    pub(super) deleting: bool,
    pub(super) finalizers: Vec<String>,
}

impl Node {
    pub(super) fn has_finalizer(&self, f: &str) -> bool {
        self.finalizers.iter().any(|x| x == f)
    }

    pub(super) fn waiting_for_dependents(&self) -> bool {
        self.deleting && self.has_finalizer(FINALIZER_DELETE_DEPENDENTS)
    }
}

/// The dependency graph (`GraphBuilder.uidToNode`): objects by uid, and for each owner uid the
/// uids of the objects naming it.
#[derive(Default)]
pub(super) struct Graph {
    pub(super) nodes: HashMap<String, Node>,
    pub(super) dependents: HashMap<String, HashSet<String>>,
}

impl Graph {
    pub(super) fn unlink(&mut self, uid: &str, owners: &[OwnerRef]) {
        for o in owners {
            if let Some(d) = self.dependents.get_mut(&o.uid) {
                d.remove(uid);
                if d.is_empty() {
                    self.dependents.remove(&o.uid);
                }
            }
        }
    }

    pub(super) fn dependents_of(&self, uid: &str) -> Vec<String> {
        self.dependents
            .get(uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default()
    }
}

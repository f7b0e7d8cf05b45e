//! The registry: one [`Resource`] per served group/version/plural — its strategy (a plugin),
//! its storage (from the StorageFactory) and its names — and the path-to-storage map
//! ([`ResourceMap`], kube-apiserver's `APIGroupInfo.VersionedResourcesStorageMap`).
//!
//! `store.rs` holds the `genericregistry.Store` operations; `meta.rs` the system metadata the
//! host manages around the strategy hooks.

pub mod meta;
pub mod store;

use crate::status::Gr;
use crate::strategy::{ResourceDescription, Strategy};
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_storage::Storage;

/// One served resource.
#[derive(Clone)]
pub struct Resource {
    /// The plugin's self-description.
    pub description: ResourceDescription,
    /// The strategy (a loaded plugin version).
    pub strategy: Arc<dyn Strategy>,
    /// Its storage.
    pub storage: Arc<dyn Storage>,
    /// Its names for messages.
    pub gr: Gr,
    /// The storage key prefix: `/<plural>` for core, `/<group>/<plural>` otherwise.
    pub resource_prefix: String,
    /// Served by the host for reading only (writes answer 405).
    pub read_only: bool,
}

impl Resource {
    /// Assemble a resource; the key prefix follows kube-apiserver's layout (core resources
    /// without their group, others as `<group>/<plural>`).
    pub fn new(strategy: Arc<dyn Strategy>, storage: Arc<dyn Storage>) -> Resource {
        let description = strategy.description().clone();
        let gr = Gr {
            group: description.group.clone(),
            resource: description.plural.clone(),
            kind: description.kind.clone(),
        };
        Resource {
            resource_prefix: resource_prefix(&description),
            description,
            strategy,
            storage,
            gr,
            read_only: false,
        }
    }
}

/// `/<plural>` for the core group, `/<group>/<plural>` otherwise (kube-apiserver's etcd key
/// layout, `pkg/kubeapiserver/default_storage_factory_builder.go` and
/// `k8s.io/apiserver/pkg/registry/generic/registry/store.go` `NamespaceKeyRootFunc`).
pub fn resource_prefix(d: &ResourceDescription) -> String {
    if d.group.is_empty() {
        format!("/{}", d.plural)
    } else {
        format!("/{}/{}", d.group, d.plural)
    }
}

/// The path-to-storage map: (group, version, plural) → resource. Immutable once built; a
/// change builds a new map (swapped atomically by the server).
#[derive(Clone, Default)]
pub struct ResourceMap {
    by_path: BTreeMap<(String, String, String), Arc<Resource>>,
}

impl ResourceMap {
    /// Add a resource. Errors: another resource already serves its group/version/plural.
    pub fn insert(&mut self, r: Resource) -> Result<(), String> {
        let d = &r.description;
        let k = (d.group.clone(), d.version.clone(), d.plural.clone());
        if let Some(existing) = self.by_path.get(&k) {
            return Err(format!(
                "{} is already served by plugin {:?}",
                d.group_resource(),
                existing.strategy.name()
            ));
        }
        self.by_path.insert(k, Arc::new(r));
        Ok(())
    }

    /// The resource at a group/version/plural.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Every resource, ordered by group, version, plural.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Resource>> {
        self.by_path.values()
    }

    /// Group → versions served (sorted), for discovery.
    pub fn groups(&self) -> BTreeMap<String, Vec<String>> {
        let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (group, version, _) in self.by_path.keys() {
            let v = g.entry(group.clone()).or_default();
            if !v.contains(version) {
                v.push(version.clone());
            }
        }
        g
    }
}

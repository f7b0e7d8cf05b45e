//! The path-to-storage map (kube-apiserver's `APIGroupInfo.VersionedResourcesStorageMap`).

use super::request_scope::RequestScope;
use super::store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_apimachinery::version::compare_kube_aware;

/// The path-to-storage map: (group, version, plural) → resource, one entry per served version
/// of each resource, with its [`RequestScope`] (built here once, as kube's installer builds
/// one per path). Immutable once built; a change builds a new map (published in a new
/// [`Snapshot`](super::Snapshot)).
#[derive(Clone, Default)]
pub struct ResourceMap {
    by_path: BTreeMap<(String, String, String), Arc<RequestScope>>,
    /// Each resource once, as its storage version's Store (what controllers work on), by
    /// (group, storage version, plural).
    resources: BTreeMap<(String, String, String), Arc<Store>>,
}

impl ResourceMap {
    /// Add a resource (its storage-version Store, [`Store::new`]) under every version it
    /// serves ([`Store::at_version`]). Errors: another resource already has its group and
    /// plural, in any version (both would read and write the same stored objects).
    pub fn insert(&mut self, r: Store) -> Result<(), String> {
        let d = &r.description;
        if let Some(existing) = self
            .resources
            .values()
            .find(|e| e.description.group == d.group && e.description.plural == d.plural)
        {
            return Err(format!(
                "{} is already served by plugin {:?}",
                d.group_resource(),
                existing.strategy.name()
            ));
        }
        let versions: Vec<String> = d.served_versions().iter().map(|v| v.to_string()).collect();
        for v in &versions {
            let k = (d.group.clone(), v.clone(), d.plural.clone());
            if let Some(existing) = self.by_path.get(&k) {
                return Err(format!(
                    "{} is already served by plugin {:?}",
                    d.group_resource(),
                    existing.store.strategy.name()
                ));
            }
        }
        let storage = Arc::new(r);
        for v in versions {
            let store = if v == storage.description.version {
                storage.clone()
            } else {
                Arc::new(storage.at_version(&v).expect("a served version"))
            };
            let d = &storage.description;
            self.by_path.insert(
                (d.group.clone(), v, d.plural.clone()),
                Arc::new(RequestScope::new(store)),
            );
        }
        let d = &storage.description;
        let k = (d.group.clone(), d.version.clone(), d.plural.clone());
        self.resources.insert(k, storage);
        Ok(())
    }

    /// The resource at a group/version/plural, as served in that version.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Store>> {
        self.scope(group, version, plural).map(|s| s.store.clone())
    }

    /// The [`RequestScope`] of a group/version/plural: what a request in that version is
    /// served through.
    pub fn scope(&self, group: &str, version: &str, plural: &str) -> Option<Arc<RequestScope>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Every resource once, in its storage version, ordered by group, version, plural.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Store>> {
        self.resources.values()
    }

    /// Every served version of every resource, ordered by group, version, plural.
    pub fn iter_served(&self) -> impl Iterator<Item = &Arc<Store>> {
        self.by_path.values().map(|s| &s.store)
    }

    /// Group → versions served, the preferred first (kube's version priority,
    /// `version.CompareKubeAwareVersionStrings`, as kube orders a group's CRD versions).
    pub fn groups(&self) -> BTreeMap<String, Vec<String>> {
        let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (group, version, _) in self.by_path.keys() {
            let v = g.entry(group.clone()).or_default();
            if !v.contains(version) {
                v.push(version.clone());
            }
        }
        for v in g.values_mut() {
            v.sort_by(|a, b| compare_kube_aware(b, a));
        }
        g
    }
}

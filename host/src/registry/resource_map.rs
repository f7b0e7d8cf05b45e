//! The path-to-storage map (kube-apiserver's `APIGroupInfo.VersionedResourcesStorageMap`).

use super::store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The path-to-storage map: (group, version, plural) → resource. Immutable once built; a
/// change builds a new map (published in a new [`Snapshot`]).
#[derive(Clone, Default)]
pub struct ResourceMap {
    by_path: BTreeMap<(String, String, String), Arc<Store>>,
}

impl ResourceMap {
    /// Add a resource. Errors: another resource already serves its group/version/plural.
    pub fn insert(&mut self, r: Store) -> Result<(), String> {
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
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Store>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Every resource, ordered by group, version, plural.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Store>> {
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

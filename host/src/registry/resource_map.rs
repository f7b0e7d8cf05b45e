//! The path-to-storage map (kube-apiserver's `APIGroupInfo.VersionedResourcesStorageMap`).

use super::request_scope::RequestScope;
use super::store::Store;
use crate::strategy::Strategy;
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_apimachinery::version::compare_kube_aware;
use wasm_apiserver_storage::Storage;

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
        self.check_free(&r.description)?;
        let storage = Arc::new(r);
        let versions: Vec<String> = storage
            .description
            .served_versions()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let scopes = versions
            .into_iter()
            .map(|v| {
                let store = if v == storage.description.version {
                    storage.clone()
                } else {
                    Arc::new(storage.at_version(&v).expect("a served version"))
                };
                (v, Arc::new(RequestScope::new(store)))
            })
            .collect();
        self.add(storage, scopes);
        Ok(())
    }

    /// Add the resource `previous` serves with this `strategy` over this `storage` (the same
    /// objects, compared by address), with its Stores and scopes as they are — so what is
    /// derived from them (OpenAPI, discovery) can be reused too
    /// ([`Snapshot::next`](super::Snapshot::next)). `Ok(false)` when `previous` has no such
    /// resource (build it with [`ResourceMap::insert`]). Errors: as [`ResourceMap::insert`].
    pub fn reuse(
        &mut self,
        previous: &ResourceMap,
        strategy: &Arc<dyn Strategy>,
        storage: &Arc<dyn Storage>,
    ) -> Result<bool, String> {
        let d = strategy.description();
        let found = previous.resource(&d.group, &d.plural).cloned();
        let Some(store) = found.filter(|s| {
            same(Arc::as_ptr(&s.strategy), Arc::as_ptr(strategy))
                && same(Arc::as_ptr(&s.storage), Arc::as_ptr(storage))
        }) else {
            return Ok(false);
        };
        self.check_free(&store.description)?;
        let scopes = store
            .description
            .served_versions()
            .iter()
            .filter_map(|v| {
                let k = (
                    store.description.group.clone(),
                    v.to_string(),
                    store.description.plural.clone(),
                );
                Some((v.to_string(), previous.by_path.get(&k)?.clone()))
            })
            .collect();
        self.add(store, scopes);
        Ok(true)
    }

    /// Errors: a resource with `d`'s group and plural is here already, or one of its paths.
    fn check_free(&self, d: &crate::strategy::ResourceDescription) -> Result<(), String> {
        let taken = self
            .resource(&d.group, &d.plural)
            .map(|s| s.strategy.name())
            .or_else(|| {
                d.served_versions().iter().find_map(|v| {
                    self.by_path
                        .get(&(d.group.clone(), v.to_string(), d.plural.clone()))
                        .map(|s| s.store.strategy.name())
                })
            });
        match taken {
            Some(name) => Err(format!(
                "{} is already served by plugin {name:?}",
                d.group_resource()
            )),
            None => Ok(()),
        }
    }

    /// The resource `group`/`plural` (its storage-version Store, whatever that version).
    fn resource(&self, group: &str, plural: &str) -> Option<&Arc<Store>> {
        self.resources
            .range((group.to_string(), String::new(), String::new())..)
            .take_while(|((g, _, _), _)| g == group)
            .find(|((_, _, p), _)| p == plural)
            .map(|(_, s)| s)
    }

    fn add(&mut self, storage: Arc<Store>, scopes: Vec<(String, Arc<RequestScope>)>) {
        let d = &storage.description;
        for (v, scope) in scopes {
            self.by_path
                .insert((d.group.clone(), v, d.plural.clone()), scope);
        }
        let k = (d.group.clone(), d.version.clone(), d.plural.clone());
        self.resources.insert(k, storage);
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

/// Whether two (possibly unsized) pointers point at the same value: their data addresses.
fn same<T: ?Sized, U: ?Sized>(a: *const T, b: *const U) -> bool {
    std::ptr::eq(a as *const (), b as *const ())
}

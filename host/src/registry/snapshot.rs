//! What is served at one instant: the path-to-storage map and the documents derived from it
//! (aggregated discovery, OpenAPI v3), built together and swapped together, so routing,
//! discovery and OpenAPI always agree — as kube-apiserver's apiextensions controllers update
//! the discovery and OpenAPI handlers when the set of served resources changes
//! (`apiextensions-apiserver/pkg/apiserver/customresource_discovery_controller.go`,
//! `pkg/controller/openapiv3`).
//!
//! The plugin manager publishes a new snapshot; the HTTP layer only reads the current one.
//! A request keeps the snapshot (and the [`Store`](super::store::Store)s) it started with.

use super::openapi::{gv_path, OpenApiDocument};
use super::resource_map::ResourceMap;
use super::store::Store;
use super::{discovery, openapi};
use arc_swap::ArcSwap;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The served resources and their documents, immutable once built.
#[derive(Default)]
pub struct Snapshot {
    /// The path-to-storage map.
    pub resources: ResourceMap,
    /// OpenAPI v3 documents by group-version path (`api/v1`, `apis/<group>/<version>`).
    pub openapi: BTreeMap<String, OpenApiDocument>,
    /// Aggregated discovery (`APIGroupDiscoveryList`) of `/api`, serialized.
    pub discovery_core: Bytes,
    /// Aggregated discovery (`APIGroupDiscoveryList`) of `/apis`, serialized.
    pub discovery_groups: Bytes,
    /// What each document was built from, to reuse it in the next snapshot.
    built_from: BuiltFrom,
}

/// The Stores (by address) each group-version document and each group's discovery entry
/// was built from, with the serialized discovery entries.
#[derive(Default)]
struct BuiltFrom {
    openapi: BTreeMap<String, Vec<usize>>,
    discovery: BTreeMap<String, (Vec<usize>, Bytes)>,
}

fn addresses(stores: &[&Arc<Store>]) -> Vec<usize> {
    stores.iter().map(|s| Arc::as_ptr(s) as usize).collect()
}

impl Snapshot {
    /// The snapshot of `resources`: builds every derived document.
    pub fn new(resources: ResourceMap) -> Snapshot {
        Snapshot::next(resources, &Snapshot::default())
    }

    /// The snapshot of `resources` following `previous`: a group-version's OpenAPI document
    /// or a group's discovery entry is rebuilt only when its Stores are not the very ones
    /// `previous` built it from ([`ResourceMap::reuse`] keeps them) — one changed resource
    /// among 2,000 rebuilds one group's documents, not all of them.
    pub fn next(resources: ResourceMap, previous: &Snapshot) -> Snapshot {
        let mut by_gv: BTreeMap<String, Vec<&Arc<Store>>> = BTreeMap::new();
        let mut by_group: BTreeMap<&str, Vec<&Arc<Store>>> = BTreeMap::new();
        for r in resources.iter_served() {
            let d = &r.description;
            by_gv
                .entry(gv_path(&d.group, &d.version))
                .or_default()
                .push(r);
            by_group.entry(d.group.as_str()).or_default().push(r);
        }
        let mut built_from = BuiltFrom::default();
        let mut docs = BTreeMap::new();
        for (gv, rs) in by_gv {
            let key = addresses(&rs);
            let doc = match previous.openapi.get(&gv) {
                Some(doc) if previous.built_from.openapi.get(&gv) == Some(&key) => doc.clone(),
                _ => {
                    let rs: Vec<&Store> = rs.iter().map(|r| r.as_ref()).collect();
                    OpenApiDocument::new(&gv, &rs)
                }
            };
            built_from.openapi.insert(gv.clone(), key);
            docs.insert(gv, doc);
        }
        for (group, versions) in discovery::all_groups(&resources) {
            let stores = by_group
                .get(group.as_str())
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let key = addresses(stores);
            let entry = match previous.built_from.discovery.get(&group) {
                Some((k, entry)) if *k == key => entry.clone(),
                _ => Bytes::from(discovery::group_discovery(&group, &versions, stores).to_string()),
            };
            built_from.discovery.insert(group, (key, entry));
        }
        let entries = |core: bool| {
            built_from
                .discovery
                .iter()
                .filter(move |(g, _)| g.is_empty() == core)
                .map(|(_, (_, e))| e.as_ref())
        };
        Snapshot {
            discovery_core: discovery::aggregated(entries(true)),
            discovery_groups: discovery::aggregated(entries(false)),
            openapi: docs,
            resources,
            built_from,
        }
    }

    /// The root `/openapi/v3` document.
    pub fn openapi_root(&self) -> serde_json::Value {
        openapi::root(self.openapi.iter())
    }
}

/// The snapshot in force, replaced atomically by [`Served::publish`].
#[derive(Default)]
pub struct Served {
    current: ArcSwap<Snapshot>,
}

impl Served {
    /// Serve `resources` from now on (with the documents built from them, reusing the
    /// current snapshot's where their resources did not change, [`Snapshot::next`]).
    pub fn publish(&self, resources: ResourceMap) {
        let previous = self.current.load_full();
        self.current
            .store(Arc::new(Snapshot::next(resources, &previous)));
    }

    /// The snapshot in force.
    pub fn load(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::testing::{widgets_store, Widgets};
    use crate::strategy::Strategy;

    /// The map of `strategies` over one storage, reusing what `previous` serves.
    fn map(
        previous: &Snapshot,
        strategies: &[&Arc<dyn Strategy>],
        storage: &Arc<dyn wasm_apiserver_storage::Storage>,
    ) -> ResourceMap {
        let mut m = ResourceMap::default();
        for s in strategies {
            if !m.reuse(&previous.resources, s, storage).unwrap() {
                m.insert(Store::new((*s).clone(), storage.clone())).unwrap();
            }
        }
        m
    }

    #[tokio::test]
    async fn a_snapshot_rebuilds_only_the_documents_of_what_changed() {
        let (_dir, _, store) = widgets_store().await;
        let storage = store.storage.clone();
        let a: Arc<dyn Strategy> = Arc::new(Widgets::in_group("a.example.dev"));
        let b: Arc<dyn Strategy> = Arc::new(Widgets::in_group("b.example.dev"));
        let first = Snapshot::new(map(&Snapshot::default(), &[&a, &b], &storage));
        // `b` is served by a new strategy (a reload); `a` is untouched.
        let b2: Arc<dyn Strategy> = Arc::new(Widgets::in_group("b.example.dev"));
        let second = Snapshot::next(map(&first, &[&a, &b2], &storage), &first);

        let store_of = |s: &Snapshot, g: &str| s.resources.get(g, "v1", "widgets").unwrap();
        assert!(Arc::ptr_eq(
            &store_of(&first, "a.example.dev"),
            &store_of(&second, "a.example.dev")
        ));
        assert!(!Arc::ptr_eq(
            &store_of(&first, "b.example.dev"),
            &store_of(&second, "b.example.dev")
        ));
        let doc = |s: &Snapshot, gv: &str| s.openapi[gv].body.as_ptr();
        assert_eq!(
            doc(&first, "apis/a.example.dev/v1"),
            doc(&second, "apis/a.example.dev/v1")
        );
        assert_ne!(
            doc(&first, "apis/b.example.dev/v1"),
            doc(&second, "apis/b.example.dev/v1")
        );
        let entry = |s: &Snapshot, g: &str| s.built_from.discovery[g].1.as_ptr();
        assert_eq!(
            entry(&first, "a.example.dev"),
            entry(&second, "a.example.dev")
        );
        assert_ne!(
            entry(&first, "b.example.dev"),
            entry(&second, "b.example.dev")
        );

        // What is reused is what a snapshot built from nothing serves.
        let fresh = Snapshot::new(map(&Snapshot::default(), &[&a, &b2], &storage));
        assert_eq!(fresh.discovery_groups, second.discovery_groups);
        assert_eq!(fresh.discovery_core, second.discovery_core);
        assert_eq!(fresh.openapi.len(), second.openapi.len());
        for (gv, d) in &fresh.openapi {
            assert_eq!(d.body, second.openapi[gv].body, "{gv}");
            assert_eq!(d.hash, second.openapi[gv].hash, "{gv}");
        }
        let groups: serde_json::Value = serde_json::from_slice(&second.discovery_groups).unwrap();
        let names: Vec<&str> = groups["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["metadata"]["name"].as_str())
            .collect();
        assert!(
            names.contains(&"a.example.dev") && names.contains(&"b.example.dev"),
            "{names:?}"
        );
    }

    #[tokio::test]
    async fn a_resource_served_twice_is_refused_when_reused_too() {
        let (_dir, _, store) = widgets_store().await;
        let storage = store.storage.clone();
        let a: Arc<dyn Strategy> = Arc::new(Widgets::in_group("a.example.dev"));
        let first = Snapshot::new(map(&Snapshot::default(), &[&a], &storage));
        let mut m = ResourceMap::default();
        let other: Arc<dyn Strategy> = Arc::new(Widgets::in_group("a.example.dev"));
        m.insert(Store::new(other, storage.clone())).unwrap();
        let err = m.reuse(&first.resources, &a, &storage).unwrap_err();
        assert!(err.contains("already served"), "{err}");
    }
}

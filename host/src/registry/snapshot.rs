//! What is served at one instant: the path-to-storage map and the documents derived from it
//! (aggregated discovery, OpenAPI v3), built together and swapped together, so routing,
//! discovery and OpenAPI always agree — as kube-apiserver's apiextensions controllers update
//! the discovery and OpenAPI handlers when the set of served resources changes
//! (`apiextensions-apiserver/pkg/apiserver/customresource_discovery_controller.go`,
//! `pkg/controller/openapiv3`).
//!
//! The plugin manager publishes a new snapshot; the HTTP layer only reads the current one.
//! A request keeps the snapshot (and the [`Store`](super::store::Store)s) it started with.

use super::resource_map::ResourceMap;
use super::{discovery, openapi};
use arc_swap::ArcSwap;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The served resources and their documents, immutable once built.
#[derive(Default)]
pub struct Snapshot {
    /// The path-to-storage map.
    pub resources: ResourceMap,
    /// OpenAPI v3 documents by group-version path (`api/v1`, `apis/<group>/<version>`).
    pub openapi: BTreeMap<String, Value>,
    /// Aggregated discovery (`APIGroupDiscoveryList`) of `/api`.
    pub discovery_core: Value,
    /// Aggregated discovery (`APIGroupDiscoveryList`) of `/apis`.
    pub discovery_groups: Value,
}

impl Snapshot {
    /// The snapshot of `resources`: builds every derived document.
    pub fn new(resources: ResourceMap) -> Snapshot {
        Snapshot {
            openapi: openapi::documents(&resources),
            discovery_core: discovery::aggregated(&resources, true),
            discovery_groups: discovery::aggregated(&resources, false),
            resources,
        }
    }
}

/// The snapshot in force, replaced atomically by [`Served::publish`].
#[derive(Default)]
pub struct Served {
    current: ArcSwap<Snapshot>,
}

impl Served {
    /// Serve `resources` from now on (with the documents built from them).
    pub fn publish(&self, resources: ResourceMap) {
        self.current.store(Arc::new(Snapshot::new(resources)));
    }

    /// The snapshot in force.
    pub fn load(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }
}

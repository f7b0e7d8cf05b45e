//! The registry: one [`Store`] per served group/version/plural (the versions of one resource
//! share its strategy and storage) — its strategy (a plugin), its
//! storage (from the StorageFactory) and its names — the path-to-storage map ([`ResourceMap`],
//! kube-apiserver's `APIGroupInfo.VersionedResourcesStorageMap`) and the [`Snapshot`] of what
//! is served, published as a whole when a plugin changes.
//!
//! - `store.rs`: `genericregistry.Store` (get, list, watch, create, update), its delete path
//!   in `deletion.rs` (delete, delete-collection, graceful deletion, finalizers), what a write
//!   asks in `write_options.rs`, its `managedFields` tracking in `tracking.rs`; `list_options.rs`: the request's list options and the
//!   `SelectionPredicate` built from them; `meta.rs`: the system metadata the host manages
//!   around the strategy hooks; `propagation.rs`: a delete's `propagationPolicy` and the
//!   garbage-collection finalizers it sets; `write_admission.rs`: admission as the Store runs
//!   it (the interface the admission chain implements); `rest.rs`: the one delete entry point
//!   (a namespace through its own REST, `namespace_rest.rs`, anything else through the Store).
//! - `converter.rs`: conversion between a request's version and the storage version (the
//!   plugin's `convert`), cached per stored state;
//! - `request_scope.rs`: kube's `RequestScope`, what a handler serves a resource in one
//!   version through (its Store, the Converter, kind and resource, the field manager);
//!   every conversion of the request path goes through it;
//! - `resource_map.rs`: the path-to-storage map (with a scope per path); `snapshot.rs`: the served snapshot; `discovery.rs`, `openapi.rs`: the documents derived
//!   from the map; `table.rs`: the `TableConvertor` over the plugin's printer columns.
//!
//! The registry never imports the HTTP layer: the server reads the snapshot, the plugin
//! manager publishes it. Files here import each other, never this module (it only declares
//! and re-exports).

pub mod after_write;
pub mod converter;
pub mod deletion;
pub mod discovery;
pub mod list_options;
pub mod meta;
pub mod namespace_rest;
pub mod openapi;
pub mod propagation;
pub mod request_scope;
pub mod resource_map;
pub mod rest;
pub mod snapshot;
pub mod storage_version_migration;
pub mod store;
pub mod table;
#[cfg(test)]
pub(crate) mod testing;
pub mod tracking;
pub mod write_admission;
pub mod write_options;

pub use list_options::ListOptions;
pub use request_scope::RequestScope;
pub use resource_map::ResourceMap;
pub use snapshot::{Served, Snapshot};
pub use store::{resource_prefix, Store};
pub use write_admission::WriteAdmission;
pub use write_options::{CreateOptions, UpdateOptions};

//! Plugin lifecycle: load the plugin folder at start, then hot-reload it while the server runs;
//! and serve what the `StrategyPlugin` objects say, on every replica of one storage.
//! Validate before activate, keep the last good version, report status — as kube-apiserver's
//! apiextensions controllers install and remove custom resources' storage while serving
//! (`apiextensions-apiserver/pkg/apiserver/customresource_handler.go` `crdHandler`).
//!
//! - [`PluginManager::rescan`] compares the folder with what is loaded: a new or changed
//!   `*.wasm` is read twice (its hash must be stable, so a file still being written is not
//!   loaded; an admission policy component is left to `admission/wasm/folder.rs`), compiled
//!   and checked off the async workers (`PluginRuntime::load_bytes`: WIT
//!   version, self-description, smoke run on the plugin's example), refused if it clashes with
//!   another plugin's resource or changes the resource served under its file name, and only
//!   then swapped in: a new [`Snapshot`](crate::registry::Snapshot) — the whole
//!   path-to-storage map, discovery and OpenAPI — is published in one atomic store. Requests
//!   already running keep the `Arc<Store>` they started with.
//! - A failed load never replaces the last good version; a deleted file unregisters its
//!   resource (its data stays in storage, and the same storage serves it again when the file
//!   returns).
//! - Plugins through the API (`strategyplugins.rs`): the cluster-scoped `StrategyPlugin`
//!   resource names a component by sha256 (uploaded to `strategyplugincomponents/<sha256>`,
//!   `server/components.rs`, kept in storage by the `BlobStore`). Every server watches the
//!   objects ([`watch_objects`]), fetches the component, loads it as above and swaps it in;
//!   deleting the object or `spec.active: false` unregisters the resource (data kept). A
//!   resource claimed twice (by a file and an object, or two objects) is refused for the
//!   later claimant, never served twice.
//! - Each server writes its own entry of `status.replicas` (state, observed generation,
//!   serving sha256, last error, loaded-at), merged inside the update so replicas never
//!   overwrite each other; files of a server's folder appear as objects with `spec.file`.
//!   Also in `/metrics` (`wasm_apiserver_plugin_reloads_total`) and in the log.
//! - [`PluginManager`] (`manager.rs`) loads and publishes; [`watch_folder`] (`watch.rs`) runs a
//!   `notify` watcher (debounced) and `SIGHUP` triggers a rescan; [`watch_objects`] lists and
//!   syncs the objects on every event and every [`RESYNC`].
//! - CustomResourceDefinitions (`customresourcedefinitions.rs`: the object's strategy, kube's
//!   validation; `crds.rs`: serving them): each CRD is a configuration of the configured
//!   `customresources` component, served beside the plugins once its names are accepted,
//!   before its create or update returns on this server ([`CrdHook`]) and within [`RESYNC`]
//!   on the others ([`watch_crds`]); its status carries `NamesAccepted` and `Established`.
//! - Attachments (`attachments.rs`): a `StrategyPlugin` with `spec.extends: <crd name>` serves
//!   no resource of its own; its hooks run around the CRD's
//!   ([`crate::strategy::attached::AttachedStrategy`]) until the object is deleted.

//!
//! Files here import each other, never this module (it only declares and re-exports).

mod attachments;
mod crd_names;
mod crds;
mod customresourcedefinitions;
mod folder;
mod manager;
mod strategyplugins;
mod watch;

pub use crds::{CrdHook, CrdRegistry};
pub use customresourcedefinitions::{CustomResourceDefinitionStrategy, CRD_GROUP, CRD_PLURAL};
pub use folder::{plugin_files, stable_read};
pub use manager::{Change, PluginManager};
pub use strategyplugins::components;
pub use strategyplugins::{
    summary, with_conditions, with_replica_status, PluginState, PluginStatus,
    StrategyPluginStrategy, COMPONENTS_PLURAL, STATUS_GROUP, STATUS_PLURAL,
};
pub use watch::{
    sync_crds_once, sync_objects_once, watch_crds, watch_folder, watch_objects, DEBOUNCE, RESYNC,
};

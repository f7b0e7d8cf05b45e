//! Plugin lifecycle: load the plugin folder at start, then hot-reload it while the server runs.
//! Validate before activate, keep the last good version, report status — as kube-apiserver's
//! apiextensions controllers install and remove custom resources' storage while serving
//! (`apiextensions-apiserver/pkg/apiserver/customresource_handler.go` `crdHandler`).
//!
//! - [`PluginManager::rescan`] compares the folder with what is loaded: a new or changed
//!   `*.wasm` is read twice (its hash must be stable, so a file still being written is not
//!   loaded), compiled and checked off the async workers (`PluginRuntime::load_bytes`: WIT
//!   version, self-description, smoke run on the plugin's example), refused if it clashes with
//!   another plugin's resource or changes the resource served under its file name, and only
//!   then swapped in: a new [`Snapshot`](crate::registry::Snapshot) — the whole
//!   path-to-storage map, discovery and OpenAPI — is published in one atomic store. Requests
//!   already running keep the `Arc<Store>` they started with.
//! - A failed load never replaces the last good version; a deleted file unregisters its
//!   resource (its data stays in storage, and the same storage serves it again when the file
//!   returns).
//! - Every plugin's state is visible as the read-only, cluster-scoped resource
//!   `strategyplugins.wasm-apiserver.dev` (`kubectl get strategyplugins`; `strategyplugins.rs`),
//!   written through the registry like any other resource, in `/metrics`
//!   (`wasm_apiserver_plugin_reloads_total`) and in the log.
//! - [`PluginManager`] (`manager.rs`) loads and publishes; [`watch_folder`] (`watch.rs`) runs a `notify` watcher (debounced) and `SIGHUP` triggers a
//!   rescan.

//!
//! Files here import each other, never this module (it only declares and re-exports).

mod manager;
mod strategyplugins;
mod watch;

pub use manager::{plugin_files, Change, PluginManager};
pub use strategyplugins::{
    PluginState, PluginStatus, StrategyPluginStrategy, STATUS_GROUP, STATUS_PLURAL,
};
pub use watch::{watch_folder, DEBOUNCE};

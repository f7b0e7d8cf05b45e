//! The [`PluginManager`]: what is loaded from the plugin folder, and the snapshot it publishes.

use super::strategyplugins::{
    self, PluginState, PluginStatus, StrategyPluginStrategy, STATUS_GROUP,
};
use crate::plugin::{PluginRuntime, WasmStrategy};
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{ResourceMap, Served, Store};
use crate::strategy::{ResourceDescription, Strategy};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasm_apiserver_storage::factory::StorageFactory;
use wasm_apiserver_storage::Storage;

struct Entry {
    status: PluginStatus,
    active: Option<Arc<WasmStrategy>>,
}

/// The outcome of one rescan for one file, for logs and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A version was activated.
    Activated(String),
    /// A version was refused; the previous one (if any) keeps serving.
    Failed(String, String),
    /// The file was removed.
    Removed(String),
}

/// Owns the loaded plugins and swaps them into the server's path-to-storage map.
pub struct PluginManager {
    runtime: Arc<PluginRuntime>,
    dir: PathBuf,
    factory: StorageFactory,
    storages: Mutex<BTreeMap<(String, String), Arc<dyn Storage>>>,
    entries: Mutex<BTreeMap<String, Entry>>,
    status_resource: Store,
    served: Arc<Served>,
    rescan_lock: tokio::sync::Mutex<()>,
}

impl PluginManager {
    /// A manager for the plugins of `dir`, storing resources through `factory` and publishing
    /// what is served into `served`.
    pub fn new(
        runtime: Arc<PluginRuntime>,
        dir: PathBuf,
        factory: StorageFactory,
        served: Arc<Served>,
    ) -> PluginManager {
        let strategy = Arc::new(StrategyPluginStrategy::new());
        let d = strategy.description().clone();
        let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
        let mut status_resource = Store::new(strategy, storage);
        status_resource.read_only = true;
        PluginManager {
            runtime,
            dir,
            factory,
            storages: Mutex::new(BTreeMap::new()),
            entries: Mutex::new(BTreeMap::new()),
            status_resource,
            served,
            rescan_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The plugin folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The watch cache's figures per resource (empty with `--watch-cache=false`).
    pub fn watch_cache_stats(
        &self,
    ) -> Vec<(
        (String, String),
        wasm_apiserver_storage::cacher::CacherStats,
    )> {
        self.factory.watch_cache_stats()
    }

    /// The status of every plugin file seen, by file stem.
    pub fn statuses(&self) -> BTreeMap<String, PluginStatus> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .map(|(k, e)| (k.clone(), e.status.clone()))
            .collect()
    }

    fn storage_for(&self, d: &ResourceDescription) -> Arc<dyn Storage> {
        self.storages
            .lock()
            .unwrap()
            .entry((d.group.clone(), d.plural.clone()))
            .or_insert_with(|| {
                self.factory
                    .storage_for(&d.group, &d.plural, &d.api_version(), &d.kind)
            })
            .clone()
    }

    /// Compare the folder with what is loaded, load what changed, publish the new snapshot,
    /// and record every plugin's status. One rescan runs at a time.
    pub async fn rescan(&self) -> Vec<Change> {
        let _one_at_a_time = self.rescan_lock.lock().await;
        let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
        match plugin_files(&self.dir) {
            Ok(list) => {
                for f in list {
                    if let Some(stem) = f.file_stem().and_then(|s| s.to_str()) {
                        files.insert(stem.to_string(), f);
                    }
                }
            }
            Err(e) => {
                tracing::error!(dir = %self.dir.display(), error = %e, "cannot read the plugin folder")
            }
        }
        let mut changes = Vec::new();

        // Removed files.
        let removed: Vec<String> = {
            let entries = self.entries.lock().unwrap();
            entries
                .iter()
                .filter(|(stem, e)| {
                    !files.contains_key(*stem) && e.status.state != PluginState::Removed
                })
                .map(|(stem, _)| stem.clone())
                .collect()
        };
        for stem in removed {
            let mut entries = self.entries.lock().unwrap();
            let e = entries.get_mut(&stem).expect("listed above");
            e.active = None;
            e.status.state = PluginState::Removed;
            e.status.active_sha256 = None;
            e.status.sha256.clear();
            e.status.last_error = None;
            tracing::info!(plugin = %stem, "plugin file removed: resource unregistered, data kept");
            crate::metrics::metrics()
                .plugin_reloads
                .with_label_values(&[stem.as_str(), "removed"])
                .inc();
            changes.push(Change::Removed(stem));
        }

        for (stem, path) in &files {
            let bytes = match stable_read(path).await {
                Some(b) => b,
                None => continue, // still being written; a later event retries
            };
            let sha = hex::encode(Sha256::digest(&bytes));
            let unchanged =
                self.entries.lock().unwrap().get(stem).is_some_and(|e| {
                    e.status.sha256 == sha && e.status.state != PluginState::Removed
                });
            if unchanged {
                continue;
            }
            {
                // The file is back to the version that is serving (a broken file was fixed by
                // restoring it): nothing to load, the status is Active again.
                let mut entries = self.entries.lock().unwrap();
                if let Some(e) = entries.get_mut(stem) {
                    if e.active.is_some() && e.status.active_sha256.as_deref() == Some(sha.as_str())
                    {
                        e.status.sha256 = sha;
                        e.status.state = PluginState::Active;
                        e.status.last_error = None;
                        continue;
                    }
                }
            }
            let runtime = self.runtime.clone();
            let name = stem.clone();
            let loaded = tokio::task::spawn_blocking(move || runtime.load_bytes(&name, &bytes))
                .await
                .map_err(|e| format!("loader panicked: {e}"))
                .and_then(|r| r.map_err(|e| e.to_string()));
            let outcome = loaded.and_then(|s| self.check_activation(stem, &s).map(|()| s));
            let mut entries = self.entries.lock().unwrap();
            let e = entries.entry(stem.clone()).or_insert_with(|| Entry {
                status: PluginStatus {
                    file: path.clone(),
                    sha256: String::new(),
                    active_sha256: None,
                    resource: String::new(),
                    wit_version: String::new(),
                    state: PluginState::Failed,
                    generation: 0,
                    last_error: None,
                    loaded_at: None,
                },
                active: None,
            });
            e.status.sha256 = sha.clone();
            e.status.file = path.clone();
            match outcome {
                Ok(s) => {
                    let d = s.description();
                    e.status.resource = format!("{}/{}", d.group_resource(), d.version);
                    e.status.wit_version = s.wit_version().to_string();
                    e.status.state = PluginState::Active;
                    e.status.generation += 1;
                    e.status.last_error = None;
                    e.status.loaded_at = Some(crate::registry::meta::now());
                    e.status.active_sha256 = Some(sha);
                    e.active = Some(Arc::new(s));
                    tracing::info!(plugin = %stem, resource = %e.status.resource, generation = e.status.generation, "plugin activated");
                    crate::metrics::metrics()
                        .plugin_reloads
                        .with_label_values(&[stem.as_str(), "success"])
                        .inc();
                    changes.push(Change::Activated(stem.clone()));
                }
                Err(err) => {
                    // The last good version (if any) keeps serving; the status shows that the
                    // file on disk was refused, and `activeSha256` which version serves.
                    e.status.state = PluginState::Failed;
                    e.status.last_error = Some(err.clone());
                    tracing::error!(plugin = %stem, error = %err, "plugin refused; the last good version (if any) keeps serving");
                    crate::metrics::metrics()
                        .plugin_reloads
                        .with_label_values(&[stem.as_str(), "failure"])
                        .inc();
                    changes.push(Change::Failed(stem.clone(), err));
                }
            }
        }

        self.served.publish(self.build_map());
        self.publish_statuses().await;
        changes
    }

    /// Refuse a new version that serves another plugin's resource, or that changes the resource
    /// served under this file name (move a resource by removing the file and adding a new one).
    fn check_activation(&self, stem: &str, s: &WasmStrategy) -> Result<(), String> {
        let d = s.description();
        let key = (d.group.as_str(), d.version.as_str(), d.plural.as_str());
        let entries = self.entries.lock().unwrap();
        for (other, e) in entries.iter() {
            let Some(active) = &e.active else { continue };
            let od = active.description();
            let okey = (od.group.as_str(), od.version.as_str(), od.plural.as_str());
            if other == stem {
                if okey != key || od.namespaced != d.namespaced || od.kind != d.kind {
                    return Err(format!(
                        "it changes the resource served under this file from {} ({}, {}) to {} ({}, {}); remove the file and add a new one to move a resource",
                        od.group_resource(),
                        od.kind,
                        if od.namespaced { "namespaced" } else { "cluster-scoped" },
                        d.group_resource(),
                        d.kind,
                        if d.namespaced { "namespaced" } else { "cluster-scoped" },
                    ));
                }
            } else if okey == key {
                return Err(format!(
                    "{} is already served by plugin {other:?}",
                    d.group_resource()
                ));
            }
        }
        if d.group == STATUS_GROUP {
            return Err(format!(
                "the group {STATUS_GROUP} is reserved for the server"
            ));
        }
        Ok(())
    }

    fn build_map(&self) -> ResourceMap {
        let mut map = ResourceMap::default();
        let _ = map.insert(self.status_resource.clone());
        let entries = self.entries.lock().unwrap();
        for (stem, e) in entries.iter() {
            if let Some(s) = &e.active {
                let storage = self.storage_for(s.description());
                if let Err(err) = map.insert(Store::new(s.clone(), storage)) {
                    tracing::error!(plugin = %stem, error = %err, "plugin not served");
                }
            }
        }
        map
    }

    /// Record every plugin's status as its `StrategyPlugin` object (created or replaced
    /// through the registry; an unchanged object is not rewritten). A failure is logged.
    async fn publish_statuses(&self) {
        for (stem, st) in self.statuses() {
            let obj = strategyplugins::object(&stem, &st);
            let written = self
                .status_resource
                .update(
                    "",
                    &stem,
                    UpdatedObject::Replace(obj),
                    Subresource::Main,
                    true,
                    false,
                )
                .await;
            if let Err(e) = written {
                tracing::warn!(plugin = %stem, error = %e.message, "cannot record plugin status");
            }
        }
    }
}

/// The `*.wasm` files of a plugin directory, sorted. Errors: the directory cannot be read.
pub fn plugin_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    files.sort();
    Ok(files)
}

/// Read a file twice, 10 ms apart; `None` unless both reads give the same bytes (a file still
/// being written is left for a later rescan).
async fn stable_read(path: &Path) -> Option<Vec<u8>> {
    let first = tokio::fs::read(path).await.ok()?;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = tokio::fs::read(path).await.ok()?;
    (first == second && !first.is_empty()).then_some(first)
}

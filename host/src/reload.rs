//! Plugin lifecycle: load the plugin folder at start, then hot-reload it while the server runs
//! (DESIGN.md §3). Validate before activate, keep the last good version, report status.
//!
//! - [`PluginManager::rescan`] compares the folder with what is loaded: a new or changed
//!   `*.wasm` is read twice (its hash must be stable, so a file still being written is not
//!   loaded), compiled and checked off the async workers (`PluginRuntime::load_bytes`: WIT
//!   version, self-description, smoke run on the plugin's example), refused if it clashes with
//!   another plugin's resource or changes the resource served under its file name, and only
//!   then swapped in: the whole path-to-storage map, discovery and OpenAPI change in one atomic
//!   store. Requests already running keep the `Arc<Resource>` they started with.
//! - A failed load never replaces the last good version; a deleted file unregisters its
//!   resource (its data stays in storage, and the same storage serves it again when the file
//!   returns).
//! - Every plugin's state is visible as the read-only, cluster-scoped resource
//!   `strategyplugins.wasm-apiserver.dev` (`kubectl get strategyplugins`), in `/metrics`
//!   (`wasm_apiserver_plugin_reloads_total`) and in the log.
//! - [`watch_folder`] runs a `notify` watcher (debounced) and `SIGHUP` triggers a rescan.

use crate::plugin::{PluginRuntime, WasmStrategy};
use crate::registry::{Resource, ResourceMap};
use crate::server::AppState;
use crate::strategy::{
    Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy, StrategyResult,
};
use futures::FutureExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasm_apiserver_storage::factory::StorageFactory;
use wasm_apiserver_storage::{Preconditions, Storage, UpdateOutcome};

/// Group of the host's own resources.
pub const STATUS_GROUP: &str = "wasm-apiserver.dev";
/// Plural of the plugin status resource.
pub const STATUS_PLURAL: &str = "strategyplugins";
/// How long the folder must be quiet before a rescan (editors and `cp` write in steps).
pub const DEBOUNCE: Duration = Duration::from_millis(25);

/// The state of one plugin file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginState {
    /// Serving its resource.
    Active,
    /// The file failed to load; the last good version (if any) keeps serving.
    Failed,
    /// The file was deleted; its resource is no longer served.
    Removed,
}

impl PluginState {
    fn as_str(self) -> &'static str {
        match self {
            PluginState::Active => "Active",
            PluginState::Failed => "Failed",
            PluginState::Removed => "Removed",
        }
    }
}

/// What is known of one plugin file.
#[derive(Clone, Debug)]
pub struct PluginStatus {
    /// The file.
    pub file: PathBuf,
    /// sha256 of the file as last read.
    pub sha256: String,
    /// sha256 of the version serving now (may differ from `sha256` after a failed reload).
    pub active_sha256: Option<String>,
    /// `plural.group/version` served (or last served).
    pub resource: String,
    /// WIT version of the serving version.
    pub wit_version: String,
    /// State.
    pub state: PluginState,
    /// Number of versions activated so far.
    pub generation: u64,
    /// The last load error, if the last attempt failed.
    pub last_error: Option<String>,
    /// When the serving version was activated (RFC 3339).
    pub loaded_at: Option<String>,
}

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
    status_resource: Resource,
    rescan_lock: tokio::sync::Mutex<()>,
}

impl PluginManager {
    /// A manager for the plugins of `dir`, storing resources through `factory`.
    pub fn new(
        runtime: Arc<PluginRuntime>,
        dir: PathBuf,
        factory: StorageFactory,
    ) -> PluginManager {
        let strategy = Arc::new(StatusStrategy::new());
        let d = strategy.description().clone();
        let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
        let mut status_resource = Resource::new(strategy, storage);
        status_resource.read_only = true;
        PluginManager {
            runtime,
            dir,
            factory,
            storages: Mutex::new(BTreeMap::new()),
            entries: Mutex::new(BTreeMap::new()),
            status_resource,
            rescan_lock: tokio::sync::Mutex::new(()),
        }
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

    /// Compare the folder with what is loaded, load what changed, swap the new map into
    /// `state`, and record every plugin's status. One rescan runs at a time.
    pub async fn rescan(&self, state: &AppState) -> Vec<Change> {
        let _one_at_a_time = self.rescan_lock.lock().await;
        let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
        match crate::server::plugin_files(&self.dir) {
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

        state.set_resources(self.build_map());
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
                if let Err(err) = map.insert(Resource::new(s.clone(), storage)) {
                    tracing::error!(plugin = %stem, error = %err, "plugin not served");
                }
            }
        }
        map
    }

    async fn publish_statuses(&self) {
        for (stem, st) in self.statuses() {
            let obj = json!({
                "apiVersion": format!("{STATUS_GROUP}/v1"),
                "kind": "StrategyPlugin",
                "metadata": {"name": stem},
                // The file's name only: the server's own paths are not the API's business.
                "spec": {"file": st.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()},
                "status": {
                    "state": st.state.as_str(),
                    "sha256": st.sha256,
                    "activeSha256": st.active_sha256,
                    "resource": st.resource,
                    "witVersion": st.wit_version,
                    "generation": st.generation,
                    "lastError": st.last_error,
                    "loadedAt": st.loaded_at,
                }
            });
            let key = self.status_resource.key("", &stem);
            let mut write = move |current: Value, _| {
                let mut o = obj.clone();
                let meta = o["metadata"].as_object_mut().expect("object");
                for f in ["uid", "creationTimestamp"] {
                    match current.pointer(&format!("/metadata/{f}")) {
                        Some(v) => {
                            meta.insert(f.into(), v.clone());
                        }
                        None if f == "uid" => {
                            meta.insert(f.into(), json!(uuid::Uuid::new_v4().to_string()));
                        }
                        None => {
                            meta.insert(f.into(), json!(crate::registry::meta::now()));
                        }
                    }
                }
                async move {
                    Ok(UpdateOutcome {
                        object: o,
                        ttl: None,
                    })
                }
                .boxed()
            };
            if let Err(e) = self
                .status_resource
                .storage
                .guaranteed_update(&key, true, &Preconditions::default(), &mut write, None)
                .await
            {
                tracing::warn!(plugin = %stem, error = %e, "cannot record plugin status");
            }
        }
    }
}

/// Read a file twice, 10 ms apart; `None` unless both reads give the same bytes (a file still
/// being written is left for a later rescan).
async fn stable_read(path: &Path) -> Option<Vec<u8>> {
    let first = tokio::fs::read(path).await.ok()?;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = tokio::fs::read(path).await.ok()?;
    (first == second && !first.is_empty()).then_some(first)
}

/// Watch the plugin folder with `notify` (when `watch`) and rescan after [`DEBOUNCE`] of
/// quiet; `SIGHUP` rescans in any case. The watcher is registered before this returns, so no
/// change made after start-up is missed; the loop runs on a spawned task until the process ends.
pub fn watch_folder(manager: Arc<PluginManager>, state: Arc<AppState>, watch: bool) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = if watch {
        use notify::Watcher;
        let events = tx.clone();
        let created = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(ev) = res {
                let relevant = ev
                    .paths
                    .iter()
                    .any(|p| p.extension().is_some_and(|x| x == "wasm"));
                if relevant && !ev.kind.is_access() {
                    let _ = events.send(());
                }
            }
        });
        match created {
            Ok(mut w) => match w.watch(&manager.dir, notify::RecursiveMode::NonRecursive) {
                Ok(()) => Some(w),
                Err(e) => {
                    tracing::error!(error = %e, "cannot watch the plugin folder; only SIGHUP reloads");
                    None
                }
            },
            Err(e) => {
                tracing::error!(error = %e, "cannot watch the plugin folder; only SIGHUP reloads");
                None
            }
        }
    } else {
        None
    };
    let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    tokio::spawn(async move {
        let _watcher = watcher; // dropping it would stop the events
        let _sender = tx; // keeps `rx` open when nothing watches the folder (SIGHUP only)
        loop {
            let hup_fired = async {
                match hup.as_mut() {
                    Some(h) => {
                        h.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                ev = rx.recv() => {
                    if ev.is_none() {
                        return;
                    }
                    // Debounce: wait until the folder has been quiet for DEBOUNCE.
                    while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, rx.recv()).await {}
                }
                _ = hup_fired => tracing::info!("SIGHUP: rescanning the plugin folder"),
            }
            for c in manager.rescan(&state).await {
                tracing::debug!(change = ?c, "plugin folder rescanned");
            }
        }
    });
}

/// The host-side strategy of `strategyplugins`: a read-only resource written only by the
/// [`PluginManager`].
pub struct StatusStrategy {
    description: ResourceDescription,
}

impl StatusStrategy {
    fn new() -> StatusStrategy {
        let col = |name: &str, ty: &str, path: &str, priority: i32| PrinterColumn {
            name: name.into(),
            type_: ty.into(),
            format: String::new(),
            description: String::new(),
            priority,
            json_path: path.into(),
        };
        StatusStrategy {
            description: ResourceDescription {
                group: STATUS_GROUP.into(),
                version: "v1".into(),
                kind: "StrategyPlugin".into(),
                list_kind: "StrategyPluginList".into(),
                plural: STATUS_PLURAL.into(),
                singular: "strategyplugin".into(),
                short_names: vec!["sp".into()],
                categories: Vec::new(),
                namespaced: false,
                subresources: Vec::new(),
                printer_columns: vec![
                    col("Name", "string", "@name", 0),
                    col("Resource", "string", ".status.resource", 0),
                    col("State", "string", ".status.state", 0),
                    col("Generation", "integer", ".status.generation", 0),
                    col("WIT", "string", ".status.witVersion", 0),
                    col("Loaded", "date", ".status.loadedAt", 0),
                    col("SHA256", "string", ".status.sha256", 1),
                    col("Last-Error", "string", ".status.lastError", 1),
                ],
                selectable_fields: vec!["status.state".into()],
                openapi_schema: json!({
                    "type": "object",
                    "description": "The state of one strategy plugin file of the server's --plugin-dir (read-only).",
                    "properties": {
                        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
                        "spec": {"type": "object", "properties": {"file": {"type": "string", "description": "The plugin file."}}},
                        "status": {"type": "object", "properties": {
                            "state": {"type": "string", "description": "Active, Failed (the file was refused; the last good version, if any, keeps serving) or Removed."},
                            "sha256": {"type": "string", "description": "sha256 of the file as last read."},
                            "activeSha256": {"type": "string", "description": "sha256 of the version serving now."},
                            "resource": {"type": "string", "description": "The resource served: plural.group/version."},
                            "witVersion": {"type": "string"},
                            "generation": {"type": "integer", "description": "Number of versions activated."},
                            "lastError": {"type": "string", "description": "Why the last load failed."},
                            "loadedAt": {"type": "string", "description": "When the serving version was activated."}
                        }}
                    }
                }),
                example: None,
            },
        }
    }
}

impl Strategy for StatusStrategy {
    fn name(&self) -> &str {
        "wasm-apiserver"
    }
    fn description(&self) -> &ResourceDescription {
        &self.description
    }
    fn allow_create_on_update(&self) -> bool {
        false
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    fn validate(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    fn prepare_for_update(&self, new: &Value, _: &Value) -> StrategyResult<Value> {
        Ok(new.clone())
    }
    fn validate_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn prepare_for_status_update(&self, new: &Value, _: &Value) -> StrategyResult<Value> {
        Ok(new.clone())
    }
    fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
        Ok(None)
    }
    fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn printer_cells(&self, _: &Value) -> StrategyResult<Vec<Value>> {
        Ok(Vec::new())
    }
    fn get_attrs(&self, _: &Value) -> StrategyResult<Attributes> {
        Ok(Attributes::default())
    }
}

//! The [`PluginManager`]: what is loaded — from the plugin folder and from `StrategyPlugin`
//! objects — and the snapshot it publishes.

use super::attachments::{self, Attachments};
use super::crds::CrdRegistry;
use super::folder::{file_name, plugin_files, stable_read};
use super::strategyplugins::{
    components, file_record, with_replica_status, PluginState, PluginStatus,
    StrategyPluginStrategy, COMPONENTS_PLURAL, STATUS_GROUP,
};
use crate::plugin::{PluginRuntime, WasmStrategy};
use crate::registry::store::{PatchFn, Subresource, UpdatedObject};
use crate::registry::{ResourceMap, Served, Store};
use crate::strategy::{ResourceDescription, Strategy};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::blob_store::BlobStore;
use wasm_apiserver_storage::factory::StorageFactory;
use wasm_apiserver_storage::Storage;

/// Where a plugin comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    /// A file of the plugin folder.
    File(PathBuf),
    /// A `StrategyPlugin` object naming an uploaded component.
    Object,
}

struct Entry {
    source: Source,
    /// This server's `status.replicas` entry.
    status: PluginStatus,
    active: Option<Arc<WasmStrategy>>,
    /// The file's sha256 as last read, or the sha256 the object asked for at the last attempt.
    wanted: String,
    /// The object's generation at the last attempt.
    attempted_generation: i64,
    /// The last attempt may succeed later (the component was not uploaded, or could not be
    /// read): the next sync tries again.
    retry: bool,
    /// The CRD the plugin attaches to (`spec.extends`) instead of serving alone.
    extends: Option<String>,
    /// Why the attached plugin serves nothing now (its CRD not served, or no longer matching
    /// it), as last written to its status ([`attachments::status_while`]).
    detached: Option<String>,
}

impl Entry {
    fn new(source: Source, server: &str) -> Entry {
        Entry {
            source,
            status: PluginStatus::new(server),
            active: None,
            wanted: String::new(),
            attempted_generation: 0,
            retry: false,
            extends: None,
            detached: None,
        }
    }
}

/// The outcome of one rescan or sync for one plugin, for logs and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A version was activated.
    Activated(String),
    /// A version was refused; the previous one (if any) keeps serving.
    Failed(String, String),
    /// The file (or object) was removed, or the object made inactive.
    Removed(String),
}

/// Owns the loaded plugins and swaps them into the server's path-to-storage map.
pub struct PluginManager {
    runtime: Arc<PluginRuntime>,
    dir: PathBuf,
    factory: StorageFactory,
    storages: Mutex<BTreeMap<(String, String), Arc<dyn Storage>>>,
    entries: Mutex<BTreeMap<String, Entry>>,
    plugins: Store,
    blobs: BlobStore,
    server_id: String,
    served: Arc<Served>,
    sync_lock: tokio::sync::Mutex<()>,
    /// The CustomResourceDefinitions and what serves them.
    crds: Arc<CrdRegistry>,
    /// The CRDs' strategies with a plugin attached.
    attachments: Attachments,
    /// Other resources the host serves ([`PluginManager::with_host_resources`]).
    host_resources: Vec<Store>,
}

impl PluginManager {
    /// A manager for the plugins of `dir` and of the `StrategyPlugin` objects, and for the
    /// CustomResourceDefinitions (served by the configured component in `crd_plugin`, loaded
    /// when the first CRD is served, so a server without CRDs pays nothing for it), storing
    /// resources (and uploaded components) through `factory`, publishing what is served into
    /// `served`, and reporting status as `server_id`.
    pub fn new(
        runtime: Arc<PluginRuntime>,
        dir: PathBuf,
        factory: StorageFactory,
        served: Arc<Served>,
        server_id: &str,
        crd_plugin: Option<PathBuf>,
    ) -> PluginManager {
        let strategy = Arc::new(StrategyPluginStrategy::new());
        let d = strategy.description().clone();
        let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
        let plugins = Store::new(strategy, storage);
        let blobs = components(&factory);
        let crds = Arc::new(CrdRegistry::new(runtime.clone(), &factory, crd_plugin));
        PluginManager {
            runtime,
            dir,
            factory,
            storages: Mutex::new(BTreeMap::new()),
            entries: Mutex::new(BTreeMap::new()),
            plugins,
            blobs,
            server_id: server_id.to_string(),
            served,
            sync_lock: tokio::sync::Mutex::new(()),
            crds,
            attachments: Attachments::default(),
            host_resources: Vec::new(),
        }
    }

    /// Serve `stores` too (resources the host owns, as the admission policies).
    pub fn with_host_resources(mut self, stores: Vec<Store>) -> PluginManager {
        self.host_resources.extend(stores);
        self
    }

    /// The StorageFactory every served resource's storage comes from (its watch caches'
    /// figures, the backends an encryption reload checks).
    pub fn factory(&self) -> &StorageFactory {
        &self.factory
    }

    /// Share the manager and point the CRD resource's hook at it: a CRD's create or update
    /// returns once this server serves it.
    pub fn shared(self) -> Arc<PluginManager> {
        let m = Arc::new(self);
        let weak = Arc::downgrade(&m);
        m.crds.hook().bind(Box::new(move |stored| {
            let weak = weak.clone();
            Box::pin(async move {
                if let Some(m) = weak.upgrade() {
                    m.crd_seen(stored).await;
                }
            })
        }));
        m
    }

    /// The `customresourcedefinitions` resource.
    pub fn crd_store(&self) -> &Store {
        self.crds.store()
    }

    /// List the CRDs, take them as the CRDs there are, and sync them
    /// ([`PluginManager::sync_crds`]). Returns the list's resourceVersion. Errors: the list's.
    pub async fn sync_crds_now(&self) -> Result<String, crate::status::ApiError> {
        let store = self.crd_store();
        let list = store
            .list("", &crate::registry::ListOptions::default())
            .await?;
        let rv = crate::registry::store::list_meta(&list)["resourceVersion"]
            .as_str()
            .unwrap_or("")
            .to_string();
        self.crds
            .known()
            .replace(store.decode_items(&list)?, rv.parse().unwrap_or(0));
        self.sync_crds().await;
        Ok(rv)
    }

    /// Take `stored` (a CRD as written) as the CRD of its name and sync
    /// ([`PluginManager::sync_crds`]): only what changed is configured, published and
    /// written. Always syncs — the write's answer waits for it — even when a watch event
    /// brought the object first (its sync may still run: this one waits for it).
    pub async fn crd_seen(&self, stored: Arc<Value>) {
        self.crds.known().observe(stored);
        self.sync_crds().await;
    }

    /// A watch event's CRD: synced as [`PluginManager::crd_seen`] when it is newer than the
    /// one known.
    pub async fn crd_event(&self, object: Arc<Value>) {
        if self.crds.known().observe(object) {
            self.sync_crds().await;
        }
    }

    /// Forget the CRD `name`, deleted at `rv`, and sync ([`PluginManager::sync_crds`]).
    pub async fn crd_deleted(&self, name: &str, rv: u64) {
        self.crds.known().forget(name, rv);
        self.sync_crds().await;
    }

    /// Bring what is served in line with the CRDs known ([`Known::all`](super::crds::Known::all),
    /// [`CrdRegistry::sync`]), publish when it changed, and write the statuses not yet as
    /// wanted.
    pub async fn sync_crds(&self) {
        let (objects, verdicts, detached) = {
            let _one_at_a_time = self.sync_lock.lock().await;
            // Read under the lock: a sync of an older view must not undo a newer one.
            let objects = self.crds.known().all();
            let (publish, verdicts) = self
                .crds
                .sync(&objects, &|g: &str, p: &str| self.plugin_serving(g, p))
                .await;
            if publish {
                self.served.publish(self.build_map());
            }
            (objects, verdicts, self.recheck_attachments())
        };
        self.crds.write_statuses(verdicts).await;
        // Deleted CRDs: their custom resources go first (kube's finalizing controller).
        for (name, served) in self.crds.terminating(&objects) {
            let instances = served.map(|s| {
                let storage = self.storage_for(s.description());
                Store::new(s, storage)
            });
            self.crds.spawn_clean_up(name, instances);
        }
        for (name, st) in detached {
            self.write_status(&name, &st, None).await;
        }
    }

    /// The status of each attached plugin whose CRD stopped (or started again) being served
    /// as the plugin describes it (`build_map` serves the pair only while it is), to write.
    /// Called under the sync lock, so that a later sync's verdict is never overwritten.
    fn recheck_attachments(&self) -> Vec<(String, PluginStatus)> {
        let served = self.crds.served();
        let mut entries = self.entries.lock().unwrap();
        let attached = entries.iter_mut().filter_map(|(name, e)| {
            let (Some(crd), Some(s)) = (&e.extends, &e.active) else {
                return None;
            };
            let c = served.iter().find(|c| &c.name == crd);
            let now = attachments::check(crd, s.description(), c.map(|c| c.strategy.description()));
            (now.as_ref().err() != e.detached.as_ref()).then(|| {
                e.detached = now.err();
                (
                    name.clone(),
                    attachments::status_while(&e.status, &e.detached),
                )
            })
        });
        attached.collect()
    }

    /// The plugin (by name) serving `group`/`plural`, if one does.
    fn plugin_serving(&self, group: &str, plural: &str) -> Option<String> {
        if group == STATUS_GROUP
            || (group == super::customresourcedefinitions::CRD_GROUP
                && plural == super::customresourcedefinitions::CRD_PLURAL)
        {
            return Some("wasm-apiserver".into());
        }
        let entries = self.entries.lock().unwrap();
        entries.iter().find_map(|(name, e)| {
            if e.extends.is_some() {
                return None;
            }
            let d = e.active.as_ref()?.description();
            (d.group == group && d.plural == plural).then(|| name.clone())
        })
    }

    /// The plugin folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's identity in `status.replicas`.
    pub fn server_id(&self) -> &str {
        &self.server_id
    }

    /// The uploaded components.
    pub fn components(&self) -> &BlobStore {
        &self.blobs
    }

    /// The `strategyplugins` resource.
    pub fn plugins(&self) -> &Store {
        &self.plugins
    }

    /// This server's status of every plugin it knows, by name.
    pub fn statuses(&self) -> BTreeMap<String, PluginStatus> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .map(|(k, e)| (k.clone(), attachments::status_while(&e.status, &e.detached)))
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
    /// and record every file's status. One rescan or sync runs at a time.
    pub async fn rescan(&self) -> Vec<Change> {
        let _one_at_a_time = self.sync_lock.lock().await;
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
                    matches!(e.source, Source::File(_))
                        && !files.contains_key(*stem)
                        && e.status.state != PluginState::Removed
                })
                .map(|(stem, _)| stem.clone())
                .collect()
        };
        for stem in removed {
            let mut entries = self.entries.lock().unwrap();
            let e = entries.get_mut(&stem).expect("listed above");
            e.active = None;
            e.status.state = PluginState::Removed;
            e.status.sha256 = None;
            e.status.last_error = None;
            e.wanted.clear();
            tracing::info!(plugin = %stem, "plugin file removed: resource unregistered, data kept");
            count_reload(&stem, "removed");
            changes.push(Change::Removed(stem));
        }

        for (stem, path) in &files {
            let bytes = match stable_read(path).await {
                Some(b) => b,
                None => continue, // still being written; a later event retries
            };
            // An admission policy component is the wasm policy source's (it reads the folder
            // too: `admission/wasm/source.rs`), not a strategy to serve.
            if crate::plugin::admission_plugin::is_admission(&bytes) {
                continue;
            }
            let sha = hex::encode(Sha256::digest(&bytes));
            {
                let mut entries = self.entries.lock().unwrap();
                match entries.get_mut(stem) {
                    Some(e) if e.source == Source::Object => {
                        let err = format!("a StrategyPlugin object named {stem:?} exists; rename the file or delete the object");
                        tracing::error!(plugin = %stem, file = %path.display(), error = %err, "plugin file refused");
                        count_reload(stem, "failure");
                        changes.push(Change::Failed(stem.clone(), err));
                        continue;
                    }
                    Some(e)
                        if e.wanted == sha
                            && e.status.state != PluginState::Removed
                            && !e.retry =>
                    {
                        continue
                    }
                    // The file is back to the version that is serving (a broken file was fixed
                    // by restoring it): nothing to load, the status is Active again.
                    Some(e) if e.active.is_some() && e.status.sha256.as_deref() == Some(&sha) => {
                        e.wanted = sha;
                        e.status.state = PluginState::Active;
                        e.status.last_error = None;
                        continue;
                    }
                    _ => {}
                }
            }
            let source = Source::File(path.clone());
            let outcome = self.load(stem, bytes).await;
            let mut entries = self.entries.lock().unwrap();
            let e = entries
                .entry(stem.clone())
                .or_insert_with(|| Entry::new(source.clone(), &self.server_id));
            e.source = source;
            e.wanted = sha.clone();
            e.status.observed_generation = 1;
            e.retry = matches!(outcome, Err((_, true)));
            changes.push(record(stem, e, outcome.map_err(|(e, _)| e), &sha));
        }

        self.served.publish(self.build_map());
        for (name, status, file) in self.file_records() {
            let stored = match self.plugins.get("", &name, "").await {
                Ok(o) => Some(o),
                Err(e) if e.code == 404 => None,
                Err(e) => {
                    tracing::warn!(plugin = %name, error = %e.message, "cannot record plugin status");
                    continue;
                }
            };
            if let Err(e) = self
                .record_file(&name, &status, &file, stored.as_ref())
                .await
            {
                tracing::warn!(plugin = %name, error = %e, "cannot record plugin status");
            }
        }
        changes
    }

    /// Write a folder file's status into its record `stored` (`None`: missing, created unless
    /// the file is gone too). A name held by an object is left alone: its status is the
    /// object's to report. Errors: the record could not be created.
    async fn record_file(
        &self,
        name: &str,
        status: &PluginStatus,
        file: &str,
        stored: Option<&Value>,
    ) -> Result<(), String> {
        match stored {
            Some(o) if o.pointer("/spec/sha256").is_some() => Ok(()),
            Some(o) => {
                self.write_status(name, status, Some(o)).await;
                Ok(())
            }
            None if status.state == PluginState::Removed => Ok(()),
            None => {
                let w = self
                    .plugins
                    .create(
                        "",
                        file_record(name, file),
                        &crate::registry::CreateOptions::host(),
                    )
                    .await
                    .map_err(|e| e.message)?;
                self.write_status(name, status, Some(&w.object)).await;
                Ok(())
            }
        }
    }

    /// Bring what is served in line with the `StrategyPlugin` objects (all of them, as listed):
    /// activate each object's component when it changed, unregister deleted and inactive
    /// ones, publish, and write this server's `status.replicas` entry where it changed (also
    /// for the records of folder files, recreated if deleted). A refused version never
    /// replaces the serving one.
    pub async fn sync_objects(&self, objects: &[Arc<Value>]) -> Vec<Change> {
        let _one_at_a_time = self.sync_lock.lock().await;
        let mut changes = Vec::new();
        let mut publish = false;
        let wanted: BTreeMap<&str, &Value> = objects
            .iter()
            .filter(|o| o.pointer("/spec/sha256").is_some())
            .map(|o| (accessor(o).name(), o.as_ref()))
            .collect();

        // Deleted objects.
        let gone: Vec<String> = {
            let entries = self.entries.lock().unwrap();
            entries
                .iter()
                .filter(|(n, e)| e.source == Source::Object && !wanted.contains_key(n.as_str()))
                .map(|(n, _)| n.clone())
                .collect()
        };
        for name in gone {
            let had = self.entries.lock().unwrap().remove(&name);
            if had.is_some_and(|e| e.active.is_some()) {
                tracing::info!(plugin = %name, "StrategyPlugin deleted: resource unregistered, data kept");
                count_reload(&name, "removed");
                publish = true;
                changes.push(Change::Removed(name));
            }
        }

        let mut statuses: Vec<(String, PluginStatus)> = Vec::new();
        // Oldest claim first (then by name): when two objects claim one resource, every
        // replica — also one that starts later — serves the older and refuses the newer.
        let mut by_age: Vec<(&str, &Value)> = wanted.iter().map(|(n, o)| (*n, *o)).collect();
        by_age.sort_by_key(|(n, o)| (accessor(o).creation_timestamp(), *n));
        for (name, obj) in &by_age {
            let generation = accessor(obj).generation().unwrap_or(1);
            let sha = obj["spec"]["sha256"].as_str().unwrap_or("").to_string();
            let active = obj["spec"]["active"].as_bool().unwrap_or(true);
            let extends = obj["spec"]["extends"].as_str().map(str::to_string);
            let attempt = {
                let mut entries = self.entries.lock().unwrap();
                // A removed file's name is free for an object.
                if entries.get(*name).is_some_and(|e| {
                    e.source != Source::Object && e.status.state == PluginState::Removed
                }) {
                    entries.remove(*name);
                }
                if let Some(e) = entries.get(*name) {
                    if let Source::File(p) = &e.source {
                        let mut st = PluginStatus::new(&self.server_id);
                        st.observed_generation = generation;
                        st.last_error = Some(format!(
                            "this server serves the plugin file {} under the same name; remove the file or rename the object",
                            file_name(p)
                        ));
                        statuses.push((name.to_string(), st));
                        continue;
                    }
                }
                let e = entries
                    .entry(name.to_string())
                    .or_insert_with(|| Entry::new(Source::Object, &self.server_id));
                if e.extends != extends {
                    // Another object under this name (deleted and created again in one
                    // sync): load it afresh, attached or not.
                    if e.active.take().is_some() {
                        publish = true;
                        changes.push(Change::Removed(name.to_string()));
                    }
                    e.wanted.clear();
                    e.extends = extends;
                }
                if !active {
                    if e.active.take().is_some() {
                        tracing::info!(plugin = %name, "StrategyPlugin made inactive: resource unregistered, data kept");
                        count_reload(name, "removed");
                        publish = true;
                        changes.push(Change::Removed(name.to_string()));
                    }
                    e.status.state = PluginState::Inactive;
                    e.status.sha256 = None;
                    e.status.last_error = None;
                    e.status.observed_generation = generation;
                    e.wanted.clear();
                    false
                } else if e.active.is_some() && e.status.sha256.as_deref() == Some(sha.as_str()) {
                    // Serving already (a rollback to the serving version, or a spec change
                    // that keeps the component).
                    e.status.state = PluginState::Active;
                    e.status.last_error = None;
                    e.status.observed_generation = generation;
                    e.wanted = sha.clone();
                    false
                } else {
                    e.wanted != sha || e.attempted_generation != generation || e.retry
                }
            };
            if attempt {
                let outcome = match self.blobs.get(&sha).await {
                    Ok(Some(bytes)) => self.load(name, bytes).await,
                    Ok(None) => Err((format!("the component sha256:{sha} has not been uploaded (PUT it to /apis/{STATUS_GROUP}/v1/{COMPONENTS_PLURAL}/{sha})"), true)),
                    Err(e) => Err((format!("reading the component sha256:{sha}: {e}"), true)),
                };
                let mut entries = self.entries.lock().unwrap();
                let e = entries.get_mut(*name).expect("inserted above");
                e.wanted = sha.clone();
                e.attempted_generation = generation;
                e.status.observed_generation = generation;
                e.retry = matches!(outcome, Err((_, true)));
                let before = e.status.last_error.clone();
                let change = record(name, e, outcome.map_err(|(e, _)| e), &sha);
                publish |= matches!(change, Change::Activated(_));
                // A missing component is reported once, then retried quietly.
                if !(e.retry && before == e.status.last_error) {
                    changes.push(change);
                }
            }
            let st = {
                let entries = self.entries.lock().unwrap();
                attachments::status_while(&entries[*name].status, &entries[*name].detached)
            };
            statuses.push((name.to_string(), st));
        }
        if publish {
            self.served.publish(self.build_map());
        }

        let by_name: BTreeMap<&str, &Value> = objects
            .iter()
            .map(|o| (accessor(o).name(), o.as_ref()))
            .collect();
        for (name, st) in statuses {
            self.write_status(&name, &st, by_name.get(name.as_str()).copied())
                .await;
        }
        // The records of this server's folder files: recreated when deleted (unless the file
        // is gone too), entries kept.
        for (name, st, file) in self.file_records() {
            let stored = by_name.get(name.as_str()).copied();
            if let Err(e) = self.record_file(&name, &st, &file, stored).await {
                tracing::debug!(plugin = %name, error = %e, "cannot record plugin status");
            }
        }
        changes
    }

    /// (name, status, file name) of every plugin from the folder.
    fn file_records(&self) -> Vec<(String, PluginStatus, String)> {
        let entries = self.entries.lock().unwrap();
        entries
            .iter()
            .filter_map(|(name, e)| match &e.source {
                Source::File(p) => Some((name.clone(), e.status.clone(), file_name(p))),
                Source::Object => None,
            })
            .collect()
    }

    /// Compile (or take from the caches), check and describe `bytes` off the async workers,
    /// then check that it may serve under `name`. Errors: the reason, and whether trying again
    /// later may succeed (a clash with another claimant, which may go away).
    async fn load(&self, name: &str, bytes: Vec<u8>) -> Result<WasmStrategy, (String, bool)> {
        let runtime = self.runtime.clone();
        let n = name.to_string();
        let loaded = tokio::task::spawn_blocking(move || runtime.load_bytes(&n, &bytes))
            .await
            .map_err(|e| format!("loader panicked: {e}"))
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| (e, false))?;
        self.check_activation(name, &loaded)
            .map_err(|e| (e, true))?;
        Ok(loaded)
    }

    /// Refuse a new version that serves another plugin's resource (its group and plural, in
    /// any version: both would share the stored objects), or that changes the resource served
    /// under this name (move a resource by removing the plugin and adding a new one). A new
    /// build may change the resource's versions, its storage version included: objects stored
    /// in the old one are converted when read.
    fn check_activation(&self, name: &str, s: &WasmStrategy) -> Result<(), String> {
        let d = s.description();
        let key = (d.group.as_str(), d.plural.as_str());
        let entries = self.entries.lock().unwrap();
        for (other, e) in entries.iter() {
            let Some(active) = &e.active else { continue };
            let od = active.description();
            let okey = (od.group.as_str(), od.plural.as_str());
            if other == name {
                if okey != key || od.namespaced != d.namespaced || od.kind != d.kind {
                    return Err(format!(
                        "it changes the resource served under this name from {} ({}, {}) to {} ({}, {}); remove the plugin and add a new one to move a resource",
                        od.group_resource(),
                        od.kind,
                        if od.namespaced { "namespaced" } else { "cluster-scoped" },
                        d.group_resource(),
                        d.kind,
                        if d.namespaced { "namespaced" } else { "cluster-scoped" },
                    ));
                }
            } else if okey == key {
                let by = match &e.source {
                    Source::File(p) => format!("the plugin file {} of this server", file_name(p)),
                    Source::Object => format!("the StrategyPlugin {other:?}"),
                };
                return Err(format!("{} is already served by {by}", d.group_resource()));
            }
        }
        if d.group == STATUS_GROUP {
            return Err(format!(
                "the group {STATUS_GROUP} is reserved for the server"
            ));
        }
        let extends = entries.get(name).and_then(|e| e.extends.clone());
        drop(entries);
        if let Some(crd_name) = extends {
            let served = self.crds.served();
            let crd = served.iter().find(|c| c.name == crd_name);
            return attachments::check(&crd_name, d, crd.map(|c| c.strategy.description()));
        }
        if let Some(crd) = self.crds.serving(&d.group, &d.plural) {
            return Err(format!(
                "{} is already served by the CustomResourceDefinition {crd:?}",
                d.group_resource()
            ));
        }
        Ok(())
    }

    /// The map of what is served now: the host's resources, the active plugins and the
    /// served CRDs. A resource whose strategy and storage are those the current snapshot
    /// serves keeps its Stores ([`ResourceMap::reuse`]), so the next snapshot rebuilds the
    /// documents of what changed only.
    fn build_map(&self) -> ResourceMap {
        let previous = self.served.load();
        let mut map = ResourceMap::default();
        // Reused when the current snapshot serves this strategy over this storage; built
        // (with its field managers) only when not.
        let mut add =
            |strategy: Arc<dyn Strategy>, storage: Arc<dyn Storage>, build: &dyn Fn() -> Store| {
                match map.reuse(&previous.resources, &strategy, &storage)? {
                    true => Ok(()),
                    false => map.insert(build()),
                }
            };
        let host_resources = [&self.plugins, self.crds.store()];
        for host in host_resources.into_iter().chain(&self.host_resources) {
            let _ = add(host.strategy.clone(), host.storage.clone(), &|| {
                host.clone()
            });
        }
        let entries = self.entries.lock().unwrap();
        let mut attached = BTreeMap::new();
        for (name, e) in entries.iter() {
            if let (Some(s), Some(crd)) = (&e.active, &e.extends) {
                attached.insert(crd.clone(), s.clone());
                continue;
            }
            if let Some(s) = &e.active {
                let storage = self.storage_for(s.description());
                let build = || Store::new(s.clone(), storage.clone());
                if let Err(err) = add(s.clone(), storage.clone(), &build) {
                    tracing::error!(plugin = %name, error = %err, "plugin not served");
                }
            }
        }
        drop(entries);
        let served = self.crds.served();
        self.attachments
            .retain(&served.iter().map(|c| c.name.as_str()).collect::<Vec<_>>());
        for crd in served {
            let (name, scale) = (&crd.name, &crd.scale);
            // Checked again here: the CRD may have been replaced since the plugin attached.
            let plugin = attached.get(name).filter(|p| {
                attachments::check(name, p.description(), Some(crd.strategy.description())).is_ok()
            });
            // An attached plugin's hooks see the storage version: the CRD's run there too.
            let write_hooks =
                (plugin.is_none() && !crd.write_hooks.is_empty()).then(|| crd.write_hooks.clone());
            let s = self.attachments.strategy(name, &crd.strategy, plugin);
            let storage = self.storage_for(s.description());
            let build = || {
                let mut store = Store::new(s.clone(), storage.clone());
                store.scale = (!scale.is_empty()).then(|| scale.clone());
                store.write_hooks = write_hooks.clone();
                store
            };
            if let Err(err) = add(s.clone(), storage.clone(), &build) {
                tracing::error!(crd = %name, error = %err, "CustomResourceDefinition not served");
            }
        }
        map
    }

    /// Write `status` as this server's `status.replicas` entry of the object `name`, unless
    /// `stored` (the object as last read) already has it. Merged into the current object
    /// inside the update, so servers writing their entries at once do not lose each other's.
    /// A failure is logged (the next sync tries again).
    async fn write_status(&self, name: &str, status: &PluginStatus, stored: Option<&Value>) {
        if let Some(o) = stored {
            if with_replica_status(o, status).is_none() {
                return;
            }
        }
        let entry = status.clone();
        let merge: PatchFn = Arc::new(move |current: &Value| {
            Ok(with_replica_status(current, &entry).unwrap_or_else(|| current.clone()))
        });
        let written = self
            .plugins
            .update(
                "",
                name,
                UpdatedObject::Patch(merge),
                &crate::registry::UpdateOptions::host(Subresource::Status),
            )
            .await;
        if let Err(e) = written {
            tracing::warn!(plugin = %name, error = %e.message, "cannot record plugin status");
        }
    }
}

/// Apply a load's outcome to an entry: activate, or keep the last good version.
fn record(name: &str, e: &mut Entry, outcome: Result<WasmStrategy, String>, sha: &str) -> Change {
    match outcome {
        Ok(s) => {
            let d = s.description();
            e.status.resource = format!("{}/{}", d.group_resource(), d.version);
            e.status.wit_version = s.wit_version().to_string();
            e.status.state = PluginState::Active;
            e.status.activations += 1;
            e.status.last_error = None;
            e.status.loaded_at = Some(wasm_apiserver_apimachinery::time::now());
            e.status.sha256 = Some(sha.to_string());
            e.active = Some(Arc::new(s));
            e.detached = None;
            tracing::info!(plugin = %name, resource = %e.status.resource, activations = e.status.activations, "plugin activated");
            count_reload(name, "success");
            Change::Activated(name.to_string())
        }
        Err(err) => {
            // The last good version (if any) keeps serving; the status shows that the
            // version asked for was refused, and `sha256` which version serves.
            e.status.state = PluginState::Failed;
            let repeated = e.status.last_error.as_deref() == Some(err.as_str());
            e.status.last_error = Some(err.clone());
            if !repeated {
                tracing::error!(plugin = %name, error = %err, "plugin refused; the last good version (if any) keeps serving");
                count_reload(name, "failure");
            }
            Change::Failed(name.to_string(), err)
        }
    }
}

/// Count a load, reload or removal in `wasm_apiserver_plugin_reloads_total{plugin, result}`
/// (result: `success`, `failure`, `removed`).
fn count_reload(name: &str, outcome: &str) {
    static RELOADS: std::sync::LazyLock<prometheus::IntCounterVec> =
        std::sync::LazyLock::new(|| {
            crate::metrics::counter_vec(
                "wasm_apiserver_plugin_reloads_total",
                "Plugin loads and reloads by plugin and result (success, failure, removed).",
                &["plugin", "result"],
            )
        });
    RELOADS.with_label_values(&[name, outcome]).inc();
}

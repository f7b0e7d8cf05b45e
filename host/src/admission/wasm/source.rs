//! The wasm admission policies this server enforces: every `AdmissionPlugin` object's component
//! fetched from the uploaded components, loaded (`PluginRuntime::load_admission`: compiled
//! off the async workers, its self-description checked), its context reads checked against
//! what the object grants and its settings against the component's `validate-settings` —
//! and only then swapped in. Fed, like the ValidatingAdmissionPolicy source, by a list and a
//! watch of the objects and by each write's
//! [`AfterWrite`](crate::registry::after_write::AfterWrite) hook, so a policy is enforced on
//! this server before its create returns (when it loads within [`WRITE_WAITS_FOR_LOAD`]) and on
//! the others within a watch event. A refusal of reads the object no longer grants removes the
//! last good version too; a full list records what it lacks as deleted at its
//! resourceVersion.
//!
//! As for a `StrategyPlugin`, a version that fails keeps the last good one serving, and each
//! server writes its own entry of `status.replicas` (state, observed generation, the serving
//! sha256, the last error). A change of the object's status alone loads nothing.

use super::resources::{parse_spec, AdmissionPluginStrategy, PluginSpec};
use crate::admission::policy::matching::MatchResources;
use crate::plugin::{PluginRuntime, WasmAdmissionPlugin};
use crate::registry::after_write::AfterWrite;
use crate::registry::store::{PatchFn, UpdatedObject};
use crate::registry::write_options::Subresource;
use crate::registry::{ListOptions, Store, UpdateOptions};
use crate::reload::{with_replica_status, PluginState, PluginStatus};
use crate::strategy::Strategy;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::blob_store::BlobStore;
use wasm_apiserver_storage::factory::StorageFactory;
use wasm_apiserver_storage::WatchEvent;

/// One enforced policy.
pub struct LoadedPolicy {
    /// The object's name.
    pub name: String,
    /// The loaded component.
    pub plugin: WasmAdmissionPlugin,
    /// The object's spec.
    pub spec: PluginSpec,
    /// Which requests it admits: the object's rules (else the component's) and selectors.
    pub matcher: MatchResources,
}

/// What the source knows of one object: the newest resourceVersion seen, and the
/// (uid, generation) last acted on.
#[derive(Clone, Default)]
struct Seen {
    rv: u64,
    uid: String,
    generation: i64,
}

/// What loads components: set once by [`WasmPolicySource::start`].
struct Loader {
    runtime: Arc<PluginRuntime>,
    components: BlobStore,
    server: String,
    store: Arc<Store>,
}

/// The loaded policies by name, swapped as a whole on each change.
#[derive(Default)]
pub struct WasmPolicySource {
    current: RwLock<Arc<BTreeMap<String, Arc<LoadedPolicy>>>>,
    seen: Mutex<BTreeMap<String, Seen>>,
    /// The resourceVersion each deleted object was deleted at (a late copy stays deleted).
    deleted: Mutex<BTreeMap<String, u64>>,
    /// This server's status entries, by object name.
    statuses: Mutex<BTreeMap<String, PluginStatus>>,
    /// One load at a time.
    loading: tokio::sync::Mutex<()>,
    /// The first full list has been loaded.
    synced: std::sync::atomic::AtomicBool,
    loader: OnceLock<Loader>,
    /// The policies of the plugin folder's files, by file stem (`folder.rs`).
    folder: RwLock<Arc<BTreeMap<String, Arc<LoadedPolicy>>>>,
    /// A plugin folder is read, and its first reading is not done yet.
    folder_pending: std::sync::atomic::AtomicBool,
}

/// How the refusal of a component not uploaded (yet) starts.
const NOT_UPLOADED: &str = "no component";
/// How the refusal of reads the object does not grant starts.
const NOT_GRANTED: &str = "the component reads";
/// The refusals retried at the object's next event.
const RETRIED: [&str; 3] = [
    NOT_UPLOADED,
    "cannot read the component",
    "loading panicked",
];

fn rv(obj: &Value) -> u64 {
    accessor(obj).resource_version().parse().unwrap_or(0)
}

/// The component's rules as `resourceRules` JSON.
pub(super) fn rules_json(plugin: &WasmAdmissionPlugin) -> Value {
    plugin
        .description()
        .rules
        .iter()
        .map(|r| {
            json!({"operations": r.operations, "apiGroups": r.api_groups,
                "apiVersions": r.api_versions, "resources": r.resources, "scope": r.scope})
        })
        .collect()
}

impl WasmPolicySource {
    /// What is enforced now.
    pub fn current(&self) -> Arc<BTreeMap<String, Arc<LoadedPolicy>>> {
        self.current.read().unwrap().clone()
    }

    /// Start loading: components of `components` with `runtime`; this server's status entries
    /// (as `server`) written through `store`, which is also listed and watched (until the
    /// process ends). Called once; later calls do nothing.
    pub fn start(
        self: &Arc<Self>,
        runtime: Arc<PluginRuntime>,
        components: BlobStore,
        server: &str,
        store: Arc<Store>,
    ) {
        let loader = Loader {
            runtime,
            components,
            server: server.to_string(),
            store: store.clone(),
        };
        if self.loader.set(loader).is_err() {
            return;
        }
        let source = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = source.follow(&store).await {
                    tracing::warn!(error = %e, "AdmissionPlugin watch failed; re-listing");
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
    }

    /// A written or watched object: loaded (or its load retried) unless what is known is as
    /// new, or it was deleted since, or only its status changed.
    pub async fn observe(&self, obj: &Value) {
        let Some(loader) = self.loader.get() else {
            return;
        };
        // The status is written after the load lock is released: its write comes back here.
        if let Some((name, status)) = self.observe_locked(loader, obj).await {
            write_status(&loader.store, &name, &status, obj).await;
        }
    }

    async fn observe_locked(&self, loader: &Loader, obj: &Value) -> Option<(String, PluginStatus)> {
        let _one = self.loading.lock().await;
        let m = accessor(obj);
        let (name, rv, uid) = (m.name().to_string(), rv(obj), m.uid().to_string());
        let generation = m.generation().unwrap_or(1);
        {
            let mut seen = self.seen.lock().unwrap();
            let deleted = self.deleted.lock().unwrap().get(&name).copied();
            let s = seen.entry(name.clone()).or_default();
            if s.rv >= rv || deleted.is_some_and(|d| d >= rv) {
                return None;
            }
            s.rv = rv;
            if s.uid == uid && s.generation == generation {
                return None;
            }
            s.uid = uid;
            s.generation = generation;
        }
        let previous = self.current().get(&name).cloned();
        let outcome = self.load(loader, &name, obj, previous.as_deref()).await;
        let mut status = self
            .statuses
            .lock()
            .unwrap()
            .get(&name)
            .cloned()
            .unwrap_or_else(|| PluginStatus::new(&loader.server));
        status.observed_generation = generation;
        match outcome {
            Ok(policy) => {
                status.state = PluginState::Active;
                status.sha256 = Some(policy.plugin.sha256().to_string());
                status.wit_version = policy.plugin.wit_version().to_string();
                status.last_error = None;
                if previous
                    .as_ref()
                    .is_none_or(|p| p.plugin.sha256() != policy.plugin.sha256())
                {
                    status.activations += 1;
                    status.loaded_at = Some(wasm_apiserver_apimachinery::time::now());
                }
                tracing::info!(policy = %name, sha256 = %policy.plugin.sha256(), "admission plugin active");
                let deleted = self.deleted.lock().unwrap().get(&name).copied();
                if deleted.is_none_or(|d| d < rv) {
                    self.change(|m| drop(m.insert(name.clone(), Arc::new(policy))));
                }
            }
            Err(e) => {
                tracing::error!(policy = %name, error = %e, "admission plugin refused; the last good version (if any) keeps enforcing");
                status.state = PluginState::Failed;
                // Reads the object no longer grants stop now: the last good version goes.
                if e.starts_with(NOT_GRANTED) {
                    self.change(|m| drop(m.remove(&name)));
                }
                // A component not uploaded yet, or not readable now, is looked for again at
                // the object's next event (e.g. another replica's status write); other
                // refusals wait for a change of the spec.
                if RETRIED.iter().any(|r| e.starts_with(r)) {
                    if let Some(s) = self.seen.lock().unwrap().get_mut(&name) {
                        s.generation = 0;
                    }
                }
                status.last_error = Some(e);
            }
        }
        self.statuses
            .lock()
            .unwrap()
            .insert(name.clone(), status.clone());
        Some((name, status))
    }

    /// Fetch, load and check the object's component (the previous version's when the sha256
    /// is the same); the reason it cannot be enforced otherwise.
    async fn load(
        &self,
        loader: &Loader,
        name: &str,
        obj: &Value,
        previous: Option<&LoadedPolicy>,
    ) -> Result<LoadedPolicy, String> {
        let spec = parse_spec(obj).map_err(|errs| {
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        // Policies of one component share it — its compiled code and its warm instances
        // (its functions are pure functions of their arguments, the contract says) — so it is
        // named by its hash, not by one of them.
        let shared = previous
            .filter(|p| p.plugin.sha256() == spec.sha256)
            .map(|p| p.plugin.clone())
            .or_else(|| {
                self.current()
                    .values()
                    .find(|p| p.plugin.sha256() == spec.sha256)
                    .map(|p| p.plugin.clone())
            });
        let plugin = match shared {
            Some(p) => p,
            None => {
                let bytes = loader
                    .components
                    .get(&spec.sha256)
                    .await
                    .map_err(|e| format!("cannot read the component: {e}"))?
                    .ok_or_else(|| {
                        format!(
                            "{NOT_UPLOADED} {} has been uploaded (`wasm-apiserver plugin push FILE --upload-only`)",
                            spec.sha256
                        )
                    })?;
                let runtime = loader.runtime.clone();
                let n = format!("sha256:{}", &spec.sha256[..12]);
                tokio::task::spawn_blocking(move || runtime.load_admission(&n, &bytes))
                    .await
                    .map_err(|e| format!("loading panicked: {e}"))?
                    .map_err(|e| e.reason.to_string())?
            }
        };
        for read in &plugin.description().context_reads {
            let granted = spec
                .context_reads
                .iter()
                .any(|g| g.group == read.group && g.resource == read.resource);
            if !granted {
                return Err(format!(
                    "{NOT_GRANTED} {}, which spec.contextReads does not grant",
                    super::context::group_resource(&read.group, &read.resource)
                ));
            }
        }
        let (p, settings) = (plugin.clone(), spec.settings.clone());
        let checked = tokio::task::spawn_blocking(move || p.validate_settings(&settings))
            .await
            .map_err(|e| format!("validate-settings panicked: {e}"))?;
        match checked {
            Ok(Ok(())) => {}
            Ok(Err(m)) => return Err(format!("spec.settings: refused by the component: {m}")),
            Err(fault) => return Err(fault.to_string()),
        }
        let mut constraints =
            json!({"resourceRules": spec.rules.clone().unwrap_or_else(|| rules_json(&plugin))});
        if let Some(s) = &spec.namespace_selector {
            constraints["namespaceSelector"] = s.clone();
        }
        if let Some(s) = &spec.object_selector {
            constraints["objectSelector"] = s.clone();
        }
        let matcher = MatchResources::parse(Some(&constraints))?;
        Ok(LoadedPolicy {
            name: name.to_string(),
            plugin,
            spec,
            matcher,
        })
    }

    fn change(&self, f: impl FnOnce(&mut BTreeMap<String, Arc<LoadedPolicy>>)) {
        let mut current = self.current.write().unwrap();
        let mut next = (**current).clone();
        f(&mut next);
        *current = Arc::new(next);
    }

    /// The object `name` was deleted at `rv` (unless what is known is newer: a re-created
    /// object whose write this server saw before the delete's event).
    fn forget(&self, name: &str, rv: u64) {
        {
            let mut seen = self.seen.lock().unwrap();
            if seen.get(name).is_some_and(|s| s.rv > rv) {
                return;
            }
            seen.remove(name);
        }
        self.deleted.lock().unwrap().insert(name.to_string(), rv);
        self.statuses.lock().unwrap().remove(name);
        self.change(|m| drop(m.remove(name)));
    }

    /// A full list at `list_rv`: what it does not hold is gone, and is recorded deleted at
    /// `list_rv` so that a late copy of an older write does not bring it back.
    async fn replace(&self, objects: &[Arc<Value>], list_rv: u64) {
        let names: Vec<&str> = objects.iter().map(|o| accessor(o).name()).collect();
        let gone: Vec<String> = {
            let seen = self.seen.lock().unwrap();
            let current = self.current();
            seen.keys()
                .chain(current.keys())
                .filter(|n| !names.contains(&n.as_str()))
                .cloned()
                .collect()
        };
        for n in gone {
            self.forget(&n, list_rv);
        }
        for o in objects {
            self.observe(o).await;
        }
        self.synced.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the first full list has been loaded (until then the member cannot tell
    /// whether a policy applies).
    pub fn synced(&self) -> bool {
        self.synced.load(std::sync::atomic::Ordering::SeqCst)
            && !self
                .folder_pending
                .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether a plugin folder is read and its first reading is not done.
    pub fn folder_pending(&self) -> bool {
        self.folder_pending
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The plugin folder's policies, by file stem.
    pub fn folder(&self) -> Arc<BTreeMap<String, Arc<LoadedPolicy>>> {
        self.folder.read().unwrap().clone()
    }

    /// Replace the plugin folder's policies (`ready`: the folder has been read once).
    pub fn set_folder(&self, policies: BTreeMap<String, Arc<LoadedPolicy>>, ready: bool) {
        *self.folder.write().unwrap() = Arc::new(policies);
        self.folder_pending
            .store(!ready, std::sync::atomic::Ordering::SeqCst);
    }

    async fn follow(&self, store: &Store) -> Result<(), String> {
        let list = store
            .list("", &ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let items = store.decode_items(&list).map_err(|e| e.to_string())?;
        self.replace(&items, list.resource_version).await;
        let opts = ListOptions {
            resource_version: list.resource_version.to_string(),
            ..Default::default()
        };
        let mut events = store.watch("", &opts).await.map_err(|e| e.to_string())?;
        while let Some(ev) = events.recv().await {
            match ev {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                    if let Ok(v) = o.to_arc() {
                        self.observe(&v).await;
                    }
                }
                WatchEvent::Deleted(o) => {
                    let v = o.to_arc().map_err(|e| e.to_string())?;
                    self.forget(accessor(&v).name(), rv(&v));
                }
                WatchEvent::Bookmark(_) => {}
                WatchEvent::Error(e) => return Err(e.to_string()),
            }
        }
        Err("watch closed".into())
    }
}

/// Write `status` as this server's `status.replicas` entry of `name`, merged inside the
/// update (replicas never overwrite each other's entries), unless `stored` has it already. A
/// failure is logged; the next event writes it again.
async fn write_status(store: &Store, name: &str, status: &PluginStatus, stored: &Value) {
    if with_replica_status(stored, status).is_none() {
        return;
    }
    let entry = status.clone();
    let merge: PatchFn = Arc::new(move |current: &Value| {
        Ok(with_replica_status(current, &entry).unwrap_or_else(|| current.clone()))
    });
    let written = store
        .update(
            "",
            name,
            UpdatedObject::Patch(merge),
            &UpdateOptions::host(Subresource::Status),
        )
        .await;
    if let Err(e) = written {
        tracing::warn!(policy = %name, error = %e.message, "cannot record admission plugin status");
    }
}

/// Hands each written object to the source.
struct Observe {
    source: Arc<WasmPolicySource>,
}

/// How long a write of an `AdmissionPlugin` waits for its load: a component compiled
/// already (or small) is enforced before the write returns; a large one compiling for the
/// first time (a Python component: seconds) finishes in the background and says so in its
/// status, so the write is not held for the compile.
pub const WRITE_WAITS_FOR_LOAD: std::time::Duration = std::time::Duration::from_secs(10);

impl AfterWrite for Observe {
    fn after_write<'a>(&'a self, stored: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let (source, stored) = (self.source.clone(), stored.clone());
            let load = tokio::spawn(async move { source.observe(&stored).await });
            let _ = tokio::time::timeout(WRITE_WAITS_FOR_LOAD, load).await;
        })
    }
}

/// The resource's Store over `factory`'s storage, telling `source` what it wrote.
pub fn store(factory: &StorageFactory, source: &Arc<WasmPolicySource>) -> Store {
    let strategy = Arc::new(AdmissionPluginStrategy::default());
    let d = strategy.description().clone();
    let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
    let mut store = Store::new(strategy, storage);
    store.after_write = Some(Arc::new(Observe {
        source: source.clone(),
    }));
    store
}

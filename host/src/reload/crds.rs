//! Serving CustomResourceDefinitions: each CRD becomes a configuration of the `customresources`
//! component ([`ConfiguredPlugin::configure`]) served in the published snapshot beside the
//! plugins — what kube's `crdHandler` (apiextensions-apiserver/pkg/apiserver/
//! customresource_handler.go) serves, with the names checked as kube's naming controller does
//! (`pkg/controller/status/naming_controller.go`: `NamesAccepted`) and `Established` set as
//! its establishing controller does (`pkg/controller/establish`).
//!
//! Unlike kube, a CRD is served before its create (or update) returns: the resource's
//! [`AfterWrite`] hook ([`CrdHook`]) syncs this server, so that `kubectl apply -f crd.yaml &&
//! kubectl apply -f object.yaml` needs no wait; other replicas follow from the watch
//! (`watch.rs`) within [`RESYNC`](super::watch::RESYNC).
//!
//! [`CrdRegistry`] knows the CRDs and their strategies; the plugin manager owns one, asks it
//! what is served, and tells it what the plugins serve.

use super::crd_names::ClaimedNames;
use super::customresourcedefinitions::CustomResourceDefinitionStrategy;
use crate::plugin::{ConfiguredPlugin, PluginRuntime, WasmStrategy};
use crate::registry::after_write::AfterWrite;
use crate::registry::store::{PatchFn, Subresource, UpdatedObject};
use crate::registry::Store;
use crate::strategy::webhook_converter::WebhookConverter;
use crate::strategy::Strategy;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use wasm_apiserver_apiextensions::scale::ScalePaths;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_storage::factory::StorageFactory;

/// The finalizer a CRD's first delete adds; removed once its custom resources are gone
/// (`apiextensionsv1.CustomResourceCleanupFinalizer`).
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// What this server does with one CRD.
struct CrdEntry {
    /// The uid and generation last configured: a new object under the same name, or a spec
    /// change, configures again.
    key: (String, i64),
    /// The configured strategy, served when `accepted`; or why the component refused it.
    strategy: Result<Configured, String>,
    /// Served: configured and its names accepted.
    accepted: bool,
    /// The `scale` subresource's paths by version (`spec.versions[*].subresources.scale`).
    scale: Arc<BTreeMap<String, ScalePaths>>,
    /// The resourceVersion and refusal whose status was last found as wanted: the status
    /// of an object not written since, with the same verdict, is not looked at again.
    status_checked: Option<(String, Option<(&'static str, String)>)>,
}

impl CrdEntry {
    /// The strategy when the CRD is served.
    fn served(&self) -> Option<&Configured> {
        self.strategy.as_ref().ok().filter(|_| self.accepted)
    }
}

/// A CRD as the component was configured with it.
#[derive(Clone)]
struct Configured {
    /// In the storage version: every hook of a write in it, reads, conversion.
    strategy: Arc<WasmStrategy>,
    /// The hooks of writes in each served version whose schema or subresources differ from
    /// the storage version's ([`Store::write_hooks`]).
    write_hooks: WriteHooks,
}

/// Strategies by version name ([`Store::write_hooks`]).
pub type WriteHooks = Arc<BTreeMap<String, Arc<dyn Strategy>>>;

/// A served CRD, as the plugin manager builds its Store.
pub struct ServedCrd {
    /// The CRD's name.
    pub name: String,
    /// Its configured strategy (in the storage version).
    pub strategy: Arc<WasmStrategy>,
    /// The `scale` subresource's paths by version (`spec.versions[*].subresources.scale`).
    pub scale: Arc<BTreeMap<String, ScalePaths>>,
    /// The write hooks of versions with rules of their own ([`Store::write_hooks`]).
    pub write_hooks: WriteHooks,
}

/// The conditions and accepted names this server wants in a CRD's status.
pub struct Verdict {
    /// `None`: accepted; `Some((reason, message))`: why not.
    refused: Option<(&'static str, String)>,
}

/// What the hook runs with the stored CRD: a sync of this server (bound by the plugin
/// manager).
pub type SyncFn = Box<dyn Fn(Arc<Value>) -> BoxFuture<'static, ()> + Send + Sync>;

/// The [`AfterWrite`] hook of the CRD resource: sync this server at once.
#[derive(Default)]
pub struct CrdHook {
    sync: OnceLock<SyncFn>,
}

impl CrdHook {
    /// Set what the hook runs (once, when the manager is shared).
    pub fn bind(&self, sync: SyncFn) {
        let _ = self.sync.set(sync);
    }
}

impl AfterWrite for CrdHook {
    fn after_write<'a>(&'a self, stored: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(sync) = self.sync.get() {
                sync(Arc::new(stored.clone())).await;
            }
        })
    }
}

/// The `scale` subresource's paths of each version of `crd` that has one.
fn scale_paths(crd: &Value) -> BTreeMap<String, ScalePaths> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter_map(|v| {
                    Some((str_at(v, &["name"]).to_string(), ScalePaths::of_version(v)?))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The served versions of `crd` other than the storage version whose writes need hooks of
/// their own: those whose schema or subresources differ from the storage version's (kube
/// validates, prunes and defaults a write by its version's schema; where the rules are the
/// storage version's, the storage strategy's hooks give the same answer without the
/// conversions).
fn write_hook_versions(crd: &Value) -> Vec<String> {
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let rules = |v: &Value| (v.get("schema").cloned(), v.get("subresources").cloned());
    let Some(storage) = versions.iter().find(|v| v["storage"] == json!(true)) else {
        return Vec::new();
    };
    versions
        .iter()
        .filter(|v| v["served"] == json!(true) && v["storage"] != json!(true))
        .filter(|v| rules(v) != rules(storage))
        .map(|v| str_at(v, &["name"]).to_string())
        .collect()
}

/// `crd` with `version` as its storage version: the configuration of a strategy whose hooks
/// see objects in `version` (the component's hooks work in the version the configuration
/// stores, `wit/0.3.0/strategy.wit`).
fn with_storage_version(crd: &Value, version: &str) -> Value {
    let mut crd = crd.clone();
    if let Some(vs) = crd
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    {
        for v in vs {
            let mine = v["name"] == json!(version);
            v["storage"] = json!(mine);
        }
    }
    crd
}

/// An object's resourceVersion as a number (this server's are etcd revisions; 0 if not).
fn rv_of(o: &Value) -> u64 {
    accessor(o).resource_version().parse().unwrap_or(0)
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `spec.names` with kube's defaults (`singular` the lower-cased kind, `listKind`
/// `<Kind>List`): what `status.acceptedNames` holds once accepted.
fn accepted_names(crd: &Value) -> Value {
    let mut names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let kind = str_at(&names, &["kind"]).to_string();
    let singular = str_at(&names, &["singular"]).is_empty();
    let list_kind = str_at(&names, &["listKind"]).is_empty();
    if let Some(m) = names.as_object_mut() {
        if singular {
            m.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if list_kind {
            m.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    names
}

/// A condition as kube writes it, keeping `lastTransitionTime` when the status did not change.
fn condition(old: &Value, kind: &str, ok: bool, reason: &str, message: &str) -> Value {
    let status = if ok { "True" } else { "False" };
    let previous = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let time = wasm_apiserver_apimachinery::conditions::transition_time(previous, kind, status);
    json!({"type": kind, "status": status, "lastTransitionTime": time,
        "reason": reason, "message": message})
}

/// The status `crd` should have given `verdict`: its stored versions, conditions other than
/// ours kept, `NamesAccepted` and `Established`, and the accepted names.
fn desired_status(crd: &Value, verdict: &Verdict) -> Value {
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    if !status.is_object() {
        status = json!({});
    }
    let ours = ["NamesAccepted", "Established"];
    let mut conditions: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter(|c| !ours.contains(&c["type"].as_str().unwrap_or("")))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    match &verdict.refused {
        None => {
            conditions.push(condition(
                crd,
                "NamesAccepted",
                true,
                "NoConflicts",
                "no conflicts found",
            ));
            conditions.push(condition(
                crd,
                "Established",
                true,
                "InitialNamesAccepted",
                "the initial names have been accepted",
            ));
            status["acceptedNames"] = accepted_names(crd);
        }
        Some((reason, message)) => {
            conditions.push(condition(crd, "NamesAccepted", false, reason, message));
            conditions.push(condition(
                crd,
                "Established",
                false,
                "NotAccepted",
                "not all names are accepted",
            ));
            if status.get("acceptedNames").is_none() {
                status["acceptedNames"] = json!({"plural": "", "kind": ""});
            }
        }
    }
    status["conditions"] = Value::Array(conditions);
    status
}

/// The CRD objects as last listed or seen, by name: an informer's store (client-go's
/// `cache.Store` fed by its reflector), where a view older than the one held — by
/// resourceVersion — never replaces it: the hook of a write and the watch event of the
/// same write arrive in either order, and a list can end after a write it does not show.
/// A deleted name keeps its delete's resourceVersion (a tombstone) until a list newer than
/// it, so a late copy of the deleted object (a write's hook, a status check that began
/// before the delete) does not bring it back.
#[derive(Default)]
pub struct Known(Mutex<KnownState>);

#[derive(Default)]
struct KnownState {
    objects: BTreeMap<String, Arc<Value>>,
    deleted: BTreeMap<String, u64>,
}

impl Known {
    /// Take `objects` (a full list at resourceVersion `list_rv`) as the objects there are,
    /// keeping those known from after the list (and the deletes after it).
    pub fn replace(&self, objects: Vec<Arc<Value>>, list_rv: u64) {
        let mut known = self.0.lock().unwrap();
        known.deleted.retain(|_, rv| *rv > list_rv);
        let mut listed: BTreeMap<String, Arc<Value>> = known
            .objects
            .iter()
            .filter(|(_, o)| rv_of(o) > list_rv)
            .map(|(n, o)| (n.clone(), o.clone()))
            .collect();
        for o in objects {
            let name = accessor(&o).name().to_string();
            let deleted_after = known.deleted.get(&name).is_some_and(|d| *d >= rv_of(&o));
            if !deleted_after && listed.get(&name).is_none_or(|k| rv_of(k) <= rv_of(&o)) {
                listed.insert(name, o);
            }
        }
        known.objects = listed;
    }

    /// Take `object` as the object of its name, unless the one known is as new or the name
    /// was deleted since. Returns whether it was taken.
    pub fn observe(&self, object: Arc<Value>) -> bool {
        let mut known = self.0.lock().unwrap();
        let name = accessor(&object).name().to_string();
        let rv = rv_of(&object);
        let newer = known.objects.get(&name).is_none_or(|k| rv_of(k) < rv)
            && known.deleted.get(&name).is_none_or(|d| *d < rv);
        if newer {
            known.deleted.remove(&name);
            known.objects.insert(name, object);
        }
        newer
    }

    /// Forget `name`, deleted at resourceVersion `rv`, unless the one known is newer (created
    /// again since); older copies seen later are refused.
    pub fn forget(&self, name: &str, rv: u64) {
        let mut known = self.0.lock().unwrap();
        if known.objects.get(name).is_none_or(|k| rv_of(k) <= rv) {
            known.objects.remove(name);
            let d = known.deleted.entry(name.to_string()).or_insert(rv);
            *d = (*d).max(rv);
        }
    }

    /// The objects known, by name.
    pub fn all(&self) -> Vec<Arc<Value>> {
        self.0.lock().unwrap().objects.values().cloned().collect()
    }
}

/// The CRDs this server knows, and the component serving them.
pub struct CrdRegistry {
    runtime: Arc<PluginRuntime>,
    /// The `customresourcedefinitions` resource, with [`CrdHook`] after its writes.
    store: Store,
    hook: Arc<CrdHook>,
    /// The component serving CRDs (`--crd-plugin`), loaded when the first CRD needs it.
    plugin_file: Option<PathBuf>,
    plugin: Arc<OnceLock<Result<ConfiguredPlugin, String>>>,
    entries: Mutex<BTreeMap<String, CrdEntry>>,
    /// The CRD objects as last listed or seen.
    known: Known,
    /// CRDs whose clean-up runs on this server.
    cleaning: Mutex<std::collections::BTreeSet<String>>,
}

impl CrdRegistry {
    /// The CRD resource stored through `factory`, served by the component in `plugin_file`.
    pub fn new(
        runtime: Arc<PluginRuntime>,
        factory: &StorageFactory,
        plugin_file: Option<PathBuf>,
    ) -> CrdRegistry {
        let strategy = Arc::new(CustomResourceDefinitionStrategy::new());
        let d = strategy.description().clone();
        let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
        let hook = Arc::new(CrdHook::default());
        let mut store = Store::new(strategy, storage);
        store.after_write = Some(hook.clone());
        store.finalizers_on_delete = vec![CLEANUP_FINALIZER.into()];
        CrdRegistry {
            runtime,
            store,
            hook,
            plugin_file,
            plugin: Arc::new(OnceLock::new()),
            entries: Mutex::new(BTreeMap::new()),
            known: Known::default(),
            cleaning: Mutex::new(Default::default()),
        }
    }

    /// The `customresourcedefinitions` resource.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The hook of the resource, to bind.
    pub fn hook(&self) -> &CrdHook {
        &self.hook
    }

    /// The CRD objects as last listed or seen (listed, observed and forgotten by the plugin
    /// manager's sync and watch).
    pub fn known(&self) -> &Known {
        &self.known
    }

    /// The served CRDs, by name.
    pub fn served(&self) -> Vec<ServedCrd> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(n, e)| {
                let c = e.served()?;
                Some(ServedCrd {
                    name: n.clone(),
                    strategy: c.strategy.clone(),
                    scale: e.scale.clone(),
                    write_hooks: c.write_hooks.clone(),
                })
            })
            .collect()
    }

    /// The CRD (by name) serving `group`/`plural`, if one does.
    pub fn serving(&self, group: &str, plural: &str) -> Option<String> {
        self.served().into_iter().find_map(|c| {
            let d = c.strategy.description();
            (d.group == group && d.plural == plural).then_some(c.name)
        })
    }

    /// The CRD component, loaded on first use (off the async workers). Errors: none is
    /// configured, or it does not load — reported in each CRD's status.
    async fn plugin(&self) -> Result<ConfiguredPlugin, String> {
        let Some(file) = self.plugin_file.clone() else {
            return Err("this server has no CustomResourceDefinition plugin (--crd-plugin)".into());
        };
        let (cell, runtime) = (self.plugin.clone(), self.runtime.clone());
        tokio::task::spawn_blocking(move || {
            cell.get_or_init(|| {
                let loaded = std::fs::read(&file)
                    .map_err(|e| format!("cannot read the CRD plugin {}: {e}", file.display()))
                    .and_then(|bytes| {
                        runtime
                            .load_configured("customresources", &bytes)
                            .map_err(|e| e.to_string())
                    });
                if let Err(e) = &loaded {
                    tracing::error!(error = %e, "CustomResourceDefinitions cannot be served");
                }
                loaded
            })
            .clone()
        })
        .await
        .map_err(|e| format!("loading the CRD plugin panicked: {e}"))?
    }

    /// Bring this registry in line with the CRDs (all of them, as listed): configure new and
    /// changed ones, check their names against `plugin_serving` (the plugin serving a group
    /// and plural) and the older CRDs, forget deleted ones. Returns whether what is served
    /// changed (to publish), and each CRD's verdict for [`CrdRegistry::write_statuses`]. A
    /// CRD the component refuses, or whose group and plural are taken, is not served and says
    /// why in its `NamesAccepted` condition. The caller runs one sync at a time.
    pub async fn sync(
        &self,
        objects: &[Arc<Value>],
        plugin_serving: &(dyn Fn(&str, &str) -> Option<String> + Sync),
    ) -> (bool, Vec<(Arc<Value>, Verdict)>) {
        let mut publish = false;
        let names: std::collections::BTreeSet<&str> =
            objects.iter().map(|o| accessor(o).name()).collect();
        {
            let mut crds = self.entries.lock().unwrap();
            let before = crds.len();
            crds.retain(|n, _| names.contains(&n.as_str()));
            if crds.len() != before {
                tracing::info!("CustomResourceDefinition deleted: resource unregistered");
                publish = true;
            }
        }
        // Those whose names are accepted already first (kube's naming controller never takes
        // accepted names back), then oldest first and by name, so every replica accepts the
        // same one of two claims (creation times have one-second resolution).
        let mut by_age: Vec<&Arc<Value>> = objects.iter().collect();
        by_age.sort_by_key(|o| {
            let accepted = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "NamesAccepted" && c["status"] == "True")
                });
            (
                !accepted,
                accessor(o).creation_timestamp(),
                accessor(o).name(),
            )
        });
        let mut verdicts: Vec<(Arc<Value>, Verdict)> = Vec::new();
        let mut claimed = ClaimedNames::default();
        for obj in &by_age {
            claimed.claim_accepted(obj, accessor(obj).name());
        }
        for obj in by_age {
            let name = accessor(obj).name().to_string();
            let key = (
                accessor(obj).uid().to_string(),
                accessor(obj).generation().unwrap_or(1),
            );
            let group = str_at(obj, &["spec", "group"]).to_string();
            let plural = str_at(obj, &["spec", "names", "plural"]).to_string();
            let current = self
                .entries
                .lock()
                .unwrap()
                .get(&name)
                .filter(|e| e.key == key)
                .map(|e| e.strategy.clone());
            let strategy = match current {
                Some(s) => s,
                None => self.configure_crd(obj).await,
            };
            let refused = match &strategy {
                Err(e) => Some(("ConfigurationRefused", e.clone())),
                Ok(_) => match plugin_serving(&group, &plural) {
                    Some(plugin) => Some((
                        "PluralConflict",
                        format!("\"{plural}\" is already in use by the plugin {plugin:?}"),
                    )),
                    None => claimed.conflict(obj, &name),
                },
            };
            if refused.is_none() {
                claimed.claim(obj, &name);
            }
            let accepted = refused.is_none();
            let check = (
                accessor(obj).resource_version().to_string(),
                refused.clone(),
            );
            let checked = {
                let mut crds = self.entries.lock().unwrap();
                let ptr = |s: &Result<Configured, String>| {
                    s.as_ref().ok().map(|c| Arc::as_ptr(&c.strategy))
                };
                let previous = crds.get(&name);
                let changed = previous.is_none_or(|e| {
                    e.accepted != accepted || e.key != key || ptr(&e.strategy) != ptr(&strategy)
                });
                let status_checked = previous.and_then(|e| e.status_checked.clone());
                let scale = match previous.filter(|e| e.key == key) {
                    Some(e) => e.scale.clone(),
                    None => Arc::new(scale_paths(obj)),
                };
                publish |= changed;
                let checked = status_checked.as_ref() == Some(&check);
                crds.insert(
                    name,
                    CrdEntry {
                        key,
                        strategy,
                        accepted,
                        scale,
                        status_checked,
                    },
                );
                checked
            };
            if !checked {
                verdicts.push((obj.clone(), Verdict { refused }));
            }
        }
        (publish, verdicts)
    }

    /// Write each CRD's status as its verdict asks. A CRD found with the status wanted, or
    /// written with it, is known as such ([`Known::observe`]) and not looked at again
    /// until it is written or its verdict changes.
    pub async fn write_statuses(&self, verdicts: Vec<(Arc<Value>, Verdict)>) {
        for (obj, verdict) in verdicts {
            if let Some(done) = self.write_crd_status(&obj, &verdict).await {
                let (name, rv) = (accessor(&done).name(), accessor(&done).resource_version());
                if let Some(e) = self.entries.lock().unwrap().get_mut(name) {
                    e.status_checked = Some((rv.to_string(), verdict.refused.clone()));
                }
                let _ = self.known.observe(done);
            }
        }
    }

    /// The component configured with `crd`, off the async workers, converting through the
    /// CRD's webhook when it names one; and configured once more for each served version
    /// with rules of its own ([`write_hook_versions`]), with that version as the one its
    /// hooks see. Errors: no component, the component refused the CRD, or its webhook cannot
    /// be called (no client for its URL or `caBundle`).
    async fn configure_crd(&self, crd: &Value) -> Result<Configured, String> {
        let plugin = self.plugin().await?;
        let crd = crd.clone();
        tokio::task::spawn_blocking(move || {
            // Building the webhook's client reads the system's certificates: off the workers.
            let webhook = WebhookConverter::from_crd(&crd)
                .map_err(|e| format!("spec.conversion.webhook: {e}"))?;
            let strategy = plugin
                .configure_with(&crd.to_string(), webhook)
                .map(Arc::new)
                .map_err(|e| e.reason.to_string())?;
            let mut write_hooks = BTreeMap::new();
            for version in write_hook_versions(&crd) {
                let hooks = plugin
                    .configure_with(&with_storage_version(&crd, &version).to_string(), None)
                    .map_err(|e| format!("version {version}: {}", e.reason))?;
                write_hooks.insert(version, Arc::new(hooks) as Arc<dyn Strategy>);
            }
            Ok(Configured {
                strategy,
                write_hooks: Arc::new(write_hooks),
            })
        })
        .await
        .map_err(|e| format!("configuring panicked: {e}"))?
    }

    /// Write the status `verdict` asks for, unless the CRD has it already. Through the status
    /// subresource of a Store without the [`CrdHook`] (a status write is not a change of what
    /// is served).
    /// Returns the CRD with the status wanted: `crd` when it has it already, or as written;
    /// `None` when the write failed.
    async fn write_crd_status(&self, crd: &Arc<Value>, verdict: &Verdict) -> Option<Arc<Value>> {
        let want = desired_status(crd, verdict);
        if crd.get("status") == Some(&want) {
            return Some(crd.clone());
        }
        let name = accessor(crd).name().to_string();
        let refused = verdict.refused.clone();
        let merge: PatchFn = Arc::new(move |current: &Value| {
            let mut out = current.clone();
            out["status"] = desired_status(
                current,
                &Verdict {
                    refused: refused.clone(),
                },
            );
            Ok(out)
        });
        let mut store = self.store.clone();
        store.after_write = None;
        let written = store
            .update(
                "",
                &name,
                UpdatedObject::Patch(merge),
                &crate::registry::UpdateOptions::host(Subresource::Status),
            )
            .await;
        match written {
            Ok(w) => Some(Arc::new(w.object)),
            Err(e) => {
                tracing::debug!(crd = %name, error = %e.message, "cannot record the CustomResourceDefinition's status");
                None
            }
        }
    }

    /// The deleted CRDs still holding [`CLEANUP_FINALIZER`] among `objects`, each with the
    /// strategy serving its resource when this server serves it (when it does not, the
    /// resource is another's: nothing of it is deleted).
    pub fn terminating(&self, objects: &[Arc<Value>]) -> Vec<(String, Option<Arc<WasmStrategy>>)> {
        let entries = self.entries.lock().unwrap();
        objects
            .iter()
            .filter(|o| {
                accessor(o).is_terminating()
                    && accessor(o)
                        .finalizers()
                        .iter()
                        .any(|f| f == CLEANUP_FINALIZER)
            })
            .map(|o| {
                let name = accessor(o).name().to_string();
                let served = entries
                    .get(&name)
                    .and_then(|e| Some(e.served()?.strategy.clone()));
                (name, served)
            })
            .collect()
    }

    /// Clean up `name` on a task of its own ([`CrdRegistry::clean_up`]), unless it runs
    /// already.
    pub fn spawn_clean_up(self: &Arc<Self>, name: String, instances: Option<Store>) {
        if !self.cleaning.lock().unwrap().insert(name.clone()) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            me.clean_up(&name, instances).await;
            me.cleaning.lock().unwrap().remove(&name);
        });
    }

    /// kube's finalizing controller (apiextensions-apiserver/pkg/controller/finalizer/
    /// crd_finalizer.go) for the CRD `name`: `Terminating` set, every custom resource deleted
    /// through `instances` (their own finalizers respected: waited for up to 30 s), then
    /// [`CLEANUP_FINALIZER`] removed, which deletes the CRD. Instances still there after the
    /// wait leave the finalizer for the next sync. Errors are logged.
    pub async fn clean_up(&self, name: &str, instances: Option<Store>) {
        let set_terminating = |reason: &'static str, message: &'static str| {
            let f: PatchFn = Arc::new(move |current: &Value| {
                let mut out = current.clone();
                let mut conditions: Vec<Value> = current
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .map(|cs| {
                        cs.iter()
                            .filter(|c| c["type"] != "Terminating")
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                conditions.push(condition(current, "Terminating", true, reason, message));
                out["status"]["conditions"] = Value::Array(conditions);
                Ok(out)
            });
            f
        };
        let mut store = self.store.clone();
        store.after_write = None;
        let status = crate::registry::UpdateOptions::host(Subresource::Status);
        let _ = store
            .update(
                "",
                name,
                UpdatedObject::Patch(set_terminating(
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                )),
                &status,
            )
            .await;
        if let Some(instances) = instances {
            let list = crate::registry::ListOptions::default();
            let opts = crate::registry::deletion::DeleteOptions::default();
            let started = std::time::Instant::now();
            loop {
                match instances.delete_collection("", &list, &opts).await {
                    Ok(c) if c.items.is_empty() => break,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(crd = %name, error = %e.message, "cannot delete the custom resources");
                    }
                }
                if started.elapsed() > std::time::Duration::from_secs(30) {
                    let _ = store
                        .update(
                            "",
                            name,
                            UpdatedObject::Patch(set_terminating(
                                "InstanceDeletionCheck",
                                "could not confirm zero CustomResources remaining",
                            )),
                            &status,
                        )
                        .await;
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
        let remove: PatchFn = Arc::new(|current: &Value| {
            let mut out = current.clone();
            if let Some(f) = out
                .pointer_mut("/metadata/finalizers")
                .and_then(Value::as_array_mut)
            {
                f.retain(|x| x != CLEANUP_FINALIZER);
            }
            Ok(out)
        });
        let main = crate::registry::UpdateOptions::host(Subresource::Main);
        if let Err(e) = store
            .update("", name, UpdatedObject::Patch(remove), &main)
            .await
        {
            if e.code != 404 {
                tracing::warn!(crd = %name, error = %e.message, "cannot remove the CRD's cleanup finalizer");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str, rv: u64) -> Arc<Value> {
        Arc::new(json!({"metadata": {"name": name, "resourceVersion": rv.to_string()}}))
    }

    fn names_and_rvs(k: &Known) -> Vec<(String, u64)> {
        k.all()
            .iter()
            .map(|o| (accessor(o).name().to_string(), rv_of(o)))
            .collect()
    }

    #[test]
    fn versions_with_rules_of_their_own_get_write_hooks() {
        let schema = |f: &str| json!({"openAPIV3Schema": {"type": "object", "properties": {f: {"type": "string"}}}});
        let crd = json!({"spec": {"versions": [
            {"name": "v1alpha1", "served": true, "storage": false, "schema": schema("a")},
            {"name": "v1beta1", "served": true, "storage": false, "schema": schema("b")},
            {"name": "v1beta2", "served": false, "storage": false, "schema": schema("c")},
            {"name": "v1", "served": true, "storage": true, "schema": schema("b"),
             "additionalPrinterColumns": [{"name": "B", "type": "string", "jsonPath": ".b"}]},
            {"name": "v2", "served": true, "storage": false, "schema": schema("b"),
             "subresources": {"status": {}}},
        ]}});
        // Same schema and subresources as v1: none; not served: none.
        assert_eq!(write_hook_versions(&crd), ["v1alpha1", "v2"]);
        let flipped = with_storage_version(&crd, "v2");
        let storage: Vec<_> = flipped["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["storage"] == json!(true))
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(storage, ["v2"]);
        assert_eq!(write_hook_versions(&json!({})), Vec::<String>::new());
    }

    #[test]
    fn an_older_view_never_replaces_a_newer_one() {
        let k = Known::default();
        // The write's hook first, then the watch event of the same write, then an older one.
        assert!(k.observe(crd("a", 5)));
        assert!(!k.observe(crd("a", 5)));
        assert!(!k.observe(crd("a", 4)));
        assert!(k.observe(crd("a", 7)));
        // A list at 6 that ended after the write at 7 (and after b was created at 8).
        assert!(k.observe(crd("b", 8)));
        k.replace(vec![crd("a", 5), crd("c", 3)], 6);
        assert_eq!(
            names_and_rvs(&k),
            [("a".into(), 7), ("b".into(), 8), ("c".into(), 3)]
        );
        // A list at 9 that no longer shows c: deleted.
        k.replace(vec![crd("a", 7), crd("b", 8)], 9);
        assert_eq!(names_and_rvs(&k), [("a".into(), 7), ("b".into(), 8)]);
        // The delete of b at 10 came after b was created again at 11: kept.
        assert!(k.observe(crd("b", 11)));
        k.forget("b", 10);
        k.forget("a", 12);
        assert_eq!(names_and_rvs(&k), [("b".into(), 11)]);
        // A late copy of a deleted object (a write's hook after the delete event) stays out,
        // as does a list older than the delete; a newer list forgets the tombstone.
        k.forget("b", 13);
        assert!(!k.observe(crd("b", 12)));
        k.replace(vec![crd("b", 12)], 12);
        assert_eq!(names_and_rvs(&k), []);
        k.replace(vec![], 14);
        assert!(
            k.observe(crd("b", 12)),
            "no tombstone once a newer list is taken"
        );
    }
}

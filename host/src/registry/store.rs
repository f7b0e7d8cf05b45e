//! The registry `Store`: `genericregistry.Store` semantics
//! (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`, `rest/{create,update,delete}.go`,
//! `dryrun.go`) over a [`Storage`] and a [`Strategy`]. Strategy hooks run on blocking threads;
//! everything else is async.

use super::converter::{Converter, Sharing};
use super::list_options::ListOptions;
use super::meta;
use super::tracking::Tracking;
use super::write_admission::WriteAdmission;
pub use super::write_options::{CreateOptions, Subresource, UpdateOptions};
use crate::status::{ApiError, ApiResult};
use crate::strategy::request_version::RequestVersionStrategy;
use crate::strategy::ResourceDescription;
use crate::strategy::{sequence, Strategy, StrategyError};
use futures::FutureExt;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_apiextensions::scale::ScalePaths;
use wasm_apiserver_apimachinery::meta::{accessor, accessor_mut};
use wasm_apiserver_apimachinery::{GroupKind, GroupResource};
use wasm_apiserver_storage::selection::default_attrs;
use wasm_apiserver_storage::SelectionPredicate;
use wasm_apiserver_storage::Storage;
use wasm_apiserver_storage::{
    GetOptions, Preconditions, ResponseMeta, SharedListResult, SharedObject, StorageError,
    UpdateOutcome, WatchStream,
};

/// `maxNameGenerationCreateAttempts` (store.go).
const MAX_NAME_GENERATION_ATTEMPTS: usize = 8;

/// A patch as a function of the current object (`Value::Null` when it does not exist).
pub type PatchFn = Arc<dyn Fn(&Value) -> ApiResult<Value> + Send + Sync>;

/// How the new object of an update is obtained from the current one (`rest.UpdatedObjectInfo`).
#[derive(Clone)]
pub enum UpdatedObject {
    /// PUT: the request body.
    Replace(Value),
    /// PATCH: a function of the current object (`Value::Null` when it does not exist).
    Patch(PatchFn),
}

/// The result of a write.
#[derive(Clone, Debug)]
pub struct WriteResult {
    /// The object as stored (or as it would be, for a dry run).
    pub object: Value,
    /// Strategy warnings, for `Warning` headers.
    pub warnings: Vec<String>,
    /// Whether an update created the object (201 instead of 200).
    pub created: bool,
}

/// `metav1.ListMeta` of a list: resourceVersion, and continue / remainingItemCount when set.
pub fn list_meta(list: &SharedListResult) -> Value {
    let mut meta = json!({"resourceVersion": list.resource_version.to_string()});
    if let Some(c) = &list.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    meta
}

/// One served resource: `genericregistry.Store`
/// (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`) — the plugin's strategy, the
/// resource's storage and its names; its operations are below.
///
/// A resource served in several versions has one `Store` per served version, all sharing one
/// strategy and one storage (one watch cache), each with the [`Converter`] between its version
/// and the storage version (for what it selects in its version). The operations below take
/// and return objects in the storage version (every hook sees it); the HTTP layer converts
/// requests and answers through the version's
/// [`RequestScope`](super::request_scope::RequestScope).
#[derive(Clone)]
pub struct Store {
    /// The resource as served in this Store's version
    /// ([`ResourceDescription::at_version`]: its version, schema, printer columns and
    /// selectable fields).
    pub description: ResourceDescription,
    /// The strategy (a loaded plugin version).
    pub strategy: Arc<dyn Strategy>,
    /// Its storage.
    pub storage: Arc<dyn Storage>,
    /// Its names for messages.
    pub gr: GroupResource,
    /// Its kind for `Invalid` answers.
    pub gk: GroupKind,
    /// The storage key prefix: `/<plural>` for core, `/<group>/<plural>` otherwise.
    pub resource_prefix: String,
    /// Served by the host for reading only (writes answer 405).
    pub read_only: bool,
    /// The storage version's field manager: writes other than server-side apply are
    /// recorded by it, on the storage-version object the hooks returned (apply merges in the
    /// request's version, with its [`RequestScope`](super::request_scope::RequestScope)'s).
    pub storage_field_manager: Arc<crate::fieldmanager::FieldManager>,
    /// Between this Store's version and the storage version (the identity in the storage
    /// version), for what the Store reads in its version: selection predicates, and objects
    /// stored under an earlier storage version. Requests convert through their
    /// [`RequestScope`](super::request_scope::RequestScope).
    pub converter: Arc<Converter>,
    /// Run after each stored create and update, before the answer ([`AfterWrite`]).
    pub after_write: Option<Arc<dyn super::after_write::AfterWrite>>,
    /// Finalizers the first delete of an object adds, so that it waits for their controller:
    /// kube's CRD REST `Delete` adds `customresourcecleanup.apiextensions.k8s.io`
    /// (apiextensions-apiserver/pkg/registry/customresourcedefinition/etcd.go).
    pub finalizers_on_delete: Vec<String>,
    /// The `scale` subresource's replicas paths by version, when the resource has one (a
    /// CRD's `subresources.scale`: kube's `ScaleREST`,
    /// apiextensions-apiserver/pkg/registry/customresource/etcd.go).
    pub scale: Option<Arc<BTreeMap<String, ScalePaths>>>,
    /// By version name, the strategies whose hooks run on writes in that version (a CRD
    /// version with its own schema: [`RequestVersionStrategy`], built by [`Store::at_version`]).
    pub write_hooks: Option<Arc<BTreeMap<String, Arc<dyn Strategy>>>>,
}

impl Store {
    /// Assemble a resource; the key prefix follows kube-apiserver's layout (core resources
    /// without their group, others as `<group>/<plural>`).
    pub fn new(strategy: Arc<dyn Strategy>, storage: Arc<dyn Storage>) -> Store {
        let description = strategy.description().clone();
        let gr = description.group_resource();
        let gk = description.group_kind();
        let storage_field_manager = Arc::new(crate::fieldmanager::FieldManager::new(&description));
        let api_version = description.api_version();
        Store {
            converter: Arc::new(Converter::new(
                strategy.clone(),
                gk.clone(),
                api_version.clone(),
                api_version,
            )),
            gk,
            resource_prefix: resource_prefix(&description),
            storage_field_manager,
            description,
            strategy,
            storage,
            gr,
            read_only: false,
            after_write: None,
            finalizers_on_delete: Vec::new(),
            scale: None,
            write_hooks: None,
        }
    }
}

impl Store {
    /// The `scale` subresource's paths in this Store's version, if it has one.
    pub fn scale_paths(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()?.get(&self.description.version)
    }

    /// This resource as served in `version`: a Store sharing this one's strategy, storage and
    /// storage field manager, with that version's description and converter; its writes run
    /// the version's [`Store::write_hooks`] when it has them.
    /// `None` when the resource does not serve `version`. Call it on the storage-version Store
    /// ([`Store::new`]).
    pub fn at_version(&self, version: &str) -> Option<Store> {
        let description = self.description.at_version(version)?;
        let api_version = description.api_version();
        let strategy = match self.write_hooks.as_ref().and_then(|h| h.get(version)) {
            Some(hooks) => Arc::new(RequestVersionStrategy::new(
                self.strategy.clone(),
                hooks.clone(),
                api_version.clone(),
            )) as Arc<dyn Strategy>,
            None => self.strategy.clone(),
        };
        Some(Store {
            converter: Arc::new(Converter::new(
                self.strategy.clone(),
                self.gk.clone(),
                api_version,
                self.converter.storage_api_version.clone(),
            )),
            description,
            strategy,
            ..self.clone()
        })
    }
}

/// `/<plural>` for the core group, `/<group>/<plural>` otherwise (kube-apiserver's etcd key
/// layout, `pkg/kubeapiserver/default_storage_factory_builder.go` and
/// `k8s.io/apiserver/pkg/registry/generic/registry/store.go` `NamespaceKeyRootFunc`).
pub fn resource_prefix(d: &ResourceDescription) -> String {
    if d.group.is_empty() {
        format!("/{}", d.plural)
    } else {
        format!("/{}/{}", d.group, d.plural)
    }
}

/// Whether the storage refused a write as too large (etcd's `request is too large`).
fn is_storage_too_large(e: &ApiError) -> bool {
    e.code == 413 && e.message.contains("request is too large")
}

/// Run strategy hooks (and patches, and the field manager) off the async workers.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("strategy call panicked: {e}")))
}

fn aborted(e: ApiError) -> StorageError {
    StorageError::aborted(e)
}

impl Store {
    /// The storage key of an object: `/<resource prefix>/<ns>/<name>` or `/<prefix>/<name>`.
    pub fn key(&self, ns: &str, name: &str) -> String {
        if self.description.namespaced {
            format!("{}/{ns}/{name}", self.resource_prefix)
        } else {
            format!("{}/{name}", self.resource_prefix)
        }
    }

    /// The key prefix of a list: everything, or one namespace.
    pub fn list_key(&self, ns: &str) -> String {
        if self.description.namespaced && !ns.is_empty() {
            format!("{}/{ns}", self.resource_prefix)
        } else {
            self.resource_prefix.clone()
        }
    }

    pub(super) fn strategy(&self) -> Arc<dyn Strategy> {
        self.strategy.clone()
    }

    pub(super) fn storage_err(&self, e: StorageError, name: &str) -> ApiError {
        ApiError::from_storage(&e, &self.gr, name)
    }

    /// Whether this is core/v1 `namespaces`, whose deletion kube's namespace storage
    /// changes (`pkg/registry/core/namespace/storage/storage.go`).
    pub fn is_namespaces(&self) -> bool {
        self.gr.group.is_empty() && self.gr.resource == "namespaces"
    }

    /// `Store.Get`: [`Store::get_shared`], decoded (or copied out of the watch cache).
    pub async fn get(&self, ns: &str, name: &str, resource_version: &str) -> ApiResult<Value> {
        self.get_shared(ns, name, resource_version)
            .await?
            .into_value()
            .map_err(|e| self.storage_err(e, name))
    }

    /// [`Store::get`] without an owned object: the watch cache's object shared, or the
    /// stored bytes undecoded (a JSON GET writes its response from them).
    pub async fn get_shared(
        &self,
        ns: &str,
        name: &str,
        resource_version: &str,
    ) -> ApiResult<SharedObject> {
        let opts = GetOptions {
            resource_version: resource_version.into(),
            ignore_not_found: false,
        };
        match self.storage.get(&self.key(ns, name), &opts).await {
            Ok(Some(o)) => Ok(o),
            Ok(None) => Err(ApiError::not_found(&self.gr, name)),
            Err(e) => Err(self.storage_err(e, name)),
        }
    }

    /// `Store.List` under `ns` (all namespaces when empty), filtered by the options'
    /// predicate. The objects are shared with the watch cache (no copy).
    pub async fn list(&self, ns: &str, opts: &ListOptions) -> ApiResult<SharedListResult> {
        self.storage
            .get_list(&self.list_key(ns), &self.storage_list_options(opts))
            .await
            .map_err(|e| self.storage_err(e, ""))
    }

    /// `Store.Watch` under `ns` (all namespaces when empty), or one object when the field
    /// selector pins `metadata.name` ([`ListOptions::with_name`]).
    pub async fn watch(&self, ns: &str, opts: &ListOptions) -> ApiResult<WatchStream> {
        self.storage
            .watch(&self.list_key(ns), self.storage_list_options(opts))
            .await
            .map_err(|e| self.storage_err(e, ""))
    }

    /// The objects of `list`, decoded where the storage handed out stored bytes. Errors: a
    /// corrupt stored object, as the storage error's Status.
    pub fn decode_items(&self, list: &SharedListResult) -> ApiResult<Vec<Arc<Value>>> {
        list.items
            .iter()
            .map(|i| i.to_arc().map_err(|e| self.storage_err(e, "")))
            .collect()
    }

    /// `Store.Create` (with the generateName retry loop) through `rest.BeforeCreate`; with a
    /// `manager`, the object's managed fields record it as the owner of what it sent and of
    /// what the strategy defaulted (`Tracking`).
    ///
    /// A tracked write the storage refuses as too large is written again without
    /// `managedFields` (`handlers/create.go`: "it is safe to remove managedFields (which can
    /// be large) and try again").
    pub async fn create(
        &self,
        ns: &str,
        obj: Value,
        opts: &CreateOptions<'_>,
    ) -> ApiResult<WriteResult> {
        let tracking = self.tracking(opts.field_manager, Subresource::Main);
        let mut obj = obj;
        meta::ensure_namespace(&mut obj, self.description.namespaced, ns)
            .map_err(ApiError::bad_request)?;
        // Mutating admission before the Store (create.go runs it before `r.Create`), once.
        if let Some(admission) = &opts.admission {
            admission.admit(&mut obj, None).await?;
        }
        // Kept for the retry only when there can be one.
        let retry = tracking.as_ref().map(|_| obj.clone());
        match (self.create_with(ns, obj, opts, tracking).await, retry) {
            (Err(e), Some(obj)) if is_storage_too_large(&e) => {
                self.create_with(ns, obj, opts, Some(Tracking::Strip)).await
            }
            (r, _) => r,
        }
    }

    async fn create_with(
        &self,
        ns: &str,
        obj: Value,
        opts: &CreateOptions<'_>,
        tracking: Option<Tracking>,
    ) -> ApiResult<WriteResult> {
        let dry_run = opts.dry_run;
        let mut obj = obj;
        meta::wipe_system_fields(&mut obj);
        meta::ensure_namespace(&mut obj, self.description.namespaced, ns)
            .map_err(ApiError::bad_request)?;
        let generate =
            accessor(&obj).name().is_empty() && !accessor(&obj).generate_name().is_empty();
        let attempts = if generate {
            MAX_NAME_GENERATION_ATTEMPTS
        } else {
            1
        };
        let mut last_name = String::new();
        for _ in 0..attempts {
            let mut attempt = obj.clone();
            meta::fill_system_fields(&mut attempt);
            if generate {
                let name = meta::generate_name(accessor(&attempt).generate_name());
                accessor_mut(&mut attempt)
                    .into_map()
                    .insert("name".into(), json!(name));
            }
            let name = accessor(&attempt).name().to_string();
            last_name = name.clone();
            let (object, warnings) = self.before_create(attempt, tracking.clone()).await?;
            if name.is_empty() {
                return Err(ApiError::internal(
                    "the object has no name after validation",
                ));
            }
            // Validating admission after the strategy (store.go `Create`: `createValidation`).
            if let Some(admission) = &opts.admission {
                admission.validate(&object, None).await?;
            }
            let key = self.key(ns, &name);
            if dry_run {
                // dryrun.go: a dry-run create still fails on an existing key.
                let exists = self
                    .storage
                    .get(
                        &key,
                        &GetOptions {
                            resource_version: String::new(),
                            ignore_not_found: true,
                        },
                    )
                    .await
                    .map_err(|e| self.storage_err(e, &name))?;
                if exists.is_some() {
                    if generate {
                        continue;
                    }
                    return Err(ApiError::already_exists(&self.gr, &name));
                }
                return Ok(WriteResult {
                    object,
                    warnings,
                    created: true,
                });
            }
            match self.storage.create(&key, object, 0).await {
                Ok(stored) => {
                    if let Some(hook) = &self.after_write {
                        hook.after_write(&stored).await;
                    }
                    return Ok(WriteResult {
                        object: stored,
                        warnings,
                        created: true,
                    });
                }
                Err(StorageError::KeyExists { .. }) if generate => continue,
                Err(StorageError::KeyExists { .. }) => {
                    return Err(self.already_exists(ns, &name).await);
                }
                Err(e) => return Err(self.storage_err(e, &name)),
            }
        }
        Err(ApiError::generate_name_conflict(&self.gr, &last_name, 1))
    }

    /// AlreadyExists, prefixed `object is being deleted: ` when the existing object is
    /// terminating (store.go).
    async fn already_exists(&self, ns: &str, name: &str) -> ApiError {
        let mut e = ApiError::already_exists(&self.gr, name);
        let opts = GetOptions {
            resource_version: String::new(),
            ignore_not_found: true,
        };
        let existing = self.storage.get(&self.key(ns, name), &opts).await;
        if let Ok(Some(existing)) =
            existing.and_then(|o| o.map(SharedObject::into_value).transpose())
        {
            if accessor(&existing).is_terminating() {
                e.message = format!("object is being deleted: {}", e.message);
            }
        }
        e
    }

    /// `rest.BeforeCreate` from PrepareForCreate on (system fields are already filled), then
    /// the field manager when the write is tracked, both off the async workers.
    async fn before_create(
        &self,
        obj: Value,
        tracking: Option<Tracking>,
    ) -> ApiResult<(Value, Vec<String>)> {
        let strategy = self.strategy();
        let namespaced = self.description.namespaced;
        let gk = self.gk.clone();
        let name = accessor(&obj).name().to_string();
        blocking(move || {
            let mut obj = obj;
            let managed = tracking.as_ref().map(|t| t.prepare(&Value::Null, &mut obj));
            sequence::create(&*strategy, &obj, &|o| meta::validate_create(o, namespaced))
                .map(|out| {
                    let object = match (&tracking, managed) {
                        (Some(t), Some(m)) => t.finish(&Value::Null, out.object, m),
                        _ => out.object,
                    };
                    (object, out.warnings)
                })
                .map_err(|e| ApiError::from_strategy(e, &gk, &name))
        })
        .await?
    }

    /// `Store.Update` (PUT, PATCH, and their `/status` forms) inside `GuaranteedUpdate`, through
    /// `rest.BeforeUpdate` (or `BeforeCreate` when the object is missing and the strategy
    /// allows create-on-update). Then delete-on-update when the last finalizer of a
    /// terminating object was removed (`ShouldDeleteDuringUpdate`).
    pub async fn update(
        &self,
        ns: &str,
        name: &str,
        updated: UpdatedObject,
        opts: &UpdateOptions<'_>,
    ) -> ApiResult<WriteResult> {
        // update.go / patch.go: a tracked write the storage finds too large is written again
        // without managedFields.
        let tracking = self.tracking(opts.field_manager, opts.subresource);
        let retry = tracking.as_ref().map(|_| updated.clone());
        let first = self.update_with(ns, name, updated, opts, tracking).await;
        match (first, retry) {
            (Err(e), Some(updated)) if is_storage_too_large(&e) => {
                self.update_with(ns, name, updated, opts, Some(Tracking::Strip))
                    .await
            }
            (r, _) => r,
        }
    }

    async fn update_with(
        &self,
        ns: &str,
        name: &str,
        updated: UpdatedObject,
        opts: &UpdateOptions<'_>,
        tracking: Option<Tracking>,
    ) -> ApiResult<WriteResult> {
        let (subresource, force_allow_create, dry_run) =
            (opts.subresource, opts.force_allow_create, opts.dry_run);
        let admission = opts.admission.clone();
        let key = self.key(ns, name);
        let allow_create = subresource == Subresource::Main
            && (force_allow_create || self.strategy.allow_create_on_update());
        let preconditions = match &updated {
            UpdatedObject::Replace(obj) if !accessor(obj).uid().is_empty() => Preconditions {
                uid: Some(accessor(obj).uid().to_string()),
                resource_version: None,
            },
            _ => Preconditions::default(),
        };
        let outcome = Arc::new(std::sync::Mutex::new((Vec::<String>::new(), false)));
        let this = self.clone();
        let (ns_owned, name_owned) = (ns.to_string(), name.to_string());
        let out = outcome.clone();
        let mut try_update = move |existing: Value, rm: ResponseMeta| {
            let this = this.clone();
            let updated = updated.clone();
            let tracking = tracking.clone();
            let admission = admission.clone();
            let (ns, name) = (ns_owned.clone(), name_owned.clone());
            let out = out.clone();
            async move {
                let attempt = UpdateAttempt {
                    existing,
                    rm,
                    subresource,
                    allow_create,
                    tracking,
                    admission,
                };
                let (obj, warnings, created) = this
                    .try_update(&ns, &name, &updated, attempt)
                    .await
                    .map_err(aborted)?;
                *out.lock().unwrap() = (warnings, created);
                Ok(UpdateOutcome {
                    object: obj,
                    ttl: None,
                })
            }
            .boxed()
        };
        let result = if dry_run {
            // dryrun.go: run the update on the current object without writing.
            let current = self
                .storage
                .get(
                    &key,
                    &GetOptions {
                        resource_version: String::new(),
                        ignore_not_found: true,
                    },
                )
                .await
                .and_then(|o| o.map(SharedObject::into_value).transpose())
                .map_err(|e| self.storage_err(e, name))?;
            let rm = ResponseMeta {
                ttl: 0,
                resource_version: current
                    .as_ref()
                    .map(|c| accessor(c).resource_version().parse().unwrap_or(0))
                    .unwrap_or(0),
            };
            try_update(current.unwrap_or(Value::Null), rm)
                .await
                .map(|o| o.object)
        } else {
            self.storage
                // Missing objects reach `try_update`, as store.go's `GuaranteedUpdate(…, true, …)`:
                // admission runs before the not-found answer.
                .guaranteed_update(&key, true, &preconditions, &mut try_update, None)
                .await
        };
        let object = result.map_err(|e| self.storage_err(e, name))?;
        let (warnings, created) = outcome.lock().unwrap().clone();
        // Namespaces also wait for their `spec.finalizers` (`ShouldDeleteNamespaceDuringUpdate`
        // in pkg/registry/core/namespace/storage/storage.go).
        let namespace_finalizers = self.is_namespaces()
            && object
                .pointer("/spec/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty());
        if !dry_run && should_delete_during_update(&object) && !namespace_finalizers {
            let pre = Preconditions {
                uid: None,
                resource_version: Some(accessor(&object).resource_version().to_string()),
            };
            let mut no_validation = |_: Value| async { Ok(()) }.boxed();
            match self
                .storage
                .delete(&key, &pre, &mut no_validation, None)
                .await
            {
                Ok(_) | Err(StorageError::KeyNotFound { .. }) => {}
                Err(e) => return Err(self.storage_err(e, name)),
            }
        }
        if let (false, Some(hook)) = (dry_run, &self.after_write) {
            hook.after_write(&object).await;
        }
        Ok(WriteResult {
            object,
            warnings,
            created,
        })
    }

    /// The `GuaranteedUpdate` callback of `Store.Update`.
    async fn try_update(
        &self,
        ns: &str,
        name: &str,
        updated: &UpdatedObject,
        attempt: UpdateAttempt,
    ) -> ApiResult<(Value, Vec<String>, bool)> {
        let UpdateAttempt {
            existing,
            rm,
            subresource,
            allow_create,
            tracking,
            admission,
        } = attempt;
        let existing = self.in_storage_version(existing).await?;
        // patch.go's `applyPatch`: a patch of nothing is NotFound unless it may create.
        if rm.resource_version == 0 && !allow_create && matches!(updated, UpdatedObject::Patch(_)) {
            return Err(ApiError::not_found(&self.gr, name));
        }
        // A patch (server-side apply's merge included) is bounded work, but not small: off the
        // async workers, as the strategy is.
        let mut obj = match updated {
            UpdatedObject::Replace(o) => o.clone(),
            UpdatedObject::Patch(f) => {
                let (f, current) = (f.clone(), existing.clone());
                blocking(move || f(&current)).await??
            }
        };
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the updated object is not a JSON object",
            ));
        }
        if accessor(&obj).name() != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                accessor(&obj).name()
            )));
        }
        meta::ensure_namespace(&mut obj, self.description.namespaced, ns)
            .map_err(ApiError::bad_request)?;
        let exists = rm.resource_version != 0;
        // Mutating admission inside the retry loop, on the updated object (update.go's
        // transformer, which store.go runs before its not-found check): a create when nothing
        // exists yet — so a write into a missing namespace is that namespace's 404.
        if let Some(admission) = &admission {
            admission
                .admit(&mut obj, exists.then_some(&existing))
                .await?;
        }
        if !exists && !allow_create {
            return Err(ApiError::not_found(&self.gr, name));
        }
        if !exists {
            meta::wipe_system_fields(&mut obj);
            meta::fill_system_fields(&mut obj);
            accessor_mut(&mut obj).into_map().remove("resourceVersion");
            let (object, warnings) = self.before_create(obj, tracking).await?;
            if let Some(admission) = &admission {
                admission.validate(&object, None).await?;
            }
            return Ok((object, warnings, true));
        }
        let existing_rv = rm.resource_version.to_string();
        let new_rv = accessor(&obj).resource_version().to_string();
        if new_rv.is_empty() || new_rv == "0" {
            if self.strategy.allow_unconditional_update() || subresource == Subresource::Status {
                accessor_mut(&mut obj)
                    .into_map()
                    .insert("resourceVersion".into(), json!(existing_rv));
            } else {
                return Err(ApiError::invalid(
                    // kube's Store names the resource as the kind here (store.go `Update`).
                    &GroupKind {
                        group: self.gr.group.clone(),
                        kind: self.gr.resource.clone(),
                    },
                    name,
                    &[crate::strategy::FieldError {
                        error_type: crate::strategy::ErrorType::Invalid,
                        field: "metadata.resourceVersion".into(),
                        bad_value: Some(json!(0)),
                        detail: "must be specified for an update".into(),
                    }],
                ));
            }
        } else if new_rv != existing_rv {
            return Err(ApiError::optimistic_lock(&self.gr, name));
        }
        // BeforeUpdate: clients never set generation.
        match accessor(&existing).get("generation") {
            Some(g) => {
                accessor_mut(&mut obj).set("generation", g.clone());
            }
            None => {
                accessor_mut(&mut obj).remove("generation");
            }
        }
        let strategy = self.strategy();
        let namespaced = self.description.namespaced;
        let gk = self.gk.clone();
        let name = name.to_string();
        let existing = Arc::new(existing);
        let current = existing.clone();
        let (object, warnings) = blocking(move || {
            let existing = &*current;
            let mut obj = obj;
            let managed = tracking.as_ref().map(|t| t.prepare(existing, &mut obj));
            let restore = |o: &mut Value| meta::restore_from_old(o, existing);
            let validate = |o: &Value| meta::validate_update(o, existing, namespaced);
            let r = match subresource {
                Subresource::Main => {
                    sequence::update(&*strategy, &obj, existing, &restore, &validate)
                }
                Subresource::Status => {
                    sequence::update_status(&*strategy, &obj, existing, &restore, &validate)
                }
            };
            r.map(|o| {
                let mut object = match (&tracking, managed) {
                    (Some(t), Some(m)) => t.finish(existing, o.object, m),
                    _ => o.object,
                };
                // store.go: a write that would change only managedFields times is none.
                crate::fieldmanager::field_manager::ignore_managed_fields_timestamps(
                    &mut object,
                    existing,
                );
                (object, o.warnings)
            })
            .map_err(|e: StrategyError| ApiError::from_strategy(e, &gk, &name))
        })
        .await??;
        // Validating admission after the strategy (`updateValidation`).
        if let Some(admission) = &admission {
            admission.validate(&object, Some(&existing)).await?;
        }
        Ok((object, warnings, false))
    }

    /// How a write by `manager` through `subresource` is tracked in `managedFields` (`None`
    /// for server-side apply, which tracks in the patch itself).
    fn tracking(&self, manager: Option<&str>, subresource: Subresource) -> Option<Tracking> {
        manager.map(|m| Tracking::Manager {
            field_manager: self.storage_field_manager.clone(),
            manager: m.to_string(),
            subresource: subresource.name(),
        })
    }

    /// A stored object (`Null`: none) in the storage version: one written under an earlier
    /// storage version is converted before any hook sees it
    /// ([`Converter::stored_to_storage`]); with a strategy that reads stored objects, read
    /// through it as well ([`Converter::read_in_storage_version`]).
    pub(super) async fn in_storage_version(&self, obj: Value) -> ApiResult<Value> {
        if self.converter.reads() && !obj.is_null() {
            // As kube's CRD codec decodes the current object: pruned and defaulted by the
            // current schema, so an unchanged apply is no change (no generation bump).
            let c = self.converter.clone();
            return blocking(move || c.read_in_storage_version(&obj)).await?;
        }
        if !self.converter.is_stale_version(&obj) {
            return Ok(obj);
        }
        let c = self.converter.clone();
        blocking(move || c.stored_to_storage(obj)).await?
    }
}

/// What one `GuaranteedUpdate` attempt of [`Store::update`] works with.
struct UpdateAttempt {
    /// The current object (`Null`: none) and its metadata.
    existing: Value,
    rm: ResponseMeta,
    subresource: Subresource,
    allow_create: bool,
    tracking: Option<Tracking>,
    admission: Option<Arc<dyn WriteAdmission>>,
}

/// `ShouldDeleteDuringUpdate`: terminating, no finalizers left, no grace left.
fn should_delete_during_update(obj: &Value) -> bool {
    let meta = accessor(obj);
    let terminating = meta.is_terminating();
    let finalizers = !meta.finalizers().is_empty();
    let grace = meta.deletion_grace_period_seconds().unwrap_or(0);
    terminating && !finalizers && grace == 0
}

impl Store {
    /// `Store.PredicateFunc`: the selectors matched against labels, `metadata.name`,
    /// `metadata.namespace` and the plugin's selectable fields, with the page.
    pub fn predicate(&self, opts: &ListOptions) -> SelectionPredicate {
        SelectionPredicate {
            label: opts.label_selector.clone(),
            field: opts.field_selector.clone(),
            get_attrs: Some(self.attrs_func()),
            converted: !self.converter.is_identity(),
            limit: opts.limit,
            continue_token: opts.continue_token.clone(),
            allow_watch_bookmarks: opts.allow_watch_bookmarks,
        }
    }

    /// `GetAttrs` in this Store's version: labels and selectable fields are read from the
    /// object converted to it (kube selects custom resources in the request's version).
    fn attrs_func(&self) -> wasm_apiserver_storage::selection::AttrsFunc {
        let attrs = default_attrs(self.description.selectable_fields.clone());
        if self.converter.is_identity() && !self.converter.reads() {
            return attrs;
        }
        let converter = self.converter.clone();
        Arc::new(move |obj: &Value| {
            let converted = converter
                .from_storage_ref(obj, Sharing::Stored)
                .map_err(|e| e.message)?;
            attrs(&converted)
        })
    }

    /// The storage options of a list or watch under this resource's key prefix.
    pub fn storage_list_options(&self, opts: &ListOptions) -> wasm_apiserver_storage::ListOptions {
        wasm_apiserver_storage::ListOptions {
            resource_version: opts.resource_version.clone(),
            resource_version_match: opts.resource_version_match,
            predicate: self.predicate(opts),
            recursive: true,
            progress_notify: false,
            send_initial_events: opts.send_initial_events,
            watch_deadline: opts.watch_deadline,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The Store with a native strategy over a real embedded store (upstream's
    //! `registry/generic/registry/store_test.go`, rewritten for this Store's rules).
    use super::super::deletion::{DeleteOptions, DeleteResult};
    use super::super::testing::{widget, widgets_store, Widgets};
    use super::*;
    use crate::registry::{CreateOptions, UpdateOptions, WriteAdmission};
    use futures::future::BoxFuture;
    use serde_json::json;

    /// Admission that records its stages in the strategy's log, labels what it admits and
    /// refuses what `refuse` names.
    #[derive(Debug)]
    struct Recorder {
        log: Arc<Widgets>,
        refuse: &'static str,
    }

    impl WriteAdmission for Recorder {
        fn admit<'a>(
            &'a self,
            object: &'a mut Value,
            _: Option<&'a Value>,
        ) -> BoxFuture<'a, ApiResult<()>> {
            self.log.calls.lock().unwrap().push("admit");
            object["metadata"]["labels"] = json!({"admitted": "yes"});
            Box::pin(async { Ok(()) })
        }
        fn validate<'a>(
            &'a self,
            object: &'a Value,
            _: Option<&'a Value>,
        ) -> BoxFuture<'a, ApiResult<()>> {
            self.log.calls.lock().unwrap().push("validate admission");
            let refuse = accessor(object).name() == self.refuse;
            Box::pin(async move {
                match refuse {
                    true => Err(ApiError::bad_request("refused by admission")),
                    false => Ok(()),
                }
            })
        }
        fn admit_delete<'a>(&'a self, _: &'a Value) -> BoxFuture<'a, ApiResult<()>> {
            self.log.calls.lock().unwrap().push("admit delete");
            Box::pin(async { Ok(()) })
        }
    }

    fn with_admission(log: &Arc<Widgets>, refuse: &'static str) -> Option<Arc<dyn WriteAdmission>> {
        Some(Arc::new(Recorder {
            log: log.clone(),
            refuse,
        }))
    }

    #[tokio::test]
    async fn create_runs_admission_and_the_hooks_in_kubes_order() {
        let (_dir, strategy, store) = widgets_store().await;
        let mut w = widget("a", "small");
        w["status"] = json!({"ready": true});
        let opts = CreateOptions {
            admission: with_admission(&strategy, ""),
            ..CreateOptions::host()
        };
        let res = store.create("default", w, &opts).await.unwrap();
        assert_eq!(
            strategy.take_calls(),
            [
                "admit",
                "prepare_for_create",
                "validate",
                "warnings_on_create",
                "canonicalize",
                "validate admission"
            ]
        );
        let meta = accessor(&res.object);
        assert!(!meta.uid().is_empty() && !meta.resource_version().is_empty());
        assert!(!meta.creation_timestamp().is_empty());
        // The strategy saw what admission changed; it dropped the status and defaulted.
        assert_eq!(res.object["metadata"]["labels"]["admitted"], "yes");
        assert_eq!(res.object.get("status"), None);
        assert_eq!(res.object["spec"]["color"], "blue");
        assert_eq!(store.get("default", "a", "").await.unwrap(), res.object);
        // The same name again: AlreadyExists.
        let again = store
            .create("default", widget("a", "small"), &CreateOptions::host())
            .await
            .unwrap_err();
        assert_eq!((again.code, again.reason), (409, "AlreadyExists"));
    }

    #[tokio::test]
    async fn refused_creates_store_nothing() {
        let (_dir, strategy, store) = widgets_store().await;
        let e = store
            .create("default", widget("bad", "huge"), &CreateOptions::host())
            .await
            .unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert!(
            e.message.contains("spec.size: Unsupported value: \"huge\""),
            "{}",
            e.message
        );
        let opts = CreateOptions {
            admission: with_admission(&strategy, "no"),
            ..CreateOptions::host()
        };
        let e = store
            .create("default", widget("no", "small"), &opts)
            .await
            .unwrap_err();
        assert_eq!(e.message, "refused by admission");
        let dry = CreateOptions {
            dry_run: true,
            ..CreateOptions::host()
        };
        let res = store
            .create("default", widget("dry", "small"), &dry)
            .await
            .unwrap();
        assert_eq!(
            res.object["spec"]["color"], "blue",
            "a dry run answers the object"
        );
        for name in ["bad", "no", "dry"] {
            let e = store.get("default", name, "").await.unwrap_err();
            assert_eq!(e.code, 404, "{name} was stored");
        }
    }

    #[tokio::test]
    async fn generate_name_gets_a_suffix() {
        let (_dir, _strategy, store) = widgets_store().await;
        let mut w = widget("", "small");
        w["metadata"] = json!({"generateName": "w-", "namespace": "default"});
        let res = store
            .create("default", w, &CreateOptions::host())
            .await
            .unwrap();
        let name = accessor(&res.object).name().to_string();
        assert!(name.starts_with("w-") && name.len() == 7, "{name}");
    }

    #[tokio::test]
    async fn updates_keep_what_their_strategy_keeps_and_check_resource_versions() {
        let (_dir, strategy, store) = widgets_store().await;
        let created = store
            .create("default", widget("a", "small"), &CreateOptions::host())
            .await
            .unwrap()
            .object;
        // The status through /status; the spec there is kept.
        let mut s = created.clone();
        s["status"] = json!({"ready": true});
        s["spec"]["size"] = json!("large");
        let after_status = store
            .update(
                "default",
                "a",
                UpdatedObject::Replace(s),
                &UpdateOptions::host(Subresource::Status),
            )
            .await
            .unwrap()
            .object;
        assert_eq!(after_status["status"]["ready"], true);
        assert_eq!(after_status["spec"]["size"], "small");
        // The main resource keeps the status, admission runs inside the update.
        strategy.take_calls();
        let mut u = after_status.clone();
        u["spec"]["size"] = json!("medium");
        u.as_object_mut().unwrap().remove("status");
        let opts = UpdateOptions {
            admission: with_admission(&strategy, ""),
            ..UpdateOptions::host(Subresource::Main)
        };
        let updated = store
            .update("default", "a", UpdatedObject::Replace(u), &opts)
            .await
            .unwrap();
        assert!(!updated.created);
        assert_eq!(updated.object["spec"]["size"], "medium");
        assert_eq!(updated.object["status"]["ready"], true);
        assert_eq!(
            strategy.take_calls(),
            [
                "admit",
                "prepare_for_update",
                "validate_update",
                "canonicalize",
                "validate admission"
            ]
        );
        // A stale resourceVersion: Conflict, as GuaranteedUpdate's precondition.
        let mut stale = created.clone();
        stale["spec"]["size"] = json!("large");
        let e = store
            .update(
                "default",
                "a",
                UpdatedObject::Replace(stale),
                &UpdateOptions::host(Subresource::Main),
            )
            .await
            .unwrap_err();
        assert_eq!((e.code, e.reason), (409, "Conflict"));
        // No create-on-update for this strategy.
        let e = store
            .update(
                "default",
                "missing",
                UpdatedObject::Replace(widget("missing", "small")),
                &UpdateOptions::host(Subresource::Main),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, 404);
    }

    #[tokio::test]
    async fn a_finalizer_holds_a_deleted_object_until_it_is_removed() {
        let (_dir, strategy, store) = widgets_store().await;
        let mut w = widget("a", "small");
        w["metadata"]["finalizers"] = json!(["example.dev/hold"]);
        store
            .create("default", w, &CreateOptions::host())
            .await
            .unwrap();
        let opts = DeleteOptions {
            admission: with_admission(&strategy, ""),
            ..Default::default()
        };
        strategy.take_calls();
        let pending = match store.delete("default", "a", &opts).await.unwrap() {
            DeleteResult::Pending(o) => o,
            DeleteResult::Deleted(_) => panic!("deleted despite its finalizer"),
        };
        assert!(strategy.take_calls().contains(&"admit delete"));
        assert!(accessor(&pending).is_terminating());
        // The finalizer removed: the update deletes it (ShouldDeleteDuringUpdate).
        let mut done = pending.clone();
        done["metadata"]["finalizers"] = json!([]);
        store
            .update(
                "default",
                "a",
                UpdatedObject::Replace(done),
                &UpdateOptions::host(Subresource::Main),
            )
            .await
            .unwrap();
        assert_eq!(store.get("default", "a", "").await.unwrap_err().code, 404);
        // Without finalizers: gone at once.
        store
            .create("default", widget("b", "small"), &CreateOptions::host())
            .await
            .unwrap();
        let gone = store
            .delete("default", "b", &DeleteOptions::default())
            .await
            .unwrap();
        assert!(matches!(gone, DeleteResult::Deleted(_)));
    }
}

//! What a handler needs about the resource it serves, in the version a request names: kube's
//! `handlers.RequestScope` (`k8s.io/apiserver/pkg/endpoints/handlers/rest.go`), built once per
//! served resource and version by the installer (`endpoints/installer.go`) — here when the
//! [`ResourceMap`](super::ResourceMap) is built, so every request of one snapshot shares it by
//! `Arc`. It holds the resource's [`Store`] (kube's `rest.Storage`), the **Converter** between
//! this version and the storage version, the kind and resource of this version, and the field
//! manager of this version's schema (server-side apply runs in the request's version). The
//! serializer kube keeps here is chosen per request (`crate::server::negotiation`).
//!
//! Conversion in the request path goes through a scope only: [`RequestScope::decode`] takes a
//! request's object to the storage version every hook sees, the `encode` family takes stored
//! objects to the request's version. (The Store converts on its own for what it reads in its
//! version: selection predicates and objects stored under an earlier storage version.)

use super::converter::{Converted, Converter, Sharing};
use super::store::{PatchFn, Store};
use crate::fieldmanager::FieldManager;
use crate::status::{ApiError, ApiResult};
use serde_json::Value;
use std::sync::Arc;
use wasm_apiserver_apimachinery::{GroupKind, GroupResource};
use wasm_apiserver_storage::SharedObject;

/// One served resource in one version (kube's `RequestScope`).
pub struct RequestScope {
    /// The resource's Store as served in this version (`rest.Storage`).
    pub store: Arc<Store>,
    /// The field manager of this version's schema: server-side apply merges in the
    /// request's version, as kube's `RequestScope.FieldManager`.
    pub field_manager: Arc<FieldManager>,
    /// The `Warning` every answer in this version carries when it is deprecated
    /// ([`crate::strategy::ResourceDescription::deprecation_warning`]).
    pub deprecation_warning: Option<String>,
    /// `RequestScope.Convertor`: between this version and the storage version.
    converter: Arc<Converter>,
}

impl RequestScope {
    /// The scope of `store` (a Store in the version it serves, [`Store::at_version`]).
    pub fn new(store: Arc<Store>) -> RequestScope {
        let d = &store.description;
        let field_manager = if store.converter.is_identity() {
            store.storage_field_manager.clone()
        } else {
            Arc::new(FieldManager::new(d))
        };
        RequestScope {
            deprecation_warning: d.deprecation_warning(&d.version),
            converter: store.converter.clone(),
            field_manager,
            store,
        }
    }

    /// `RequestScope.Kind`'s group and kind (for `Invalid` answers).
    pub fn kind(&self) -> &GroupKind {
        &self.store.gk
    }

    /// `RequestScope.Resource`'s group and resource (for messages).
    pub fn resource(&self) -> &GroupResource {
        &self.store.gr
    }

    /// This version's `apiVersion` (`<group>/<version>`, or `v1` for the core group).
    pub fn api_version(&self) -> &str {
        &self.converter.api_version
    }

    /// Decode: a request's object (in this version) in the storage version the hooks see;
    /// converted off the async workers when it must be. Errors: the plugin's `convert`.
    pub async fn decode(&self, obj: Value) -> ApiResult<Value> {
        self.converter.to_storage_async(obj).await
    }

    /// Decode around a patch: `patch` applies to the current object in this version (kube's
    /// patcher works on the object decoded in the request's version) and `check` to its
    /// result, which is then taken to the storage version. Runs in the Store's blocking task.
    pub fn decode_patch(
        &self,
        patch: PatchFn,
        check: impl Fn(&mut Value) -> ApiResult<()> + Send + Sync + 'static,
    ) -> PatchFn {
        let converter = self.converter.clone();
        // The Store hands over the current object already read through a strategy that
        // reads stored objects: only its version is converted here (not shared: it is a read
        // state, not the stored one).
        let sharing = if converter.reads() {
            Sharing::No
        } else {
            Sharing::Stored
        };
        Arc::new(move |current: &Value| {
            let mut patched = if current.is_null() || !converter.needs_conversion(current) {
                patch(current)?
            } else {
                patch(&*converter.from_storage_ref(current, sharing)?)?
            };
            check(&mut patched)?;
            converter.to_storage(patched)
        })
    }

    /// Whether a stored object must be converted to be answered in this version (else its
    /// stored bytes are written as they are).
    pub fn must_encode(&self, obj: &SharedObject) -> bool {
        self.converter.may_convert(obj)
    }

    /// Encode: a storage-version object in this version, off the async workers when it
    /// converts; `sharing` says whether the result may be cached for other requests.
    pub async fn encode(&self, obj: Arc<Value>, sharing: Sharing) -> ApiResult<Arc<Value>> {
        self.converter.from_storage_async(obj, sharing).await
    }

    /// [`RequestScope::encode`] on the calling thread (a list written off the async workers).
    pub fn encode_blocking(&self, obj: &Arc<Value>, sharing: Sharing) -> ApiResult<Arc<Value>> {
        self.converter.from_storage(obj, sharing)
    }

    /// [`RequestScope::encode_blocking`] of every object of a list, with each answer's JSON
    /// (shared with other requests): those in another version converted together ([`super::converter::Converter::convert_all`]).
    pub fn encode_all_json_blocking(
        &self,
        objs: &[Arc<Value>],
        sharing: Sharing,
    ) -> ApiResult<Vec<Arc<super::converter::Converted>>> {
        self.converter.convert_all(objs, sharing)
    }

    /// [`RequestScope::encode`] of every object of a list.
    pub async fn encode_list(
        &self,
        objs: Vec<Arc<Value>>,
        sharing: Sharing,
    ) -> ApiResult<Vec<Arc<Value>>> {
        self.converter.list_from_storage(objs, sharing).await
    }

    /// A stored object encoded from its bytes: decoded, then [`RequestScope::encode`]d.
    /// Errors: a corrupt stored object (as the storage error's Status), the conversion's.
    pub async fn encode_stored(
        &self,
        obj: &SharedObject,
        sharing: Sharing,
        name: &str,
    ) -> ApiResult<Arc<Value>> {
        let stored = obj
            .to_arc()
            .map_err(|e| ApiError::from_storage(&e, &self.store.gr, name))?;
        self.encode(stored, sharing).await
    }

    /// A watch event's object in this version with its JSON, shared with this version's
    /// other watchers ([`Converter::event_async`]).
    pub async fn encode_event(
        &self,
        obj: Arc<Value>,
        sharing: Sharing,
    ) -> ApiResult<Arc<Converted>> {
        self.converter.event_async(obj, sharing).await
    }

    /// An object the plugin's `printer-cells` may read: in the storage version (an object
    /// stored under an earlier storage version converted), as every hook sees it.
    pub fn for_hooks<'a>(&self, stored: &'a Value) -> ApiResult<std::borrow::Cow<'a, Value>> {
        Ok(if self.converter.is_stale_version(stored) {
            std::borrow::Cow::Owned(self.converter.stored_to_storage(stored.clone())?)
        } else {
            std::borrow::Cow::Borrowed(stored)
        })
    }
}

//! A wasm policy's context reads (`get-object`, `list-objects` of
//! `wit/admission/0.1.0/admission.wit`), answered from the request snapshot's Stores — the
//! watch cache, not storage: each read asks for the resourceVersion of the newest write this
//! replica acknowledged for that resource (`Storage::newest_write`), which the cache serves
//! once it has caught up to it, so an object created just before on this replica is seen.
//! A read of a resource the policy did not declare is refused (`forbidden`).

use crate::plugin::context_reads::{ContextReads, GroupVersionResource, ReadError};
use crate::registry::converter::Sharing;
use crate::registry::{ListOptions, Snapshot, Store};
use std::sync::Arc;
use wasm_apiserver_storage::{LabelSelector, ResourceVersionMatch};

/// The most JSON one `list-objects` answers, bytes.
pub const MAX_LIST_BYTES: usize = 64 << 20;

/// `resource.group` (`resource` for the core group), as kube names a resource in messages.
pub fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

/// The resourceVersion a read from `store`'s watch cache asks for to see every write this
/// replica acknowledged to its resource (`Storage::newest_write`; `"0"`, any state, for a
/// resource it never wrote). Context reads and ValidatingAdmissionPolicy params read at it.
pub fn fresh_resource_version(store: &Store) -> String {
    match store.storage.newest_write() {
        0 => "0".to_string(),
        rv => rv.to_string(),
    }
}

/// The reads of one policy call, over one request's snapshot.
pub struct CacheReads {
    /// The policy, for messages.
    pub policy: String,
    /// The request's snapshot.
    pub snapshot: Arc<Snapshot>,
    /// What the policy declared it reads.
    pub declared: Vec<GroupVersionResource>,
    /// The runtime the reads wait on (they are made from a blocking thread).
    pub runtime: tokio::runtime::Handle,
}

impl CacheReads {
    /// The Store serving `gvr` in its version (the storage version when none is named).
    fn store(&self, gvr: &GroupVersionResource) -> Result<Arc<Store>, ReadError> {
        let what = group_resource(&gvr.group, &gvr.resource);
        if !self
            .declared
            .iter()
            .any(|d| d.group == gvr.group && d.resource == gvr.resource)
        {
            return Err(ReadError::Forbidden(format!(
                "admission plugin {:?} did not declare that it reads {what}",
                self.policy
            )));
        }
        let resources = &self.snapshot.resources;
        let store = if gvr.version.is_empty() {
            resources
                .iter()
                .find(|s| s.gr.group == gvr.group && s.gr.resource == gvr.resource)
                .cloned()
        } else {
            resources.get(&gvr.group, &gvr.version, &gvr.resource)
        };
        store.ok_or_else(|| ReadError::Invalid(format!("{gvr} is not served")))
    }

    /// An object in the Store's version, as JSON text.
    fn text(store: &Store, obj: &Arc<serde_json::Value>) -> Result<String, ReadError> {
        let converted = store
            .converter
            .from_storage_json(obj, Sharing::Stored)
            .map_err(|e| ReadError::Unavailable(e.message))?;
        Ok(String::from_utf8_lossy(converted.json()).into_owned())
    }
}

impl ContextReads for CacheReads {
    fn get(
        &self,
        gvr: &GroupVersionResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<String>, ReadError> {
        let store = self.store(gvr)?;
        let ns = if store.description.namespaced {
            namespace
        } else {
            ""
        };
        let rv = fresh_resource_version(&store);
        let got = self.runtime.block_on(store.get_shared(ns, name, &rv));
        match got {
            Ok(o) => {
                let obj = o
                    .to_arc()
                    .map_err(|e| ReadError::Unavailable(e.to_string()))?;
                Self::text(&store, &obj).map(Some)
            }
            Err(e) if e.code == 404 => Ok(None),
            Err(e) => Err(ReadError::Unavailable(e.message)),
        }
    }

    fn list(
        &self,
        gvr: &GroupVersionResource,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<String>, ReadError> {
        let store = self.store(gvr)?;
        let selector = LabelSelector::parse(label_selector)
            .map_err(|e| ReadError::Invalid(format!("label selector {label_selector:?}: {e}")))?;
        let ns = if store.description.namespaced {
            namespace
        } else {
            ""
        };
        let opts = ListOptions {
            label_selector: selector,
            resource_version: fresh_resource_version(&store),
            resource_version_match: ResourceVersionMatch::NotOlderThan,
            ..Default::default()
        };
        let list = self
            .runtime
            .block_on(store.list(ns, &opts))
            .map_err(|e| ReadError::Unavailable(e.message))?;
        let items = store
            .decode_items(&list)
            .map_err(|e| ReadError::Unavailable(e.message))?;
        // The host's copy is bounded too (the guest's memory cap applies only once it is
        // handed over).
        let mut texts = Vec::with_capacity(items.len());
        let mut bytes = 0usize;
        for o in &items {
            let t = Self::text(&store, o)?;
            bytes += t.len();
            if bytes > MAX_LIST_BYTES {
                return Err(ReadError::Unavailable(format!(
                    "{gvr} in {namespace:?} is larger than {} MiB of JSON; narrow the read with a label selector",
                    MAX_LIST_BYTES >> 20
                )));
            }
            texts.push(t);
        }
        Ok(texts)
    }
}

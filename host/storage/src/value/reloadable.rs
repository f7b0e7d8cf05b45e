//! Transformers that a new encryption configuration replaces while the server runs
//! (`--encryption-provider-config-automatic-reload`; kube's
//! `k8s.io/apiserver/pkg/server/options/encryptionconfig/controller/controller.go` swaps the
//! transformers of a `DynamicTransformers` the same way).

use super::ResourceTransformers;
use crate::errors::Result;
use crate::store::ValueTransformer;
use std::borrow::Cow;
use std::sync::{Arc, Mutex, RwLock, Weak};

/// The transformers of every resource, shared by the StorageFactory (which hands out one per
/// storage it builds) and whoever reloads the configuration. Fixed ones hand out the
/// configured transformer itself; reloadable ones hand out a slot that
/// [`ReloadableTransformers::replace`] repoints, at the cost of a lock read per value.
#[derive(Clone)]
pub struct ReloadableTransformers(Arc<Inner>);

struct Inner {
    current: RwLock<ResourceTransformers>,
    reloadable: bool,
    slots: Mutex<Vec<Weak<Slot>>>,
}

/// One resource's transformer, repointed on reload.
struct Slot {
    group: String,
    resource: String,
    current: RwLock<Arc<dyn ValueTransformer>>,
}

impl Slot {
    fn get(&self) -> Arc<dyn ValueTransformer> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl ValueTransformer for Slot {
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>> {
        self.get().to_storage(data, key)
    }
    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        self.get().from_storage(data, key)
    }
    fn from_storage_cow<'a>(&self, data: &'a [u8], key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        self.get().from_storage_cow(data, key)
    }
}

impl Default for ReloadableTransformers {
    fn default() -> Self {
        ReloadableTransformers::fixed(ResourceTransformers::default())
    }
}

impl ReloadableTransformers {
    /// Transformers that never change.
    pub fn fixed(t: ResourceTransformers) -> ReloadableTransformers {
        ReloadableTransformers::build(t, false)
    }

    /// Transformers that [`ReloadableTransformers::replace`] changes.
    pub fn reloadable(t: ResourceTransformers) -> ReloadableTransformers {
        ReloadableTransformers::build(t, true)
    }

    fn build(t: ResourceTransformers, reloadable: bool) -> ReloadableTransformers {
        ReloadableTransformers(Arc::new(Inner {
            current: RwLock::new(t),
            reloadable,
            slots: Mutex::new(Vec::new()),
        }))
    }

    /// The transformer of `group`/`resource` now and, when reloadable, after every reload.
    pub fn for_resource(&self, group: &str, resource: &str) -> Arc<dyn ValueTransformer> {
        // Held until the slot is registered, so a reload cannot fall in between and miss it
        // (the same lock order as `replace`).
        let current = self.0.current.read().unwrap_or_else(|e| e.into_inner());
        let t = current.for_resource(group, resource);
        if !self.0.reloadable {
            return t;
        }
        let slot = Arc::new(Slot {
            group: group.to_string(),
            resource: resource.to_string(),
            current: RwLock::new(t),
        });
        let mut slots = self.0.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.retain(|s| s.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        drop(current);
        slot
    }

    /// Use `t` from now on, for every storage built before and after. Returns false (and
    /// changes nothing) when these transformers are fixed.
    pub fn replace(&self, t: ResourceTransformers) -> bool {
        if !self.0.reloadable {
            return false;
        }
        let mut current = self.0.current.write().unwrap_or_else(|e| e.into_inner());
        let slots = self.0.slots.lock().unwrap_or_else(|e| e.into_inner());
        for slot in slots.iter().filter_map(Weak::upgrade) {
            *slot.current.write().unwrap_or_else(|e| e.into_inner()) =
                t.for_resource(&slot.group, &slot.resource);
        }
        *current = t;
        true
    }

    /// The transformers in use now (what a reload replaces).
    pub fn current(&self) -> ResourceTransformers {
        self.0
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether any resource is encrypted now.
    pub fn is_configured(&self) -> bool {
        self.0
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_configured()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{EncryptCheckTransformer, SecretboxTransformer};
    use std::collections::BTreeMap;

    fn secrets_with(key: u8) -> ResourceTransformers {
        let t: Arc<dyn ValueTransformer> = Arc::new(SecretboxTransformer::new(&[key; 32]).unwrap());
        ResourceTransformers::new(
            BTreeMap::from([(("".to_string(), "secrets".to_string()), t)]),
            Arc::new(EncryptCheckTransformer),
        )
    }

    #[test]
    fn a_reload_repoints_storages_built_before_it() {
        let r = ReloadableTransformers::reloadable(secrets_with(1));
        let secrets = r.for_resource("", "secrets");
        let configmaps = r.for_resource("", "configmaps");
        let sealed = secrets.to_storage(b"{}".to_vec(), "k").unwrap();
        assert!(secrets.from_storage(&sealed, "k").is_ok());
        assert!(r.replace(secrets_with(2)));
        assert!(secrets.from_storage(&sealed, "k").is_err(), "the new key");
        let resealed = secrets.to_storage(b"{}".to_vec(), "k").unwrap();
        assert!(r
            .for_resource("", "secrets")
            .from_storage(&resealed, "k")
            .is_ok());
        assert_eq!(configmaps.to_storage(b"{}".to_vec(), "k").unwrap(), b"{}");
        // Fixed ones do not change.
        let f = ReloadableTransformers::fixed(secrets_with(1));
        assert!(!f.replace(secrets_with(2)));
        assert!(f
            .for_resource("", "secrets")
            .from_storage(&sealed, "k")
            .is_ok());
    }
}

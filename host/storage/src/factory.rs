//! `StorageFactory` (`k8s.io/apiserver/pkg/server/storage/storage_factory.go`): for each
//! GroupResource, the key prefix (`/<resource>` for the core group, `/<group>/<resource>`
//! otherwise, under `--etcd-prefix`), the codec (JSON), the value transformer of each resource (identity, or encryption at rest:
//! [`StorageFactory::set_transformers`]), the
//! backend (the default one, or an etcd-servers override per resource,
//! `--etcd-servers-overrides`), returned as a ready [`Storage`].

use crate::backend::Backend;
use crate::cacher::{Cacher, CacherConfig, CacherStats};
use crate::embedded::{Embedded, EmbeddedOptions};
use crate::errors::BackendError;
use crate::etcd3::{Etcd3, Etcd3Config};
use crate::store::{KvStore, StoreConfig};
use crate::value::ReloadableTransformers;
use crate::Storage;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

/// Where objects are stored.
#[derive(Clone, Debug)]
pub enum BackendConfig {
    /// The embedded SQLite store in a directory (`--data-dir`), with its options (the
    /// compaction interval, `--etcd-compaction-interval`; the request size limit,
    /// `--embedded-max-request-bytes`).
    Embedded(PathBuf, EmbeddedOptions),
    /// etcd (`--etcd-servers`, TLS files, …).
    Etcd(Etcd3Config),
}

/// A connected backend.
#[derive(Clone)]
pub enum AnyBackend {
    /// The embedded store.
    Embedded(Arc<Embedded>),
    /// etcd.
    Etcd(Arc<Etcd3>),
}

impl AnyBackend {
    /// Open or connect. Errors: the backend cannot be opened or reached.
    pub async fn open(config: &BackendConfig) -> Result<AnyBackend, BackendError> {
        Ok(match config {
            BackendConfig::Embedded(dir, options) => {
                std::fs::create_dir_all(dir).map_err(|e| {
                    BackendError::Other(format!("cannot create {}: {e}", dir.display()))
                })?;
                AnyBackend::Embedded(Arc::new(Embedded::open(dir, options.clone()).await?))
            }
            BackendConfig::Etcd(c) => AnyBackend::Etcd(Arc::new(Etcd3::connect(c.clone()).await?)),
        })
    }

    /// Health for `/readyz`.
    pub async fn health(&self) -> Result<(), BackendError> {
        match self {
            AnyBackend::Embedded(b) => b.health().await,
            AnyBackend::Etcd(b) => b.health().await,
        }
    }

    /// The backend as a trait object (for what is stored beside the objects, such as the
    /// [`BlobStore`](crate::blob_store::BlobStore)).
    pub fn backend(&self) -> Arc<dyn Backend> {
        match self {
            AnyBackend::Embedded(b) => b.clone(),
            AnyBackend::Etcd(b) => b.clone(),
        }
    }

    fn store(&self, config: StoreConfig) -> Arc<dyn Storage> {
        match self {
            AnyBackend::Embedded(b) => Arc::new(KvStore::new(b.clone(), config)),
            AnyBackend::Etcd(b) => Arc::new(KvStore::new(b.clone(), config)),
        }
    }
}

/// A group and a plural resource, e.g. (`""`, `pods`) or (`example.dev`, `widgets`).
pub type GroupResource = (String, String);

/// Builds the [`Storage`] of each resource.
pub struct StorageFactory {
    prefix: String,
    default_backend: AnyBackend,
    overrides: BTreeMap<GroupResource, AnyBackend>,
    transformers: ReloadableTransformers,
    watch_cache: bool,
    watch_cache_overrides: BTreeMap<GroupResource, bool>,
    cachers: Mutex<Vec<(GroupResource, Weak<Cacher>)>>,
}

impl StorageFactory {
    /// A factory storing everything under `prefix` (e.g. `/registry`) in `default_backend`.
    pub fn new(prefix: &str, default_backend: AnyBackend) -> StorageFactory {
        StorageFactory {
            prefix: prefix.to_string(),
            default_backend,
            overrides: BTreeMap::new(),
            transformers: ReloadableTransformers::default(),
            watch_cache: false,
            // kube-apiserver does not cache events by default (`--watch-cache-sizes`).
            watch_cache_overrides: [((String::new(), "events".to_string()), false)]
                .into_iter()
                .collect(),
            cachers: Mutex::new(Vec::new()),
        }
    }

    /// Put a watch cache ([`Cacher`]) in front of the storage of every resource built from now
    /// on (`--watch-cache`; off by default here, on by default in kube-apiserver). Resources
    /// switched with [`StorageFactory::set_watch_cache_for`] keep their setting; `events` is
    /// off unless switched on.
    pub fn set_watch_cache(&mut self, enabled: bool) {
        self.watch_cache = enabled;
    }

    /// Switch the watch cache of one GroupResource on or off regardless of
    /// [`StorageFactory::set_watch_cache`] (`--watch-cache-sizes <resource>[.<group>]#0`
    /// turns one off).
    pub fn set_watch_cache_for(&mut self, gr: GroupResource, enabled: bool) {
        self.watch_cache_overrides.insert(gr, enabled);
    }

    /// Whether [`StorageFactory::storage_for`] caches this resource.
    pub fn watch_cache_enabled(&self, group: &str, plural: &str) -> bool {
        self.watch_cache_overrides
            .get(&(group.to_string(), plural.to_string()))
            .copied()
            .unwrap_or(self.watch_cache)
    }

    /// The counters of every live watch cache this factory built, by GroupResource (for the
    /// host's metrics).
    pub fn watch_cache_stats(&self) -> Vec<(GroupResource, CacherStats)> {
        let mut cachers = self.cachers.lock().unwrap_or_else(|e| e.into_inner());
        cachers.retain(|(_, c)| c.strong_count() > 0);
        cachers
            .iter()
            .filter_map(|(gr, c)| c.upgrade().map(|c| (gr.clone(), c.stats())))
            .collect()
    }

    /// Encrypt at rest (`--encryption-provider-config`): the transformer of every resource
    /// whose storage is built from now on. Unset, everything is stored as encoded.
    /// A reloadable set keeps serving storages built before its
    /// [`ReloadableTransformers::replace`].
    pub fn set_transformers(&mut self, transformers: ReloadableTransformers) {
        self.transformers = transformers;
    }

    /// The transformers of [`StorageFactory::set_transformers`].
    pub fn transformers(&self) -> &ReloadableTransformers {
        &self.transformers
    }

    /// Store one GroupResource in another backend (`--etcd-servers-overrides`).
    pub fn set_override(&mut self, gr: GroupResource, backend: AnyBackend) {
        self.overrides.insert(gr, backend);
    }

    /// The backend that stores `group`/`plural`: its override, or the default one.
    pub fn backend_for(&self, group: &str, plural: &str) -> &AnyBackend {
        self.overrides
            .get(&(group.to_string(), plural.to_string()))
            .unwrap_or(&self.default_backend)
    }

    /// The storage prefix (`--etcd-prefix`, e.g. `/registry`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The default backend.
    pub fn default_backend(&self) -> &AnyBackend {
        &self.default_backend
    }

    /// The key prefix of a resource under the storage prefix: `/<plural>` for core,
    /// `/<group>/<plural>` otherwise.
    pub fn resource_prefix(group: &str, plural: &str) -> String {
        if group.is_empty() {
            format!("/{plural}")
        } else {
            format!("/{group}/{plural}")
        }
    }

    /// The storage of one resource whose objects have `api_version` and `kind`: a
    /// [`KvStore`], behind a [`Cacher`] (default [`CacherConfig`], keys
    /// `<prefix>/<namespace>/<name>` or `<prefix>/<name>`) when the watch cache is on for it.
    /// A cacher starts listing at once inside a Tokio runtime, else on first use.
    pub fn storage_for(
        &self,
        group: &str,
        plural: &str,
        api_version: &str,
        kind: &str,
    ) -> Arc<dyn Storage> {
        let backend = self
            .overrides
            .get(&(group.to_string(), plural.to_string()))
            .unwrap_or(&self.default_backend);
        let mut config = StoreConfig::new(
            &self.prefix,
            &Self::resource_prefix(group, plural),
            api_version,
            kind,
        );
        config.transformer = self.transformers.for_resource(group, plural);
        let store = backend.store(config);
        if !self.watch_cache_enabled(group, plural) {
            return store;
        }
        let cacher = Arc::new(Cacher::new(
            store,
            CacherConfig::new(&Self::resource_prefix(group, plural), api_version, kind),
        ));
        self.cachers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((
                (group.to_string(), plural.to_string()),
                Arc::downgrade(&cacher),
            ));
        cacher
    }
}

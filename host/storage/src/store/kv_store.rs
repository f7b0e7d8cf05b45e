//! [`KvStore`]: the one implementation of [`Storage`] over any [`Backend`] — create, delete,
//! get, guaranteed update with optimistic concurrency and the no-op write rule
//! (`k8s.io/apiserver/pkg/storage/etcd3/store.go`). Lists are in `list.rs`, watches in
//! `watcher.rs`.

use super::value_transformer::{IdentityTransformer, ValueTransformer};
use super::versioner::{parse_object, parse_resource_version, set_resource_version, ForStorage};
use super::watcher::WATCH_BUFFER;
use crate::backend::{prefix_end, Backend, KeyValue};
use crate::errors::{Result, StorageError};
use crate::interfaces::{
    GetOptions, ListOptions, Preconditions, ResponseMeta, SharedListResult, Storage, TryUpdate,
    ValidateDeletion, WatchEvent, WatchStream,
};
use crate::selection::SelectionPredicate;
use crate::stored::{SharedObject, StoredObject};
use async_trait::async_trait;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Where one resource lives and how its objects are encoded.
#[derive(Clone)]
pub struct StoreConfig {
    /// The storage prefix, e.g. `/registry` (`--etcd-prefix`).
    pub path_prefix: String,
    /// The resource prefix keys must start with, e.g. `/pods` or `/example.dev/widgets`.
    pub resource_prefix: String,
    /// `apiVersion` and `kind` of the objects, used for bookmark objects.
    pub api_version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// The value transformer.
    pub transformer: Arc<dyn ValueTransformer>,
}

impl StoreConfig {
    /// A configuration with the identity transformer.
    pub fn new(path_prefix: &str, resource_prefix: &str, api_version: &str, kind: &str) -> Self {
        StoreConfig {
            path_prefix: path_prefix.trim_end_matches('/').to_string(),
            resource_prefix: format!("/{}", resource_prefix.trim_matches('/')),
            api_version: api_version.into(),
            kind: kind.into(),
            transformer: Arc::new(IdentityTransformer),
        }
    }
}

/// `storage.Interface` over a [`Backend`]. Cheap to clone.
pub struct KvStore<B: Backend> {
    pub(super) backend: Arc<B>,
    pub(super) config: Arc<StoreConfig>,
}

impl<B: Backend> Clone for KvStore<B> {
    fn clone(&self) -> Self {
        KvStore {
            backend: self.backend.clone(),
            config: self.config.clone(),
        }
    }
}

/// The key checks of etcd3's `prepareKey` (without the path prefix), shared by every `Storage`
/// of this crate: `recursive` keys get a trailing `/` (so `foo` never matches `foobar`), then
/// the key must lie below `resource_prefix/`. Returns the checked key. Errors
/// (`RunTestKeySchema`): `InvalidKey` "empty key", "invalid key" (`.`/`..` segments),
/// "lacks resource prefix".
pub fn validate_key(key: &str, resource_prefix: &str, recursive: bool) -> Result<String> {
    let bad = |detail: &str| StorageError::InvalidKey {
        key: key.to_string(),
        detail: detail.to_string(),
    };
    if key.is_empty() || key == "/" {
        return Err(bad("empty key"));
    }
    if key.split('/').any(|seg| seg == "." || seg == "..") {
        return Err(bad("invalid key"));
    }
    let mut k = key.to_string();
    if recursive && !k.ends_with('/') {
        k.push('/');
    }
    if !k.starts_with(&format!("{resource_prefix}/")) {
        return Err(bad("lacks resource prefix"));
    }
    Ok(k)
}

/// The state of a key as read for an update or delete.
pub(super) struct State {
    obj: Option<Value>,
    rev: i64,
    data: Vec<u8>,
    stale: bool,
}

impl<B: Backend> KvStore<B> {
    /// A store for one resource over `backend`.
    pub fn new(backend: Arc<B>, config: StoreConfig) -> Self {
        KvStore {
            backend,
            config: Arc::new(config),
        }
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<B> {
        &self.backend
    }

    /// `prepareKey`: validate a storage key ([`validate_key`]) and put the path prefix in
    /// front.
    pub fn prepare_key(&self, key: &str, recursive: bool) -> Result<String> {
        let k = validate_key(key, &self.config.resource_prefix, recursive)?;
        Ok(format!("{}{}", self.config.path_prefix, k))
    }

    pub(super) fn encode(&self, obj: &Value, key: &str) -> Result<Vec<u8>> {
        // PrepareObjectForStorage: resourceVersion and selfLink are never stored. `ForStorage`
        // leaves them out while serializing (the same bytes as removing them from a copy).
        let bytes = serde_json::to_vec(&ForStorage(obj))
            .map_err(|e| StorageError::Internal(e.to_string()))?;
        self.config.transformer.to_storage(bytes, key)
    }

    /// The encoded object stored at `key` (borrowed from `value` when the transformer allows),
    /// and whether it is stale.
    pub(super) fn untransform<'a>(
        &self,
        value: &'a [u8],
        key: &str,
    ) -> Result<(Cow<'a, [u8]>, bool)> {
        self.config
            .transformer
            .from_storage_cow(value, key)
            // etcd3 store.go `Get`: `NewInternalError(err)`, the transformer's text alone (a
            // list names the key: `KvStore::list_item`).
            .map_err(|e| StorageError::Internal(e.to_string()))
    }

    /// A transformer error of a list, naming the object's key.
    pub(super) fn naming_key(key: &str, e: StorageError) -> StorageError {
        match e {
            StorageError::Internal(m) => {
                StorageError::Internal(format!("unable to transform key {key:?}: {m}"))
            }
            e => e,
        }
    }

    /// The encoded object stored in `value` at `key`, owned (`value` itself when the
    /// transformer is the identity), and whether it is stale.
    pub(super) fn untransform_owned(&self, value: Vec<u8>, key: &str) -> Result<(Vec<u8>, bool)> {
        let (data, stale) = self.untransform(&value, key)?;
        let data = match data {
            Cow::Owned(d) => Some(d),
            Cow::Borrowed(b) if b.len() == value.len() => None,
            // A transformer that borrowed part of the bytes.
            Cow::Borrowed(b) => Some(b.to_vec()),
        };
        Ok((data.unwrap_or(value), stale))
    }

    /// The object in `value` (read at `key`, revision `rev`), the bytes it decoded from (moved
    /// out of `value` when the transformer is the identity), and whether they are stale.
    pub(super) fn decode_bytes(
        &self,
        value: Vec<u8>,
        key: &str,
        rev: i64,
    ) -> Result<(Value, Vec<u8>, bool)> {
        let (data, stale) = self.untransform_owned(value, key)?;
        let obj = parse_object(&data, key, rev)?;
        Ok((obj, data, stale))
    }

    /// The object of `kv` with resourceVersion `rev`, without copying the stored bytes when
    /// the transformer is the identity (lists decode thousands of these).
    pub(super) fn decode(&self, kv: &KeyValue, rev: i64) -> Result<Value> {
        let (data, _) = self.untransform(&kv.value, &kv.key)?;
        parse_object(&data, &kv.key, rev)
    }

    pub(super) fn state_from(&self, kv: Option<KeyValue>) -> Result<State> {
        match kv {
            None => Ok(State {
                obj: None,
                rev: 0,
                data: Vec::new(),
                stale: false,
            }),
            Some(kv) => {
                let rev = kv.mod_revision;
                let (obj, data, stale) = self.decode_bytes(kv.value, &kv.key, rev)?;
                Ok(State {
                    obj: Some(obj),
                    rev,
                    data,
                    stale,
                })
            }
        }
    }

    pub(super) async fn current_state(&self, key: &str) -> Result<State> {
        let resp = self.backend.range(key, "", 0, 0).await?;
        self.state_from(resp.kvs.into_iter().next())
    }

    pub(super) fn state_from_hint(&self, hint: Value) -> Result<State> {
        let rev = hint
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(parse_resource_version)
            .transpose()?
            .unwrap_or(0) as i64;
        // The bytes the object encodes to, as a read would hand them out: no transformer
        // round trip (with encryption at rest, that would seal and open every hint).
        let data = serde_json::to_vec(&ForStorage(&hint))
            .map_err(|e| StorageError::Internal(e.to_string()))?;
        Ok(State {
            obj: Some(hint),
            rev,
            data,
            stale: false,
        })
    }

    /// The object of `kv` undecoded, with resourceVersion `rev`: its bytes after the value
    /// transformer (moved out of `kv` when the transformer is the identity). Errors: the
    /// transformer's.
    pub(super) fn stored(&self, kv: KeyValue, rev: i64) -> Result<SharedObject> {
        self.stored_named(kv, rev, false)
    }

    /// [`KvStore::stored`]; with `name_key`, a transformer error names the key (a list's
    /// `unable to transform key "…": …`, etcd3 store.go `GetList`).
    pub(super) fn stored_named(
        &self,
        kv: KeyValue,
        rev: i64,
        name_key: bool,
    ) -> Result<SharedObject> {
        let KeyValue { key, value, .. } = kv;
        let (data, _) = match self.untransform_owned(value, &key) {
            Ok(d) => d,
            Err(e) if name_key => return Err(Self::naming_key(&key, e)),
            Err(e) => return Err(e),
        };
        Ok(SharedObject::Stored(Arc::new(StoredObject {
            key,
            data,
            resource_version: rev as u64,
        })))
    }

    /// Where `delete` and `guaranteed_update` start: the caller's cached object (possibly
    /// stale, so `false`) or a live read (`true`).
    pub(super) async fn initial_state(
        &self,
        key: &str,
        hint: Option<Value>,
    ) -> Result<(State, bool)> {
        match hint {
            Some(hint) => Ok((self.state_from_hint(hint)?, false)),
            None => Ok((self.current_state(key).await?, true)),
        }
    }
}

pub(super) fn matches(pred: &SelectionPredicate, obj: &Value) -> Result<bool> {
    pred.matches(obj)
        .map_err(|e| StorageError::Internal(format!("unable to compute object attributes: {e}")))
}

#[async_trait]
impl<B: Backend> Storage for KvStore<B> {
    async fn create(&self, key: &str, obj: Value, ttl: u64) -> Result<Value> {
        let key = self.prepare_key(key, false)?;
        if !wasm_apiserver_apimachinery::meta::accessor(&obj)
            .resource_version()
            .is_empty()
        {
            // etcd3 `ErrResourceVersionSetOnCreate`: a plain error, a 500 at the edge.
            return Err(StorageError::Internal(
                "resourceVersion should not be set on objects to be created".into(),
            ));
        }
        let data = self.encode(&obj, &key)?;
        let resp = self.backend.put_if(&key, 0, data, ttl as i64).await?;
        if !resp.succeeded {
            return Err(StorageError::KeyExists { key });
        }
        let mut out = obj;
        set_resource_version(&mut out, resp.revision);
        Ok(out)
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &mut ValidateDeletion,
        cached_existing: Option<Value>,
    ) -> Result<Value> {
        let key = self.prepare_key(key, false)?;
        let (mut state, mut is_current) = self.initial_state(&key, cached_existing).await?;
        loop {
            let Some(obj) = state.obj.clone() else {
                return Err(StorageError::KeyNotFound { key });
            };
            // Errors computed on a possibly stale hint are re-checked on live state
            // (`conditionalDelete` in etcd3/store.go).
            let checked = match preconditions.check(&key, &obj) {
                Ok(()) => validate_deletion(obj).await,
                Err(e) => Err(e),
            };
            if let Err(e) = checked {
                if is_current {
                    return Err(e);
                }
                let cached_rev = state.rev;
                state = self.current_state(&key).await?;
                is_current = true;
                if state.rev == cached_rev {
                    return Err(e);
                }
                continue;
            }
            let resp = self.backend.delete_if(&key, state.rev).await?;
            if !resp.succeeded {
                state = self.state_from(resp.kv)?;
                is_current = true;
                continue;
            }
            let prev = resp.kv.ok_or_else(|| {
                StorageError::Internal("delete succeeded without the previous value".into())
            })?;
            return self.decode(&prev, resp.revision);
        }
    }

    async fn watch(&self, key: &str, opts: ListOptions) -> Result<WatchStream> {
        let recursive = opts.recursive;
        let key = self.prepare_key(key, recursive)?;
        let rv = parse_resource_version(&opts.resource_version)? as i64;
        let initial_events = match opts.send_initial_events {
            None => rv == 0,
            Some(v) => v,
        };
        let start = if rv > 0 {
            rv
        } else if opts.send_initial_events == Some(false) {
            self.backend.current_revision().await?
        } else {
            0
        };
        let (tx, rx) = mpsc::channel(WATCH_BUFFER);
        let store = self.clone();
        tokio::spawn(async move {
            if let Err(e) = store
                .run_watch(&key, recursive, rv, start, initial_events, &opts, &tx)
                .await
            {
                let _ = tx.send(WatchEvent::Error(e)).await;
            }
        });
        Ok(rx)
    }

    /// etcd3 store.go `Get`, the object left undecoded.
    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<SharedObject>> {
        let key = self.prepare_key(key, false)?;
        let min_rv = parse_resource_version(&opts.resource_version)?;
        let resp = self.backend.range(&key, "", 0, 0).await?;
        if min_rv > resp.header_revision as u64 {
            return Err(StorageError::TooLargeResourceVersion {
                requested: min_rv,
                current: resp.header_revision as u64,
            });
        }
        match resp.kvs.into_iter().next() {
            Some(kv) => {
                let rev = kv.mod_revision;
                self.stored(kv, rev).map(Some)
            }
            None if opts.ignore_not_found => Ok(None),
            None => Err(StorageError::KeyNotFound { key }),
        }
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult> {
        self.list(key, opts).await
    }

    async fn guaranteed_update(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: &Preconditions,
        try_update: &mut TryUpdate,
        cached_existing: Option<Value>,
    ) -> Result<Value> {
        let key = self.prepare_key(key, false)?;
        let (mut state, mut is_current) = self.initial_state(&key, cached_existing).await?;
        loop {
            if state.obj.is_none() && !ignore_not_found {
                if !is_current {
                    state = self.current_state(&key).await?;
                    is_current = true;
                    continue;
                }
                return Err(StorageError::KeyNotFound { key });
            }
            let existed = state.obj.is_some();
            // Errors computed on possibly stale state are re-checked on live state
            // (`GuaranteedUpdate` in etcd3/store.go).
            let attempt = match state.obj.as_ref() {
                Some(obj) => preconditions.check(&key, obj),
                None => Ok(()),
            };
            let outcome = match attempt {
                Ok(()) => {
                    // `try_update` gets the object itself, not a copy: every path below either
                    // reads the state again or, for a no-op, decodes `state.data` again.
                    let current = state.obj.take().unwrap_or(Value::Null);
                    try_update(
                        current,
                        ResponseMeta {
                            ttl: 0,
                            resource_version: state.rev.max(0) as u64,
                        },
                    )
                    .await
                }
                Err(e) => Err(e),
            };
            let outcome = match outcome {
                Ok(o) => o,
                Err(e) => {
                    if is_current {
                        return Err(e);
                    }
                    let cached_rev = state.rev;
                    state = self.current_state(&key).await?;
                    is_current = true;
                    if state.rev == cached_rev {
                        return Err(e);
                    }
                    continue;
                }
            };
            // Compared as plaintext (kube's GuaranteedUpdate compares before transforming):
            // sealing is paid only for a write, and a reload cannot fall between the two.
            let plain = serde_json::to_vec(&ForStorage(&outcome.object))
                .map_err(|e| StorageError::Internal(e.to_string()))?;
            let unchanged = plain == *state.data;
            if existed && !state.stale && unchanged {
                // No-op: nothing is written, the resourceVersion stays, no watch event.
                if !is_current {
                    state = self.current_state(&key).await?;
                    is_current = true;
                    continue;
                }
                // The current object, as `state_from` decoded it.
                return parse_object(&state.data, &key, state.rev);
            }
            let data = self.config.transformer.to_storage(plain, &key)?;
            let ttl = outcome.ttl.unwrap_or(0) as i64;
            let resp = self.backend.put_if(&key, state.rev, data, ttl).await?;
            if !resp.succeeded {
                state = self.state_from(resp.kv)?;
                is_current = true;
                continue;
            }
            let mut out = outcome.object;
            set_resource_version(&mut out, resp.revision);
            return Ok(out);
        }
    }

    async fn count(&self, key: &str) -> Result<i64> {
        let prefix = self.prepare_key(key, true)?;
        Ok(self.backend.count(&prefix, &prefix_end(&prefix)).await?.0)
    }

    async fn current_resource_version(&self) -> Result<u64> {
        let rev = self.backend.current_revision().await?;
        if rev <= 0 {
            return Err(StorageError::Internal(
                "the current resource version must be greater than 0".into(),
            ));
        }
        Ok(rev as u64)
    }

    fn compact_revision(&self) -> u64 {
        self.backend.compacted_revision().max(0) as u64
    }

    fn supports_request_watch_progress(&self) -> bool {
        self.backend.supports_request_progress()
    }

    async fn request_watch_progress(&self) -> Result<()> {
        Ok(self.backend.request_progress().await?)
    }

    async fn readiness_check(&self) -> Result<()> {
        Ok(self.backend.health().await?)
    }
}

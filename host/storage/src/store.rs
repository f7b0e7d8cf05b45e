//! [`KvStore`]: the one implementation of [`Storage`] over any [`Backend`], a port of
//! kube-apiserver's etcd3 store (`k8s.io/apiserver/pkg/storage/etcd3/store.go`) and watcher
//! (`etcd3/watcher.go`, `event.go`). Everything that makes clients work — resourceVersion rules,
//! optimistic concurrency with retries, the no-op write rule, paging with pinned revisions and
//! limit doubling, continue tokens, the watch event mapping under a predicate — lives here once,
//! so every backend behaves the same.

use crate::backend::{prefix_end, Backend, EventType, KeyValue, KvEvent, WatchResponse};
use crate::continue_token;
use crate::errors::{
    BackendError, Result, StorageError, CONTINUE_TOO_OLD, LIST_TOO_OLD, WATCH_TOO_OLD,
};
use crate::interfaces::{
    GetOptions, ListOptions, ListResult, Preconditions, ResourceVersionMatch, ResponseMeta,
    SharedListResult, Storage, TryUpdate, ValidateDeletion, WatchEvent, WatchStream,
};
use crate::selection::SelectionPredicate;
use crate::stored::{SharedObject, StoredObject};
use async_trait::async_trait;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;
use tokio::sync::mpsc;

/// etcd3's `maxLimit`: the largest page fetched while filling a filtered page.
const MAX_LIMIT: i64 = 10_000;
/// Page size of the initial-state list of a watch (etcd3 watcher `sync()`).
const SYNC_PAGE: i64 = 10_000;
/// Capacity of a watch's outgoing channel (etcd3 watcher's `outgoingBufSize`).
const WATCH_BUFFER: usize = 100;
/// The annotation on the bookmark that ends the initial events of a watch-list.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// `value.Transformer` (`k8s.io/apiserver/pkg/storage/value`): turns encoded objects into
/// stored bytes and back, with the key as authenticated data. Encryption at rest plugs in here.
#[allow(clippy::wrong_self_convention)] // named after TransformToStorage/TransformFromStorage
pub trait ValueTransformer: Send + Sync {
    /// Bytes to store for `data` at `key`.
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>>;
    /// The encoded object from stored bytes, and whether they are stale (written under an old
    /// key or format, so an update must rewrite them even if unchanged). Errors: the bytes
    /// cannot be transformed (e.g. decryption failed).
    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)>;

    /// [`ValueTransformer::from_storage`], borrowing `data` when the stored bytes are the
    /// encoded object (the identity transformer), so reads need not copy every value (`KvStore`
    /// then keeps `data` itself, moved out of the backend's response; a borrowed part of
    /// `data` is copied). The default calls `from_storage`.
    #[allow(clippy::wrong_self_convention)]
    fn from_storage_cow<'a>(&self, data: &'a [u8], key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        let (data, stale) = self.from_storage(data, key)?;
        Ok((Cow::Owned(data), stale))
    }
}

/// The identity transformer (no encryption).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdentityTransformer;

impl ValueTransformer for IdentityTransformer {
    fn to_storage(&self, data: Vec<u8>, _key: &str) -> Result<Vec<u8>> {
        Ok(data)
    }
    fn from_storage(&self, data: &[u8], _key: &str) -> Result<(Vec<u8>, bool)> {
        Ok((data.to_vec(), false))
    }
    fn from_storage_cow<'a>(&self, data: &'a [u8], _key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        Ok((Cow::Borrowed(data), false))
    }
}

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
    backend: Arc<B>,
    config: Arc<StoreConfig>,
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

/// `ParseResourceVersion`: `""` and `"0"` are 0. Errors: not a `u64`.
pub fn parse_resource_version(rv: &str) -> Result<u64> {
    if rv.is_empty() {
        return Ok(0);
    }
    rv.parse::<u64>()
        .map_err(|_| StorageError::invalid_resource_version(rv))
}

/// The state of a key as read for an update or delete.
struct State {
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

    fn encode(&self, obj: &Value, key: &str) -> Result<Vec<u8>> {
        // PrepareObjectForStorage: resourceVersion and selfLink are never stored. `ForStorage`
        // leaves them out while serializing (the same bytes as removing them from a copy).
        let bytes = serde_json::to_vec(&ForStorage(obj))
            .map_err(|e| StorageError::Internal(e.to_string()))?;
        self.config.transformer.to_storage(bytes, key)
    }

    /// The encoded object stored at `key` (borrowed from `value` when the transformer allows),
    /// and whether it is stale.
    fn untransform<'a>(&self, value: &'a [u8], key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        self.config
            .transformer
            .from_storage_cow(value, key)
            .map_err(|e| StorageError::Internal(format!("unable to transform key {key:?}: {e}")))
    }

    /// The encoded object stored in `value` at `key`, owned (`value` itself when the
    /// transformer is the identity), and whether it is stale.
    fn untransform_owned(&self, value: Vec<u8>, key: &str) -> Result<(Vec<u8>, bool)> {
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
    fn decode_bytes(&self, value: Vec<u8>, key: &str, rev: i64) -> Result<(Value, Vec<u8>, bool)> {
        let (data, stale) = self.untransform_owned(value, key)?;
        let obj = parse_object(&data, key, rev)?;
        Ok((obj, data, stale))
    }

    /// The object of `kv` with resourceVersion `rev`, without copying the stored bytes when
    /// the transformer is the identity (lists decode thousands of these).
    fn decode(&self, kv: &KeyValue, rev: i64) -> Result<Value> {
        let (data, _) = self.untransform(&kv.value, &kv.key)?;
        parse_object(&data, &kv.key, rev)
    }

    fn state_from(&self, kv: Option<KeyValue>) -> Result<State> {
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

    async fn current_state(&self, key: &str) -> Result<State> {
        let resp = self.backend.range(key, "", 0, 0).await?;
        self.state_from(resp.kvs.into_iter().next())
    }

    fn state_from_hint(&self, key: &str, hint: Value) -> Result<State> {
        let rev = hint
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(parse_resource_version)
            .transpose()?
            .unwrap_or(0) as i64;
        let data = self.encode(&hint, key)?;
        let data = self.config.transformer.from_storage(&data, key)?.0;
        Ok(State {
            obj: Some(hint),
            rev,
            data,
            stale: false,
        })
    }

    /// The list item of `kv` if it matches `pred`. With nothing to evaluate (no label or field
    /// selector) the item is the stored bytes, moved out of `kv` undecoded; otherwise the
    /// object is decoded to evaluate the predicate and kept decoded.
    fn list_item(&self, kv: KeyValue, pred: &SelectionPredicate) -> Result<Option<SharedObject>> {
        if !pred.is_empty() {
            let obj = self.decode(&kv, kv.mod_revision)?;
            return Ok(matches(pred, &obj)?.then(|| SharedObject::Decoded(Arc::new(obj))));
        }
        let rev = kv.mod_revision;
        self.stored(kv, rev).map(Some)
    }

    /// The object of `kv` undecoded, with resourceVersion `rev`: its bytes after the value
    /// transformer (moved out of `kv` when the transformer is the identity). Errors: the
    /// transformer's.
    fn stored(&self, kv: KeyValue, rev: i64) -> Result<SharedObject> {
        let KeyValue { key, value, .. } = kv;
        let (data, _) = self.untransform_owned(value, &key)?;
        Ok(SharedObject::Stored(Arc::new(StoredObject {
            key,
            data,
            resource_version: rev as u64,
        })))
    }

    /// Where `delete` and `guaranteed_update` start: the caller's cached object (possibly
    /// stale, so `false`) or a live read (`true`).
    async fn initial_state(&self, key: &str, hint: Option<Value>) -> Result<(State, bool)> {
        match hint {
            Some(hint) => Ok((self.state_from_hint(key, hint)?, false)),
            None => Ok((self.current_state(key).await?, true)),
        }
    }

    /// `GetList` (etcd3 store.go): the items of an unfiltered list undecoded (see
    /// [`KvStore::list_item`]).
    async fn list(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult> {
        let recursive = opts.recursive;
        let prefix = self.prepare_key(key, recursive)?;
        let pred = &opts.predicate;
        let rv = parse_resource_version(&opts.resource_version)? as i64;
        let paging = pred.limit > 0;

        // storage.ValidateListOptions: the read revision and the start key.
        let mut start_key = prefix.clone();
        let mut with_rev: i64 = 0;
        let mut continuing = false;
        if !pred.continue_token.is_empty() {
            if !recursive {
                return Err(StorageError::Invalid {
                    field: "continue".into(),
                    value: pred.continue_token.clone(),
                    detail: "continue key is not supported for non-recursive lists".into(),
                });
            }
            if !(opts.resource_version.is_empty() || opts.resource_version == "0") {
                return Err(StorageError::Invalid {
                    field: "resourceVersion".into(),
                    value: opts.resource_version.clone(),
                    detail: "specifying resource version is not allowed when using continue".into(),
                });
            }
            if opts.resource_version_match != ResourceVersionMatch::Unset {
                return Err(StorageError::Invalid {
                    field: "resourceVersionMatch".into(),
                    value: format!("{:?}", opts.resource_version_match),
                    detail: "resourceVersionMatch is forbidden when continue is provided".into(),
                });
            }
            let (k, crv) = continue_token::decode(&pred.continue_token, &prefix)?;
            start_key = k;
            continuing = true;
            if crv > 0 {
                with_rev = crv;
            }
        } else {
            match opts.resource_version_match {
                ResourceVersionMatch::Exact => {
                    if rv == 0 {
                        return Err(StorageError::Invalid {
                            field: "resourceVersionMatch".into(),
                            value: "Exact".into(),
                            detail: "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"\" and \"0\"".into(),
                        });
                    }
                    with_rev = rv;
                }
                ResourceVersionMatch::NotOlderThan => {}
                ResourceVersionMatch::Unset => {
                    if paging && rv > 0 {
                        with_rev = rv;
                    }
                }
            }
        }
        let end = if recursive {
            prefix_end(&prefix)
        } else {
            String::new()
        };

        let mut items = Vec::new();
        let mut limit = if paging { pred.limit } else { 0 };
        let mut last_key: Option<String> = None;
        let mut has_more;
        let mut count_at_first_page = 0;
        let mut first = true;
        loop {
            let resp = match self.backend.range(&start_key, &end, limit, with_rev).await {
                Ok(r) => r,
                Err(BackendError::Compacted(_)) if continuing => {
                    return Err(StorageError::Expired {
                        message: CONTINUE_TOO_OLD.into(),
                        continue_token: Some(continue_token::encode(&start_key, &prefix, -1)?),
                    })
                }
                Err(BackendError::Compacted(_)) => {
                    return Err(StorageError::Expired {
                        message: LIST_TOO_OLD.into(),
                        continue_token: None,
                    })
                }
                Err(BackendError::FutureRevision(cur)) => {
                    return Err(StorageError::TooLargeResourceVersion {
                        requested: with_rev as u64,
                        current: cur as u64,
                    })
                }
                Err(e) => return Err(e.into()),
            };
            if first {
                count_at_first_page = resp.count;
                first = false;
            }
            has_more = resp.more;
            let header_revision = resp.header_revision;
            if !paging {
                // One unpaged range: take it whole.
                if let Some(kv) = resp.kvs.last() {
                    last_key = Some(kv.key.clone());
                }
                items.reserve(resp.kvs.len());
                for kv in resp.kvs {
                    items.extend(self.list_item(kv, pred)?);
                }
                if with_rev == 0 {
                    with_rev = header_revision;
                }
                break;
            }
            for kv in resp.kvs {
                if items.len() as i64 >= pred.limit {
                    has_more = true;
                    break;
                }
                last_key = Some(kv.key.clone());
                items.extend(self.list_item(kv, pred)?);
            }
            if with_rev == 0 {
                with_rev = header_revision;
            }
            if !has_more || !paging {
                break;
            }
            if items.len() as i64 >= pred.limit {
                break;
            }
            if limit < MAX_LIMIT {
                limit = (limit * 2).min(MAX_LIMIT);
            }
            match &last_key {
                Some(k) => start_key = format!("{k}\0"),
                None => break,
            }
        }

        // validateMinimumResourceVersion for the "not older than" readings.
        let exact = opts.resource_version_match == ResourceVersionMatch::Exact
            || (opts.resource_version_match == ResourceVersionMatch::Unset && paging && rv > 0);
        if !continuing && !exact && rv > with_rev {
            return Err(StorageError::TooLargeResourceVersion {
                requested: rv as u64,
                current: with_rev as u64,
            });
        }
        let (continue_token, remaining_item_count) = match (has_more, &last_key) {
            (true, Some(k)) => {
                let token = continue_token::encode(&format!("{k}\0"), &prefix, with_rev)?;
                let remaining = if pred.is_empty() {
                    Some(count_at_first_page - pred.limit)
                } else {
                    None
                };
                (Some(token), remaining)
            }
            _ => (None, None),
        };
        Ok(SharedListResult {
            items,
            resource_version: with_rev as u64,
            continue_token,
            remaining_item_count,
        })
    }

    fn bookmark(&self, rev: i64, initial_events_end: bool) -> Value {
        let mut meta = json!({"resourceVersion": rev.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({INITIAL_EVENTS_END_ANNOTATION: "true"});
        }
        json!({"apiVersion": self.config.api_version, "kind": self.config.kind, "metadata": meta})
    }
}

/// Serializes an object as `serde_json` does, without `metadata.resourceVersion` and
/// `metadata.selfLink`.
struct ForStorage<'a>(&'a Value);

/// Serializes a `metadata` map without `resourceVersion` and `selfLink`.
struct MetadataForStorage<'a>(&'a serde_json::Map<String, Value>);

/// Fields of `metadata` that are never stored.
fn unstored(field: &str) -> bool {
    field == "resourceVersion" || field == "selfLink"
}

impl Serialize for ForStorage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let Value::Object(obj) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(obj.len()))?;
        for (k, v) in obj {
            match v {
                Value::Object(meta) if k == "metadata" => {
                    map.serialize_entry(k, &MetadataForStorage(meta))?
                }
                _ => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

impl Serialize for MetadataForStorage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let len = self.0.keys().filter(|k| !unstored(k)).count();
        let mut map = serializer.serialize_map(Some(len))?;
        for (k, v) in self.0.iter().filter(|(k, _)| !unstored(k)) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The object in `data` (an encoded object read at `key`) with resourceVersion `rev`
/// (etcd3 store.go `decode`). Errors: [`StorageError::CorruptObj`] when `data` is not JSON.
pub(crate) fn parse_object(data: &[u8], key: &str, rev: i64) -> Result<Value> {
    let mut obj: Value = serde_json::from_slice(data).map_err(|e| StorageError::CorruptObj {
        key: key.to_string(),
        detail: e.to_string(),
    })?;
    set_resource_version(&mut obj, rev);
    Ok(obj)
}

fn set_resource_version(obj: &mut Value, rev: i64) {
    if let Some(m) = obj.as_object_mut() {
        // `entry` allocates its key: look `metadata` up first (it is almost always there).
        if !m.contains_key("metadata") {
            m.insert("metadata".into(), Value::Object(Default::default()));
        }
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            if rev > 0 {
                meta.insert("resourceVersion".into(), Value::String(rev.to_string()));
            } else {
                meta.remove("resourceVersion");
            }
        }
    }
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `Preconditions.Check` (`k8s.io/apiserver/pkg/storage/interfaces.go`). Errors: `InvalidObj`
/// with kube-apiserver's "Precondition failed: …" message.
pub fn check_preconditions(key: &str, p: &Preconditions, obj: &Value) -> Result<()> {
    if let Some(uid) = &p.uid {
        let have = meta_str(obj, "uid");
        if uid != have {
            return Err(StorageError::InvalidObj {
                key: key.to_string(),
                message: format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"
                ),
            });
        }
    }
    if let Some(rv) = &p.resource_version {
        let have = meta_str(obj, "resourceVersion");
        if rv != have {
            return Err(StorageError::InvalidObj {
                key: key.to_string(),
                message: format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {have}"
                ),
            });
        }
    }
    Ok(())
}

fn matches(pred: &SelectionPredicate, obj: &Value) -> Result<bool> {
    pred.matches(obj)
        .map_err(|e| StorageError::Internal(format!("unable to compute object attributes: {e}")))
}

#[async_trait]
impl<B: Backend> Storage for KvStore<B> {
    async fn create(&self, key: &str, obj: Value, ttl: u64) -> Result<Value> {
        let key = self.prepare_key(key, false)?;
        if !meta_str(&obj, "resourceVersion").is_empty() {
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
            let checked = match check_preconditions(&key, preconditions, &obj) {
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

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<Value>> {
        self.get_shared(key, opts)
            .await?
            .map(SharedObject::into_value)
            .transpose()
    }

    /// etcd3 store.go `Get`, the object left undecoded.
    async fn get_shared(&self, key: &str, opts: &GetOptions) -> Result<Option<SharedObject>> {
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

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        self.list(key, opts).await?.into_owned()
    }

    async fn get_list_shared(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult> {
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
                Some(obj) => check_preconditions(&key, preconditions, obj),
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
            let data = self.encode(&outcome.object, &key)?;
            let unchanged =
                *self.config.transformer.from_storage_cow(&data, &key)?.0 == *state.data;
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

    async fn readiness_check(&self) -> Result<()> {
        Ok(self.backend.health().await?)
    }
}

impl<B: Backend> KvStore<B> {
    /// The body of a watch: initial state if required, then backend events mapped through
    /// the predicate. Returns an error to be sent as the final ERROR event; returns `Ok` when
    /// the receiver went away.
    #[allow(clippy::too_many_arguments)]
    async fn run_watch(
        &self,
        key: &str,
        recursive: bool,
        rv: i64,
        mut start: i64,
        initial_events: bool,
        opts: &ListOptions,
        tx: &mpsc::Sender<WatchEvent>,
    ) -> Result<()> {
        let pred = &opts.predicate;
        let end = if recursive {
            prefix_end(key)
        } else {
            String::new()
        };
        if initial_events {
            // etcd3 watcher `sync()`: the current state as ADDED events, each with its own
            // resourceVersion, then watch from the list's revision.
            let mut from = key.to_string();
            let mut pinned = 0;
            loop {
                let resp = self.backend.range(&from, &end, SYNC_PAGE, pinned).await?;
                if pinned == 0 {
                    pinned = resp.header_revision;
                    if opts.send_initial_events == Some(true) && rv > pinned {
                        return Err(StorageError::TooLargeResourceVersion {
                            requested: rv as u64,
                            current: pinned as u64,
                        });
                    }
                }
                let (more, last) = (resp.more, resp.kvs.last().map(|kv| kv.key.clone()));
                for kv in resp.kvs {
                    if let Some(obj) = self.list_item(kv, pred)? {
                        if tx.send(WatchEvent::Added(obj)).await.is_err() {
                            return Ok(());
                        }
                    }
                }
                match (more, last) {
                    (true, Some(last)) => from = format!("{last}\0"),
                    _ => break,
                }
            }
            start = pinned;
            if opts.send_initial_events == Some(true)
                && pred.allow_watch_bookmarks
                && tx
                    .send(WatchEvent::Bookmark(self.bookmark(pinned, true)))
                    .await
                    .is_err()
            {
                return Ok(());
            }
        }
        // Watch is exclusive: events after `start`.
        let from = if start > 0 { start + 1 } else { 0 };
        let mut events = self
            .backend
            .watch(key, recursive, from, opts.progress_notify)
            .await?;
        loop {
            let msg = tokio::select! {
                m = events.recv() => m,
                _ = tx.closed() => return Ok(()),
            };
            match msg {
                None => return Ok(()),
                Some(WatchResponse::Error(BackendError::Compacted(_))) => {
                    return Err(StorageError::Expired {
                        message: WATCH_TOO_OLD.into(),
                        continue_token: None,
                    })
                }
                Some(WatchResponse::Error(e)) => return Err(e.into()),
                Some(WatchResponse::Progress(rev)) => {
                    if opts.progress_notify
                        && tx
                            .send(WatchEvent::Bookmark(self.bookmark(rev, false)))
                            .await
                            .is_err()
                    {
                        return Ok(());
                    }
                }
                Some(WatchResponse::Events(batch)) => {
                    for e in batch {
                        if let Some(ev) = self.transform(e, pred)? {
                            if tx.send(ev).await.is_err() {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
    }

    /// etcd3 watcher `transform`: a raw event as seen through the predicate. Old objects carry
    /// the event's revision (a DELETED object has the delete revision). With nothing to
    /// evaluate (no label or field selector) the objects are handed out undecoded, as
    /// [`KvStore::list_item`] does; otherwise they are decoded to evaluate the predicate.
    fn transform(&self, e: KvEvent, pred: &SelectionPredicate) -> Result<Option<WatchEvent>> {
        let KvEvent {
            event_type,
            kv,
            prev_kv,
        } = e;
        let rev = kv.mod_revision;
        match (event_type, &prev_kv) {
            (EventType::Delete, None) => {
                return Err(StorageError::Internal(format!(
                    "etcd event for key {:?} has no previous value (compacted?)",
                    kv.key
                )))
            }
            (EventType::Put, None) if kv.create_revision != kv.mod_revision => {
                // etcd3 `parseEvent`: an update without its previous value (compacted)
                // cannot be mapped through the predicate.
                return Err(StorageError::Internal(format!(
                    "etcd event received with PrevKv=nil (key={:?}, modRevision={}, type=PUT)",
                    kv.key, kv.mod_revision
                )));
            }
            _ => {}
        }
        if pred.is_empty() {
            return Ok(Some(match (event_type, prev_kv) {
                (EventType::Put, None) => WatchEvent::Added(self.stored(kv, rev)?),
                (EventType::Put, Some(_)) => WatchEvent::Modified(self.stored(kv, rev)?),
                (EventType::Delete, prev) => {
                    WatchEvent::Deleted(self.stored(prev.expect("checked above"), rev)?)
                }
            }));
        }
        let decoded = |v: Value| SharedObject::Decoded(Arc::new(v));
        let old = prev_kv.map(|p| self.decode(&p, rev)).transpose()?;
        match event_type {
            EventType::Delete => {
                let old = old.expect("checked above");
                Ok(matches(pred, &old)?.then(|| WatchEvent::Deleted(decoded(old))))
            }
            EventType::Put => {
                let cur = self.decode(&kv, rev)?;
                let cur_ok = matches(pred, &cur)?;
                match old {
                    None => Ok(cur_ok.then(|| WatchEvent::Added(decoded(cur)))),
                    Some(old) => {
                        let old_ok = matches(pred, &old)?;
                        Ok(match (cur_ok, old_ok) {
                            (true, true) => Some(WatchEvent::Modified(decoded(cur))),
                            (true, false) => Some(WatchEvent::Added(decoded(cur))),
                            (false, true) => Some(WatchEvent::Deleted(decoded(old))),
                            (false, false) => None,
                        })
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_versions_parse_like_kubernetes() {
        assert_eq!(parse_resource_version("").unwrap(), 0);
        assert_eq!(parse_resource_version("0").unwrap(), 0);
        assert_eq!(parse_resource_version("42").unwrap(), 42);
        assert!(parse_resource_version("abc").is_err());
        assert!(parse_resource_version("-1").is_err());
        assert!(parse_resource_version("99999999999999999999999").is_err());
    }

    #[test]
    fn objects_are_encoded_for_storage_as_a_stripped_copy_would_be() {
        let cases = [
            json!({"kind": "Pod", "metadata": {"name": "a", "resourceVersion": "5", "selfLink": "/x", "uid": "u"}, "spec": {"b": [1, 2.5, null, true]}}),
            json!({"metadata": {"resourceVersion": "5"}}),
            json!({"metadata": {"selfLink": "/x", "resourceVersion": "5"}, "a": {"resourceVersion": "7"}}),
            json!({"metadata": {}}),
            json!({"metadata": "not an object", "resourceVersion": "1"}),
            json!({"a": "\u{1}\"é"}),
            json!({}),
            json!([1, {"metadata": {"resourceVersion": "1"}}]),
            json!("text"),
            Value::Null,
        ];
        for obj in cases {
            let mut copy = obj.clone();
            if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
                meta.remove("selfLink");
            }
            assert_eq!(
                serde_json::to_vec(&ForStorage(&obj)).unwrap(),
                serde_json::to_vec(&copy).unwrap(),
                "{obj}"
            );
        }
    }

    #[test]
    fn preconditions_word_their_failures_like_kubernetes() {
        let obj = json!({"metadata": {"uid": "a", "resourceVersion": "5"}});
        let p = Preconditions {
            uid: Some("b".into()),
            resource_version: None,
        };
        let e = check_preconditions("/k", &p, &obj).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Precondition failed: UID in precondition: b, UID in object meta: a"
        );
        let p = Preconditions {
            uid: Some("a".into()),
            resource_version: Some("5".into()),
        };
        assert!(check_preconditions("/k", &p, &obj).is_ok());
    }
}

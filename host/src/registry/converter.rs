//! The converter between the version a request names and the storage version: what
//! kube-apiserver's `RequestScope.Convertor` does for a custom resource served in several
//! versions (`ConvertToVersion` in apiextensions-apiserver's `pkg/apiserver/conversion/converter.go`),
//! through the plugin's `convert` hook (`wit/0.2.0/strategy.wit`).
//!
//! Requests are converted to the storage version before any other hook runs (every hook sees
//! the storage version); objects read back — responses, list items, watch events, the objects
//! field and label selectors look at — are converted to the request's version. An object
//! stored under an earlier storage version (before a plugin update changed it) is converted
//! too, in every version, as kube's storage codec decodes every stored object.
//!
//! Stored states are converted once per (object, resourceVersion) and version: the result is
//! kept in a bounded cache shared by every request in that version ([`Sharing`]), so a watch
//! event fanned out to a thousand watchers of one version is converted once (kube keeps one
//! watch cache per version of a custom resource for the same reason).

use crate::status::{ApiError, ApiResult};
use crate::strategy::Strategy;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use wasm_apiserver_apimachinery::GroupKind;
use wasm_apiserver_storage::SharedObject;

/// At most this many converted objects are kept per version …
pub const CACHE_ENTRIES: usize = 4096;

/// … and at most this many bytes of them (as JSON): a few list pages and the events of a busy
/// watch, bounded whatever clients do (oldest dropped first). An object larger than a quarter
/// of it is not kept.
pub const CACHE_BYTES: usize = 64 << 20;

/// … and all versions of all resources together at most this many (each counts its objects
/// twice: the value and the JSON written from it). With thousands of CRDs, each of whose
/// stored objects is read through its strategy and kept, a per-version bound alone would not
/// bound the process; a cache over the shared budget drops its own oldest first.
pub const CACHE_BYTES_TOTAL: usize = 256 << 20;

/// The bytes every converter's cache holds together.
static TOTAL_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn total_bytes() -> usize {
    TOTAL_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Which converted objects may be shared with other requests, and under which key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharing {
    /// A state of the object as stored at its resourceVersion: a read, a list item, an
    /// ADDED or MODIFIED event, an object a selector is matched against.
    Stored,
    /// A DELETED event's object: the last state under the event's resourceVersion — for an
    /// object that stopped matching a selector, its previous state under the resourceVersion
    /// of the change, which the MODIFIED event of the same change carries with other content.
    Deleted,
    /// Not shared: a write's answer or a dry run's, whose resourceVersion may be that of
    /// another content.
    No,
}

/// (namespace, name, uid, resourceVersion, sharing): one stored state of one object.
type Key = (String, String, String, String, Sharing);

/// One cache slot: the first request to need it converts while holding its lock, the
/// others wait for that result instead of converting again.
type Slot = Arc<Mutex<Option<Arc<Converted>>>>;

/// A stored state converted to the request's version, and its JSON, written once for every
/// watcher that sends it.
pub struct Converted {
    /// The object in the request's version.
    pub object: Arc<Value>,
    json: std::sync::OnceLock<Vec<u8>>,
}

impl Converted {
    fn new(object: Arc<Value>) -> Converted {
        Converted {
            object,
            json: std::sync::OnceLock::new(),
        }
    }

    /// The object as JSON (serialized by the first caller).
    pub fn json(&self) -> &[u8] {
        self.json
            .get_or_init(|| serde_json::to_vec(&*self.object).unwrap_or_default())
    }
}

#[derive(Default)]
struct Cache {
    slots: HashMap<Key, (Slot, usize)>,
    order: VecDeque<Key>,
    bytes: usize,
}

impl Cache {
    fn evict_oldest(&mut self) {
        if let Some(oldest) = self.order.pop_front() {
            if let Some((_, size)) = self.slots.remove(&oldest) {
                self.bytes -= size;
                TOTAL_BYTES.fetch_sub(size, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        TOTAL_BYTES.fetch_sub(self.bytes, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Counts the bytes of a serialization without keeping them.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Converts one resource's objects between one served version (the request's) and its
/// storage version. The identity when they are the same version (but for objects stored
/// under an earlier storage version).
pub struct Converter {
    strategy: Arc<dyn Strategy>,
    gk: GroupKind,
    /// The version requests are in, as `apiVersion` (`group/version`, `v1` in the core group).
    pub api_version: String,
    /// The storage version, as `apiVersion`.
    pub storage_api_version: String,
    /// `{"apiVersion":"<api_version>"`: how stored JSON in this version starts (serde_json
    /// writes members sorted, and `apiVersion` sorts first).
    stored_prefix: Vec<u8>,
    /// The strategy reads stored objects ([`Strategy::reads_stored`]): every stored state is
    /// read through it once (cached as conversions are), as kube's CRD codec prunes and
    /// defaults every object it decodes from storage.
    reads: bool,
    cache: Mutex<Cache>,
}

fn api_version(obj: &Value) -> Option<&str> {
    obj.get("apiVersion").and_then(Value::as_str)
}

/// The top-level `apiVersion` of stored JSON, read without building the object.
#[derive(serde::Deserialize)]
struct TypeMeta<'a> {
    #[serde(borrow, rename = "apiVersion")]
    api_version: Option<std::borrow::Cow<'a, str>>,
}

impl Converter {
    /// A converter for `strategy`'s resource between `api_version` and `storage_api_version`.
    pub fn new(
        strategy: Arc<dyn Strategy>,
        gk: GroupKind,
        api_version: String,
        storage_api_version: String,
    ) -> Converter {
        Converter {
            reads: strategy.reads_stored(),
            strategy,
            gk,
            stored_prefix: format!("{{\"apiVersion\":{}", Value::from(api_version.as_str()))
                .into_bytes(),
            api_version,
            storage_api_version,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// Whether requests are in the storage version.
    pub fn is_identity(&self) -> bool {
        self.api_version == self.storage_api_version
    }

    /// Whether an object with this `apiVersion` is to be converted to the request's: one in
    /// another version is; one without is, unless requests are in the storage version (then
    /// it is served as stored, as before conversion existed).
    fn needs_version(&self, api_version: Option<&str>) -> bool {
        match api_version {
            Some(v) => v != self.api_version,
            None => !self.is_identity(),
        }
    }

    /// Whether a stored object with this `apiVersion`, shared as `sharing`, is answered
    /// otherwise than as stored: converted ([`Converter::needs_version`]) or, a stored state
    /// of a resource whose strategy reads stored objects, read through it (a write's answer
    /// is what the strategy just prepared: not read again).
    fn needs(&self, api_version: Option<&str>, sharing: Sharing) -> bool {
        (self.reads && sharing != Sharing::No) || self.needs_version(api_version)
    }

    /// A request's object (in the request's version) in the storage version. Blocking when it
    /// converts: it calls the plugin. Errors: `metadata` that is not an object (400, as kube's
    /// unstructured decoding answers), the plugin's fault or refusal (500 naming the plugin).
    pub fn to_storage(&self, obj: Value) -> ApiResult<Value> {
        if self.is_storage_ready(&obj) {
            return Ok(obj);
        }
        if !obj.get("metadata").is_none_or(Value::is_object) {
            return Err(ApiError::bad_request(
                "metadata: must be an object".to_string(),
            ));
        }
        self.convert(&obj, &self.storage_api_version)
    }

    /// Whether a request's object needs no conversion to the storage version: it is in it, or
    /// carries no `apiVersion` while requests are in the storage version.
    fn is_storage_ready(&self, obj: &Value) -> bool {
        !self.is_stale_version(obj) && (self.is_identity() || api_version(obj).is_some())
    }

    /// Whether a stored object is to be converted to the request's version.
    pub fn needs_conversion(&self, obj: &Value) -> bool {
        self.needs_version(api_version(obj))
    }

    /// Whether a stored object is in a version other than the storage version: written before
    /// a plugin update changed the storage version.
    pub fn is_stale_version(&self, obj: &Value) -> bool {
        api_version(obj).is_some_and(|v| v != self.storage_api_version)
    }

    /// A stored object in the storage version, converted when it was written in another
    /// ([`Converter::is_stale_version`]): kube's storage codec decodes every stored object
    /// into the storage version before the strategy sees it. Blocking when it converts.
    /// Errors: the plugin's fault or refusal (500 naming the plugin).
    pub fn stored_to_storage(&self, obj: Value) -> ApiResult<Value> {
        if !self.is_stale_version(&obj) {
            return Ok(obj);
        }
        self.convert(&obj, &self.storage_api_version)
    }

    /// Whether a stored object, as the storage hands it out, may need converting to the
    /// request's version: its JSON does not start with this version's `apiVersion` (stored
    /// bytes) or its `apiVersion` is another (a decoded object). A `false` is certain; a
    /// `true` is decided by [`Converter::from_storage`] on the decoded object.
    pub fn may_convert(&self, obj: &SharedObject) -> bool {
        if self.reads {
            return true;
        }
        match obj {
            SharedObject::Stored(s) if s.data.starts_with(&self.stored_prefix) => false,
            // Members sorted before `apiVersion` (an Event's `action`, a ClusterRole's
            // `aggregationRule`): read the top-level one alone. Bytes that do not parse take
            // the decode path, which reports them.
            SharedObject::Stored(s) => match serde_json::from_slice::<TypeMeta>(&s.data) {
                Ok(t) => self.needs_version(t.api_version.as_deref()),
                Err(_) => true,
            },
            SharedObject::Decoded(v) => self.needs_version(api_version(v)),
        }
    }

    /// A stored object in the request's version (the same `Arc` when it already is). With
    /// [`Sharing::Stored`] or [`Sharing::Deleted`] the result is shared with every other
    /// request converting the same state; objects without a resourceVersion are not shared.
    /// Blocking when it converts: it calls the plugin. Errors: the plugin's fault or refusal
    /// (500 naming the plugin).
    pub fn from_storage(&self, obj: &Arc<Value>, sharing: Sharing) -> ApiResult<Arc<Value>> {
        if !self.needs(api_version(obj), sharing) {
            return Ok(obj.clone());
        }
        self.convert_shared(obj, sharing)
    }

    /// [`Converter::from_storage`] with the answer's JSON, written once and shared with every
    /// other request answering the same state (a list writes it as it is).
    pub fn from_storage_json(
        &self,
        obj: &Arc<Value>,
        sharing: Sharing,
    ) -> ApiResult<Arc<Converted>> {
        if !self.needs(api_version(obj), sharing) {
            return Ok(Arc::new(Converted::new(obj.clone())));
        }
        self.converted(obj, sharing)
    }

    /// [`Converter::from_storage`] of a borrowed object (what a selector's `GetAttrs` has).
    pub fn from_storage_ref(&self, obj: &Value, sharing: Sharing) -> ApiResult<Arc<Value>> {
        if !self.needs(api_version(obj), sharing) {
            return Ok(Arc::new(obj.clone()));
        }
        self.convert_shared(obj, sharing)
    }

    fn convert_shared(&self, obj: &Value, sharing: Sharing) -> ApiResult<Arc<Value>> {
        self.converted(obj, sharing).map(|c| c.object.clone())
    }

    fn key(obj: &Value, sharing: Sharing) -> Key {
        let meta = |k: &str| {
            obj.get("metadata")
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        (
            meta("namespace"),
            meta("name"),
            meta("uid"),
            meta("resourceVersion"),
            sharing,
        )
    }

    /// [`Converter::from_storage`] with the result's shared JSON. Blocking when it converts.
    fn converted(&self, obj: &Value, sharing: Sharing) -> ApiResult<Arc<Converted>> {
        let key = Self::key(obj, sharing);
        if sharing == Sharing::No || key.3.is_empty() {
            let object = Arc::new(self.answer(obj, sharing)?);
            return Ok(Arc::new(Converted::new(object)));
        }
        let slot = self.slot(&key);
        let mut filled = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(done) = &*filled {
            return Ok(done.clone());
        }
        let converted = Arc::new(Converted::new(Arc::new(self.answer(obj, sharing)?)));
        *filled = Some(converted.clone());
        drop(filled);
        self.account(&key, &slot, &converted.object);
        Ok(converted)
    }

    /// A watch event's object in the request's version with its JSON, shared with the other
    /// watchers of this version: taken from the cache on the async worker when another
    /// watcher converted it already (the common case), else converted off the async workers.
    /// Errors: as [`Converter::from_storage`]'s.
    pub async fn event_async(
        self: &Arc<Self>,
        obj: Arc<Value>,
        sharing: Sharing,
    ) -> ApiResult<Arc<Converted>> {
        if !self.needs(api_version(&obj), sharing) {
            return Ok(Arc::new(Converted::new(obj)));
        }
        let key = Self::key(&obj, sharing);
        let slot = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .slots
            .get(&key)
            .map(|(s, _)| s.clone());
        if let Some(Ok(done)) = slot.as_ref().map(|s| s.try_lock()) {
            if let Some(done) = &*done {
                return Ok(done.clone());
            }
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || c.converted(&obj, sharing))
            .await
            .map_err(ApiError::internal)?
    }

    /// [`Converter::to_storage`] off the async workers (on them when nothing converts).
    pub async fn to_storage_async(self: &Arc<Self>, obj: Value) -> ApiResult<Value> {
        if self.is_storage_ready(&obj) {
            return Ok(obj);
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || c.to_storage(obj))
            .await
            .map_err(ApiError::internal)?
    }

    /// [`Converter::from_storage`] off the async workers (on them when nothing converts).
    pub async fn from_storage_async(
        self: &Arc<Self>,
        obj: Arc<Value>,
        sharing: Sharing,
    ) -> ApiResult<Arc<Value>> {
        if !self.needs(api_version(&obj), sharing) {
            return Ok(obj);
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || c.from_storage(&obj, sharing))
            .await
            .map_err(ApiError::internal)?
    }

    /// Every object of a list in the request's version, off the async workers.
    pub async fn list_from_storage(
        self: &Arc<Self>,
        objs: Vec<Arc<Value>>,
        sharing: Sharing,
    ) -> ApiResult<Vec<Arc<Value>>> {
        if objs.iter().all(|o| !self.needs(api_version(o), sharing)) {
            return Ok(objs);
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || {
            let all = c.convert_all(&objs, sharing)?;
            Ok(all.into_iter().map(|c| c.object.clone()).collect())
        })
        .await
        .map_err(ApiError::internal)?
    }

    fn slot(&self, key: &Key) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, _)) = cache.slots.get(key) {
            return s.clone();
        }
        if cache.order.len() >= CACHE_ENTRIES {
            cache.evict_oldest();
        }
        let s = Slot::default();
        cache.order.push_back(key.clone());
        cache.slots.insert(key.clone(), (s.clone(), 0));
        s
    }

    /// Count a filled slot's bytes, dropping the oldest entries while over [`CACHE_BYTES`]
    /// (and this one when it alone takes more than a quarter).
    /// Only `slot` itself is counted: evicted and filled again by another request meanwhile,
    /// the key's entry is another slot, which that request counts.
    fn account(&self, key: &Key, slot: &Slot, converted: &Value) {
        let mut n = Count(0);
        let _ = serde_json::to_writer(&mut n, converted);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let Some((s, size)) = cache.slots.get_mut(key) else {
            return; // evicted meanwhile
        };
        if !Arc::ptr_eq(s, slot) || *size != 0 {
            return;
        }
        let counted = 2 * n.0;
        if counted > CACHE_BYTES / 4 {
            cache.slots.remove(key);
            cache.order.retain(|k| k != key);
            return;
        }
        *size = counted;
        cache.bytes += counted;
        TOTAL_BYTES.fetch_add(counted, std::sync::atomic::Ordering::Relaxed);
        while (cache.bytes > CACHE_BYTES || total_bytes() > CACHE_BYTES_TOTAL)
            && !cache.order.is_empty()
        {
            cache.evict_oldest();
        }
    }

    /// Whether stored objects are read through the strategy ([`Strategy::reads_stored`]).
    pub fn reads(&self) -> bool {
        self.reads
    }

    /// A stored object read through the strategy in the storage version (the version whose
    /// schema `read` prunes and defaults by): one stored under an earlier storage version is
    /// converted first, so no field of its own version is pruned by another's schema.
    /// Blocking: it calls the plugin. Errors: the conversion's, the read's.
    pub fn read_in_storage_version(&self, obj: &Value) -> ApiResult<Value> {
        let converted;
        let obj = if self.is_stale_version(obj) {
            converted = self.convert(obj, &self.storage_api_version)?;
            &converted
        } else {
            obj
        };
        let name = wasm_apiserver_apimachinery::meta::accessor(obj).name();
        self.strategy
            .read_stored(obj)
            .map_err(|e| ApiError::from_strategy(e, &self.gk, name))
    }

    /// A stored object as answered in the request's version: read through the strategy when
    /// it reads stored objects (not a write's answer), then converted when in another
    /// version, and read again in that version ([`Converter::read_converted`]). Blocking: it
    /// calls the plugin.
    fn answer(&self, obj: &Value, sharing: Sharing) -> ApiResult<Value> {
        let read = self.read_for_answer(obj, sharing)?;
        if !self.needs_version(api_version(&read)) {
            return Ok(read.into_owned());
        }
        let converted = self.convert(&read, &self.api_version)?;
        self.read_converted(converted)
    }

    /// What [`Converter::answer`] converts: the stored object read in the storage version
    /// when the strategy reads stored objects and this is not a write's answer, else as it is.
    fn read_for_answer<'a>(
        &self,
        obj: &'a Value,
        sharing: Sharing,
    ) -> ApiResult<std::borrow::Cow<'a, Value>> {
        if self.reads && sharing != Sharing::No {
            Ok(std::borrow::Cow::Owned(self.read_in_storage_version(obj)?))
        } else {
            Ok(std::borrow::Cow::Borrowed(obj))
        }
    }

    /// An object just converted to the request's version, read through the strategy in that
    /// version when it reads stored objects: kube prunes by the target version's schema after
    /// every conversion (`schemaCoercingConverter`, apiextensions-apiserver/pkg/apiserver/
    /// customresource_handler.go), so a field of another version does not leak.
    fn read_converted(&self, converted: Value) -> ApiResult<Value> {
        if !self.reads {
            return Ok(converted);
        }
        let name = wasm_apiserver_apimachinery::meta::accessor(&converted).name();
        self.strategy
            .read_stored(&converted)
            .map_err(|e| ApiError::from_strategy(e, &self.gk, name))
    }

    /// [`Converter::from_storage_json`] of every object of a list, in order; the objects in
    /// another version that no request converted yet are converted together, in one
    /// [`Strategy::convert_list`] call (one review for a CRD's webhook, as kube sends a list),
    /// and cached as [`Converter::from_storage`] caches them. Blocking when it converts.
    /// Errors: the first conversion's.
    pub fn convert_all(
        &self,
        objs: &[Arc<Value>],
        sharing: Sharing,
    ) -> ApiResult<Vec<Arc<Converted>>> {
        let mut out: Vec<Option<Arc<Converted>>> = vec![None; objs.len()];
        let mut batch = Vec::new();
        for (i, o) in objs.iter().enumerate() {
            if !self.needs(api_version(o), sharing) {
                out[i] = Some(Arc::new(Converted::new(o.clone())));
                continue;
            }
            if !self.needs_version(api_version(o)) {
                out[i] = Some(self.converted(o, sharing)?);
                continue;
            }
            let key = Self::key(o, sharing);
            let slot = (sharing != Sharing::No && !key.3.is_empty()).then(|| self.slot(&key));
            if let Some(done) = slot
                .as_ref()
                .and_then(|s| s.lock().unwrap_or_else(|p| p.into_inner()).clone())
            {
                out[i] = Some(done);
                continue;
            }
            batch.push((i, key, slot, self.read_for_answer(o, sharing)?));
        }
        if let Some((_, _, _, first)) = batch.first() {
            let name = wasm_apiserver_apimachinery::meta::accessor(first)
                .name()
                .to_string();
            let refs: Vec<&Value> = batch.iter().map(|b| &*b.3).collect();
            let converted = self
                .strategy
                .convert_list(&refs, &self.api_version)
                .map_err(|e| ApiError::from_strategy(e, &self.gk, &name))?;
            for ((i, key, slot, _), c) in batch.into_iter().zip(converted) {
                let c = Arc::new(Converted::new(Arc::new(self.read_converted(c)?)));
                if let Some(slot) = slot {
                    let mut filled = slot.lock().unwrap_or_else(|p| p.into_inner());
                    if filled.is_none() {
                        *filled = Some(c.clone());
                        drop(filled);
                        self.account(&key, &slot, &c.object);
                    }
                }
                out[i] = Some(c);
            }
        }
        Ok(out
            .into_iter()
            .map(|c| c.expect("every object answered"))
            .collect())
    }

    fn convert(&self, obj: &Value, to: &str) -> ApiResult<Value> {
        let name = wasm_apiserver_apimachinery::meta::accessor(obj).name();
        self.strategy
            .convert(obj, to)
            .map_err(|e| ApiError::from_strategy(e, &self.gk, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::{Attributes, FieldError, ResourceDescription, StrategyResult};
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// v1 `spec.size` ↔ v2 `spec.replicas`, counting calls.
    struct Renaming {
        d: ResourceDescription,
        calls: AtomicUsize,
    }

    impl Strategy for Renaming {
        fn name(&self) -> &str {
            "renaming"
        }
        fn description(&self) -> &ResourceDescription {
            &self.d
        }
        fn allow_create_on_update(&self) -> bool {
            false
        }
        fn allow_unconditional_update(&self) -> bool {
            true
        }
        fn prepare_for_create(&self, o: &Value) -> StrategyResult<Value> {
            Ok(o.clone())
        }
        fn validate(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(vec![])
        }
        fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(vec![])
        }
        fn canonicalize(&self, o: &Value) -> StrategyResult<Value> {
            Ok(o.clone())
        }
        fn prepare_for_update(&self, n: &Value, _: &Value) -> StrategyResult<Value> {
            Ok(n.clone())
        }
        fn validate_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(vec![])
        }
        fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(vec![])
        }
        fn prepare_for_status_update(&self, n: &Value, _: &Value) -> StrategyResult<Value> {
            Ok(n.clone())
        }
        fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(vec![])
        }
        fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(vec![])
        }
        fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
            Ok(None)
        }
        fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(vec![])
        }
        fn printer_cells(&self, _: &Value) -> StrategyResult<Vec<Value>> {
            Ok(vec![])
        }
        fn get_attrs(&self, _: &Value) -> StrategyResult<Attributes> {
            Ok(Attributes::default())
        }
        fn convert(&self, o: &Value, to: &str) -> StrategyResult<Value> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let mut o = o.clone();
            let spec = o["spec"].as_object_mut().unwrap();
            let (from, into) = if to.ends_with("v2") {
                ("size", "replicas")
            } else {
                ("replicas", "size")
            };
            if let Some(v) = spec.remove(from) {
                spec.insert(into.into(), v);
            }
            o["apiVersion"] = json!(to);
            Ok(o)
        }
    }

    fn converter() -> (Arc<Renaming>, Converter) {
        let s = Arc::new(Renaming {
            d: ResourceDescription::new("example.dev", "v1", "Widget", "widgets"),
            calls: AtomicUsize::new(0),
        });
        let c = Converter::new(
            s.clone(),
            s.d.group_kind(),
            "example.dev/v2".into(),
            "example.dev/v1".into(),
        );
        (s, c)
    }

    fn stored(rv: &str) -> Arc<Value> {
        Arc::new(json!({"apiVersion": "example.dev/v1", "kind": "Widget",
            "metadata": {"name": "a", "namespace": "d", "uid": "u", "resourceVersion": rv},
            "spec": {"size": 3}}))
    }

    #[test]
    fn stored_objects_are_converted_once_per_resource_version() {
        let (s, c) = converter();
        let a = c.from_storage(&stored("5"), Sharing::Stored).unwrap();
        assert_eq!(a["spec"], json!({"replicas": 3}));
        assert_eq!(a["apiVersion"], "example.dev/v2");
        let b = c.from_storage(&stored("5"), Sharing::Stored).unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second request shares the first's result"
        );
        assert_eq!(s.calls.load(Ordering::SeqCst), 1);
        c.from_storage(&stored("6"), Sharing::Stored).unwrap();
        assert_eq!(
            s.calls.load(Ordering::SeqCst),
            2,
            "a new state is converted again"
        );
        // Without a resourceVersion, or not to be shared (a write's answer): converted every
        // time.
        c.from_storage(&stored(""), Sharing::Stored).unwrap();
        c.from_storage(&stored(""), Sharing::Stored).unwrap();
        c.from_storage(&stored("6"), Sharing::No).unwrap();
        assert_eq!(s.calls.load(Ordering::SeqCst), 5);
        // A DELETED event's object under the same resourceVersion is another entry: an object
        // that stopped matching carries its previous content under the change's version.
        let mut prev = (*stored("6")).clone();
        prev["spec"]["size"] = json!(1);
        let d = c.from_storage(&Arc::new(prev), Sharing::Deleted).unwrap();
        assert_eq!(d["spec"], json!({"replicas": 1}));
        let m = c.from_storage(&stored("6"), Sharing::Stored).unwrap();
        assert_eq!(m["spec"], json!({"replicas": 3}));
        // Already in the request's version (stored under an earlier storage version): as is.
        let mut v2 = (*stored("7")).clone();
        v2["apiVersion"] = json!("example.dev/v2");
        let v2 = Arc::new(v2);
        assert!(Arc::ptr_eq(
            &c.from_storage(&v2, Sharing::Stored).unwrap(),
            &v2
        ));
        assert_eq!(s.calls.load(Ordering::SeqCst), 6);
    }

    #[test]
    fn the_cache_is_bounded_in_bytes() {
        let (_, c) = converter();
        let big = |rv: usize| {
            let mut o = (*stored(&rv.to_string())).clone();
            o["spec"]["pad"] = json!("x".repeat(CACHE_BYTES / 8));
            Arc::new(o)
        };
        for rv in 0..20 {
            c.from_storage(&big(rv), Sharing::Stored).unwrap();
        }
        let cache = c.cache.lock().unwrap();
        assert!(cache.bytes <= CACHE_BYTES, "{}", cache.bytes);
        assert!(cache.slots.len() < 20);
        drop(cache);
        let huge = {
            let mut o = (*stored("99")).clone();
            o["spec"]["pad"] = json!("x".repeat(CACHE_BYTES / 3));
            Arc::new(o)
        };
        c.from_storage(&huge, Sharing::Stored).unwrap();
        assert!(
            !c.cache.lock().unwrap().slots.keys().any(|k| k.3 == "99"),
            "not kept"
        );
    }

    #[test]
    fn the_cache_is_bounded() {
        let (s, c) = converter();
        for rv in 0..CACHE_ENTRIES + 10 {
            c.from_storage(&stored(&rv.to_string()), Sharing::Stored)
                .unwrap();
        }
        assert!(c.cache.lock().unwrap().slots.len() <= CACHE_ENTRIES);
        // The oldest was dropped: converting it again calls the plugin.
        let before = s.calls.load(Ordering::SeqCst);
        c.from_storage(&stored("0"), Sharing::Stored).unwrap();
        assert_eq!(s.calls.load(Ordering::SeqCst), before + 1);
    }

    #[test]
    fn requests_go_to_the_storage_version() {
        let (_, c) = converter();
        let obj = json!({"apiVersion": "example.dev/v2", "kind": "Widget",
                         "metadata": {"name": "a"}, "spec": {"replicas": 2}});
        let s = c.to_storage(obj).unwrap();
        assert_eq!(s["spec"], json!({"size": 2}));
        assert_eq!(s["apiVersion"], "example.dev/v1");
        let bad = json!({"apiVersion": "example.dev/v2", "kind": "Widget", "metadata": "x"});
        assert_eq!(c.to_storage(bad).unwrap_err().code, 400);
    }
}

//! The converter between the version a request names and the storage version: what
//! kube-apiserver's `RequestScope.Convertor` does for a custom resource served in several
//! versions (`ConvertToVersion` in apiextensions-apiserver's `pkg/apiserver/conversion/converter.go`),
//! through the plugin's `convert` hook (`wit/0.2.0/strategy.wit`).
//!
//! Requests are converted to the storage version before any other hook runs (every hook sees
//! the storage version); objects read back — responses, list items, watch events, the objects
//! field and label selectors look at — are converted to the request's version.
//!
//! Stored objects are converted once per (object, resourceVersion) and version: the result is
//! kept in a bounded cache shared by every request in that version, so a watch event fanned
//! out to a thousand watchers of one version is converted once (kube keeps one watch cache per
//! version of a custom resource for the same reason).

use crate::status::{ApiError, ApiResult};
use crate::strategy::Strategy;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use wasm_apiserver_apimachinery::GroupKind;

/// Converted stored objects kept per version: enough for the events of a busy watch and a
/// few list pages, bounded whatever clients do (oldest dropped first).
pub const CACHE_ENTRIES: usize = 4096;

/// (namespace, name, uid, resourceVersion): one stored state of one object.
type Key = (String, String, String, String);

/// One cache slot: the first request to need it converts while holding its lock, the
/// others wait for that result instead of converting again.
type Slot = Arc<Mutex<Option<Arc<Value>>>>;

#[derive(Default)]
struct Cache {
    slots: HashMap<Key, Slot>,
    order: VecDeque<Key>,
}

/// Converts one resource's objects between one served version (the request's) and its
/// storage version. The identity when they are the same version.
pub struct Converter {
    strategy: Arc<dyn Strategy>,
    gk: GroupKind,
    /// The version requests are in, as `apiVersion` (`group/version`, `v1` in the core group).
    pub api_version: String,
    /// The storage version, as `apiVersion`.
    pub storage_api_version: String,
    cache: Mutex<Cache>,
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
            strategy,
            gk,
            api_version,
            storage_api_version,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// Whether requests are in the storage version (nothing to convert).
    pub fn is_identity(&self) -> bool {
        self.api_version == self.storage_api_version
    }

    /// A request's object (in the request's version) in the storage version. Blocking: it
    /// calls the plugin. Errors: `metadata` that is not an object (400, as kube's unstructured
    /// decoding answers), the plugin's fault or refusal (500 naming the plugin).
    pub fn to_storage(&self, obj: Value) -> ApiResult<Value> {
        if self.is_identity() {
            return Ok(obj);
        }
        if !obj.get("metadata").is_none_or(Value::is_object) {
            return Err(ApiError::bad_request(
                "metadata: must be an object".to_string(),
            ));
        }
        self.convert(&obj, &self.storage_api_version)
    }

    /// A stored object in the request's version, shared with every other request converting
    /// the same object at the same resourceVersion. Blocking: it may call the plugin. Objects
    /// without a resourceVersion (a dry run's) are converted without the cache. Errors: the
    /// plugin's fault or refusal (500 naming the plugin).
    pub fn from_storage(&self, obj: &Value) -> ApiResult<Arc<Value>> {
        if obj.get("apiVersion").and_then(Value::as_str) == Some(&self.api_version) {
            // The request's version already (the storage version, or an object stored in an
            // earlier storage version).
            return Ok(Arc::new(obj.clone()));
        }
        let meta = |k: &str| {
            obj.get("metadata")
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = (
            meta("namespace"),
            meta("name"),
            meta("uid"),
            meta("resourceVersion"),
        );
        if key.3.is_empty() {
            return self.convert(obj, &self.api_version).map(Arc::new);
        }
        let slot = self.slot(key);
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(done) = &*slot {
            return Ok(done.clone());
        }
        let converted = Arc::new(self.convert(obj, &self.api_version)?);
        *slot = Some(converted.clone());
        Ok(converted)
    }

    /// [`Converter::from_storage`] without a copy when there is nothing to convert.
    pub fn from_storage_arc(&self, obj: &Arc<Value>) -> ApiResult<Arc<Value>> {
        if self.is_identity()
            || obj.get("apiVersion").and_then(Value::as_str) == Some(&self.api_version)
        {
            return Ok(obj.clone());
        }
        self.from_storage(obj)
    }

    /// [`Converter::to_storage`] off the async workers.
    pub async fn to_storage_async(self: &Arc<Self>, obj: Value) -> ApiResult<Value> {
        if self.is_identity() {
            return Ok(obj);
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || c.to_storage(obj))
            .await
            .map_err(ApiError::internal)?
    }

    /// [`Converter::from_storage`] off the async workers.
    pub async fn from_storage_async(self: &Arc<Self>, obj: Arc<Value>) -> ApiResult<Arc<Value>> {
        if self.is_identity() {
            return Ok(obj);
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || c.from_storage_arc(&obj))
            .await
            .map_err(ApiError::internal)?
    }

    /// Every object of a list in the request's version, off the async workers.
    pub async fn list_from_storage(
        self: &Arc<Self>,
        objs: Vec<Arc<Value>>,
    ) -> ApiResult<Vec<Arc<Value>>> {
        if self.is_identity() {
            return Ok(objs);
        }
        let c = self.clone();
        tokio::task::spawn_blocking(move || objs.iter().map(|o| c.from_storage_arc(o)).collect())
            .await
            .map_err(ApiError::internal)?
    }

    fn slot(&self, key: Key) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = cache.slots.get(&key) {
            return s.clone();
        }
        if cache.order.len() >= CACHE_ENTRIES {
            if let Some(oldest) = cache.order.pop_front() {
                cache.slots.remove(&oldest);
            }
        }
        let s = Slot::default();
        cache.order.push_back(key.clone());
        cache.slots.insert(key, s.clone());
        s
    }

    fn convert(&self, obj: &Value, to: &str) -> ApiResult<Value> {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
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
        let a = c.from_storage(&stored("5")).unwrap();
        assert_eq!(a["spec"], json!({"replicas": 3}));
        assert_eq!(a["apiVersion"], "example.dev/v2");
        let b = c.from_storage(&stored("5")).unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second request shares the first's result"
        );
        assert_eq!(s.calls.load(Ordering::SeqCst), 1);
        c.from_storage(&stored("6")).unwrap();
        assert_eq!(
            s.calls.load(Ordering::SeqCst),
            2,
            "a new state is converted again"
        );
        // Without a resourceVersion (a dry run's answer): converted every time.
        c.from_storage(&stored("")).unwrap();
        c.from_storage(&stored("")).unwrap();
        assert_eq!(s.calls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn the_cache_is_bounded() {
        let (s, c) = converter();
        for rv in 0..CACHE_ENTRIES + 10 {
            c.from_storage(&stored(&rv.to_string())).unwrap();
        }
        assert!(c.cache.lock().unwrap().slots.len() <= CACHE_ENTRIES);
        // The oldest was dropped: converting it again calls the plugin.
        let before = s.calls.load(Ordering::SeqCst);
        c.from_storage(&stored("0")).unwrap();
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

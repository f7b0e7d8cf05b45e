//! The storage conformance suite: a port of kube-apiserver's
//! `k8s.io/apiserver/pkg/storage/testing/store_tests.go` and `watcher_tests.go`, written once
//! against [`Storage`] so that every implementation (the raw [`KvStore`] over each backend, and
//! later the cacher) runs the same scenarios with the same assertions.
//!
//! Each `run_*` function ports the Go function of the same name (`RunTestCreate` →
//! [`run_test_create`], `RunWatchSemantics` → [`run_watch_semantics`], …) and panics on the
//! first failed assertion. A case creates its own objects, so cases may share a backend when
//! they do not depend on the global revision or on compaction; a runner should still prefer a
//! fresh store per case (see `tests/conformance.rs`).
//!
//! Differences from the Go suite, all forced by the Rust API:
//! - there is no `context.Context`: a watch is stopped by dropping its receiver, and
//!   `RunTestWatchContextCancel` / `RunTestWatchInitializationSignal` are not ported;
//! - objects are JSON pods (`{"apiVersion":"v1","kind":"Pod","metadata":{..},"spec":{..}}`)
//!   under the resource prefix `/pods`, keyed `/pods/<namespace>/<name>` like `computePodKey`;
//! - field selectors are built as values (not parsed), with
//!   `selection::default_attrs(["spec.nodeName"])` as `GetAttrs`;
//! - the etcd3 tests' `checkStorageInvariants` is [`TestContext::key_validation`];
//! - the etcd3 tests' `PrefixTransformer`, `failingTransformer`, `errInjectingTransformer` and
//!   `reproducingTransformer` are one switchable [`TestTransformer`]; cases that need it are
//!   skipped (with a message) when the context has none;
//! - timeouts are short (an event is awaited at most [`EVENT_TIMEOUT`], "no more events" is
//!   checked for [`NO_EVENT_WAIT`]) so that the whole suite runs in well under a minute per
//!   backend.

use crate::backend::Backend;
use crate::continue_token;
use crate::errors::{Result, StorageError};
use crate::interfaces::{
    GetOptions, ListOptions, ListResult, Preconditions, ResourceVersionMatch, ResponseMeta,
    Storage, UpdateOutcome, WatchEvent, WatchStream,
};
use crate::selection::{
    default_attrs, FieldRequirement, FieldSelector, LabelSelector, Operator, Requirement,
    SelectionPredicate,
};
use crate::store::{KvStore, StoreConfig, ValueTransformer, INITIAL_EVENTS_END_ANNOTATION};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a watch assertion waits for the next event before failing.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a watch assertion waits for a TTL'd object to expire (etcd's minimum lease TTL is
/// longer than the 1 s the tests ask for).
pub const TTL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long "no (more) events" is observed.
pub const NO_EVENT_WAIT: Duration = Duration::from_millis(300);

/// `storage.Compaction`: compact the backend at a revision.
pub type CompactFn = Arc<dyn Fn(u64) -> BoxFuture<'static, Result<()>> + Send + Sync>;
/// `storage.IncreaseRVFunc`: one write outside the resource prefix; returns the new revision.
pub type IncreaseRvFn = Arc<dyn Fn() -> BoxFuture<'static, Result<u64>> + Send + Sync>;
/// `storagetesting.KeyValidation`: check the raw stored value of a storage key (e.g.
/// `/pods/ns/name`); `Err` describes what is wrong.
pub type KeyValidationFn =
    Arc<dyn Fn(String) -> BoxFuture<'static, std::result::Result<(), String>> + Send + Sync>;

/// What a case runs against.
pub struct TestContext {
    /// Name of the implementation, for messages (`"embedded"`, `"etcd3"`, `"cacher"`).
    pub name: &'static str,
    /// The storage under test; its resource prefix must be `/pods`.
    pub storage: Arc<dyn Storage>,
    /// Compact like kube-apiserver's compactor (`etcd3/compact.go`): one write outside the
    /// resource prefix (`compact_rev_key`), which advances the revision by exactly one, then a
    /// compaction at the given revision (which must not be in the future). Cases that use it
    /// (e.g. [`run_test_list`], which expects the list revision to be `continueRV+1` after it)
    /// need a backend of their own.
    pub compact: CompactFn,
    /// One write outside the resource prefix (etcd3 tests' `increaseRV`).
    pub increase_rv: IncreaseRvFn,
    /// The value transformer the storage encodes with, for the cases that switch it
    /// (`UpdatePrefixTransformer`); `None` skips those cases.
    pub transformer: Option<Arc<TestTransformer>>,
    /// The etcd3 tests' `checkStorageInvariants` (`RunTestCreate`, `RunTestGuaranteedUpdate`);
    /// `None` skips the check.
    pub key_validation: Option<KeyValidationFn>,
}

impl TestContext {
    /// A context for [`KvStore`] over `backend`: `StoreConfig::new(path_prefix, "/pods", "v1",
    /// "Pod")` with a fresh [`TestTransformer`], and `compact`/`increase_rv` writing the keys
    /// `<path_prefix>-compact_rev_key` / `<path_prefix>-increaseRV` (outside the store's keys,
    /// so two contexts with different path prefixes can share one backend).
    pub fn for_backend<B: Backend>(
        name: &'static str,
        backend: Arc<B>,
        path_prefix: &str,
    ) -> TestContext {
        let transformer = Arc::new(TestTransformer::new());
        let mut config = StoreConfig::new(path_prefix, "/pods", "v1", "Pod");
        config.transformer = transformer.clone();
        let storage: Arc<dyn Storage> = Arc::new(KvStore::new(backend.clone(), config));
        let prefix = path_prefix.trim_end_matches('/').to_string();
        let compact_key = format!("{prefix}-compact_rev_key");
        let b = backend.clone();
        let compact: CompactFn = Arc::new(move |rev: u64| {
            let b = b.clone();
            let key = compact_key.clone();
            Box::pin(async move {
                put_raw(&*b, &key, rev.to_string().into_bytes()).await?;
                b.compact(rev as i64).await?;
                Ok(())
            })
        });
        let increase_key = format!("{prefix}-increaseRV");
        let b = backend.clone();
        let increase_rv: IncreaseRvFn = Arc::new(move || {
            let b = b.clone();
            let key = increase_key.clone();
            Box::pin(async move { Ok(put_raw(&*b, &key, b"ok".to_vec()).await? as u64) })
        });
        // checkStorageInvariants: the raw value carries the transformer's prefix, then the
        // encoded object, without a resourceVersion (it is never stored).
        let b = backend;
        let path = prefix.clone();
        let key_validation: KeyValidationFn = Arc::new(move |key: String| {
            let b = b.clone();
            let raw_key = format!("{path}{key}");
            Box::pin(async move {
                let resp = b
                    .range(&raw_key, "", 0, 0)
                    .await
                    .map_err(|e| format!("reading {raw_key}: {e}"))?;
                let kv = resp
                    .kvs
                    .first()
                    .ok_or_else(|| format!("{raw_key} is not stored"))?;
                let Some(data) = kv.value.strip_prefix(TestTransformer::DEFAULT_PREFIX) else {
                    return Err(format!(
                        "data at {raw_key} isn't prefixed: {}",
                        String::from_utf8_lossy(&kv.value)
                    ));
                };
                let obj: Value = serde_json::from_slice(data)
                    .map_err(|e| format!("data at {raw_key} does not decode: {e}"))?;
                if obj.pointer("/metadata/resourceVersion").is_some() {
                    return Err(format!("data at {raw_key} stores a resourceVersion: {obj}"));
                }
                Ok(())
            })
        });
        TestContext {
            name,
            storage,
            compact,
            increase_rv,
            transformer: Some(transformer),
            key_validation: Some(key_validation),
        }
    }

    async fn validate_key(&self, key: &str) {
        if let Some(validate) = &self.key_validation {
            if let Err(e) = validate(key.to_string()).await {
                panic!("[{}] storage invariants of {key}: {e}", self.name);
            }
        }
    }

    async fn compact(&self, rev: u64) {
        (self.compact)(rev)
            .await
            .unwrap_or_else(|e| panic!("[{}] compact({rev}) failed: {e}", self.name));
    }

    async fn increase_rv(&self) -> u64 {
        (self.increase_rv)()
            .await
            .unwrap_or_else(|e| panic!("[{}] increaseRV failed: {e}", self.name))
    }

    fn transformer(&self, case: &str) -> Option<Arc<TestTransformer>> {
        if self.transformer.is_none() {
            eprintln!(
                "[{}] {case}: skipped, the context has no TestTransformer",
                self.name
            );
        }
        self.transformer.clone()
    }
}

/// An unconditional put of a raw value at `key` (outside any store), retried on concurrent
/// change; returns the write's revision.
async fn put_raw<B: Backend + ?Sized>(b: &B, key: &str, value: Vec<u8>) -> Result<i64> {
    loop {
        let cur = b.range(key, "", 0, 0).await?;
        let expected = cur.kvs.first().map(|kv| kv.mod_revision).unwrap_or(0);
        let resp = b.put_if(key, expected, value.clone(), 0).await?;
        if resp.succeeded {
            return Ok(resp.revision);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The test transformer (PrefixTransformer, failingTransformer, errInjectingTransformer,
// reproducingTransformer of `storage/testing/utils.go` and `store_tests.go`).
// ---------------------------------------------------------------------------------------------

/// Decides per storage key whether reading it fails, and with which message.
pub type InjectFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;
/// Runs before every read transformation (the `reproducingTransformer` hook).
pub type ReadHook = Arc<dyn Fn() + Send + Sync>;

/// The state of a [`TestTransformer`].
#[derive(Clone)]
pub struct TransformerState {
    /// Prefix added on write and required (and stripped) on read. Default `test!` (etcd3
    /// tests' `defaultTestPrefix`).
    pub prefix: Vec<u8>,
    /// Report every read as stale.
    pub stale: bool,
    /// `failingTransformer`: every read fails with "failed transformation"; writes are stored
    /// unchanged (no prefix).
    pub failing: bool,
    /// `errInjectingTransformer`: fail the read of the keys it returns a message for.
    pub inject: Option<InjectFn>,
    /// `reproducingTransformer`: called (without any lock held) before every read.
    pub on_read: Option<ReadHook>,
}

impl Default for TransformerState {
    fn default() -> Self {
        TransformerState {
            prefix: TestTransformer::DEFAULT_PREFIX.to_vec(),
            stale: false,
            failing: false,
            inject: None,
            on_read: None,
        }
    }
}

/// `PrefixTransformer` whose behaviour can be switched while a store uses it
/// (`UpdatePrefixTransformer`).
#[derive(Default)]
pub struct TestTransformer {
    state: Mutex<TransformerState>,
}

/// Restores the previous [`TransformerState`] when dropped (the Go `revertTransformer`).
pub struct TransformerRevert {
    transformer: Arc<TestTransformer>,
    previous: Option<TransformerState>,
}

impl TransformerRevert {
    /// Restore now.
    pub fn revert(mut self) {
        self.restore();
    }

    fn restore(&mut self) {
        if let Some(prev) = self.previous.take() {
            *self.transformer.lock() = prev;
        }
    }
}

impl Drop for TransformerRevert {
    fn drop(&mut self) {
        self.restore();
    }
}

impl TestTransformer {
    /// etcd3 tests' `defaultTestPrefix`.
    pub const DEFAULT_PREFIX: &'static [u8] = b"test!";

    /// A prefix transformer with [`TestTransformer::DEFAULT_PREFIX`].
    pub fn new() -> TestTransformer {
        TestTransformer::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TransformerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Change the state; the returned guard restores the previous one.
    pub fn update(self: &Arc<Self>, f: impl FnOnce(&mut TransformerState)) -> TransformerRevert {
        let mut state = self.lock();
        let previous = state.clone();
        f(&mut state);
        TransformerRevert {
            transformer: self.clone(),
            previous: Some(previous),
        }
    }
}

impl ValueTransformer for TestTransformer {
    fn to_storage(&self, data: Vec<u8>, _key: &str) -> Result<Vec<u8>> {
        let state = self.lock();
        if state.failing || data.is_empty() {
            return Ok(data);
        }
        let mut out = state.prefix.clone();
        out.extend_from_slice(&data);
        Ok(out)
    }

    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        let hook = self.lock().on_read.clone();
        if let Some(hook) = hook {
            hook();
        }
        let state = self.lock().clone();
        if state.failing {
            return Err(StorageError::Internal("failed transformation".into()));
        }
        if let Some(inject) = &state.inject {
            if let Some(msg) = inject(key) {
                return Err(StorageError::Internal(msg));
            }
        }
        match data.strip_prefix(state.prefix.as_slice()) {
            Some(rest) => Ok((rest.to_vec(), state.stale)),
            None => Err(StorageError::Internal(format!(
                "value does not have expected prefix {:?}: {},",
                String::from_utf8_lossy(&state.prefix),
                String::from_utf8_lossy(data)
            ))),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Objects, keys and predicates.
// ---------------------------------------------------------------------------------------------

/// An error returned by a test's callback (`try_update`, `validate_deletion`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestError(pub String);

impl std::fmt::Display for TestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TestError {}

fn test_error(msg: &str) -> StorageError {
    StorageError::aborted(TestError(msg.into()))
}

/// `baseNamespacedPod`: a pod with a name and (unless empty) a namespace.
pub fn pod(namespace: &str, name: &str) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(name.into()));
    if !namespace.is_empty() {
        meta.insert("namespace".into(), Value::String(namespace.into()));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}})
}

/// `baseNamespacedPodAssigned`: a pod with `spec.nodeName`.
pub fn pod_assigned(namespace: &str, name: &str, node: &str) -> Value {
    let mut p = pod(namespace, name);
    p["spec"]["nodeName"] = Value::String(node.into());
    p
}

/// `baseNamespacedPodUpdated`: a pod with `status.phase: Running`.
pub fn pod_updated(namespace: &str, name: &str) -> Value {
    let mut p = pod(namespace, name);
    p["status"] = json!({"phase": "Running"});
    p
}

/// `makePod`: `pod-<suffix>` without a namespace.
fn make_pod(suffix: &str) -> Value {
    pod("", &format!("pod-{suffix}"))
}

/// `DeepEqualSafePodSpec`.
fn deep_equal_safe_pod_spec() -> Value {
    json!({"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"})
}

fn meta_str(obj: &Value, field: &str) -> String {
    obj.pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `metadata.name`.
pub fn name_of(obj: &Value) -> String {
    meta_str(obj, "name")
}

/// `metadata.namespace`.
pub fn namespace_of(obj: &Value) -> String {
    meta_str(obj, "namespace")
}

/// `metadata.resourceVersion` (`""` when unset).
pub fn rv_of(obj: &Value) -> String {
    meta_str(obj, "resourceVersion")
}

fn rv_u64(obj: &Value) -> u64 {
    rv_of(obj)
        .parse()
        .unwrap_or_else(|_| panic!("object without a numeric resourceVersion: {obj}"))
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn set_meta(obj: &mut Value, field: &str, value: Value) {
    let meta = meta_mut(obj);
    if value.is_null() || value.as_str() == Some("") {
        meta.remove(field);
    } else {
        meta.insert(field.into(), value);
    }
}

fn set_rv(obj: &mut Value, rv: &str) {
    set_meta(obj, "resourceVersion", Value::String(rv.into()));
}

fn with_rv(obj: &Value, rv: &str) -> Value {
    let mut o = obj.clone();
    set_rv(&mut o, rv);
    o
}

fn without_rv(obj: &Value) -> Value {
    with_rv(obj, "")
}

fn set_labels(obj: &mut Value, labels: &[(&str, &str)]) {
    let m: Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    set_meta(obj, "labels", Value::Object(m));
}

fn with_labels(obj: &Value, labels: &[(&str, &str)]) -> Value {
    let mut o = obj.clone();
    set_labels(&mut o, labels);
    o
}

fn set_annotations(obj: &mut Value, annotations: &[(&str, &str)]) {
    if annotations.is_empty() {
        meta_mut(obj).remove("annotations");
        return;
    }
    let m: Map<String, Value> = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    set_meta(obj, "annotations", Value::Object(m));
}

fn set_uid(obj: &mut Value, uid: &str) {
    set_meta(obj, "uid", Value::String(uid.into()));
}

/// `computePodKey`: `/pods/<namespace>/<name>`.
pub fn pod_key(obj: &Value) -> String {
    format!("/pods/{}/{}", namespace_of(obj), name_of(obj))
}

/// `storage.Everything`.
fn everything() -> SelectionPredicate {
    SelectionPredicate::default()
}

/// A field requirement `field=value` (`equals`) or `field!=value`.
fn freq(field: &str, equals: bool, value: &str) -> FieldRequirement {
    FieldRequirement {
        field: field.into(),
        equals,
        value: value.into(),
    }
}

fn fields(reqs: Vec<FieldRequirement>) -> FieldSelector {
    FieldSelector { requirements: reqs }
}

/// `fields.OneTermEqualSelector`.
fn field_eq(field: &str, value: &str) -> FieldSelector {
    fields(vec![freq(field, true, value)])
}

/// `fields.OneTermNotEqualSelector`.
fn field_ne(field: &str, value: &str) -> FieldSelector {
    fields(vec![freq(field, false, value)])
}

/// `labels.SelectorFromSet({key: value})`.
fn label_eq(key: &str, value: &str) -> LabelSelector {
    LabelSelector {
        requirements: vec![Requirement {
            key: key.into(),
            operator: Operator::In,
            values: vec![value.into()],
        }],
    }
}

/// A predicate with a field selector and the pod `GetAttrs` (`metadata.name`,
/// `metadata.namespace`, `spec.nodeName`, labels) — `CreatePodPredicate`.
fn pod_pred(field: FieldSelector) -> SelectionPredicate {
    SelectionPredicate {
        field,
        get_attrs: Some(default_attrs(vec!["spec.nodeName".into()])),
        ..SelectionPredicate::default()
    }
}

fn pod_pred_paged(field: FieldSelector, limit: i64, continue_token: &str) -> SelectionPredicate {
    SelectionPredicate {
        limit,
        continue_token: continue_token.into(),
        ..pod_pred(field)
    }
}

/// `encodeContinueOrDie`: a token whose start key is `key` relative to the list prefix.
fn encode_continue(key: &str, rv: i64) -> String {
    continue_token::encode(&format!("adapter{key}"), "adapter", rv).expect("encode continue")
}

fn list_opts(rv: &str, pred: SelectionPredicate, recursive: bool) -> ListOptions {
    ListOptions {
        resource_version: rv.into(),
        predicate: pred,
        recursive,
        ..ListOptions::default()
    }
}

fn sort_by_key(mut pods: Vec<Value>) -> Vec<Value> {
    pods.sort_by_key(pod_key);
    pods
}

fn pretty(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn assert_json_eq(ctx: &TestContext, what: &str, expected: &Value, got: &Value) {
    assert!(
        expected == got,
        "[{}] {what}:\nexpected: {}\n     got: {}",
        ctx.name,
        pretty(expected),
        pretty(got)
    );
}

fn assert_items(ctx: &TestContext, what: &str, expected: &[Value], got: &[Value]) {
    assert!(
        expected == got,
        "[{}] {what}:\nexpected: {}\n     got: {}",
        ctx.name,
        pretty(&expected),
        pretty(&got)
    );
}

fn validate_all() -> impl FnMut(Value) -> BoxFuture<'static, Result<()>> + Send + 'static {
    |_| Box::pin(async { Ok(()) })
}

/// `storage.SimpleUpdate`.
fn simple_update<F>(
    mut f: F,
) -> impl FnMut(Value, ResponseMeta) -> BoxFuture<'static, Result<UpdateOutcome>> + Send + 'static
where
    F: FnMut(Value) -> Result<Value> + Send + 'static,
{
    move |current, _meta| {
        let out = f(current).map(|object| UpdateOutcome { object, ttl: None });
        Box::pin(async move { out })
    }
}

/// An update that replaces the object with `obj` (and optionally sets a TTL).
fn replace_with(
    obj: Value,
    ttl: Option<u64>,
) -> impl FnMut(Value, ResponseMeta) -> BoxFuture<'static, Result<UpdateOutcome>> + Send + 'static {
    move |_current, _meta| {
        let out = UpdateOutcome {
            object: obj.clone(),
            ttl,
        };
        Box::pin(async move { Ok(out) })
    }
}

/// `GuaranteedUpdate(key, ignoreNotFound=true, nil, SimpleUpdate(replace with obj), nil)`.
async fn upsert(ctx: &TestContext, key: &str, obj: &Value) -> Value {
    ctx.storage
        .guaranteed_update(
            key,
            true,
            &Preconditions::default(),
            &mut replace_with(obj.clone(), None),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] GuaranteedUpdate({key}) failed: {e}", ctx.name))
}

/// `GuaranteedUpdate(key, false, nil, SimpleUpdate(f), nil)`.
async fn update_with<F>(ctx: &TestContext, key: &str, f: F) -> Value
where
    F: FnMut(Value) -> Result<Value> + Send + 'static,
{
    ctx.storage
        .guaranteed_update(
            key,
            false,
            &Preconditions::default(),
            &mut simple_update(f),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] GuaranteedUpdate({key}) failed: {e}", ctx.name))
}

async fn create(ctx: &TestContext, obj: &Value) -> Value {
    let key = pod_key(obj);
    ctx.storage
        .create(&key, obj.clone(), 0)
        .await
        .unwrap_or_else(|e| panic!("[{}] Create({key}) failed: {e}", ctx.name))
}

async fn delete_plain(storage: &dyn Storage, key: &str, hint: Option<Value>) -> Result<Value> {
    storage
        .delete(key, &Preconditions::default(), &mut validate_all(), hint)
        .await
}

async fn get(ctx: &TestContext, key: &str) -> Result<Option<Value>> {
    ctx.storage.get(key, &GetOptions::default()).await
}

async fn list(ctx: &TestContext, key: &str, opts: &ListOptions) -> ListResult {
    ctx.storage
        .get_list(key, opts)
        .await
        .unwrap_or_else(|e| panic!("[{}] GetList({key}, {opts:?}) failed: {e}", ctx.name))
}

/// `testPropagateStore`: delete whatever is at the pod's key, create the pod, return the key
/// and the stored object.
async fn propagate(ctx: &TestContext, obj: &Value) -> (String, Value) {
    let key = pod_key(obj);
    match delete_plain(&*ctx.storage, &key, None).await {
        Ok(_) => {}
        Err(e) if e.is_not_found() => {}
        Err(e) => panic!("[{}] cleanup of {key} failed: {e}", ctx.name),
    }
    let out = ctx
        .storage
        .create(&key, obj.clone(), 0)
        .await
        .unwrap_or_else(|e| panic!("[{}] Create({key}) failed: {e}", ctx.name));
    (key, out)
}

fn assert_not_found(ctx: &TestContext, what: &str, r: Result<Option<Value>>) {
    match r {
        Err(e) if e.is_not_found() => {}
        other => panic!("[{}] {what}: expected NotFound, got {other:?}", ctx.name),
    }
}

fn is_too_large(e: &StorageError) -> bool {
    matches!(e, StorageError::TooLargeResourceVersion { .. })
}

fn is_internal(e: &StorageError) -> bool {
    matches!(e, StorageError::Internal(_))
}

// ---------------------------------------------------------------------------------------------
// Watch helpers (testCheckResult, testCheckEventType, TestCheckNoMoreResults, ...).
// ---------------------------------------------------------------------------------------------

/// The type of an event, as `watch.EventType` names it.
pub fn event_type(e: &WatchEvent) -> &'static str {
    match e {
        WatchEvent::Added(_) => "ADDED",
        WatchEvent::Modified(_) => "MODIFIED",
        WatchEvent::Deleted(_) => "DELETED",
        WatchEvent::Bookmark(_) => "BOOKMARK",
        WatchEvent::Error(_) => "ERROR",
    }
}

/// The object of an event, decoded (panics on an object that does not decode: the
/// conformance cases store only valid objects).
fn event_object(e: &WatchEvent) -> Option<Value> {
    match e {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => Some(
            o.clone()
                .into_value()
                .unwrap_or_else(|err| panic!("event object does not decode: {err}")),
        ),
        WatchEvent::Bookmark(o) => Some(o.clone()),
        WatchEvent::Error(_) => None,
    }
}

fn describe(e: &WatchEvent) -> String {
    match e {
        WatchEvent::Error(err) => format!("ERROR({err:?})"),
        other => format!(
            "{} {}",
            event_type(other),
            event_object(other)
                .map(|o| o.to_string())
                .unwrap_or_default()
        ),
    }
}

/// The next event, waiting at most `timeout`; `Ok(None)` when the channel closed; `Err(())`
/// on timeout.
async fn recv_within(
    w: &mut WatchStream,
    timeout: Duration,
) -> std::result::Result<Option<WatchEvent>, ()> {
    tokio::time::timeout(timeout, w.recv())
        .await
        .map_err(|_| ())
}

async fn next_event(ctx: &TestContext, w: &mut WatchStream, what: &str) -> WatchEvent {
    match recv_within(w, EVENT_TIMEOUT).await {
        Ok(Some(e)) => e,
        Ok(None) => panic!("[{}] {what}: watch closed, expected an event", ctx.name),
        Err(()) => panic!(
            "[{}] {what}: time out after waiting {EVENT_TIMEOUT:?} on the watch",
            ctx.name
        ),
    }
}

/// `testCheckResult`: the next event is `expected_type` with exactly `expected`.
async fn expect_event(
    ctx: &TestContext,
    w: &mut WatchStream,
    expected_type: &str,
    expected: &Value,
) {
    let e = next_event(ctx, w, &format!("waiting for {expected_type}")).await;
    assert!(
        event_type(&e) == expected_type && event_object(&e).as_ref() == Some(expected),
        "[{}] incorrect event:\nexpected: {expected_type} {}\n     got: {}",
        ctx.name,
        pretty(expected),
        describe(&e)
    );
}

/// `testCheckEventType`.
async fn expect_event_type(
    ctx: &TestContext,
    w: &mut WatchStream,
    expected_type: &str,
    timeout: Duration,
) -> WatchEvent {
    let e = match recv_within(w, timeout).await {
        Ok(Some(e)) => e,
        Ok(None) => panic!(
            "[{}] watch closed, expected a {expected_type} event",
            ctx.name
        ),
        Err(()) => panic!(
            "[{}] time out after waiting {timeout:?} for a {expected_type} event",
            ctx.name
        ),
    };
    assert_eq!(
        event_type(&e),
        expected_type,
        "[{}] event type want={expected_type}, got {}",
        ctx.name,
        describe(&e)
    );
    e
}

/// `TestCheckNoMoreResultsWithIgnoreFunc`: nothing (but ignored bookmarks) arrives for
/// [`NO_EVENT_WAIT`]. A closed channel counts as "nothing".
async fn expect_no_more_events(ctx: &TestContext, w: &mut WatchStream, ignore_bookmarks: bool) {
    let deadline = Instant::now() + NO_EVENT_WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        match recv_within(w, left).await {
            Err(()) | Ok(None) => return,
            Ok(Some(WatchEvent::Bookmark(_))) if ignore_bookmarks => continue,
            Ok(Some(e)) => panic!(
                "[{}] unexpected event {}, expected no more events",
                ctx.name,
                describe(&e)
            ),
        }
    }
}

/// `testCheckResultWithIgnoreFunc` with bookmarks ignored: the next non-bookmark events are
/// exactly `expected`, in order.
async fn expect_events_ignoring_bookmarks(
    ctx: &TestContext,
    w: &mut WatchStream,
    expected: &[(&str, Value)],
) {
    for (i, (ty, obj)) in expected.iter().enumerate() {
        let e = loop {
            let e = next_event(ctx, w, &format!("waiting for event #{i} ({ty})")).await;
            if !matches!(e, WatchEvent::Bookmark(_)) {
                break e;
            }
        };
        assert!(
            event_type(&e) == *ty && event_object(&e).as_ref() == Some(obj),
            "[{}] incorrect event #{i}:\nexpected: {ty} {}\n     got: {}",
            ctx.name,
            pretty(obj),
            describe(&e)
        );
    }
}

async fn watch(ctx: &TestContext, key: &str, opts: ListOptions) -> WatchStream {
    ctx.storage
        .watch(key, opts)
        .await
        .unwrap_or_else(|e| panic!("[{}] Watch({key}) failed: {e}", ctx.name))
}

/// The bookmark object that ends the initial events of a watch-list.
fn initial_events_end_bookmark(rv: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "resourceVersion": rv,
            "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"}
        }
    })
}

// ---------------------------------------------------------------------------------------------
// store_tests.go: create, get, delete.
// ---------------------------------------------------------------------------------------------

/// `RunTestCreate`: create on an empty key returns the object with a resourceVersion; an object
/// with a resourceVersion is refused (`ErrResourceVersionSetOnCreate`).
pub async fn run_test_create(ctx: &TestContext) {
    // successful create
    let input = pod("test-ns", "foo");
    let key = pod_key(&input);
    assert_not_found(ctx, "get before create", get(ctx, &key).await);
    let out = ctx
        .storage
        .create(&key, input.clone(), 0)
        .await
        .unwrap_or_else(|e| panic!("[{}] successful create: {e}", ctx.name));
    assert_eq!(name_of(&out), "foo", "[{}] pod name", ctx.name);
    assert!(
        !rv_of(&out).is_empty(),
        "[{}] output should have non-empty resource version",
        ctx.name
    );
    assert_json_eq(ctx, "created object", &with_rv(&input, &rv_of(&out)), &out);
    ctx.validate_key(&key).await;

    // create with ResourceVersion set
    let mut input = pod("test-ns", "bar");
    set_rv(&mut input, "1");
    let key = pod_key(&input);
    assert_not_found(ctx, "get before create", get(ctx, &key).await);
    match ctx.storage.create(&key, input, 0).await {
        Err(StorageError::Internal(m))
            if m.contains("resourceVersion should not be set on objects to be created") => {}
        other => panic!(
            "[{}] create with ResourceVersion set: expected ErrResourceVersionSetOnCreate, got {other:?}",
            ctx.name
        ),
    }
}

/// `RunTestCreateWithTTL`: an object created with ttl=1 expires and a watch from its
/// resourceVersion sees DELETED.
pub async fn run_test_create_with_ttl(ctx: &TestContext) {
    let input = pod("test-ns", "foo");
    let key = pod_key(&input);
    let out = ctx
        .storage
        .create(&key, input, 1)
        .await
        .unwrap_or_else(|e| panic!("[{}] Create failed: {e}", ctx.name));
    let mut w = watch(ctx, &key, list_opts(&rv_of(&out), everything(), false)).await;
    expect_event_type(ctx, &mut w, "DELETED", TTL_TIMEOUT).await;
}

/// `RunTestCreateWithKeyExist`: a second create on the same key is `KeyExists`.
pub async fn run_test_create_with_key_exist(ctx: &TestContext) {
    let obj = pod("test-ns", "foo");
    let (key, _) = propagate(ctx, &obj).await;
    match ctx.storage.create(&key, obj, 0).await {
        Err(StorageError::KeyExists { .. }) => {}
        other => panic!("[{}] expecting key exists error, got {other:?}", ctx.name),
    }
}

/// `RunTestGet`: Get with resourceVersion "", "0", the creation RV, the current RV and the
/// latest RV; a too large RV; missing keys with and without `ignore_not_found`.
pub async fn run_test_get(ctx: &TestContext) {
    let (key, created) = propagate(ctx, &pod("test-ns", "foo")).await;
    // update the object once to allow get by exact resource version to be tested
    let mut update_obj = created.clone();
    set_annotations(&mut update_obj, &[("test-annotation", "1")]);
    let stored = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(update_obj, Some(1)),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    // an additional object increments the resource version above the foo object's
    let last_updated = create(ctx, &pod("test-ns", "bar")).await;
    let current_rv = rv_of(&stored);
    let last_rv = rv_of(&last_updated);

    struct Case<'a> {
        name: &'a str,
        key: &'a str,
        ignore_not_found: bool,
        rv: String,
        expect_not_found: bool,
        expect_too_large: bool,
        // `None` in an alternative is the zero object (`IgnoreNotFound`).
        alternatives: Vec<Option<Value>>,
    }
    let cases = vec![
        Case {
            name: "get existing",
            key: &key,
            ignore_not_found: false,
            rv: String::new(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(stored.clone())],
        },
        Case {
            name: "resource version 0",
            key: &key,
            ignore_not_found: true,
            rv: "0".into(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![None, Some(created.clone()), Some(stored.clone())],
        },
        Case {
            name: "object created resource version",
            key: &key,
            ignore_not_found: false,
            rv: rv_of(&created),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(created.clone()), Some(stored.clone())],
        },
        Case {
            name: "current object resource version, match=NotOlderThan",
            key: &key,
            ignore_not_found: false,
            rv: current_rv.clone(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(stored.clone())],
        },
        Case {
            name: "latest resource version",
            key: &key,
            ignore_not_found: false,
            rv: last_rv.clone(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(stored.clone())],
        },
        Case {
            name: "too high resource version",
            key: &key,
            ignore_not_found: false,
            rv: i64::MAX.to_string(),
            expect_not_found: false,
            expect_too_large: true,
            alternatives: vec![],
        },
        Case {
            name: "get non-existing",
            key: "/pods/non-existing",
            ignore_not_found: false,
            rv: String::new(),
            expect_not_found: true,
            expect_too_large: false,
            alternatives: vec![],
        },
        Case {
            name: "get non-existing, ignore not found",
            key: "/pods/non-existing",
            ignore_not_found: true,
            rv: String::new(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![None],
        },
    ];
    for tt in cases {
        let opts = GetOptions {
            resource_version: tt.rv.clone(),
            ignore_not_found: tt.ignore_not_found,
        };
        let res = ctx.storage.get(tt.key, &opts).await;
        if tt.expect_not_found {
            assert!(
                matches!(&res, Err(e) if e.is_not_found()),
                "[{}] {}: expecting not found error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        if tt.expect_too_large {
            assert!(
                matches!(&res, Err(e) if is_too_large(e)),
                "[{}] {}: expecting resource version too high error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        let out = res.unwrap_or_else(|e| panic!("[{}] {}: Get failed: {e}", ctx.name, tt.name));
        assert!(
            tt.alternatives.contains(&out),
            "[{}] {}: incorrect pod {}, expected one of {}",
            ctx.name,
            tt.name,
            pretty(&out),
            pretty(&tt.alternatives)
        );
    }
}

/// `RunTestUnconditionalDelete`: delete returns the stored object with a new resourceVersion;
/// a missing key is NotFound.
pub async fn run_test_unconditional_delete(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    // existing key
    let out = delete_plain(&*ctx.storage, &key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&stored),
        rv_of(&out),
        "[{}] expecting resource version to be updated",
        ctx.name
    );
    assert_json_eq(
        ctx,
        "incorrect pod",
        &stored,
        &with_rv(&out, &rv_of(&stored)),
    );
    // non-existing key
    match delete_plain(&*ctx.storage, "/pods/non-existing", None).await {
        Err(e) if e.is_not_found() => {}
        other => panic!("[{}] expecting not found error, got {other:?}", ctx.name),
    }
}

/// `RunTestConditionalDelete`: a matching UID precondition deletes, a mismatch is `InvalidObj`.
pub async fn run_test_conditional_delete(ctx: &TestContext) {
    let mut obj = pod("test-ns", "foo");
    set_uid(&mut obj, "A");
    let (key, stored) = propagate(ctx, &obj).await;
    // UID match
    let pre = Preconditions {
        uid: Some("A".into()),
        resource_version: None,
    };
    let out = ctx
        .storage
        .delete(&key, &pre, &mut validate_all(), None)
        .await
        .unwrap_or_else(|e| panic!("[{}] UID match: Delete failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&stored),
        rv_of(&out),
        "[{}] expecting resource version to be updated",
        ctx.name
    );
    assert_json_eq(
        ctx,
        "incorrect pod",
        &stored,
        &with_rv(&out, &rv_of(&stored)),
    );
    let (key, _) = propagate(ctx, &obj).await;
    // UID mismatch
    let pre = Preconditions {
        uid: Some("B".into()),
        resource_version: None,
    };
    match ctx
        .storage
        .delete(&key, &pre, &mut validate_all(), None)
        .await
    {
        Err(e) if e.is_invalid_obj() => {}
        other => panic!(
            "[{}] UID mismatch: expecting invalid UID error, got {other:?}",
            ctx.name
        ),
    }
}

/// `RunTestDeleteWithSuggestion`: delete with a fresh cached object.
pub async fn run_test_delete_with_suggestion(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    delete_plain(&*ctx.storage, &key, Some(original))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
}

/// `RunTestDeleteWithSuggestionAndConflict`: a stale cached object makes the delete retry; the
/// latest object is deleted and returned.
pub async fn run_test_delete_with_suggestion_and_conflict(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    // First update, so the original is outdated.
    let updated = update_with(ctx, &key, |mut p| {
        set_labels(&mut p, &[("foo", "bar")]);
        Ok(p)
    })
    .await;
    let out = delete_plain(&*ctx.storage, &key, Some(original))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
    assert_json_eq(ctx, "incorrect pod", &with_rv(&updated, &rv_of(&out)), &out);
}

/// `RunTestDeleteWithConflict`: an update that happens during `validate_deletion` makes the
/// delete retry; the updated object is deleted and returned.
pub async fn run_test_delete_with_conflict(ctx: &TestContext) {
    let (key, _) = propagate(ctx, &pod("test-ns", "name")).await;
    let validate_count = Arc::new(AtomicUsize::new(0));
    let update_count = Arc::new(AtomicUsize::new(0));
    let updated: Arc<Mutex<Option<Value>>> = Arc::new(Mutex::new(None));
    let (vc, uc, up, storage, k) = (
        validate_count.clone(),
        update_count.clone(),
        updated.clone(),
        ctx.storage.clone(),
        key.clone(),
    );
    // Simulate a conflicting update in the middle of delete.
    let mut validate = move |_obj: Value| -> BoxFuture<'static, Result<()>> {
        let n = vc.fetch_add(1, Ordering::SeqCst) + 1;
        let (uc, up, storage, k) = (uc.clone(), up.clone(), storage.clone(), k.clone());
        Box::pin(async move {
            if n > 1 {
                return Ok(());
            }
            let out = storage
                .guaranteed_update(
                    &k,
                    false,
                    &Preconditions::default(),
                    &mut simple_update(|mut p| {
                        set_labels(&mut p, &[("foo", "bar")]);
                        Ok(p)
                    }),
                    None,
                )
                .await
                .expect("Unexpected failure during update");
            *up.lock().unwrap() = Some(out);
            uc.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    };
    let out = ctx
        .storage
        .delete(&key, &Preconditions::default(), &mut validate, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_eq!(
        validate_count.load(Ordering::SeqCst),
        2,
        "[{}] validateCount",
        ctx.name
    );
    assert_eq!(
        update_count.load(Ordering::SeqCst),
        1,
        "[{}] updateCount",
        ctx.name
    );
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
    let updated = updated.lock().unwrap().clone().expect("updated pod");
    assert_json_eq(ctx, "incorrect pod", &with_rv(&updated, &rv_of(&out)), &out);
}

/// `RunTestDeleteWithSuggestionOfDeletedObject`: a cached object that was deleted since gives
/// NotFound.
pub async fn run_test_delete_with_suggestion_of_deleted_object(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    delete_plain(&*ctx.storage, &key, Some(original.clone()))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    match delete_plain(&*ctx.storage, &key, Some(original)).await {
        Err(e) if e.is_not_found() => {}
        other => panic!(
            "[{}] deleting with a stale object: expected not-found, got {other:?}",
            ctx.name
        ),
    }
}

fn counting_validator(
    calls: Arc<AtomicUsize>,
    check: impl Fn(&Value) -> Result<()> + Send + 'static,
) -> impl FnMut(Value) -> BoxFuture<'static, Result<()>> + Send + 'static {
    move |obj| {
        calls.fetch_add(1, Ordering::SeqCst);
        let r = check(&obj);
        Box::pin(async move { r })
    }
}

fn label_of(obj: &Value, key: &str) -> Option<String> {
    obj.pointer(&format!("/metadata/labels/{key}"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `RunTestValidateDeletionWithSuggestion`: a validation failure on a fresh cached object is
/// returned after one call; on a stale one, validation runs again on the live object.
pub async fn run_test_validate_deletion_with_suggestion(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    // Check that validating a fresh object is called once and fails.
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_nothing =
        counting_validator(calls.clone(), |_| Err(test_error("validation error")));
    let err = ctx
        .storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_nothing,
            Some(original.clone()),
        )
        .await
        .expect_err("validation should fail the delete");
    assert_eq!(
        err.aborted_as::<TestError>(),
        Some(&TestError("validation error".into())),
        "[{}] Unexpected failure during deletion: {err:?}",
        ctx.name
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "[{}] validate function should have been called once",
        ctx.name
    );
    // First update, so the original is outdated.
    update_with(ctx, &key, |mut p| {
        set_labels(&mut p, &[("foo", "bar")]);
        Ok(p)
    })
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_fresh = counting_validator(calls.clone(), |p| {
        if label_of(p, "foo").as_deref() != Some("bar") {
            return Err(test_error("stale object"));
        }
        Ok(())
    });
    ctx.storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_fresh,
            Some(original),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    // Implementations may ignore the suggestion, in which case one call is possible.
    assert!(
        calls.load(Ordering::SeqCst) <= 2,
        "[{}] validate function should have been called at most twice, called {}",
        ctx.name,
        calls.load(Ordering::SeqCst)
    );
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
}

/// `RunTestValidateDeletionWithOnlySuggestionValid`: the cached object passes validation but
/// the live one does not: the validation error is returned and the object stays.
pub async fn run_test_validate_deletion_with_only_suggestion_valid(ctx: &TestContext) {
    let (key, original) = propagate(
        ctx,
        &with_labels(&pod("test-ns", "name"), &[("foo", "bar")]),
    )
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_nothing =
        counting_validator(calls.clone(), |_| Err(test_error("validation error")));
    let err = ctx
        .storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_nothing,
            Some(original.clone()),
        )
        .await
        .expect_err("validation should fail the delete");
    assert_eq!(
        err.aborted_as::<TestError>(),
        Some(&TestError("validation error".into())),
        "[{}] Unexpected failure during deletion: {err:?}",
        ctx.name
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "[{}] calls", ctx.name);
    // First update, so the original is outdated.
    let updated = update_with(ctx, &key, |mut p| {
        set_labels(&mut p, &[("foo", "barbar")]);
        Ok(p)
    })
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_fresh = counting_validator(calls.clone(), |p| {
        if label_of(p, "foo").as_deref() != Some("bar") {
            return Err(test_error("stale object"));
        }
        Ok(())
    });
    let res = ctx
        .storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_fresh,
            Some(original),
        )
        .await;
    match &res {
        Err(e) if e.to_string() == "stale object" => {}
        other => panic!("[{}] expecting stale object error, got {other:?}", ctx.name),
    }
    assert!(
        calls.load(Ordering::SeqCst) <= 2,
        "[{}] validate function should have been called at most twice",
        ctx.name
    );
    let out = get(ctx, &key)
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected error on reading object: {e}", ctx.name));
    assert_json_eq(ctx, "incorrect pod", &updated, &out.unwrap_or_default());
}

/// `RunTestPreconditionalDeleteWithSuggestion`: the precondition fails on the stale cached
/// object but holds on the live one: the delete succeeds.
pub async fn run_test_preconditional_delete_with_suggestion(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    update_with(ctx, &key, |mut p| {
        set_uid(&mut p, "myUID");
        Ok(p)
    })
    .await;
    let pre = Preconditions {
        uid: Some("myUID".into()),
        resource_version: None,
    };
    ctx.storage
        .delete(&key, &pre, &mut validate_all(), Some(original))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
}

/// `RunTestPreconditionalDeleteWithOnlySuggestionPass`: the precondition holds on the cached
/// object only: `InvalidObj`, and the object stays.
pub async fn run_test_preconditional_delete_with_only_suggestion_pass(ctx: &TestContext) {
    let mut obj = pod("test-ns", "name");
    set_uid(&mut obj, "myUID");
    let (key, original) = propagate(ctx, &obj).await;
    let updated = update_with(ctx, &key, |mut p| {
        set_uid(&mut p, "otherUID");
        Ok(p)
    })
    .await;
    let pre = Preconditions {
        uid: Some("myUID".into()),
        resource_version: None,
    };
    match ctx
        .storage
        .delete(&key, &pre, &mut validate_all(), Some(original))
        .await
    {
        Err(e) if e.is_invalid_obj() => {}
        other => panic!("[{}] expecting invalid UID error, got {other:?}", ctx.name),
    }
    let out = get(ctx, &key)
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected error on reading object: {e}", ctx.name));
    assert_json_eq(ctx, "incorrect pod", &updated, &out.unwrap_or_default());
}

// ---------------------------------------------------------------------------------------------
// store_tests.go: lists.
// ---------------------------------------------------------------------------------------------

/// `seedMultiLevelData`: `first/bar`, `second/{bar,foo,baz}`, `third/{barfoo,foo}`; `first/bar`
/// is then updated (`spec.nodeName: fakeNode`) and `second/baz` deleted. Returns the list
/// resourceVersion before any write, the six created objects (in creation order) and the
/// updated `first/bar`.
async fn seed_multi_level_data(ctx: &TestContext) -> (String, Vec<Value>, Value) {
    let preset = [
        pod("first", "bar"),
        pod("second", "bar"),
        pod("second", "foo"),
        pod("third", "barfoo"),
        pod("third", "foo"),
        pod("second", "baz"),
    ];
    let initial = list(ctx, "/pods/", &list_opts("", everything(), true)).await;
    let initial_rv = initial.resource_version.to_string();
    let mut created = Vec::new();
    for p in &preset {
        created.push(create(ctx, p).await);
    }
    let updated = ctx
        .storage
        .guaranteed_update(
            &pod_key(&preset[0]),
            true,
            &Preconditions::default(),
            &mut simple_update(|mut p| {
                p["spec"]["nodeName"] = json!("fakeNode");
                Ok(p)
            }),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] failed to update object: {e}", ctx.name));
    delete_plain(&*ctx.storage, &pod_key(&preset[5]), None)
        .await
        .unwrap_or_else(|e| panic!("[{}] failed to delete object: {e}", ctx.name));
    (initial_rv, created, updated)
}

/// One case of [`run_test_list`] (the table of `RunTestList`).
#[derive(Default)]
struct ListCase {
    name: &'static str,
    rv: String,
    /// `resourceVersionMatch` as the query parameter spells it (`""`, `Exact`, `NotOlderThan`,
    /// or an invalid value).
    rv_match: &'static str,
    prefix: &'static str,
    pred: Option<SelectionPredicate>,
    expected_out: Vec<Value>,
    expected_alternatives: Option<Vec<Vec<Value>>>,
    expect_continue: bool,
    expect_continue_exact: Option<String>,
    expected_remaining_item_count: Option<i64>,
    expect_error: bool,
    expect_rv_too_large: bool,
    expect_rv_too_old: bool,
    expect_continue_too_old: bool,
    expect_rv: Option<String>,
    expect_rv_not_older_than: Option<String>,
}

fn decode_token(token: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|_| token.to_string())
}

/// `RunTestList`: the big table of list cases over a multi-level tree (resourceVersion ""/0/N,
/// resourceVersionMatch Exact/NotOlderThan/invalid, limit, continue, selectors with paging,
/// remainingItemCount, flattened recursion, too old and too large revisions), after a
/// compaction at the first write. Needs a backend of its own ([`TestContext::compact`]).
pub async fn run_test_list(ctx: &TestContext) {
    let (initial_rv, created, updated) = seed_multi_level_data(ctx).await;
    let c = |i: usize| created[i].clone();
    let crv = |i: usize| rv_of(&created[i]);
    let crv_i = |i: usize| rv_u64(&created[i]) as i64;
    let ckey = |i: usize| format!("{}/{}\0", namespace_of(&created[i]), name_of(&created[i]));

    let first_list = list(ctx, "/pods/second", &list_opts("", everything(), true)).await;
    let list_rv = first_list.resource_version.to_string();
    let continue_rv = first_list.resource_version as i64;
    let second_continuation =
        continue_token::encode("/pods/second/foo", "/pods/second/", continue_rv).unwrap();

    // Compact and increase RV to test consistent List.
    ctx.compact(rv_u64(&created[0])).await;
    let current_rv = (continue_rv + 1).to_string();

    let everything_paged = |limit: i64, cont: &str| SelectionPredicate {
        limit,
        continue_token: cont.to_string(),
        ..SelectionPredicate::default()
    };
    let name_pred =
        |value: &str, limit: i64| pod_pred_paged(field_eq("metadata.name", value), limit, "");

    let cases: Vec<ListCase> = vec![
        ListCase {
            name: "rejects invalid resource version",
            prefix: "/pods/",
            rv: "abc".into(),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "rejects resource version and continue token",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &second_continuation)),
            rv: "1".into(),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "rejects resource version set too high",
            prefix: "/pods/",
            rv: i64::MAX.to_string(),
            expect_rv_too_large: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0",
            prefix: "/pods/first/",
            expected_alternatives: Some(vec![vec![], vec![updated.clone()]]),
            rv: "0".into(),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before update, match=Exact",
            prefix: "/pods/first/",
            expected_out: vec![c(0)],
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before creation, match=Exact",
            prefix: "/pods/second/",
            expected_out: vec![],
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set after creation, match=Exact",
            prefix: "/pods/second/",
            expected_out: vec![c(1)],
            rv: crv(1),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=Exact",
            prefix: "/pods/first/",
            rv: initial_rv.clone(),
            rv_match: "Exact",
            expect_rv_too_old: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0, match=NotOlderThan",
            prefix: "/pods/first/",
            expected_alternatives: Some(vec![vec![], vec![updated.clone()]]),
            rv: "0".into(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0, match=Invalid",
            prefix: "/pods/first/",
            rv: "0".into(),
            rv_match: "Invalid",
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=NotOlderThan",
            prefix: "/pods/first/",
            expected_alternatives: Some(vec![vec![], vec![updated.clone()]]),
            rv: initial_rv.clone(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=Invalid",
            prefix: "/pods/first/",
            rv: initial_rv.clone(),
            rv_match: "Invalid",
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            rv: list_rv.clone(),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version, match=Exact",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            rv: list_rv.clone(),
            rv_match: "Exact",
            expect_rv: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version, match=NotOlderThan",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List on non-existing key",
            prefix: "/pods/non-existing/",
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test List with pod name matching",
            prefix: "/pods/first/",
            pred: Some(pod_pred(field_ne("metadata.name", "bar"))),
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test List with pod name matching with resource version set to current resource version, match=NotOlderThan",
            prefix: "/pods/first/",
            pred: Some(pod_pred(field_ne("metadata.name", "bar"))),
            expected_out: vec![],
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List with limit",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_rv: Some(current_rv.clone()),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}\0", name_of(&created[1])),
                continue_rv + 1,
            )),
            expected_remaining_item_count: Some(1),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at current resource version",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}\0", name_of(&created[1])),
                continue_rv,
            )),
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            expect_rv: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at current resource version and match=Exact",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}\0", name_of(&created[1])),
                continue_rv,
            )),
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            rv_match: "Exact",
            expect_rv: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at current resource version and match=NotOlderThan",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expect_rv_not_older_than: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version 0",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: "0".into(),
            expect_rv_not_older_than: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version 0 match=NotOlderThan",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: "0".into(),
            rv_match: "NotOlderThan",
            expect_rv_not_older_than: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version before created and match=Exact",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![],
            expect_continue: false,
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version after created and match=Exact",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: false,
            rv: crv(1),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List with pregenerated continue token",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, &second_continuation)),
            expected_out: vec![c(2)],
            ..Default::default()
        },
        ListCase {
            name: "ignores resource version 0 for List with pregenerated continue token",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, &second_continuation)),
            rv: "0".into(),
            expected_out: vec![c(2)],
            ..Default::default()
        },
        ListCase {
            name: "test List with multiple levels of directories and expect flattened result",
            prefix: "/pods/second/",
            expected_out: vec![c(1), c(2)],
            ..Default::default()
        },
        ListCase {
            name: "test List with multiple levels of directories and expect flattened result with current resource version and match=NotOlderThan",
            prefix: "/pods/second/",
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(1), c(2)],
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, ensure only a single page returned",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 1)),
            expected_out: vec![c(3)],
            expect_continue: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, ensure only a single page returned with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 1)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(3)],
            expect_rv_not_older_than: Some(list_rv.clone()),
            expect_continue: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 2)),
            expected_out: vec![c(3)],
            expect_continue: false,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 2)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(3)],
            expect_rv_not_older_than: Some(list_rv.clone()),
            expect_continue: false,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list, with resource version 0",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 2)),
            rv: "0".into(),
            expected_alternatives: Some(vec![vec![], vec![c(3)]]),
            expect_continue: false,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning two items, more pages possible",
            prefix: "/pods/",
            pred: Some(name_pred("bar", 2)),
            expect_continue: true,
            expected_out: vec![updated.clone(), c(1)],
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning two items, more pages possible with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("bar", 2)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expect_continue: true,
            expected_out: vec![updated.clone(), c(1)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items split across multiple pages",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 2)),
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items split across multiple pages with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 2)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item for last page, ends on last item, not full",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(
                field_eq("metadata.name", "foo"),
                2,
                &encode_continue("third/barfoo", continue_rv),
            )),
            expected_out: vec![c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item for last page, starts on last item, full",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(
                field_eq("metadata.name", "foo"),
                1,
                &encode_continue("third/barfoo", continue_rv),
            )),
            expected_out: vec![c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item for last page, starts on last item, partial page",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(
                field_eq("metadata.name", "foo"),
                2,
                &encode_continue("third/barfoo", continue_rv),
            )),
            expected_out: vec![c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items, page size equal to total list size",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 5)),
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 5)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item, page size equal to total list size",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 5)),
            expected_out: vec![c(3)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 5)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(3)],
            ..Default::default()
        },
        ListCase {
            name: "list all items",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "list all items with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "verify list returns updated version of object; filter returns one item, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(field_eq("spec.nodeName", "fakeNode"), 5, "")),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![updated.clone()],
            ..Default::default()
        },
        ListCase {
            name: "verify list does not return deleted object; filter for deleted object, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("baz", 5)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test consistent List",
            prefix: "/pods/empty",
            rv: String::new(),
            expect_rv: Some(current_rv.clone()),
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test non-consistent List",
            prefix: "/pods/empty",
            rv: "0".into(),
            expect_rv_not_older_than: Some(initial_rv.clone()),
            expected_out: vec![],
            ..Default::default()
        },
        // match=Exact
        ListCase {
            name: "test List with resource version set before first write, match=Exact",
            prefix: "/pods/",
            rv: initial_rv.clone(),
            rv_match: "Exact",
            expect_rv_too_old: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of first write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0)],
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of second write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1)],
            rv: crv(1),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of third write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2)],
            rv: crv(2),
            rv_match: "Exact",
            expect_rv: Some(crv(2)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of fourth write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2), c(3)],
            rv: crv(3),
            rv_match: "Exact",
            expect_rv: Some(crv(3)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of fifth write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2), c(3), c(4)],
            rv: crv(4),
            rv_match: "Exact",
            expect_rv: Some(crv(4)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of six write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2), c(3), c(4), c(5)],
            rv: crv(5),
            rv_match: "Exact",
            expect_rv: Some(crv(5)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of seventh write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4), c(5)],
            rv: rv_of(&updated),
            rv_match: "Exact",
            expect_rv: Some(rv_of(&updated)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of eight write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            rv: continue_rv.to_string(),
            rv_match: "Exact",
            expect_rv: Some(continue_rv.to_string()),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version after writes, match=Exact",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            rv: (continue_rv + 1).to_string(),
            rv_match: "Exact",
            expect_rv: Some((continue_rv + 1).to_string()),
            ..Default::default()
        },
        ListCase {
            name: "test List with future resource version, match=Exact",
            prefix: "/pods/",
            rv: (continue_rv + 2).to_string(),
            rv_match: "Exact",
            expect_rv_too_large: true,
            ..Default::default()
        },
        // limit, match=Exact
        ListCase {
            name: "test List with limit, resource version of second write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(0)],
            rv: crv(1),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(0), crv_i(1))),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            expected_remaining_item_count: Some(1),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of third write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(2, "")),
            rv: crv(2),
            rv_match: "Exact",
            expected_out: vec![c(0), c(1)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), crv_i(2))),
            expect_rv: Some(crv(2)),
            expected_remaining_item_count: Some(1),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of fourth write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(4, "")),
            rv: crv(3),
            rv_match: "Exact",
            expected_out: vec![c(0), c(1), c(2), c(3)],
            expect_rv: Some(crv(3)),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of fifth write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(1, "")),
            rv: crv(4),
            rv_match: "Exact",
            expected_out: vec![c(0)],
            expect_rv: Some(crv(4)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(0), crv_i(4))),
            expected_remaining_item_count: Some(4),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of six write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(2, "")),
            rv: crv(5),
            rv_match: "Exact",
            expected_out: vec![c(0), c(1)],
            expect_rv: Some(crv(5)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), crv_i(5))),
            expected_remaining_item_count: Some(4),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of seventh write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(4, "")),
            rv: rv_of(&updated),
            rv_match: "Exact",
            expected_out: vec![updated.clone(), c(1), c(5), c(2)],
            expect_rv: Some(rv_of(&updated)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(2), rv_u64(&updated) as i64)),
            expected_remaining_item_count: Some(2),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of eight write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(8, "")),
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            rv: continue_rv.to_string(),
            rv_match: "Exact",
            expect_rv: Some(continue_rv.to_string()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version after writes, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(1, "")),
            rv: (continue_rv + 1).to_string(),
            rv_match: "Exact",
            expected_out: vec![updated.clone()],
            expect_rv: Some((continue_rv + 1).to_string()),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}/{}\0", namespace_of(&updated), name_of(&updated)),
                continue_rv + 1,
            )),
            expected_remaining_item_count: Some(4),
            ..Default::default()
        },
        // Continue
        ListCase {
            name: "test List with continue, resource version before first write",
            prefix: "/pods/",
            pred: Some(everything_paged(
                1,
                &encode_continue(&ckey(0), initial_rv.parse::<i64>().unwrap_or(0)),
            )),
            expect_continue_too_old: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of first write",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &encode_continue(&ckey(0), crv_i(0)))),
            expected_out: vec![],
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of second write",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &encode_continue(&ckey(0), crv_i(1)))),
            expected_out: vec![c(1)],
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of third write",
            prefix: "/pods/",
            pred: Some(everything_paged(2, &encode_continue(&ckey(1), crv_i(2)))),
            expected_out: vec![c(2)],
            expect_rv: Some(crv(2)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of fifth write",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &encode_continue(&ckey(0), crv_i(4)))),
            expected_out: vec![c(1)],
            expect_rv: Some(crv(4)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), crv_i(4))),
            expected_remaining_item_count: Some(3),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of six write",
            prefix: "/pods/",
            pred: Some(everything_paged(2, &encode_continue(&ckey(1), crv_i(5)))),
            expected_out: vec![c(5), c(2)],
            expect_rv: Some(crv(5)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(2), crv_i(5))),
            expected_remaining_item_count: Some(2),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of seventh write",
            prefix: "/pods/",
            pred: Some(everything_paged(
                4,
                &encode_continue(&ckey(2), rv_u64(&updated) as i64),
            )),
            expected_out: vec![c(3), c(4)],
            expect_rv: Some(rv_of(&updated)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version after writes",
            prefix: "/pods/",
            pred: Some(everything_paged(
                1,
                &encode_continue(
                    &format!("{}/{}\0", namespace_of(&updated), name_of(&updated)),
                    continue_rv + 1,
                ),
            )),
            expected_out: vec![c(1)],
            expect_rv: Some((continue_rv + 1).to_string()),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), continue_rv + 1)),
            expected_remaining_item_count: Some(3),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from second pod, negative resource version gives consistent read",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue(&ckey(0), -1))),
            expected_out: vec![c(1), c(2), c(3), c(4)],
            expect_rv: Some(current_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from second pod and limit, negative resource version gives consistent read",
            prefix: "/pods/",
            pred: Some(everything_paged(2, &encode_continue(&ckey(0), -1))),
            expected_out: vec![c(1), c(2)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(2), continue_rv + 1)),
            expect_rv: Some(current_rv.clone()),
            expected_remaining_item_count: Some(2),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from third pod, negative resource version gives consistent read",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue(&ckey(2), -1))),
            expected_out: vec![c(3), c(4)],
            expect_rv: Some(current_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from empty fails",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue("", continue_rv))),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from first pod, empty resource version fails",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue(&ckey(0), 0))),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with negative rv fails",
            prefix: "/pods/",
            rv: "-1".into(),
            expect_error: true,
            ..Default::default()
        },
    ];

    let mut failures = Vec::new();
    for tt in cases {
        if let Err(msg) = check_list_case(ctx, tt).await {
            failures.push(msg);
        }
    }
    assert!(
        failures.is_empty(),
        "[{}] RunTestList: {} case(s) failed:\n{}",
        ctx.name,
        failures.len(),
        failures.join("\n")
    );
}

/// Run one [`ListCase`]; `Err` describes the failure.
async fn check_list_case(ctx: &TestContext, tt: ListCase) -> std::result::Result<(), String> {
    let name = tt.name;
    let fail = |msg: String| Err(format!("  - {name}: {msg}"));
    let rv_match = match ResourceVersionMatch::parse(tt.rv_match) {
        Ok(m) => m,
        Err(e) if tt.expect_error => {
            let _ = e;
            return Ok(());
        }
        Err(e) => return fail(format!("invalid resourceVersionMatch: {e}")),
    };
    let mut pred = tt.pred.unwrap_or_default();
    if pred.get_attrs.is_none() {
        pred.get_attrs = Some(default_attrs(vec!["spec.nodeName".into()]));
    }
    let opts = ListOptions {
        resource_version: tt.rv.clone(),
        resource_version_match: rv_match,
        predicate: pred,
        recursive: true,
        ..ListOptions::default()
    };
    let res = ctx.storage.get_list(tt.prefix, &opts).await;
    if tt.expect_rv_too_large {
        return match res {
            Err(e) if is_too_large(&e) => Ok(()),
            other => fail(format!(
                "expecting resource version too high error, got {other:?}"
            )),
        };
    }
    if tt.expect_rv_too_old {
        return match res {
            Err(e)
                if e.to_string()
                    .contains("The resourceVersion for the provided list is too old") =>
            {
                Ok(())
            }
            other => fail(format!(
                "expecting resource version too old error, got {other:?}"
            )),
        };
    }
    if tt.expect_continue_too_old {
        return match res {
            Err(e)
                if e.to_string().contains(
                    "The provided continue parameter is too old to display a consistent list result",
                ) =>
            {
                Ok(())
            }
            other => fail(format!("expecting continue too old error, got {other:?}")),
        };
    }
    let out = match res {
        Err(e) if tt.expect_error => {
            let _ = e;
            return Ok(());
        }
        Err(e) => return fail(format!("GetList failed: {e}")),
        Ok(_) if tt.expect_error => return fail("expected error but got none".into()),
        Ok(out) => out,
    };
    let mut problems = Vec::new();
    if out.continue_token.is_some() != tt.expect_continue {
        problems.push(format!(
            "unexpected continue token: {:?} (expected one: {})",
            out.continue_token.as_deref().map(decode_token),
            tt.expect_continue
        ));
    }
    if let Some(exact) = &tt.expect_continue_exact {
        if out.continue_token.as_deref() != Some(exact.as_str()) {
            problems.push(format!(
                "expected continue token: {}, got: {:?}",
                decode_token(exact),
                out.continue_token.as_deref().map(decode_token)
            ));
        }
    }
    let got_rv = out.resource_version.to_string();
    if let Some(want) = &tt.expect_rv {
        if *want != got_rv {
            problems.push(format!(
                "resourceVersion in list response want={want}, got={got_rv}"
            ));
        }
    }
    if let Some(min) = &tt.expect_rv_not_older_than {
        if out.resource_version < min.parse::<u64>().unwrap_or(0) {
            problems.push(format!(
                "expected a resourceVersion no smaller than {min}, but got {got_rv}"
            ));
        }
    }
    match &tt.expected_alternatives {
        None => {
            let expected = sort_by_key(tt.expected_out.clone());
            if expected != out.items {
                problems.push(format!(
                    "incorrect list pods:\n      expected: {}\n           got: {}",
                    serde_json::to_string(&expected).unwrap_or_default(),
                    serde_json::to_string(&out.items).unwrap_or_default()
                ));
            }
        }
        Some(alternatives) => {
            if !alternatives.contains(&out.items) {
                problems.push(format!(
                    "incorrect list pods: {} is none of {}",
                    serde_json::to_string(&out.items).unwrap_or_default(),
                    serde_json::to_string(alternatives).unwrap_or_default()
                ));
            }
        }
    }
    if tt.expected_remaining_item_count != out.remaining_item_count {
        problems.push(format!(
            "unexpected remainingItemCount: want {:?}, got {:?}",
            tt.expected_remaining_item_count, out.remaining_item_count
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        fail(problems.join("; "))
    }
}

/// `RunTestConsistentList` (without a cache): a list at resourceVersion "" or "0", or with a
/// continue token at `rv=-1`, returns the current global revision, even right after a write to
/// an unrelated key. Needs a backend of its own (it asserts the global revision).
pub async fn run_test_consistent_list(ctx: &TestContext) {
    let out = create(ctx, &pod("default", "foo")).await;
    let last_write_rv = rv_u64(&out);
    let bumped = ctx.increase_rv().await;
    assert_eq!(
        bumped,
        last_write_rv + 1,
        "[{}] increaseRV must write exactly one revision",
        ctx.name
    );
    let cases: [(&str, &str, String); 4] = [
        (
            "Non-consistent list before consistent read",
            "0",
            String::new(),
        ),
        ("LIST without RV returns consistent RV", "", String::new()),
        (
            "List with negative continue RV returns consistent RV",
            "",
            encode_continue("/pods/a", -1),
        ),
        (
            "Non-consistent request after consistent read",
            "0",
            String::new(),
        ),
    ];
    for (i, (name, rv, cont)) in cases.into_iter().enumerate() {
        // Every read below is preceded by exactly one increaseRV.
        let consistent_rv = last_write_rv + 1 + i as u64;
        let opts = ListOptions {
            resource_version: rv.into(),
            predicate: SelectionPredicate {
                continue_token: cont,
                ..SelectionPredicate::default()
            },
            recursive: true,
            ..ListOptions::default()
        };
        let out = list(ctx, "/pods/empty", &opts).await;
        assert_eq!(
            out.resource_version, consistent_rv,
            "[{}] {name}: list resourceVersion",
            ctx.name
        );
        // Update RV on each read to test multiple reads for consistent RV.
        ctx.increase_rv().await;
    }
}

/// `RunTestGetListNonRecursive`: a non-recursive list of one key at resourceVersion
/// ""/0/previous/current/too large, with and without resourceVersionMatch and selectors.
pub async fn run_test_get_list_non_recursive(ctx: &TestContext) {
    let (key, prev_stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let prev_rv = rv_of(&prev_stored);
    let mut new_pod = prev_stored.clone();
    set_annotations(&mut new_pod, &[("version", "second")]);
    let stored = ctx
        .storage
        .guaranteed_update(
            &key,
            false,
            &Preconditions::default(),
            &mut replace_with(new_pod, None),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] update failed: {e}", ctx.name));
    let obj_rv = rv_of(&stored);
    // Increase RV to test consistent List.
    ctx.increase_rv().await;

    let name_ne = || SelectionPredicate {
        field: field_ne("metadata.name", &name_of(&stored)),
        get_attrs: Some(default_attrs(vec![])),
        ..SelectionPredicate::default()
    };
    struct Case {
        name: &'static str,
        key: String,
        pred: SelectionPredicate,
        alternatives: Vec<Vec<Value>>,
        rv: String,
        rv_match: ResourceVersionMatch,
        expect_too_large: bool,
    }
    use ResourceVersionMatch::{Exact, NotOlderThan, Unset};
    let cases = vec![
        Case {
            name: "existing key",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: String::new(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=0",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![], vec![prev_stored.clone()], vec![stored.clone()]],
            rv: "0".into(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=0, resourceVersionMatch=notOlderThan",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![], vec![prev_stored.clone()], vec![stored.clone()]],
            rv: "0".into(),
            rv_match: NotOlderThan,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: obj_rv.clone(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current, resourceVersionMatch=notOlderThan",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: obj_rv.clone(),
            rv_match: NotOlderThan,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=previous, resourceVersionMatch=notOlderThan",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![prev_stored.clone()], vec![stored.clone()]],
            rv: prev_rv.clone(),
            rv_match: NotOlderThan,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current, resourceVersionMatch=exact",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: obj_rv.clone(),
            rv_match: Exact,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=previous, resourceVersionMatch=exact",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![prev_stored.clone()]],
            rv: prev_rv.clone(),
            rv_match: Exact,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=too high",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![],
            rv: i64::MAX.to_string(),
            rv_match: Unset,
            expect_too_large: true,
        },
        Case {
            name: "non-existing key",
            key: "/pods/non-existing".into(),
            pred: everything(),
            alternatives: vec![vec![]],
            rv: String::new(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "with matching pod name",
            key: "/pods/non-existing".into(),
            pred: name_ne(),
            alternatives: vec![vec![]],
            rv: String::new(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current, with not matching pod name",
            key: key.clone(),
            pred: name_ne(),
            alternatives: vec![vec![]],
            rv: obj_rv.clone(),
            rv_match: Unset,
            expect_too_large: false,
        },
    ];
    for tt in cases {
        let opts = ListOptions {
            resource_version: tt.rv.clone(),
            resource_version_match: tt.rv_match,
            predicate: tt.pred,
            recursive: false,
            ..ListOptions::default()
        };
        let res = ctx.storage.get_list(&tt.key, &opts).await;
        if tt.expect_too_large {
            assert!(
                matches!(&res, Err(e) if is_too_large(e)),
                "[{}] {}: expecting resource version too high error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        let out = res.unwrap_or_else(|e| panic!("[{}] {}: GetList failed: {e}", ctx.name, tt.name));
        assert!(
            out.resource_version != 0,
            "[{}] {}: unset resourceVersion",
            ctx.name,
            tt.name
        );
        assert!(
            tt.alternatives.contains(&out.items),
            "[{}] {}: incorrect list pods {}, expected one of {}",
            ctx.name,
            tt.name,
            pretty(&out.items),
            pretty(&tt.alternatives)
        );
    }
}

/// `RunTestGetListRecursivePrefix`: recursive lists use `prefix/` semantics (`foo` does not
/// match `foobar`); a non-recursive list of a prefix returns nothing.
pub async fn run_test_get_list_recursive_prefix(ctx: &TestContext) {
    let (foo_key, foo_pod) = propagate(ctx, &pod("test-ns", "foo")).await;
    let (foobar_key, foobar) = propagate(ctx, &pod("test-ns", "foobar")).await;
    let (_, other_ns) = propagate(ctx, &pod("test-ns2", "baz")).await;
    let last_rev = rv_of(&other_ns);
    let cases: Vec<(&str, &str, bool, Vec<Value>)> = vec![
        ("NonRecursive on resource prefix doesn't return any objects", "/pods/", false, vec![]),
        (
            "Recursive on resource prefix returns all objects",
            "/pods/",
            true,
            vec![foo_pod.clone(), foobar.clone(), other_ns.clone()],
        ),
        ("NonRecursive on namespace prefix doesn't return any objects", "/pods/test-ns/", false, vec![]),
        (
            "Recursive on resource prefix returns objects in the namespace",
            "/pods/test-ns/",
            true,
            vec![foo_pod.clone(), foobar.clone()],
        ),
        (
            "NonRecursive on object key (prefix) returns object and no other objects with the same prefix",
            &foo_key,
            false,
            vec![foo_pod.clone()],
        ),
        ("Recursive on object key (prefix) doesn't return anything", &foo_key, true, vec![]),
        (
            "NonRecursive on object key (no-prefix) return object",
            &foobar_key,
            false,
            vec![foobar.clone()],
        ),
        ("Recursive on object key (no-prefix) doesn't return anything", &foobar_key, true, vec![]),
    ];
    let list_types = [
        ("Exact", last_rev.clone(), ResourceVersionMatch::Exact),
        ("Consistent", String::new(), ResourceVersionMatch::Unset),
        (
            "NotOlderThan",
            "0".to_string(),
            ResourceVersionMatch::NotOlderThan,
        ),
    ];
    for (list_type, rv, rv_match) in &list_types {
        for (name, key, recursive, expected) in &cases {
            let opts = ListOptions {
                resource_version: rv.clone(),
                resource_version_match: *rv_match,
                recursive: *recursive,
                ..ListOptions::default()
            };
            let out = ctx.storage.get_list(key, &opts).await.unwrap_or_else(|e| {
                panic!("[{}] {list_type}/{name}: GetList failed: {e}", ctx.name)
            });
            assert_items(
                ctx,
                &format!("{list_type}/{name}: incorrect list pods"),
                expected,
                &out.items,
            );
        }
    }
}

/// `RunTestGetListWithoutErrorAggregation`: a list aborts on the first object whose stored
/// value cannot be transformed, with an internal error naming its key.
pub async fn run_test_get_list_without_error_aggregation(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestGetListWithoutErrorAggregation") else {
        return;
    };
    let prefix = "/pods/ns/";
    let name_of_id = |id: usize| format!("foo-{id:06}");
    let n = 7;
    for i in 1..=n {
        create(ctx, &pod("ns", &name_of_id(i))).await;
    }
    let opts = list_opts("", everything(), true);
    let out = list(ctx, prefix, &opts).await;
    assert_eq!(out.items.len(), n, "[{}] items before corruption", ctx.name);

    // Corrupt the even-numbered objects.
    let _revert = transformer.update(|s| {
        s.inject = Some(Arc::new(|key: &str| {
            let id: usize = key
                .rsplit('/')
                .next()
                .and_then(|n| n.strip_prefix("foo-"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            id.is_multiple_of(2).then(|| "corrupt object".to_string())
        }))
    });
    let err = ctx
        .storage
        .get_list(prefix, &opts)
        .await
        .expect_err("Expected GetList to return error");
    // The error is a bare internal error for the first corrupt key (no aggregation).
    let msg = err.to_string();
    assert!(
        is_internal(&err)
            && msg.starts_with("unable to transform key \"")
            && msg.contains(&format!("{prefix}{}\"", name_of_id(2))),
        "[{}] expected an internal error `unable to transform key \".../pods/ns/foo-000002\"`, got {err:?}",
        ctx.name
    );
}

/// `RunTestListContinuation`: paging with limit 1 and continue tokens across namespaces; every
/// page carries the revision of the first.
pub async fn run_test_list_continuation(ctx: &TestContext) {
    let preset = [
        pod("first", "bar"),
        pod("second", "bar"),
        pod("second", "foo"),
    ];
    let mut stored = Vec::new();
    for p in &preset {
        stored.push(create(ctx, p).await);
    }
    let current_rv = rv_u64(&stored[2]);
    let pred = |limit: i64, cont: &str| pod_pred_paged(FieldSelector::default(), limit, cont);

    let out = list(ctx, "/pods/", &list_opts("", pred(1, ""), true)).await;
    let continue_from_second = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect first page",
        &[stored[0].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] first page RV",
        ctx.name
    );

    // no limit, should get two items
    let out = list(
        ctx,
        "/pods/",
        &list_opts("", pred(0, &continue_from_second), true),
    )
    .await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[1].clone(), stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] second page RV",
        ctx.name
    );

    // limit, should get two more pages
    let out = list(
        ctx,
        "/pods/",
        &list_opts("", pred(1, &continue_from_second), true),
    )
    .await;
    let continue_from_third = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[1].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] second page RV",
        ctx.name
    );

    let out = list(
        ctx,
        "/pods/",
        &list_opts("", pred(1, &continue_from_third), true),
    )
    .await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect third page",
        &[stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] third page RV",
        ctx.name
    );
}

/// `RunTestListPaginationRareObject`: a selector matching one object among 1000 with limit 1
/// finishes in one call without a continue token (the fetch size doubles).
pub async fn run_test_list_pagination_rare_object(ctx: &TestContext) {
    let pod_count = 1000;
    let mut pods = Vec::with_capacity(pod_count);
    for i in 0..pod_count {
        pods.push(create(ctx, &pod("", &format!("pod-{i}"))).await);
    }
    let opts = list_opts(
        "",
        pod_pred_paged(field_eq("metadata.name", "pod-999"), 1, ""),
        true,
    );
    let out = list(ctx, "/pods/", &opts).await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "Unexpected first page",
        &[pods[999].clone()],
        &out.items,
    );
}

/// `RunTestListContinuationWithFilter`: paging with a field selector; a page is filled from
/// several reads and the continue token points after the last read key.
pub async fn run_test_list_continuation_with_filter(ctx: &TestContext) {
    let preset = [
        pod("1", "foo"),
        pod("2", "bar"),
        pod("3", "foo"),
        pod("4", "foo"),
    ];
    let mut stored = Vec::new();
    for p in &preset {
        stored.push(create(ctx, p).await);
    }
    let current_rv = rv_u64(&stored[3]);
    let pred =
        |limit: i64, cont: &str| pod_pred_paged(field_ne("metadata.name", "bar"), limit, cont);
    let out = list(ctx, "/pods/", &list_opts("", pred(2, ""), true)).await;
    let cont = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect first page",
        &[stored[0].clone(), stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] first page RV",
        ctx.name
    );

    let out = list(ctx, "/pods/", &list_opts("", pred(2, &cont), true)).await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[3].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] second page RV",
        ctx.name
    );
}

/// `RunTestListInconsistentContinuation`: after a compaction, an old continue token gives 410
/// with the "inconsistent" message and a fresh `rv=-1` token that continues at the latest
/// revision. Needs a backend of its own ([`TestContext::compact`]).
pub async fn run_test_list_inconsistent_continuation(ctx: &TestContext) {
    let preset = [
        pod("first", "bar"),
        pod("second", "bar"),
        pod("second", "foo"),
    ];
    let mut stored = Vec::new();
    for p in &preset {
        stored.push(create(ctx, p).await);
    }
    let pred = |limit: i64, cont: &str| pod_pred_paged(FieldSelector::default(), limit, cont);
    let out = list(ctx, "/pods/", &list_opts("0", pred(1, ""), true)).await;
    let continue_from_second = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect first page",
        &[stored[0].clone()],
        &out.items,
    );

    // update /second/foo
    let new_pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "labels": {"state": "new"}}});
    stored[2] = ctx
        .storage
        .guaranteed_update(
            &pod_key(&preset[2]),
            false,
            &Preconditions::default(),
            &mut replace_with(new_pod.clone(), None),
            Some(new_pod),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] update failed: {e}", ctx.name));

    // compact to latest revision.
    let last_rv = rv_u64(&stored[2]);
    ctx.compact(last_rv).await;

    // The old continue token should have expired.
    let err = ctx
        .storage
        .get_list(
            "/pods/",
            &list_opts("0", pred(0, &continue_from_second), true),
        )
        .await
        .expect_err("unexpected no error");
    let inconsistent = match &err {
        StorageError::Expired {
            message,
            continue_token: Some(token),
        } if message.contains("The provided continue parameter is too old ")
            && !token.is_empty() =>
        {
            token.clone()
        }
        other => panic!(
            "[{}] expected 410 with a new continue token, got {other:?}",
            ctx.name
        ),
    };

    let out = list(ctx, "/pods/", &list_opts("0", pred(1, &inconsistent), true)).await;
    let continue_from_third = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[1].clone()],
        &out.items,
    );
    assert!(
        out.resource_version >= last_rv,
        "[{}] expected a resourceVersion no smaller than {last_rv}, got {}",
        ctx.name,
        out.resource_version
    );
    let resolved = out.resource_version;
    let out = list(
        ctx,
        "/pods/",
        &list_opts("0", pred(1, &continue_from_third), true),
    )
    .await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect third page",
        &[stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, resolved,
        "[{}] list resource version",
        ctx.name
    );
}

/// `RunTestListResourceVersionMatch`: objects are created while a list decodes its items (the
/// `reproducingTransformer`); an Exact list at the returned revision reproduces the same
/// result, and so does NotOlderThan followed by Exact.
pub async fn run_test_list_resource_version_match(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestListResourceVersionMatch") else {
        return;
    };
    let index = Arc::new(AtomicUsize::new(0));
    let next_pod = |i: usize| {
        with_labels(
            &pod("", &format!("pod-{i}")),
            &[("even", if i.is_multiple_of(2) { "true" } else { "false" })],
        )
    };
    // createObject: the next pod, created with the store itself.
    let storage = ctx.storage.clone();
    let idx = index.clone();
    let create_next = move || {
        let i = idx.fetch_add(1, Ordering::SeqCst) + 1;
        let p = next_pod(i);
        let storage = storage.clone();
        async move { storage.create(&pod_key(&p), p, 0).await.map(|_| ()) }
    };
    for _ in 0..5 {
        create_next()
            .await
            .unwrap_or_else(|e| panic!("[{}] failed to create object: {e}", ctx.name));
    }
    let hook_create = create_next.clone();
    let failed = Arc::new(AtomicBool::new(false));
    let hook_failed = failed.clone();
    let _revert = transformer.update(move |s| {
        s.on_read = Some(Arc::new(move || {
            // TransformFromStorage is synchronous: run the create to completion on this
            // (multi-threaded) runtime before the read goes on.
            let fut = hook_create();
            let r = tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(fut));
            if r.is_err() {
                hook_failed.store(true, Ordering::SeqCst);
            }
        }));
    });
    let predicate = SelectionPredicate {
        label: label_eq("even", "true"),
        limit: 4,
        ..SelectionPredicate::default()
    };
    let result1 = list(ctx, "/pods/", &list_opts("", predicate.clone(), true)).await;
    // List objects from the returned resource version.
    let mut opts = ListOptions {
        predicate: predicate.clone(),
        resource_version: result1.resource_version.to_string(),
        resource_version_match: ResourceVersionMatch::Exact,
        recursive: true,
        ..ListOptions::default()
    };
    let result2 = list(ctx, "/pods/", &opts).await;
    assert!(
        result1 == result2,
        "[{}] incorrect lists: {result1:?} vs {result2:?}",
        ctx.name
    );
    // Now also verify ResourceVersionMatchNotOlderThan.
    opts.resource_version_match = ResourceVersionMatch::NotOlderThan;
    let result3 = list(ctx, "/pods/", &opts).await;
    opts.resource_version = result3.resource_version.to_string();
    opts.resource_version_match = ResourceVersionMatch::Exact;
    let result4 = list(ctx, "/pods/", &opts).await;
    assert!(
        result3 == result4,
        "[{}] incorrect lists: {result3:?} vs {result4:?}",
        ctx.name
    );
    assert!(
        !failed.load(Ordering::SeqCst),
        "[{}] a create during a list failed",
        ctx.name
    );
    assert!(
        index.load(Ordering::SeqCst) > 5,
        "[{}] no object was created during the lists",
        ctx.name
    );
}

/// `RunTestListPaging`: paging with limit 1 over 4 objects sees exactly those 4 even when a 5th
/// is created in the middle (the continue token pins the revision).
pub async fn run_test_list_paging(ctx: &TestContext) {
    for i in 0..4 {
        create(ctx, &pod("paging", &format!("test-{i}"))).await;
    }
    let mut names = Vec::new();
    let mut opts = list_opts(
        "",
        SelectionPredicate {
            limit: 1,
            ..SelectionPredicate::default()
        },
        true,
    );
    let mut calls = 0;
    loop {
        calls += 1;
        let out = list(ctx, "/pods/", &opts).await;
        names.extend(out.items.iter().map(name_of));
        let Some(cont) = out.continue_token else {
            break;
        };
        if calls == 2 {
            create(ctx, &pod("paging", "test-5")).await;
        }
        opts.predicate.continue_token = cont;
        assert!(calls < 10, "[{}] too many list calls", ctx.name);
    }
    assert_eq!(calls, 4, "[{}] unexpected list invocations", ctx.name);
    assert_eq!(
        names,
        vec!["test-0", "test-1", "test-2", "test-3"],
        "[{}] unexpected items",
        ctx.name
    );
}

/// `RunTestNamespaceScopedList`: list scope with and without a request namespace, with
/// `metadata.name`, `metadata.namespace` and `spec.nodeName` field selectors.
pub async fn run_test_namespace_scoped_list(ctx: &TestContext) {
    type Pods = fn(&str) -> Vec<Value>;
    type Sel = fn(&str) -> FieldSelector;
    struct Case {
        name: &'static str,
        requested_namespace: &'static str,
        field_selector: Sel,
        input: Pods,
        expect: Pods,
    }
    fn ns_eq(ns: &str) -> FieldSelector {
        field_eq("metadata.namespace", ns)
    }
    let cases: Vec<Case> = vec![
        Case {
            name: "request without namespace, without field selector",
            requested_namespace: "",
            field_selector: |_| FieldSelector::default(),
            input: |_| vec![pod("ns1", "foo1"), pod("ns2", "foo2")],
            expect: |_| vec![pod("ns1", "foo1"), pod("ns2", "foo2")],
        },
        Case {
            name: "request without namespace, field selector with metadata.namespace",
            requested_namespace: "",
            field_selector: |ns| ns_eq(&format!("{ns}ns1")),
            input: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns2"), "foo1")],
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request without namespace, field selector with spec.nodename",
            requested_namespace: "",
            field_selector: |_| field_eq("spec.nodeName", "bar1"),
            input: |ns| {
                vec![
                    pod_assigned(&format!("{ns}ns1"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo1", "bar1")],
        },
        Case {
            name: "request without namespace, field selector with spec.nodename to filter out",
            requested_namespace: "",
            field_selector: |_| field_ne("spec.nodeName", "bar1"),
            input: |ns| {
                vec![
                    pod_assigned(&format!("{ns}ns1"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns2"), "foo2", "bar2")],
        },
        Case {
            name: "request with namespace, without field selector",
            requested_namespace: "ns1",
            field_selector: |_| FieldSelector::default(),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns1"), "foo2")],
        },
        Case {
            name: "request with namespace, field selector with matched metadata.namespace",
            requested_namespace: "ns1",
            field_selector: |ns| ns_eq(&format!("{ns}ns1")),
            input: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns2"), "foo1")],
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request with namespace, field selector with non-matched metadata.namespace",
            requested_namespace: "ns1",
            field_selector: |ns| ns_eq(&format!("{ns}ns2")),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_updated(&format!("{ns}ns1"), "foo2"),
                    pod_updated(&format!("{ns}ns2"), "foo2"),
                ]
            },
            expect: |_| vec![],
        },
        Case {
            name: "request with namespace, field selector with spec.nodename",
            requested_namespace: "ns1",
            field_selector: |_| field_eq("spec.nodeName", "bar2"),
            input: |ns| {
                vec![
                    pod_assigned(&format!("{ns}ns1"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo1", "bar2"),
                    pod_assigned(&format!("{ns}ns1"), "foo2", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo2", "bar2")],
        },
        Case {
            name: "request with namespace, field selector with spec.nodename to filter out",
            requested_namespace: "ns2",
            field_selector: |_| field_ne("spec.nodeName", "bar1"),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_assigned(&format!("{ns}ns2"), "foo3", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
            expect: |ns| {
                vec![
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
        },
        Case {
            name: "request without namespace, field selector with metadata.name",
            requested_namespace: "",
            field_selector: |_| field_eq("metadata.name", "foo1"),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns2"), "foo1")],
        },
        Case {
            name: "request without namespace, field selector with metadata.name and metadata.namespace",
            requested_namespace: "",
            field_selector: |ns| {
                fields(vec![
                    freq("metadata.name", true, "foo1"),
                    freq("metadata.namespace", true, &format!("{ns}ns1")),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request without namespace, field selector with metadata.name and spec.nodeName",
            requested_namespace: "",
            field_selector: |_| {
                fields(vec![
                    freq("metadata.name", true, "foo1"),
                    freq("spec.nodeName", true, "bar1"),
                ])
            },
            input: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo1", "bar1")],
            expect: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo1", "bar1")],
        },
        Case {
            name: "request without namespace, field selector with metadata.name, and with spec.nodeName to filter out watch",
            requested_namespace: "",
            field_selector: |_| {
                fields(vec![
                    freq("spec.nodeName", false, "bar1"),
                    freq("metadata.name", true, "foo1"),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod_assigned(&format!("{ns}ns2"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar1"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar2"),
                    pod_assigned(&format!("{ns}ns3"), "foo2", "bar2"),
                ]
            },
            expect: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar2"),
                ]
            },
        },
        Case {
            name: "request with namespace, with field selector metadata.name",
            requested_namespace: "ns1",
            field_selector: |_| field_eq("metadata.name", "foo1"),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request with namespace, with field selector metadata.name and metadata.namespace",
            requested_namespace: "ns1",
            field_selector: |ns| {
                fields(vec![
                    freq("metadata.name", true, "foo1"),
                    freq("metadata.namespace", true, &format!("{ns}ns1")),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request with namespace, with field selector metadata.name, metadata.namespace and spec.nodename",
            requested_namespace: "ns2",
            field_selector: |ns| {
                fields(vec![
                    freq("metadata.name", true, "foo2"),
                    freq("metadata.namespace", true, &format!("{ns}ns2")),
                    freq("spec.nodeName", true, "bar1"),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar1"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns3"), "foo2", "bar1"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns2"), "foo2", "bar1")],
        },
        Case {
            name: "request with namespace, with field selector metadata.name, metadata.namespace, and with spec.nodename to filter out",
            requested_namespace: "ns2",
            field_selector: |ns| {
                fields(vec![
                    freq("spec.nodeName", false, "bar2"),
                    freq("metadata.name", true, "foo1"),
                    freq("metadata.namespace", true, &format!("{ns}ns2")),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod_assigned(&format!("{ns}ns2"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns2"), "foo1", "bar1")],
        },
    ];
    for (i, tt) in cases.iter().enumerate() {
        let namespace = format!("t{i}-");
        let mut keys = std::collections::BTreeSet::new();
        for p in (tt.input)(&namespace) {
            keys.insert(pod_key(&p));
            create(ctx, &p).await;
        }
        let mut path = "/pods/".to_string();
        if !tt.requested_namespace.is_empty() {
            path.push_str(&format!("{namespace}{}", tt.requested_namespace));
        }
        let out = list(
            ctx,
            &path,
            &list_opts("", pod_pred((tt.field_selector)(&namespace)), true),
        )
        .await;
        let got: Vec<Value> = out
            .items
            .iter()
            .filter(|p| keys.contains(&pod_key(p)))
            .map(without_rv)
            .collect();
        assert_items(
            ctx,
            &format!("{}: incorrect list pods", tt.name),
            &(tt.expect)(&namespace),
            &got,
        );
    }
}

/// `RunTestCompactRevision`: `compact_revision()` reports a compaction, and an Exact list at a
/// revision below it fails with "too old". Needs a backend of its own.
pub async fn run_test_compact_revision(ctx: &TestContext) {
    let out = list(ctx, "/pods/", &list_opts("", everything(), true)).await;
    let current_rv = out.resource_version;
    let compacted = ctx.storage.compact_revision();
    assert!(
        compacted < current_rv,
        "[{}] Expected current RV not be compacted, current: {current_rv}, compacted: {compacted}",
        ctx.name
    );
    let exact = ListOptions {
        resource_version: current_rv.to_string(),
        resource_version_match: ResourceVersionMatch::Exact,
        recursive: true,
        ..ListOptions::default()
    };
    list(ctx, "/pods/", &exact).await;
    ctx.increase_rv().await;
    let expect_compacted = current_rv + 1;
    ctx.compact(expect_compacted).await;
    match ctx.storage.get_list("/pods/", &exact).await {
        Err(e)
            if e.to_string()
                .contains("The resourceVersion for the provided list is too old") => {}
        other => panic!(
            "[{}] Expected \"The resourceVersion for the provided list is too old\", got {other:?}",
            ctx.name
        ),
    }
    assert_eq!(
        ctx.storage.compact_revision(),
        expect_compacted,
        "[{}] CompactRevision()",
        ctx.name
    );
}

/// `RunTestStats`: the object count follows creates, updates and deletes (the size estimate is
/// not part of this API).
pub async fn run_test_stats(ctx: &TestContext) {
    async fn assert_count(ctx: &TestContext, want: i64) {
        // Execute consistent LIST to refresh the state of a cache.
        list(ctx, "/pods/", &list_opts("", everything(), true)).await;
        let got = ctx
            .storage
            .count("/pods")
            .await
            .unwrap_or_else(|e| panic!("[{}] Stats failed: {e}", ctx.name));
        assert_eq!(got, want, "[{}] ObjectCount", ctx.name);
    }
    assert_count(ctx, 0).await;
    let foo_pod = pod("", "foo");
    let foo_key = pod_key(&foo_pod);
    create(ctx, &foo_pod).await;
    assert_count(ctx, 1).await;
    let bar = pod("", "bar");
    let bar_key = pod_key(&bar);
    create(ctx, &bar).await;
    assert_count(ctx, 2).await;
    update_with(ctx, &bar_key, |mut p| {
        set_labels(&mut p, &[("foo", "bar")]);
        Ok(p)
    })
    .await;
    assert_count(ctx, 2).await;
    delete_plain(&*ctx.storage, &foo_key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_count(ctx, 1).await;
    assert!(
        delete_plain(&*ctx.storage, &foo_key, None).await.is_err(),
        "[{}] Delete expected to fail",
        ctx.name
    );
    assert_count(ctx, 1).await;
    delete_plain(&*ctx.storage, &bar_key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_count(ctx, 0).await;
}

/// `RunTestKeySchema`: key validation for every verb ("empty key", "invalid key" for `.` and
/// `..`, "lacks resource prefix"), and which forms are accepted recursively or not. All
/// mismatches are reported together.
pub async fn run_test_key_schema(ctx: &TestContext) {
    let s = &ctx.storage;
    let empty_pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}});
    let mut problems: Vec<String> = Vec::new();
    fn check<T: std::fmt::Debug>(
        problems: &mut Vec<String>,
        call: String,
        res: Result<T>,
        want_err: Option<&str>,
    ) {
        match (want_err, &res) {
            (None, Ok(_)) => {}
            (Some(want), Err(e)) if e.to_string().contains(want) => {}
            (None, Err(e)) => problems.push(format!("{call}: expected no error, got {e:?}")),
            (Some(want), Ok(v)) => problems.push(format!(
                "{call}: expected an error containing {want:?}, got Ok({v:?})"
            )),
            (Some(want), Err(e)) => problems.push(format!(
                "{call}: expected an error containing {want:?}, got {e:?}"
            )),
        }
    }
    const EMPTY: Option<&str> = Some("empty key");
    const INVALID: Option<&str> = Some("invalid key");
    const LACKS: Option<&str> = Some("lacks resource prefix");

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo/", LACKS),
        ("/pods/", None),
        ("/pods/name", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = s.create(key, empty_pod.clone(), 0).await;
        check(&mut problems, format!("Create({key:?})"), r, want);
    }

    let rec = list_opts("", everything(), true);
    let non_rec = list_opts("", everything(), false);
    for (key, recursive, want) in [
        ("", true, EMPTY),
        ("/", true, EMPTY),
        (".", true, INVALID),
        ("..", true, INVALID),
        ("pods", true, LACKS),
        ("/pods.apps", true, LACKS),
        ("/foo/", true, LACKS),
        ("/pods", false, LACKS),
        ("/pods", true, None),
        ("/pods/", true, None),
        ("/pods/namespace", true, None),
        ("/pods/namespace/name", true, None),
    ] {
        let opts = if recursive { &rec } else { &non_rec };
        let r = s.get_list(key, opts).await.map(|_| ());
        check(
            &mut problems,
            format!("GetList({key:?}, recursive={recursive})"),
            r,
            want,
        );
    }

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo/", LACKS),
        ("/pods/", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = s.get(key, &GetOptions::default()).await.map(|_| ());
        check(&mut problems, format!("Get({key:?})"), r, want);
    }

    for (key, recursive, want) in [
        ("", true, EMPTY),
        ("/", true, EMPTY),
        (".", true, INVALID),
        ("..", true, INVALID),
        ("pods", true, LACKS),
        ("/pods.apps", true, LACKS),
        ("/foo/", true, LACKS),
        ("/pods", false, LACKS),
        ("/pods", true, None),
        ("/pods/namespace", true, None),
        ("/pods/namespace/name", true, None),
    ] {
        let opts = if recursive {
            rec.clone()
        } else {
            non_rec.clone()
        };
        // The watch stops when the receiver is dropped.
        let r = s.watch(key, opts).await.map(|_| ());
        check(
            &mut problems,
            format!("Watch({key:?}, recursive={recursive})"),
            r,
            want,
        );
    }

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo/", LACKS),
        ("/pods/", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = s
            .guaranteed_update(
                key,
                false,
                &Preconditions::default(),
                &mut replace_with(empty_pod.clone(), None),
                None,
            )
            .await
            .map(|_| ());
        check(&mut problems, format!("GuaranteedUpdate({key:?})"), r, want);
    }

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo", LACKS),
        ("/pods/", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = delete_plain(&**s, key, None).await.map(|_| ());
        check(&mut problems, format!("Delete({key:?})"), r, want);
    }
    assert!(
        problems.is_empty(),
        "[{}] RunTestKeySchema: {} mismatch(es):\n  - {}",
        ctx.name,
        problems.len(),
        problems.join("\n  - ")
    );
}

// ---------------------------------------------------------------------------------------------
// store_tests.go: guaranteed updates and transformers.
// ---------------------------------------------------------------------------------------------

/// `RunTestGuaranteedUpdate`: a missing key with `ignore_not_found` false and true, an existing
/// key, identical data (no write, no new resourceVersion, also when only `selfLink` differs),
/// stale data (written anyway), UID preconditions.
pub async fn run_test_guaranteed_update(ctx: &TestContext) {
    let mut input = pod("test-ns", "foo");
    set_uid(&mut input, "A");
    let key = pod_key(&input);
    struct Case {
        name: &'static str,
        key: String,
        ignore_not_found: bool,
        precondition: Option<&'static str>,
        expect_not_found: bool,
        expect_invalid_obj: bool,
        expect_no_update: bool,
        transform_stale: bool,
        has_self_link: bool,
    }
    let base = |name, key: &str| Case {
        name,
        key: key.to_string(),
        ignore_not_found: false,
        precondition: None,
        expect_not_found: false,
        expect_invalid_obj: false,
        expect_no_update: false,
        transform_stale: false,
        has_self_link: false,
    };
    let cases = vec![
        Case {
            expect_not_found: true,
            ..base(
                "non-existing key, ignoreNotFound=false",
                "/pods/non-existing",
            )
        },
        Case {
            ignore_not_found: true,
            ..base(
                "non-existing key, ignoreNotFound=true",
                "/pods/non-existing",
            )
        },
        base("existing key", &key),
        Case {
            expect_no_update: true,
            ..base("same data", &key)
        },
        Case {
            expect_no_update: true,
            has_self_link: true,
            ..base("same data, a selfLink", &key)
        },
        Case {
            transform_stale: true,
            ..base("same data, stale", &key)
        },
        Case {
            precondition: Some("A"),
            expect_no_update: true,
            ..base("UID match", &key)
        },
        Case {
            precondition: Some("B"),
            expect_invalid_obj: true,
            expect_no_update: true,
            ..base("UID mismatch", &key)
        },
    ];
    for (i, tt) in cases.into_iter().enumerate() {
        let (key, store_obj) = propagate(ctx, &input).await;
        let annotations: Vec<(String, String)> = if tt.expect_no_update {
            vec![]
        } else {
            vec![("version".into(), i.to_string())]
        };
        let _revert = if tt.transform_stale {
            match ctx.transformer(&format!("RunTestGuaranteedUpdate/{}", tt.name)) {
                Some(t) => Some(t.update(|s| s.stale = true)),
                None => continue,
            }
        } else {
            None
        };
        let version = rv_of(&store_obj);
        let zero_violation = Arc::new(AtomicBool::new(false));
        let zv = zero_violation.clone();
        let expect_zero = tt.expect_not_found && tt.ignore_not_found;
        let (so, ann, self_link) = (store_obj.clone(), annotations.clone(), tt.has_self_link);
        let mut update = simple_update(move |current| {
            if expect_zero && !current.is_null() {
                zv.store(true, Ordering::SeqCst);
            }
            let mut p = so.clone();
            if self_link {
                set_meta(&mut p, "selfLink", json!("testlink"));
            }
            let pairs: Vec<(&str, &str)> =
                ann.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            set_annotations(&mut p, &pairs);
            Ok(p)
        });
        let pre = Preconditions {
            uid: tt.precondition.map(str::to_string),
            resource_version: None,
        };
        let res = ctx
            .storage
            .guaranteed_update(&tt.key, tt.ignore_not_found, &pre, &mut update, None)
            .await;
        assert!(
            !zero_violation.load(Ordering::SeqCst),
            "[{}] {}: expecting a zero value for a missing object",
            ctx.name,
            tt.name
        );
        if tt.expect_not_found {
            assert!(
                matches!(&res, Err(e) if e.is_not_found()),
                "[{}] {}: expecting not found error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        if tt.expect_invalid_obj {
            assert!(
                matches!(&res, Err(e) if e.is_invalid_obj()),
                "[{}] {}: expecting invalid UID error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        let out = res
            .unwrap_or_else(|e| panic!("[{}] {}: GuaranteedUpdate failed: {e}", ctx.name, tt.name));
        let want_annotations: Option<Value> = if annotations.is_empty() {
            None
        } else {
            Some(Value::Object(
                annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ))
        };
        assert_eq!(
            out.pointer("/metadata/annotations").cloned(),
            want_annotations,
            "[{}] {}: pod annotations",
            ctx.name,
            tt.name
        );
        assert!(
            out.pointer("/metadata/selfLink").is_none(),
            "[{}] {}: selfLink should not be set",
            ctx.name,
            tt.name
        );
        // the stored data matches expectations
        ctx.validate_key(&key).await;
        if tt.expect_no_update {
            assert_eq!(
                version,
                rv_of(&out),
                "[{}] {}: expect no version change",
                ctx.name,
                tt.name
            );
        } else {
            assert_ne!(
                version,
                rv_of(&out),
                "[{}] {}: expect version change",
                ctx.name,
                tt.name
            );
        }
    }
}

/// `RunTestGuaranteedUpdateWithTTL`: an update with a TTL makes the object expire; a watch
/// sees DELETED.
pub async fn run_test_guaranteed_update_with_ttl(ctx: &TestContext) {
    let input = pod("test-ns", "foo");
    let key = pod_key(&input);
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input, Some(1)),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Create failed: {e}", ctx.name));
    let mut w = watch(ctx, &key, list_opts(&rv_of(&out), everything(), false)).await;
    expect_event_type(ctx, &mut w, "DELETED", TTL_TIMEOUT).await;
}

/// `RunTestGuaranteedUpdateChecksStoredData`: the update compares stored bytes, not decoded
/// objects: non-canonical stored bytes are rewritten, canonical ones are not, stale ones are.
pub async fn run_test_guaranteed_update_checks_stored_data(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestGuaranteedUpdateChecksStoredData") else {
        return;
    };
    let mut input = pod("test-ns", "foo");
    let key = pod_key(&input);
    // Serialize input with data that a write would normalize: leading whitespace.
    let revert = transformer.update(|s| s.prefix.push(b' '));
    let (_, initial) = propagate(ctx, &input).await;
    revert.revert();

    // This update writes the canonical value because the new serialization differs.
    set_rv(&mut input, &rv_of(&initial));
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input.clone(), None),
            Some(input.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&out),
        rv_of(&initial),
        "[{}] guaranteed update should have updated the serialized data",
        ctx.name
    );
    let last_version = rv_of(&out);

    // This update does not write because the input matches the stored data.
    let input = out.clone();
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input.clone(), None),
            Some(input.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    assert_eq!(
        rv_of(&out),
        last_version,
        "[{}] guaranteed update should have short-circuited the write",
        ctx.name
    );

    // This update writes because the transformer reports stale data.
    let _revert = transformer.update(|s| s.stale = true);
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input.clone(), None),
            Some(input),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&out),
        last_version,
        "[{}] guaranteed update should have written when the transformer reported stale",
        ctx.name
    );
}

/// `RunTestGuaranteedUpdateWithConflict`: two concurrent updates both apply; the second one
/// retries its update function after the conflict.
pub async fn run_test_guaranteed_update_with_conflict(ctx: &TestContext) {
    let (key, _) = propagate(ctx, &pod("test-ns", "foo")).await;
    let first_to_finish = Arc::new(tokio::sync::Notify::new());
    let second_to_enter = Arc::new(tokio::sync::Notify::new());

    let storage = ctx.storage.clone();
    let (k, enter) = (key.clone(), second_to_enter.clone());
    let finish = first_to_finish.clone();
    let first = tokio::spawn(async move {
        let mut update = move |mut obj: Value,
                               _meta: ResponseMeta|
              -> BoxFuture<'static, Result<UpdateOutcome>> {
            let enter = enter.clone();
            Box::pin(async move {
                set_meta(&mut obj, "name", json!("foo-1"));
                enter.notified().await;
                Ok(UpdateOutcome {
                    object: obj,
                    ttl: None,
                })
            })
        };
        let r = storage
            .guaranteed_update(&k, false, &Preconditions::default(), &mut update, None)
            .await;
        finish.notify_one();
        r
    });

    let update_count = Arc::new(AtomicUsize::new(0));
    let uc = update_count.clone();
    let (enter, finish) = (second_to_enter.clone(), first_to_finish.clone());
    let mut update =
        move |mut obj: Value, _meta: ResponseMeta| -> BoxFuture<'static, Result<UpdateOutcome>> {
            let n = uc.fetch_add(1, Ordering::SeqCst);
            let (enter, finish) = (enter.clone(), finish.clone());
            Box::pin(async move {
                if n == 0 {
                    enter.notify_one();
                    finish.notified().await;
                }
                set_meta(&mut obj, "name", json!("foo-2"));
                Ok(UpdateOutcome {
                    object: obj,
                    ttl: None,
                })
            })
        };
    ctx.storage
        .guaranteed_update(&key, false, &Preconditions::default(), &mut update, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Second GuaranteedUpdate error: {e}", ctx.name));
    first
        .await
        .expect("first update task")
        .unwrap_or_else(|e| panic!("[{}] First GuaranteedUpdate error: {e}", ctx.name));
    assert_eq!(
        update_count.load(Ordering::SeqCst),
        2,
        "[{}] Should have conflict and called update func twice",
        ctx.name
    );
}

/// `RunTestGuaranteedUpdateWithSuggestionAndConflict`: a stale cached object leads to a live
/// read and a second update call; an error on a fresh cached object is returned without a
/// (useless) retry.
pub async fn run_test_guaranteed_update_with_suggestion_and_conflict(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "foo")).await;
    // First, update without a suggestion so the original is outdated.
    update_with(ctx, &key, |mut p| {
        set_meta(&mut p, "generation", json!(2));
        Ok(p)
    })
    .await;
    let generation = |p: &Value| {
        p.pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };

    // Second, update with the outdated original as the suggestion: a conflict on it, then a
    // second call with the live object.
    let saw_conflict = Arc::new(AtomicBool::new(false));
    let second_conflict = Arc::new(AtomicBool::new(false));
    let (sc, sc2) = (saw_conflict.clone(), second_conflict.clone());
    let mut update = simple_update(move |mut p| {
        if generation(&p) != 2 {
            if sc.swap(true, Ordering::SeqCst) {
                sc2.store(true, Ordering::SeqCst);
            }
            // simulated stale object: a conflict
            return Err(test_error(
                "Operation cannot be fulfilled on pods \"name\": foo",
            ));
        }
        set_meta(&mut p, "generation", json!(3));
        Ok(p)
    });
    let updated2 = ctx
        .storage
        .guaranteed_update(
            &key,
            false,
            &Preconditions::default(),
            &mut update,
            Some(original),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] unexpected error: {e}", ctx.name));
    assert!(
        !second_conflict.load(Ordering::SeqCst),
        "[{}] unexpected second conflict",
        ctx.name
    );
    assert_eq!(generation(&updated2), 3, "[{}] pod generation", ctx.name);

    // Third, update with the current object as the suggestion: an error, and no second call
    // since the live read shows the suggestion was current.
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let mut update = simple_update(move |_p| {
        a.fetch_add(1, Ordering::SeqCst);
        Err(test_error("validation or admission error"))
    });
    let res = ctx
        .storage
        .guaranteed_update(
            &key,
            false,
            &Preconditions::default(),
            &mut update,
            Some(updated2),
        )
        .await;
    assert!(res.is_err(), "[{}] expected error, got none", ctx.name);
    // Implementations may ignore the suggestion, in which case two attempts are possible.
    assert!(
        attempts.load(Ordering::SeqCst) <= 2,
        "[{}] update function should have been called at most twice, called {}",
        ctx.name,
        attempts.load(Ordering::SeqCst)
    );
}

/// `RunTestTransformationFailure`: data that cannot be transformed makes List, Get,
/// GuaranteedUpdate and Delete fail with an internal error.
pub async fn run_test_transformation_failure(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestTransformationFailure") else {
        return;
    };
    let mut bar_first = pod("first", "bar");
    bar_first["spec"] = deep_equal_safe_pod_spec();
    let mut baz_second = pod("second", "baz");
    baz_second["spec"] = deep_equal_safe_pod_spec();
    create(ctx, &bar_first).await;
    // create a second resource with an invalid prefix
    let revert = transformer.update(|s| {
        *s = TransformerState {
            prefix: b"otherprefix!".to_vec(),
            ..TransformerState::default()
        }
    });
    create(ctx, &baz_second).await;
    revert.revert();
    let baz_key = pod_key(&baz_second);

    // List should fail
    let r = ctx
        .storage
        .get_list("/pods/", &list_opts("", everything(), true))
        .await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] List: unexpected result {r:?}",
        ctx.name
    );
    // Get should fail
    let r = get(ctx, &baz_key).await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] Get: unexpected result {r:?}",
        ctx.name
    );
    // GuaranteedUpdate without suggestion should return an error
    let identity = || simple_update(Ok);
    let r = ctx
        .storage
        .guaranteed_update(
            &baz_key,
            false,
            &Preconditions::default(),
            &mut identity(),
            None,
        )
        .await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] GuaranteedUpdate: unexpected result {r:?}",
        ctx.name
    );
    // GuaranteedUpdate with suggestion should return an error if we don't change the object
    let r = ctx
        .storage
        .guaranteed_update(
            &baz_key,
            false,
            &Preconditions::default(),
            &mut identity(),
            Some(baz_second.clone()),
        )
        .await;
    assert!(
        r.is_err(),
        "[{}] GuaranteedUpdate with suggestion: unexpected result {r:?}",
        ctx.name
    );
    // Delete fails with internal error.
    let r = delete_plain(&*ctx.storage, &baz_key, None).await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] Delete: unexpected result {r:?}",
        ctx.name
    );
    let r = get(ctx, &baz_key).await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] Get: unexpected result {r:?}",
        ctx.name
    );
}

// ---------------------------------------------------------------------------------------------
// watcher_tests.go
// ---------------------------------------------------------------------------------------------

/// One step of a watch scenario (`testWatchStruct`): write `obj` (or delete, for `None`) and
/// maybe expect an event.
struct WatchStep {
    obj: Option<Value>,
    expect_event: bool,
    event_type: &'static str,
}

fn step(obj: Value, expect_event: bool, event_type: &'static str) -> WatchStep {
    WatchStep {
        obj: Some(obj),
        expect_event,
        event_type,
    }
}

/// `RunTestWatch`: recursive and non-recursive watches see ADDED on first sight, MODIFIED on
/// update, DELETED when an update makes the object stop matching and ADDED when it starts to;
/// events for other keys are not delivered.
pub async fn run_test_watch(ctx: &TestContext) {
    test_watch(ctx, false).await;
    test_watch(ctx, true).await;
}

async fn test_watch(ctx: &TestContext, recursive: bool) {
    let base_pod = pod("", "foo");
    let base_pod_assigned = pod_assigned("", "foo", "bar");
    let selected = |p: &Value| with_labels(p, &[("select", "true")]);
    let node_pred = |equals: bool| SelectionPredicate {
        field: fields(vec![freq("spec.nodeName", equals, "bar")]),
        get_attrs: Some(default_attrs(vec!["spec.nodeName".into()])),
        ..SelectionPredicate::default()
    };
    let cases: Vec<(&str, String, SelectionPredicate, Vec<WatchStep>)> = vec![
        (
            "create a key",
            format!("test-ns-1-{recursive}"),
            everything(),
            vec![step(base_pod.clone(), true, "ADDED")],
        ),
        (
            "key updated to match predicate",
            format!("test-ns-2-{recursive}"),
            node_pred(true),
            vec![
                step(base_pod.clone(), false, ""),
                step(base_pod_assigned.clone(), true, "ADDED"),
            ],
        ),
        (
            "update",
            format!("test-ns-3-{recursive}"),
            everything(),
            vec![
                step(base_pod.clone(), true, "ADDED"),
                step(base_pod_assigned.clone(), true, "MODIFIED"),
            ],
        ),
        (
            "delete because of being filtered",
            format!("test-ns-4-{recursive}"),
            node_pred(false),
            vec![
                step(base_pod.clone(), true, "ADDED"),
                step(base_pod_assigned.clone(), true, "DELETED"),
            ],
        ),
        (
            "filtering",
            format!("test-ns-5-{recursive}"),
            SelectionPredicate {
                label: label_eq("select", "true"),
                ..SelectionPredicate::default()
            },
            vec![
                step(selected(&base_pod), true, "ADDED"),
                step(base_pod.clone(), true, "DELETED"),
                step(selected(&base_pod), true, "ADDED"),
                step(selected(&base_pod_assigned), true, "MODIFIED"),
                WatchStep {
                    obj: None,
                    expect_event: true,
                    event_type: "DELETED",
                },
            ],
        ),
    ];
    for (name, namespace, pred, steps) in cases {
        let mut watch_key = format!("/pods/{namespace}");
        let key = format!("{watch_key}/foo");
        if !recursive {
            watch_key = key.clone();
        }
        // Get the current RV from which we can start watching.
        let out = list(ctx, &watch_key, &list_opts("", pred.clone(), recursive)).await;
        let mut w = watch(
            ctx,
            &watch_key,
            list_opts(&out.resource_version.to_string(), pred.clone(), recursive),
        )
        .await;
        // Create a pod in a different namespace first to ensure that its event is not
        // propagated.
        let bad_ns = format!("{namespace}-bad");
        let mut bad = base_pod.clone();
        set_meta(&mut bad, "namespace", json!(bad_ns));
        upsert(ctx, &format!("/pods/{bad_ns}/foo"), &bad).await;

        let mut prev: Option<Value> = None;
        for s in steps {
            let out = match &s.obj {
                Some(obj) => {
                    let mut obj = obj.clone();
                    set_meta(&mut obj, "namespace", json!(namespace));
                    upsert(ctx, &key, &obj).await
                }
                None => delete_plain(&*ctx.storage, &key, None)
                    .await
                    .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name)),
            };
            if s.expect_event {
                let expected = if s.event_type == "DELETED" {
                    with_rv(prev.as_ref().expect("a previous object"), &rv_of(&out))
                } else {
                    out.clone()
                };
                expect_event(ctx, &mut w, s.event_type, &expected).await;
            }
            prev = Some(out);
        }
        expect_no_more_events(ctx, &mut w, false).await;
        let _ = name;
    }
}

/// `RunTestWatchFromZero`: a watch from "0" starts with ADDED for the current state, also after
/// a compaction; a watch from a compacted revision fails with an ERROR event (410). Needs a
/// backend of its own ([`TestContext::compact`]).
pub async fn run_test_watch_from_zero(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts("0", everything(), false)).await;
    expect_event(ctx, &mut w, "ADDED", &stored).await;

    // Update
    let mut annotated = pod("test-ns", "foo");
    set_annotations(&mut annotated, &[("a", "1")]);
    let out = upsert(ctx, &key, &annotated).await;
    expect_event(ctx, &mut w, "MODIFIED", &out).await;
    drop(w);

    // Make sure when we watch from 0 we receive an ADDED event
    let mut w = watch(ctx, &key, list_opts("0", everything(), false)).await;
    expect_event(ctx, &mut w, "ADDED", &out).await;
    drop(w);

    // Update again
    let new_out = upsert(ctx, &key, &pod("test-ns", "foo")).await;
    // Compact previous versions
    ctx.compact(rv_u64(&new_out)).await;

    // Make sure we can still watch from 0 and receive an ADDED event
    let mut w = watch(ctx, &key, list_opts("0", everything(), false)).await;
    expect_event(ctx, &mut w, "ADDED", &new_out).await;

    // Make sure we can't watch from older resource versions anymore and get a "Gone" error.
    let mut too_old = watch(ctx, &key, list_opts(&rv_of(&out), everything(), false)).await;
    match next_event(ctx, &mut too_old, "watch from a compacted revision").await {
        WatchEvent::Error(StorageError::Expired { .. }) => {}
        // etcd3 currently may also answer with an internal error (the event has no PrevKv).
        WatchEvent::Error(StorageError::Internal(_)) => {}
        other => panic!(
            "[{}] expected an ERROR event with 410 Expired, got {}",
            ctx.name,
            describe(&other)
        ),
    }
}

/// `RunTestDeleteTriggerWatch`: a delete produces DELETED.
pub async fn run_test_delete_trigger_watch(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts(&rv_of(&stored), everything(), false)).await;
    delete_plain(&*ctx.storage, &key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    expect_event_type(ctx, &mut w, "DELETED", EVENT_TIMEOUT).await;
}

/// `RunTestWatchFromNonZero`: a watch from the creation revision sees the update as MODIFIED.
pub async fn run_test_watch_from_non_zero(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts(&rv_of(&stored), everything(), false)).await;
    let mut new_obj = stored.clone();
    set_annotations(&mut new_obj, &[("version", "2")]);
    let out = upsert(ctx, &key, &new_obj).await;
    expect_event(ctx, &mut w, "MODIFIED", &out).await;
}

/// `RunTestDelayedWatchDelivery`: a reader that only starts reading after 21 writes still gets
/// every event, in order (the raw store never drops events; the Go test's "stop, then drain"
/// has no equivalent because dropping the receiver discards its buffer).
pub async fn run_test_delayed_watch_delivery(ctx: &TestContext) {
    let (_, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(
        ctx,
        "/pods/test-ns",
        list_opts(&rv_of(&stored), everything(), true),
    )
    .await;
    let total = 21;
    for i in 0..total {
        let p = pod("test-ns", &format!("foo-{i}"));
        upsert(ctx, &pod_key(&p), &p).await;
    }
    for i in 0..total {
        let e = next_event(ctx, &mut w, &format!("event #{i}")).await;
        let got = event_object(&e).as_ref().map(name_of).unwrap_or_default();
        assert_eq!(
            got,
            format!("foo-{i}"),
            "[{}] Unexpected object watched: {}",
            ctx.name,
            describe(&e)
        );
    }
}

/// `RunTestWatchError`: a value that cannot be transformed gives an ERROR event.
pub async fn run_test_watch_error(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestWatchError") else {
        return;
    };
    let obj = pod("test-ns", "foo");
    let key = pod_key(&obj);
    // Compute the initial resource version from which we can start watching later.
    let l = list(ctx, "/pods", &list_opts("0", everything(), true)).await;
    upsert(ctx, &key, &obj).await;
    // Now trigger watch error by injecting failing transformer.
    let _revert = transformer.update(|s| s.failing = true);
    let mut w = watch(
        ctx,
        &key,
        list_opts(&l.resource_version.to_string(), everything(), false),
    )
    .await;
    expect_event_type(ctx, &mut w, "ERROR", EVENT_TIMEOUT).await;
}

/// `RunTestWatcherTimeout`: 50 watchers that never read do not block a reading watcher.
pub async fn run_test_watcher_timeout(ctx: &TestContext) {
    let l = list(ctx, "/pods", &list_opts("", everything(), true)).await;
    let initial_rv = l.resource_version.to_string();
    let opts = list_opts(&initial_rv, everything(), true);
    // A number of watchers that will not be reading any result.
    let non_reading = 50;
    let mut idle = Vec::new();
    for _ in 0..non_reading {
        idle.push(watch(ctx, "/pods/test-ns", opts.clone()).await);
    }
    // A watcher that will be reading results.
    let mut reading = watch(ctx, "/pods/test-ns", opts).await;
    let start = Instant::now();
    for i in 0..22 {
        let out = create(ctx, &pod("test-ns", &format!("foo-{i}"))).await;
        expect_event(ctx, &mut reading, "ADDED", &out).await;
    }
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(250 * non_reading as u64),
        "[{}] waiting for events took too long: {took:?}",
        ctx.name
    );
    drop(idle);
}

/// `RunTestWatchDeleteEventObjectHaveLatestRV`: the DELETED object carries the delete revision.
pub async fn run_test_watch_delete_event_object_have_latest_rv(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts(&rv_of(&stored), everything(), false)).await;
    let deleted = delete_plain(&*ctx.storage, &key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&stored),
        rv_of(&deleted),
        "[{}] ResourceVersion didn't change on deletion",
        ctx.name
    );
    expect_event(ctx, &mut w, "DELETED", &deleted).await;
}

/// `RunOptionalTestProgressNotify`: with `progress_notify`, an idle watch gets bookmarks whose
/// object is an empty typed object carrying only a resourceVersion (not older than the watch
/// start). The backend must send progress notifications within [`EVENT_TIMEOUT`].
pub async fn run_optional_test_progress_notify(ctx: &TestContext) {
    let input = pod("test-ns", "name");
    let key = pod_key(&input);
    let out = create(ctx, &input).await;
    let min_rv = rv_u64(&out);
    // etcd does not send progress notifications for a watch on a future revision.
    ctx.increase_rv().await;
    let opts = ListOptions {
        resource_version: rv_of(&out),
        progress_notify: true,
        ..ListOptions::default()
    };
    let mut w = watch(ctx, &key, opts).await;
    let e = expect_event_type(ctx, &mut w, "BOOKMARK", EVENT_TIMEOUT).await;
    let obj = event_object(&e).expect("bookmark object");
    let rv = rv_u64(&obj);
    assert!(
        rv >= min_rv,
        "[{}] expected a resourceVersion no smaller than {min_rv}, got {rv}",
        ctx.name
    );
    assert_json_eq(
        ctx,
        "bookmark event should contain an object with no fields set other than resourceVersion",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}}),
        &without_rv(&obj),
    );
}

/// Run watch steps on a watch: upsert each object at its key and check the expected events
/// (`RunTestClusterScopedWatch` / `RunTestNamespaceScopedWatch` loop body).
async fn run_watch_steps(
    ctx: &TestContext,
    case: &str,
    w: &mut WatchStream,
    steps: Vec<WatchStep>,
) {
    let mut current: BTreeMap<String, Value> = BTreeMap::new();
    for s in steps {
        let obj = s.obj.expect("scoped watch steps write objects");
        let key = pod_key(&obj);
        let out = upsert(ctx, &key, &obj).await;
        let expected = if s.event_type == "DELETED" {
            let prev = current
                .remove(&key)
                .unwrap_or_else(|| panic!("[{}] {case}: no previous object for {key}", ctx.name));
            with_rv(&prev, &rv_of(&out))
        } else {
            current.insert(key.clone(), out.clone());
            out
        };
        if s.expect_event {
            expect_event(ctx, w, s.event_type, &expected).await;
        }
    }
    expect_no_more_events(ctx, w, false).await;
}

/// `RunTestClusterScopedWatch`: scoping of cluster-wide watches by name and field selectors.
pub async fn run_test_cluster_scoped_watch(ctx: &TestContext) {
    let p = |n: &str| pod("", n);
    let pu = |n: &str| pod_updated("", n);
    let pa = |n: &str, node: &str| pod_assigned("", n, node);
    let cases: Vec<(&str, &str, bool, FieldSelector, Vec<WatchStep>)> = vec![
        (
            "cluster-wide watch, request without name, without field selector",
            "",
            true,
            FieldSelector::default(),
            vec![
                step(p("t1-foo1"), true, "ADDED"),
                step(pu("t1-foo1"), true, "MODIFIED"),
                step(pa("t1-foo2", "t1-bar1"), true, "ADDED"),
            ],
        ),
        (
            "cluster-wide watch, request without name, field selector with spec.nodeName",
            "",
            true,
            field_eq("spec.nodeName", "t2-bar1"),
            vec![
                step(p("t2-foo1"), false, ""),
                step(pa("t2-foo1", "t2-bar1"), true, "ADDED"),
            ],
        ),
        (
            "cluster-wide watch, request without name, field selector with spec.nodeName to filter out watch",
            "",
            true,
            field_ne("spec.nodeName", "t3-bar1"),
            vec![
                step(p("t3-foo1"), true, "ADDED"),
                step(p("t3-foo2"), true, "ADDED"),
                step(pu("t3-foo1"), true, "MODIFIED"),
                step(pa("t3-foo1", "t3-bar1"), true, "DELETED"),
            ],
        ),
        (
            "cluster-wide watch, request with name, field selector with metadata.name",
            "t4-foo1",
            false,
            field_eq("metadata.name", "t4-foo1"),
            vec![
                step(p("t4-foo1"), true, "ADDED"),
                step(p("t4-foo2"), false, ""),
                step(pu("t4-foo1"), true, "MODIFIED"),
                step(pu("t4-foo2"), false, ""),
            ],
        ),
        (
            "cluster-wide watch, request with name, field selector with metadata.name and spec.nodeName",
            "t5-foo1",
            false,
            fields(vec![
                freq("metadata.name", true, "t5-foo1"),
                freq("spec.nodeName", true, "t5-bar1"),
            ]),
            vec![
                step(p("t5-foo1"), false, ""),
                step(p("t5-foo2"), false, ""),
                step(pu("t5-foo1"), false, ""),
                step(pu("t5-foo2"), false, ""),
                step(pa("t5-foo1", "t5-bar1"), true, "ADDED"),
            ],
        ),
        (
            "cluster-wide watch, request with name, field selector with metadata.name, and with spec.nodeName to filter out watch",
            "t6-foo1",
            false,
            fields(vec![
                freq("spec.nodeName", false, "t6-bar1"),
                freq("metadata.name", true, "t6-foo1"),
            ]),
            vec![
                step(p("t6-foo1"), true, "ADDED"),
                step(p("t6-foo2"), false, ""),
                step(pu("t6-foo1"), true, "MODIFIED"),
                step(pa("t6-foo1", "t6-bar1"), true, "DELETED"),
                step(pa("t6-foo2", "t6-bar1"), false, ""),
            ],
        ),
    ];
    for (name, requested_name, recursive, selector, steps) in cases {
        // Cluster-scoped keys: `/pods/<name>`.
        let mut watch_key = "/pods".to_string();
        if !requested_name.is_empty() {
            watch_key.push('/');
            watch_key.push_str(requested_name);
        }
        let pred = pod_pred(selector);
        let l = list(ctx, "/pods", &list_opts("", pred.clone(), true)).await;
        let mut w = watch(
            ctx,
            &watch_key,
            list_opts(&l.resource_version.to_string(), pred, recursive),
        )
        .await;
        let mut current: BTreeMap<String, Value> = BTreeMap::new();
        for s in steps {
            let obj = s.obj.expect("object");
            let key = format!("/pods/{}", name_of(&obj));
            let out = upsert(ctx, &key, &obj).await;
            let expected = if s.event_type == "DELETED" {
                let prev = current.remove(&key).expect("previous object");
                with_rv(&prev, &rv_of(&out))
            } else {
                current.insert(key.clone(), out.clone());
                out
            };
            if s.expect_event {
                expect_event(ctx, &mut w, s.event_type, &expected).await;
            }
        }
        expect_no_more_events(ctx, &mut w, false).await;
        let _ = name;
    }
}

/// `RunTestNamespaceScopedWatch`: scoping of namespaced watches by request namespace, name and
/// field selectors (19 combinations).
pub async fn run_test_namespace_scoped_watch(ctx: &TestContext) {
    let p = pod;
    let pu = pod_updated;
    let pa = pod_assigned;
    let cases: Vec<(&str, &str, &str, FieldSelector, Vec<WatchStep>)> = vec![
        (
            "namespaced watch, request without name, request without namespace, without field selector",
            "",
            "",
            FieldSelector::default(),
            vec![
                step(p("t1-ns1", "t1-foo1"), true, "ADDED"),
                step(p("t1-ns2", "t1-foo2"), true, "ADDED"),
                step(pu("t1-ns1", "t1-foo1"), true, "MODIFIED"),
                step(pu("t1-ns2", "t1-foo2"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request without name, request without namespace, field selector with metadata.namespace",
            "",
            "",
            field_eq("metadata.namespace", "t2-ns1"),
            vec![
                step(p("t2-ns1", "t2-foo1"), true, "ADDED"),
                step(p("t2-ns2", "t2-foo1"), false, ""),
                step(pu("t2-ns1", "t2-foo1"), true, "MODIFIED"),
                step(pu("t2-ns2", "t2-foo1"), false, ""),
            ],
        ),
        (
            "namespaced watch, request without name, request without namespace, field selector with spec.nodename",
            "",
            "",
            field_eq("spec.nodeName", "t3-bar1"),
            vec![
                step(p("t3-ns1", "t3-foo1"), false, ""),
                step(p("t3-ns2", "t3-foo2"), false, ""),
                step(pa("t3-ns1", "t3-foo1", "t3-bar1"), true, "ADDED"),
                step(pa("t3-ns2", "t3-foo2", "t3-bar1"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request without name, request without namespace, field selector with spec.nodename to filter out watch",
            "",
            "",
            field_ne("spec.nodeName", "t4-bar1"),
            vec![
                step(p("t4-ns1", "t4-foo1"), true, "ADDED"),
                step(p("t4-ns1", "t4-foo2"), true, "ADDED"),
                step(pu("t4-ns1", "t4-foo1"), true, "MODIFIED"),
                step(pa("t4-ns1", "t4-foo1", "t4-bar1"), true, "DELETED"),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, without field selector",
            "",
            "t5-ns1",
            FieldSelector::default(),
            vec![
                step(p("t5-ns1", "t5-foo1"), true, "ADDED"),
                step(p("t5-ns2", "t5-foo1"), false, ""),
                step(p("t5-ns1", "t5-foo2"), true, "ADDED"),
                step(pu("t5-ns1", "t5-foo1"), true, "MODIFIED"),
                step(pu("t5-ns2", "t5-foo1"), false, ""),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with matched metadata.namespace",
            "",
            "t6-ns1",
            field_eq("metadata.namespace", "t6-ns1"),
            vec![
                step(p("t6-ns1", "t6-foo1"), true, "ADDED"),
                step(p("t6-ns2", "t6-foo1"), false, ""),
                step(pu("t6-ns1", "t6-foo1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with non-matched metadata.namespace",
            "",
            "t7-ns1",
            field_eq("metadata.namespace", "t7-ns2"),
            vec![
                step(p("t7-ns1", "t7-foo1"), false, ""),
                step(p("t7-ns2", "t7-foo1"), false, ""),
                step(pu("t7-ns1", "t7-foo1"), false, ""),
                step(pu("t7-ns2", "t7-foo1"), false, ""),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with spec.nodename",
            "",
            "t8-ns1",
            field_eq("spec.nodeName", "t8-bar2"),
            vec![
                step(p("t8-ns1", "t8-foo1"), false, ""),
                step(pa("t8-ns1", "t8-foo1", "t8-bar1"), false, ""),
                step(pa("t8-ns2", "t8-foo1", "t8-bar2"), false, ""),
                step(pa("t8-ns1", "t8-foo1", "t8-bar2"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with spec.nodename to filter out watch",
            "",
            "t9-ns2",
            field_ne("spec.nodeName", "t9-bar1"),
            vec![
                step(p("t9-ns1", "t9-foo1"), false, ""),
                step(p("t9-ns2", "t9-foo1"), true, "ADDED"),
                step(pa("t9-ns2", "t9-foo1", "t9-bar1"), true, "DELETED"),
                step(pa("t9-ns2", "t9-foo1", "t9-bar2"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name",
            "t10-foo1",
            "",
            field_eq("metadata.name", "t10-foo1"),
            vec![
                step(p("t10-ns1", "t10-foo1"), true, "ADDED"),
                step(p("t10-ns2", "t10-foo1"), true, "ADDED"),
                step(p("t10-ns1", "t10-foo2"), false, ""),
                step(pu("t10-ns1", "t10-foo1"), true, "MODIFIED"),
                step(pa("t10-ns1", "t10-foo1", "t10-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name and metadata.namespace",
            "t11-foo1",
            "",
            fields(vec![
                freq("metadata.name", true, "t11-foo1"),
                freq("metadata.namespace", true, "t11-ns1"),
            ]),
            vec![
                step(p("t11-ns1", "t11-foo1"), true, "ADDED"),
                step(p("t11-ns1", "t11-foo2"), false, ""),
                step(p("t11-ns2", "t11-foo1"), false, ""),
                step(pu("t11-ns1", "t11-foo1"), true, "MODIFIED"),
                step(pa("t11-ns1", "t11-foo1", "t11-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name and spec.nodeName",
            "t12-foo1",
            "",
            fields(vec![
                freq("metadata.name", true, "t12-foo1"),
                freq("spec.nodeName", true, "t12-bar1"),
            ]),
            vec![
                step(p("t12-ns1", "t12-foo1"), false, ""),
                step(pu("t12-ns1", "t12-foo1"), false, ""),
                step(pa("t12-ns1", "t12-foo1", "t12-bar1"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name, and with spec.nodeName to filter out watch",
            "t15-foo1",
            "",
            fields(vec![
                freq("spec.nodeName", false, "t15-bar1"),
                freq("metadata.name", true, "t15-foo1"),
            ]),
            vec![
                step(p("t15-ns1", "t15-foo1"), true, "ADDED"),
                step(p("t15-ns1", "t15-foo2"), false, ""),
                step(pu("t15-ns1", "t15-foo1"), true, "MODIFIED"),
                step(pa("t15-ns1", "t15-foo1", "t15-bar1"), true, "DELETED"),
                step(pa("t15-ns1", "t15-foo1", "t15-bar2"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name",
            "t16-foo1",
            "t16-ns1",
            field_eq("metadata.name", "t16-foo1"),
            vec![
                step(p("t16-ns1", "t16-foo1"), true, "ADDED"),
                step(p("t16-ns1", "t16-foo2"), false, ""),
                step(pu("t16-ns1", "t16-foo1"), true, "MODIFIED"),
                step(pa("t16-ns1", "t16-foo1", "t16-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name and metadata.namespace",
            "t17-foo2",
            "t17-ns1",
            fields(vec![
                freq("metadata.name", true, "t17-foo2"),
                freq("metadata.namespace", true, "t17-ns1"),
            ]),
            vec![
                step(p("t17-ns1", "t17-foo1"), false, ""),
                step(p("t17-ns1", "t17-foo2"), true, "ADDED"),
                step(pu("t17-ns1", "t17-foo1"), false, ""),
                step(pa("t17-ns1", "t17-foo2", "t17-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name, metadata.namespace and spec.nodename",
            "t18-foo1",
            "t18-ns1",
            fields(vec![
                freq("metadata.name", true, "t18-foo1"),
                freq("metadata.namespace", true, "t18-ns1"),
                freq("spec.nodeName", true, "t18-bar1"),
            ]),
            vec![
                step(p("t18-ns1", "t18-foo1"), false, ""),
                step(p("t18-ns1", "t18-foo2"), false, ""),
                step(p("t18-ns2", "t18-foo1"), false, ""),
                step(pu("t18-ns1", "t18-foo1"), false, ""),
                step(pa("t18-ns1", "t18-foo1", "t18-bar1"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name, metadata.namespace, and with spec.nodename to filter out watch",
            "t19-foo2",
            "t19-ns1",
            fields(vec![
                freq("spec.nodeName", false, "t19-bar1"),
                freq("metadata.name", true, "t19-foo2"),
                freq("metadata.namespace", true, "t19-ns1"),
            ]),
            vec![
                step(p("t19-ns1", "t19-foo1"), false, ""),
                step(p("t19-ns2", "t19-foo2"), false, ""),
                step(p("t19-ns1", "t19-foo2"), true, "ADDED"),
                step(pu("t19-ns1", "t19-foo2"), true, "MODIFIED"),
                step(pa("t19-ns1", "t19-foo2", "t19-bar1"), true, "DELETED"),
            ],
        ),
    ];
    for (name, requested_name, requested_namespace, selector, steps) in cases {
        let mut watch_key = "/pods".to_string();
        // A watch of one object in a namespace is a non-recursive watch of its key; anything
        // wider is recursive (the Go test sets `recursive` to exactly this).
        let mut recursive = true;
        if !requested_namespace.is_empty() {
            watch_key.push_str(&format!("/{requested_namespace}"));
            if !requested_name.is_empty() {
                watch_key.push_str(&format!("/{requested_name}"));
                recursive = false;
            }
        }
        let pred = pod_pred(selector);
        let l = list(ctx, "/pods", &list_opts("", pred.clone(), true)).await;
        let mut w = watch(
            ctx,
            &watch_key,
            list_opts(&l.resource_version.to_string(), pred, recursive),
        )
        .await;
        run_watch_steps(ctx, name, &mut w, steps).await;
    }
}

/// `RunTestWatchDispatchBookmarkEvents`: with `allowWatchBookmarks`, a BOOKMARK arrives within
/// the timeout only if `expected` (the cacher); the raw store (like etcd3) sends none. Without
/// `allowWatchBookmarks` nothing arrives. The watched key sees no other event here.
pub async fn run_test_watch_dispatch_bookmark_events(ctx: &TestContext, expected: bool) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let start_rv = rv_of(&stored);
    for (i, (name, allow, want)) in [
        ("allowWatchBookmarks=false", false, false),
        ("allowWatchBookmarks=true", true, expected),
    ]
    .into_iter()
    .enumerate()
    {
        let pred = SelectionPredicate {
            allow_watch_bookmarks: allow,
            ..SelectionPredicate::default()
        };
        let mut w = watch(ctx, &key, list_opts(&start_rv, pred, false)).await;
        // Create events of pods in a different namespace.
        create(ctx, &pod(&format!("other-ns-{i}"), "foo")).await;
        let wait = if want {
            Duration::from_secs(3)
        } else {
            NO_EVENT_WAIT
        };
        match recv_within(&mut w, wait).await {
            Ok(Some(WatchEvent::Bookmark(_))) if want => {}
            Ok(Some(e)) => panic!("[{}] {name}: unexpected event {}", ctx.name, describe(&e)),
            Ok(None) => panic!("[{}] {name}: watch closed", ctx.name),
            Err(()) if want => panic!("[{}] {name}: no bookmark (timeout)", ctx.name),
            Err(()) => {}
        }
    }
}

/// `RunSendInitialEventsBackwardCompatibility`: a watch with `sendInitialEvents=true` but
/// without bookmarks (and without a resourceVersion) is accepted.
pub async fn run_send_initial_events_backward_compatibility(ctx: &TestContext) {
    let opts = ListOptions {
        send_initial_events: Some(true),
        recursive: true,
        ..ListOptions::default()
    };
    let w = ctx.storage.watch("/pods", opts).await;
    assert!(w.is_ok(), "[{}] watch failed: {:?}", ctx.name, w.err());
}

/// `RunWatchSemantics`: the matrix resourceVersion (unset, 0, 1, current) × allowWatchBookmarks
/// × sendInitialEvents, plus the legacy cases: the initial ADDED events, the
/// `k8s.io/initial-events-end` bookmark (with a resourceVersion at least that of the last
/// object), then exactly the later events. Scenarios run one after the other on the same store,
/// each in its own namespace.
pub async fn run_watch_semantics(ctx: &TestContext) {
    struct Scenario {
        name: &'static str,
        allow_watch_bookmarks: bool,
        send_initial_events: Option<bool>,
        resource_version: &'static str,
        use_current_rv: bool,
        expect_initial_events: bool,
        expect_bookmark: bool,
    }
    let sc = |name, allow, sie: Option<bool>, rv, current, initial, bookmark| Scenario {
        name,
        allow_watch_bookmarks: allow,
        send_initial_events: sie,
        resource_version: rv,
        use_current_rv: current,
        expect_initial_events: initial,
        expect_bookmark: bookmark,
    };
    let (t, f) = (Some(true), Some(false));
    let scenarios = vec![
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=unset",
            true,
            t,
            "",
            false,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=unset",
            true,
            f,
            "",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=unset",
            false,
            f,
            "",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=unset",
            false,
            t,
            "",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=0",
            true,
            t,
            "0",
            false,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=0",
            true,
            f,
            "0",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=0",
            false,
            f,
            "0",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=0",
            false,
            t,
            "0",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=1",
            true,
            t,
            "1",
            false,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=1",
            true,
            f,
            "1",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=1",
            false,
            f,
            "1",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=1",
            false,
            t,
            "1",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=useCurrentRV",
            true,
            t,
            "",
            true,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=useCurrentRV",
            true,
            f,
            "",
            true,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=useCurrentRV",
            false,
            f,
            "",
            true,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=useCurrentRV",
            false,
            t,
            "",
            true,
            true,
            false,
        ),
        sc("legacy, RV=0", false, None, "0", false, true, false),
        sc("legacy, RV=unset", false, None, "", false, true, false),
    ];
    for (idx, s) in scenarios.into_iter().enumerate() {
        let ns = format!("ns-{idx}");
        let mut created = Vec::new();
        for suffix in ["1", "2", "3"] {
            let mut p = make_pod(suffix);
            set_meta(&mut p, "namespace", json!(ns));
            created.push(create(ctx, &p).await);
        }
        // This list makes sure a cache has seen the created pods.
        let l = list(
            ctx,
            &format!("/pods/{ns}"),
            &ListOptions {
                resource_version: rv_of(created.last().unwrap()),
                resource_version_match: ResourceVersionMatch::NotOlderThan,
                recursive: true,
                ..ListOptions::default()
            },
        )
        .await;
        assert_eq!(
            l.items.len(),
            created.len(),
            "[{}] {}: list",
            ctx.name,
            s.name
        );
        let rv = if s.use_current_rv {
            ctx.storage
                .current_resource_version()
                .await
                .unwrap_or_else(|e| panic!("[{}] GetCurrentResourceVersion: {e}", ctx.name))
                .to_string()
        } else {
            s.resource_version.to_string()
        };
        let opts = ListOptions {
            resource_version: rv,
            predicate: SelectionPredicate {
                allow_watch_bookmarks: s.allow_watch_bookmarks,
                ..SelectionPredicate::default()
            },
            recursive: true,
            send_initial_events: s.send_initial_events,
            ..ListOptions::default()
        };
        let mut w = ctx
            .storage
            .watch(&format!("/pods/{ns}"), opts)
            .await
            .unwrap_or_else(|e| panic!("[{}] {}: failed to create watch: {e}", ctx.name, s.name));
        // make sure we only get initial events
        if s.expect_initial_events {
            for p in &created {
                expect_event(ctx, &mut w, "ADDED", p).await;
            }
        }
        // make sure that the actual bookmark has at least RV >= the expected one
        if s.expect_bookmark {
            let e = next_event(
                ctx,
                &mut w,
                &format!("{}: initial-events-end bookmark", s.name),
            )
            .await;
            let obj = match &e {
                WatchEvent::Bookmark(o) => o.clone(),
                other => panic!(
                    "[{}] {}: expected the initial-events-end BOOKMARK, got {}",
                    ctx.name,
                    s.name,
                    describe(other)
                ),
            };
            let min = rv_u64(created.last().unwrap());
            assert!(
                rv_u64(&obj) >= min,
                "[{}] {}: bookmark resourceVersion {} < {min}",
                ctx.name,
                s.name,
                rv_of(&obj)
            );
            assert_json_eq(
                ctx,
                &format!("{}: incorrect event", s.name),
                &initial_events_end_bookmark(&rv_of(&obj)),
                &obj,
            );
        }
        // pods created after the watch was established
        let mut after = Vec::new();
        for suffix in ["4", "5"] {
            let mut p = make_pod(suffix);
            set_meta(&mut p, "namespace", json!(ns));
            after.push(("ADDED", create(ctx, &p).await));
        }
        expect_events_ignoring_bookmarks(ctx, &mut w, &after).await;
        expect_no_more_events(ctx, &mut w, true).await;
    }
}

/// `RunWatchSemanticInitialEventsExtended`: the bookmark that ends the initial events carries
/// the global revision, even when the newest write was in another namespace. Needs a backend of
/// its own (it asserts the global revision).
pub async fn run_watch_semantic_initial_events_extended(ctx: &TestContext) {
    let ns = "ns-foo";
    let mut initial = Vec::new();
    for suffix in ["1", "2", "3", "4", "5"] {
        let mut p = make_pod(suffix);
        set_meta(&mut p, "namespace", json!(ns));
        initial.push(create(ctx, &p).await);
    }
    // add a pod to a different namespace to advance the global RV
    let mut other = make_pod("1");
    set_meta(&mut other, "namespace", json!("other-ns-foo"));
    let other = create(ctx, &other).await;
    let opts = ListOptions {
        predicate: SelectionPredicate {
            allow_watch_bookmarks: true,
            ..SelectionPredicate::default()
        },
        recursive: true,
        send_initial_events: Some(true),
        ..ListOptions::default()
    };
    let mut w = watch(ctx, &format!("/pods/{ns}"), opts).await;
    for p in &initial {
        expect_event(ctx, &mut w, "ADDED", p).await;
    }
    expect_event(
        ctx,
        &mut w,
        "BOOKMARK",
        &initial_events_end_bookmark(&rv_of(&other)),
    )
    .await;
    expect_no_more_events(ctx, &mut w, false).await;
}

/// `RunWatchListMatchSingle`: a watch-list with a `metadata.name` field selector sends only that
/// object, then the bookmark with the global revision. Needs a backend of its own.
pub async fn run_watch_list_match_single(ctx: &TestContext) {
    let ns = "ns-foo";
    let mut first = make_pod("1");
    set_meta(&mut first, "namespace", json!(ns));
    let expected = create(ctx, &first).await;
    let mut last_added = Value::Null;
    for suffix in ["2", "3", "4", "5"] {
        let mut p = make_pod(suffix);
        set_meta(&mut p, "namespace", json!(ns));
        last_added = create(ctx, &p).await;
    }
    let opts = ListOptions {
        predicate: SelectionPredicate {
            allow_watch_bookmarks: true,
            ..pod_pred(field_eq("metadata.name", "pod-1"))
        },
        recursive: true,
        send_initial_events: Some(true),
        ..ListOptions::default()
    };
    let mut w = watch(ctx, "/pods", opts).await;
    expect_event(ctx, &mut w, "ADDED", &expected).await;
    expect_event(
        ctx,
        &mut w,
        "BOOKMARK",
        &initial_events_end_bookmark(&rv_of(&last_added)),
    )
    .await;
    expect_no_more_events(ctx, &mut w, false).await;
}

/// `RunWatchErrorIsBlockingFurtherEvents`: after an ERROR event (an object that cannot be
/// transformed), no later event is delivered and the watch closes.
pub async fn run_watch_error_is_blocking_further_events(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunWatchErrorIsBlockingFurtherEvents") else {
        return;
    };
    let foo_pod = create(ctx, &pod("test", "foo")).await;
    create(ctx, &pod("test", "bar")).await;
    // Update the transformer so that foo and bar become effectively corrupted.
    let _revert = transformer.update(|s| s.prefix = b"other-prefix".to_vec());
    create(ctx, &pod("test", "baz")).await;
    let opts = list_opts(&rv_of(&foo_pod), everything(), true);
    // Run concurrent watches to raise the odds of hitting a race in one of them.
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let storage = ctx.storage.clone();
        let opts = opts.clone();
        let name = ctx.name;
        tasks.push(tokio::spawn(async move {
            let mut w = storage
                .watch("/pods", opts)
                .await
                .unwrap_or_else(|e| panic!("[{name}] failed to create watch: {e}"));
            // The watch starts after foo: bar fails to transform and produces an ERROR; the
            // ADDED event for baz must not follow.
            let mut seen = Vec::new();
            loop {
                match tokio::time::timeout(EVENT_TIMEOUT, w.recv()).await {
                    Ok(Some(e)) => seen.push(e),
                    Ok(None) => break,
                    Err(_) => panic!("[{name}] watch did not close after its ERROR event"),
                }
            }
            seen
        }));
    }
    for t in tasks {
        let seen = t.await.expect("watch task");
        assert!(
            !seen.is_empty(),
            "[{}] expected an ERROR event, the watch closed without one",
            ctx.name
        );
        for e in &seen {
            assert!(
                matches!(e, WatchEvent::Error(_)),
                "[{}] unexpected event: {}",
                ctx.name,
                describe(e)
            );
        }
    }
}

//! The context a case runs against and the helpers shared by the cases (`store_tests.go`'s
//! and `utils.go`'s helpers).

use crate::backend::Backend;
use crate::continue_token;
use crate::errors::{Result, StorageError};
use crate::interfaces::{
    GetOptions, ListOptions, ListResult, Preconditions, ResponseMeta, Storage, UpdateOutcome,
    WatchEvent, WatchStream,
};
use crate::selection::{
    default_attrs, FieldRequirement, FieldSelector, LabelSelector, Operator, Requirement,
    SelectionPredicate,
};
use crate::store::{KvStore, StoreConfig, ValueTransformer, INITIAL_EVENTS_END_ANNOTATION};
use crate::testing::OwnedReads;
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasm_apiserver_apimachinery::meta::{accessor, accessor_mut};

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

    pub(crate) async fn validate_key(&self, key: &str) {
        if let Some(validate) = &self.key_validation {
            if let Err(e) = validate(key.to_string()).await {
                panic!("[{}] storage invariants of {key}: {e}", self.name);
            }
        }
    }

    pub(crate) async fn compact(&self, rev: u64) {
        (self.compact)(rev)
            .await
            .unwrap_or_else(|e| panic!("[{}] compact({rev}) failed: {e}", self.name));
    }

    pub(crate) async fn increase_rv(&self) -> u64 {
        (self.increase_rv)()
            .await
            .unwrap_or_else(|e| panic!("[{}] increaseRV failed: {e}", self.name))
    }

    pub(crate) fn transformer(&self, case: &str) -> Option<Arc<TestTransformer>> {
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
pub(super) async fn put_raw<B: Backend + ?Sized>(b: &B, key: &str, value: Vec<u8>) -> Result<i64> {
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

pub(super) fn test_error(msg: &str) -> StorageError {
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
pub(super) fn make_pod(suffix: &str) -> Value {
    pod("", &format!("pod-{suffix}"))
}

/// `DeepEqualSafePodSpec`.
pub(super) fn deep_equal_safe_pod_spec() -> Value {
    json!({"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"})
}

/// `metadata.name`.
pub fn name_of(obj: &Value) -> String {
    accessor(obj).name().to_string()
}

/// `metadata.namespace`.
pub fn namespace_of(obj: &Value) -> String {
    accessor(obj).namespace().to_string()
}

/// `metadata.resourceVersion` (`""` when unset).
pub fn rv_of(obj: &Value) -> String {
    accessor(obj).resource_version().to_string()
}

pub(super) fn rv_u64(obj: &Value) -> u64 {
    rv_of(obj)
        .parse()
        .unwrap_or_else(|_| panic!("object without a numeric resourceVersion: {obj}"))
}

pub(super) fn set_meta(obj: &mut Value, field: &str, value: Value) {
    let meta = accessor_mut(obj).into_map();
    if value.is_null() || value.as_str() == Some("") {
        meta.remove(field);
    } else {
        meta.insert(field.into(), value);
    }
}

pub(super) fn set_rv(obj: &mut Value, rv: &str) {
    set_meta(obj, "resourceVersion", Value::String(rv.into()));
}

pub(super) fn with_rv(obj: &Value, rv: &str) -> Value {
    let mut o = obj.clone();
    set_rv(&mut o, rv);
    o
}

pub(super) fn without_rv(obj: &Value) -> Value {
    with_rv(obj, "")
}

pub(super) fn set_labels(obj: &mut Value, labels: &[(&str, &str)]) {
    let m: Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    set_meta(obj, "labels", Value::Object(m));
}

pub(super) fn with_labels(obj: &Value, labels: &[(&str, &str)]) -> Value {
    let mut o = obj.clone();
    set_labels(&mut o, labels);
    o
}

pub(super) fn set_annotations(obj: &mut Value, annotations: &[(&str, &str)]) {
    if annotations.is_empty() {
        accessor_mut(obj).remove("annotations");
        return;
    }
    let m: Map<String, Value> = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    set_meta(obj, "annotations", Value::Object(m));
}

pub(super) fn set_uid(obj: &mut Value, uid: &str) {
    set_meta(obj, "uid", Value::String(uid.into()));
}

/// `computePodKey`: `/pods/<namespace>/<name>`.
pub fn pod_key(obj: &Value) -> String {
    format!("/pods/{}/{}", namespace_of(obj), name_of(obj))
}

/// `storage.Everything`.
pub(super) fn everything() -> SelectionPredicate {
    SelectionPredicate::default()
}

/// A field requirement `field=value` (`equals`) or `field!=value`.
pub(super) fn freq(field: &str, equals: bool, value: &str) -> FieldRequirement {
    FieldRequirement {
        field: field.into(),
        equals,
        value: value.into(),
    }
}

pub(super) fn fields(reqs: Vec<FieldRequirement>) -> FieldSelector {
    FieldSelector { requirements: reqs }
}

/// `fields.OneTermEqualSelector`.
pub(super) fn field_eq(field: &str, value: &str) -> FieldSelector {
    fields(vec![freq(field, true, value)])
}

/// `fields.OneTermNotEqualSelector`.
pub(super) fn field_ne(field: &str, value: &str) -> FieldSelector {
    fields(vec![freq(field, false, value)])
}

/// `labels.SelectorFromSet({key: value})`.
pub(super) fn label_eq(key: &str, value: &str) -> LabelSelector {
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
pub(super) fn pod_pred(field: FieldSelector) -> SelectionPredicate {
    SelectionPredicate {
        field,
        get_attrs: Some(default_attrs(vec!["spec.nodeName".into()])),
        ..SelectionPredicate::default()
    }
}

pub(super) fn pod_pred_paged(
    field: FieldSelector,
    limit: i64,
    continue_token: &str,
) -> SelectionPredicate {
    SelectionPredicate {
        limit,
        continue_token: continue_token.into(),
        ..pod_pred(field)
    }
}

/// `encodeContinueOrDie`: a token whose start key is `key` relative to the list prefix.
pub(super) fn encode_continue(key: &str, rv: i64) -> String {
    continue_token::encode(&format!("adapter{key}"), "adapter", rv).expect("encode continue")
}

pub(super) fn list_opts(rv: &str, pred: SelectionPredicate, recursive: bool) -> ListOptions {
    ListOptions {
        resource_version: rv.into(),
        predicate: pred,
        recursive,
        ..ListOptions::default()
    }
}

pub(super) fn sort_by_key(mut pods: Vec<Value>) -> Vec<Value> {
    pods.sort_by_key(pod_key);
    pods
}

pub(super) fn pretty(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

pub(super) fn assert_json_eq(ctx: &TestContext, what: &str, expected: &Value, got: &Value) {
    assert!(
        expected == got,
        "[{}] {what}:\nexpected: {}\n     got: {}",
        ctx.name,
        pretty(expected),
        pretty(got)
    );
}

pub(super) fn assert_items(ctx: &TestContext, what: &str, expected: &[Value], got: &[Value]) {
    assert!(
        expected == got,
        "[{}] {what}:\nexpected: {}\n     got: {}",
        ctx.name,
        pretty(&expected),
        pretty(&got)
    );
}

pub(super) fn validate_all() -> impl FnMut(Value) -> BoxFuture<'static, Result<()>> + Send + 'static
{
    |_| Box::pin(async { Ok(()) })
}

/// `storage.SimpleUpdate`.
pub(super) fn simple_update<F>(
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
pub(super) fn replace_with(
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
pub(super) async fn upsert(ctx: &TestContext, key: &str, obj: &Value) -> Value {
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
pub(super) async fn update_with<F>(ctx: &TestContext, key: &str, f: F) -> Value
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

pub(super) async fn create(ctx: &TestContext, obj: &Value) -> Value {
    let key = pod_key(obj);
    ctx.storage
        .create(&key, obj.clone(), 0)
        .await
        .unwrap_or_else(|e| panic!("[{}] Create({key}) failed: {e}", ctx.name))
}

pub(super) async fn delete_plain(
    storage: &dyn Storage,
    key: &str,
    hint: Option<Value>,
) -> Result<Value> {
    storage
        .delete(key, &Preconditions::default(), &mut validate_all(), hint)
        .await
}

pub(super) async fn get(ctx: &TestContext, key: &str) -> Result<Option<Value>> {
    ctx.storage.get_owned(key, &GetOptions::default()).await
}

pub(super) async fn list(ctx: &TestContext, key: &str, opts: &ListOptions) -> ListResult {
    ctx.storage
        .get_list_owned(key, opts)
        .await
        .unwrap_or_else(|e| panic!("[{}] GetList({key}, {opts:?}) failed: {e}", ctx.name))
}

/// `testPropagateStore`: delete whatever is at the pod's key, create the pod, return the key
/// and the stored object.
pub(super) async fn propagate(ctx: &TestContext, obj: &Value) -> (String, Value) {
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

pub(super) fn assert_not_found(ctx: &TestContext, what: &str, r: Result<Option<Value>>) {
    match r {
        Err(e) if e.is_not_found() => {}
        other => panic!("[{}] {what}: expected NotFound, got {other:?}", ctx.name),
    }
}

pub(super) fn is_too_large(e: &StorageError) -> bool {
    matches!(e, StorageError::TooLargeResourceVersion { .. })
}

pub(super) fn is_internal(e: &StorageError) -> bool {
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
pub(super) fn event_object(e: &WatchEvent) -> Option<Value> {
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

pub(super) fn describe(e: &WatchEvent) -> String {
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
pub(super) async fn recv_within(
    w: &mut WatchStream,
    timeout: Duration,
) -> std::result::Result<Option<WatchEvent>, ()> {
    tokio::time::timeout(timeout, w.recv())
        .await
        .map_err(|_| ())
}

pub(super) async fn next_event(ctx: &TestContext, w: &mut WatchStream, what: &str) -> WatchEvent {
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
pub(super) async fn expect_event(
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
pub(super) async fn expect_event_type(
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
pub(super) async fn expect_no_more_events(
    ctx: &TestContext,
    w: &mut WatchStream,
    ignore_bookmarks: bool,
) {
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
pub(super) async fn expect_events_ignoring_bookmarks(
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

pub(super) async fn watch(ctx: &TestContext, key: &str, opts: ListOptions) -> WatchStream {
    ctx.storage
        .watch(key, opts)
        .await
        .unwrap_or_else(|e| panic!("[{}] Watch({key}) failed: {e}", ctx.name))
}

/// The bookmark object that ends the initial events of a watch-list.
pub(super) fn initial_events_end_bookmark(rv: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "resourceVersion": rv,
            "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"}
        }
    })
}

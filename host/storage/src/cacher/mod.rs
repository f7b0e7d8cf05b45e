//! The watch cache: [`Cacher`], a [`Storage`] that decorates another one (normally a
//! [`crate::store::KvStore`]) for ONE resource, porting kube-apiserver's
//! `k8s.io/apiserver/pkg/storage/cacher` (`cacher.go`, `delegator.go`, `watch_cache.go`,
//! `cache_watcher.go`).
//!
//! - **Filling** ([`reflector`]): one consistent list of the resource prefix, then one
//!   recursive backend watch from the list's resourceVersion with `progress_notify`, feeding
//!   an in-memory store (key → object, its attributes, optional field indexes) and a bounded
//!   ring buffer of recent events ([`CacherConfig::capacity`]). When the watch breaks it is
//!   re-opened from the cache's resourceVersion; when that is not possible (410, nothing
//!   delivered) the resource is re-listed and every cache watcher's stream ends.
//! - **Writes** (`create`, `delete`, `guaranteed_update`) and `count`,
//!   `current_resource_version`, `compact_revision` always go to the storage; `delete` and
//!   `guaranteed_update` get the cached object as their `cached_existing` hint when the caller
//!   gives none (`delegator.go`), which saves a read when the cache is current.
//! - **Reads** follow `delegator.go` / `ShouldDelegateList`:
//!
//!   | call | served by |
//!   |---|---|
//!   | `get`, RV `""` | storage (quorum read) |
//!   | `get`, RV `"0"` | cache, no waiting |
//!   | `get`, RV `N` | cache once its RV ≥ N (waits up to [`CacherConfig::fresh_timeout`]); 504 TooLargeResourceVersion at once when N is above the storage's current revision; storage when the wait times out |
//!   | `get_list` with a continue token, `Exact`, RV `N` with `limit` (legacy Exact), RV `""` with `limit` | storage |
//!   | `get_list`, RV `"0"` (also with NotOlderThan) | cache, **`limit` ignored**, no continue token |
//!   | `get_list`, RV `N` (NotOlderThan, or unset without limit) | cache once fresh, `limit` honoured (continue tokens in the etcd3 format, pinned at the cache RV) |
//!   | `get_list`, RV `""` | consistent read: with a storage that reports watch progress on request (the embedded store), the storage's current revision, then the cache once it has caught up (asking for progress), else storage; otherwise (etcd) storage |
//!   | `watch` | cache (storage while the cache is not ready) |
//!
//!   A read that would be served from the cache goes to the storage while the cache is not
//!   ready. The list resourceVersion is the cache's. Selectors are applied in memory; a field
//!   selector that pins an indexed field ([`CacherConfig::indexes`]) with `=` reads the index.
//! - **Watches** ([`watcher`]): any number over the single backend watch; resume from any RV
//!   still in the ring buffer, 410 Expired (as the first and only event) for an older one;
//!   initial events from the cache for RV `""`/`"0"` (legacy) or `sendInitialEvents=true`
//!   (then the `k8s.io/initial-events-end` bookmark when bookmarks are allowed); periodic
//!   bookmarks every [`CacherConfig::bookmark_interval`]; slow watchers are closed.
//!
//! Consistent reads need the cache's resourceVersion to reach the storage's current revision.
//! As kube-apiserver, the cache asks the storage for a progress notification
//! ([`Storage::request_watch_progress`]) and serves the read once its watch has delivered
//! everything up to that revision; a storage that cannot (etcd here: kube only uses
//! `RequestWatchProgress` on etcd ≥ 3.4.31 / 3.5.13, `storage/feature/feature_support_checker.go`,
//! because older members can report progress past events a watcher has not yet received,
//! etcd-io/etcd#15220 and #17507) serves consistent reads itself
//! (`cacher.go` `ShouldDelegateConsistentRead`). Reads at an explicit resourceVersion also ask
//! for progress where the storage supports it; on etcd they wait for the resource's own events
//! and etcd's periodic progress notifications (`--experimental-watch-progress-notify-interval`);
//! when the backend watch has been silent for longer than [`CacherConfig::fresh_timeout`]
//! (e.g. etcd's default 10-minute interval on an idle resource), such a read waits only
//! briefly and then goes to the storage instead of waiting the full timeout.

mod reflector;
mod watch_cache;
mod watcher;

use crate::errors::{Result, StorageError, WATCH_TOO_OLD};
use crate::interfaces::{
    GetOptions, ListOptions, Preconditions, ResourceVersionMatch, SharedListResult, Storage,
    TryUpdate, ValidateDeletion, WatchEvent, WatchStream,
};
use crate::selection::{default_attrs, AttrsFunc};
use crate::store::{parse_resource_version, INITIAL_EVENTS_END_ANNOTATION};
use crate::stored::SharedObject;
use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use watch_cache::{CacheState, Scope};

/// How long a read waits for freshness when the backend watch has been silent (see the module
/// documentation) before it goes to the storage.
const QUIET_BACKEND_WAIT: Duration = Duration::from_millis(100);

/// How often a consistent read that waits for the cache asks the storage for progress again
/// (`progressRequestPeriod` in `k8s.io/apiserver/pkg/storage/cacher/progress/watch_progress.go`
/// `ConditionalProgressRequester`).
const PROGRESS_REQUEST_PERIOD: Duration = Duration::from_millis(100);

/// `KeyFunc`: the storage key (without the path prefix, e.g. `/pods/default/web`) of an
/// object, which must agree with the keys the storage is written with. Errors: the object has
/// no usable name.
pub type KeyFunc = Arc<dyn Fn(&Value) -> std::result::Result<String, String> + Send + Sync>;

fn name_and_namespace(obj: &Value) -> std::result::Result<(&str, &str), String> {
    let meta = obj.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(format!("invalid name {name:?}"));
    }
    let ns = meta
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .unwrap_or("");
    Ok((name, ns))
}

fn normalize_prefix(resource_prefix: &str) -> String {
    format!("/{}", resource_prefix.trim_matches('/'))
}

/// `storage.NamespaceKeyFunc`: `<prefix>/<namespace>/<name>`, also when the namespace is
/// empty (`<prefix>//<name>`).
pub fn namespace_key_func(resource_prefix: &str) -> KeyFunc {
    let prefix = normalize_prefix(resource_prefix);
    Arc::new(move |obj: &Value| {
        let (name, ns) = name_and_namespace(obj)?;
        Ok(format!("{prefix}/{ns}/{name}"))
    })
}

/// `storage.NoNamespaceKeyFunc`: `<prefix>/<name>` (cluster-scoped resources).
pub fn cluster_key_func(resource_prefix: &str) -> KeyFunc {
    let prefix = normalize_prefix(resource_prefix);
    Arc::new(move |obj: &Value| {
        let (name, _) = name_and_namespace(obj)?;
        Ok(format!("{prefix}/{name}"))
    })
}

/// The keys the server's registry writes: `<prefix>/<namespace>/<name>` for an object with a
/// namespace, `<prefix>/<name>` for one without (the registry always sets the namespace of
/// namespaced objects and drops it from cluster-scoped ones).
pub fn object_key_func(resource_prefix: &str) -> KeyFunc {
    let prefix = normalize_prefix(resource_prefix);
    Arc::new(move |obj: &Value| {
        let (name, ns) = name_and_namespace(obj)?;
        if ns.is_empty() {
            Ok(format!("{prefix}/{name}"))
        } else {
            Ok(format!("{prefix}/{ns}/{name}"))
        }
    })
}

/// What a [`Cacher`] caches and how (`cacherstorage.Config`).
#[derive(Clone)]
pub struct CacherConfig {
    /// The resource prefix of the keys, e.g. `/pods` or `/example.dev/widgets`; the cache
    /// lists and watches everything below `<prefix>/`.
    pub resource_prefix: String,
    /// `apiVersion` of bookmark objects, e.g. `v1`.
    pub api_version: String,
    /// `kind` of bookmark objects, e.g. `Pod`.
    pub kind: String,
    /// The key of an object (`KeyFunc`); default [`object_key_func`].
    pub key_func: KeyFunc,
    /// The resource's `GetAttrs`, computed once per cached object and used for selectors whose
    /// fields it covers; default: labels, `metadata.name`, `metadata.namespace`.
    pub get_attrs: AttrsFunc,
    /// Field paths to index (e.g. `spec.nodeName`, kube's pod `nodeName` indexer): a list whose
    /// field selector requires `field=value` reads only the matching keys.
    pub indexes: Vec<String>,
    /// Events kept in the ring buffer (watches resume from any resourceVersion in it). kube
    /// sizes it dynamically from 100 up; default 1000.
    pub capacity: usize,
    /// How often a watcher that allows bookmarks gets one (kube's `defaultBookmarkFrequency`,
    /// 1 minute). Default 60 s.
    pub bookmark_interval: Duration,
    /// Capacity, in events, of each watcher's channel. Default 100.
    pub watcher_buffer: usize,
    /// How long a watcher's full channel may block an event before the watcher is closed
    /// (kube's dispatch time budget, at most 100 ms). Default 250 ms.
    pub slow_watcher_timeout: Duration,
    /// How long a read with a resourceVersion, or a consistent read, waits for the cache to
    /// catch up (kube's `blockTimeout`). Default 3 s.
    pub fresh_timeout: Duration,
    /// How long a watch waits for a (re)initialising cache before it is served by the storage
    /// instead. Default 3 s.
    pub ready_timeout: Duration,
}

impl CacherConfig {
    /// The defaults for a resource under `resource_prefix` whose objects have `api_version`
    /// and `kind`.
    pub fn new(resource_prefix: &str, api_version: &str, kind: &str) -> CacherConfig {
        let resource_prefix = normalize_prefix(resource_prefix);
        CacherConfig {
            key_func: object_key_func(&resource_prefix),
            resource_prefix,
            api_version: api_version.into(),
            kind: kind.into(),
            get_attrs: default_attrs(Vec::new()),
            indexes: Vec::new(),
            capacity: 1000,
            bookmark_interval: Duration::from_secs(60),
            watcher_buffer: 100,
            slow_watcher_timeout: Duration::from_millis(250),
            fresh_timeout: Duration::from_secs(3),
            ready_timeout: Duration::from_secs(3),
        }
    }
}

/// A snapshot of a cacher's counters and gauges (the metrics kube exports as
/// `apiserver_watch_cache_*`, `apiserver_terminated_watchers_total`, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacherStats {
    /// Whether the cache is initialised and its backend watch running.
    pub ready: bool,
    /// The resourceVersion the cache has caught up to (`apiserver_watch_cache_resource_version`).
    pub resource_version: u64,
    /// Objects in the cache (the cache size).
    pub objects: u64,
    /// Events in the ring buffer.
    pub history: u64,
    /// Open cache watchers.
    pub watchers: u64,
    /// Object events received from the backend watch (`apiserver_watch_cache_events_received_total`).
    pub events_received: u64,
    /// Events sent to cache watchers, summed over watchers (`apiserver_watch_cache_events_dispatched_total`).
    pub events_dispatched: u64,
    /// Bookmarks sent to cache watchers.
    pub bookmarks_sent: u64,
    /// Watchers closed because they were too slow (channel full past the timeout, or fell
    /// behind the ring buffer) (`apiserver_terminated_watchers_total`).
    pub terminated_watchers: u64,
    /// Lists of the resource (the first one and every re-initialisation).
    pub relists: u64,
    /// Backend watches re-opened without a re-list.
    pub resumes: u64,
    /// `get`/`get_list` calls served from memory.
    pub reads_from_cache: u64,
    /// `get`/`get_list`/`watch` calls passed to the storage.
    pub reads_delegated: u64,
    /// Lists from memory that read a field index instead of the whole scope.
    pub reads_from_index: u64,
}

#[derive(Default)]
struct Counters {
    ready: AtomicBool,
    resource_version: AtomicU64,
    objects: AtomicU64,
    history: AtomicU64,
    watchers: AtomicU64,
    events_received: AtomicU64,
    events_dispatched: AtomicU64,
    bookmarks_sent: AtomicU64,
    terminated_watchers: AtomicU64,
    relists: AtomicU64,
    resumes: AtomicU64,
    reads_from_cache: AtomicU64,
    reads_delegated: AtomicU64,
    reads_from_index: AtomicU64,
}

/// What the cacher, its reflector and its watchers share.
pub(crate) struct Shared {
    inner: Arc<dyn Storage>,
    config: CacherConfig,
    state: RwLock<CacheState>,
    /// Bumped on every change of `state` that readers or watchers may wait for.
    changed: watch::Sender<u64>,
    counters: Counters,
    /// When the backend watch last delivered anything (or was (re)started).
    activity: Mutex<Instant>,
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, CacheState> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, CacheState> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    fn touch_activity(&self) {
        *self.activity.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Whether the backend watch delivered something recently enough that waiting for the
    /// cache to catch up is worth it.
    fn backend_active(&self) -> bool {
        self.activity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
            <= self.config.fresh_timeout
    }

    fn publish_gauges(&self, st: &CacheState) {
        let c = &self.counters;
        c.ready.store(st.ready, Ordering::Relaxed);
        c.resource_version.store(st.rv, Ordering::Relaxed);
        c.objects.store(st.objects.len() as u64, Ordering::Relaxed);
        c.history.store(st.history.len() as u64, Ordering::Relaxed);
    }

    /// Mark the cache not ready and end every cache watcher (`terminateAllWatchers`).
    fn invalidate(&self) {
        {
            let mut st = self.write();
            st.ready = false;
            st.generation += 1;
            self.publish_gauges(&st);
        }
        self.notify();
    }

    /// A bookmark object: only `apiVersion`, `kind` and `metadata.resourceVersion`, plus the
    /// initial-events-end annotation when asked (the shape `KvStore` sends).
    fn bookmark(&self, rv: u64, initial_events_end: bool) -> Value {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({INITIAL_EVENTS_END_ANNOTATION: "true"});
        }
        json!({"apiVersion": self.config.api_version, "kind": self.config.kind, "metadata": meta})
    }

    /// Wait until `cond` holds, at most `timeout`; whether it holds.
    async fn wait_for(&self, timeout: Duration, cond: impl Fn(&CacheState) -> bool) -> bool {
        let mut rx = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            rx.borrow_and_update();
            if cond(&self.read()) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => continue,
                _ => return cond(&self.read()),
            }
        }
    }

    /// The wait of a read at a revision the storage has (`waitUntilFreshAndBlock` with kube's
    /// `progress.ConditionalProgressRequester`), for a storage that reports watch progress on
    /// request: whether the ready cache reaches `current` within
    /// [`CacherConfig::fresh_timeout`], asking the storage for a progress notification now and
    /// every [`PROGRESS_REQUEST_PERIOD`] while waiting. `false`: serve the read from the
    /// storage (kube's fallback when the wait times out).
    async fn wait_consistent(&self, current: u64) -> bool {
        let fresh = |st: &CacheState| st.ready && st.rv >= current;
        if fresh(&self.read()) {
            return true;
        }
        if !self.read().ready {
            return false;
        }
        let deadline = Instant::now() + self.config.fresh_timeout;
        loop {
            if self.inner.request_watch_progress().await.is_err() {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if self
                .wait_for(left.min(PROGRESS_REQUEST_PERIOD), fresh)
                .await
            {
                return true;
            }
            if left <= PROGRESS_REQUEST_PERIOD {
                return false;
            }
        }
    }

    /// `waitUntilFreshAndBlock`: whether the cache is ready with a resourceVersion of at least
    /// `rv` (`0` = any), waiting for it within the limits described in the module
    /// documentation; `Ok(false)` means "serve this from the storage". `current` is the
    /// storage's current revision when the caller already has it. Errors: `rv` is above the
    /// storage's current revision (504 TooLargeResourceVersion).
    async fn wait_fresh(&self, rv: u64, current: Option<u64>) -> Result<bool> {
        let fresh = |st: &CacheState| st.ready && st.rv >= rv;
        if fresh(&self.read()) {
            return Ok(true);
        }
        if rv == 0 || !self.read().ready {
            return Ok(false);
        }
        let current = match current {
            Some(c) => c,
            None => match self.inner.current_resource_version().await {
                Ok(c) => c,
                Err(_) => return Ok(false),
            },
        };
        if rv > current {
            return Err(StorageError::TooLargeResourceVersion {
                requested: rv,
                current,
            });
        }
        if self.inner.supports_request_watch_progress() {
            // As kube's `waitUntilFreshAndBlock`: ask for progress while waiting.
            return Ok(self.wait_consistent(rv).await);
        }
        let timeout = if self.backend_active() {
            self.config.fresh_timeout
        } else {
            QUIET_BACKEND_WAIT.min(self.config.fresh_timeout)
        };
        Ok(self.wait_for(timeout, fresh).await)
    }

    /// Validate a key as etcd3's `prepareKey` does (without the path prefix) and turn it into a
    /// scope. Errors: `InvalidKey` ("empty key", "invalid key", "lacks resource prefix").
    fn scope(&self, key: &str, recursive: bool) -> Result<Scope> {
        let key = crate::store::validate_key(key, &self.config.resource_prefix, recursive)?;
        Ok(Scope { key, recursive })
    }

    /// The cached object at `key` when the cache is ready (the `cached_existing` hint).
    fn cached_object(&self, key: &str) -> Option<Value> {
        let scope = self.scope(key, false).ok()?;
        let st = self.read();
        if !st.ready {
            return None;
        }
        let obj = st.objects.get(&scope.key).map(|e| e.obj.clone());
        drop(st);
        obj?.into_value().ok()
    }

    fn delegated(&self) {
        self.counters
            .reads_delegated
            .fetch_add(1, Ordering::Relaxed);
    }

    fn served_from_cache(&self) {
        self.counters
            .reads_from_cache
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// A stream whose first and only event is `err`.
fn error_stream(err: StorageError) -> WatchStream {
    let (tx, rx) = mpsc::channel(1);
    let _ = tx.try_send(WatchEvent::Error(err));
    rx
}

/// The watch cache of one resource in front of its storage (`cacher.Cacher` behind
/// `cacher.CacheDelegator`). Dropping it stops its backend watch and ends its watchers'
/// streams.
///
/// The background work (the reflector) needs a Tokio runtime: it starts in
/// [`Cacher::new`] when called inside one, else on the first call of any [`Storage`] method.
pub struct Cacher {
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    pending_start: Mutex<Option<watch::Receiver<bool>>>,
}

impl Cacher {
    /// A cache of the resource `config.resource_prefix` of `inner`. Starts listing and
    /// watching `inner` at once when called inside a Tokio runtime.
    pub fn new(inner: Arc<dyn Storage>, config: CacherConfig) -> Cacher {
        let (changed, _) = watch::channel(0u64);
        let (stop, stop_rx) = watch::channel(false);
        let cacher = Cacher {
            shared: Arc::new(Shared {
                inner,
                config,
                state: RwLock::new(CacheState::new()),
                changed,
                counters: Counters::default(),
                activity: Mutex::new(Instant::now()),
            }),
            stop,
            pending_start: Mutex::new(Some(stop_rx)),
        };
        cacher.ensure_started();
        cacher
    }

    fn ensure_started(&self) {
        let mut pending = self.pending_start.lock().unwrap_or_else(|e| e.into_inner());
        if pending.is_none() {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let stop_rx = pending.take().expect("checked above");
            handle.spawn(reflector::run(self.shared.clone(), stop_rx));
        }
    }

    /// The decorated storage.
    pub fn inner(&self) -> &Arc<dyn Storage> {
        &self.shared.inner
    }

    /// The configuration.
    pub fn config(&self) -> &CacherConfig {
        &self.shared.config
    }

    /// The counters and gauges (lock-free: plain atomics).
    pub fn stats(&self) -> CacherStats {
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CacherStats {
            ready: c.ready.load(Ordering::Relaxed),
            resource_version: get(&c.resource_version),
            objects: get(&c.objects),
            history: get(&c.history),
            watchers: get(&c.watchers),
            events_received: get(&c.events_received),
            events_dispatched: get(&c.events_dispatched),
            bookmarks_sent: get(&c.bookmarks_sent),
            terminated_watchers: get(&c.terminated_watchers),
            relists: get(&c.relists),
            resumes: get(&c.resumes),
            reads_from_cache: get(&c.reads_from_cache),
            reads_delegated: get(&c.reads_delegated),
            reads_from_index: get(&c.reads_from_index),
        }
    }

    /// Whether the cache is initialised and its backend watch running.
    pub fn is_ready(&self) -> bool {
        self.shared.read().ready
    }

    /// The resourceVersion the cache has caught up to (0 before the first list).
    pub fn resource_version(&self) -> u64 {
        self.shared.read().rv
    }

    /// Wait until the cache is ready, at most `timeout`; whether it is.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        self.ensure_started();
        self.shared.wait_for(timeout, |st| st.ready).await
    }

    /// Wait until the cache is ready with a resourceVersion of at least `rv`, at most
    /// `timeout`; whether it is.
    pub async fn wait_until_fresh(&self, rv: u64, timeout: Duration) -> bool {
        self.ensure_started();
        self.shared
            .wait_for(timeout, |st| st.ready && st.rv >= rv)
            .await
    }

    /// Compact the ring buffer up to `rv` (the test hook kube's cacher tests call
    /// `compactStorage`): after the cache has caught up to `rv` (waiting up to
    /// [`CacherConfig::fresh_timeout`]), watches from a resourceVersion below `rv` get 410
    /// Expired. The cache does not follow the storage's compactions by itself: like kube's,
    /// its history is independent of etcd's.
    pub async fn compact_history(&self, rv: u64) {
        self.wait_until_fresh(rv, self.shared.config.fresh_timeout)
            .await;
        let mut st = self.shared.write();
        st.compact(rv);
        self.shared.publish_gauges(&st);
    }

    async fn watch_from_cache(&self, key: &str, opts: ListOptions) -> Result<WatchStream> {
        let shared = &self.shared;
        let rv = parse_resource_version(&opts.resource_version)?;
        let scope = shared.scope(key, opts.recursive)?;
        if !shared
            .wait_for(shared.config.ready_timeout, |st| st.ready)
            .await
        {
            shared.delegated();
            return shared.inner.watch(key, opts).await;
        }
        /// Where the watch starts, before the cache is locked.
        enum Plan {
            Initial { end_bookmark: bool },
            After(Option<u64>),
        }
        let plan = match opts.send_initial_events {
            Some(true) => {
                // The state at the required resourceVersion: the given one, the storage's
                // current one for "" (a consistent start), any for "0".
                let required = if rv > 0 {
                    rv
                } else if opts.resource_version.is_empty() {
                    shared.inner.current_resource_version().await?
                } else {
                    0
                };
                match shared.wait_fresh(required, None).await {
                    Ok(true) => {}
                    Ok(false) => {
                        shared.delegated();
                        return shared.inner.watch(key, opts).await;
                    }
                    Err(e) => return Ok(error_stream(e)),
                }
                Plan::Initial {
                    end_bookmark: opts.predicate.allow_watch_bookmarks,
                }
            }
            Some(false) if rv == 0 && opts.resource_version.is_empty() => {
                // Start at the most recent resourceVersion, without initial events.
                Plan::After(Some(shared.inner.current_resource_version().await?))
            }
            Some(false) if rv == 0 => Plan::After(None),
            None if rv == 0 => Plan::Initial {
                end_bookmark: false,
            },
            Some(false) | None => Plan::After(Some(rv)),
        };
        /// What the locked section decided.
        enum Decision {
            Delegate,
            Expired,
            Start(watcher::Start, u64),
        }
        let decision = {
            let st = shared.read();
            if !st.ready {
                Decision::Delegate
            } else {
                let start = match plan {
                    Plan::Initial { end_bookmark } => Some(watcher::Start::Initial {
                        objects: st.snapshot(&shared.config, &scope, &opts.predicate)?,
                        rv: st.rv,
                        end_bookmark,
                    }),
                    Plan::After(None) => Some(watcher::Start::After(st.rv)),
                    Plan::After(Some(from)) if from < st.floor => None,
                    Plan::After(Some(from)) => Some(watcher::Start::After(from)),
                };
                match start {
                    Some(start) => Decision::Start(start, st.generation),
                    None => Decision::Expired,
                }
            }
        };
        let (start, generation) = match decision {
            Decision::Start(start, generation) => (start, generation),
            Decision::Expired => {
                return Ok(error_stream(StorageError::Expired {
                    message: WATCH_TOO_OLD.into(),
                    continue_token: None,
                }))
            }
            Decision::Delegate => {
                shared.delegated();
                return shared.inner.watch(key, opts).await;
            }
        };
        let spec = watcher::WatcherSpec {
            scope,
            deadline: opts.watch_deadline,
            bookmarks: opts.predicate.allow_watch_bookmarks || opts.progress_notify,
            pred: opts.predicate,
            generation,
        };
        let (tx, rx) = mpsc::channel(shared.config.watcher_buffer.max(1));
        shared.counters.watchers.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(watcher::run(shared.clone(), spec, start, tx));
        Ok(rx)
    }
}

impl Drop for Cacher {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        // Without a started reflector nobody else ends the watchers (there are none then,
        // but invalidating is cheap and keeps the rule simple).
        let never_started = self
            .pending_start
            .lock()
            .map(|p| p.is_some())
            .unwrap_or(false);
        if never_started {
            self.shared.invalidate();
        }
    }
}

#[async_trait]
impl Storage for Cacher {
    async fn create(&self, key: &str, obj: Value, ttl: u64) -> Result<Value> {
        self.ensure_started();
        self.shared.inner.create(key, obj, ttl).await
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &mut ValidateDeletion,
        cached_existing: Option<Value>,
    ) -> Result<Value> {
        self.ensure_started();
        let hint = cached_existing.or_else(|| self.shared.cached_object(key));
        self.shared
            .inner
            .delete(key, preconditions, validate_deletion, hint)
            .await
    }

    async fn watch(&self, key: &str, opts: ListOptions) -> Result<WatchStream> {
        self.ensure_started();
        self.watch_from_cache(key, opts).await
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<SharedObject>> {
        self.ensure_started();
        let shared = &self.shared;
        if opts.resource_version.is_empty() {
            shared.delegated();
            return shared.inner.get(key, opts).await;
        }
        let rv = parse_resource_version(&opts.resource_version)?;
        let scope = shared.scope(key, false)?;
        if !shared.wait_fresh(rv, None).await? {
            shared.delegated();
            return shared.inner.get(key, opts).await;
        }
        let found = {
            let st = shared.read();
            if !st.ready {
                None
            } else {
                Some(st.objects.get(&scope.key).map(|e| e.obj.clone()))
            }
        };
        match found {
            None => {
                shared.delegated();
                shared.inner.get(key, opts).await
            }
            Some(obj) => {
                shared.served_from_cache();
                match obj {
                    Some(o) => Ok(Some(o)),
                    None if opts.ignore_not_found => Ok(None),
                    None => Err(StorageError::KeyNotFound { key: scope.key }),
                }
            }
        }
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult> {
        self.ensure_started();
        let shared = &self.shared;
        let pred = &opts.predicate;
        let delegate = || async {
            shared.delegated();
            shared.inner.get_list(key, opts).await
        };
        // ShouldDelegateList.
        if !pred.continue_token.is_empty() {
            return delegate().await;
        }
        let Ok(rv) = parse_resource_version(&opts.resource_version) else {
            return delegate().await;
        };
        let unset = opts.resource_version.is_empty();
        // (minimum resourceVersion, limit, consistent read)
        let (min_rv, limit, consistent) = match opts.resource_version_match {
            ResourceVersionMatch::Exact => return delegate().await,
            ResourceVersionMatch::NotOlderThan if unset => return delegate().await,
            ResourceVersionMatch::NotOlderThan if rv == 0 => (0, 0, false),
            ResourceVersionMatch::NotOlderThan => (rv, pred.limit, false),
            ResourceVersionMatch::Unset if unset && pred.limit > 0 => return delegate().await,
            ResourceVersionMatch::Unset if unset => (0, 0, true),
            ResourceVersionMatch::Unset if rv == 0 => (0, 0, false),
            ResourceVersionMatch::Unset if pred.limit > 0 => return delegate().await,
            ResourceVersionMatch::Unset => (rv, 0, false),
        };
        let scope = shared.scope(key, opts.recursive)?;
        let fresh = if consistent {
            // `ShouldDelegateConsistentRead`: only a storage whose watches report progress on
            // request can tell the cache it is current in time; without that, etcd.
            if !shared.inner.supports_request_watch_progress() {
                return delegate().await;
            }
            match shared.inner.current_resource_version().await {
                Ok(current) => shared.wait_consistent(current).await,
                Err(_) => false,
            }
        } else if min_rv == 0 {
            shared.read().ready
        } else {
            shared.wait_fresh(min_rv, None).await?
        };
        if !fresh {
            return delegate().await;
        }
        let out = {
            let st = shared.read();
            if !st.ready {
                None
            } else {
                Some(st.list(&shared.config, &scope, pred, limit))
            }
        };
        match out {
            None => delegate().await,
            Some(r) => {
                let r = r.map(|(list, items)| SharedListResult {
                    items,
                    resource_version: list.resource_version,
                    continue_token: list.continue_token,
                    remaining_item_count: list.remaining_item_count,
                });
                shared.served_from_cache();
                if CacheState::uses_index(&shared.config, pred) {
                    shared
                        .counters
                        .reads_from_index
                        .fetch_add(1, Ordering::Relaxed);
                }
                r
            }
        }
    }

    async fn guaranteed_update(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: &Preconditions,
        try_update: &mut TryUpdate,
        cached_existing: Option<Value>,
    ) -> Result<Value> {
        self.ensure_started();
        let hint = cached_existing.or_else(|| self.shared.cached_object(key));
        self.shared
            .inner
            .guaranteed_update(key, ignore_not_found, preconditions, try_update, hint)
            .await
    }

    async fn count(&self, key: &str) -> Result<i64> {
        self.shared.inner.count(key).await
    }

    async fn current_resource_version(&self) -> Result<u64> {
        self.shared.inner.current_resource_version().await
    }

    fn compact_revision(&self) -> u64 {
        self.shared.inner.compact_revision()
    }

    fn supports_request_watch_progress(&self) -> bool {
        self.shared.inner.supports_request_watch_progress()
    }

    async fn request_watch_progress(&self) -> Result<()> {
        self.shared.inner.request_watch_progress().await
    }

    async fn readiness_check(&self) -> Result<()> {
        self.ensure_started();
        if !self.shared.read().ready {
            return Err(StorageError::Unreachable(format!(
                "the watch cache of {} is not ready",
                self.shared.config.resource_prefix
            )));
        }
        self.shared.inner.readiness_check().await
    }
}

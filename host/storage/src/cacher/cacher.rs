//! The [`Cacher`] (`k8s.io/apiserver/pkg/storage/cacher/cacher.go`): its configuration and
//! statistics, the state its reflector, watchers and delegator share, its start and stop,
//! and watches served from memory.

use super::watch_cache::{self, CacheState, Scope};
use super::{reflector, watcher};
use crate::errors::{Result, StorageError, WATCH_TOO_OLD};
use crate::interfaces::{ListOptions, Storage, WatchEvent, WatchStream};
use crate::selection::{default_attrs, AttrsFunc};
use crate::store::{parse_resource_version, INITIAL_EVENTS_END_ANNOTATION};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How long a read waits for freshness when the backend watch has been silent (see the module
/// documentation) before it goes to the storage.
pub(super) const QUIET_BACKEND_WAIT: Duration = Duration::from_millis(100);

/// How often a consistent read that waits for the cache asks the storage for progress again
/// (`progressRequestPeriod` in `k8s.io/apiserver/pkg/storage/cacher/progress/watch_progress.go`
/// `ConditionalProgressRequester`).
pub(super) const PROGRESS_REQUEST_PERIOD: Duration = Duration::from_millis(100);

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
pub(super) struct Counters {
    pub(super) ready: AtomicBool,
    pub(super) resource_version: AtomicU64,
    pub(super) objects: AtomicU64,
    pub(super) history: AtomicU64,
    pub(super) watchers: AtomicU64,
    pub(super) events_received: AtomicU64,
    pub(super) events_dispatched: AtomicU64,
    pub(super) bookmarks_sent: AtomicU64,
    pub(super) terminated_watchers: AtomicU64,
    pub(super) relists: AtomicU64,
    pub(super) resumes: AtomicU64,
    pub(super) reads_from_cache: AtomicU64,
    pub(super) reads_delegated: AtomicU64,
    pub(super) reads_from_index: AtomicU64,
}

/// What the cacher, its reflector and its watchers share.
pub(crate) struct Shared {
    pub(super) inner: Arc<dyn Storage>,
    pub(super) config: CacherConfig,
    pub(super) state: RwLock<CacheState>,
    /// Bumped on every change of `state` that readers or watchers may wait for.
    pub(super) changed: watch::Sender<u64>,
    pub(super) counters: Counters,
    /// When the backend watch last delivered anything (or was (re)started).
    pub(super) activity: Mutex<Instant>,
    /// The resourceVersion of the newest write through this cacher that succeeded
    /// ([`Storage::newest_write`](crate::interfaces::Storage::newest_write)).
    pub(super) newest_write: std::sync::atomic::AtomicU64,
}

impl Shared {
    pub(super) fn read(&self) -> RwLockReadGuard<'_, CacheState> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, CacheState> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn notify(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    pub(super) fn touch_activity(&self) {
        *self.activity.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Whether the backend watch delivered something recently enough that waiting for the
    /// cache to catch up is worth it.
    pub(super) fn backend_active(&self) -> bool {
        self.activity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
            <= self.config.fresh_timeout
    }

    pub(super) fn publish_gauges(&self, st: &CacheState) {
        let c = &self.counters;
        c.ready.store(st.ready, Ordering::Relaxed);
        c.resource_version.store(st.rv, Ordering::Relaxed);
        c.objects.store(st.objects.len() as u64, Ordering::Relaxed);
        c.history.store(st.history.len() as u64, Ordering::Relaxed);
    }

    /// Mark the cache not ready and end every cache watcher (`terminateAllWatchers`).
    pub(super) fn invalidate(&self) {
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
    pub(super) fn bookmark(&self, rv: u64, initial_events_end: bool) -> Value {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({INITIAL_EVENTS_END_ANNOTATION: "true"});
        }
        json!({"apiVersion": self.config.api_version, "kind": self.config.kind, "metadata": meta})
    }

    /// Wait until `cond` holds, at most `timeout`; whether it holds.
    pub(super) async fn wait_for(
        &self,
        timeout: Duration,
        cond: impl Fn(&CacheState) -> bool,
    ) -> bool {
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
    pub(super) async fn wait_consistent(&self, current: u64) -> bool {
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
    pub(super) async fn wait_fresh(&self, rv: u64, current: Option<u64>) -> Result<bool> {
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
    pub(super) fn scope(&self, key: &str, recursive: bool) -> Result<Scope> {
        let key = crate::store::validate_key(key, &self.config.resource_prefix, recursive)?;
        Ok(Scope { key, recursive })
    }

    /// The cached object at `key` when the cache is ready (the `cached_existing` hint).
    pub(super) fn cached_object(&self, key: &str) -> Option<Value> {
        let scope = self.scope(key, false).ok()?;
        let st = self.read();
        if !st.ready {
            return None;
        }
        let obj = st.objects.get(&scope.key).map(|e| e.obj.clone());
        drop(st);
        obj?.into_value().ok()
    }

    pub(super) fn delegated(&self) {
        self.counters
            .reads_delegated
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn served_from_cache(&self) {
        self.counters
            .reads_from_cache
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// A stream whose first and only event is `err`.
pub(super) fn error_stream(err: StorageError) -> WatchStream {
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
    pub(super) shared: Arc<Shared>,
    pub(super) stop: watch::Sender<bool>,
    pub(super) pending_start: Mutex<Option<watch::Receiver<bool>>>,
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
                newest_write: Default::default(),
            }),
            stop,
            pending_start: Mutex::new(Some(stop_rx)),
        };
        cacher.ensure_started();
        cacher
    }

    pub(super) fn ensure_started(&self) {
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

    pub(super) async fn watch_from_cache(
        &self,
        key: &str,
        opts: ListOptions,
    ) -> Result<WatchStream> {
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
            /// The initial events' candidates at `rv`, to be matched without the lock
            /// ([`watch_cache::matches_unlocked`]).
            Match(Vec<(String, crate::SharedObject)>, u64, bool, u64),
        }
        let decision = {
            let st = shared.read();
            if !st.ready {
                Decision::Delegate
            } else if let (Plan::Initial { end_bookmark }, true) =
                (&plan, watch_cache::matches_unlocked(&opts.predicate))
            {
                let candidates = st.candidates_shared(&shared.config, &scope, &opts.predicate);
                Decision::Match(candidates, st.rv, *end_bookmark, st.generation)
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
            Decision::Match(candidates, rv, end_bookmark, generation) => {
                let pred = opts.predicate.clone();
                let objects = tokio::task::spawn_blocking(move || {
                    watch_cache::snapshot_candidates(candidates, &pred)
                })
                .await
                .map_err(|e| StorageError::Internal(format!("watch: {e}")))??;
                let start = watcher::Start::Initial {
                    objects,
                    rv,
                    end_bookmark,
                };
                (start, generation)
            }
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

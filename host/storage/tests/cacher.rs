//! Behaviour of the watch cache ([`Cacher`]) that the conformance suite does not pin: the
//! delegator's read rules (consistent lists from memory, RV=0 ignoring `limit`), the ring
//! buffer (resume, 410 Expired), bookmarks (initial-events-end, periodic), slow watchers,
//! field indexes, and a client-go style reflector that lists and watches through the cache
//! while etcd is killed and restarted under a steady stream of writes.

use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasm_apiserver_storage::cacher::{namespace_key_func, Cacher, CacherConfig};
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::etcd3::{Etcd3, Etcd3Config};
use wasm_apiserver_storage::selection::{default_attrs, FieldRequirement, FieldSelector};
use wasm_apiserver_storage::store::{KvStore, StoreConfig};
use wasm_apiserver_storage::testing::etcd::EtcdServer;
use wasm_apiserver_storage::testing::OwnedReads;
use wasm_apiserver_storage::SharedObject;
use wasm_apiserver_storage::{
    GetOptions, ListOptions, Preconditions, ResourceVersionMatch, SelectionPredicate, Storage,
    StorageError, UpdateOutcome, WatchEvent, WatchStream,
};

mod common;

use common::ETCD_ARGS;
const EVENT_TIMEOUT: Duration = Duration::from_secs(5);

/// A cacher over a fresh backend, the raw store under it, and a store of another resource on
/// the same backend (its writes advance the global revision without events for `/pods`).
struct Env {
    cacher: Arc<Cacher>,
    inner: Arc<dyn Storage>,
    other: Arc<dyn Storage>,
    _keep: Box<dyn std::any::Any + Send>,
}

fn test_config(tune: impl FnOnce(&mut CacherConfig)) -> CacherConfig {
    let mut c = CacherConfig::new("/pods", "v1", "Pod");
    c.key_func = namespace_key_func("/pods");
    c.get_attrs = default_attrs(vec!["spec.nodeName".into()]);
    tune(&mut c);
    c
}

async fn finish_env(
    inner: Arc<dyn Storage>,
    other: Arc<dyn Storage>,
    keep: Box<dyn std::any::Any + Send>,
    tune: impl FnOnce(&mut CacherConfig),
) -> Env {
    let cacher = Arc::new(Cacher::new(inner.clone(), test_config(tune)));
    assert!(
        cacher.wait_ready(Duration::from_secs(10)).await,
        "cache not ready"
    );
    Env {
        cacher,
        inner,
        other,
        _keep: keep,
    }
}

async fn embedded_env(tune: impl FnOnce(&mut CacherConfig)) -> Env {
    embedded_env_with(Duration::from_millis(200), tune).await
}

/// [`embedded_env`] with the store's periodic progress notifications every `progress_interval`.
async fn embedded_env_with(
    progress_interval: Duration,
    tune: impl FnOnce(&mut CacherConfig),
) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let opts = EmbeddedOptions {
        synchronous_full: false,
        progress_interval,
        ..EmbeddedOptions::default()
    };
    let backend = Arc::new(Embedded::open(dir.path(), opts).await.unwrap());
    let inner: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend.clone(),
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let other: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend,
        StoreConfig::new("/registry", "/other", "v1", "Other"),
    ));
    finish_env(inner, other, Box::new(dir), tune).await
}

fn etcd_config(server: &EtcdServer) -> Etcd3Config {
    let mut cfg = Etcd3Config::new([server.endpoint.clone()]);
    cfg.dial_timeout = Duration::from_secs(3);
    cfg.request_timeout = Duration::from_secs(3);
    cfg.health_timeout = Duration::from_secs(1);
    cfg.compaction_interval = None;
    cfg
}

async fn etcd_env(tune: impl FnOnce(&mut CacherConfig)) -> Env {
    let server = tokio::task::spawn_blocking(|| EtcdServer::start_with_args(ETCD_ARGS))
        .await
        .unwrap();
    let backend = Arc::new(Etcd3::connect(etcd_config(&server)).await.unwrap());
    let inner: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend.clone(),
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let other: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend,
        StoreConfig::new("/registry", "/other", "v1", "Other"),
    ));
    finish_env(inner, other, Box::new(server), tune).await
}

fn pod(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": {}})
}

fn pod_on(ns: &str, name: &str, node: &str) -> Value {
    let mut p = pod(ns, name);
    p["spec"]["nodeName"] = json!(node);
    p
}

fn rv(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {obj}"))
}

fn name(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn key_of(obj: &Value) -> String {
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("/pods/{ns}/{}", name(obj))
}

async fn create(s: &dyn Storage, obj: &Value) -> Value {
    s.create(&key_of(obj), obj.clone(), 0).await.unwrap()
}

/// A write outside `/pods`: the global revision moves, the cache sees no event.
async fn bump(env: &Env, i: usize) -> u64 {
    let o = json!({"apiVersion": "v1", "kind": "Other", "metadata": {"name": format!("o{i}")}});
    rv(&env
        .other
        .create(&format!("/other/o{i}"), o, 0)
        .await
        .unwrap())
}

fn replace(
    obj: Value,
) -> impl FnMut(
    Value,
    wasm_apiserver_storage::ResponseMeta,
) -> BoxFuture<'static, Result<UpdateOutcome, StorageError>>
       + Send
       + 'static {
    move |_, _| {
        let out = UpdateOutcome {
            object: obj.clone(),
            ttl: None,
        };
        Box::pin(async move { Ok(out) })
    }
}

async fn update(s: &dyn Storage, obj: &Value) -> Value {
    s.guaranteed_update(
        &key_of(obj),
        false,
        &Preconditions::default(),
        &mut replace(obj.clone()),
        None,
    )
    .await
    .unwrap()
}

async fn delete(s: &dyn Storage, key: &str) -> Result<Value, StorageError> {
    let mut validate =
        |_: Value| -> BoxFuture<'static, Result<(), StorageError>> { Box::pin(async { Ok(()) }) };
    s.delete(key, &Preconditions::default(), &mut validate, None)
        .await
}

fn list_opts(rv: &str, limit: i64) -> ListOptions {
    ListOptions {
        resource_version: rv.into(),
        predicate: SelectionPredicate {
            limit,
            ..SelectionPredicate::default()
        },
        recursive: true,
        ..ListOptions::default()
    }
}

fn watch_opts(rv: &str, bookmarks: bool) -> ListOptions {
    ListOptions {
        resource_version: rv.into(),
        predicate: SelectionPredicate {
            allow_watch_bookmarks: bookmarks,
            ..SelectionPredicate::default()
        },
        recursive: true,
        ..ListOptions::default()
    }
}

async fn next(w: &mut WatchStream) -> WatchEvent {
    tokio::time::timeout(EVENT_TIMEOUT, w.recv())
        .await
        .expect("timed out waiting for a watch event")
        .expect("the watch closed")
}

/// The next non-bookmark event.
async fn next_change(w: &mut WatchStream) -> WatchEvent {
    loop {
        match next(w).await {
            WatchEvent::Bookmark(_) => continue,
            e => return e,
        }
    }
}

fn obj_of(e: &WatchEvent) -> Value {
    match e {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
            o.clone().into_value().expect("the event object decodes")
        }
        WatchEvent::Bookmark(o) => o.clone(),
        WatchEvent::Error(err) => panic!("unexpected ERROR event: {err:?}"),
    }
}

// -------------------------------------------------------------------------------------------
// Consistent reads.
// -------------------------------------------------------------------------------------------

/// kube's `RunTestConsistentList` with `cacheEnabled`: an RV=0 list may lag the global
/// revision, an RV="" list returns exactly the current revision — with consistent reads
/// supported (`from_cache`: the storage reports watch progress on request) served from memory
/// after asking for progress, and an RV=0 list after it sees the synced cache; without
/// (etcd before 3.4.31, kube's `ShouldDelegateConsistentRead`) served by the storage at once.
/// A write followed by a consistent list always sees the write.
async fn consistent_list_waits_for_latest_write(env: Env, from_cache: bool) {
    let c = &*env.cacher;
    let created = create(c, &pod("default", "foo")).await;
    let bumped = bump(&env, 0).await;
    assert_eq!(bumped, rv(&created) + 1);

    let stale = c
        .get_list_owned("/pods/", &list_opts("0", 0))
        .await
        .unwrap();
    assert!(
        stale.resource_version <= bumped,
        "RV=0 list from the future"
    );

    let before = c.stats();
    let started = Instant::now();
    let consistent = c.get_list_owned("/pods/", &list_opts("", 0)).await.unwrap();
    let took = started.elapsed();
    assert_eq!(consistent.resource_version, bumped, "consistent list RV");
    assert_eq!(consistent.items, vec![created.clone()]);
    let after = c.stats();
    if from_cache {
        assert_eq!(
            after.reads_from_cache,
            before.reads_from_cache + 1,
            "the consistent list was not served from the cache: {after:?}"
        );
        // Asked for progress, not waiting out the 3 s freshness timeout.
        assert!(took < Duration::from_secs(1), "took {took:?}");
        let synced = c
            .get_list_owned("/pods/", &list_opts("0", 0))
            .await
            .unwrap();
        assert_eq!(
            synced.resource_version, bumped,
            "RV=0 after a consistent read"
        );
    } else {
        assert_eq!(
            after.reads_from_cache, before.reads_from_cache,
            "a consistent list without RequestWatchProgress goes to the storage: {after:?}"
        );
        assert!(took < Duration::from_secs(1), "took {took:?}");
    }

    // Read your writes, many times in a row, with unrelated writes in between.
    for i in 0..10 {
        let p = create(c, &pod("rw", &format!("p{i}"))).await;
        if i % 3 == 0 {
            bump(&env, i + 1).await;
        }
        let l = c
            .get_list_owned("/pods/rw", &list_opts("", 0))
            .await
            .unwrap();
        assert!(l.items.contains(&p), "consistent list misses the write {p}");
        assert!(l.resource_version >= rv(&p));
        // A get at the write's RV is served from the cache and sees it.
        let g = c
            .get_owned(
                &key_of(&p),
                &GetOptions {
                    resource_version: rv(&p).to_string(),
                    ignore_not_found: false,
                },
            )
            .await
            .unwrap();
        assert_eq!(g, Some(p));
    }
    // A get at a future RV: 504 at once (no 3 s wait).
    let started = Instant::now();
    let e = c
        .get(
            "/pods/default/foo",
            &GetOptions {
                resource_version: "999999".into(),
                ignore_not_found: false,
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(e, StorageError::TooLargeResourceVersion { .. }),
        "{e:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_consistent_list_waits_for_latest_write() {
    // Periodic progress notifications too rare to make any read fresh: only the one the
    // consistent read asks for can.
    consistent_list_waits_for_latest_write(
        embedded_env_with(Duration::from_secs(60), |_| {}).await,
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn etcd3_consistent_list_waits_for_latest_write() {
    consistent_list_waits_for_latest_write(etcd_env(|_| {}).await, false).await;
}

/// RV=0 lists are served from the cache without `limit` (kube's `computeListLimit`); RV=""
/// with a limit is delegated (pages with a continue token); a NotOlderThan list with a limit
/// is paged from memory with a continue token the storage continues.
#[tokio::test(flavor = "multi_thread")]
async fn rv0_list_ignores_limit() {
    let env = embedded_env(|_| {}).await;
    let c = &*env.cacher;
    let mut all = Vec::new();
    for i in 0..5 {
        all.push(create(c, &pod("ns", &format!("p{i}"))).await);
    }
    let last = rv(all.last().unwrap());
    assert!(c.wait_until_fresh(last, Duration::from_secs(5)).await);

    for rvm in [
        ResourceVersionMatch::Unset,
        ResourceVersionMatch::NotOlderThan,
    ] {
        let mut o = list_opts("0", 2);
        o.resource_version_match = rvm;
        let l = c.get_list_owned("/pods/", &o).await.unwrap();
        assert_eq!(l.items, all, "RV=0 ({rvm:?}) must ignore limit");
        assert_eq!(l.continue_token, None);
        assert_eq!(l.remaining_item_count, None);
    }

    let l = c.get_list_owned("/pods/", &list_opts("", 2)).await.unwrap();
    assert_eq!(l.items, all[..2].to_vec());
    assert!(l.continue_token.is_some());
    assert_eq!(l.remaining_item_count, Some(3));

    // NotOlderThan N with a limit: a page from memory, continued by the storage at the
    // cache's RV.
    let mut o = list_opts(&last.to_string(), 2);
    o.resource_version_match = ResourceVersionMatch::NotOlderThan;
    let before = c.stats().reads_from_cache;
    let page1 = c.get_list_owned("/pods/", &o).await.unwrap();
    assert_eq!(c.stats().reads_from_cache, before + 1);
    assert_eq!(page1.items, all[..2].to_vec());
    assert_eq!(page1.remaining_item_count, Some(3));
    let mut items = page1.items.clone();
    let mut token = page1.continue_token.clone();
    while let Some(t) = token {
        let mut o = list_opts("", 2);
        o.predicate.continue_token = t;
        let page = c.get_list_owned("/pods/", &o).await.unwrap();
        assert_eq!(page.resource_version, page1.resource_version, "pinned RV");
        items.extend(page.items);
        token = page.continue_token;
    }
    assert_eq!(items, all);
}

// -------------------------------------------------------------------------------------------
// The ring buffer.
// -------------------------------------------------------------------------------------------

/// A watch from any RV still in the ring buffer gets exactly the events after it, in order;
/// with several watchers over the one backend watch.
#[tokio::test(flavor = "multi_thread")]
async fn watch_from_rv_in_ring_buffer() {
    let env = embedded_env(|c| c.capacity = 50).await;
    let c = &*env.cacher;
    let mut written = Vec::new();
    for i in 0..10 {
        written.push(create(c, &pod("ns", &format!("p{i}"))).await);
    }
    written.push(
        update(c, &{
            let mut p = written[3].clone();
            p["metadata"]["labels"] = json!({"x": "y"});
            p
        })
        .await,
    );
    written.push(delete(c, "/pods/ns/p5").await.unwrap());
    let last = rv(written.last().unwrap());
    assert!(c.wait_until_fresh(last, Duration::from_secs(5)).await);

    for from in [0usize, 2, 7, 10] {
        let start = rv(&written[from]);
        let mut w = c
            .watch("/pods/ns", watch_opts(&start.to_string(), false))
            .await
            .unwrap();
        for (i, want) in written.iter().enumerate().skip(from + 1) {
            let e = next(&mut w).await;
            let want_type = match i {
                10 => "MODIFIED",
                11 => "DELETED",
                _ => "ADDED",
            };
            let got_type = match &e {
                WatchEvent::Added(_) => "ADDED",
                WatchEvent::Modified(_) => "MODIFIED",
                WatchEvent::Deleted(_) => "DELETED",
                _ => "OTHER",
            };
            assert_eq!(got_type, want_type, "event {i} from {start}");
            assert_eq!(&obj_of(&e), want, "event {i} from {start}");
        }
        assert!(
            tokio::time::timeout(Duration::from_millis(300), w.recv())
                .await
                .is_err(),
            "no more events"
        );
    }
}

/// A watch from an RV older than the ring buffer holds gets 410 Expired as its first and
/// only event, then the stream ends.
#[tokio::test(flavor = "multi_thread")]
async fn too_old_rv_gives_expired() {
    let env = embedded_env(|c| c.capacity = 5).await;
    let c = &*env.cacher;
    let mut written = Vec::new();
    for i in 0..12 {
        written.push(create(c, &pod("ns", &format!("p{i}"))).await);
    }
    let last = rv(written.last().unwrap());
    assert!(c.wait_until_fresh(last, Duration::from_secs(5)).await);
    assert_eq!(c.stats().history, 5);

    let mut w = c
        .watch("/pods", watch_opts(&rv(&written[2]).to_string(), false))
        .await
        .unwrap();
    match next(&mut w).await {
        WatchEvent::Error(StorageError::Expired { message, .. }) => {
            assert_eq!(
                message,
                "The resourceVersion for the provided watch is too old."
            )
        }
        other => panic!("expected 410 Expired, got {other:?}"),
    }
    assert!(
        tokio::time::timeout(EVENT_TIMEOUT, w.recv())
            .await
            .unwrap()
            .is_none(),
        "the stream ends after the ERROR"
    );

    // The oldest resumable RV is the last evicted event's: its successors are all kept.
    let oldest_ok = rv(&written[6]);
    let mut w = c
        .watch("/pods", watch_opts(&oldest_ok.to_string(), false))
        .await
        .unwrap();
    for want in &written[7..] {
        assert_eq!(&obj_of(&next(&mut w).await), want);
    }
    // One below it is gone.
    let mut w = c
        .watch("/pods", watch_opts(&(oldest_ok - 1).to_string(), false))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut w).await,
        WatchEvent::Error(StorageError::Expired { .. })
    ));
}

// -------------------------------------------------------------------------------------------
// Bookmarks.
// -------------------------------------------------------------------------------------------

/// Whether `x` and `y` are the same cached object (one allocation, not equal copies).
fn same_object(x: &SharedObject, y: &SharedObject) -> bool {
    match (x, y) {
        (SharedObject::Stored(x), SharedObject::Stored(y)) => Arc::ptr_eq(x, y),
        (SharedObject::Decoded(x), SharedObject::Decoded(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// kube's cacher hands every watcher (and every read from memory) the same cached object: one
/// event is one `Arc`, not a copy per watcher. The cache keeps what the storage handed out:
/// the stored bytes (`SharedObject::Stored`), not a decoded object.
#[tokio::test(flavor = "multi_thread")]
async fn watchers_and_cache_reads_share_one_object() {
    let env = embedded_env(|_| {}).await;
    let c = &*env.cacher;
    let a = create(c, &pod("ns", "a")).await;
    let from = rv(&a).to_string();
    let mut w1 = c.watch("/pods/ns", watch_opts(&from, false)).await.unwrap();
    let mut w2 = c.watch("/pods/", watch_opts(&from, false)).await.unwrap();
    let b = create(c, &pod("ns", "b")).await;
    let shared = |e: WatchEvent| match e {
        WatchEvent::Added(o @ SharedObject::Stored(_)) => o,
        other => panic!("expected ADDED with the cache's stored object, got {other:?}"),
    };
    let (o1, o2) = (shared(next(&mut w1).await), shared(next(&mut w2).await));
    assert_eq!(o1.to_arc().unwrap().as_ref(), &b);
    assert!(same_object(&o1, &o2), "both watchers got the same object");
    let got = c
        .get(
            "/pods/ns/b",
            &GetOptions {
                resource_version: rv(&b).to_string(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert!(same_object(&got, &o1), "a read from memory too: {got:?}");
}

/// sendInitialEvents=true: ADDED for the state at the storage's current RV, then the
/// `k8s.io/initial-events-end` bookmark carrying the cache's RV (the global revision here),
/// then live events.
#[tokio::test(flavor = "multi_thread")]
async fn initial_events_end_bookmark() {
    let env = embedded_env(|_| {}).await;
    let c = &*env.cacher;
    let a = create(c, &pod("ns", "a")).await;
    let b = create(c, &pod("ns", "b")).await;
    let bumped = bump(&env, 0).await;
    let mut o = watch_opts("", true);
    o.send_initial_events = Some(true);
    o.resource_version_match = ResourceVersionMatch::NotOlderThan;
    let mut w = c.watch("/pods/ns", o).await.unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o == a));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o == b));
    match next(&mut w).await {
        WatchEvent::Bookmark(o) => assert_eq!(
            o,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "resourceVersion": bumped.to_string(),
                "annotations": {"k8s.io/initial-events-end": "true"}}})
        ),
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
    let d = create(c, &pod("ns", "d")).await;
    assert!(matches!(next_change(&mut w).await, WatchEvent::Added(o) if o == d));

    // Without allowWatchBookmarks: the same events, no bookmark.
    let mut o = watch_opts("", false);
    o.send_initial_events = Some(true);
    let mut w = c.watch("/pods/ns", o).await.unwrap();
    for want in [&a, &b, &d] {
        assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if &o == want));
    }
    assert!(tokio::time::timeout(Duration::from_millis(300), w.recv())
        .await
        .is_err());
}

/// Periodic bookmarks with the cache's RV (advanced by progress notifications without any
/// event of the resource), shaped like `KvStore`'s; never for watchers that did not ask.
#[tokio::test(flavor = "multi_thread")]
async fn periodic_bookmarks() {
    let env = embedded_env(|c| c.bookmark_interval = Duration::from_millis(300)).await;
    let c = &*env.cacher;
    let p = create(c, &pod("ns", "a")).await;
    let mut with = c
        .watch("/pods", watch_opts(&rv(&p).to_string(), true))
        .await
        .unwrap();
    let mut without = c
        .watch("/pods", watch_opts(&rv(&p).to_string(), false))
        .await
        .unwrap();
    let mut last = rv(&p);
    let mut seen = 0;
    for i in 0..3 {
        let target = bump(&env, i).await;
        // Bookmarks advance to the global revision (through progress notifications).
        loop {
            match next(&mut with).await {
                WatchEvent::Bookmark(o) => {
                    let r = rv(&o);
                    assert!(r >= last, "bookmark RV went back: {r} < {last}");
                    assert_eq!(
                        o,
                        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"resourceVersion": r.to_string()}})
                    );
                    last = r;
                    seen += 1;
                    if r >= target {
                        break;
                    }
                }
                other => panic!("unexpected event {other:?}"),
            }
        }
    }
    assert!(seen >= 3);
    assert!(c.stats().bookmarks_sent >= 3);
    assert!(
        tokio::time::timeout(Duration::from_millis(500), without.recv())
            .await
            .is_err(),
        "a watcher without allowWatchBookmarks got something"
    );
}

// -------------------------------------------------------------------------------------------
// Slow watchers.
// -------------------------------------------------------------------------------------------

/// A watcher that does not read is closed once its channel stays full past the timeout: its
/// stream holds a gap-free prefix of the events, then ends. A reading watcher is unaffected.
#[tokio::test(flavor = "multi_thread")]
async fn slow_watcher_is_closed() {
    let env = embedded_env(|c| {
        c.watcher_buffer = 5;
        c.slow_watcher_timeout = Duration::from_millis(100);
    })
    .await;
    let c = &*env.cacher;
    let start = c.current_resource_version().await.unwrap();
    assert!(c.wait_until_fresh(start, Duration::from_secs(5)).await);
    let mut slow = c
        .watch("/pods", watch_opts(&start.to_string(), false))
        .await
        .unwrap();
    let mut fast = c
        .watch("/pods", watch_opts(&start.to_string(), false))
        .await
        .unwrap();
    assert_eq!(c.stats().watchers, 2);
    let mut written = Vec::new();
    let reader = tokio::spawn(async move {
        let mut got = Vec::new();
        for _ in 0..20 {
            got.push(obj_of(&next(&mut fast).await).clone());
        }
        got
    });
    for i in 0..20 {
        written.push(create(c, &pod("ns", &format!("p{i:02}"))).await);
    }
    assert_eq!(
        reader.await.unwrap(),
        written,
        "the reading watcher got everything"
    );
    // The slow one: a prefix, then the end of the stream.
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.stats().terminated_watchers == 0 {
        assert!(Instant::now() < deadline, "the slow watcher was not closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut got = Vec::new();
    while let Some(e) = tokio::time::timeout(EVENT_TIMEOUT, slow.recv())
        .await
        .unwrap()
    {
        got.push(obj_of(&e).clone());
    }
    assert!(
        !got.is_empty() && got.len() < 20,
        "got {} events",
        got.len()
    );
    assert_eq!(got, written[..got.len()].to_vec(), "a gap-free prefix");
    assert_eq!(c.stats().terminated_watchers, 1);
}

// -------------------------------------------------------------------------------------------
// Indexes.
// -------------------------------------------------------------------------------------------

/// A field selector that pins an indexed field reads the index; the index follows updates
/// and deletes; watches see objects moving in and out of the selection.
#[tokio::test(flavor = "multi_thread")]
async fn index_backed_field_selector() {
    let env = embedded_env(|c| c.indexes = vec!["spec.nodeName".into()]).await;
    let c = &*env.cacher;
    let on_node = |node: &str| SelectionPredicate {
        field: FieldSelector {
            requirements: vec![FieldRequirement {
                field: "spec.nodeName".into(),
                equals: true,
                value: node.into(),
            }],
        },
        get_attrs: Some(default_attrs(vec!["spec.nodeName".into()])),
        ..SelectionPredicate::default()
    };
    let list_on = |node: &str| ListOptions {
        resource_version: "0".into(),
        predicate: on_node(node),
        recursive: true,
        ..ListOptions::default()
    };
    let a1 = create(c, &pod_on("ns1", "a1", "node-a")).await;
    let b1 = create(c, &pod_on("ns1", "b1", "node-b")).await;
    let a2 = create(c, &pod_on("ns2", "a2", "node-a")).await;
    create(c, &pod("ns2", "unassigned")).await;
    assert!(
        c.wait_until_fresh(rv(&a2) + 1, Duration::from_secs(5))
            .await
    );

    let start = c.resource_version();
    let mut w = c
        .watch(
            "/pods",
            ListOptions {
                resource_version: start.to_string(),
                predicate: on_node("node-a"),
                recursive: true,
                ..ListOptions::default()
            },
        )
        .await
        .unwrap();

    let l = c
        .get_list_owned("/pods/", &list_on("node-a"))
        .await
        .unwrap();
    assert_eq!(l.items, vec![a1.clone(), a2.clone()]);
    assert_eq!(c.stats().reads_from_index, 1);
    let l = c
        .get_list_owned("/pods/ns2", &list_on("node-a"))
        .await
        .unwrap();
    assert_eq!(l.items, vec![a2.clone()], "index and scope");
    let l = c
        .get_list_owned("/pods/", &list_on("node-b"))
        .await
        .unwrap();
    assert_eq!(l.items, vec![b1.clone()]);
    let l = c.get_list_owned("/pods/", &list_on("")).await.unwrap();
    assert_eq!(l.items.len(), 1, "the empty value is indexed too");

    // Move a1 to node-b, delete a2, add a3.
    let moved = update(c, &pod_on("ns1", "a1", "node-b")).await;
    let gone = delete(c, "/pods/ns2/a2").await.unwrap();
    let a3 = create(c, &pod_on("ns3", "a3", "node-a")).await;
    assert!(c.wait_until_fresh(rv(&a3), Duration::from_secs(5)).await);
    let l = c
        .get_list_owned("/pods/", &list_on("node-a"))
        .await
        .unwrap();
    assert_eq!(l.items, vec![a3.clone()]);
    let l = c
        .get_list_owned("/pods/", &list_on("node-b"))
        .await
        .unwrap();
    assert_eq!(l.items, vec![moved.clone(), b1.clone()]);
    assert_eq!(c.stats().reads_from_index, 6);

    // The watch: a1 leaves the selection (DELETED with the update's RV), a2 is deleted, a3
    // arrives.
    match next(&mut w).await {
        WatchEvent::Deleted(o) => {
            let mut want = a1.clone();
            want["metadata"]["resourceVersion"] = json!(rv(&moved).to_string());
            assert_eq!(o, want);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(next(&mut w).await, WatchEvent::Deleted(o) if o == gone));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o == a3));
}

// -------------------------------------------------------------------------------------------
// Writes, hints, re-initialisation.
// -------------------------------------------------------------------------------------------

/// Writes go to the storage; a guaranteed update without a hint gets the cached object as
/// its hint (one try_update call when the cache is current).
#[tokio::test(flavor = "multi_thread")]
async fn writes_delegate_with_cached_hint() {
    let env = embedded_env(|_| {}).await;
    let c = &*env.cacher;
    let p = create(c, &pod("ns", "a")).await;
    assert!(c.wait_until_fresh(rv(&p), Duration::from_secs(5)).await);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let mut f = move |cur: Value,
                      _: wasm_apiserver_storage::ResponseMeta|
          -> BoxFuture<'static, Result<UpdateOutcome, StorageError>> {
        s2.lock().unwrap().push(cur.clone());
        let mut next = cur;
        next["metadata"]["labels"] = json!({"v": "2"});
        Box::pin(async move {
            Ok(UpdateOutcome {
                object: next,
                ttl: None,
            })
        })
    };
    let out = c
        .guaranteed_update("/pods/ns/a", false, &Preconditions::default(), &mut f, None)
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().as_slice(), std::slice::from_ref(&p));
    assert!(rv(&out) > rv(&p));
    let stored = env
        .inner
        .get("/pods/ns/a", &GetOptions::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, out);
    assert_eq!(c.count("/pods").await.unwrap(), 1);
    // A stale cache hint costs a retry, never a lost update.
    let fresh = update(&*env.inner, &pod("ns", "a")).await;
    let out = c
        .guaranteed_update(
            "/pods/ns/a",
            false,
            &Preconditions::default(),
            &mut f,
            Some(p),
        )
        .await
        .unwrap();
    assert!(rv(&out) > rv(&fresh));
}

/// Killing etcd ends every cache watcher (kube terminates watchers on re-initialisation);
/// reads go to the storage meanwhile; after the restart the cache re-lists and serves again.
#[tokio::test(flavor = "multi_thread")]
async fn backend_restart_closes_watchers_and_relists() {
    let server = tokio::task::spawn_blocking(|| EtcdServer::start_with_args(ETCD_ARGS))
        .await
        .unwrap();
    let backend = Arc::new(Etcd3::connect(etcd_config(&server)).await.unwrap());
    let inner: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend,
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let c = Cacher::new(inner.clone(), test_config(|_| {}));
    assert!(c.wait_ready(Duration::from_secs(10)).await);
    let p = create(&c, &pod("ns", "a")).await;
    let mut w = c
        .watch("/pods", watch_opts(&rv(&p).to_string(), false))
        .await
        .unwrap();
    let server = Arc::new(Mutex::new(server));
    let s = server.clone();
    tokio::task::spawn_blocking(move || s.lock().unwrap().stop())
        .await
        .unwrap();
    // The stream ends without an ERROR event.
    let end = tokio::time::timeout(Duration::from_secs(20), w.recv())
        .await
        .expect("the watcher was not closed");
    assert!(end.is_none(), "expected the end of the stream, got {end:?}");
    assert!(!c.is_ready());
    assert!(c.readiness_check().await.is_err());
    let s = server.clone();
    tokio::task::spawn_blocking(move || s.lock().unwrap().restart())
        .await
        .unwrap();
    assert!(c.wait_ready(Duration::from_secs(30)).await, "no re-list");
    assert!(c.stats().relists >= 2);
    let l = c.get_list_owned("/pods", &list_opts("0", 0)).await.unwrap();
    assert_eq!(l.items, vec![p]);
    c.readiness_check().await.unwrap();
    drop(c);
    drop(server);
}

// -------------------------------------------------------------------------------------------
// A client-go reflector through a backend restart.
// -------------------------------------------------------------------------------------------

/// One watch stream as the reflector saw it.
struct StreamLog {
    start: u64,
    rvs: Vec<u64>,
}

/// What the reflector knows.
#[derive(Default)]
struct ReflectorState {
    objects: BTreeMap<String, Value>,
    streams: Vec<StreamLog>,
    lists: usize,
    last_rv: u64,
}

/// client-go's `Reflector.ListAndWatch`: list (RV=""), watch from the list's RV with
/// bookmarks; on a closed stream re-watch from the last RV; on an ERROR (e.g. 410) or a
/// failed watch, re-list. Panics on a duplicated or out-of-order event.
async fn reflector(c: Arc<Cacher>, state: Arc<Mutex<ReflectorState>>, stop: Arc<AtomicBool>) {
    let mut need_list = true;
    while !stop.load(Ordering::SeqCst) {
        if need_list {
            match c.get_list_owned("/pods", &list_opts("", 0)).await {
                Ok(l) => {
                    let mut st = state.lock().unwrap();
                    st.objects = l.items.iter().map(|o| (key_of(o), o.clone())).collect();
                    st.last_rv = l.resource_version;
                    st.lists += 1;
                    need_list = false;
                }
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            }
        }
        let from = state.lock().unwrap().last_rv;
        let mut w = match c.watch("/pods", watch_opts(&from.to_string(), true)).await {
            Ok(w) => w,
            Err(_) => {
                need_list = true;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        state.lock().unwrap().streams.push(StreamLog {
            start: from,
            rvs: Vec::new(),
        });
        loop {
            let e = tokio::select! {
                e = w.recv() => e,
                _ = tokio::time::sleep(Duration::from_millis(200)) => {
                    if stop.load(Ordering::SeqCst) { return; }
                    continue;
                }
            };
            let Some(e) = e else {
                break; // closed: re-watch from the last RV
            };
            let mut st = state.lock().unwrap();
            let prev = st
                .streams
                .last()
                .unwrap()
                .rvs
                .last()
                .copied()
                .unwrap_or(from);
            let (obj, kind) = match &e {
                WatchEvent::Error(_) => {
                    need_list = true;
                    break;
                }
                WatchEvent::Bookmark(_) => (obj_of(&e), "BOOKMARK"),
                WatchEvent::Added(_) => (obj_of(&e), "ADDED"),
                WatchEvent::Modified(_) => (obj_of(&e), "MODIFIED"),
                WatchEvent::Deleted(_) => (obj_of(&e), "DELETED"),
            };
            let r = rv(&obj);
            if kind == "BOOKMARK" {
                assert!(r >= prev, "bookmark {r} behind {prev}");
                st.last_rv = st.last_rv.max(r);
                continue;
            }
            assert!(
                r > prev,
                "{kind} at {r} after {prev}: duplicated or out of order"
            );
            st.streams.last_mut().unwrap().rvs.push(r);
            let key = key_of(&obj);
            match kind {
                "ADDED" => assert!(
                    st.objects.insert(key.clone(), obj.clone()).is_none(),
                    "ADDED for existing {key} at {r}"
                ),
                "MODIFIED" => {
                    let old = st.objects.insert(key.clone(), obj.clone());
                    assert!(
                        old.as_ref().is_some_and(|o| rv(o) < r),
                        "MODIFIED {key} at {r} over {old:?}"
                    );
                }
                _ => assert!(
                    st.objects.remove(&key).is_some(),
                    "DELETED missing {key} at {r}"
                ),
            }
            st.last_rv = r;
        }
    }
}

/// A successful write as the writer saw it.
struct Write {
    rv: u64,
}

#[tokio::test(flavor = "multi_thread")]
async fn reflector_survives_backend_restart() {
    let server = tokio::task::spawn_blocking(|| EtcdServer::start_with_args(ETCD_ARGS))
        .await
        .unwrap();
    let backend = Arc::new(Etcd3::connect(etcd_config(&server)).await.unwrap());
    let inner: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend,
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    // Watches wait for the re-initialised cache rather than going to etcd meanwhile, so every
    // stream below is a cache watcher.
    let cacher = Arc::new(Cacher::new(
        inner.clone(),
        test_config(|c| {
            c.bookmark_interval = Duration::from_millis(500);
            c.ready_timeout = Duration::from_secs(30);
        }),
    ));
    assert!(cacher.wait_ready(Duration::from_secs(10)).await);

    let state = Arc::new(Mutex::new(ReflectorState::default()));
    let stop_reflector = Arc::new(AtomicBool::new(false));
    let refl = tokio::spawn(reflector(
        cacher.clone(),
        state.clone(),
        stop_reflector.clone(),
    ));

    // The writer: creates, updates and deletes over 15 names, through the cacher.
    let stop_writer = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(Mutex::new(Vec::<Write>::new()));
    let writer = {
        let c = cacher.clone();
        let stop = stop_writer.clone();
        let writes = writes.clone();
        tokio::spawn(async move {
            let mut i: u64 = 0;
            let mut failures = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let n = format!("p{}", (i * 7) % 15);
                let key = format!("/pods/ns/{n}");
                let r = match i % 4 {
                    0 => delete(&*c, &key).await,
                    _ => {
                        let mut p = pod("ns", &n);
                        p["metadata"]["labels"] = json!({"i": i.to_string()});
                        c.guaranteed_update(
                            &key,
                            true,
                            &Preconditions::default(),
                            &mut replace(p),
                            None,
                        )
                        .await
                    }
                };
                match r {
                    Ok(o) => writes.lock().unwrap().push(Write { rv: rv(&o) }),
                    Err(e) if e.is_not_found() => {}
                    Err(_) => {
                        failures += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            failures
        })
    };

    tokio::time::sleep(Duration::from_secs(2)).await;
    let server = Arc::new(Mutex::new(server));
    let s = server.clone();
    tokio::task::spawn_blocking(move || s.lock().unwrap().stop())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let s = server.clone();
    tokio::task::spawn_blocking(move || s.lock().unwrap().restart())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop_writer.store(true, Ordering::SeqCst);
    let failures = writer.await.unwrap();
    let writes = std::mem::take(&mut *writes.lock().unwrap());
    assert!(writes.len() > 50, "only {} writes", writes.len());
    assert!(failures > 0, "the restart did not disturb the writer");

    // The reflector converges to the backend's state.
    let truth = inner
        .get_list_owned("/pods", &list_opts("", 0))
        .await
        .unwrap();
    let want: BTreeMap<String, Value> =
        truth.items.iter().map(|o| (key_of(o), o.clone())).collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        {
            let st = state.lock().unwrap();
            if st.objects == want && st.last_rv >= truth.resource_version {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the reflector did not converge: have {:?}, want {:?}",
            state.lock().unwrap().objects.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        cacher.stats().watchers,
        1,
        "the reflector watches the cache"
    );
    stop_reflector.store(true, Ordering::SeqCst);
    refl.await.unwrap();

    // No event lost: every acknowledged write inside a stream's window is in that stream.
    let st = state.lock().unwrap();
    let mut checked = 0;
    for s in &st.streams {
        let Some(&end) = s.rvs.last() else { continue };
        let seen: std::collections::BTreeSet<u64> = s.rvs.iter().copied().collect();
        for w in writes.iter().filter(|w| w.rv > s.start && w.rv <= end) {
            assert!(
                seen.contains(&w.rv),
                "the write at {} is missing from the stream ({}, {end}]",
                w.rv,
                s.start
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
    assert!(st.streams.len() >= 2, "the restart did not end a stream");
    assert!(cacher.stats().relists >= 2, "{:?}", cacher.stats());
    eprintln!(
        "writes {}, write failures {failures}, streams {}, lists {}, checked {checked}, stats {:?}",
        writes.len(),
        st.streams.len(),
        st.lists,
        cacher.stats()
    );
    drop(st);
    drop(cacher);
    drop(server);
}

/// Lists through `get_list` hand out the cached objects themselves (no copy): two lists
/// of an unchanged cache share every object, and equal what `get_list` copies.
#[tokio::test(flavor = "multi_thread")]
async fn shared_lists_hand_out_cached_objects_without_copying() {
    let env = embedded_env(|_| {}).await;
    let c = &*env.cacher;
    let mut last = 0;
    for i in 0..5 {
        last = rv(&create(c, &pod("ns", &format!("p{i}"))).await);
    }
    assert!(c.wait_until_fresh(last, Duration::from_secs(5)).await);
    let a = c.get_list("/pods", &list_opts("0", 0)).await.unwrap();
    let b = c.get_list("/pods", &list_opts("0", 0)).await.unwrap();
    assert_eq!(a.items.len(), 5);
    for (x, y) in a.items.iter().zip(&b.items) {
        assert!(
            matches!(x, SharedObject::Stored(_)),
            "the cache hands out the stored bytes: {x:?}"
        );
        assert!(same_object(x, y), "the same cached object, not a copy");
    }
    let owned = c.get_list_owned("/pods", &list_opts("0", 0)).await.unwrap();
    let shared: Vec<serde_json::Value> = a
        .items
        .into_iter()
        .map(|o| o.into_value().unwrap())
        .collect();
    assert_eq!(owned.items, shared);
    assert_eq!(owned.resource_version, a.resource_version);
}

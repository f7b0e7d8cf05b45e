//! The `Backend` conformance cases: etcd's primitives as every backend must provide them,
//! written once and run on the embedded store (`tests/embedded_backend.rs`) and on a real etcd
//! (`tests/etcd3_backend.rs`). Each case wants a backend of its own (it asserts the whole key
//! space and revisions relative to the backend's current one) and panics on the first failed
//! assertion. The semantics are etcd's (`go.etcd.io/etcd/server/mvcc` and the `clientv3` txn
//! the etcd3 store uses: `mod_revision(key) == N` compares, `WithPrevKV`, ranges with limit,
//! count and more at a revision).

use crate::backend::{prefix_end, Backend, EventType, KvEvent, WatchReceiver, WatchResponse};
use crate::errors::BackendError;
use std::time::{Duration, Instant};

/// Compare-and-put and compare-and-delete: creates (`expected` 0), updates and deletes at the
/// right `mod_revision`, stale ones refused with the current value and no revision consumed,
/// deletes returning the deleted value at the delete's revision, a re-created key starting a
/// new life, and the empty key refused.
pub async fn run_compare_and_revisions<B: Backend>(b: &B) {
    let start = b.current_revision().await.unwrap();
    assert!(start >= 1);

    // Create: mod_revision(key) == 0 matches an absent key.
    let created = b.put_if("/a", 0, b"v1".to_vec(), 0).await.unwrap();
    assert!(created.succeeded);
    assert_eq!(created.revision, start + 1);
    assert!(created.kv.is_none());
    let r1 = created.revision;
    let got = b.range("/a", "", 0, 0).await.unwrap();
    assert_eq!((got.kvs.len(), got.count, got.more), (1, 1, false));
    assert_eq!(got.header_revision, r1);
    let kv = &got.kvs[0];
    assert_eq!((kv.key.as_str(), kv.value.as_slice()), ("/a", &b"v1"[..]));
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version, kv.lease),
        (r1, r1, 1, 0)
    );

    // A second create fails, returns the current value and consumes no revision.
    let again = b.put_if("/a", 0, b"other".to_vec(), 0).await.unwrap();
    assert!(!again.succeeded);
    assert_eq!(again.revision, r1);
    assert_eq!(again.kv.as_ref().unwrap().value, b"v1");
    assert_eq!(again.kv.as_ref().unwrap().mod_revision, r1);
    assert_eq!(b.current_revision().await.unwrap(), r1);

    // Update with the right revision.
    let updated = b.put_if("/a", r1, b"v2".to_vec(), 0).await.unwrap();
    assert!(updated.succeeded);
    let r2 = updated.revision;
    assert_eq!(r2, r1 + 1);
    let kv = b.range("/a", "", 0, 0).await.unwrap().kvs.remove(0);
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (r1, r2, 2)
    );

    // Stale update: no write, the current value returned.
    let stale = b.put_if("/a", r1, b"v3".to_vec(), 0).await.unwrap();
    assert!(!stale.succeeded);
    assert_eq!(stale.revision, r2);
    assert_eq!(stale.kv.unwrap().value, b"v2");
    // An update of a missing key with a non-zero expectation fails with no value.
    let missing = b.put_if("/missing", r2, b"v".to_vec(), 0).await.unwrap();
    assert!(!missing.succeeded);
    assert!(missing.kv.is_none());

    // Stale delete, then a delete returning the previous value at the delete revision.
    let stale_delete = b.delete_if("/a", r1).await.unwrap();
    assert!(!stale_delete.succeeded);
    assert_eq!(stale_delete.kv.unwrap().mod_revision, r2);
    let deleted = b.delete_if("/a", r2).await.unwrap();
    assert!(deleted.succeeded);
    assert_eq!(deleted.revision, r2 + 1);
    let prev = deleted.kv.unwrap();
    assert_eq!((prev.value.as_slice(), prev.mod_revision), (&b"v2"[..], r2));
    assert!(b.range("/a", "", 0, 0).await.unwrap().kvs.is_empty());
    assert_eq!(b.current_revision().await.unwrap(), r2 + 1);

    // A delete of a missing key: with a non-zero expectation it fails with no value; expecting
    // 0 it "succeeds" without consuming a revision (etcd's txn: the compare holds, nothing is
    // deleted).
    let missing = b.delete_if("/missing", 5).await.unwrap();
    assert!(!missing.succeeded);
    assert!(missing.kv.is_none());
    assert_eq!(missing.revision, r2 + 1);
    let absent = b.delete_if("/a", 0).await.unwrap();
    assert!(absent.succeeded);
    assert_eq!(absent.revision, r2 + 1);

    // Re-create after delete: a new life (create revision and version reset).
    let recreated = b.put_if("/a", 0, b"v4".to_vec(), 0).await.unwrap();
    assert!(recreated.succeeded);
    assert_eq!(recreated.revision, r2 + 2);
    let kv = b.range("/a", "", 0, 0).await.unwrap().kvs.remove(0);
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (recreated.revision, recreated.revision, 1)
    );
    assert_eq!(b.current_revision().await.unwrap(), recreated.revision);
    assert_eq!(
        b.count("/", &prefix_end("/")).await.unwrap(),
        (1, recreated.revision)
    );
    // The empty key is refused.
    assert!(b.put_if("", 0, Vec::new(), 0).await.is_err());
    b.health().await.unwrap();
}

/// Ranges: a page of `limit` keys with the count and `more` of the whole range, the next page
/// from after the last key pinned at the first page's revision, exactly `limit` keys left (no
/// `more`), no limit, the `"\0"` end (every key from the start), single, missing and empty
/// ranges, `count`, reads at past revisions after updates and deletes (the header stays the
/// current revision), a future revision refused with the current one, the whole key space.
pub async fn run_range_limit_count_more_and_past_revisions<B: Backend>(b: &B) {
    let mut revs = Vec::new();
    for i in 0..10 {
        let r = b
            .put_if(&format!("/p/{i}"), 0, format!("v{i}").into_bytes(), 0)
            .await
            .unwrap();
        revs.push(r.revision);
    }
    let outside = b.put_if("/q", 0, b"outside".to_vec(), 0).await.unwrap();
    let end = prefix_end("/p/");

    let page = b.range("/p/", &end, 3, 0).await.unwrap();
    let keys: Vec<_> = page.kvs.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(keys, ["/p/0", "/p/1", "/p/2"]);
    assert!(page.more);
    assert_eq!(page.count, 10);
    assert_eq!(page.header_revision, outside.revision);

    // The next page starts after the last key (key + "\0"), pinned at the first page's revision.
    let next = b
        .range("/p/2\0", &end, 3, page.header_revision)
        .await
        .unwrap();
    assert_eq!(next.kvs[0].key, "/p/3");
    assert_eq!(next.count, 7);
    // Exactly the limit left: no more.
    let last = b.range("/p/7", &end, 3, 0).await.unwrap();
    assert_eq!((last.kvs.len(), last.more, last.count), (3, false, 3));
    let exact = b.range("/p/", &end, 10, 0).await.unwrap();
    assert!(!exact.more);
    // No limit.
    let all = b.range("/p/", &end, 0, 0).await.unwrap();
    assert_eq!((all.kvs.len(), all.more, all.count), (10, false, 10));
    // The "\0" end: everything from the start key on.
    let tail = b.range("/p/5", "\0", 0, 0).await.unwrap();
    assert_eq!(tail.kvs.len(), 6);
    assert_eq!(tail.kvs.last().unwrap().key, "/q");
    // Single key, missing key, empty range.
    assert_eq!(b.range("/p/4", "", 0, 0).await.unwrap().kvs.len(), 1);
    assert_eq!(b.range("/p/44", "", 0, 0).await.unwrap().count, 0);
    assert_eq!(b.range("/z", "/a", 0, 0).await.unwrap().count, 0);
    assert_eq!(b.count("/p/", &end).await.unwrap(), (10, outside.revision));

    // Change history, then read the past.
    let changed = b
        .put_if("/p/0", revs[0], b"changed".to_vec(), 0)
        .await
        .unwrap();
    assert!(changed.succeeded);
    assert!(b.delete_if("/p/1", revs[1]).await.unwrap().succeeded);
    let past = b.range("/p/", &end, 0, revs[9]).await.unwrap();
    assert_eq!(past.count, 10);
    assert_eq!(past.kvs[0].value, b"v0");
    assert_eq!(
        past.header_revision,
        changed.revision + 1,
        "the header is the current revision"
    );
    let older = b.range("/p/", &end, 0, revs[4]).await.unwrap();
    assert_eq!(older.count, 5);
    let now = b.range("/p/", &end, 0, 0).await.unwrap();
    assert_eq!(now.count, 9);
    assert_eq!(now.kvs[0].value, b"changed");

    // A future revision: FutureRevision(current).
    let current = b.current_revision().await.unwrap();
    match b.range("/p/", &end, 0, current + 1).await {
        Err(BackendError::FutureRevision(cur)) => assert_eq!(cur, current),
        other => panic!("expected FutureRevision({current}), got {other:?}"),
    }
    // The whole key space ("\0" to "\0").
    let everything = b.range("\0", "\0", 0, 0).await.unwrap();
    assert_eq!(everything.count, 10);
}

/// Receive the next watch message within `secs` seconds. Panics on timeout or a closed watch.
pub async fn recv(rx: &mut WatchReceiver, secs: u64) -> WatchResponse {
    tokio::time::timeout(Duration::from_secs(secs), rx.recv())
        .await
        .expect("a watch message in time")
        .expect("the watch is open")
}

/// Collect `n` events within `secs` seconds (progress notifications skipped). Panics on an
/// error, a closed watch or a timeout.
pub async fn events(rx: &mut WatchReceiver, n: usize, secs: u64) -> Vec<KvEvent> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut out = Vec::new();
    while out.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, rx.recv()).await {
            Ok(Some(WatchResponse::Events(evs))) => out.extend(evs),
            Ok(Some(WatchResponse::Progress(_))) => {}
            Ok(Some(WatchResponse::Error(e))) => {
                panic!("watch error after {} events: {e}", out.len())
            }
            Ok(None) => panic!("watch closed after {} events", out.len()),
            Err(_) => panic!("timed out with {} of {n} events", out.len()),
        }
    }
    out
}

/// Watches: a replay from a past revision with previous values (a create has none, an update
/// the value before, a delete an empty value at the delete's revision and the deleted value),
/// then live events on the same watch; a watch from 0 starts now; a non-recursive watch sees
/// its key only (not a longer key with it as prefix); a watch from a future revision waits for
/// it; dropping a receiver leaves the other watches running.
pub async fn run_watch_with_prev_kv<B: Backend>(b: &B) {
    let created = b
        .put_if("/w/a", 0, b"v1".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    let updated = b
        .put_if("/w/a", created, b"v2".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    b.put_if("/other", 0, b"x".to_vec(), 0).await.unwrap();
    let deleted = b.delete_if("/w/a", updated).await.unwrap().revision;

    let mut replay = b.watch("/w/", true, created, false).await.unwrap();
    let evs = events(&mut replay, 3, 10).await;
    assert_eq!(evs.len(), 3);
    assert_eq!(evs[0].event_type, EventType::Put);
    assert_eq!((evs[0].kv.mod_revision, evs[0].kv.version), (created, 1));
    assert!(evs[0].prev_kv.is_none());
    assert_eq!(evs[1].event_type, EventType::Put);
    assert_eq!(evs[1].kv.value, b"v2");
    assert_eq!(evs[1].prev_kv.as_ref().unwrap().value, b"v1");
    assert_eq!(evs[2].event_type, EventType::Delete);
    assert_eq!(
        (evs[2].kv.key.as_str(), evs[2].kv.mod_revision),
        ("/w/a", deleted)
    );
    assert!(evs[2].kv.value.is_empty());
    let prev = evs[2].prev_kv.as_ref().unwrap();
    assert_eq!(
        (prev.value.as_slice(), prev.mod_revision),
        (&b"v2"[..], updated)
    );

    // Live events continue on the same watch; a watch from 0 starts now; a non-recursive
    // watch sees only its key.
    let mut single = b.watch("/w/b", false, 0, false).await.unwrap();
    let mut live = b.watch("/w/", true, 0, false).await.unwrap();
    b.put_if("/w/c", 0, b"c".to_vec(), 0).await.unwrap();
    let put_b = b
        .put_if("/w/b", 0, b"b".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    b.put_if("/w/bb", 0, b"bb".to_vec(), 0).await.unwrap();
    let evs = events(&mut replay, 2, 10).await;
    assert_eq!(
        (evs[0].kv.key.as_str(), evs[1].kv.key.as_str()),
        ("/w/c", "/w/b")
    );
    let evs = events(&mut live, 3, 10).await;
    let keys: Vec<_> = evs.iter().map(|e| e.kv.key.as_str()).collect();
    assert_eq!(keys, ["/w/c", "/w/b", "/w/bb"]);
    let evs = events(&mut single, 1, 10).await;
    assert_eq!(
        (evs[0].kv.key.as_str(), evs[0].kv.mod_revision),
        ("/w/b", put_b)
    );
    let deleted_b = b.delete_if("/w/b", put_b).await.unwrap().revision;
    let evs = events(&mut single, 1, 10).await;
    assert_eq!(
        (evs[0].event_type, evs[0].kv.mod_revision),
        (EventType::Delete, deleted_b)
    );
    assert_eq!(evs[0].prev_kv.as_ref().unwrap().value, b"b");

    // A future start revision waits for it.
    let now = b.current_revision().await.unwrap();
    let mut future = b.watch("/w/", true, now + 2, false).await.unwrap();
    b.put_if("/w/f1", 0, Vec::new(), 0).await.unwrap();
    b.put_if("/w/f2", 0, Vec::new(), 0).await.unwrap();
    let evs = events(&mut future, 1, 10).await;
    assert_eq!(
        (evs[0].kv.key.as_str(), evs[0].kv.mod_revision),
        ("/w/f2", now + 2)
    );

    // Dropping receivers leaves the other watches running.
    drop(replay);
    drop(single);
    b.put_if("/w/d", 0, b"d".to_vec(), 0).await.unwrap();
    let evs = events(&mut live, 1 + 2 + 1, 10).await;
    assert_eq!(evs.last().unwrap().kv.key, "/w/d");
}

/// Progress notifications: an idle watch asking for them gets the current revision, which a
/// write outside the watched range advances; a watch not asking gets nothing while idle. The
/// backend must notify at least every few seconds.
pub async fn run_progress_notify<B: Backend>(b: &B) {
    let rev = b
        .put_if("/pn/a", 0, b"x".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    let mut rx = b.watch("/pn/", true, rev + 1, true).await.unwrap();
    match recv(&mut rx, 10).await {
        WatchResponse::Progress(r) => assert_eq!(r, rev),
        other => panic!("expected a progress notification, got {other:?}"),
    }
    let elsewhere = b.put_if("/pq/a", 0, Vec::new(), 0).await.unwrap().revision;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match recv(&mut rx, 10).await {
            WatchResponse::Progress(r) if r == elsewhere => break,
            WatchResponse::Progress(r) if r == rev => assert!(Instant::now() < deadline),
            other => panic!("expected progress at {elsewhere}, got {other:?}"),
        }
    }
    let mut quiet = b.watch("/pn/", true, 0, false).await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(800), quiet.recv())
            .await
            .is_err(),
        "a watch without progress_notify stays quiet while idle"
    );
}

/// TTL: a key written with a TTL carries a lease and expires as a delete event with the
/// previous value; a TTL key overwritten without a TTL loses its lease and stays.
pub async fn run_ttl_expiry<B: Backend>(b: &B) {
    let mut rx = b.watch("/ttl/", true, 0, false).await.unwrap();
    let put = b.put_if("/ttl/e", 0, b"event".to_vec(), 1).await.unwrap();
    assert!(put.succeeded);
    let kv = b.range("/ttl/e", "", 0, 0).await.unwrap().kvs.remove(0);
    assert_ne!(kv.lease, 0, "a lease is attached");
    let kept = b.put_if("/ttl/kept", 0, b"y".to_vec(), 1).await.unwrap();
    b.put_if("/ttl/kept", kept.revision, b"z".to_vec(), 0)
        .await
        .unwrap();
    let started = Instant::now();
    // etcd's minimum lease TTL is a few seconds and expiry is checked every 500 ms.
    let mut expired = None;
    while expired.is_none() {
        let evs = events(&mut rx, 1, 15).await;
        expired = evs.into_iter().find(|e| e.event_type == EventType::Delete);
    }
    let ev = expired.unwrap();
    assert_eq!(ev.kv.key, "/ttl/e");
    assert_eq!(ev.prev_kv.unwrap().value, b"event");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(b.range("/ttl/e", "", 0, 0).await.unwrap().kvs.is_empty());
    // The overwritten key outlives its first lease.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let kv = b.range("/ttl/kept", "", 0, 0).await.unwrap().kvs.remove(0);
    assert_eq!((kv.value.as_slice(), kv.lease), (&b"z"[..], 0));
}

/// Compaction: a future revision is refused with the current one; after compacting, the
/// compacted revision is reported, compacting again at or below it is `Compacted`, reads below
/// it are `Compacted` while the compacted revision itself and later ones stay readable, a
/// watch from below it gets one `Compacted` error and ends, and a watch from just above it
/// replays with previous values. (Whether a watch may start exactly at the compacted revision
/// differs: etcd replays it, the embedded store refuses it; each backend's own tests say so.)
pub async fn run_compaction<B: Backend>(b: &B) {
    let first = b
        .put_if("/c/a", 0, b"1".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    let second = b
        .put_if("/c/a", first, b"2".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    let third = b
        .put_if("/c/a", second, b"3".to_vec(), 0)
        .await
        .unwrap()
        .revision;
    assert_eq!(b.compacted_revision(), 0);

    match b.compact(third + 100).await {
        Err(BackendError::FutureRevision(cur)) => assert_eq!(cur, third),
        other => panic!("expected FutureRevision({third}), got {other:?}"),
    }
    b.compact(second).await.unwrap();
    assert_eq!(b.compacted_revision(), second);
    match b.compact(second).await {
        Err(BackendError::Compacted(rev)) => assert_eq!(rev, second),
        other => panic!("expected Compacted({second}), got {other:?}"),
    }
    assert!(matches!(
        b.compact(first).await,
        Err(BackendError::Compacted(_))
    ));

    match b.range("/c/", &prefix_end("/c/"), 0, first).await {
        Err(BackendError::Compacted(rev)) => assert_eq!(rev, second),
        other => panic!("expected Compacted({second}), got {other:?}"),
    }
    let at = b.range("/c/a", "", 0, second).await.unwrap();
    assert_eq!(at.kvs[0].value, b"2");
    let at = b.range("/c/a", "", 0, third).await.unwrap();
    assert_eq!(at.kvs[0].value, b"3");

    let mut rx = b.watch("/c/", true, first, false).await.unwrap();
    match recv(&mut rx, 10).await {
        WatchResponse::Error(BackendError::Compacted(rev)) => assert_eq!(rev, second),
        other => panic!("expected a Compacted error, got {other:?}"),
    }
    let end = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await;
    assert!(
        matches!(end, Ok(None)),
        "the watch ends after the error: {end:?}"
    );

    let mut rx = b.watch("/c/", true, second + 1, false).await.unwrap();
    let evs = events(&mut rx, 1, 10).await;
    assert_eq!(evs[0].kv.mod_revision, third);
    assert_eq!(evs[0].prev_kv.as_ref().unwrap().value, b"2");
}

//! The `Backend` conformance cases: etcd's primitives as every backend must provide them,
//! written once and run on the embedded store (`tests/embedded_backend.rs`) and on a real etcd
//! (`tests/etcd3_backend.rs`). Each case wants a backend of its own (it asserts the whole key
//! space and revisions relative to the backend's current one) and panics on the first failed
//! assertion. The semantics are etcd's (`go.etcd.io/etcd/server/mvcc` and the `clientv3` txn
//! the etcd3 store uses: `mod_revision(key) == N` compares, `WithPrevKV`, ranges with limit,
//! count and more at a revision).

use crate::backend::{prefix_end, Backend};
use crate::errors::BackendError;

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

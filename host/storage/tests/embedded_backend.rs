//! The embedded (SQLite) backend: the `Backend` conformance cases every backend runs
//! (`testing::backend_tests`: compares and revisions, ranges, compaction, watches with previous
//! values, progress notifications, TTL expiry), then what is this backend's own — a fresh store's
//! revision, concurrent writers, ranges at every past revision of a random workload, physical
//! compaction, replay under live writes, slow watchers, reopen, the directory lock, crash safety
//! under SIGKILL, a full disk.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasm_apiserver_storage::backend::{prefix_end, Backend, EventType, KeyValue, WatchResponse};
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::testing::backend_tests;
use wasm_apiserver_storage::BackendError;

async fn open(dir: &Path) -> Embedded {
    Embedded::open(dir, EmbeddedOptions::default())
        .await
        .expect("open")
}

async fn open_with(dir: &Path, f: impl FnOnce(&mut EmbeddedOptions)) -> Embedded {
    let mut o = EmbeddedOptions::default();
    f(&mut o);
    Embedded::open(dir, o).await.expect("open")
}

async fn get(s: &Embedded, key: &str) -> Option<KeyValue> {
    let r = s.range(key, "", 0, 0).await.expect("range");
    assert!(r.kvs.len() <= 1);
    r.kvs.into_iter().next()
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_store_is_at_revision_one_and_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    assert_eq!(s.current_revision().await.unwrap(), 1);
    assert_eq!(s.compacted_revision(), 0);
    s.health().await.unwrap();
    let r = s.range("/a", "\0", 0, 0).await.unwrap();
    assert!(r.kvs.is_empty());
    assert_eq!((r.count, r.more, r.header_revision), (0, false, 1));
    assert_eq!(s.count("/", "\0").await.unwrap(), (0, 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn compares_and_revisions() {
    let dir = tempfile::tempdir().unwrap();
    backend_tests::run_compare_and_revisions(&open(dir.path()).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_writes_take_consecutive_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(open(dir.path()).await);
    let mut tasks = Vec::new();
    for t in 0..16 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let mut revs = Vec::new();
            for i in 0..50 {
                let r = s
                    .put_if(&format!("/c/{t:02}/{i:03}"), 0, vec![7; 100], 0)
                    .await
                    .unwrap();
                assert!(r.succeeded);
                revs.push(r.revision);
            }
            // Conflicting creates on one shared key: exactly one wins.
            let r = s.put_if("/c/shared", 0, vec![t], 0).await.unwrap();
            if r.succeeded {
                revs.push(r.revision);
            }
            revs
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    let expected: Vec<i64> = (2..2 + 16 * 50 + 1).collect();
    assert_eq!(all, expected);
    assert_eq!(s.current_revision().await.unwrap(), 16 * 50 + 1 + 1);
    assert_eq!(s.count("/c/", &prefix_end("/c/")).await.unwrap().0, 801);
}

#[tokio::test(flavor = "multi_thread")]
async fn range_limit_count_more_and_past_revisions() {
    let dir = tempfile::tempdir().unwrap();
    backend_tests::run_range_limit_count_more_and_past_revisions(&open(dir.path()).await).await;
}

/// A model of the store: the full map after every revision.
struct Model {
    states: BTreeMap<i64, BTreeMap<String, KeyValue>>,
}

impl Model {
    fn at(&self, rev: i64) -> &BTreeMap<String, KeyValue> {
        self.states.range(..=rev).next_back().unwrap().1
    }
}

/// Deterministic mixed workload (creates, updates, deletes on a small key set), recording the
/// expected state after every revision.
async fn mixed_workload(s: &Embedded, steps: usize, seed: u64) -> Model {
    let mut state: BTreeMap<String, KeyValue> = BTreeMap::new();
    let mut states = BTreeMap::new();
    states.insert(s.current_revision().await.unwrap(), state.clone());
    let mut x = seed;
    for step in 0..steps {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = format!("/m/{:02}", (x >> 33) % 20);
        let value = format!("v{step}").into_bytes();
        let existing = state.get(&key).cloned();
        match existing {
            Some(kv) if (x >> 20).is_multiple_of(3) => {
                let r = s.delete_if(&key, kv.mod_revision).await.unwrap();
                assert!(r.succeeded);
                state.remove(&key);
                states.insert(r.revision, state.clone());
            }
            Some(kv) => {
                let r = s
                    .put_if(&key, kv.mod_revision, value.clone(), 0)
                    .await
                    .unwrap();
                assert!(r.succeeded);
                state.insert(
                    key.clone(),
                    KeyValue {
                        key,
                        value,
                        create_revision: kv.create_revision,
                        mod_revision: r.revision,
                        version: kv.version + 1,
                        lease: 0,
                    },
                );
                states.insert(r.revision, state.clone());
            }
            None => {
                let r = s.put_if(&key, 0, value.clone(), 0).await.unwrap();
                assert!(r.succeeded);
                state.insert(
                    key.clone(),
                    KeyValue {
                        key,
                        value,
                        create_revision: r.revision,
                        mod_revision: r.revision,
                        version: 1,
                        lease: 0,
                    },
                );
                states.insert(r.revision, state.clone());
            }
        }
        // An unrelated key outside the range under test.
        if step % 7 == 0 {
            let r = s.put_if(&format!("/n/{step}"), 0, vec![], 0).await.unwrap();
            states.insert(r.revision, state.clone());
        }
    }
    Model { states }
}

async fn check_range_at(s: &Embedded, model: &Model, rev: i64) {
    let expected: Vec<KeyValue> = model.at(rev).values().cloned().collect();
    let end = prefix_end("/m/");
    let r = s.range("/m/", &end, 0, rev).await.unwrap();
    assert_eq!(r.kvs, expected, "range at {rev}");
    assert_eq!(r.count, expected.len() as i64);
    // etcd's header: the current revision, whatever revision the range was read at.
    assert_eq!(r.header_revision, s.current_revision().await.unwrap());
    // Paged with limit 3, pinned to the revision.
    let mut got = Vec::new();
    let mut start = "/m/".to_string();
    loop {
        let r = s.range(&start, &end, 3, rev).await.unwrap();
        assert_eq!(
            r.count,
            (expected.len() - got.len()) as i64,
            "count at {rev}"
        );
        got.extend(r.kvs.iter().cloned());
        if !r.more {
            break;
        }
        start = format!("{}\0", r.kvs.last().unwrap().key);
    }
    assert_eq!(got, expected, "paged range at {rev}");
    // A single key at that revision.
    for key in ["/m/03", "/m/11"] {
        let r = s.range(key, "", 0, rev).await.unwrap();
        assert_eq!(r.kvs.first(), model.at(rev).get(key), "{key} at {rev}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn range_at_past_revisions_after_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let model = mixed_workload(&s, 300, 42).await;
    let current = s.current_revision().await.unwrap();
    for rev in 1..=current {
        check_range_at(&s, &model, rev).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compaction() {
    let dir = tempfile::tempdir().unwrap();
    backend_tests::run_compaction(&open(dir.path()).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn compaction_keeps_later_history_and_rejects_older() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let model = mixed_workload(&s, 300, 7).await;
    let current = s.current_revision().await.unwrap();
    let c = current / 2;

    match s.compact(current + 1).await {
        Err(BackendError::FutureRevision(r)) => assert_eq!(r, current),
        other => panic!("expected FutureRevision, got {other:?}"),
    }
    s.compact(c).await.unwrap();
    assert_eq!(s.compacted_revision(), c);
    match s.compact(c).await {
        Err(BackendError::Compacted(r)) => assert_eq!(r, c),
        other => panic!("expected Compacted, got {other:?}"),
    }
    // Let the background deletion run, then check what is left at or below `c`: one live
    // entry per key (etcd keeps the newest revision of each key), no tombstone.
    tokio::time::sleep(Duration::from_millis(300)).await;
    {
        let db = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
        let q = |sql: &str| -> i64 { db.query_row(sql, [c], |r| r.get(0)).unwrap() };
        let kept = q("SELECT COUNT(*) FROM log WHERE rev <= ?1");
        assert!(kept > 0);
        assert_eq!(
            q("SELECT COUNT(DISTINCT key) FROM log WHERE rev <= ?1"),
            kept
        );
        assert_eq!(
            q("SELECT COUNT(*) FROM log WHERE rev <= ?1 AND type = 1"),
            0
        );
        assert_eq!(q("SELECT v - ?1 FROM meta WHERE k = 'compact_done'"), 0);
        let before: i64 = db
            .query_row("SELECT COUNT(*) FROM log WHERE rev > ?1", [c], |r| r.get(0))
            .unwrap();
        assert_eq!(before, current - c);
    }
    // As in etcd, reads below the compacted revision fail and the compacted revision itself
    // stays readable.
    for rev in 1..c {
        match s.range("/m/", &prefix_end("/m/"), 0, rev).await {
            Err(BackendError::Compacted(r)) => assert_eq!(r, c),
            other => panic!("expected Compacted at {rev}, got {other:?}"),
        }
    }
    for rev in c..=current {
        check_range_at(&s, &model, rev).await;
    }
    // Watch from a compacted revision: the first message is the error.
    let mut w = s.watch("/m/", true, c, false).await.unwrap();
    match backend_tests::recv(&mut w, 5).await {
        WatchResponse::Error(BackendError::Compacted(r)) => assert_eq!(r, c),
        other => panic!("expected compacted error, got {other:?}"),
    }
    assert!(w.recv().await.is_none());
    // Watch from just above: every later event, with correct prev_kv.
    let mut w = s.watch("/m/", true, c + 1, false).await.unwrap();
    let expected: Vec<i64> = model
        .states
        .keys()
        .copied()
        .filter(|r| *r > c)
        .filter(|r| model.at(*r) != model.at(r - 1))
        .collect();
    let evs = backend_tests::events(&mut w, expected.len(), 10).await;
    assert_eq!(
        evs.iter().map(|e| e.kv.mod_revision).collect::<Vec<_>>(),
        expected
    );
    for e in &evs {
        let r = e.kv.mod_revision;
        assert_eq!(
            e.prev_kv.as_ref(),
            model.at(r - 1).get(&e.kv.key),
            "prev_kv at {r}"
        );
        match e.event_type {
            EventType::Put => assert_eq!(Some(&e.kv), model.at(r).get(&e.kv.key)),
            EventType::Delete => assert!(!model.at(r).contains_key(&e.kv.key)),
        }
    }
    // Compact everything; reopen recovers the compacted revision from the file.
    let model2_rev = s.current_revision().await.unwrap();
    s.compact(model2_rev).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(s);
    {
        let db = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
        let q = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(
            q("SELECT COUNT(*) FROM log"),
            q("SELECT COUNT(*) FROM current")
        );
    }
    let s = open(dir.path()).await;
    assert_eq!(s.compacted_revision(), model2_rev);
    assert_eq!(s.current_revision().await.unwrap(), current);
    let r = s.range("/m/", &prefix_end("/m/"), 0, 0).await.unwrap();
    assert_eq!(
        r.kvs,
        model.at(current).values().cloned().collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_replays_then_follows_live_without_gap() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(open(dir.path()).await);
    for i in 0..200 {
        s.put_if(&format!("/w/{i:04}"), 0, vec![1; 64], 0)
            .await
            .unwrap();
    }
    // Writers keep going while the watch starts.
    let writer = {
        let s = s.clone();
        tokio::spawn(async move {
            for i in 200..1500 {
                let key = format!("/w/{i:04}");
                let r = s.put_if(&key, 0, vec![2; 64], 0).await.unwrap();
                if i % 3 == 0 {
                    s.put_if(&key, r.revision, vec![3; 64], 0).await.unwrap();
                }
                if i % 5 == 0 {
                    let kv = s.range(&key, "", 0, 0).await.unwrap().kvs.remove(0);
                    s.delete_if(&key, kv.mod_revision).await.unwrap();
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut w = s.watch("/w/", true, 2, false).await.unwrap();
    writer.await.unwrap();
    let last = s.current_revision().await.unwrap();
    let evs = backend_tests::events(&mut w, (last - 1) as usize, 20).await;
    let revs: Vec<i64> = evs.iter().map(|e| e.kv.mod_revision).collect();
    assert_eq!(revs, (2..=last).collect::<Vec<_>>());
    // prev_kv consistency: an update's prev is the key's previous event.
    let mut latest: BTreeMap<String, KeyValue> = BTreeMap::new();
    for e in &evs {
        assert_eq!(
            e.prev_kv.as_ref(),
            latest.get(&e.kv.key),
            "prev at {}",
            e.kv.mod_revision
        );
        match e.event_type {
            EventType::Put => latest.insert(e.kv.key.clone(), e.kv.clone()),
            EventType::Delete => latest.remove(&e.kv.key),
        };
    }
    // Nothing more.
    assert!(tokio::time::timeout(Duration::from_millis(200), w.recv())
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_with_prev_kv() {
    let dir = tempfile::tempdir().unwrap();
    backend_tests::run_watch_with_prev_kv(&open(dir.path()).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_watcher_catches_up_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(
        open_with(dir.path(), |o| {
            o.watch_buffer = 4;
            o.watch_channel = 2;
        })
        .await,
    );
    let mut w = s.watch("/", true, 0, false).await.unwrap();
    // Many concurrent writers (many batches) while the watcher reads nothing.
    let mut tasks = Vec::new();
    for t in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..250 {
                s.put_if(&format!("/slow/{t}/{i}"), 0, vec![0; 32], 0)
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let evs = backend_tests::events(&mut w, 2000, 20).await;
    let revs: Vec<i64> = evs.iter().map(|e| e.kv.mod_revision).collect();
    assert_eq!(revs, (2..=2001).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_notify_and_cancellation() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_with(dir.path(), |o| {
        o.progress_interval = Duration::from_millis(100)
    })
    .await;
    backend_tests::run_progress_notify(&s).await;
    // Dropping a receiver stops its watch task.
    let w = s.watch("/p/", true, 0, false).await.unwrap();
    let v = s.watch("/p/", true, 0, true).await.unwrap();
    assert!(s.watcher_count() >= 2);
    drop((w, v));
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.watcher_count() != 0 {
        assert!(Instant::now() < deadline, "watch tasks did not stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ttl_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_with(dir.path(), |o| {
        o.lease_check_interval = Duration::from_millis(50)
    })
    .await;
    backend_tests::run_ttl_expiry(&s).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reopen_keeps_revisions_data_and_leases() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path()).await;
        for i in 0..20 {
            s.put_if(&format!("/re/{i:02}"), 0, vec![i; 10], 0)
                .await
                .unwrap();
        }
        let kv = get(&s, "/re/05").await.unwrap();
        s.delete_if("/re/05", kv.mod_revision).await.unwrap();
        s.put_if("/re/ttl", 0, vec![], 2).await.unwrap();
        assert_eq!(s.current_revision().await.unwrap(), 23);
        s.compact(10).await.unwrap();
        s.close().await;
    }
    let s = open_with(dir.path(), |o| {
        o.lease_check_interval = Duration::from_millis(50)
    })
    .await;
    assert_eq!(s.current_revision().await.unwrap(), 23);
    assert_eq!(s.compacted_revision(), 10);
    let r = s.range("/re/", &prefix_end("/re/"), 0, 0).await.unwrap();
    assert_eq!(r.count, 20);
    assert!(get(&s, "/re/05").await.is_none());
    let kv = get(&s, "/re/07").await.unwrap();
    assert_eq!((kv.mod_revision, kv.value), (9, vec![7; 10]));
    // The next write continues the revision sequence.
    assert_eq!(
        s.put_if("/re/new", 0, vec![], 0).await.unwrap().revision,
        24
    );
    // History above the compaction survives: /re/05 (written at 7 ≤ 10) at revision 21, before
    // its delete at 22.
    let r = s.range("/re/05", "", 0, 21).await.unwrap();
    assert_eq!(r.kvs[0].mod_revision, 7);
    // The lease survives the restart and still expires.
    let deadline = Instant::now() + Duration::from_secs(6);
    while get(&s, "/re/ttl").await.is_some() {
        assert!(
            Instant::now() < deadline,
            "lease did not expire after reopen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn second_open_of_the_same_dir_fails() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    match Embedded::open(dir.path(), EmbeddedOptions::default()).await {
        Err(BackendError::Other(m)) => {
            assert!(m.contains("in use by another process"), "{m}");
            assert!(m.contains(&dir.path().display().to_string()), "{m}");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("second open succeeded"),
    }
    // Released on close.
    s.close().await;
    let s = open(dir.path()).await;
    s.health().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn full_disk_fails_writes_and_keeps_reads() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_with(dir.path(), |o| o.max_page_count = Some(64)).await;
    let mut w = s.watch("/full/", true, 0, false).await.unwrap();
    let mut acked = Vec::new();
    let err = loop {
        let key = format!("/full/{:04}", acked.len());
        match s.put_if(&key, 0, vec![9; 2000], 0).await {
            Ok(r) => {
                assert!(r.succeeded);
                acked.push((key, r.revision));
                assert!(acked.len() < 1000, "the page limit never hit");
            }
            Err(e) => break e,
        }
    };
    assert!(err.to_string().contains("full"), "{err}");
    let rev = s.current_revision().await.unwrap();
    assert_eq!(rev, acked.last().unwrap().1);
    // Reads keep working and see exactly the acknowledged writes.
    let r = s
        .range("/full/", &prefix_end("/full/"), 0, 0)
        .await
        .unwrap();
    assert_eq!(r.count as usize, acked.len());
    assert_eq!(r.header_revision, rev);
    s.health().await.unwrap();
    // Further writes keep failing without consuming revisions; concurrent ones too.
    let keys: Vec<String> = (0..10).map(|i| format!("/full/more{i}")).collect();
    let results =
        futures::future::join_all(keys.iter().map(|k| s.put_if(k, 0, vec![9; 2000], 0))).await;
    assert!(results.iter().all(|r| r.is_err()));
    assert_eq!(s.current_revision().await.unwrap(), rev);
    // Watchers saw exactly the acknowledged writes.
    let evs = backend_tests::events(&mut w, acked.len(), 5).await;
    assert_eq!(evs.last().unwrap().kv.mod_revision, rev);
    assert!(tokio::time::timeout(Duration::from_millis(200), w.recv())
        .await
        .is_err());
    // After reopening without the limit the store continues at the same revision.
    s.close().await;
    let s = open(dir.path()).await;
    assert_eq!(s.current_revision().await.unwrap(), rev);
    assert_eq!(
        s.put_if("/full/after", 0, vec![], 0)
            .await
            .unwrap()
            .revision,
        rev + 1
    );
}

const CRASH_DIR_ENV: &str = "EMBEDDED_CRASH_WRITER_DIR";
const CRASH_ROUND_ENV: &str = "EMBEDDED_CRASH_WRITER_ROUND";

/// Child mode of `crash_safety_sigkill`: does nothing in a normal test run. With
/// `EMBEDDED_CRASH_WRITER_DIR` set it opens the store there and creates keys from 32 tasks
/// forever, printing `ACK <key> <revision>` after each acknowledged create.
#[tokio::test(flavor = "multi_thread")]
async fn crash_writer_child() {
    let Ok(dir) = std::env::var(CRASH_DIR_ENV) else {
        return;
    };
    let round = std::env::var(CRASH_ROUND_ENV).unwrap_or_default();
    let s = Arc::new(open(Path::new(&dir)).await);
    let mut tasks = Vec::new();
    for t in 0..32 {
        let s = s.clone();
        let round = round.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0.. {
                let key = format!("/crash/{round}/{t:02}/{i:06}");
                let r = s.put_if(&key, 0, vec![b'x'; 1024], 0).await.unwrap();
                assert!(r.succeeded);
                let mut out = std::io::stdout().lock();
                writeln!(out, "ACK {key} {}", r.revision).unwrap();
                out.flush().unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

/// Run the child writer on `dir`, SIGKILL it after `kill_after` acknowledgements, and return
/// every acknowledged (key, revision).
fn run_and_kill_writer(dir: &Path, round: u32, kill_after: usize) -> Vec<(String, i64)> {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_writer_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CRASH_DIR_ENV, dir)
        .env(CRASH_ROUND_ENV, round.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("spawn child writer");
    let stdout = child.stdout.take().unwrap();
    let mut acks = Vec::new();
    let mut killed = false;
    let started = Instant::now();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let Some(rest) = line.strip_prefix("ACK ") else {
            continue;
        };
        let (key, rev) = rest.split_once(' ').unwrap();
        acks.push((key.to_string(), rev.parse::<i64>().unwrap()));
        if !killed && acks.len() >= kill_after {
            child.kill().unwrap(); // SIGKILL; lines already written stay readable.
            killed = true;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "child too slow"
        );
    }
    let status = child.wait().unwrap();
    assert!(
        killed,
        "child exited by itself ({status}) after {} acks",
        acks.len()
    );
    acks
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_safety_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = Vec::new();
    for round in 0..2u32 {
        let path = dir.path().to_path_buf();
        let acks = tokio::task::spawn_blocking(move || run_and_kill_writer(&path, round, 400))
            .await
            .unwrap();
        assert!(acks.len() >= 400);
        all.extend(acks);
        let s = open(dir.path()).await;
        let current = s.current_revision().await.unwrap();
        let r = s
            .range("/crash/", &prefix_end("/crash/"), 0, 0)
            .await
            .unwrap();
        let stored: BTreeMap<&str, i64> = r
            .kvs
            .iter()
            .map(|kv| (kv.key.as_str(), kv.mod_revision))
            .collect();
        for (key, rev) in &all {
            assert_eq!(
                stored.get(key.as_str()),
                Some(rev),
                "acknowledged {key} lost"
            );
            assert!(*rev <= current);
        }
        // Revisions are dense: every stored key has a distinct revision ≤ current, and the
        // store has exactly current - 1 writes.
        assert_eq!(r.count, current - 1);
        eprintln!(
            "crash round {round}: {} acknowledged, {} stored, revision {current}",
            all.len(),
            r.count
        );
        s.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn periodic_compaction_keeps_one_interval_of_history() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_with(dir.path(), |o| {
        o.compaction_interval = Some(Duration::from_millis(200))
    })
    .await;
    for i in 0..10 {
        s.put_if(&format!("/pc/{i}"), 0, vec![], 0).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.compacted_revision() == 0 {
        assert!(Instant::now() < deadline, "no periodic compaction");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(s.compacted_revision() <= s.current_revision().await.unwrap());
    assert_eq!(s.count("/pc/", &prefix_end("/pc/")).await.unwrap().0, 10);
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// Creates of 1 KiB values with `inflight` concurrent callers; prints ops/s and p50/p99 in ms.
async fn bench_creates(s: &Arc<Embedded>, label: &str, inflight: usize, total: usize) {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..inflight {
        let s = s.clone();
        let label = label.to_string();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            for i in 0..total / inflight {
                let t0 = Instant::now();
                let r = s
                    .put_if(
                        &format!("/bench/{label}/{t:03}/{i:06}"),
                        0,
                        vec![b'v'; 1024],
                        0,
                    )
                    .await
                    .unwrap();
                assert!(r.succeeded);
                lat.push(t0.elapsed());
            }
            lat
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap());
    }
    let secs = started.elapsed().as_secs_f64();
    lat.sort();
    eprintln!(
        "BENCH create {label} inflight={inflight}: {:.0} ops/s, p50 {:.2} ms, p99 {:.2} ms",
        lat.len() as f64 / secs,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99)
    );
}

/// Rough figures for the report: `cargo test --release -p wasm-apiserver-storage --test
/// embedded_backend -- --ignored --nocapture bench_embedded`.
#[tokio::test(flavor = "multi_thread")]
#[ignore]
async fn bench_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(open(dir.path()).await);
    bench_creates(&s, "c1", 1, 2000).await;
    bench_creates(&s, "c16", 16, 16000).await;
    bench_creates(&s, "c64", 64, 32000).await;

    // 10k keys of 1 KiB under one prefix.
    bench_creates(&s, "list", 50, 10000).await;
    let prefix = "/bench/list/";
    let end = prefix_end(prefix);
    let t0 = Instant::now();
    let r = s.range(prefix, &end, 0, 0).await.unwrap();
    assert_eq!(r.kvs.len(), 10000);
    eprintln!(
        "BENCH list 10k: {:.1} ms",
        t0.elapsed().as_secs_f64() * 1000.0
    );
    let pinned = r.header_revision;
    let paged = |rev: i64| {
        let s = s.clone();
        let end = end.clone();
        async move {
            let t0 = Instant::now();
            let mut start = prefix.to_string();
            let mut n = 0;
            loop {
                let r = s.range(&start, &end, 500, rev).await.unwrap();
                n += r.kvs.len();
                if !r.more {
                    break;
                }
                start = format!("{}\0", r.kvs.last().unwrap().key);
            }
            assert_eq!(n, 10000);
            t0.elapsed().as_secs_f64() * 1000.0
        }
    };
    eprintln!(
        "BENCH list 10k paged by 500 (latest): {:.1} ms",
        paged(0).await
    );
    // Update 1,000 of them, then page at the pinned (past) revision.
    let r = s.range(prefix, &end, 1000, 0).await.unwrap();
    for kv in r.kvs {
        s.put_if(&kv.key, kv.mod_revision, vec![b'u'; 1024], 0)
            .await
            .unwrap();
    }
    eprintln!(
        "BENCH list 10k paged by 500 at a past revision (1k keys changed since): {:.1} ms",
        paged(pinned).await
    );

    // Gets.
    let t0 = Instant::now();
    for i in 0..5000 {
        s.range(&format!("/bench/c16/{:03}/{:06}", i % 16, i / 16), "", 0, 0)
            .await
            .unwrap();
    }
    eprintln!(
        "BENCH get 1 caller: {:.0} ops/s",
        5000.0 / t0.elapsed().as_secs_f64()
    );
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..2500 {
                s.range(&format!("/bench/c16/{t:03}/{i:06}"), "", 0, 0)
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    eprintln!(
        "BENCH get 8 callers: {:.0} ops/s",
        20000.0 / t0.elapsed().as_secs_f64()
    );

    // Watch replay of the whole history.
    let current = s.current_revision().await.unwrap();
    let t0 = Instant::now();
    let mut w = s.watch("/bench/", true, 2, false).await.unwrap();
    let evs = backend_tests::events(&mut w, (current - 1) as usize, 120).await;
    eprintln!(
        "BENCH watch replay {} events: {:.0} events/s",
        evs.len(),
        evs.len() as f64 / t0.elapsed().as_secs_f64()
    );
    drop(w);

    // Live watch: put → event latency at 16 in flight.
    let mut w = s.watch("/bench/live/", true, 0, false).await.unwrap();
    let stamps = Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
    let writer = {
        let s = s.clone();
        let stamps = stamps.clone();
        tokio::spawn(async move {
            let mut tasks = Vec::new();
            for t in 0..16 {
                let s = s.clone();
                let stamps = stamps.clone();
                tasks.push(tokio::spawn(async move {
                    for i in 0..500 {
                        let key = format!("/bench/live/{t}/{i}");
                        stamps.lock().unwrap().insert(key.clone(), Instant::now());
                        s.put_if(&key, 0, vec![b'l'; 1024], 0).await.unwrap();
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        })
    };
    let t0 = Instant::now();
    let mut lat = Vec::new();
    while lat.len() < 8000 {
        match backend_tests::recv(&mut w, 30).await {
            WatchResponse::Events(evs) => {
                let now = Instant::now();
                let stamps = stamps.lock().unwrap();
                for e in evs {
                    lat.push(now - stamps[&e.kv.key]);
                }
            }
            other => panic!("{other:?}"),
        }
    }
    writer.await.unwrap();
    lat.sort();
    eprintln!(
        "BENCH watch live 8000 events (16 writers): {:.0} events/s, put→event p50 {:.2} ms, p99 {:.2} ms",
        8000.0 / t0.elapsed().as_secs_f64(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99)
    );

    // Compaction of everything (about 70k log rows), measured until the background deletion
    // is done.
    let current = s.current_revision().await.unwrap();
    let t0 = Instant::now();
    s.compact(current).await.unwrap();
    let db = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
    loop {
        let done: i64 = db
            .query_row("SELECT v FROM meta WHERE k = 'compact_done'", [], |r| {
                r.get(0)
            })
            .unwrap();
        if done == current {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eprintln!(
        "BENCH compact {current} revisions: {:.0} ms",
        t0.elapsed().as_secs_f64() * 1000.0
    );
    let size = std::fs::metadata(dir.path().join("state.db"))
        .unwrap()
        .len();
    eprintln!(
        "BENCH state.db size after compaction: {:.1} MB",
        size as f64 / 1e6
    );
}

//! Watch-cache benchmark: `cargo bench -p wasm-apiserver-storage --bench cacher`.
//!
//! One run, against a test etcd (`--experimental-watch-progress-notify-interval=200ms`, so the
//! cache's resourceVersion also advances through progress notifications) holding 10,000
//! pod-like objects of ~1 KiB JSON under namespaced keys `/pods/<ns>/<name>` (100 namespaces ×
//! 100 pods), reports:
//!
//! 1. **list**: `get_list("/pods", recursive)` of all 10,000 objects from the [`Cacher`] with
//!    RV `"0"` (any) and RV `""` (consistent: served by etcd, as kube-apiserver serves it from
//!    an etcd without `RequestWatchProgress` support — before 3.4.31 / 3.5.13, the test etcd is
//!    3.4 — so the two RV `""` rows measure the same path) against the same lists through
//!    `KvStore<Etcd3>` directly. Variants are
//!    interleaved round by round; each figure is the median over the rounds of the `get_list`
//!    call (the result is dropped outside the timing; the drop is reported separately, as the
//!    caller pays it on both sides alike). Then "floors" measured in this process: a deep clone
//!    of the 10,000 listed objects (what a list from the cache does, since `ListResult::items`
//!    owns its `Value`s), a JSON decode of them (the client-side part of a list from etcd), and
//!    a clone of the same objects shared as `Vec<Arc<Value>>`.
//! 2. **delivery**: 1,000 cache watchers (`Storage::watch` on the cacher, recursive over
//!    `/pods`, from etcd's current revision), each drained by its own task. One object is
//!    created through the cacher; each watcher's latency runs from just before the `create`
//!    call to the moment its task receives the ADDED event. p50 / p99 / max per round, over a
//!    few rounds; then, not part of the target, two more rounds while 10,000-object lists are
//!    served from the cache back to back (rows marked `(L)`).
//! 3. **backend watches**: etcd's own `/metrics` (`etcd_debugging_mvcc_watcher_total`,
//!    `etcd_debugging_mvcc_watch_stream_total`) before the cacher exists, once it is ready,
//!    with the 1,000 cache watchers open, and after the cacher is dropped. The deltas are the
//!    backend watches the cacher holds.
//!
//! The client (this process, 2 runtime workers) and etcd share the machine.

mod common;

use common::{name, pod, OBJECT_BYTES};
use futures::StreamExt;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use wasm_apiserver_storage::cacher::{Cacher, CacherConfig, CacherStats};
use wasm_apiserver_storage::etcd3::{Etcd3, Etcd3Config};
use wasm_apiserver_storage::store::{KvStore, StoreConfig};
use wasm_apiserver_storage::testing::etcd::EtcdServer;
use wasm_apiserver_storage::testing::OwnedReads;
use wasm_apiserver_storage::{ListOptions, Storage, WatchEvent};

/// Objects listed.
const PODS: usize = 10_000;
/// Namespaces they are spread over (`PODS / NAMESPACES` each).
const NAMESPACES: usize = 100;
/// Creates in flight while seeding.
const SEED_CONCURRENCY: usize = 64;
/// Timed rounds of the list comparison (after one untimed warm-up round).
const LIST_ROUNDS: usize = 7;
/// Cache watchers open during the delivery measurement.
const WATCHERS: usize = 1_000;
/// Objects written (one per round) during the delivery measurement.
const DELIVERY_ROUNDS: usize = 5;
/// Extra delivery rounds while lists are served from the cache (not part of the target).
const LISTING_ROUNDS: usize = 2;
/// Pause before each delivery round, so the previous round's fan-out has settled.
const DELIVERY_PAUSE: Duration = Duration::from_millis(300);
/// How long one round waits for every watcher's event.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// etcd's progress-notification interval.
const PROGRESS_NOTIFY: &str = "--experimental-watch-progress-notify-interval=200ms";

// ---------------------------------------------------------------------------------------------
// Objects

fn namespace(i: usize) -> String {
    format!("ns-{:03}", i % NAMESPACES)
}

/// Name of the object written in delivery round `round`.
fn probe_name(round: usize) -> String {
    format!("probe-{round:03}")
}

/// The delivery round of a probe object (`None` for anything else).
fn probe_round(obj: &Value) -> Option<usize> {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)?
        .strip_prefix("probe-")?
        .parse()
        .ok()
}

// ---------------------------------------------------------------------------------------------
// Figures

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

/// Nearest-rank percentile of sorted durations (`p` in 0..=1).
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

// ---------------------------------------------------------------------------------------------
// etcd's /metrics

/// etcd's watch gauges: (`etcd_debugging_mvcc_watcher_total`,
/// `etcd_debugging_mvcc_watch_stream_total`).
#[derive(Clone, Copy, Debug)]
struct EtcdWatches {
    watchers: f64,
    streams: f64,
}

/// GET `/metrics` from etcd's client port over plain HTTP/1.0.
fn etcd_watches(port: u16) -> EtcdWatches {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to etcd /metrics");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("send /metrics request");
    let mut body = String::new();
    s.read_to_string(&mut body).expect("read /metrics");
    assert!(
        body.starts_with("HTTP/1.") && body.contains(" 200 "),
        "etcd /metrics answered: {}",
        body.lines().next().unwrap_or("")
    );
    let gauge = |metric: &str| -> f64 {
        body.lines()
            .find_map(|l| {
                let rest = l.strip_prefix(metric)?;
                rest.starts_with(' ')
                    .then(|| rest.trim().parse::<f64>().ok())
                    .flatten()
            })
            .unwrap_or_else(|| panic!("{metric} not in etcd's /metrics"))
    };
    EtcdWatches {
        watchers: gauge("etcd_debugging_mvcc_watcher_total"),
        streams: gauge("etcd_debugging_mvcc_watch_stream_total"),
    }
}

async fn etcd_watches_async(port: u16) -> EtcdWatches {
    tokio::task::spawn_blocking(move || etcd_watches(port))
        .await
        .expect("metrics task")
}

// ---------------------------------------------------------------------------------------------
// The phases

/// Create the `PODS` objects through the store.
async fn seed(store: &Arc<dyn Storage>) {
    let done = futures::stream::iter(0..PODS)
        .map(|i| {
            let store = store.clone();
            async move {
                let (ns, name) = (namespace(i), name(i));
                store
                    .create(&format!("/pods/{ns}/{name}"), pod(&ns, &name), 0)
                    .await
                    .expect("seed create");
            }
        })
        .buffer_unordered(SEED_CONCURRENCY)
        .count()
        .await;
    assert_eq!(done, PODS);
}

/// One timed list through `get_list`, the path the registry serves lists by (the cache
/// shares its objects; `KvStore` wraps its decoded ones): (duration of the call, duration of
/// dropping its result).
async fn timed_list(storage: &Arc<dyn Storage>, rv: &str) -> (Duration, Duration) {
    let opts = ListOptions {
        resource_version: rv.into(),
        recursive: true,
        ..ListOptions::default()
    };
    let t = Instant::now();
    let list = storage.get_list("/pods", &opts).await.expect("get_list");
    let call = t.elapsed();
    assert_eq!(
        list.items.len(),
        PODS,
        "list of {rv:?} returned a wrong count"
    );
    let t = Instant::now();
    drop(list);
    (call, t.elapsed())
}

/// Phase 1: the list comparison.
async fn bench_list(direct: &Arc<dyn Storage>, cached: &Arc<dyn Storage>, cacher: &Cacher) {
    // (label, storage, resourceVersion)
    let variants: [(&str, &Arc<dyn Storage>, &str); 4] = [
        ("etcd  RV \"\" ", direct, ""),
        ("etcd  RV \"0\"", direct, "0"),
        ("cache RV \"0\"", cached, "0"),
        ("cache RV \"\" ", cached, ""),
    ];
    for (_, s, rv) in &variants {
        timed_list(s, rv).await;
    }
    let before = cacher.stats();
    let mut calls = vec![Vec::new(); variants.len()];
    let mut drops = vec![Vec::new(); variants.len()];
    for _ in 0..LIST_ROUNDS {
        for (i, (_, s, rv)) in variants.iter().enumerate() {
            let (c, d) = timed_list(s, rv).await;
            calls[i].push(c);
            drops[i].push(d);
        }
    }
    let after = cacher.stats();
    println!(
        "\n== 1. get_list of {PODS} objects (~{OBJECT_BYTES} B each), median of {LIST_ROUNDS} \
         interleaved rounds =="
    );
    println!(
        "{:<14} {:>10} {:>10} {:>10} {:>10}",
        "source", "call ms", "min ms", "max ms", "drop ms"
    );
    let med: Vec<Duration> = calls.iter().map(|v| median(v)).collect();
    for (i, (label, _, _)) in variants.iter().enumerate() {
        println!(
            "{:<14} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
            label,
            ms(med[i]),
            ms(*calls[i].iter().min().unwrap()),
            ms(*calls[i].iter().max().unwrap()),
            ms(median(&drops[i])),
        );
    }
    let with_drop = |i: usize| med[i] + median(&drops[i]);
    let ratio = |etcd: usize, cache: usize| med[etcd].as_secs_f64() / med[cache].as_secs_f64();
    let ratio_drop =
        |etcd: usize, cache: usize| with_drop(etcd).as_secs_f64() / with_drop(cache).as_secs_f64();
    println!(
        "ratio etcd/cache, RV \"0\": {:.1}x (call), {:.1}x (call + drop)",
        ratio(1, 2),
        ratio_drop(1, 2)
    );
    println!(
        "ratio etcd/cache, RV \"\" : {:.1}x (call), {:.1}x (call + drop)",
        ratio(0, 3),
        ratio_drop(0, 3)
    );
    println!(
        "ratio etcd RV \"\" / cache RV \"0\": {:.1}x (call)",
        ratio(0, 2)
    );
    // Where the cache's time goes: its list deep-copies every cached object into the result
    // (`ListResult::items` is a `Vec<Value>`); the direct list decodes every object's JSON.
    let sample = cached
        .get_list_owned(
            "/pods",
            &ListOptions {
                resource_version: "0".into(),
                recursive: true,
                ..ListOptions::default()
            },
        )
        .await
        .expect("get_list")
        .items;
    let encoded: Vec<Vec<u8>> = sample
        .iter()
        .map(|o| serde_json::to_vec(o).unwrap())
        .collect();
    let shared: Vec<Arc<Value>> = sample.iter().cloned().map(Arc::new).collect();
    let (mut clones, mut decodes, mut shares) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        drop(shared.clone());
        shares.push(t.elapsed());
        let t = Instant::now();
        drop(sample.clone());
        clones.push(t.elapsed());
        let t = Instant::now();
        let d: Vec<Value> = encoded
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap())
            .collect();
        drop(d);
        decodes.push(t.elapsed());
    }
    println!(
        "floors, each including its drop (compare with call + drop), median of 5: deep clone of \
         the {PODS} items {:.2} ms; JSON decode of them {:.2} ms; sharing them \
         (Vec<Arc<Value>> clone) {:.3} ms",
        ms(median(&clones)),
        ms(median(&decodes)),
        ms(median(&shares))
    );
    println!(
        "cacher: {} lists served from memory, {} delegated to etcd during the timed rounds \
         (expected {LIST_ROUNDS} and {LIST_ROUNDS}: consistent lists go to etcd)",
        after.reads_from_cache - before.reads_from_cache,
        after.reads_delegated - before.reads_delegated,
    );
}

/// Write the probe object of `round` through the cacher and wait for every watcher's ADDED
/// event: (duration of the `create` call, each watcher's latency from just before the call).
async fn deliver(
    cacher: &Arc<Cacher>,
    round: usize,
    rrx: &mut mpsc::UnboundedReceiver<(usize, Instant)>,
) -> (Duration, Vec<Duration>) {
    let name = probe_name(round);
    let t0 = Instant::now();
    cacher
        .create(&format!("/pods/probe/{name}"), pod("probe", &name), 0)
        .await
        .expect("probe create");
    let write = t0.elapsed();
    let mut lat = Vec::with_capacity(WATCHERS);
    let deadline = tokio::time::Instant::now() + DELIVERY_TIMEOUT;
    while lat.len() < WATCHERS {
        match tokio::time::timeout_at(deadline, rrx.recv()).await {
            Ok(Some((r, at))) if r == round => lat.push(at.duration_since(t0)),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    lat.sort();
    (write, lat)
}

/// One row of the delivery table (`write` zero: not shown).
fn print_round(label: &str, write: Duration, lat: &[Duration]) {
    let write = if write.is_zero() {
        String::new()
    } else {
        format!("{:.2}", ms(write))
    };
    if lat.is_empty() {
        println!("{label:<8} {write:>9} no watcher received the event");
        return;
    }
    println!(
        "{:<8} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>10}",
        label,
        write,
        ms(lat[0]),
        ms(percentile(lat, 0.5)),
        ms(percentile(lat, 0.99)),
        ms(*lat.last().unwrap()),
        format!("{}/{}", lat.len(), lat.len().max(WATCHERS)),
    );
}

/// Phase 2 (and 3): the delivery fan-out, with etcd's watch gauges sampled once the watchers
/// are open.
async fn bench_delivery(cacher: &Arc<Cacher>, port: u16) -> EtcdWatches {
    let from = cacher.current_resource_version().await.expect("current rv");
    let t = Instant::now();
    let (rtx, mut rrx) = mpsc::unbounded_channel::<(usize, Instant)>();
    let mut tasks = Vec::with_capacity(WATCHERS);
    for _ in 0..WATCHERS {
        let opts = ListOptions {
            resource_version: from.to_string(),
            recursive: true,
            ..ListOptions::default()
        };
        let mut w = cacher.watch("/pods", opts).await.expect("cache watch");
        let rtx = rtx.clone();
        tasks.push(tokio::spawn(async move {
            while let Some(ev) = w.recv().await {
                let at = Instant::now();
                match ev {
                    WatchEvent::Added(o) => {
                        if let Some(round) = probe_round(&o.to_arc().expect("decodes")) {
                            let _ = rtx.send((round, at));
                        }
                    }
                    WatchEvent::Error(e) => panic!("cache watch failed: {e}"),
                    _ => {}
                }
            }
        }));
    }
    drop(rtx);
    let opened = t.elapsed();
    // Let every watcher task reach its first wait.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let open = etcd_watches_async(port).await;
    let stats = cacher.stats();
    println!(
        "\n== 2. delivery of one event to {WATCHERS} cache watchers (recursive /pods, from RV \
         {from}) =="
    );
    println!(
        "opened {WATCHERS} watches in {:.1} ms; cacher reports {} open watchers",
        ms(opened),
        stats.watchers
    );
    println!(
        "{:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "round", "write ms", "min ms", "p50 ms", "p99 ms", "max ms", "received"
    );
    let mut all = Vec::with_capacity(WATCHERS * DELIVERY_ROUNDS);
    for round in 0..DELIVERY_ROUNDS {
        tokio::time::sleep(DELIVERY_PAUSE).await;
        let (write, lat) = deliver(cacher, round, &mut rrx).await;
        print_round(&round.to_string(), write, &lat);
        all.extend(lat);
    }
    all.sort();
    print_round("all", Duration::ZERO, &all);

    // Not part of the target: the same write while 10,000-object lists are served from the
    // cache back to back (a list copies the objects under the cache's read lock).
    println!("while 10,000-object lists are served from the cache back to back:");
    let stop = Arc::new(AtomicBool::new(false));
    let lister = {
        let (cacher, stop) = (cacher.clone(), stop.clone());
        tokio::spawn(async move {
            let opts = ListOptions {
                resource_version: "0".into(),
                recursive: true,
                ..ListOptions::default()
            };
            let mut lists = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let l = cacher
                    .get_list_owned("/pods", &opts)
                    .await
                    .expect("get_list");
                assert!(l.items.len() >= PODS);
                lists += 1;
            }
            lists
        })
    };
    for round in DELIVERY_ROUNDS..DELIVERY_ROUNDS + LISTING_ROUNDS {
        tokio::time::sleep(DELIVERY_PAUSE).await;
        let (write, lat) = deliver(cacher, round, &mut rrx).await;
        print_round(&format!("{round} (L)"), write, &lat);
    }
    stop.store(true, Ordering::Relaxed);
    let lists = lister.await.expect("lister");
    println!("({lists} cache lists ran meanwhile)");
    let stats: CacherStats = cacher.stats();
    println!(
        "cacher: {} open watchers, {} events dispatched, {} watchers terminated as slow, {} \
         backend events received",
        stats.watchers, stats.events_dispatched, stats.terminated_watchers, stats.events_received
    );
    for t in tasks {
        t.abort();
    }
    open
}

async fn run() {
    println!("load average at start: {}", loadavg());
    let etcd = EtcdServer::start_with_args(&[PROGRESS_NOTIFY]);
    let port = etcd.client_port;
    let mut cfg = Etcd3Config::new([etcd.endpoint.clone()]);
    cfg.compaction_interval = None;
    let etcd3 = Arc::new(Etcd3::connect(cfg).await.expect("etcd3 backend"));
    let direct: Arc<dyn Storage> = Arc::new(KvStore::new(
        etcd3,
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));

    let t = Instant::now();
    seed(&direct).await;
    println!(
        "seeded {PODS} objects ({NAMESPACES} namespaces) in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let baseline = etcd_watches_async(port).await;
    let t = Instant::now();
    let cacher = Arc::new(Cacher::new(
        direct.clone(),
        CacherConfig::new("/pods", "v1", "Pod"),
    ));
    assert!(
        cacher.wait_ready(Duration::from_secs(60)).await,
        "the cache did not become ready"
    );
    println!(
        "cacher ready in {:.1} ms (list of {} objects at RV {}, then the backend watch)",
        ms(t.elapsed()),
        cacher.stats().objects,
        cacher.resource_version()
    );
    // Let the backend watch's creation show in etcd's gauges.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ready = etcd_watches_async(port).await;
    let cached: Arc<dyn Storage> = cacher.clone();

    bench_list(&direct, &cached, &cacher).await;
    let open = bench_delivery(&cacher, port).await;

    drop(cached);
    let stats = cacher.stats();
    drop(cacher);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let dropped = etcd_watches_async(port).await;
    println!("\n== 3. backend watches (etcd /metrics) ==");
    println!("{:<40} {:>14} {:>14}", "", "mvcc watchers", "watch streams");
    for (label, m) in [
        ("before the cacher", baseline),
        ("cacher ready, no cache watchers", ready),
        ("with 1,000 cache watchers open", open),
        ("after the cacher is dropped", dropped),
    ] {
        println!("{label:<40} {:>14} {:>14}", m.watchers, m.streams);
    }
    println!(
        "backend watches held for {WATCHERS} cache watchers: {} etcd watcher(s), {} watch \
         stream(s) (target: 1 per resource); relists {}, resumes {}",
        open.watchers - baseline.watchers,
        open.streams - baseline.streams,
        stats.relists,
        stats.resumes
    );
    println!("load average at end: {}", loadavg());
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(run());
}

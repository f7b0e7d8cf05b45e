//! Storage benchmark: `cargo bench -p wasm-apiserver-storage --bench storage`.
//!
//! One run reports, at 1, 16 and 64 operations in flight, with ~1 KiB pod-like JSON objects:
//! `create`, `get` (`get`, the call the registry serves a JSON GET by: the stored bytes,
//! undecoded), `guaranteed_update`, a list of 10,000 keys (`get_list`, the call the
//! registry serves lists by: stored bytes, undecoded), and the watch delivery
//! rate (events/s seen by one watcher while the writers create), for
//!
//! * `raw-etcd`: `etcd_client` issuing the etcd requests `KvStore` issues (create =
//!   `Txn(If(mod_revision == 0)).Then(Put).Else(Get)`; get = `Get`; update = `Get` then
//!   `Txn(If(mod_revision == read)).Then(Put).Else(Get)`, as `guaranteed_update` without a cached
//!   object does; list = `Get` with a range; watch = etcd watch with `prev_kv`) — the physical
//!   limit of etcd on this machine;
//! * `raw-etcd+json` (guaranteed_update only): raw-etcd's update doing the JSON work
//!   `guaranteed_update` does for its caller (decode the value read, change it as the
//!   benchmark's `try_update` does, encode it, drop it) — what the JSON codec costs, and
//!   `KvStore`'s own overhead beyond it;
//! * `kv-etcd3`: `KvStore<Etcd3>` through the `Storage` trait;
//! * `kv-embedded`: `KvStore<Embedded>` (durable, `EmbeddedOptions::default()`) through the
//!   `Storage` trait.
//!
//! raw-etcd and kv-etcd3 run against the same etcd and are interleaved round by round
//! (A B, B A, A B), so drift on the shared machine hits both alike. Throughput is the median of
//! the rounds; their ratio is the median of the per-round ratios (each pair of rounds ran back
//! to back); latency percentiles are over every operation of every round (for `get_list`: the
//! call itself; dropping the 10,000 returned objects counts in ops/s only). The watch row's
//! latency is from the start of a create to the watcher seeing its event. The raw watcher
//! tells events apart by their etcd key; kv-etcd3's by the key of the event's stored object
//! (an unfiltered watch hands out the stored bytes undecoded, `SharedObject::Stored`, which
//! the server writes out without decoding). The client runs on
//! the same machine as etcd, so client CPU is part of each figure; the last column is this
//! process's CPU time per operation (client; for the embedded store, the whole store).
//!
//! `-- etcd` or `-- embedded` runs one part; `-- etcd:<op>[,<op>…]` only the named operations of
//! the etcd part (`create`, `get`, `update`, `list`, `watch`), with the same method;
//! `-- rounds=<N>` measures raw-etcd and kv-etcd3 in N rounds instead of 21 (a quieter, longer
//! run: the median of N per-round ratios moves ~√(21/N) as much between runs);
//! `-- list-profile` splits an embedded list's time;
//! `-- get-profile` a single get's; `-- watch-profile` runs only kv-etcd3's watch at 64 in flight,
//! `-- profile-<raw|kv>-<create|get|update|list>[-<in flight>]` only one system's operation
//! (for `perf record`).

mod common;

use common::{name, pod};
use etcd_client::{
    Client, CompactionOptions, Compare, CompareOp, DeleteOptions, GetOptions as EtcdGet, Txn,
    TxnOp, WatchOptions,
};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::etcd3::{Etcd3, Etcd3Config};
use wasm_apiserver_storage::store::{KvStore, StoreConfig};
use wasm_apiserver_storage::testing::etcd::EtcdServer;
use wasm_apiserver_storage::testing::OwnedReads;
use wasm_apiserver_storage::{
    GetOptions, ListOptions, Preconditions, SharedObject, Storage, UpdateOutcome, WatchEvent,
};

/// The allocator the server binary uses (`host/src/main.rs`), so the client side of every
/// figure pays what the server would pay.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Operations in flight.
const CONCURRENCY: [usize; 3] = [1, 16, 64];
/// Keys listed by `get_list` (and read / updated by `get` / `guaranteed_update`).
const LIST_KEYS: usize = 10_000;
/// Rounds per cheap measurement of raw-etcd and kv-etcd3 (throughput = median of the rounds;
/// their ratio = median of the per-round ratios: single rounds vary by ±30% on this VM), unless
/// `-- rounds=<N>` says otherwise.
const ROUNDS: usize = 21;
/// The rounds of this run: [`ROUNDS`] or `-- rounds=<N>`.
static RUN_ROUNDS: AtomicUsize = AtomicUsize::new(ROUNDS);

fn rounds() -> usize {
    RUN_ROUNDS.load(Ordering::Relaxed)
}
/// Rounds per measurement of kv-embedded (no ratio to take).
const EMBEDDED_ROUNDS: usize = 11;
/// Length of one round of create / get / update.
const ROUND: Duration = Duration::from_millis(500);
/// Length of the write phase of one watch round.
const WATCH_WRITE: Duration = Duration::from_millis(400);
/// Upper bound on creates in one watch measurement (size of the start-time table).
const WATCH_MAX_OPS: usize = 200_000;
/// Largest gRPC message the raw client accepts (a 10,000-key list is ~10 MiB).
const MAX_MESSAGE: usize = 256 << 20;

/// One operation, given its index; returns its latency when it measures that itself (a list
/// measures the `get_list` call and then drops the result, which the caller pays for).
type OpFn = dyn Fn(usize) -> BoxFuture<'static, Option<Duration>> + Send + Sync;

// ---------------------------------------------------------------------------------------------
// Objects

/// The index in a `pod-NNNNNNN` name or key.
fn index_of(key: &[u8]) -> usize {
    std::str::from_utf8(&key[key.len() - 7..])
        .unwrap()
        .parse()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Measurement

#[derive(Default)]
struct Sample {
    ops: usize,
    secs: f64,
    lat_ns: Vec<u64>,
    /// CPU time this process (client, and the embedded store) used meanwhile.
    cpu_ns: u64,
}

/// One measured figure.
#[derive(Clone, Debug, Default)]
struct Row {
    /// Median of the rounds' rates.
    ops_per_sec: f64,
    /// Each round's ops/s, in round order (round `i` of two interleaved systems ran
    /// back to back).
    rates: Vec<f64>,
    p50: Duration,
    p99: Duration,
    ops: usize,
    /// CPU time of this process per operation, µs.
    cpu_us: f64,
}

fn percentile(sorted: &[u64], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    Duration::from_nanos(sorted[(sorted.len() * p / 100).min(sorted.len() - 1)])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn row_of(samples: Vec<Sample>) -> Row {
    let rates: Vec<f64> = samples.iter().map(|s| s.ops as f64 / s.secs).collect();
    let mut lat: Vec<u64> = samples
        .iter()
        .flat_map(|s| s.lat_ns.iter().copied())
        .collect();
    lat.sort_unstable();
    Row {
        ops_per_sec: median(rates.clone()),
        rates,
        p50: percentile(&lat, 50),
        p99: percentile(&lat, 99),
        ops: samples.iter().map(|s| s.ops).sum(),
        cpu_us: samples.iter().map(|s| s.cpu_ns).sum::<u64>() as f64
            / 1e3
            / samples.iter().map(|s| s.ops).sum::<usize>().max(1) as f64,
    }
}

/// Run `op` with `conc` operations in flight until `dur` has passed and at least `min_ops`
/// operations were started (and at most `max_ops`).
async fn drive(
    conc: usize,
    dur: Duration,
    min_ops: usize,
    max_ops: usize,
    op: Arc<OpFn>,
) -> Sample {
    let counter = Arc::new(AtomicUsize::new(0));
    let cpu0 = process_cpu_ns();
    let start = Instant::now();
    let deadline = start + dur;
    let workers: Vec<_> = (0..conc)
        .map(|_| {
            let counter = counter.clone();
            let op = op.clone();
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(1024);
                loop {
                    let i = counter.fetch_add(1, Ordering::Relaxed);
                    if i >= max_ops || (i >= min_ops && Instant::now() >= deadline) {
                        break;
                    }
                    let t0 = Instant::now();
                    let own = op(i).await;
                    lat.push(own.unwrap_or_else(|| t0.elapsed()).as_nanos() as u64);
                }
                lat
            })
        })
        .collect();
    let mut lat_ns = Vec::new();
    for w in workers {
        lat_ns.extend(w.await.expect("worker"));
    }
    Sample {
        ops: lat_ns.len(),
        secs: start.elapsed().as_secs_f64(),
        lat_ns,
        cpu_ns: process_cpu_ns().saturating_sub(cpu0),
    }
}

/// Measure each of `ops` for `rounds` rounds, interleaving them round by round.
async fn measure(
    conc: usize,
    rounds: usize,
    dur: Duration,
    min_ops: usize,
    ops: &[Arc<OpFn>],
) -> Vec<Row> {
    let mut samples: Vec<Vec<Sample>> = ops.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        // A B, then B A, …: a drift during the measurement does not favour either.
        let mut order: Vec<usize> = (0..ops.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for k in order {
            samples[k].push(drive(conc, dur, min_ops, usize::MAX, ops[k].clone()).await);
        }
    }
    samples.into_iter().map(row_of).collect()
}

/// Delivery bookkeeping of one watch measurement: when each create started, and what the
/// watcher has seen.
struct Tracker {
    base: Instant,
    started_ns: Vec<AtomicU64>,
    seen: AtomicUsize,
    last_ns: AtomicU64,
    lat_ns: Mutex<Vec<u64>>,
}

impl Tracker {
    fn new() -> Arc<Tracker> {
        Arc::new(Tracker {
            base: Instant::now(),
            started_ns: (0..WATCH_MAX_OPS).map(|_| AtomicU64::new(0)).collect(),
            seen: AtomicUsize::new(0),
            last_ns: AtomicU64::new(0),
            lat_ns: Mutex::new(Vec::with_capacity(64 * 1024)),
        })
    }

    fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    fn started(&self, i: usize) {
        self.started_ns[i].store(self.now_ns(), Ordering::Relaxed);
    }

    fn saw(&self, i: usize) {
        let now = self.now_ns();
        let t0 = self.started_ns[i].load(Ordering::Relaxed);
        self.lat_ns.lock().unwrap().push(now.saturating_sub(t0));
        self.last_ns.store(now, Ordering::Relaxed);
        self.seen.fetch_add(1, Ordering::Release);
    }
}

/// A running watcher reporting to its tracker, and the create op for its prefix.
type WatchSetup = (Arc<Tracker>, tokio::task::JoinHandle<()>, Arc<OpFn>);

/// One watch round: `watcher` is already running and reports to `tracker`; `create` creates
/// key `i` under the watched prefix (and calls `tracker.started(i)` first). The rate is events
/// seen per second from the first create to the last event.
async fn watch_round(conc: usize, (tracker, watcher, create): WatchSetup) -> Sample {
    let t_start = tracker.now_ns();
    let writes = drive(conc, WATCH_WRITE, 0, WATCH_MAX_OPS, create).await;
    let total = writes.ops;
    let deadline = Instant::now() + Duration::from_secs(60);
    while tracker.seen.load(Ordering::Acquire) < total {
        assert!(
            Instant::now() < deadline,
            "watcher saw {} of {total} events",
            tracker.seen.load(Ordering::Acquire)
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    watcher.abort();
    let secs = (tracker.last_ns.load(Ordering::Relaxed) - t_start) as f64 / 1e9;
    let lat = std::mem::take(&mut *tracker.lat_ns.lock().unwrap());
    Sample {
        ops: total,
        secs,
        lat_ns: lat,
        cpu_ns: writes.cpu_ns,
    }
}

// ---------------------------------------------------------------------------------------------
// The systems under test

const RAW_PREFIX: &str = "/rawbench/pods";

/// Source of the values `guaranteed_update` writes.
static GENERATION: AtomicUsize = AtomicUsize::new(0);

fn raw_key(ns: &str, i: usize) -> String {
    format!("{RAW_PREFIX}/{ns}/{}", name(i))
}

/// `Txn(If(mod_revision(key) == expected)).Then(Put).Else(Get)`; whether it succeeded and, if
/// not, the current mod revision.
async fn raw_put_if(client: &Client, key: String, expected: i64, value: Vec<u8>) -> (bool, i64) {
    let txn = Txn::new()
        .when([Compare::mod_revision(
            key.clone(),
            CompareOp::Equal,
            expected,
        )])
        .and_then([TxnOp::put(key.clone(), value, None)])
        .or_else([TxnOp::get(key, None)]);
    let resp = client.kv_client().txn(txn).await.expect("raw txn");
    let mut current = 0;
    if !resp.succeeded() {
        for op in resp.op_responses() {
            if let etcd_client::TxnOpResponse::Get(g) = op {
                current = g.kvs().first().map(|kv| kv.mod_revision()).unwrap_or(0);
            }
        }
    }
    (resp.succeeded(), current)
}

/// The raw update of list key `i`: `Get`, then `Txn(If(mod_revision == read)).Then(Put)` of
/// `new_value(the bytes read)` until it applies.
async fn raw_update(client: &Client, i: usize, new_value: impl FnOnce(&[u8]) -> Vec<u8>) {
    let key = raw_key("list", i % LIST_KEYS);
    let resp = client
        .kv_client()
        .get(key.clone(), None)
        .await
        .expect("raw get");
    let mut rev = resp.kvs()[0].mod_revision();
    let value = new_value(resp.kvs()[0].value());
    loop {
        let (ok, cur) = raw_put_if(client, key.clone(), rev, value.clone()).await;
        if ok {
            break;
        }
        rev = cur;
    }
}

struct Raw {
    client: Client,
    value: Arc<Vec<u8>>,
    next: Arc<AtomicUsize>,
}

impl Raw {
    fn create(&self) -> Arc<OpFn> {
        let client = self.client.clone();
        let value = self.value.clone();
        let next = self.next.clone();
        Arc::new(move |_| {
            let client = client.clone();
            let value = value.clone();
            let i = next.fetch_add(1, Ordering::Relaxed);
            async move {
                let (ok, _) = raw_put_if(&client, raw_key("create", i), 0, value.to_vec()).await;
                assert!(ok, "raw create");
                None
            }
            .boxed()
        })
    }

    fn get(&self) -> Arc<OpFn> {
        let client = self.client.clone();
        Arc::new(move |i| {
            let mut kv = client.kv_client();
            async move {
                let resp = kv
                    .get(raw_key("list", i * 7919 % LIST_KEYS), None)
                    .await
                    .expect("raw get");
                assert_eq!(resp.kvs().len(), 1);
                None
            }
            .boxed()
        })
    }

    fn update(&self) -> Arc<OpFn> {
        let client = self.client.clone();
        let value = self.value.clone();
        Arc::new(move |i| {
            let client = client.clone();
            let value = value.clone();
            async move {
                raw_update(&client, i, |_| value.to_vec()).await;
                None
            }
            .boxed()
        })
    }

    /// [`Raw::update`] doing the JSON work `guaranteed_update` does for its caller: decode the
    /// value read, change it as `Kv::update`'s `try_update` does, encode it, drop it.
    fn update_json(&self) -> Arc<OpFn> {
        let client = self.client.clone();
        Arc::new(move |i| {
            let client = client.clone();
            async move {
                raw_update(&client, i, |read| {
                    let mut obj: Value = serde_json::from_slice(read).expect("raw object");
                    let generation = GENERATION.fetch_add(1, Ordering::Relaxed).to_string();
                    obj["metadata"]["annotations"]["bench/gen"] = Value::String(generation);
                    serde_json::to_vec(&obj).expect("encode")
                })
                .await;
                None
            }
            .boxed()
        })
    }

    fn list(&self) -> Arc<OpFn> {
        let client = self.client.clone();
        Arc::new(move |_| {
            let mut kv = client.kv_client().max_decoding_message_size(MAX_MESSAGE);
            async move {
                let prefix = format!("{RAW_PREFIX}/list/");
                let t0 = Instant::now();
                let resp = kv
                    .get(prefix, Some(EtcdGet::new().with_prefix()))
                    .await
                    .expect("raw list");
                let took = t0.elapsed();
                assert_eq!(resp.kvs().len(), LIST_KEYS);
                Some(took)
            }
            .boxed()
        })
    }

    /// A watcher on `ns` reporting to a new tracker, and the matching create op.
    async fn watch(&self, ns: &str) -> WatchSetup {
        let tracker = Tracker::new();
        let mut wc = self.client.watch_client();
        let prefix = format!("{RAW_PREFIX}/{ns}/");
        let mut stream = wc
            .watch(
                prefix,
                Some(WatchOptions::new().with_prefix().with_prev_key()),
            )
            .await
            .expect("raw watch");
        // The `created` response.
        stream.message().await.expect("watch created");
        let t = tracker.clone();
        let watcher = tokio::spawn(async move {
            let _wc = wc;
            while let Ok(Some(resp)) = stream.message().await {
                for ev in resp.events() {
                    if let Some(kv) = ev.kv() {
                        t.saw(index_of(kv.key()));
                    }
                }
            }
        });
        let client = self.client.clone();
        let value = self.value.clone();
        let t = tracker.clone();
        let ns = ns.to_string();
        let create: Arc<OpFn> = Arc::new(move |i| {
            let client = client.clone();
            let value = value.clone();
            let t = t.clone();
            let key = raw_key(&ns, i);
            async move {
                t.started(i);
                let (ok, _) = raw_put_if(&client, key, 0, value.to_vec()).await;
                assert!(ok, "raw create");
                None
            }
            .boxed()
        });
        (tracker, watcher, create)
    }
}

struct Kv {
    storage: Arc<dyn Storage>,
    template: Arc<Value>,
    next: Arc<AtomicUsize>,
}

fn list_opts() -> ListOptions {
    ListOptions {
        recursive: true,
        ..ListOptions::default()
    }
}

impl Kv {
    fn new(storage: Arc<dyn Storage>) -> Kv {
        Kv {
            storage,
            template: Arc::new(pod("bench", "pod-template")),
            next: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn create_in(
        storage: Arc<dyn Storage>,
        template: Arc<Value>,
        ns: &str,
        i: usize,
    ) -> BoxFuture<'static, Option<Duration>> {
        let key = format!("/pods/{ns}/{}", name(i));
        async move {
            let mut obj = (*template).clone();
            obj["metadata"]["name"] = Value::String(name(i));
            storage.create(&key, obj, 0).await.expect("create");
            None
        }
        .boxed()
    }

    fn create(&self) -> Arc<OpFn> {
        let storage = self.storage.clone();
        let template = self.template.clone();
        let next = self.next.clone();
        Arc::new(move |_| {
            let i = next.fetch_add(1, Ordering::Relaxed);
            Kv::create_in(storage.clone(), template.clone(), "create", i)
        })
    }

    fn get(&self) -> Arc<OpFn> {
        let storage = self.storage.clone();
        Arc::new(move |i| {
            let storage = storage.clone();
            async move {
                let key = format!("/pods/list/{}", name(i * 7919 % LIST_KEYS));
                // `get`: the call the registry serves a JSON GET through (the stored
                // bytes, undecoded, as raw etcd hands them out).
                let got = storage
                    .get(&key, &GetOptions::default())
                    .await
                    .expect("get");
                assert!(got.is_some());
                None
            }
            .boxed()
        })
    }

    fn update(&self) -> Arc<OpFn> {
        let storage = self.storage.clone();
        Arc::new(move |i| {
            let storage = storage.clone();
            async move {
                let key = format!("/pods/list/{}", name(i % LIST_KEYS));
                // Unique across rounds, so that every update changes the object (an unchanged
                // object is not written at all).
                let generation = GENERATION.fetch_add(1, Ordering::Relaxed).to_string();
                let mut try_update = move |mut obj: Value, _meta| {
                    obj["metadata"]["annotations"]["bench/gen"] = Value::String(generation.clone());
                    async move {
                        Ok(UpdateOutcome {
                            object: obj,
                            ttl: None,
                        })
                    }
                    .boxed()
                };
                storage
                    .guaranteed_update(
                        &key,
                        false,
                        &Preconditions::default(),
                        &mut try_update,
                        None,
                    )
                    .await
                    .expect("guaranteed_update");
                None
            }
            .boxed()
        })
    }

    fn list(&self) -> Arc<OpFn> {
        let storage = self.storage.clone();
        Arc::new(move |_| {
            let storage = storage.clone();
            async move {
                // `get_list`: the call the registry serves lists through (the stored
                // bytes of an unfiltered list, undecoded, as raw etcd hands them out).
                let t0 = Instant::now();
                let list = storage
                    .get_list("/pods/list", &list_opts())
                    .await
                    .expect("get_list");
                let took = t0.elapsed();
                assert_eq!(list.items.len(), LIST_KEYS);
                Some(took)
            }
            .boxed()
        })
    }

    async fn watch(&self, ns: &str) -> WatchSetup {
        let tracker = Tracker::new();
        let rv = self.storage.current_resource_version().await.expect("rv");
        let opts = ListOptions {
            resource_version: rv.to_string(),
            recursive: true,
            ..ListOptions::default()
        };
        let mut rx = self
            .storage
            .watch(&format!("/pods/{ns}"), opts)
            .await
            .expect("watch");
        let t = tracker.clone();
        let watcher = tokio::spawn(async move {
            while let Some(ev) = rx.recv().await {
                match ev {
                    WatchEvent::Added(obj)
                    | WatchEvent::Modified(obj)
                    | WatchEvent::Deleted(obj) => {
                        // As the raw watcher does: by the key (an unfiltered watch hands out
                        // stored objects); a decoded object by its name.
                        let i = match &obj {
                            SharedObject::Stored(s) => index_of(s.key.as_bytes()),
                            SharedObject::Decoded(o) => {
                                index_of(o["metadata"]["name"].as_str().expect("name").as_bytes())
                            }
                        };
                        t.saw(i);
                    }
                    WatchEvent::Bookmark(_) => {}
                    WatchEvent::Error(e) => panic!("watch error: {e}"),
                }
            }
        });
        let storage = self.storage.clone();
        let template = self.template.clone();
        let t = tracker.clone();
        let ns = ns.to_string();
        let create: Arc<OpFn> = Arc::new(move |i| {
            t.started(i);
            Kv::create_in(storage.clone(), template.clone(), &ns, i)
        });
        (tracker, watcher, create)
    }
}

// ---------------------------------------------------------------------------------------------
// Report

const OPS: [&str; 5] = [
    "create",
    "get",
    "guaranteed_update",
    "list (10k)",
    "watch (events/s)",
];

#[derive(Default)]
struct Results {
    /// (system, op index, concurrency) → row.
    rows: Vec<(&'static str, usize, usize, Row)>,
}

impl Results {
    fn add(&mut self, system: &'static str, op: usize, conc: usize, row: Row) {
        eprintln!(
            "  {system:<12} {:<18} {conc:>3} in flight: {:>9.0} ops/s  p50 {:>8.2} ms  p99 {:>8.2} ms  cpu {:>7.1} µs/op  ({} ops)",
            OPS[op],
            row.ops_per_sec,
            ms(row.p50),
            ms(row.p99),
            row.cpu_us,
            row.ops
        );
        self.rows.push((system, op, conc, row));
    }

    fn get(&self, system: &str, op: usize, conc: usize) -> Option<&Row> {
        self.rows
            .iter()
            .find(|(s, o, c, _)| *s == system && *o == op && *c == conc)
            .map(|r| &r.3)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

// ---------------------------------------------------------------------------------------------
// Phases

async fn seed_raw(raw: &Raw) {
    let client = raw.client.clone();
    let op: Arc<OpFn> = Arc::new(move |i| {
        let client = client.clone();
        async move {
            let value = serde_json::to_vec(&pod("list", &name(i))).unwrap();
            let (ok, _) = raw_put_if(&client, raw_key("list", i), 0, value).await;
            assert!(ok);
            None
        }
        .boxed()
    });
    drive(64, Duration::ZERO, LIST_KEYS, LIST_KEYS, op).await;
}

async fn seed_kv(kv: &Kv) {
    let storage = kv.storage.clone();
    let op: Arc<OpFn> = Arc::new(move |i| {
        let storage = storage.clone();
        async move {
            storage
                .create(&format!("/pods/list/{}", name(i)), pod("list", &name(i)), 0)
                .await
                .expect("seed");
            None
        }
        .boxed()
    });
    drive(64, Duration::ZERO, LIST_KEYS, LIST_KEYS, op).await;
}

/// Lists: median of [`rounds`] rounds at 1 in flight (cheap); one round of at least `conc` lists above.
fn list_plan(conc: usize) -> (usize, Duration, usize) {
    if conc == 1 {
        (rounds(), Duration::from_millis(600), 5)
    } else {
        (1, Duration::from_millis(500), conc)
    }
}

/// Between two measurements: delete what the create and watch rounds wrote, compact etcd to
/// its current revision and defragment it, so each measurement starts from the same etcd (the
/// 2 × 10,000 list keys, no history) instead of one that grew with every earlier round.
async fn settle(client: &Client) {
    let mut kv = client.kv_client();
    for prefix in [
        "/rawbench/pods/create/",
        "/rawbench/pods/watch-",
        "/registry/pods/create/",
        "/registry/pods/watch-",
    ] {
        kv.delete(prefix, Some(DeleteOptions::new().with_prefix()))
            .await
            .expect("delete");
    }
    let rev = kv
        .get("/", Some(EtcdGet::new().with_count_only()))
        .await
        .expect("revision")
        .header()
        .map(|h| h.revision())
        .unwrap_or(0);
    // Nothing written since the last compaction: etcd refuses to compact twice (not an error).
    if let Err(e) = kv
        .compact(rev, Some(CompactionOptions::new().with_physical()))
        .await
    {
        assert!(e.to_string().contains("compacted"), "compact: {e}");
    }
    client
        .maintenance_client()
        .defragment()
        .await
        .expect("defragment");
}

/// Names of the operations `-- etcd:<op>,…` selects, in [`OPS`] order.
const OP_NAMES: [&str; 5] = ["create", "get", "update", "list", "watch"];

/// The etcd part: raw-etcd against kv-etcd3 for the operations whose [`OPS`] index is in `ops`.
async fn bench_etcd(res: &mut Results, endpoint: &str, ops: &[usize]) {
    let client = Client::connect([endpoint], None).await.expect("raw client");
    let raw = Raw {
        client,
        value: Arc::new(serde_json::to_vec(&pod("bench", "pod-template")).unwrap()),
        next: Arc::new(AtomicUsize::new(0)),
    };
    let mut cfg = Etcd3Config::new([endpoint]);
    cfg.compaction_interval = None;
    let etcd3 = Arc::new(Etcd3::connect(cfg).await.expect("etcd3 backend"));
    let storage: Arc<dyn Storage> = Arc::new(KvStore::new(
        etcd3,
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let kv = Kv::new(storage);

    let t = Instant::now();
    let seeded = ops.iter().any(|op| (1..=3).contains(op));
    if seeded {
        seed_raw(&raw).await;
        seed_kv(&kv).await;
        eprintln!(
            "etcd: seeded 2 × {LIST_KEYS} objects in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    // Warm-up (connections, etcd's caches).
    measure(
        16,
        1,
        Duration::from_millis(300),
        0,
        &if seeded {
            vec![raw.create(), kv.create(), raw.get(), kv.get()]
        } else {
            vec![raw.create(), kv.create()]
        },
    )
    .await;

    for (op, make) in [
        (0, vec![raw.create(), kv.create()]),
        (1, vec![raw.get(), kv.get()]),
        // raw-etcd+json first: rounds run [+json, raw, kv] then [kv, raw, +json], so raw-etcd
        // and kv-etcd3 still run back to back.
        (2, vec![raw.update_json(), raw.update(), kv.update()]),
    ] {
        if !ops.contains(&op) {
            continue;
        }
        for conc in CONCURRENCY {
            settle(&raw.client).await;
            let mut rows = measure(conc, rounds(), ROUND, 0, &make).await;
            let kv_row = rows.pop().expect("kv row");
            let raw_row = rows.pop().expect("raw row");
            if let Some(json_row) = rows.pop() {
                res.add("raw-etcd+json", op, conc, json_row);
            }
            res.add("raw-etcd", op, conc, raw_row);
            res.add("kv-etcd3", op, conc, kv_row);
        }
    }
    for conc in CONCURRENCY.into_iter().filter(|_| ops.contains(&3)) {
        settle(&raw.client).await;
        let (rounds, dur, min_ops) = list_plan(conc);
        let rows = measure(conc, rounds, dur, min_ops, &[raw.list(), kv.list()]).await;
        let [raw_row, kv_row] = <[Row; 2]>::try_from(rows).unwrap();
        res.add("raw-etcd", 3, conc, raw_row);
        res.add("kv-etcd3", 3, conc, kv_row);
    }
    for conc in CONCURRENCY.into_iter().filter(|_| ops.contains(&4)) {
        settle(&raw.client).await;
        let (mut raw_rounds, mut kv_rounds) = (Vec::new(), Vec::new());
        for round in 0..rounds() {
            for kv_turn in [round % 2 == 1, round % 2 == 0] {
                if kv_turn {
                    let setup = kv.watch(&format!("watch-kv-{conc}-{round}")).await;
                    kv_rounds.push(watch_round(conc, setup).await);
                } else {
                    let setup = raw.watch(&format!("watch-raw-{conc}-{round}")).await;
                    raw_rounds.push(watch_round(conc, setup).await);
                }
            }
        }
        res.add("raw-etcd", 4, conc, row_of(raw_rounds));
        res.add("kv-etcd3", 4, conc, row_of(kv_rounds));
    }
}

async fn bench_embedded(res: &mut Results, dir: &std::path::Path) {
    let backend = Arc::new(
        Embedded::open(dir, EmbeddedOptions::default())
            .await
            .expect("open embedded"),
    );
    let storage: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend,
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let kv = Kv::new(storage);
    let t = Instant::now();
    seed_kv(&kv).await;
    eprintln!(
        "embedded: seeded {LIST_KEYS} objects in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    measure(
        16,
        1,
        Duration::from_millis(300),
        0,
        &[kv.create(), kv.get()],
    )
    .await;

    for (op, make) in [(0, kv.create()), (1, kv.get()), (2, kv.update())] {
        for conc in CONCURRENCY {
            let rows = measure(conc, EMBEDDED_ROUNDS, ROUND, 0, std::slice::from_ref(&make)).await;
            res.add("kv-embedded", op, conc, rows.into_iter().next().unwrap());
        }
    }
    for conc in CONCURRENCY {
        let (rounds, dur, min_ops) = list_plan(conc);
        let rows = measure(conc, rounds, dur, min_ops, &[kv.list()]).await;
        res.add("kv-embedded", 3, conc, rows.into_iter().next().unwrap());
    }
    for conc in CONCURRENCY {
        let mut rounds = Vec::new();
        for round in 0..EMBEDDED_ROUNDS {
            let setup = kv.watch(&format!("watch-{conc}-{round}")).await;
            rounds.push(watch_round(conc, setup).await);
        }
        res.add("kv-embedded", 4, conc, row_of(rounds));
    }
}

/// `-- list-profile`: where the time of an embedded 10,000-key list goes (a development aid):
/// the backend range alone; `Storage::get_list` (stored bytes) and writing its items as
/// the JSON of a list response (what the server does with it); `Storage::get_list` (every
/// object decoded into a `Value`) and dropping its result. Each on a runtime worker as a
/// server runs them; `LIST_PROFILE_N` iterations (default 30).
async fn list_profile() {
    use wasm_apiserver_storage::backend::{prefix_end, Backend};
    let dir = tempfile::tempdir().expect("tempdir");
    let backend = Arc::new(
        Embedded::open(dir.path(), EmbeddedOptions::default())
            .await
            .expect("open embedded"),
    );
    let storage: Arc<dyn Storage> = Arc::new(KvStore::new(
        backend.clone(),
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let kv = Kv::new(storage.clone());
    seed_kv(&kv).await;
    let n: usize = std::env::var("LIST_PROFILE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let mut t: [Vec<Duration>; 5] = Default::default();
    for _ in 0..n {
        let (backend, storage) = (backend.clone(), storage.clone());
        let times = tokio::spawn(async move {
            let prefix = "/registry/pods/list/";
            let t0 = Instant::now();
            let r = backend
                .range(prefix, &prefix_end(prefix), 0, 0)
                .await
                .unwrap();
            let range = t0.elapsed();
            assert_eq!(r.kvs.len(), LIST_KEYS);
            drop(r);
            let t0 = Instant::now();
            let l = storage.get_list("/pods/list", &list_opts()).await.unwrap();
            let shared = t0.elapsed();
            assert_eq!(l.items.len(), LIST_KEYS);
            let t0 = Instant::now();
            let mut out = Vec::new();
            for item in &l.items {
                item.write_json(&mut out).unwrap();
                out.push(b',');
            }
            drop(l);
            drop(out);
            let write = t0.elapsed();
            let t0 = Instant::now();
            let l = storage
                .get_list_owned("/pods/list", &list_opts())
                .await
                .unwrap();
            let decoded = t0.elapsed();
            assert_eq!(l.items.len(), LIST_KEYS);
            let t0 = Instant::now();
            drop(l);
            [range, shared, write, decoded, t0.elapsed()]
        })
        .await
        .unwrap();
        for (v, d) in t.iter_mut().zip(times) {
            v.push(d);
        }
    }
    let stat = |v: &mut Vec<Duration>| {
        v.sort();
        format!("p50 {:.1} ms (min {:.1})", ms(v[v.len() / 2]), ms(v[0]))
    };
    println!(
        "backend range: {}; get_list (shared): {}; writing its items as JSON (and dropping them): {}; get_list (decoded): {}; dropping that list: {}",
        stat(&mut t[0]),
        stat(&mut t[1]),
        stat(&mut t[2]),
        stat(&mut t[3]),
        stat(&mut t[4])
    );
}

/// `-- get-profile`: one get at a time against etcd, interleaved: raw `etcd_client`, the
/// `Etcd3` backend's range, and `Storage::get` (a development aid for the 1-in-flight ratio).
async fn get_profile(endpoint: &str) {
    use wasm_apiserver_storage::backend::Backend;
    let client = Client::connect([endpoint], None).await.expect("raw client");
    let mut cfg = Etcd3Config::new([endpoint]);
    cfg.compaction_interval = None;
    let etcd3 = Arc::new(Etcd3::connect(cfg).await.expect("etcd3 backend"));
    let storage: Arc<dyn Storage> = Arc::new(KvStore::new(
        etcd3.clone(),
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    ));
    let key = "/registry/pods/list/pod-0000000";
    storage
        .create("/pods/list/pod-0000000", pod("list", "pod-0000000"), 0)
        .await
        .unwrap();
    let n = 3000;
    let mut t = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..n {
        let t0 = Instant::now();
        let r = client.kv_client().get(key, None).await.unwrap();
        assert_eq!(r.kvs().len(), 1);
        t[0].push(t0.elapsed());
        let t0 = Instant::now();
        let r = etcd3.range(key, "", 0, 0).await.unwrap();
        assert_eq!(r.kvs.len(), 1);
        t[1].push(t0.elapsed());
        let t0 = Instant::now();
        let o = storage
            .get("/pods/list/pod-0000000", &GetOptions::default())
            .await
            .unwrap();
        assert!(o.is_some());
        t[2].push(t0.elapsed());
    }
    for (name, v) in ["raw get", "Etcd3::range", "Storage::get"]
        .iter()
        .zip(t.iter_mut())
    {
        v.sort();
        println!(
            "{name}: p50 {:.1} µs, p10 {:.1} µs",
            v[n / 2].as_secs_f64() * 1e6,
            v[n / 10].as_secs_f64() * 1e6
        );
    }
}

/// kv-etcd3 on the etcd at `endpoint` (no compactor).
async fn kv_etcd3(endpoint: &str) -> Kv {
    let mut cfg = Etcd3Config::new([endpoint]);
    cfg.compaction_interval = None;
    let etcd3 = Arc::new(Etcd3::connect(cfg).await.expect("etcd3 backend"));
    Kv::new(Arc::new(KvStore::new(
        etcd3,
        StoreConfig::new("/registry", "/pods", "v1", "Pod"),
    )))
}

/// `-- watch-profile`: only kv-etcd3's watch at 64 in flight, 10 rounds (to run under
/// `perf record`); prints each round's events/s and the process CPU per event.
async fn watch_profile(endpoint: &str) {
    let kv = kv_etcd3(endpoint).await;
    for round in 0..10 {
        let setup = kv.watch(&format!("watch-profile-{round}")).await;
        let s = watch_round(64, setup).await;
        println!(
            "round {round}: {:.0} events/s, {:.1} µs CPU/event",
            s.ops as f64 / s.secs,
            s.cpu_ns as f64 / s.ops as f64 / 1e3
        );
    }
}

/// `-- profile-<raw|kv>-<create|get|update|list>[-<in flight>]`: only that system's
/// operation (64 in flight unless given), 8 rounds (to run under `perf record`, one system at
/// a time); prints each round's ops/s and the process CPU per operation.
async fn op_profile(endpoint: &str, which: &str) {
    let mut parts = which.split('-').skip(1);
    let (system, op) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let conc: usize = parts.next().and_then(|c| c.parse().ok()).unwrap_or(64);
    let raw = Raw {
        client: Client::connect([endpoint], None).await.expect("raw client"),
        value: Arc::new(serde_json::to_vec(&pod("bench", "pod-template")).unwrap()),
        next: Arc::new(AtomicUsize::new(0)),
    };
    let kv = kv_etcd3(endpoint).await;
    if op != "create" {
        match system {
            "raw" => seed_raw(&raw).await,
            _ => seed_kv(&kv).await,
        }
    }
    let f = match (system, op) {
        ("raw", "create") => raw.create(),
        ("raw", "get") => raw.get(),
        ("raw", "update") => raw.update(),
        ("raw", "list") => raw.list(),
        ("kv", "list") => kv.list(),
        ("kv", "create") => kv.create(),
        ("kv", "get") => kv.get(),
        ("kv", "update") => kv.update(),
        _ => panic!("profile-<raw|kv>-<create|get|update|list>, not {which}"),
    };
    for round in 0..8 {
        let s = drive(conc, ROUND, 0, usize::MAX, f.clone()).await;
        println!(
            "{which} round {round}: {:.0} ops/s, {:.1} µs CPU/op",
            s.ops as f64 / s.secs,
            s.cpu_ns as f64 / s.ops as f64 / 1e3
        );
    }
}

/// CPU time used by this process so far (every thread's `schedstat`), ns.
fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn report(res: &Results, total: Duration) {
    println!();
    println!("### Figures");
    println!();
    println!(
        "| system | operation | in flight | ops/s | p50 ms | p99 ms | bench-process CPU µs/op |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for system in ["raw-etcd", "raw-etcd+json", "kv-etcd3", "kv-embedded"] {
        for (op, op_name) in OPS.iter().enumerate() {
            for conc in CONCURRENCY {
                if let Some(r) = res.get(system, op, conc) {
                    println!(
                        "| {system} | {op_name} | {conc} | {:.0} | {:.2} | {:.2} | {:.0} |",
                        r.ops_per_sec,
                        ms(r.p50),
                        ms(r.p99),
                        r.cpu_us
                    );
                }
            }
        }
    }
    println!();
    println!("### kv-etcd3 / raw-etcd (target ≥ 0.90)");
    println!();
    println!(
        "Median of the per-round ratios (round i of kv-etcd3 / round i of raw-etcd, which ran \
         back to back), and in brackets the lowest and highest round ratio; a single round \
         (lists above 1 in flight): the ratio of the two rounds."
    );
    println!();
    println!("| operation | 1 | 16 | 64 |");
    println!("|---|---:|---:|---:|");
    let mut worst = f64::INFINITY;
    for (op, op_name) in OPS.iter().enumerate() {
        let cells: Vec<String> = CONCURRENCY
            .iter()
            .map(
                |&c| match (res.get("raw-etcd", op, c), res.get("kv-etcd3", op, c)) {
                    (Some(raw), Some(kv)) => {
                        let (ratio, cell) = ratio_cell(kv, raw);
                        worst = worst.min(ratio);
                        cell
                    }
                    _ => "–".into(),
                },
            )
            .collect();
        println!("| {op_name} | {} |", cells.join(" | "));
    }
    // What the JSON work costs: a raw client doing it, against raw-etcd and against KvStore.
    for (name, a, b) in [
        (
            "update: raw-etcd+json / raw-etcd",
            "raw-etcd+json",
            "raw-etcd",
        ),
        (
            "update: kv-etcd3 / raw-etcd+json",
            "kv-etcd3",
            "raw-etcd+json",
        ),
    ] {
        let cells: Vec<String> = CONCURRENCY
            .iter()
            .map(|&c| match (res.get(a, 2, c), res.get(b, 2, c)) {
                (Some(a), Some(b)) => ratio_cell(a, b).1,
                _ => "–".into(),
            })
            .collect();
        if cells.iter().any(|c| c != "–") {
            println!("| {name} | {} |", cells.join(" | "));
        }
    }
    println!();
    println!("### Targets");
    println!();
    println!(
        "- etcd3 backend / raw etcd ≥ 0.90 for every operation and concurrency: worst {worst:.2} — {}",
        met(worst >= 0.90)
    );
    if let Some(r) = res.get("kv-embedded", 0, 64) {
        println!(
            "- embedded creates/s at 64 in flight ≥ 14,000: {:.0} — {}",
            r.ops_per_sec,
            met(r.ops_per_sec >= 14_000.0)
        );
    }
    if let Some(r) = res.get("kv-embedded", 3, 1) {
        println!(
            "- embedded 10,000-key list (get_list) < 30 ms (p50 of the call at 1 in flight): {:.1} ms; {:.1} ms per list including dropping the 10,000 items — {}",
            ms(r.p50),
            1e3 / r.ops_per_sec,
            met(ms(r.p50) < 30.0)
        );
    }
    println!();
    println!("Total benchmark time: {:.0} s", total.as_secs_f64());
}

/// The median of the per-round ratios `a / b` and the table cell showing it with the range
/// of the round ratios (✗ below 0.90).
fn ratio_cell(a: &Row, b: &Row) -> (f64, String) {
    let per_round: Vec<f64> = a.rates.iter().zip(&b.rates).map(|(x, y)| x / y).collect();
    let ratio = median(per_round.clone());
    let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per_round.iter().copied().fold(0.0, f64::max);
    let range = if per_round.len() > 1 {
        format!(" ({lo:.2}–{hi:.2})")
    } else {
        String::new()
    };
    let mark = if ratio >= 0.90 { "" } else { " ✗" };
    (ratio, format!("{ratio:.2}{mark}{range}"))
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects systems ("etcd", "embedded").
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let parts: Vec<&str> = filter
        .iter()
        .filter(|f| !f.starts_with("rounds="))
        .map(|f| f.split(':').next().unwrap_or_default())
        .collect();
    let want = |s: &str| parts.is_empty() || parts.iter().any(|p| s.contains(p));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    let obj_len = serde_json::to_vec(&pod("list", &name(0))).unwrap().len();
    eprintln!(
        "storage bench: {obj_len}-byte objects, {LIST_KEYS}-key lists, in flight {CONCURRENCY:?}, {} worker threads",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    if filter.iter().any(|f| f == "get-profile") {
        let etcd = EtcdServer::start();
        rt.block_on(get_profile(&etcd.endpoint));
        return;
    }
    if let Some(f) = filter.iter().find(|f| f.starts_with("profile-")) {
        let etcd = EtcdServer::start();
        rt.block_on(op_profile(&etcd.endpoint, f));
        return;
    }
    if filter.iter().any(|f| f == "watch-profile") {
        let etcd = EtcdServer::start();
        rt.block_on(watch_profile(&etcd.endpoint));
        return;
    }
    if filter.iter().any(|f| f == "list-profile") {
        rt.block_on(list_profile());
        return;
    }
    if let Some(n) = filter.iter().find_map(|f| f.strip_prefix("rounds=")) {
        RUN_ROUNDS.store(n.parse().expect("rounds=<N>"), Ordering::Relaxed);
    }
    let mut res = Results::default();
    let etcd_ops: Option<Vec<usize>> =
        filter
            .iter()
            .find_map(|f| f.strip_prefix("etcd:"))
            .map(|list| {
                list.split(',')
                    .map(|op| {
                        OP_NAMES.iter().position(|n| *n == op).unwrap_or_else(|| {
                            panic!("etcd:<op>,… with op in {OP_NAMES:?}, not {op}")
                        })
                    })
                    .collect()
            });
    if want("etcd") {
        let etcd = EtcdServer::start();
        eprintln!("etcd at {} ({})", etcd.endpoint, etcd.dir.display());
        let ops = etcd_ops.unwrap_or_else(|| (0..OPS.len()).collect());
        rt.block_on(bench_etcd(&mut res, &etcd.endpoint, &ops));
        drop(etcd);
    }
    if want("embedded") {
        let dir = tempfile::tempdir().expect("tempdir");
        rt.block_on(bench_embedded(&mut res, dir.path()));
    }
    report(&res, started.elapsed());
}

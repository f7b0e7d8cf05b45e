//! End to end (issue 17, item 1): what a client of the real server binary gets over loopback,
//! against raw etcd-client requests on the same etcd in the same run.
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench e2e`
//! (`-- etcd`, `-- embedded`, `-- watch`, `-- memory` run one part; `E2E_SECS` sets the seconds
//! measured per cell (default 3, after 1 s of warm-up), `E2E_OBJECTS` the memory part's object
//! count (default 100,000), `E2E_ONLY="Pod create 64"` one cell of the matrix (object, op,
//! in flight; no raw baseline) — e.g. to attach `perf record -p <server pid>` while it runs).
//!
//! - **Cells**: creates, GETs of one object, PUTs (unconditional updates, each in-flight slot
//!   its own object), lists of a 500-object namespace without and with `limit=100`, for 1 KiB
//!   ConfigMaps (`configmaps` plugin, light strategy) and ~2 KB two-container Pods (`pods`,
//!   heavy strategy), at 1, 16 and 64 requests in flight, on etcd and on the embedded store
//!   (durable). Each cell reports requests/s, p50/p99 latency, and CPU per request of the
//!   server process, of etcd and of this process (the load generator), read from
//!   `/proc/<pid>/stat` and `getrusage` around the measured seconds.
//! - **Raw baseline** (etcd only): etcd-client requests doing what the storage layer sends for
//!   the same operation — create = `Txn(If(mod_revision == 0)).Then(Put).Else(Get)`, get =
//!   `Get`, update = `Get` then `Txn(If(mod_revision == read)).Then(Put)`, list = one ranged
//!   `Get` of 500 keys (`limit=100` for the paged list) — with values the size of the stored
//!   ConfigMap, at the same in-flight count. Creates run raw, ConfigMaps, Pods, raw again; the
//!   ratio is against the mean of the two raw runs, so drift hits both sides.
//! - **Watch fan-out**: W watchers of one namespace's ConfigMaps (W = 1, 100) while 16 writers
//!   create for the measured seconds; events delivered per second, delivery latency (write
//!   sent → event line read, p50/p99), server CPU per delivered event.
//! - **Memory**: a fresh server on a fresh store; RSS after 1,000 warm-up creates, then after
//!   `E2E_OBJECTS` more 1 KiB ConfigMaps; the growth per object against the object's JSON size.
//!
//! Everything shares this machine's cores: the load generator's CPU column says what it took.

mod common;

use common::{pod, proc_cpu_us, self_cpu_us, Server};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasm_apiserver_storage::testing::etcd::EtcdServer;

/// Counts the bytes this process has allocated and not freed, so the memory part can say
/// what one cached object's parts take (the requested sizes, before allocator rounding).
struct Counting;

static LIVE_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes `make`'s result holds on the heap (the thread must be otherwise idle).
fn heap_bytes<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE_BYTES.load(Ordering::SeqCst);
    let v = make();
    (v, LIVE_BYTES.load(Ordering::SeqCst).saturating_sub(before))
}

const IN_FLIGHT: [usize; 3] = [1, 16, 64];
const LIST_OBJECTS: usize = 500;
const WARM_UP: Duration = Duration::from_secs(1);

fn measure_time() -> Duration {
    let secs = std::env::var("E2E_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(secs)
}

// ---------------------------------------------------------------------------------------------
// Processes

/// The server binary with the configmaps, pods and namespaces plugins, on etcd when `etcd`
/// names one, else on the embedded store (durable, its default), plain HTTP on loopback,
/// `AlwaysAllow`, no audit, no in-flight limits (the secure chain's cost is the `chain`
/// benchmark's).
fn start_server(etcd: Option<&str>) -> Server {
    let (dir, plugins) = Server::dir_with_plugins(&["configmaps", "pods", "namespaces"]);
    Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.args([
            "--authorization-mode=AlwaysAllow",
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight=0",
        ]);
        if let Some(etcd) = etcd {
            cmd.args(["--etcd-servers", etcd]);
        }
    })
}

/// VmRSS of `pid`, KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Objects and requests

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    ConfigMap,
    Pod,
}

impl Kind {
    fn plural(self) -> &'static str {
        match self {
            Kind::ConfigMap => "configmaps",
            Kind::Pod => "pods",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::ConfigMap => "ConfigMap",
            Kind::Pod => "Pod",
        }
    }

    /// The create body, `__NAME__` standing for the name.
    fn template(self) -> String {
        let obj = match self {
            Kind::ConfigMap => json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "__NAME__", "labels": {"app": "bench"}},
                "data": {"k": "x".repeat(1024)}}),
            Kind::Pod => {
                let mut p = pod();
                let meta = p["metadata"].as_object_mut().unwrap();
                for system in ["namespace", "uid", "creationTimestamp"] {
                    meta.remove(system);
                }
                meta.insert("name".into(), json!("__NAME__"));
                p
            }
        };
        obj.to_string()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Create,
    Get,
    /// `?resourceVersion=0`: served by the watch cache without a quorum read.
    GetCached,
    Update,
    List,
    ListLimit,
}

impl Op {
    fn label(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Get => "get",
            Op::GetCached => "get rv=0",
            Op::Update => "update",
            Op::List => "list 500",
            Op::ListLimit => "list limit=100",
        }
    }
}

/// What one cell's requests need: the URL, bodies with placeholders, and a unique tag.
#[derive(Clone)]
struct Target {
    url: String,
    kind: Kind,
    /// Create body with `__NAME__`.
    create: Arc<String>,
    /// Per in-flight slot: the stored object to PUT, with `__V__` in a label value.
    updates: Arc<Vec<String>>,
    tag: String,
}

async fn send(c: &reqwest::Client, t: &Target, op: Op, slot: usize, k: u64) {
    let ns = format!("{}/api/v1/namespaces", t.url);
    let plural = t.kind.plural();
    let r = match op {
        Op::Create => {
            let name = format!("{}-{slot}-{k}", t.tag);
            c.post(format!("{ns}/bench/{plural}"))
                .header("content-type", "application/json")
                .body(t.create.replace("__NAME__", &name))
                .send()
                .await
        }
        Op::Get => c.get(format!("{ns}/bench/{plural}/target")).send().await,
        Op::GetCached => {
            c.get(format!("{ns}/bench/{plural}/target?resourceVersion=0"))
                .send()
                .await
        }
        Op::Update => {
            c.put(format!("{ns}/bench/{plural}/upd-{slot}"))
                .header("content-type", "application/json")
                .body(t.updates[slot].replace("__V__", &format!("{}-{k}", t.tag)))
                .send()
                .await
        }
        Op::List => c.get(format!("{ns}/list/{plural}")).send().await,
        Op::ListLimit => c.get(format!("{ns}/list/{plural}?limit=100")).send().await,
    };
    let r = r.expect("request");
    let status = r.status();
    let body = r.bytes().await.expect("body");
    assert!(
        status.is_success(),
        "{} {plural}: {status} {}",
        op.label(),
        String::from_utf8_lossy(&body)
    );
}

/// What one measured cell saw.
struct Sample {
    n: u64,
    secs: f64,
    /// Latencies, µs, sorted.
    lat: Vec<u32>,
}

impl Sample {
    fn rate(&self) -> f64 {
        self.n as f64 / self.secs
    }
    fn pct(&self, p: f64) -> u32 {
        if self.lat.is_empty() {
            return 0;
        }
        self.lat[((self.lat.len() - 1) as f64 * p).round() as usize]
    }
}

/// The `k` handed to each call: unique in the process, so names never repeat across runs.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Run `one(slot, k)` in `in_flight` loops for `dur`; latencies of every call.
async fn drive<F, Fut>(in_flight: usize, dur: Duration, one: F) -> Sample
where
    F: Fn(usize, u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let start = Instant::now();
    let end = start + dur;
    let mut tasks = Vec::new();
    for slot in 0..in_flight {
        let one = one.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < end {
                let k = SEQUENCE.fetch_add(1, Ordering::Relaxed);
                let t = Instant::now();
                one(slot, k).await;
                lat.push(t.elapsed().as_micros() as u32);
            }
            lat
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap());
    }
    let secs = start.elapsed().as_secs_f64();
    lat.sort_unstable();
    Sample {
        n: lat.len() as u64,
        secs,
        lat,
    }
}

/// CPU per request (µs) of each watched process and of this one over a measurement.
struct Cpu {
    server: f64,
    etcd: Option<f64>,
    bench: f64,
}

async fn measured<F, Fut>(server: u32, etcd: Option<u32>, in_flight: usize, one: F) -> (Sample, Cpu)
where
    F: Fn(usize, u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    drive(in_flight, WARM_UP, one.clone()).await;
    let (s0, e0, b0) = (proc_cpu_us(server), etcd.map(proc_cpu_us), self_cpu_us());
    let sample = drive(in_flight, measure_time(), one).await;
    let n = sample.n.max(1) as f64;
    let cpu = Cpu {
        server: (proc_cpu_us(server) - s0) / n,
        etcd: etcd.zip(e0).map(|(p, e0)| (proc_cpu_us(p) - e0) / n),
        bench: (self_cpu_us() - b0) / n,
    };
    (sample, cpu)
}

fn client(in_flight: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(in_flight.max(64) + 8)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

async fn post(c: &reqwest::Client, url: String, body: String) -> Value {
    let r = c
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status();
    let v: Value = r.json().await.unwrap();
    assert!(status.is_success() || status == 409, "{status} {v}");
    v
}

/// Namespaces `bench`, `list` (500 objects of each kind), `watch`; `target` and 64 `upd-N`
/// objects of each kind in `bench`. Returns the PUT bodies per kind.
async fn setup(c: &reqwest::Client, url: &str) -> Vec<(Kind, Arc<Vec<String>>)> {
    for ns in ["bench", "list"] {
        post(
            c,
            format!("{url}/api/v1/namespaces"),
            json!({"metadata": {"name": ns}}).to_string(),
        )
        .await;
    }
    let mut out = Vec::new();
    for kind in [Kind::ConfigMap, Kind::Pod] {
        let tpl = kind.template();
        let plural = kind.plural();
        let mut creates = Vec::new();
        for i in 0..LIST_OBJECTS {
            let (c, url, body) = (
                c.clone(),
                format!("{url}/api/v1/namespaces/list/{plural}"),
                tpl.replace("__NAME__", &format!("item-{i:04}")),
            );
            creates.push(tokio::spawn(async move { post(&c, url, body).await }));
            if creates.len() == 32 {
                for t in creates.drain(..) {
                    t.await.unwrap();
                }
            }
        }
        for t in creates {
            t.await.unwrap();
        }
        post(
            c,
            format!("{url}/api/v1/namespaces/bench/{plural}"),
            tpl.replace("__NAME__", "target"),
        )
        .await;
        let mut updates = Vec::new();
        for slot in 0..64 {
            let mut v = post(
                c,
                format!("{url}/api/v1/namespaces/bench/{plural}"),
                tpl.replace("__NAME__", &format!("upd-{slot}")),
            )
            .await;
            let meta = v["metadata"].as_object_mut().unwrap();
            meta.remove("resourceVersion");
            meta.remove("managedFields");
            v["metadata"]["labels"]["bench-v"] = json!("__V__");
            updates.push(v.to_string());
        }
        out.push((kind, Arc::new(updates)));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Raw etcd

#[derive(Clone, Copy, PartialEq)]
enum Raw {
    Create,
    Get,
    Update,
    List,
    ListLimit,
}

async fn raw_setup(kv: &etcd_client::Client, value: &[u8]) {
    let mut kv = kv.kv_client();
    kv.put("/rawbench/bench/target", value.to_vec(), None)
        .await
        .unwrap();
    for slot in 0..64 {
        kv.put(format!("/rawbench/bench/upd-{slot}"), value.to_vec(), None)
            .await
            .unwrap();
    }
    for i in 0..LIST_OBJECTS {
        kv.put(format!("/rawbench/list/item-{i:04}"), value.to_vec(), None)
            .await
            .unwrap();
    }
}

async fn raw_one(
    kv: etcd_client::Client,
    op: Raw,
    value: Arc<Vec<u8>>,
    tag: &str,
    slot: usize,
    k: u64,
) {
    use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp};
    let mut kv = kv.kv_client();
    match op {
        Raw::Create => {
            let key = format!("/rawbench/bench/{tag}-{slot}-{k}");
            let txn = Txn::new()
                .when([Compare::mod_revision(key.clone(), CompareOp::Equal, 0)])
                .and_then([TxnOp::put(key.clone(), value.to_vec(), None)])
                .or_else([TxnOp::get(key, None)]);
            assert!(kv.txn(txn).await.unwrap().succeeded());
        }
        Raw::Get => {
            kv.get("/rawbench/bench/target", None).await.unwrap();
        }
        Raw::Update => {
            let key = format!("/rawbench/bench/upd-{slot}");
            let got = kv.get(key.clone(), None).await.unwrap();
            let rev = got.kvs()[0].mod_revision();
            let txn = Txn::new()
                .when([Compare::mod_revision(key.clone(), CompareOp::Equal, rev)])
                .and_then([TxnOp::put(key.clone(), value.to_vec(), None)])
                .or_else([TxnOp::get(key, None)]);
            assert!(kv.txn(txn).await.unwrap().succeeded());
        }
        Raw::List | Raw::ListLimit => {
            let mut opts = GetOptions::new().with_prefix();
            if op == Raw::ListLimit {
                opts = opts.with_limit(100);
            }
            let r = kv.get("/rawbench/list/", Some(opts)).await.unwrap();
            assert!(!r.kvs().is_empty());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Report

fn header() {
    println!(
        "| store | object | op | in flight | req/s | raw etcd/s | ratio | p50 µs | p99 µs | server CPU µs/req | etcd CPU µs/req | bench CPU µs/req |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
}

#[allow(clippy::too_many_arguments)]
fn row(
    store: &str,
    object: &str,
    op: &str,
    in_flight: usize,
    s: &Sample,
    raw: Option<f64>,
    cpu: &Cpu,
) {
    let (raw_s, ratio) = match raw {
        Some(r) => (format!("{r:.0}"), format!("{:.2}", s.rate() / r)),
        None => ("".into(), "".into()),
    };
    println!(
        "| {store} | {object} | {op} | {in_flight} | {:.0} | {raw_s} | {ratio} | {} | {} | {:.0} | {} | {:.0} |",
        s.rate(),
        s.pct(0.5),
        s.pct(0.99),
        cpu.server,
        cpu.etcd.map(|e| format!("{e:.0}")).unwrap_or_default(),
        cpu.bench,
    );
}

/// The request matrix on one store; with `etcd`, the raw baseline beside it.
async fn matrix(store: &str, etcd: Option<&EtcdServer>) {
    let server = start_server(etcd.map(|e| e.endpoint.as_str()));
    let pid = server.child.id();
    let etcd_pid = etcd.and_then(|e| e.pid());
    let c = client(64);
    let updates = setup(&c, &server.url).await;
    let raw_client = match etcd {
        Some(e) => Some(
            etcd_client::Client::connect([e.endpoint.as_str()], None)
                .await
                .unwrap(),
        ),
        None => None,
    };
    // The stored ConfigMap's size is the raw value's.
    let stored = c
        .get(format!(
            "{}/api/v1/namespaces/bench/configmaps/target",
            server.url
        ))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let value = Arc::new(stored.to_vec());
    if let Some(kv) = &raw_client {
        raw_setup(kv, &value).await;
    }
    println!("\n{store}: stored ConfigMap {} bytes", value.len());
    header();
    let only = std::env::var("E2E_ONLY").ok();
    let mut round = 0u64;
    for in_flight in IN_FLIGHT {
        for (op, raw_op) in [
            (Op::Create, Raw::Create),
            (Op::Get, Raw::Get),
            (Op::GetCached, Raw::Get),
            (Op::Update, Raw::Update),
            (Op::List, Raw::List),
            (Op::ListLimit, Raw::ListLimit),
        ] {
            let run_raw = |round: u64| {
                let kv = raw_client.clone();
                let value = value.clone();
                async move {
                    let kv = kv?;
                    let tag = Arc::new(format!("raw{round}"));
                    Some(
                        measured(pid, etcd_pid, in_flight, move |slot, k| {
                            let (kv, value, tag) = (kv.clone(), value.clone(), tag.clone());
                            async move { raw_one(kv, raw_op, value, &tag, slot, k).await }
                        })
                        .await,
                    )
                }
            };
            let selected = |kind: Kind| match &only {
                None => true,
                Some(o) => *o == format!("{} {} {in_flight}", kind.label(), op.label()),
            };
            if !selected(Kind::ConfigMap) && !selected(Kind::Pod) {
                continue;
            }
            round += 1;
            let raw_before = if only.is_none() {
                run_raw(round).await
            } else {
                None
            };
            let mut cells = Vec::new();
            for (kind, upd) in &updates {
                if !selected(*kind) {
                    continue;
                }
                round += 1;
                let t = Target {
                    url: server.url.clone(),
                    kind: *kind,
                    create: Arc::new(kind.template()),
                    updates: upd.clone(),
                    tag: format!("r{round}"),
                };
                let c2 = c.clone();
                let cell = measured(pid, etcd_pid, in_flight, move |slot, k| {
                    let (c, t) = (c2.clone(), t.clone());
                    async move { send(&c, &t, op, slot, k).await }
                })
                .await;
                cells.push((*kind, cell));
            }
            // Creates and updates move etcd the most: a second raw run after them.
            let raw_after = if only.is_none() && matches!(op, Op::Create | Op::Update) {
                round += 1;
                run_raw(round).await
            } else {
                None
            };
            let raw_rate = raw_before.as_ref().map(|(s, _)| match &raw_after {
                Some((a, _)) => (s.rate() + a.rate()) / 2.0,
                None => s.rate(),
            });
            if let Some((s, cpu)) = &raw_before {
                row("raw etcd", "1 value", op.label(), in_flight, s, None, cpu);
            }
            if let Some((s, cpu)) = &raw_after {
                row(
                    "raw etcd (after)",
                    "1 value",
                    op.label(),
                    in_flight,
                    s,
                    None,
                    cpu,
                );
            }
            for (kind, (s, cpu)) in &cells {
                row(store, kind.label(), op.label(), in_flight, s, raw_rate, cpu);
            }
        }
    }
    println!("{store}: server RSS at the end {} MiB", rss_kib(pid) / 1024);
}

/// W watchers of namespace `watch`'s ConfigMaps while 16 writers create for the measured time.
async fn watch_fan_out(etcd: &EtcdServer) {
    let server = start_server(Some(&etcd.endpoint));
    let pid = server.child.id();
    let c = client(64);
    // One namespace per round: a watch without a resourceVersion starts with the existing
    // objects, which must not count as deliveries.
    for ns in ["watch-0", "watch-1"] {
        post(
            &c,
            format!("{}/api/v1/namespaces", server.url),
            json!({"metadata": {"name": ns}}).to_string(),
        )
        .await;
    }
    let epoch = Instant::now();
    println!("\nwatch fan-out, 16 writers, 1 KiB ConfigMaps, etcd");
    println!("| watchers | creates/s | events delivered/s | delivered / expected | delivery p50 µs | p99 µs | server CPU µs/event |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (round, watchers) in [1usize, 100].into_iter().enumerate() {
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(AtomicU64::new(0));
        let lat = Arc::new(Mutex::new(Vec::<u32>::new()));
        let mut tasks = Vec::new();
        // A dedicated client per watcher: each watch holds its connection.
        for _ in 0..watchers {
            let wc = reqwest::Client::new();
            let url = format!(
                "{}/api/v1/namespaces/watch-{round}/configmaps?watch=1&timeoutSeconds=60",
                server.url
            );
            let (stop, events, lat) = (stop.clone(), events.clone(), lat.clone());
            let mut resp = wc.get(url).send().await.unwrap();
            assert!(resp.status().is_success());
            tasks.push(tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut mine = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let chunk = match tokio::time::timeout(Duration::from_millis(200), resp.chunk())
                        .await
                    {
                        Ok(Ok(Some(c))) => c,
                        Ok(_) => break,
                        Err(_) => continue,
                    };
                    let now = epoch.elapsed().as_micros() as u64;
                    buf.extend_from_slice(&chunk);
                    while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=nl).collect();
                        let text = String::from_utf8_lossy(&line);
                        if let Some(t) = text
                            .split_once("\"bench-t\":\"")
                            .and_then(|(_, r)| r.split_once('"'))
                            .and_then(|(t, _)| t.parse::<u64>().ok())
                        {
                            mine.push(now.saturating_sub(t) as u32);
                            events.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                lat.lock().unwrap().extend(mine);
            }));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cpu0 = proc_cpu_us(pid);
        let url = server.url.clone();
        let c2 = c.clone();
        let writes = drive(16, measure_time(), move |slot, k| {
            let (c, url) = (c2.clone(), url.clone());
            async move {
                let t = epoch.elapsed().as_micros() as u64;
                let body = json!({"metadata": {"name": format!("w{round}-{slot}-{k}"),
                                  "annotations": {"bench-t": t.to_string()}},
                                  "data": {"k": "x".repeat(1024)}});
                let r = c
                    .post(format!("{url}/api/v1/namespaces/watch-{round}/configmaps"))
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success());
                let _ = r.bytes().await;
            }
        })
        .await;
        // Let the last events arrive.
        let expected = writes.n * watchers as u64;
        let deadline = Instant::now() + Duration::from_secs(10);
        while events.load(Ordering::Relaxed) < expected && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let cpu = proc_cpu_us(pid) - cpu0;
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.await.unwrap();
        }
        let got = events.load(Ordering::Relaxed);
        let mut lat = std::mem::take(&mut *lat.lock().unwrap());
        lat.sort_unstable();
        let s = Sample {
            n: got,
            secs: writes.secs,
            lat,
        };
        println!(
            "| {watchers} | {:.0} | {:.0} | {got} / {expected} | {} | {} | {:.1} |",
            writes.rate(),
            s.rate(),
            s.pct(0.5),
            s.pct(0.99),
            cpu / got.max(1) as f64
        );
    }
}

/// RSS growth per cached ConfigMap on a fresh server and store.
async fn memory(store: &str, etcd: Option<&EtcdServer>) {
    let objects: usize = std::env::var("E2E_OBJECTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let server = start_server(etcd.map(|e| e.endpoint.as_str()));
    let pid = server.child.id();
    let c = client(64);
    post(
        &c,
        format!("{}/api/v1/namespaces", server.url),
        json!({"metadata": {"name": "mem"}}).to_string(),
    )
    .await;
    let tpl = Arc::new(Kind::ConfigMap.template());
    let create = |count: usize, tag: &'static str| {
        let (c, url, tpl) = (c.clone(), server.url.clone(), tpl.clone());
        async move {
            let next = Arc::new(AtomicU64::new(0));
            let mut tasks = Vec::new();
            for _ in 0..64 {
                let (c, url, tpl, next) = (c.clone(), url.clone(), tpl.clone(), next.clone());
                tasks.push(tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        if i >= count {
                            break;
                        }
                        let r = c
                            .post(format!("{url}/api/v1/namespaces/mem/configmaps"))
                            .header("content-type", "application/json")
                            .body(tpl.replace("__NAME__", &format!("{tag}-{i:07}")))
                            .send()
                            .await
                            .unwrap();
                        assert!(r.status().is_success(), "{}", r.status());
                        let _ = r.bytes().await;
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        }
    };
    create(1000, "warm").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = rss_kib(pid);
    let t = Instant::now();
    create(objects, "obj").await;
    let took = t.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib(pid);
    let json = c
        .get(format!(
            "{}/api/v1/namespaces/mem/configmaps/obj-0000000",
            server.url
        ))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let json_len = json.len();
    let per = (after.saturating_sub(before) * 1024) as f64 / objects as f64;
    println!(
        "\nmemory, {store}: {objects} ConfigMaps of {json_len} bytes (JSON) created in {took:.1} s ({:.0}/s); RSS {} → {} MiB: {per:.0} bytes per object = {:.2}× its JSON",
        objects as f64 / took,
        before / 1024,
        after / 1024,
        per / json_len as f64
    );
    // What the watch cache holds per object (`cacher/watch_cache.rs` `Entry`): the stored
    // bytes (about the JSON's size; a decoded `Value` would take what is printed), its
    // attributes, its key in the objects map and in the stored object.
    let (value, value_bytes) = heap_bytes(|| serde_json::from_slice::<Value>(&json).unwrap());
    let attrs_fn = wasm_apiserver_storage::selection::default_attrs(Vec::new());
    let (attrs, attrs_bytes) = heap_bytes(|| attrs_fn(&value).unwrap());
    let keys = "/configmaps/mem/obj-0000000".len() + "/registry/configmaps/mem/obj-0000000".len();
    println!(
        "  heap per cached object, counted in this process: stored bytes ~{json_len} B (decoded it would take {value_bytes} B), attributes {attrs_bytes} B, keys {keys} B; the rest ({:.0} B) is the maps, Arcs, the store's own state and allocator overhead",
        per - (json_len + attrs_bytes + keys) as f64
    );
    drop((value, attrs));
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |part: &str| args.is_empty() || args.iter().any(|a| a == part);
    if want("etcd") {
        let etcd = EtcdServer::start();
        matrix("etcd", Some(&etcd)).await;
    }
    if want("embedded") {
        matrix("embedded", None).await;
    }
    if want("watch") {
        let etcd = EtcdServer::start();
        watch_fan_out(&etcd).await;
    }
    if want("memory") {
        let etcd = EtcdServer::start();
        memory("etcd", Some(&etcd)).await;
        memory("embedded", None).await;
    }
}

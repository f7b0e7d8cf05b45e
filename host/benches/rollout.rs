//! Plugins through the API on two replicas (issue 16, "Done when"): the time from `plugin push`
//! returning to every replica serving the new version — with a fresh compile of a 1 MiB
//! component (the `widgets` plugin padded to 1 MiB with an incompressible custom section, so
//! the upload and storage path carry a full MiB) and when the replicas have it precompiled
//! (deleted, then pushed again) — and the p50/p99 latency of GETs through both replicas
//! during a rollout of a new version every second, against the same load without one.
//! Two real replica processes over one real etcd, everything on this machine's 2 cores.
//! Targets: under 2 s fresh, under 300 ms precompiled.
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench rollout`

mod common;

use common::{root, Server};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use wasm_apiserver_storage::testing::etcd::EtcdServer;

const ROUNDS: usize = 3;
const IN_FLIGHT: usize = 16;
const LOAD: Duration = Duration::from_secs(8);
const WIDGETS: &str = "/apis/example.dev/v1/namespaces/default/widgets";

fn replica(etcd: &str, id: &str) -> Server {
    let (dir, plugins) = Server::dir_with_plugins(&["configmaps", "namespaces"]);
    // Each replica compiles into its own (empty) cache under its data dir.
    let data = dir.path().join("data");
    Server::spawn(dir, |cmd| {
        cmd.args([
            "--authorization-mode=AlwaysAllow",
            "--etcd-servers",
            etcd,
            "--server-id",
            id,
        ])
        .arg("--plugin-dir")
        .arg(&plugins)
        .arg("--data-dir")
        .arg(data);
    })
}

/// `widgets.wasm` with a custom section (id 0, name `padding`) of pseudo-random bytes
/// appended, `seed` making each copy a new sha256, `size` bytes in all.
fn padded_widgets(dir: &Path, seed: u64, size: usize) -> PathBuf {
    let mut bytes = std::fs::read(root().join("target/plugins/widgets.wasm")).unwrap();
    let name = b"padding";
    // section payload = name length (1 byte LEB) + name + filler; its size as 5-byte LEB.
    let payload = size - bytes.len() - 1 - 5;
    let filler = payload - 1 - name.len();
    bytes.push(0);
    let mut n = payload as u32;
    for i in 0..5 {
        let mut b = (n & 0x7f) as u8;
        n >>= 7;
        if i < 4 {
            b |= 0x80;
        }
        bytes.push(b);
    }
    bytes.push(name.len() as u8);
    bytes.extend_from_slice(name);
    let mut x = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    for _ in 0..filler {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.push(x as u8);
    }
    assert_eq!(bytes.len(), size);
    let path = dir.join(format!("widgets-{seed}.wasm"));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn push(url: &str, file: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"))
        .args(["plugin", "push"])
        .arg(file)
        .args(["--server", url, "--name", "widgets"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Poll every replica until `ready` holds for each; the time until the last one.
async fn until_all(
    c: &reqwest::Client,
    replicas: &[Server],
    ready: impl Fn(u16, &str) -> bool,
) -> Duration {
    let start = Instant::now();
    for r in replicas {
        loop {
            let resp = c.get(format!("{}{WIDGETS}", r.url)).send().await.unwrap();
            let code = resp.status().as_u16();
            let body = resp.text().await.unwrap_or_default();
            if ready(code, &body) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "never ready: {code} {body}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    start.elapsed()
}

/// The sha256 serving on every replica, from the object's status.
async fn until_serving(c: &reqwest::Client, replicas: &[Server], sha: &str) -> Duration {
    let start = Instant::now();
    loop {
        let o: serde_json::Value = c
            .get(format!(
                "{}/apis/wasm-apiserver.dev/v1/strategyplugins/widgets",
                replicas[0].url
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let entries = o["status"]["replicas"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if entries.len() == replicas.len()
            && entries
                .iter()
                .all(|e| e["sha256"] == sha && e["state"] == "Active")
        {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "never served: {o}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn sha_of(p: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// GETs of one ConfigMap through both replicas at IN_FLIGHT for LOAD: sorted latencies.
async fn load(c: &reqwest::Client, urls: &[String]) -> Vec<Duration> {
    let mut tasks = Vec::new();
    for i in 0..IN_FLIGHT {
        let (c, url) = (c.clone(), urls[i % urls.len()].clone());
        tasks.push(tokio::spawn(async move {
            let end = Instant::now() + LOAD;
            let mut lat = Vec::new();
            while Instant::now() < end {
                let t = Instant::now();
                let r = c
                    .get(format!("{url}/api/v1/namespaces/default/configmaps/target"))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success());
                let _ = r.bytes().await;
                lat.push(t.elapsed());
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    all
}

fn pct(v: &[Duration], p: f64) -> f64 {
    ms(v[((v.len() as f64 * p) as usize).min(v.len() - 1)])
}

#[tokio::main]
async fn main() {
    let etcd = EtcdServer::start();
    let replicas = vec![
        replica(&etcd.endpoint, "replica-a"),
        replica(&etcd.endpoint, "replica-b"),
    ];
    let c = reqwest::Client::new();
    let urls: Vec<String> = replicas.iter().map(|r| r.url.clone()).collect();
    c.post(format!("{}/api/v1/namespaces", urls[0]))
        .json(&serde_json::json!({"metadata": {"name": "default"}}))
        .send()
        .await
        .unwrap();
    c.post(format!("{}/api/v1/namespaces/default/configmaps", urls[0]))
        .json(&serde_json::json!({"metadata": {"name": "target"}, "data": {"k": "v"}}))
        .send()
        .await
        .unwrap();
    let files = tempfile::tempdir().unwrap();
    let rounds = std::env::var("ROLLOUT_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    let (mut fresh, mut warm) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Fresh: a new sha256 neither replica compiled.
        let file = padded_widgets(files.path(), round as u64 + 1, 1 << 20);
        let sha = sha_of(&file);
        push(&urls[0], &file);
        let t = until_serving(&c, &replicas, &sha).await;
        until_all(&c, &replicas, |code, _| code == 200).await;
        fresh.push(t);
        // Precompiled: the object deleted (both stop serving), then pushed again.
        c.delete(format!(
            "{}/apis/wasm-apiserver.dev/v1/strategyplugins/widgets",
            urls[0]
        ))
        .send()
        .await
        .unwrap();
        until_all(&c, &replicas, |code, _| code == 404).await;
        push(&urls[1], &file);
        let t = until_serving(&c, &replicas, &sha).await;
        warm.push(t);
        println!(
            "round {round}: push → every replica serving: fresh compile {:.0} ms, precompiled {:.0} ms",
            ms(fresh[round]),
            ms(warm[round])
        );
    }
    fresh.sort();
    warm.sort();
    println!(
        "1 MiB component, 2 replicas: fresh compile median {:.0} ms (max {:.0}; target < 2000), precompiled median {:.0} ms (max {:.0}; target < 300)",
        ms(fresh[fresh.len() / 2]),
        ms(*fresh.last().unwrap()),
        ms(warm[warm.len() / 2]),
        ms(*warm.last().unwrap())
    );

    // Request latency without, then during, rollouts: a new version every second, each a
    // fresh compile on both replicas; then alternating between two precompiled versions.
    let quiet = load(&c, &urls).await;
    println!(
        "GET through both replicas at {IN_FLIGHT} in flight, no rollout: p50 {:.2} ms p99 {:.2} ms ({} requests)",
        pct(&quiet, 0.5),
        pct(&quiet, 0.99),
        quiet.len()
    );
    for fresh_compiles in [true, false] {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let roller = {
            let (stop, dir, url) = (stop.clone(), files.path().to_path_buf(), urls[0].clone());
            std::thread::spawn(move || {
                let mut n: u64 = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let seed = if fresh_compiles { 1000 + n } else { 1 + n % 2 };
                    push(&url, &padded_widgets(&dir, seed, 1 << 20));
                    n += 1;
                    std::thread::sleep(Duration::from_secs(1));
                }
                n
            })
        };
        let busy = load(&c, &urls).await;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let pushes = roller.join().unwrap();
        println!(
            "  during {pushes} rollouts ({}): p50 {:.2} ms p99 {:.2} ms ({} requests); p99 ratio {:.2}",
            if fresh_compiles { "each a fresh compile" } else { "precompiled versions" },
            pct(&busy, 0.5),
            pct(&busy, 0.99),
            busy.len(),
            pct(&busy, 0.99) / pct(&quiet, 0.99)
        );
    }
}

//! Hot-reload latency (issue: hot reload, "Done when"): the time from a plugin file's last
//! write to the first request served by the new version, for a ~200 KB plugin compiled fresh
//! and with its precompiled artifact cached; and request latency p99 while a plugin is being
//! reloaded, against without. Drives the real server binary over HTTP on loopback.
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench reload`

use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn plugin(name: &str) -> Vec<u8> {
    std::fs::read(
        root()
            .join("target/test-plugins")
            .join(format!("{name}.wasm")),
    )
    .expect("run `bash plugins/build.sh` first")
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// Create objects until one is answered by the wanted version: `strict` refuses objects
/// without the `tier` label (422), the default version accepts them (201).
async fn until_served_by(c: &reqwest::Client, url: &str, strict: bool, n: &mut u64) -> Instant {
    loop {
        *n += 1;
        let body = json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
                          "metadata": {"name": format!("probe-{n}")}});
        let code = c
            .post(url)
            .json(&body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        if (strict && code == 422) || (!strict && code == 201) {
            return Instant::now();
        }
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins.d");
    std::fs::create_dir_all(&plugins).unwrap();
    let file = plugins.join("misbehaving.wasm");
    let v1 = plugin("misbehaving");
    let v2 = plugin("misbehaving-strict");
    std::fs::write(&file, &v1).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"))
        .args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--port",
            "0",
            "--authorization-mode=AlwaysAllow",
            "--plugin-dir",
        ])
        .arg(&plugins)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--plugin-cache-dir")
        .arg(dir.path().join("cache"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The plain loopback port (announced after the secure one) serves this bench.
    let base = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("wasm-apiserver listening on ")
                .filter(|u| u.starts_with("http://"))
                .map(str::to_string)
        })
        .expect("the server announces its plain port");
    let url = format!("{base}/apis/test.wasm-apiserver.dev/v1/namespaces/default/misbehavers");
    let c = reqwest::Client::new();
    let mut n = 0;
    until_served_by(&c, &url, false, &mut n).await;
    println!(
        "plugin size: {} KB (v1), {} KB (v2)",
        v1.len() / 1024,
        v2.len() / 1024
    );

    // First activation of v2: compiled from scratch.
    let t0 = Instant::now();
    std::fs::write(&file, &v2).unwrap();
    let fresh = until_served_by(&c, &url, true, &mut n).await - t0;
    // Back to v1 and forth: both versions' artifacts are cached now.
    let mut cached = Vec::new();
    for i in 0..10 {
        let (bytes, strict) = if i % 2 == 0 {
            (&v1, false)
        } else {
            (&v2, true)
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let t0 = Instant::now();
        std::fs::write(&file, bytes).unwrap();
        cached.push((until_served_by(&c, &url, strict, &mut n).await - t0).as_secs_f64() * 1000.0);
    }
    println!(
        "last write -> first request served by the new version: fresh compile {:.1} ms; cached artifact median {:.1} ms, max {:.1} ms (10 reloads)",
        fresh.as_secs_f64() * 1000.0,
        percentile(&mut cached.clone(), 0.5),
        cached.iter().cloned().fold(0.0, f64::max)
    );

    // Request latency with and without reloads (creates with the tier label: accepted by both).
    async fn load(c: &reqwest::Client, url: &str, secs: u64, tag: &str) -> Vec<f64> {
        let mut lat = Vec::new();
        let end = Instant::now() + Duration::from_secs(secs);
        let mut i = 0;
        while Instant::now() < end {
            i += 1;
            let body = json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
                              "metadata": {"name": format!("{tag}-{i}"), "labels": {"tier": "x"}}});
            let t = Instant::now();
            let code = c
                .post(url)
                .json(&body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            assert_eq!(code, 201);
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        lat
    }
    let mut quiet = load(&c, &url, 4, "quiet").await;
    let reloader = {
        let file = file.clone();
        let (v1, v2) = (v1.clone(), v2.clone());
        tokio::spawn(async move {
            for i in 0..20 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                std::fs::write(&file, if i % 2 == 0 { &v1 } else { &v2 }).unwrap();
            }
        })
    };
    let mut busy = load(&c, &url, 4, "busy").await;
    reloader.await.unwrap();
    println!(
        "create latency p50/p99: without reloads {:.2}/{:.2} ms ({} requests); during 20 reloads {:.2}/{:.2} ms ({} requests)",
        percentile(&mut quiet, 0.5),
        percentile(&mut quiet, 0.99),
        quiet.len(),
        percentile(&mut busy, 0.5),
        percentile(&mut busy, 0.99),
        busy.len()
    );
    let _ = child.kill();
    let _ = child.wait();
}

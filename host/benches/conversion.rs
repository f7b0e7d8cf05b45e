//! What serving a resource in a second version costs (issue 19): the widgets example read in
//! `v1alpha1` (converted by the plugin's `convert`) against `v1` (its storage version, nothing
//! to convert), on the real server binary (embedded store, plain HTTP on loopback).
//!
//! 1. LIST of 1,000 widgets: median wall time of 9 lists in each version, the first
//!    `v1alpha1` list (every object converted) apart from the later ones (converted objects
//!    reused from the per-version cache).
//! 2. Watch fan-out: 100 watchers of one version while 200 widgets are updated through `v1`;
//!    the server's CPU per update with the watchers in `v1alpha1` against the same run with
//!    them in `v1`, and the plugin's `convert` calls per update from `/metrics` (one per event
//!    and version, whatever the number of watchers).
//!
//! Run: `cargo bench -p wasm-apiserver --bench conversion` (after `bash plugins/build.sh`).

mod common;

use common::{proc_cpu_us, Server};
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const WIDGETS: usize = 1000;
const WATCHERS: usize = 100;
const UPDATES: usize = 200;

/// `wasm_apiserver_plugin_call_duration_seconds_count{plugin="widgets",hook="convert"}`.
async fn convert_calls(http: &reqwest::Client, url: &str) -> u64 {
    let text = http
        .get(format!("{url}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find(|l| {
            l.starts_with("wasm_apiserver_plugin_call_duration_seconds_count")
                && l.contains("hook=\"convert\"")
                && l.contains("plugin=\"widgets\"")
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0) as u64
}

/// Median ms of `n` lists of `url`.
async fn list_ms(http: &reqwest::Client, url: &str, n: usize) -> f64 {
    let mut t: Vec<f64> = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        let r = http.get(url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let body = r.bytes().await.unwrap();
        assert!(body.len() > WIDGETS * 100);
        t.push(start.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

/// Server CPU µs per update of `UPDATES` widgets through v1 with `WATCHERS` watchers of
/// `version` reading every event; and the convert calls per update.
async fn fan_out(
    http: &reqwest::Client,
    url: &str,
    pid: u32,
    version: &str,
    round: usize,
) -> (f64, f64) {
    let base = |v: &str| format!("{url}/apis/example.dev/{v}/namespaces/default/widgets");
    let list: Value = http
        .get(base("v1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut readers = Vec::new();
    for _ in 0..WATCHERS {
        let resp = http
            .get(format!("{}?watch=true&resourceVersion={rv}", base(version)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        readers.push(tokio::spawn(async move {
            let mut stream = resp.bytes_stream();
            let mut lines = 0;
            while lines < UPDATES {
                match tokio::time::timeout(Duration::from_secs(60), stream.next()).await {
                    Ok(Some(Ok(chunk))) => lines += chunk.iter().filter(|b| **b == b'\n').count(),
                    _ => panic!("watch ended after {lines} events"),
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let calls0 = convert_calls(http, url).await;
    let cpu0 = proc_cpu_us(pid);
    for i in 0..UPDATES {
        let r = http
            .patch(format!("{}/w-{i}", base("v1")))
            .header("content-type", "application/merge-patch+json")
            // Every round changes every widget (a no-op update sends no event).
            .body(json!({"spec": {"replicas": 3 - 2 * (round % 2)}}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    }
    for r in readers {
        r.await.unwrap();
    }
    let cpu = (proc_cpu_us(pid) - cpu0) / UPDATES as f64;
    let calls = (convert_calls(http, url).await - calls0) as f64 / UPDATES as f64;
    (cpu, calls)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (dir, plugins) = Server::dir_with_plugins(&["namespaces", "widgets"]);
    let server = Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--authorization-mode=AlwaysAllow");
    });
    let pid = server.child.id();
    let url = server.url.clone();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(WATCHERS + 8)
        .build()
        .unwrap();
    let _ = http
        .post(format!("{url}/api/v1/namespaces"))
        .json(&json!({"metadata": {"name": "default"}}))
        .send()
        .await;
    let base = |v: &str| format!("{url}/apis/example.dev/{v}/namespaces/default/widgets");
    for i in 0..WIDGETS {
        let r = http
            .post(base("v1"))
            .json(&json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                          "metadata": {"name": format!("w-{i}"), "labels": {"app": "bench"}},
                          "spec": {"size": "large", "replicas": 2, "maxReplicas": 4}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }

    let calls0 = convert_calls(&http, &url).await;
    let first = list_ms(&http, &base("v1alpha1"), 1).await;
    let first_calls = convert_calls(&http, &url).await - calls0;
    let v1alpha1 = list_ms(&http, &base("v1alpha1"), 9).await;
    let v1 = list_ms(&http, &base("v1"), 9).await;
    println!("LIST of {WIDGETS} widgets (median of 9, ms):");
    println!("  v1 (storage version)             {v1:>8.2}");
    println!(
        "  v1alpha1, first (all converted)   {first:>8.2}  ×{:.1}  ({first_calls} convert calls)",
        first / v1
    );
    println!(
        "  v1alpha1, cached                  {v1alpha1:>8.2}  ×{:.1}",
        v1alpha1 / v1
    );

    let (cpu_v1, calls_v1) = fan_out(&http, &url, pid, "v1", 0).await;
    let (cpu_alpha, calls_alpha) = fan_out(&http, &url, pid, "v1alpha1", 1).await;
    println!("{UPDATES} updates through v1, {WATCHERS} watchers (server CPU per update):");
    println!(
        "  watchers in v1                  {cpu_v1:>8.0} µs  ({calls_v1:.2} convert calls/update)"
    );
    println!(
        "  watchers in v1alpha1            {cpu_alpha:>8.0} µs  ×{:.2}  ({calls_alpha:.2} convert calls/update)",
        cpu_alpha / cpu_v1
    );
}

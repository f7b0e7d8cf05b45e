//! What CustomResourceDefinitions cost (issue 32), on the real server binary (embedded store,
//! plain HTTP on loopback):
//!
//! Plain HTTP with `--authorization-mode=AlwaysAllow`: what the CRD path adds, not the
//! secure chain (the `chain` bench measures that).
//!
//! 1. A custom resource create through the CRD plugin against a create of the hand-written
//!    widgets strategy: server CPU per create (the process's utime + stime over 1,000 creates,
//!    16 in flight), three alternated rounds. The CRD is shaped like the widgets (an enum with
//!    a default, a defaulted integer, a status subresource) plus two CEL rules. Then the
//!    server CPU of a LIST of the 4,000 objects of each (the custom resources read through
//!    the component on the first, from the conversion cache after).
//! 2. A Crossplane-sized install: 2,000 CRDs created one after another (each served before its
//!    create returns): total time, the slowest create of the last 100, aggregated discovery
//!    (`/apis` as `APIGroupDiscoveryList`, median of 5) and the server's RSS growth.
//!
//! Run: `cargo bench -p wasm-apiserver --bench crds` (after `bash plugins/build.sh`).
//! `CRDS=<n>` changes the 2,000.

mod common;

use common::{proc_cpu_us, root, Server};
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CREATES: usize = 1000;
const IN_FLIGHT: usize = 16;

fn crd(group: &str, kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [
                            {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas"},
                            {"rule": "self.size != 'large' || self.replicas >= 2", "message": "large needs two"}],
                        "properties": {
                            "size": {"type": "string", "enum": ["small", "medium", "large"], "default": "small"},
                            "replicas": {"type": "integer", "minimum": 0, "default": 3},
                            "maxReplicas": {"type": "integer", "default": 10}}},
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}}]}})
}

fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Server CPU µs per create of `CREATES` objects posted to `url` (names `<prefix>-<i>`).
async fn creates(
    http: &reqwest::Client,
    pid: u32,
    url: &str,
    api_version: &str,
    kind: &str,
    prefix: &str,
) -> f64 {
    let before = proc_cpu_us(pid);
    let results: Vec<u16> = futures::stream::iter(0..CREATES)
        .map(|i| {
            let body = json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": format!("{prefix}-{i}")},
                "spec": {"size": "medium"}});
            let req = http.post(url).json(&body);
            async move { req.send().await.map(|r| r.status().as_u16()).unwrap_or(0) }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    assert!(
        results.iter().all(|s| *s == 201),
        "a create failed: {results:?}"
    );
    (proc_cpu_us(pid) - before) / CREATES as f64
}

async fn create_crd(http: &reqwest::Client, url: &str, crd: &Value) -> Duration {
    let start = Instant::now();
    let r = http
        .post(format!(
            "{url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        ))
        .json(crd)
        .send()
        .await
        .unwrap();
    let took = start.elapsed();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    took
}

async fn per_create(http: &reqwest::Client) {
    let (dir, plugins) = Server::dir_with_plugins(&["namespaces", "widgets"]);
    let crd_plugin = root().join("target/plugins/configured/customresources.wasm");
    let server = Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--crd-plugin")
            .arg(&crd_plugin)
            .arg("--authorization-mode=AlwaysAllow");
    });
    let url = server.url.clone();
    let pid = server.child.id();
    create_crd(http, &url, &crd("example.com", "Gadget", "gadgets")).await;
    let widgets = format!("{url}/apis/example.dev/v1/namespaces/default/widgets");
    let gadgets = format!("{url}/apis/example.com/v1/namespaces/default/gadgets");
    // Warm both paths (compile caches, warm instances, the first configure).
    creates(http, pid, &widgets, "example.dev/v1", "Widget", "warm").await;
    creates(http, pid, &gadgets, "example.com/v1", "Gadget", "warm").await;
    println!("1. server CPU per create, {CREATES} creates, {IN_FLIGHT} in flight");
    let mut ratios = Vec::new();
    for round in 0..3 {
        let w = creates(
            http,
            pid,
            &widgets,
            "example.dev/v1",
            "Widget",
            &format!("r{round}"),
        )
        .await;
        let g = creates(
            http,
            pid,
            &gadgets,
            "example.com/v1",
            "Gadget",
            &format!("r{round}"),
        )
        .await;
        ratios.push(g / w);
        println!(
            "   round {}: widgets plugin {w:.0} µs, CRD plugin {g:.0} µs, CRD/widgets {:.2}",
            round + 1,
            g / w
        );
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("   median CRD/widgets {:.2} (target ≤ 1.5)", ratios[1]);

    // Reads: every stored custom resource is read through the component (pruned and
    // defaulted by the current schema) once per resourceVersion, then from the cache.
    let n = CREATES * 4;
    println!("1b. server CPU per LIST of {n} objects (median of 3 after the first)");
    for (what, url) in [("widgets plugin", &widgets), ("CRD plugin", &gadgets)] {
        let mut cpu = Vec::new();
        for _ in 0..4 {
            let before = proc_cpu_us(pid);
            let r = http.get(url.as_str()).send().await.unwrap();
            assert_eq!(r.status(), 200);
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["items"].as_array().map(Vec::len), Some(n));
            cpu.push((proc_cpu_us(pid) - before) / 1e3);
        }
        let first = cpu[0];
        let mut rest = cpu[1..].to_vec();
        rest.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("   {what}: first {first:.1} ms, then {:.1} ms", rest[1]);
    }
}

async fn many_crds(http: &reqwest::Client, n: usize) {
    let (dir, plugins) = Server::dir_with_plugins(&["namespaces"]);
    let crd_plugin = root().join("target/plugins/configured/customresources.wasm");
    let server = Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--crd-plugin")
            .arg(&crd_plugin)
            .arg("--authorization-mode=AlwaysAllow");
    });
    let url = server.url.clone();
    let pid = server.child.id();
    // The component is loaded with the first CRD; its cost is not the install's.
    create_crd(http, &url, &crd("warm.example.com", "Warm", "warms")).await;
    let rss_before = rss_kib(pid);
    let start = Instant::now();
    let mut last: Vec<Duration> = Vec::new();
    for i in 0..n {
        let group = format!("g{}.example.com", i / 10);
        let c = crd(&group, &format!("Kind{i}"), &format!("kinds{i}"));
        let took = create_crd(http, &url, &c).await;
        if i + 100 >= n {
            last.push(took);
        }
    }
    let total = start.elapsed();
    let rss_after = rss_kib(pid);
    let mut discovery = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = http
            .get(format!("{url}/apis"))
            .header(
                "Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body = r.bytes().await.unwrap();
        discovery.push((t.elapsed(), body.len()));
    }
    discovery.sort();
    let slowest = last.iter().max().unwrap();
    println!("2. {n} CRDs created one after another");
    println!(
        "   total {:.1} s ({:.1} ms per CRD; target < 60 s for 2,000)",
        total.as_secs_f64(),
        total.as_secs_f64() * 1e3 / n as f64
    );
    println!(
        "   slowest of the last 100 creates {:.1} ms (target < 100 ms)",
        slowest.as_secs_f64() * 1e3
    );
    println!(
        "   aggregated discovery {:.1} ms, {} KiB (median of 5; target < 100 ms)",
        discovery[2].0.as_secs_f64() * 1e3,
        discovery[2].1 / 1024
    );
    println!(
        "   RSS {} MiB → {} MiB (+{} MiB; target < 1,024)",
        rss_before / 1024,
        rss_after / 1024,
        (rss_after.saturating_sub(rss_before)) / 1024
    );
}

fn main() {
    let n: usize = std::env::var("CRDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        per_create(&http).await;
        many_crds(&http, n).await;
    });
}

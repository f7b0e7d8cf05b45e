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
//!    1c. What an attached plugin adds (`StrategyPlugin.spec.extends`): the same CRD shape
//!    served alone against one with the widgets plugin attached, server CPU per create,
//!    three alternated rounds.
//!    1d. What a conversion webhook costs: a LIST of 1,000 objects in the version they are not
//!    stored in, for a CRD converting by `None` and for one converting through an HTTPS
//!    webhook in this process (one `ConversionReview` per object, then from the cache):
//!    wall time and server CPU.
//!    1e. What a write in a version with its own schema costs (its hooks run in that version,
//!    `strategy/request_version.rs`): server CPU per create in the storage version v1 and in
//!    v2, for the `None` CRD and the webhook CRD of 1d, three alternated rounds.
//!    1f. What a CEL rule costs on the server path: server CPU per create of a CRD with the
//!    gadgets' shape and no rule against the same with 50 rules (Gateway API's HTTPRoute has
//!    ~50), three alternated rounds; the difference over 50 is the cost of one rule.
//! 2. A Crossplane-sized install: 2,000 CRDs created one after another (each served before its
//!    create returns): total time, the slowest create of the last 100, aggregated discovery
//!    (`/apis` as `APIGroupDiscoveryList`, median of 5) and the server's RSS growth.
//!
//! Run: `cargo bench -p wasm-apiserver --bench crds` (after `bash plugins/build.sh`).
//! `CRDS=<n>` changes the 2,000; `SECTIONS=1d,2` runs only those (`1` is 1 and 1b,
//! `1d` is 1d and 1e; `1f` the CEL rules).

mod common;
#[path = "../tests/it/common/conversion_webhook.rs"]
mod webhook;

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

/// The server with `plugins` and the CRD component, every request allowed.
fn crd_server(plugins: &[&str]) -> Server {
    let (dir, plugin_dir) = Server::dir_with_plugins(plugins);
    let crd_plugin = root().join("target/plugins/configured/customresources.wasm");
    Server::spawn_with_plugins(dir, &plugin_dir, |cmd| {
        cmd.arg("--crd-plugin")
            .arg(&crd_plugin)
            .arg("--authorization-mode=AlwaysAllow");
    })
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
    let server = crd_server(&["namespaces", "widgets"]);
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
    let server = crd_server(&["namespaces"]);
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

/// Upload the widgets component and attach it to the CRD `widgets.example.dev`; returns once
/// the server reports it Active.
async fn attach_widgets(http: &reqwest::Client, url: &str) {
    use sha2::Digest;
    let bytes = std::fs::read(root().join("target/plugins/widgets.wasm")).unwrap();
    let sha = hex::encode(sha2::Sha256::digest(&bytes));
    let base = format!("{url}/apis/wasm-apiserver.dev/v1");
    let r = http
        .put(format!("{base}/strategyplugincomponents/{sha}"))
        .header("Content-Type", "application/wasm")
        .body(bytes)
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_success(),
        "{}",
        r.text().await.unwrap_or_default()
    );
    let sp = json!({"apiVersion": "wasm-apiserver.dev/v1", "kind": "StrategyPlugin",
        "metadata": {"name": "widgets"},
        "spec": {"sha256": sha, "extends": "widgets.example.dev"}});
    let r = http
        .post(format!("{base}/strategyplugins"))
        .json(&sp)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    for _ in 0..300 {
        let o: Value = http
            .get(format!("{base}/strategyplugins/widgets"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        match o
            .pointer("/status/replicas/0/state")
            .and_then(Value::as_str)
        {
            Some("Active") => return,
            Some("Failed") => panic!("the plugin did not attach: {o}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("the plugin did not attach in 30 s");
}

async fn attached(http: &reqwest::Client) {
    let server = crd_server(&["namespaces"]);
    let url = server.url.clone();
    let pid = server.child.id();
    // The widgets plugin describes v1 (stored) and v1alpha1: so do both CRDs.
    let two_versions = |kind: &str, plural: &str| {
        let mut c = crd("example.dev", kind, plural);
        let mut old = c["spec"]["versions"][0].clone();
        old["name"] = json!("v1alpha1");
        old["storage"] = json!(false);
        c["spec"]["versions"].as_array_mut().unwrap().push(old);
        c
    };
    create_crd(http, &url, &two_versions("Widget", "widgets")).await;
    create_crd(http, &url, &two_versions("Gizmo", "gizmos")).await;
    attach_widgets(http, &url).await;
    let widgets = format!("{url}/apis/example.dev/v1/namespaces/default/widgets");
    let gizmos = format!("{url}/apis/example.dev/v1/namespaces/default/gizmos");
    creates(http, pid, &widgets, "example.dev/v1", "Widget", "warm").await;
    creates(http, pid, &gizmos, "example.dev/v1", "Gizmo", "warm").await;
    println!("1c. server CPU per create: a CRD alone, and one with the widgets plugin attached");
    let mut ratios = Vec::new();
    for round in 0..3 {
        let prefix = format!("r{round}");
        let alone = creates(http, pid, &gizmos, "example.dev/v1", "Gizmo", &prefix).await;
        let with = creates(http, pid, &widgets, "example.dev/v1", "Widget", &prefix).await;
        ratios.push(with / alone);
        println!(
            "   round {}: CRD alone {alone:.0} µs, CRD + attached plugin {with:.0} µs, ratio {:.2}",
            round + 1,
            with / alone
        );
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("   median attached/alone {:.2}", ratios[1]);
}

/// A CRD with v1 (stored, `spec.replicas`) and v2 (`spec.count`), converting through the
/// webhook on `port` trusting `ca_pem`, or by `None` without one.
fn two_versions(plural: &str, kind: &str, webhook: Option<(u16, &str)>) -> Value {
    use base64::Engine;
    let version = |name: &str, storage: bool, field: &str| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "integer"}}}}}}})
    };
    let conversion = match webhook {
        None => json!({"strategy": "None"}),
        Some((port, ca)) => json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/convert"),
                "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)}}}),
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "conversion": conversion,
            "versions": [version("v1", true, "replicas"), version("v2", false, "count")]}})
}

/// v1 `spec.replicas` ↔ v2 `spec.count`.
fn rename(review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or("");
    let field = if desired.ends_with("/v2") {
        "count"
    } else {
        "replicas"
    };
    let converted: Vec<Value> = request["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let mut o = o.clone();
            if let Some(spec) = o["spec"].as_object_mut() {
                if let Some(n) = spec.remove("replicas").or_else(|| spec.remove("count")) {
                    spec.insert(field.into(), n);
                }
            }
            o["apiVersion"] = json!(desired);
            o
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": converted}})
}

async fn conversion_webhook(http: &reqwest::Client) {
    let (ca, cert, key) = webhook::certificates("bench-webhook-ca");
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let port = webhook::start(&cert, &key, rename, calls.clone());
    let server = crd_server(&["namespaces"]);
    let (url, pid) = (server.url.clone(), server.child.id());
    create_crd(http, &url, &two_versions("knobs", "Knob", None)).await;
    create_crd(
        http,
        &url,
        &two_versions("dials", "Dial", Some((port, &ca))),
    )
    .await;
    const N: usize = 1000;
    println!("1d. a LIST of {N} objects in the version they are not stored in");
    for (what, plural, kind) in [("None", "knobs", "Knob"), ("webhook", "dials", "Dial")] {
        let v1 = format!("{url}/apis/example.com/v1/namespaces/default/{plural}");
        futures::stream::iter(0..N)
            .map(|i| {
                let body = json!({"apiVersion": "example.com/v1", "kind": kind,
                    "metadata": {"name": format!("o-{i}")}, "spec": {"replicas": i}});
                let req = http.post(&v1).json(&body);
                async move { assert_eq!(req.send().await.unwrap().status(), 201) }
            })
            .buffer_unordered(IN_FLIGHT)
            .collect::<Vec<()>>()
            .await;
        let v2 = format!("{url}/apis/example.com/v2/namespaces/default/{plural}");
        let before_calls = calls.load(std::sync::atomic::Ordering::SeqCst);
        let mut figures = Vec::new();
        for _ in 0..2 {
            let (t, cpu) = (Instant::now(), proc_cpu_us(pid));
            let r = http.get(&v2).send().await.unwrap();
            assert_eq!(r.status(), 200);
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["items"].as_array().map(Vec::len), Some(N));
            let seven = body["items"]
                .as_array()
                .and_then(|items| items.iter().find(|o| o["metadata"]["name"] == "o-7"));
            // `None` rewrites the apiVersion: v1's `replicas` is pruned by v2's schema.
            let want = if plural == "dials" {
                json!({"count": 7})
            } else {
                json!({})
            };
            assert_eq!(seven.map(|o| &o["spec"]), Some(&want));
            figures.push((
                t.elapsed().as_secs_f64() * 1e3,
                (proc_cpu_us(pid) - cpu) / 1e3,
            ));
        }
        let reviews = calls.load(std::sync::atomic::Ordering::SeqCst) - before_calls;
        println!(
            "   {what}: first {:.0} ms wall, {:.0} ms server CPU ({reviews} reviews); then {:.0} ms wall, {:.0} ms CPU",
            figures[0].0, figures[0].1, figures[1].0, figures[1].1
        );
    }
    println!("1e. server CPU per create, in the storage version v1 and in v2 (its own schema)");
    for round in 0..3 {
        let mut line = format!("   round {round}:");
        for (what, plural, kind) in [("None", "knobs", "Knob"), ("webhook", "dials", "Dial")] {
            for version in ["v1", "v2"] {
                let before_calls = calls.load(std::sync::atomic::Ordering::SeqCst);
                let us = creates(
                    http,
                    pid,
                    &format!("{url}/apis/example.com/{version}/namespaces/default/{plural}"),
                    &format!("example.com/{version}"),
                    kind,
                    &format!("c{round}-{version}"),
                )
                .await;
                let reviews = calls.load(std::sync::atomic::Ordering::SeqCst) - before_calls;
                line += &format!(" {what} {version} {us:.0} µs ({reviews} reviews);");
            }
        }
        println!("{line}");
    }
}

/// The gadgets' CRD under `plural` with `rules` CEL rules on `spec` (none of the gadgets' own).
fn with_rules(plural: &str, kind: &str, rules: usize) -> Value {
    let mut c = crd("example.com", kind, plural);
    let spec = &mut c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["x-kubernetes-validations"] = (0..rules)
        .map(|i| {
            json!({"rule": format!("self.size.size() <= {} && self.replicas >= 0", 10 + i),
            "message": format!("rule {i}")})
        })
        .collect();
    c
}

async fn cel_rules(http: &reqwest::Client) {
    const RULES: usize = 50;
    let server = crd_server(&["namespaces"]);
    let (url, pid) = (server.url.clone(), server.child.id());
    create_crd(http, &url, &with_rules("plains", "Plain", 0)).await;
    create_crd(http, &url, &with_rules("ruleds", "Ruled", RULES)).await;
    let plains = format!("{url}/apis/example.com/v1/namespaces/default/plains");
    let ruleds = format!("{url}/apis/example.com/v1/namespaces/default/ruleds");
    creates(http, pid, &plains, "example.com/v1", "Plain", "warm").await;
    creates(http, pid, &ruleds, "example.com/v1", "Ruled", "warm").await;
    println!("1f. server CPU per create: no rule against {RULES} CEL rules");
    let mut per_rule = Vec::new();
    for round in 0..3 {
        let p = creates(
            http,
            pid,
            &plains,
            "example.com/v1",
            "Plain",
            &format!("r{round}"),
        )
        .await;
        let r = creates(
            http,
            pid,
            &ruleds,
            "example.com/v1",
            "Ruled",
            &format!("r{round}"),
        )
        .await;
        per_rule.push((r - p) / RULES as f64);
        println!(
            "   round {}: no rule {p:.0} µs, {RULES} rules {r:.0} µs, {:.2} µs per rule",
            round + 1,
            (r - p) / RULES as f64
        );
    }
    per_rule.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("   median {:.2} µs per rule", per_rule[1]);
}

fn main() {
    let n: usize = std::env::var("CRDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let sections = std::env::var("SECTIONS").unwrap_or_else(|_| "1,1c,1d,1f,2".into());
        let run = |s: &str| sections.split(',').any(|x| x.trim() == s);
        if run("1") {
            per_create(&http).await;
        }
        if run("1c") {
            attached(&http).await;
        }
        if run("1d") {
            conversion_webhook(&http).await;
        }
        if run("1f") {
            cel_rules(&http).await;
        }
        if run("2") {
            many_crds(&http, n).await;
        }
    });
}

//! What admission policies cost a write (issue 33, "Benchmarks"): ConfigMap creates over HTTP
//! on the embedded store, the server binary on loopback (plain port, `AlwaysAllow`).
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench admission`
//!
//! 1. **The policy members with no policy**: the server with its standard admission chain
//!    against the same server with `--disable-admission-plugins=MutatingAdmissionPolicy,
//!    MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,
//!    WasmAdmissionPolicy`, closed loop at 16 in flight, alternating A/B per round; the figure
//!    is the server's CPU per create (`/proc/<pid>/stat`), and the mean latency beside it.
//!    Target: ≤ 2% of a create.
//! 2. **20 policies matching every create** (10 ValidatingAdmissionPolicies with one CEL
//!    validation each and their bindings, 10 `AdmissionPlugin`s of the test-only
//!    `misbehaving-policy` component answering allowed after decoding the request), at a
//!    fixed offered load of 1,000 creates/s (open loop: one request started every
//!    millisecond, whatever the answers do), p50 and p99 latency with the policies minus
//!    without them, same server, alternating per round (the policies created, then deleted).
//!    Target: p99 + ≤ 1 ms. `POLICY_KINDS=map` measures 10 MutatingAdmissionPolicies instead
//!    (each one `ApplyConfiguration` adding a label, merged by the schema); `=wasm` the 10
//!    wasm policies alone; `=webhook` 10 ValidatingWebhookConfigurations calling an HTTPS
//!    webhook in this process that decodes the review and allows (the wasm policies' rule as a
//!    URL webhook; its own CPU, in this process, is not in the server's figure).
//!    `ADMISSION_RATE` changes the offered load (10 webhooks cannot take 1,000/s here).
//!
//! 3. **One wasm policy call, in-process** (no server): `WasmAdmissionPlugin::admit` on the
//!    request a ConfigMap create sends (the test-only policy decoding it and allowing), against
//!    `validate-settings` on `{}` (the same instance, deadline and memory cap, almost no
//!    data): what a call costs, and how much of it is the request.
//!
//! `ADMISSION_ROUNDS` sets the rounds (default 3), `SECTIONS=1`, `=2` or `=3` runs one
//! section.

mod common;
#[path = "../tests/it/common/conversion_webhook.rs"]
mod webhook;

use common::{proc_cpu_us, root, Server};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 16;
const MEASURE: Duration = Duration::from_secs(8);
const WARM_UP: Duration = Duration::from_secs(2);
/// The open loop's offered load (creates/s): 1,000, or `ADMISSION_RATE`.
fn rate_per_second() -> u64 {
    std::env::var("ADMISSION_RATE")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1000)
}
const POLICIES: usize = 10;

fn start(disabled: bool) -> Server {
    let (dir, plugins) = Server::dir_with_plugins(&["configmaps", "namespaces"]);
    Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.args([
            "--authorization-mode=AlwaysAllow",
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight=0",
        ]);
        if disabled {
            cmd.arg("--disable-admission-plugins=MutatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,WasmAdmissionPolicy");
        }
    })
}

async fn post(c: &reqwest::Client, url: &str, body: serde_json::Value) -> u16 {
    let r = c.post(url).json(&body).send().await.unwrap();
    let code = r.status().as_u16();
    if code >= 400 && code != 409 {
        eprintln!("POST {url}: {code} {}", r.text().await.unwrap_or_default());
    }
    code
}

async fn namespace(c: &reqwest::Client, url: &str) {
    let code = post(
        c,
        &format!("{url}/api/v1/namespaces"),
        json!({"metadata": {"name": "bench"}}),
    )
    .await;
    assert!(code == 201 || code == 409, "{code}");
}

fn configmap(name: String) -> serde_json::Value {
    json!({"metadata": {"name": name, "labels": {"app": "bench"}}, "data": {"k": "x".repeat(1024)}})
}

/// Closed loop at [`IN_FLIGHT`]: creates per second, mean latency µs, server CPU µs per create.
async fn closed_loop(c: &reqwest::Client, s: &Server, tag: &str) -> (f64, f64, f64) {
    let seq = Arc::new(AtomicU64::new(0));
    let url = format!("{}/api/v1/namespaces/bench/configmaps", s.url);
    let run = |dur: Duration| {
        (0..IN_FLIGHT)
            .map(|_| {
                let (c, url, seq, tag) = (c.clone(), url.clone(), seq.clone(), tag.to_string());
                tokio::spawn(async move {
                    let end = Instant::now() + dur;
                    let (mut n, mut total) = (0u64, Duration::ZERO);
                    while Instant::now() < end {
                        let i = seq.fetch_add(1, Ordering::Relaxed);
                        let t = Instant::now();
                        let code = post(&c, &url, configmap(format!("cm-{tag}-{i}"))).await;
                        assert_eq!(code, 201);
                        total += t.elapsed();
                        n += 1;
                    }
                    (n, total)
                })
            })
            .collect::<Vec<_>>()
    };
    for t in run(WARM_UP) {
        t.await.unwrap();
    }
    let cpu = proc_cpu_us(s.child.id());
    let start = Instant::now();
    let (mut n, mut total) = (0u64, Duration::ZERO);
    for t in run(MEASURE) {
        let (tn, tt) = t.await.unwrap();
        n += tn;
        total += tt;
    }
    let cpu = proc_cpu_us(s.child.id()) - cpu;
    let secs = start.elapsed().as_secs_f64();
    (
        n as f64 / secs,
        total.as_micros() as f64 / n as f64,
        cpu / n as f64,
    )
}

/// Open loop at [`rate_per_second`] for [`MEASURE`]: p50 and p99 latency, ms.
async fn open_loop(c: &reqwest::Client, s: &Server, tag: &str) -> (f64, f64) {
    let url = format!("{}/api/v1/namespaces/bench/configmaps", s.url);
    let rate = rate_per_second();
    let total = rate * MEASURE.as_secs();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = Vec::with_capacity(total as usize);
    for i in 0..total {
        tick.tick().await;
        let (c, url, name) = (c.clone(), url.clone(), format!("open-{tag}-{i}"));
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let code = post(&c, &url, configmap(name)).await;
            assert_eq!(code, 201);
            t.elapsed()
        }));
    }
    let mut lat: Vec<f64> = Vec::with_capacity(tasks.len());
    for t in tasks {
        lat.push(t.await.unwrap().as_secs_f64() * 1e3);
    }
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let q = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    (q(0.50), q(0.99))
}

/// Upload the test-only policy component; its sha256.
async fn upload(c: &reqwest::Client, url: &str) -> String {
    let bytes = std::fs::read(root().join("target/test-plugins/misbehaving-policy.wasm"))
        .expect("bash plugins/build.sh first");
    let sha = hex::encode(Sha256::digest(&bytes));
    let r = c
        .put(format!(
            "{url}/apis/wasm-apiserver.dev/v1/strategyplugincomponents/{sha}"
        ))
        .header("content-type", "application/wasm")
        .body(bytes)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    sha
}

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";
const HOST: &str = "/apis/wasm-apiserver.dev/v1";

/// The bench's HTTPS webhook (started once): the CA's PEM and the port.
fn webhook_server() -> &'static (String, u16) {
    static SERVER: std::sync::OnceLock<(String, u16)> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        let (ca, cert, key) = webhook::certificates("bench-webhook-ca");
        // Decodes the review (as the wasm policy decodes its request) and allows.
        fn allow(review: &serde_json::Value) -> serde_json::Value {
            let request = &review["request"];
            assert!(request["object"]["metadata"]["name"].is_string());
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": request["uid"], "allowed": true}})
        }
        let port = webhook::start(&cert, &key, allow, Arc::new(AtomicUsize::new(0)));
        (ca, port)
    })
}

/// Create the 20 policies (enforced once each create returns).
async fn add_policies(c: &reqwest::Client, url: &str, sha: &str) {
    // `POLICY_KINDS=cel` or `=wasm` adds only that half (to tell their costs apart); `=map`
    // adds 10 MutatingAdmissionPolicies instead.
    let kinds = std::env::var("POLICY_KINDS").unwrap_or_else(|_| "cel,wasm".into());
    for i in 0..POLICIES {
        let policy = json!({"metadata": {"name": format!("vap-{i}")}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": format!("object.metadata.name.size() < {}", 250 + i)}]}});
        let binding = json!({"metadata": {"name": format!("vap-{i}")}, "spec": {
            "policyName": format!("vap-{i}"), "validationActions": ["Deny"]}});
        let plugin = json!({"apiVersion": "wasm-apiserver.dev/v1", "kind": "AdmissionPlugin",
            "metadata": {"name": format!("wasm-{i}")}, "spec": {"sha256": sha,
            "contextReads": [{"group": "", "resource": "configmaps"}],
            "settings": {"action": "allow"}}});
        if kinds.contains("cel") {
            for (path, body) in [
                ("validatingadmissionpolicies", policy),
                ("validatingadmissionpolicybindings", binding),
            ] {
                assert_eq!(
                    post(c, &format!("{url}{ADMISSION}/{path}"), body).await,
                    201
                );
            }
        }
        if kinds.contains("map") {
            let policy = json!({"metadata": {"name": format!("map-{i}")}, "spec": {
                "reinvocationPolicy": "Never",
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]},
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                    "expression": format!("Object{{metadata: Object.metadata{{labels: {{'l{i}': 'v'}}}}}}")}}]}});
            let binding = json!({"metadata": {"name": format!("map-{i}")}, "spec": {
                "policyName": format!("map-{i}")}});
            for (path, body) in [
                ("mutatingadmissionpolicies", policy),
                ("mutatingadmissionpolicybindings", binding),
            ] {
                assert_eq!(
                    post(c, &format!("{url}{ADMISSION}/{path}"), body).await,
                    201
                );
            }
        }
        if kinds.contains("webhook") {
            use base64::Engine;
            let (ca, port) = webhook_server();
            let config = json!({"metadata": {"name": format!("hook-{i}")}, "webhooks": [{
                "name": format!("hook-{i}.bench.example.com"),
                "clientConfig": {"url": format!("https://127.0.0.1:{port}/validate"),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
                "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
            assert_eq!(
                post(
                    c,
                    &format!("{url}{ADMISSION}/validatingwebhookconfigurations"),
                    config
                )
                .await,
                201
            );
        }
        if kinds.contains("wasm") {
            assert_eq!(
                post(c, &format!("{url}{HOST}/admissionplugins"), plugin).await,
                201
            );
        }
    }
}

async fn remove_policies(c: &reqwest::Client, url: &str) {
    for path in [
        format!("{ADMISSION}/validatingadmissionpolicies"),
        format!("{ADMISSION}/validatingadmissionpolicybindings"),
        format!("{ADMISSION}/mutatingadmissionpolicies"),
        format!("{ADMISSION}/mutatingadmissionpolicybindings"),
        format!("{ADMISSION}/validatingwebhookconfigurations"),
        format!("{HOST}/admissionplugins"),
    ] {
        let r = c.delete(format!("{url}{path}")).send().await.unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
    }
    // Until the deletions reached the policy sources (each list-and-watch).
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Section 3: µs per `admit` call and per `validate-settings` call.
fn in_process() -> (f64, f64) {
    use wasm_apiserver::plugin::context_reads::{ContextReads, GroupVersionResource, ReadError};
    use wasm_apiserver::plugin::{PluginRuntime, RuntimeConfig};
    struct NoReads;
    impl ContextReads for NoReads {
        fn get(
            &self,
            _: &GroupVersionResource,
            _: &str,
            _: &str,
        ) -> Result<Option<String>, ReadError> {
            Ok(None)
        }
        fn list(
            &self,
            _: &GroupVersionResource,
            _: &str,
            _: &str,
        ) -> Result<Vec<String>, ReadError> {
            Ok(Vec::new())
        }
    }
    let runtime = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let bytes = std::fs::read(root().join("target/test-plugins/misbehaving-policy.wasm")).unwrap();
    let policy = runtime.load_admission("bench", &bytes).unwrap();
    let object = configmap("cm-0".into());
    let review = json!({"uid": "u", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
        "subResource": "", "requestSubResource": "", "name": "cm-0", "namespace": "bench",
        "operation": "CREATE", "userInfo": {"username": "system:anonymous", "groups": ["system:unauthenticated"]},
        "object": object, "oldObject": null, "dryRun": false, "options": null})
    .to_string();
    let reads: Arc<dyn ContextReads> = Arc::new(NoReads);
    let settings = r#"{"action":"allow"}"#;
    let admit = common::measure(2000, || {
        let r = policy
            .admit(false, &review, settings, reads.clone())
            .unwrap();
        assert!(r.allowed);
    });
    let tiny = common::measure(2000, || {
        policy.validate_settings("{}").unwrap().unwrap();
    });
    (admit / 1e3, tiny / 1e3)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[tokio::main]
async fn main() {
    let c = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();
    let rounds: usize = std::env::var("ADMISSION_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let sections = std::env::var("SECTIONS").unwrap_or_else(|_| "123".into());

    if sections.contains('3') {
        let (admit, tiny) = in_process();
        println!(
            "3 one wasm policy call in-process: admit on a ConfigMap create's request {admit:.1} µs, validate-settings on {{}} {tiny:.1} µs"
        );
    }

    if sections.contains('1') {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            for disabled in [true, false] {
                let s = start(disabled);
                namespace(&c, &s.url).await;
                let (rps, lat, cpu) = closed_loop(&c, &s, &format!("{round}")).await;
                let name = if disabled {
                    "members disabled"
                } else {
                    "standard chain, no policy"
                };
                println!("1 round {round} {name:>26}: {cpu:6.0} µs server CPU/create, {lat:6.0} µs mean, {rps:6.0} creates/s");
                if disabled { &mut without } else { &mut with }.push((cpu, lat));
            }
        }
        let cpu = |v: &[(f64, f64)]| mean(&v.iter().map(|x| x.0).collect::<Vec<_>>());
        let lat = |v: &[(f64, f64)]| mean(&v.iter().map(|x| x.1).collect::<Vec<_>>());
        println!(
            "1 the policy members with no policy: server CPU/create {:.0} / {:.0} µs = {:+.1}%, mean latency {:+.1}%",
            cpu(&with),
            cpu(&without),
            (cpu(&with) / cpu(&without) - 1.0) * 100.0,
            (lat(&with) / lat(&without) - 1.0) * 100.0
        );
    }

    if sections.contains('2') {
        let s = start(false);
        namespace(&c, &s.url).await;
        let sha = upload(&c, &s.url).await;
        // The component is compiled on the first policy's create: once, outside the rounds.
        add_policies(&c, &s.url, &sha).await;
        remove_policies(&c, &s.url).await;
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let (rps, _, cpu) = closed_loop(&c, &s, &format!("ca{round}")).await;
            println!("2 round {round} no policy:   {cpu:6.0} µs server CPU/create, {rps:6.0} creates/s at {IN_FLIGHT} in flight");
            add_policies(&c, &s.url, &sha).await;
            let (rps, _, cpu) = closed_loop(&c, &s, &format!("cb{round}")).await;
            println!("2 round {round} with policies: {cpu:6.0} µs server CPU/create, {rps:6.0} creates/s at {IN_FLIGHT} in flight");
            remove_policies(&c, &s.url).await;
            let (p50, p99) = open_loop(&c, &s, &format!("a{round}")).await;
            println!(
                "2 round {round} no policy:   p50 {p50:6.2} ms, p99 {p99:6.2} ms at {}/s",
                rate_per_second()
            );
            without.push((p50, p99));
            add_policies(&c, &s.url, &sha).await;
            let (p50, p99) = open_loop(&c, &s, &format!("b{round}")).await;
            println!(
                "2 round {round} with policies: p50 {p50:6.2} ms, p99 {p99:6.2} ms at {}/s",
                rate_per_second()
            );
            with.push((p50, p99));
            remove_policies(&c, &s.url).await;
        }
        let q = |v: &[(f64, f64)], i: usize| {
            mean(
                &v.iter()
                    .map(|x| if i == 0 { x.0 } else { x.1 })
                    .collect::<Vec<_>>(),
            )
        };
        println!(
            "2 policies ({}) at {} creates/s: p50 {:.2} → {:.2} ms ({:+.2} ms), p99 {:.2} → {:.2} ms ({:+.2} ms)",
            std::env::var("POLICY_KINDS").unwrap_or_else(|_| "10 CEL, 10 wasm".into()),
            rate_per_second(),
            q(&without, 0),
            q(&with, 0),
            q(&with, 0) - q(&without, 0),
            q(&without, 1),
            q(&with, 1),
            q(&with, 1) - q(&without, 1)
        );
    }
}

//! Several servers over one etcd (issue 16): plugins delivered through the API and served by
//! every replica (`plugin push`, `StrategyPlugin` objects, uploads of components), a rollout
//! and a rollback seen in `status.replicas`, refused uploads, writes through one replica seen
//! by watches on another, a replica killed under its clients' feet, a 3-member etcd
//! cluster losing a member under load, and a wasm admission policy applied through one
//! replica enforced by the other within 2 s and changed under load with no failed write.

use crate::common;

use common::http::{client, send};
use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};
use wasm_apiserver_storage::testing::etcd::{EtcdCluster, EtcdServer};

const PLUGINS: &[&str] = &["namespaces", "configmaps"];
const SP: &str = "/apis/wasm-apiserver.dev/v1/strategyplugins";
const COMPONENTS: &str = "/apis/wasm-apiserver.dev/v1/strategyplugincomponents";
const MISBEHAVERS: &str = "/apis/test.wasm-apiserver.dev/v1/namespaces/default/misbehavers";

fn replica(etcd_servers: &str, id: &str, extra: &[&str]) -> TestServer {
    let mut args = vec!["--etcd-servers", etcd_servers, "--server-id", id];
    args.extend_from_slice(extra);
    TestServer::start_with(Backend::Embedded, PLUGINS, &args)
}

/// `wasm-apiserver plugin push FILE --server URL --name misbehaving`: (success, output).
fn push(s: &TestServer, variant: &str) -> (bool, String) {
    let file = common::plugin(variant);
    common::cli([
        "plugin".as_ref(),
        "push".as_ref(),
        file.as_os_str(),
        "--server".as_ref(),
        s.url.as_ref(),
        "--name".as_ref(),
        std::ffi::OsStr::new("misbehaving"),
    ])
}

fn sha256_of(variant: &str) -> String {
    hex::encode(Sha256::digest(
        std::fs::read(common::plugin(variant)).unwrap(),
    ))
}

async fn get(url: String) -> (u16, Value) {
    send(client().get(url)).await
}

/// Wait (up to 30 s) until `f` holds for the StrategyPlugin `misbehaving` as `s` serves it.
async fn until_plugin(s: &TestServer, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (_, o) = get(format!("{}{SP}/misbehaving", s.url)).await;
        if f(&o) {
            return o;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}: {o}\nserver log:\n{}",
            s.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The status of the condition `kind` (`""` when absent).
fn condition(o: &Value, kind: &str) -> String {
    o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("")
        .to_string()
}

/// Both replicas' entries in `state` at the object's generation.
fn converged(o: &Value, state: &str, replicas: usize) -> bool {
    let generation = o["metadata"]["generation"].as_i64().unwrap_or(-1);
    let entries = o["status"]["replicas"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    entries.len() == replicas
        && entries
            .iter()
            .all(|r| r["state"] == state && r["observedGeneration"] == generation)
}

async fn create(s: &TestServer, name: &str, tier: Option<&str>) -> u16 {
    let mut o = json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
                       "metadata": {"name": name}});
    if let Some(t) = tier {
        o["metadata"]["labels"] = json!({"tier": t});
    }
    send(client().post(format!("{}{MISBEHAVERS}", s.url)).json(&o))
        .await
        .0
}

async fn until_served(s: &TestServer, served: bool) -> Duration {
    let start = Instant::now();
    loop {
        let (code, _) = get(format!("{}{MISBEHAVERS}", s.url)).await;
        if (code == 200) == served {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "replica never {} the resource ({code})\n{}",
            if served { "served" } else { "stopped serving" },
            s.log()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn push_rollout_refusal_and_rollback_on_two_replicas() {
    let etcd = EtcdServer::start();
    let a = replica(&etcd.endpoint, "replica-a", &[]);
    let b = replica(&etcd.endpoint, "replica-b", &[]);
    common::http::default_namespace(&a.url).await;

    // Push through A: B serves it too.
    let (ok, out) = push(&a, "misbehaving");
    assert!(ok, "{out}");
    assert!(out.contains("uploaded") && out.contains("created"), "{out}");
    let took = until_served(&b, true).await;
    // Generous for a loaded CI machine (a fresh compile on each replica); the rollout bench
    // measures it.
    assert!(took < Duration::from_secs(30), "B served after {took:?}");
    until_served(&a, true).await;
    let o = until_plugin(&a, "both replicas Active", |o| converged(o, "Active", 2)).await;
    assert_eq!(o["metadata"]["generation"], 1);
    assert_eq!(o["status"]["replicas"][0]["server"], "replica-a", "{o}");
    assert_eq!(o["status"]["replicas"][1]["server"], "replica-b", "{o}");
    assert_eq!(
        o["status"]["replicas"][0]["sha256"],
        sha256_of("misbehaving"),
        "{o}"
    );
    let table = a.ok(&["get", "strategyplugins", "misbehaving"]);
    assert!(
        table.contains("replica-a=Active@1 replica-b=Active@1") && table.contains("Active"),
        "{table}"
    );
    // Conditions summarise the replicas: what `kubectl wait` and kstatus read.
    a.ok(&[
        "wait",
        "--for=condition=Ready",
        "strategyplugin/misbehaving",
        "--timeout=10s",
    ]);
    let o = until_plugin(&a, "conditions", |o| condition(o, "Ready") == "True").await;
    let ready = &o["status"]["conditions"][0];
    assert_eq!(
        (
            &ready["observedGeneration"],
            &ready["reason"],
            &ready["message"]
        ),
        (
            &json!(1),
            &json!("Active"),
            &json!("2 of 2 replicas observed generation 1")
        ),
        "{o}"
    );
    assert_eq!(condition(&o, "Progressing"), "False", "{o}");
    assert_eq!(condition(&o, "Degraded"), "False", "{o}");
    assert_eq!(create(&a, "one", None).await, 201);
    let (code, _) = get(format!("{}{MISBEHAVERS}/one", b.url)).await;
    assert_eq!(code, 200, "written through A, read through B");
    // Pushing the same bytes again changes nothing.
    let (ok, out) = push(&a, "misbehaving");
    assert!(
        ok && out.contains("already uploaded") && out.contains("unchanged"),
        "{out}"
    );

    // A new version: generation 2 everywhere, its rule in force on both. Not Ready until
    // both replicas report it.
    let (ok, out) = push(&b, "misbehaving-strict");
    assert!(ok, "{out}");
    let (_, o) = get(format!("{}{SP}/misbehaving", a.url)).await;
    assert!(
        converged(&o, "Active", 2) || condition(&o, "Ready") == "False",
        "{o}"
    );
    until_plugin(&a, "the strict version", |o| {
        o["metadata"]["generation"] == 2 && converged(o, "Active", 2)
    })
    .await;
    assert_eq!(create(&a, "no-tier", None).await, 422);
    assert_eq!(create(&b, "no-tier", None).await, 422);

    // A broken version is refused by both; the strict one keeps serving on both.
    let (ok, out) = push(&a, "misbehaving-trap-describe");
    assert!(ok, "the upload itself is a valid component: {out}");
    let o = until_plugin(&a, "both refusing", |o| converged(o, "Failed", 2)).await;
    assert_eq!(condition(&o, "Degraded"), "True", "{o}");
    assert_eq!(condition(&o, "Ready"), "False", "{o}");
    for r in o["status"]["replicas"].as_array().unwrap() {
        assert!(
            r["lastError"]
                .as_str()
                .is_some_and(|e| e.contains("describe traps")),
            "{o}"
        );
        assert_eq!(r["sha256"], sha256_of("misbehaving-strict"), "{o}");
    }
    let table = b.ok(&["get", "strategyplugins", "misbehaving", "-o", "wide"]);
    assert!(
        table.contains("Failed") && table.contains("failed in describe"),
        "{table}"
    );
    for s in [&a, &b] {
        assert_eq!(create(s, "still-strict", None).await, 422);
    }

    // Rollback: the first hash again, served on both.
    let (ok, out) = push(&b, "misbehaving");
    assert!(ok && out.contains("already uploaded"), "{out}");
    until_plugin(&b, "rolled back", |o| {
        o["metadata"]["generation"] == 4 && converged(o, "Active", 2)
    })
    .await;
    assert_eq!(create(&a, "lenient-a", None).await, 201);
    assert_eq!(create(&b, "lenient-b", None).await, 201);

    // Inactive, then deleted: unregistered on both, data kept.
    let out = a.ok(&[
        "patch",
        "strategyplugin",
        "misbehaving",
        "--type=merge",
        "-p",
        r#"{"spec":{"active":false}}"#,
    ]);
    assert!(out.contains("patched"), "{out}");
    until_served(&b, false).await;
    until_plugin(&a, "inactive", |o| converged(o, "Inactive", 2)).await;
    a.ok(&["delete", "strategyplugin", "misbehaving"]);
    let (ok, out) = push(&a, "misbehaving");
    assert!(ok, "{out}");
    until_served(&b, true).await;
    let (code, _) = get(format!("{}{MISBEHAVERS}/lenient-a", b.url)).await;
    assert_eq!(code, 200, "the data outlived the object");
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_uploads_store_nothing_and_missing_components_are_reported() {
    let etcd = EtcdServer::start();
    let a = replica(
        &etcd.endpoint,
        "replica-a",
        &["--max-plugin-component-bytes", "1000000"],
    );
    let b = replica(&etcd.endpoint, "replica-b", &[]);
    let put = |s: &TestServer, sha: &str, body: Vec<u8>, ct: &str| {
        client()
            .put(format!("{}{COMPONENTS}/{sha}", s.url))
            .header("Content-Type", ct)
            .body(body)
    };
    // Not a component.
    let text = b"#!/bin/sh\necho not wasm\n".to_vec();
    let sha = hex::encode(Sha256::digest(&text));
    let (code, body) = send(put(&a, &sha, text, "application/wasm")).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["reason"], "Invalid", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("not a WebAssembly component"),
        "{body}"
    );
    assert_eq!(get(format!("{}{COMPONENTS}/{sha}", b.url)).await.0, 404);
    // A hash that does not match.
    let bytes = std::fs::read(common::plugin("misbehaving")).unwrap();
    let real = hex::encode(Sha256::digest(&bytes));
    let wrong = hex::encode(Sha256::digest(b"something else"));
    let (code, body) = send(put(&a, &wrong, bytes.clone(), "application/wasm")).await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(&real),
        "names the actual hash: {body}"
    );
    assert_eq!(get(format!("{}{COMPONENTS}/{wrong}", b.url)).await.0, 404);
    // Over the size limit of A (1 MB): 413, nothing stored; B (64 MiB) takes it.
    let pods = std::fs::read(common::plugin("pods")).unwrap();
    let pods_sha = hex::encode(Sha256::digest(&pods));
    let (code, body) = send(put(&a, &pods_sha, pods.clone(), "application/wasm")).await;
    assert_eq!(code, 413, "{body}");
    assert_eq!(body["reason"], "RequestEntityTooLarge", "{body}");
    assert_eq!(
        get(format!("{}{COMPONENTS}/{pods_sha}", a.url)).await.0,
        404
    );
    // Other media types and names.
    let (code, body) = send(put(&a, &real, bytes.clone(), "application/json")).await;
    assert_eq!(code, 415, "{body}");
    let (code, _) = send(put(&a, "not-a-hash", bytes.clone(), "application/wasm")).await;
    assert_eq!(code, 400);
    let (code, body) = send(client().delete(format!("{}{COMPONENTS}/{real}", a.url))).await;
    assert_eq!(code, 405, "{body}");

    // An object naming a component never uploaded: every replica says so.
    let obj = json!({"apiVersion": "wasm-apiserver.dev/v1", "kind": "StrategyPlugin",
                     "metadata": {"name": "misbehaving"}, "spec": {"sha256": real}});
    let (code, body) = send(client().post(format!("{}{SP}", a.url)).json(&obj)).await;
    assert_eq!(code, 201, "{body}");
    let o = until_plugin(&a, "both report the missing component", |o| {
        converged(o, "Failed", 2)
    })
    .await;
    for r in o["status"]["replicas"].as_array().unwrap() {
        assert!(
            r["lastError"]
                .as_str()
                .is_some_and(|e| e.contains("has not been uploaded")),
            "{o}"
        );
    }
    // Uploaded later (the streamed path, through B): both pick it up.
    let (code, body) = send(put(&b, &real, bytes.clone(), "application/wasm")).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["size"], bytes.len());
    let (code, _) = send(put(&a, &real, bytes, "application/wasm")).await;
    assert_eq!(code, 200, "already stored");
    until_plugin(&a, "both Active", |o| converged(o, "Active", 2)).await;
    until_served(&a, true).await;
    until_served(&b, true).await;

    // Invalid specs are refused with the field.
    let bad = json!({"apiVersion": "wasm-apiserver.dev/v1", "kind": "StrategyPlugin",
                     "metadata": {"name": "bad"}, "spec": {"sha256": "ABC"}});
    let (code, body) = send(client().post(format!("{}{SP}", a.url)).json(&bad)).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["details"]["causes"][0]["field"], "spec.sha256",
        "{body}"
    );
}

/// Every ADDED/MODIFIED event of a configmap watch on `s` from `rv`, until `n` arrived.
async fn watch_events(url: String, n: usize) -> Vec<(String, String, i64)> {
    use futures::StreamExt;
    let resp = client()
        .get(url)
        .timeout(Duration::from_secs(120))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = resp.bytes_stream();
    let mut buf = Vec::new();
    let mut events = Vec::new();
    while events.len() < n {
        let chunk = tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("events keep coming")
            .expect("the watch stays open")
            .unwrap();
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.iter().position(|&c| c == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            let ev: Value = serde_json::from_slice(&line).unwrap();
            let ty = ev["type"].as_str().unwrap().to_string();
            if ty == "BOOKMARK" {
                continue;
            }
            let name = ev["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            let rv: i64 = ev["object"]["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            events.push((ty, name, rv));
        }
    }
    events
}

async fn configmap(s: &TestServer, name: &str) -> u16 {
    let o = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                   "data": {"k": "v"}});
    send(
        client()
            .post(format!("{}/api/v1/namespaces/default/configmaps", s.url))
            .json(&o),
    )
    .await
    .0
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_through_one_replica_watched_on_another_and_a_replica_killed() {
    let etcd = EtcdServer::start();
    let mut a = replica(&etcd.endpoint, "replica-a", &["--watch-cache=true"]);
    let b = replica(&etcd.endpoint, "replica-b", &["--watch-cache=true"]);
    common::http::default_namespace(&a.url).await;
    let (_, list) = get(format!("{}/api/v1/namespaces/default/configmaps", b.url)).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let watch = tokio::spawn(watch_events(
        format!(
            "{}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&allowWatchBookmarks=true",
            b.url
        ),
        60,
    ));
    for i in 0..30 {
        assert_eq!(configmap(&a, &format!("through-a-{i}")).await, 201);
    }
    // A dies; B's clients carry on, and B's watch keeps its order.
    a.kill();
    for i in 0..30 {
        assert_eq!(configmap(&b, &format!("through-b-{i}")).await, 201);
    }
    let events = watch.await.unwrap();
    assert_eq!(events.len(), 60);
    let mut names = std::collections::HashSet::new();
    for w in events.windows(2) {
        assert!(
            w[0].2 < w[1].2,
            "resourceVersion order: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    for (ty, name, _) in &events {
        assert_eq!(ty, "ADDED");
        assert!(names.insert(name.clone()), "{name} twice");
    }
    assert!(names.contains("through-a-0") && names.contains("through-b-29"));
}

#[tokio::test(flavor = "multi_thread")]
async fn losing_one_of_three_etcd_members_under_load_loses_no_write() {
    let mut cluster = EtcdCluster::start(3);
    let endpoints = cluster.endpoints();
    let a = replica(&endpoints, "replica-a", &["--watch-cache=true"]);
    let b = replica(&endpoints, "replica-b", &["--watch-cache=true"]);
    common::http::default_namespace(&a.url).await;
    let urls = [a.url.clone(), b.url.clone()];
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let url = urls[w % 2].clone();
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            let (mut created, mut failed) = (Vec::new(), Vec::new());
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let name = format!("w{w}-{i}");
                let o =
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
                let started = Instant::now();
                let r = client()
                    .post(format!("{url}/api/v1/namespaces/default/configmaps"))
                    .json(&o)
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status() == 201 => created.push(name),
                    Ok(r) => failed.push((
                        name,
                        format!("{} {}", r.status(), r.text().await.unwrap_or_default()),
                        started,
                    )),
                    Err(e) => failed.push((name, e.to_string(), started)),
                }
                i += 1;
            }
            (created, failed)
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let killed_at = Instant::now();
    cluster.members[0].stop();
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut created = Vec::new();
    for w in writers {
        let (c, failed) = w.await.unwrap();
        // etcd's own leader election (when the killed member led: election timeout 1 s, a
        // few heartbeats more, slower on a loaded machine) is the only window in which a
        // request may fail — including those in flight at the kill.
        for (name, why, at) in &failed {
            let since = at.saturating_duration_since(killed_at);
            let before = killed_at.saturating_duration_since(*at);
            assert!(
                since < Duration::from_secs(5) && before < Duration::from_secs(2),
                "{name} failed ({why}) {since:?} after / {before:?} before the kill"
            );
        }
        created.extend(c);
    }
    assert!(created.len() > 100, "only {} writes", created.len());
    // Every acknowledged write is readable through either replica.
    for (i, name) in created.iter().enumerate() {
        let url = &urls[i % 2];
        let (code, _) = get(format!("{url}/api/v1/namespaces/default/configmaps/{name}")).await;
        assert_eq!(code, 200, "{name} acknowledged, then lost");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resource_claimed_by_a_file_and_an_object_is_served_once() {
    let etcd = EtcdServer::start();
    // A serves widgets from its folder; B has no such file.
    let a = TestServer::start_with(
        Backend::Embedded,
        &["namespaces", "configmaps", "widgets"],
        &["--etcd-servers", &etcd.endpoint, "--server-id", "replica-a"],
    );
    let b = replica(&etcd.endpoint, "replica-b", &[]);
    let file = common::plugin("widgets");
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "push".as_ref(),
        file.as_os_str(),
        "--server".as_ref(),
        a.url.as_ref(),
        "--name".as_ref(),
        std::ffi::OsStr::new("widgets-api"),
    ]);
    assert!(ok, "{out}");
    let start = Instant::now();
    let o = loop {
        let (_, o) = get(format!("{}{SP}/widgets-api", a.url)).await;
        let entries = o["status"]["replicas"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if entries.len() == 2 {
            break o;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{o}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let entries = o["status"]["replicas"].as_array().unwrap();
    assert_eq!(entries[0]["server"], "replica-a");
    assert_eq!(entries[0]["state"], "Failed", "{o}");
    assert!(
        entries[0]["lastError"]
            .as_str()
            .unwrap()
            .contains("already served by the plugin file widgets.wasm of this server"),
        "{o}"
    );
    assert_eq!(entries[1]["state"], "Active", "B has no file: {o}");
    // The file's record shows A serving it; both replicas serve widgets, once each.
    let (_, record) = get(format!("{}{SP}/widgets", b.url)).await;
    assert_eq!(record["spec"]["file"], "widgets.wasm", "{record}");
    assert_eq!(
        record["status"]["replicas"][0]["state"], "Active",
        "{record}"
    );
    for s in [&a, &b] {
        let (code, _) = get(format!("{}/apis/example.dev/v1/widgets", s.url)).await;
        assert_eq!(code, 200);
    }
    // Each replica names itself in its metrics.
    let metrics = common::http::metrics(&b.url).await;
    assert!(
        metrics.contains(r#"wasm_apiserver_server_info{server_id="replica-b"} 1"#),
        "{metrics}"
    );
}

const ADMISSION_PLUGINS: &str = "/apis/wasm-apiserver.dev/v1/admissionplugins";

/// Apply (create or replace) the AdmissionPlugin `name` of the test-only policy with `settings`
/// through `s`.
async fn apply_policy(s: &TestServer, name: &str, sha: &str, settings: Value) {
    let url = format!("{}{ADMISSION_PLUGINS}", s.url);
    let mut body = json!({"apiVersion": "wasm-apiserver.dev/v1", "kind": "AdmissionPlugin",
        "metadata": {"name": name}, "spec": {"sha256": sha, "settings": settings,
        "contextReads": [{"group": "", "resource": "configmaps"}]}});
    let (code, current) = get(format!("{url}/{name}")).await;
    let (code, out) = if code == 200 {
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        send(client().put(format!("{url}/{name}")).json(&body)).await
    } else {
        send(client().post(url).json(&body)).await
    };
    assert!(code == 200 || code == 201, "{code} {out}");
}

async fn create_configmap(url: &str, name: &str) -> (u16, Value) {
    send(
        client()
            .post(format!("{url}/api/v1/namespaces/default/configmaps"))
            .json(&json!({"metadata": {"name": name}})),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wasm_policy_applied_on_one_replica_is_enforced_by_the_other_and_reloads_under_load() {
    let etcd = EtcdServer::start();
    let a = replica(&etcd.endpoint, "replica-a", &[]);
    let b = replica(&etcd.endpoint, "replica-b", &[]);
    common::http::default_namespace(&a.url).await;
    let bytes = std::fs::read(common::plugin("misbehaving-policy")).unwrap();
    let sha = hex::encode(Sha256::digest(&bytes));
    let (code, out) = send(
        client()
            .put(format!("{}{COMPONENTS}/{sha}", a.url))
            .header("Content-Type", "application/wasm")
            .body(bytes),
    )
    .await;
    assert!(code == 200 || code == 201, "{code} {out}");

    // A first policy loads the component on both replicas (each compiles it once) and both
    // report it in the object's status.
    apply_policy(&a, "allow", &sha, json!({"action": "allow"})).await;
    let start = Instant::now();
    loop {
        let (_, o) = get(format!("{}{ADMISSION_PLUGINS}/allow", b.url)).await;
        if converged(&o, "Active", 2) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "both replicas active: {o}\n{}",
            b.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A new policy through A: B refuses within 2 s (a watch event; the component is loaded).
    apply_policy(
        &a,
        "deny",
        &sha,
        json!({"action": "deny", "message": "not on any replica"}),
    )
    .await;
    let start = Instant::now();
    let mut i = 0;
    loop {
        let (code, out) = create_configmap(&b.url, &format!("probe-{i}")).await;
        i += 1;
        if code == 403 {
            assert_eq!(
                out["message"],
                "admission plugin \"deny\" denied the request: not on any replica"
            );
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "B still admits after {:?}: {out}",
            start.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (code, _) = send(client().delete(format!("{}{ADMISSION_PLUGINS}/deny", a.url))).await;
    assert_eq!(code, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The allowing policy changed five times while both replicas take creates: none fails.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (url, stop) = ([a.url.clone(), b.url.clone()][w % 2].clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let (mut n, mut failed) = (0u64, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (code, out) = create_configmap(&url, &format!("load-{w}-{n}")).await;
                if code != 201 {
                    failed.push(format!("{code} {out}"));
                }
                n += 1;
            }
            (n, failed)
        }));
    }
    for round in 0..5 {
        let settings = if round % 2 == 0 {
            json!({"action": "warn"})
        } else {
            json!({"action": "allow"})
        };
        apply_policy(&a, "allow", &sha, settings).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut total = 0;
    for w in writers {
        let (n, failed) = w.await.unwrap();
        assert!(failed.is_empty(), "failed creates: {failed:?}");
        total += n;
    }
    assert!(total > 20, "too few writes to mean anything: {total}");
}

//! Hot reload of the plugin folder while the server runs: a new version takes over without a
//! restart, a broken one never takes the resource down, a deleted file unregisters the resource
//! and keeps its data, open watches survive a swap, and a steady load sees no failure.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn plugin_file(s: &TestServer) -> PathBuf {
    s.dir.path().join("plugins.d/misbehaving.wasm")
}

/// Replace the plugin file the way `cp` does (truncate and write in place).
fn install(s: &TestServer, variant: &str) {
    std::fs::write(
        plugin_file(s),
        std::fs::read(common::plugin(variant)).unwrap(),
    )
    .unwrap();
}

fn collection(s: &TestServer) -> String {
    format!(
        "{}/apis/test.wasm-apiserver.dev/v1/namespaces/default/misbehavers",
        s.url
    )
}

fn object(name: &str, tier: Option<&str>) -> Value {
    let mut o = json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
                       "metadata": {"name": name}});
    if let Some(t) = tier {
        o["metadata"]["labels"] = json!({"tier": t});
    }
    o
}

async fn create(s: &TestServer, name: &str, tier: Option<&str>) -> (u16, Value) {
    let r = client()
        .post(collection(s))
        .json(&object(name, tier))
        .send()
        .await
        .unwrap();
    let code = r.status().as_u16();
    (code, r.json().await.unwrap_or(Value::Null))
}

async fn status(s: &TestServer) -> Value {
    client()
        .get(format!(
            "{}/apis/wasm-apiserver.dev/v1/strategyplugins/misbehaving",
            s.url
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Wait until the plugin's status satisfies `f`.
async fn until_status(s: &TestServer, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let st = status(s).await;
        if f(&st) {
            return st;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}: {st}\nserver log:\n{}",
            s.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn generation(st: &Value) -> u64 {
    st.pointer("/status/replicas/0/activations")
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn state(st: &Value) -> &str {
    st.pointer("/status/replicas/0/state")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn start() -> TestServer {
    TestServer::start_with(Backend::Embedded, &["widgets", "misbehaving"], &[])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_version_takes_over_without_a_restart() {
    let s = start();
    let st = until_status(&s, "first activation", |st| generation(st) == 1).await;
    assert_eq!(state(&st), "Active");
    assert_eq!(
        create(&s, "before", None).await.0,
        201,
        "v1 accepts objects without a tier"
    );

    install(&s, "misbehaving-strict");
    until_status(&s, "the strict version", |st| {
        generation(st) == 2 && state(st) == "Active"
    })
    .await;
    let (code, body) = create(&s, "after", None).await;
    assert_eq!(code, 422, "the new rule applies: {body}");
    assert_eq!(
        body["details"]["causes"][0]["field"], "metadata.labels[tier]",
        "{body}"
    );
    assert_eq!(create(&s, "after", Some("web")).await.0, 201);

    install(&s, "misbehaving");
    until_status(&s, "v1 again", |st| generation(st) == 3).await;
    assert_eq!(
        create(&s, "again", None).await.0,
        201,
        "the strict rule no longer applies"
    );
    // The objects written under every version are all there: the storage never changed.
    let list: Value = client()
        .get(collection(&s))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 3, "{list}");
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_replacements_never_replace_the_last_good_version() {
    let s = start();
    until_status(&s, "first activation", |st| generation(st) == 1).await;
    let good_sha = status(&s).await["status"]["replicas"][0]["sha256"].clone();
    type Breaker = Box<dyn Fn(&TestServer)>;
    let cases: [(&str, Breaker, &str); 5] = [
        (
            "not wasm",
            Box::new(|s| std::fs::write(plugin_file(s), b"#!/bin/sh\necho hi\n").unwrap()),
            "not a WebAssembly file",
        ),
        (
            "wrong WIT version",
            Box::new(|s| install(s, "misbehaving-wit-next")),
            "wasm-apiserver:strategy@0.4.0",
        ),
        (
            "trapping describe",
            Box::new(|s| install(s, "misbehaving-trap-describe")),
            "describe traps in this build",
        ),
        (
            "different plural",
            Box::new(|s| install(s, "misbehaving-other-plural")),
            "remove the plugin and add a new one",
        ),
        (
            "half-written file",
            Box::new(|s| {
                let bytes = std::fs::read(common::plugin("misbehaving-strict")).unwrap();
                std::fs::write(plugin_file(s), &bytes[..bytes.len() / 2]).unwrap();
            }),
            "does not compile",
        ),
    ];
    let mut n = 0;
    for (what, breakit, reason) in cases {
        breakit(&s);
        let st = until_status(&s, what, |st| {
            state(st) == "Failed"
                && st["status"]["replicas"][0]["lastError"]
                    .as_str()
                    .is_some_and(|e| e.contains(reason))
        })
        .await;
        assert_eq!(
            st["status"]["replicas"][0]["sha256"], good_sha,
            "{what}: the last good version still serves"
        );
        assert_eq!(generation(&st), 1, "{what}: nothing new was activated");
        n += 1;
        let (code, body) = create(&s, &format!("still-{n}"), None).await;
        assert_eq!(code, 201, "{what}: the old version keeps serving: {body}");
        // Fixing the file recovers.
        install(&s, "misbehaving");
        until_status(&s, "recovery", |st| state(st) == "Active").await;
    }
    let metrics = common::http::metrics(&s.url).await;
    assert!(
        metrics.contains(
            r#"wasm_apiserver_plugin_reloads_total{plugin="misbehaving",result="failure"} 5"#
        ),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_the_file_unregisters_the_resource_and_keeps_its_data() {
    let s = start();
    until_status(&s, "first activation", |st| generation(st) == 1).await;
    assert_eq!(create(&s, "kept", None).await.0, 201);
    std::fs::remove_file(plugin_file(&s)).unwrap();
    until_status(&s, "removal", |st| state(st) == "Removed").await;
    let r = client()
        .get(format!("{}/kept", collection(&s)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let out = s.ok(&["api-resources"]);
    assert!(!out.contains("misbehavers"), "{out}");
    assert!(
        out.contains("widgets"),
        "other plugins are untouched:\n{out}"
    );

    install(&s, "misbehaving");
    until_status(&s, "return", |st| state(st) == "Active").await;
    let r = client()
        .get(format!("{}/kept", collection(&s)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the object is served again");
    let out = s.ok(&["api-resources"]);
    assert!(out.contains("misbehavers"), "{out}");
    let out = s.ok(&["get", "strategyplugins"]);
    assert!(out.lines().next().unwrap().contains("STATE"), "{out}");
    assert!(
        out.contains("misbehaving") && out.contains("Active"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn open_watches_survive_a_swap() {
    let s = start();
    until_status(&s, "first activation", |st| generation(st) == 1).await;
    let mut watch = client()
        .get(format!("{}?watch=true&timeoutSeconds=15", collection(&s)))
        .send()
        .await
        .unwrap();
    install(&s, "misbehaving-strict");
    until_status(&s, "swap", |st| generation(st) == 2).await;
    assert_eq!(create(&s, "through-the-swap", Some("web")).await.0, 201);
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.contains("through-the-swap") {
        assert!(
            Instant::now() < deadline,
            "no event on the open watch: {seen}"
        );
        match tokio::time::timeout(Duration::from_secs(5), watch.chunk()).await {
            Ok(Ok(Some(c))) => seen.push_str(&String::from_utf8_lossy(&c)),
            other => panic!("watch ended: {other:?} {seen}"),
        }
    }
    assert!(seen.contains("\"ADDED\""), "{seen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_reloads_under_load_fail_no_request() {
    let s = Arc::new(start());
    until_status(&s, "first activation", |st| generation(st) == 1).await;
    let stop = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for w in 0..4 {
        let (s, stop, ok) = (s.clone(), stop.clone(), ok.clone());
        workers.push(tokio::spawn(async move {
            let c = client();
            let mut bad = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                // No tier: accepted by v1 (201), refused by the strict version (422) — either
                // is a whole answer of one version; anything else is a failure.
                let r = c
                    .post(collection(&s))
                    .json(&object(&format!("w{w}-{i}"), None))
                    .send()
                    .await;
                match r.map(|r| r.status().as_u16()) {
                    Ok(201) | Ok(422) => {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    other => bad.push(format!("create: {other:?}")),
                }
                match c
                    .get(collection(&s))
                    .query(&[("limit", "20")])
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                {
                    Ok(200) => {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    other => bad.push(format!("list: {other:?}")),
                }
            }
            bad
        }));
    }
    let started = Instant::now();
    for n in 0..20u64 {
        install(
            &s,
            if n % 2 == 0 {
                "misbehaving-strict"
            } else {
                "misbehaving"
            },
        );
        until_status(&s, "reload", |st| generation(st) == n + 2).await;
    }
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut failures = Vec::new();
    for w in workers {
        failures.extend(w.await.unwrap());
    }
    let served = ok.load(Ordering::Relaxed);
    assert!(
        failures.is_empty(),
        "{} failed requests: {:?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
    assert!(
        served > 200,
        "the load ran: {served} requests in {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_reload_off_only_sighup_rescans() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &["misbehaving"],
        &["--plugin-reload=false"],
    );
    until_status(&s, "first activation", |st| generation(st) == 1).await;
    install(&s, "misbehaving-strict");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        generation(&status(&s).await),
        1,
        "no watching with --plugin-reload=false"
    );
    assert_eq!(create(&s, "still-v1", None).await.0, 201);
    let kill = std::process::Command::new("kill")
        .args(["-HUP", &s.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    until_status(&s, "the SIGHUP rescan", |st| generation(st) == 2).await;
    assert_eq!(create(&s, "now-strict", None).await.0, 422);
}

/// A `--plugin-dir` that does not exist is created, said so in one line, and watched: a
/// plugin dropped in later is served. A path that is a file refuses the start, naming it.
#[test]
fn a_missing_plugin_folder_is_created_and_watched() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("not-yet/plugins.d");
    let s = TestServer::start_with(
        Backend::Embedded,
        &[],
        &["--plugin-dir", folder.to_str().unwrap()],
    );
    assert!(folder.is_dir());
    assert!(
        s.log()
            .contains("the plugin folder did not exist: created it, empty"),
        "{}",
        s.log()
    );
    std::fs::copy(common::plugin("configmaps"), folder.join("configmaps.wasm")).unwrap();
    s.eventually(Duration::from_secs(60), "configmaps served", || {
        s.kubectl(&["get", "configmaps", "-A"]).0
    });

    let file = tempfile::tempdir().unwrap();
    std::fs::write(file.path().join("plugins.d"), "not a folder").unwrap();
    let err = common::server::refused_start(file.path(), &[]);
    assert!(err.contains("plugins.d: not a directory"), "{err}");
}

//! A resource served in several versions (WIT 0.2 `versions` and `convert`): the widgets
//! example's `v1` (stored) and `v1alpha1` (deprecated; `spec.count` is v1's `spec.replicas`,
//! v1's `spec.size` computed from it, v1-only fields carried in an annotation). Through kubectl
//! on both stores: create in one version and read in the other, Tables and field selectors in
//! each version's columns and fields, updates through the old version keeping what only the
//! new one has, discovery and `kubectl explain` per version, the deprecation `Warning`. Over
//! HTTP: list and watch in both versions at once, server-side apply through the old version,
//! and a plugin whose `convert` traps (500 naming it; storage untouched).

use crate::common;

use common::http::{client, send};
use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::time::Duration;

const OLD: &str = "example.dev/v1alpha1";
const DEPRECATED: &str = "example.dev/v1alpha1 Widget is deprecated; use example.dev/v1 Widget";

fn json_of(s: &TestServer, args: &[&str]) -> Value {
    let out = s.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn kubectl_round_trip(backend: Backend) {
    let s = TestServer::start(backend);
    s.create_default_namespace();
    // Created through v1alpha1: kubectl shows the deprecation warning.
    let old = s.file(
        "old.yaml",
        &format!("apiVersion: {OLD}\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  count: 7\n"),
    );
    let (ok, out, err) = s.kubectl(&["create", "-f", old.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(err.contains(&format!("Warning: {DEPRECATED}")), "{err}");
    // Read through the preferred version (v1): renamed, computed, defaulted by the hooks.
    let v1 = json_of(&s, &["get", "widgets", "w1", "-o", "json"]);
    assert_eq!(v1["apiVersion"], "example.dev/v1");
    assert_eq!(v1["spec"], json!({"size": "large", "replicas": 7}), "{v1}");
    assert_eq!(v1["status"]["phase"], "Pending");
    // And back through v1alpha1.
    let a = json_of(
        &s,
        &["get", "widgets.v1alpha1.example.dev", "w1", "-o", "json"],
    );
    assert_eq!(a["apiVersion"], OLD);
    assert_eq!(a["spec"], json!({"count": 7}), "{a}");
    assert_eq!(a["metadata"]["uid"], v1["metadata"]["uid"]);
    assert_eq!(
        a["metadata"]["resourceVersion"],
        v1["metadata"]["resourceVersion"]
    );

    // Created through v1 with what v1alpha1 cannot hold; updated through v1alpha1 (replace of
    // the object as read there, annotation included): v1 keeps its fields.
    let new = s.file(
        "new.yaml",
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: small\n  replicas: 2\n  maxReplicas: 4\n",
    );
    s.ok(&["create", "-f", new.to_str().unwrap()]);
    let mut a = json_of(
        &s,
        &["get", "widgets.v1alpha1.example.dev", "w2", "-o", "json"],
    );
    assert_eq!(a["spec"], json!({"count": 2}), "{a}");
    assert_eq!(
        a["metadata"]["annotations"]["widgets.example.dev/v1-spec"],
        r#"{"maxReplicas":4,"size":"small"}"#
    );
    a["spec"]["count"] = json!(3);
    let edited = s.file("edited.json", &a.to_string());
    s.ok(&["replace", "-f", edited.to_str().unwrap()]);
    let v1 = json_of(&s, &["get", "widgets", "w2", "-o", "json"]);
    assert_eq!(
        v1["spec"],
        json!({"size": "small", "replicas": 3, "maxReplicas": 4}),
        "{v1}"
    );
    assert!(
        v1["metadata"].get("annotations").is_none(),
        "the annotation is v1alpha1's: {v1}"
    );
    assert_eq!(v1["metadata"]["generation"], 2);
    // The v1 hooks validated the update made through v1alpha1.
    let err = s.fails(&[
        "patch",
        "widgets.v1alpha1.example.dev",
        "w2",
        "--type=merge",
        "-p",
        r#"{"spec":{"count":9}}"#,
    ]);
    assert!(
        err.contains(
            "spec.replicas: Invalid value: 9: must be less than or equal to spec.maxReplicas (4)"
        ),
        "{err}"
    );
    // A merge patch through v1alpha1 applies to the v1alpha1 object.
    s.ok(&[
        "patch",
        "widgets.v1alpha1.example.dev",
        "w2",
        "--type=merge",
        "-p",
        r#"{"spec":{"count":4}}"#,
    ]);
    assert_eq!(
        json_of(&s, &["get", "widgets", "w2", "-o", "json"])["spec"]["replicas"],
        4
    );

    // Tables in each version's columns; field selectors on each version's fields.
    let t = s.ok(&["get", "widgets.v1alpha1.example.dev"]);
    assert!(t.starts_with("NAME") && t.contains("COUNT"), "{t}");
    assert!(
        t.lines().any(|l| l.starts_with("w1") && l.contains(" 7 ")),
        "{t}"
    );
    let t = s.ok(&["get", "widgets"]);
    assert!(t.contains("SIZE") && !t.contains("COUNT"), "{t}");
    let names = s.ok(&[
        "get",
        "widgets.v1alpha1.example.dev",
        "--field-selector=spec.count=7",
        "-o",
        "name",
    ]);
    assert_eq!(names.trim(), "widget.example.dev/w1");
    let names = s.ok(&[
        "get",
        "widgets",
        "--field-selector=spec.size=small",
        "-o",
        "name",
    ]);
    assert_eq!(names.trim(), "widget.example.dev/w2");
    let err = s.fails(&["get", "widgets", "--field-selector=spec.count=7"]);
    assert!(
        err.contains("field label not supported: spec.count"),
        "{err}"
    );

    // Discovery and explain, per version.
    let versions = s.ok(&["api-versions"]);
    assert!(
        versions.contains("example.dev/v1\n") && versions.contains("example.dev/v1alpha1\n"),
        "{versions}"
    );
    let explain = s.ok(&[
        "explain",
        "widgets.spec",
        "--api-version=example.dev/v1alpha1",
    ]);
    assert!(
        explain.contains("count") && !explain.contains("maxReplicas"),
        "{explain}"
    );
    let explain = s.ok(&["explain", "widgets.spec"]);
    assert!(
        explain.contains("maxReplicas") && !explain.contains("count"),
        "{explain}"
    );

    // Deleted through v1alpha1.
    let (ok, out, err) = s.kubectl(&["delete", "widgets.v1alpha1.example.dev", "w1"]);
    assert!(ok && out.contains("deleted"), "{out}{err}");
    s.fails(&["get", "widgets", "w1"]);
}

#[test]
fn kubectl_reads_and_writes_both_versions_embedded() {
    kubectl_round_trip(Backend::Embedded);
}

#[test]
fn kubectl_reads_and_writes_both_versions_etcd() {
    kubectl_round_trip(Backend::Etcd);
}

/// A watch, read line by line.
struct Watch {
    resp: reqwest::Response,
    buf: Vec<u8>,
}

impl Watch {
    async fn start(url: String) -> Watch {
        let resp = client().get(url).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        Watch {
            resp,
            buf: Vec::new(),
        }
    }

    async fn next(&mut self) -> Value {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return serde_json::from_slice(&line).unwrap();
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.resp.chunk())
                .await
                .expect("an event within 20 s")
                .unwrap()
                .expect("the watch goes on");
            self.buf.extend_from_slice(&chunk);
        }
    }
}

/// How many times the widgets plugin's `convert` ran (its call-duration histogram's count).
async fn convert_calls(url: &str) -> u64 {
    common::http::metrics(url)
        .await
        .lines()
        .find(|l| {
            l.starts_with("wasm_apiserver_plugin_call_duration_seconds_count")
                && l.contains("hook=\"convert\"")
                && l.contains("plugin=\"widgets\"")
        })
        .and_then(|l| l.rsplit(' ').next())
        .map_or(0, |n| n.parse::<f64>().unwrap() as u64)
}

#[tokio::test(flavor = "multi_thread")]
async fn list_watch_and_apply_in_both_versions_at_once() {
    let s = TestServer::start(Backend::Embedded);
    common::http::default_namespace(&s.url).await;
    let base = |v: &str| format!("{}/apis/example.dev/{v}/namespaces/default/widgets", s.url);
    let (code, _) = send(client().post(base("v1")).json(&json!({
        "apiVersion": "example.dev/v1", "kind": "Widget", "metadata": {"name": "a"},
        "spec": {"size": "medium", "minReplicas": 2}
    })))
    .await;
    assert_eq!(code, 201);
    // Lists: each in its version, the list's apiVersion too; the deprecation header on v1alpha1.
    let resp = client().get(base("v1alpha1")).send().await.unwrap();
    let warning = resp
        .headers()
        .get("warning")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        warning.as_deref(),
        Some(format!("299 - \"{DEPRECATED}\"").as_str())
    );
    let old: Value = resp.json().await.unwrap();
    assert_eq!(old["apiVersion"], OLD);
    assert_eq!(old["kind"], "WidgetList");
    assert_eq!(old["items"][0]["apiVersion"], OLD);
    assert_eq!(old["items"][0]["spec"]["count"], 3);
    let (_, new) = send(client().get(base("v1"))).await;
    assert_eq!(new["items"][0]["spec"]["replicas"], 3);
    let rv = new["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let v1_resp = client().get(base("v1")).send().await.unwrap();
    assert!(v1_resp.headers().get("warning").is_none());
    // Errors in the deprecated version carry it too, from the first check on.
    let resp = client()
        .get(format!("{}/a/scale", base("v1alpha1")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert!(resp.headers().get("warning").is_some());

    // Two watchers per version from the list's resourceVersion: each gets its version.
    let mut watches = Vec::new();
    for v in ["v1", "v1alpha1", "v1", "v1alpha1"] {
        watches.push((
            v,
            Watch::start(format!("{}?watch=true&resourceVersion={rv}", base(v))).await,
        ));
    }
    let mut alpha_selected = Watch::start(format!(
        "{}?watch=true&resourceVersion={rv}&fieldSelector=spec.count%3D5",
        base("v1alpha1")
    ))
    .await;
    let (code, b) = send(client().post(base("v1alpha1")).json(&json!({
        "apiVersion": OLD, "kind": "Widget", "metadata": {"name": "b"}, "spec": {"count": 5}
    })))
    .await;
    assert_eq!(code, 201, "{b}");
    assert_eq!(
        b["apiVersion"], OLD,
        "the answer is in the request's version: {b}"
    );
    assert_eq!(b["spec"], json!({"count": 5}));
    for (v, w) in &mut watches {
        let ev = w.next().await;
        assert_eq!(ev["type"], "ADDED");
        assert_eq!(ev["object"]["metadata"]["name"], "b");
        if *v == "v1" {
            assert_eq!(ev["object"]["apiVersion"], "example.dev/v1");
            assert_eq!(
                ev["object"]["spec"],
                json!({"size": "large", "replicas": 5})
            );
        } else {
            assert_eq!(ev["object"]["apiVersion"], OLD);
            assert_eq!(ev["object"]["spec"], json!({"count": 5}));
        }
    }
    let ev = alpha_selected.next().await;
    assert_eq!(
        (ev["type"].as_str(), ev["object"]["spec"]["count"].as_i64()),
        (Some("ADDED"), Some(5))
    );
    // The selected watcher in v1alpha1 sees `b` stop matching as a DELETED of its previous
    // state. The change is converted to v1alpha1 once for the selector and the two other
    // v1alpha1 watchers together, and the previous state once more for the DELETED (its
    // resourceVersion is the change's, its content the previous one's).
    let converts = convert_calls(&s.url).await;
    let (code, _) = send(
        client()
            .patch(format!("{}/b", base("v1")))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"spec":{"replicas":6}}"#),
    )
    .await;
    assert_eq!(code, 200);
    let ev = alpha_selected.next().await;
    assert_eq!(ev["type"], "DELETED", "{ev}");
    assert_eq!(ev["object"]["apiVersion"], OLD);
    assert_eq!(ev["object"]["spec"]["count"], 5, "the previous state: {ev}");
    for (v, w) in &mut watches {
        let ev = w.next().await;
        assert_eq!(ev["type"], "MODIFIED");
        let field = if *v == "v1" { "replicas" } else { "count" };
        assert_eq!(ev["object"]["spec"][field], 6, "{v}: {ev}");
    }
    assert_eq!(
        convert_calls(&s.url).await - converts,
        2,
        "one conversion per event and version"
    );
    // A dry run through v1alpha1 answers the patched object and leaves the stored one (and
    // what other readers of v1alpha1 get) alone.
    let (code, dry) = send(
        client()
            .patch(format!("{}/b?dryRun=All", base("v1alpha1")))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"spec":{"count":2}}"#),
    )
    .await;
    assert_eq!(code, 200, "{dry}");
    assert_eq!(dry["spec"]["count"], 2, "{dry}");
    let (_, now) = send(client().get(format!("{}/b", base("v1alpha1")))).await;
    assert_eq!(now["spec"]["count"], 6, "{now}");
    // A patch may not change the type meta (the decoder's check on the patched object).
    let (code, status) = send(
        client()
            .patch(format!("{}/b", base("v1")))
            .header("content-type", "application/merge-patch+json")
            .body(format!(r#"{{"apiVersion":"{OLD}"}}"#)),
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("the API version in the data (example.dev/v1alpha1) does not match the expected API version (example.dev/v1)"),
        "{status}"
    );

    // Server-side apply through v1alpha1: the apply configuration is a v1alpha1 object, and
    // the manager's entry names v1alpha1.
    let (code, applied) = send(
        client()
            .patch(format!("{}/c?fieldManager=tester", base("v1alpha1")))
            .header("content-type", "application/apply-patch+yaml")
            .body(format!(
                "apiVersion: {OLD}\nkind: Widget\nmetadata:\n  name: c\nspec:\n  count: 2\n"
            )),
    )
    .await;
    assert_eq!(code, 201, "{applied}");
    assert_eq!(applied["spec"], json!({"count": 2}));
    let entry = applied["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "tester")
        .cloned()
        .unwrap();
    assert_eq!(entry["apiVersion"], OLD);
    assert_eq!(entry["operation"], "Apply");
    assert!(
        entry["fieldsV1"]["f:spec"]["f:count"].is_object(),
        "{entry}"
    );
    let (_, c) = send(client().get(format!("{}/c", base("v1")))).await;
    assert_eq!(c["spec"], json!({"size": "medium", "replicas": 2}), "{c}");

    // Watch-list in v1alpha1: the initial events and the bookmark ending them are in
    // v1alpha1 (a typed client decodes the bookmark as its own kind).
    let mut w = Watch::start(format!(
        "{}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        base("v1alpha1")
    ))
    .await;
    loop {
        let ev = w.next().await;
        assert_eq!(ev["object"]["apiVersion"], OLD, "{ev}");
        if ev["type"] == "BOOKMARK" {
            break;
        }
        assert_eq!(ev["type"], "ADDED");
    }

    // Discovery: both versions, v1 preferred.
    let (_, group) = send(client().get(format!("{}/apis/example.dev", s.url))).await;
    assert_eq!(group["preferredVersion"]["version"], "v1", "{group}");
    let names: Vec<&str> = group["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["v1", "v1alpha1"]);
    let (code, list) = send(client().get(format!("{}/apis/example.dev/v1alpha1", s.url))).await;
    assert_eq!(code, 200);
    assert!(list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == "widgets"));
    let (code, doc) =
        send(client().get(format!("{}/openapi/v3/apis/example.dev/v1alpha1", s.url))).await;
    assert_eq!(code, 200);
    assert!(doc.to_string().contains("\"count\""), "the v1alpha1 schema");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_convert_that_traps_fails_the_request_and_leaves_storage_alone() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "misbehaving"], &[]);
    common::http::default_namespace(&s.url).await;
    let base = |v: &str| {
        format!(
            "{}/apis/test.wasm-apiserver.dev/{v}/namespaces/default/misbehavers",
            s.url
        )
    };
    let obj = |v: &str| {
        json!({"apiVersion": format!("test.wasm-apiserver.dev/{v}"), "kind": "Misbehaver",
               "metadata": {"name": "m", "annotations": {"misbehave-convert": "trap"}},
               "spec": {"a": 1}})
    };
    // Written in the storage version: no conversion, stored.
    let (code, stored) = send(client().post(base("v1")).json(&obj("v1"))).await;
    assert_eq!(code, 201, "{stored}");
    // Read in v2: the conversion traps; a 500 naming the plugin and the hook.
    for url in [format!("{}/m", base("v2")), base("v2")] {
        let (code, status) = send(client().get(url)).await;
        assert_eq!(code, 500, "{status}");
        assert_eq!(status["reason"], "InternalError");
        let msg = status["message"].as_str().unwrap();
        assert!(
            msg.contains("\"misbehaving\"") && msg.contains("convert"),
            "{msg}"
        );
    }
    // Written in v2: refused before anything is stored.
    let mut other = obj("v2");
    other["metadata"]["name"] = json!("n");
    let (code, status) = send(client().post(base("v2")).json(&other)).await;
    assert_eq!(code, 500, "{status}");
    let (code, _) = send(client().get(format!("{}/n", base("v1")))).await;
    assert_eq!(code, 404, "nothing was stored");
    // An update through v2 fails the same way and leaves the object as it was.
    let (code, _) = send(
        client()
            .patch(format!("{}/m", base("v2")))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"spec":{"a":2}}"#),
    )
    .await;
    assert_eq!(code, 500);
    let (code, now) = send(client().get(format!("{}/m", base("v1")))).await;
    assert_eq!(code, 200);
    assert_eq!(now, stored, "storage untouched");
    // The server goes on serving both versions of other objects.
    let (code, fine) = send(client().post(base("v2")).json(&json!({
        "apiVersion": "test.wasm-apiserver.dev/v2", "kind": "Misbehaver",
        "metadata": {"name": "fine"}, "spec": {}
    })))
    .await;
    assert_eq!(code, 201, "{fine}");
    assert_eq!(fine["apiVersion"], "test.wasm-apiserver.dev/v2");
}

#[test]
fn plugin_test_runs_the_conversion_fixtures_through_the_component() {
    let fixtures = common::repo_root().join("examples/widgets/fixtures/conversion");
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "test".as_ref(),
        common::plugin("widgets").as_os_str(),
        fixtures.as_os_str(),
    ]);
    assert!(ok && out.contains("2 passed, 0 failed"), "{out}");
    // A case whose expectation the conversion does not meet fails, with the difference.
    let dir = tempfile::tempdir().unwrap();
    let case: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("to-v1-computes-size.json")).unwrap(),
    )
    .unwrap();
    let mut wrong = case.clone();
    wrong["expect"]["object"]["spec"]["size"] = json!("small");
    std::fs::write(dir.path().join("wrong.json"), wrong.to_string()).unwrap();
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "test".as_ref(),
        common::plugin("widgets").as_os_str(),
        dir.path().as_os_str(),
    ]);
    assert!(!ok && out.contains("0 passed, 1 failed"), "{out}");
    assert!(out.contains("\"medium\""), "{out}");
}

/// An object written while the storage version was v1alpha1 (put straight into etcd, as an
/// earlier build of the plugin would have stored it) reads in both versions, and the hooks of
/// an update see it in today's storage version: a labels-only patch leaves its (converted)
/// spec alone, so the generation does not move, and it is written back as v1.
#[tokio::test(flavor = "multi_thread")]
async fn an_object_stored_in_an_earlier_storage_version() {
    let s = TestServer::start(Backend::Etcd);
    common::http::default_namespace(&s.url).await;
    let key = "/registry/example.dev/widgets/default/old";
    let mut etcd = etcd_client::Client::connect([s.etcd_endpoint().unwrap()], None)
        .await
        .unwrap();
    let stored = json!({"apiVersion": OLD, "kind": "Widget",
        "metadata": {"name": "old", "namespace": "default", "generation": 1,
                     "uid": "0b5c1c39-3c4e-4f5a-9d7b-2f7a4f0e8a11",
                     "creationTimestamp": "2026-11-01T00:00:00Z"},
        "spec": {"count": 5}, "status": {"phase": "Ready"}});
    etcd.put(key, stored.to_string(), None).await.unwrap();
    let url = |v: &str| {
        format!(
            "{}/apis/example.dev/{v}/namespaces/default/widgets/old",
            s.url
        )
    };
    let mut v1 = json!(null);
    for _ in 0..100 {
        let (code, body) = send(client().get(url("v1"))).await;
        if code == 200 {
            v1 = body;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(v1["apiVersion"], "example.dev/v1", "{v1}");
    assert_eq!(v1["spec"], json!({"size": "large", "replicas": 5}));
    let (_, old) = send(client().get(url("v1alpha1"))).await;
    assert_eq!(old["spec"], json!({"count": 5}), "{old}");
    let (code, patched) = send(
        client()
            .patch(url("v1"))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"metadata":{"labels":{"team":"blue"}}}"#),
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 1, "{patched}");
    assert_eq!(patched["status"]["phase"], "Ready");
    let now = etcd.get(key, None).await.unwrap();
    let now: Value = serde_json::from_slice(now.kvs()[0].value()).unwrap();
    assert_eq!(now["apiVersion"], "example.dev/v1", "{now}");
    assert_eq!(now["spec"], json!({"size": "large", "replicas": 5}));
}

/// Without the watch cache (the etcd watcher filters), a v1alpha1 watcher selecting on
/// `spec.count` sees an object start matching as ADDED and stop matching as DELETED of its
/// previous state: the previous state is matched as stored, not taken for the current one.
#[tokio::test(flavor = "multi_thread")]
async fn selection_in_another_version_without_the_watch_cache() {
    let s = TestServer::start_with(
        Backend::Etcd,
        &["namespaces", "widgets"],
        &["--watch-cache=false"],
    );
    common::http::default_namespace(&s.url).await;
    let base = |v: &str| format!("{}/apis/example.dev/{v}/namespaces/default/widgets", s.url);
    let (code, w) = send(client().post(base("v1")).json(&json!({
        "apiVersion": "example.dev/v1", "kind": "Widget", "metadata": {"name": "s"},
        "spec": {"size": "small", "replicas": 1}
    })))
    .await;
    assert_eq!(code, 201, "{w}");
    let rv = w["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = Watch::start(format!(
        "{}?watch=true&resourceVersion={rv}&fieldSelector=spec.count%3D2",
        base("v1alpha1")
    ))
    .await;
    let patch = |replicas: i64| {
        client()
            .patch(format!("{}/s", base("v1")))
            .header("content-type", "application/merge-patch+json")
            .body(json!({"spec": {"replicas": replicas}}).to_string())
    };
    assert_eq!(send(patch(2)).await.0, 200);
    let ev = watch.next().await;
    assert_eq!(
        (ev["type"].as_str(), ev["object"]["spec"]["count"].as_i64()),
        (Some("ADDED"), Some(2)),
        "{ev}"
    );
    assert_eq!(send(patch(3)).await.0, 200);
    let ev = watch.next().await;
    assert_eq!(ev["type"], "DELETED", "{ev}");
    assert_eq!(ev["object"]["spec"]["count"], 2, "the previous state: {ev}");
    assert_eq!(ev["object"]["apiVersion"], OLD);
}

//! `/metrics`, `/healthz`, `/livez`, `/readyz` and `/version` of a real server.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_requests_and_plugin_calls() {
    let s = TestServer::start(Backend::Embedded);
    let c = reqwest::Client::new();
    let r = c
        .post(format!(
            "{}/apis/example.dev/v1/namespaces/default/widgets",
            s.url
        ))
        .json(&json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                      "metadata": {"name": "m1"}, "spec": {"size": "small"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let text = common::http::metrics(&s.url).await;
    assert!(
        text.contains(r#"apiserver_request_total{code="201",group="example.dev",resource="widgets",verb="POST"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"apiserver_request_duration_seconds_count{group="example.dev",resource="widgets",verb="POST"} 1"#), "{text}");
    assert!(
        text.contains(r#"wasm_apiserver_plugin_call_duration_seconds_count{hook="create-sequence",plugin="widgets"}"#),
        "{text}"
    );
    // The watch cache (on by default) reports per resource.
    for series in [
        r#"apiserver_watch_cache_capacity_objects{group="example.dev",resource="widgets"}"#,
        r#"apiserver_watch_cache_watchers{group="example.dev",resource="widgets"}"#,
        r#"apiserver_terminated_watchers_total{group="example.dev",resource="widgets"}"#,
        r#"apiserver_watch_cache_events_dispatched_total{group="example.dev",resource="widgets"}"#,
    ] {
        assert!(text.contains(series), "{series} missing:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn health_and_version() {
    let s = TestServer::start(Backend::Embedded);
    let c = reqwest::Client::new();
    for path in ["/healthz", "/livez", "/readyz"] {
        let r = c.get(format!("{}{path}", s.url)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.text().await.unwrap(), "ok");
    }
    let v: serde_json::Value = c
        .get(format!("{}/version", s.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["major"], "1");
    assert_eq!(
        v["minor"], "32",
        "kubectl's dispatcher picks its build by the minor version"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_fails_when_etcd_goes_away() {
    let mut s = TestServer::start(Backend::Etcd);
    let c = reqwest::Client::new();
    assert_eq!(
        c.get(format!("{}/readyz", s.url))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    s.stop_etcd();
    let r = c.get(format!("{}/readyz", s.url)).send().await.unwrap();
    assert_eq!(r.status(), 500);
    assert!(r.text().await.unwrap().contains("storage failed"));
    // The server keeps answering everything else.
    assert_eq!(
        c.get(format!("{}/healthz", s.url))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let r = c
        .get(format!(
            "{}/apis/example.dev/v1/namespaces/default/widgets",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500, "a storage error is a Status, not a hang");
    let status: serde_json::Value = r.json().await.unwrap();
    assert_eq!(status["kind"], "Status");
}

/// Logs written to a pipe (as here, or a file, or a collector) carry no colour codes; with
/// `--logging-format=json` (kube-apiserver's flag) every line is one JSON object.
#[test]
fn logs_to_a_pipe_are_plain_text_or_json_lines() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.eventually(std::time::Duration::from_secs(5), "a log line", || {
        !s.log().is_empty()
    });
    let log = s.log();
    assert!(!log.contains('\u{1b}'), "{log}");
    let s = TestServer::start_with(
        Backend::Embedded,
        &["namespaces"],
        &["--logging-format", "json"],
    );
    s.eventually(std::time::Duration::from_secs(5), "a log line", || {
        !s.log().is_empty()
    });
    for line in s.log().lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v["level"].is_string() && v["fields"].is_object(), "{line}");
    }
}

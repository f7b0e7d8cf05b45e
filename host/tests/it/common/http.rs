//! HTTP helpers for integration tests: a client with a timeout, and sending a request to get
//! its status code and JSON body.

use serde_json::{json, Value};
use std::time::Duration;

/// A client whose requests give up after 60 s (so a hung server fails a test, not CI).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Send and decode: (status code, JSON body or `Value::String` of the raw text).
pub async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("request");
    let code = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Create the namespace `default` on the server at `url` (an existing one is fine).
pub async fn default_namespace(url: &str) {
    namespace(url, "default").await;
}

/// Create namespace `name` on the server at `url` (an existing one is fine): objects may only
/// be created in a namespace that exists (`NamespaceLifecycle`). A server without the
/// namespaces plugin (404) checks no namespace, so that is fine too.
pub async fn namespace(url: &str, name: &str) {
    let (code, body) = send(
        client()
            .post(format!("{url}/api/v1/namespaces"))
            .json(&json!({"metadata": {"name": name}})),
    )
    .await;
    assert!(code == 201 || code == 409 || code == 404, "{body}");
}

/// The server's `/metrics` text (Prometheus exposition format).
pub async fn metrics(url: &str) -> String {
    client()
        .get(format!("{url}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

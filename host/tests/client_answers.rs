//! Answers typed clients parse, shaped as the official Python client sends its requests
//! (issue: "the answers clients parse"): discovery and version paths with a trailing slash,
//! built-in objects without `apiVersion`/`kind`, and `includeObject` on a single-object Table.

mod common;

use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::time::Duration;

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("request");
    let code = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

// `VersionApi().get_code()` asks for `/version/`, `ApisApi().get_api_versions()` for `/apis/`,
// `CoreApi().get_api_versions()` for `/api/`: go-restful answers both forms.
#[tokio::test(flavor = "multi_thread")]
async fn trailing_slash_paths() {
    let s = TestServer::start(Backend::Embedded);
    let (code, body) = send(client().get(format!("{}/version/", s.url))).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["major"], "1");
    let (code, body) = send(client().get(format!("{}/api/", s.url))).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["kind"], "APIVersions");
    let (code, body) = send(client().get(format!("{}/apis/", s.url))).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["kind"], "APIGroupList");
}

// A built-in object without apiVersion/kind gets the resource's (kube's serializer defaults
// them from the type it decodes into); a custom resource still needs its kind.
#[tokio::test(flavor = "multi_thread")]
async fn built_in_objects_without_type_meta() {
    let s = TestServer::start(Backend::Embedded);
    let (code, body) = send(
        client()
            .post(format!("{}/api/v1/namespaces", s.url))
            .json(&json!({"metadata": {"name": "default"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["kind"], "Namespace");
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url);
    let (code, body) = send(
        client()
            .post(&cms)
            .json(&json!({"metadata": {"name": "c"}, "data": {"a": "b"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        (&body["apiVersion"], &body["kind"]),
        (&json!("v1"), &json!("ConfigMap"))
    );
    let mut update = body.clone();
    update.as_object_mut().unwrap().remove("kind");
    update.as_object_mut().unwrap().remove("apiVersion");
    update["data"]["a"] = json!("c");
    let (code, body) = send(client().put(format!("{cms}/c")).json(&update)).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["data"]["a"], "c");

    let (code, body) = send(
        client()
            .post(format!(
                "{}/apis/example.dev/v1/namespaces/default/widgets",
                s.url
            ))
            .json(&json!({"metadata": {"name": "w"}, "spec": {"size": "small"}})),
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("Object 'Kind' is missing"),
        "{body}"
    );
}

// `includeObject` applies to a single-object Table as to a list (kube's `transformObject`).
#[tokio::test(flavor = "multi_thread")]
async fn include_object_on_single_object_tables() {
    let s = TestServer::start(Backend::Embedded);
    send(
        client()
            .post(format!("{}/api/v1/namespaces", s.url))
            .json(&json!({"metadata": {"name": "default"}})),
    )
    .await;
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url);
    let (code, _) = send(
        client()
            .post(&cms)
            .json(&json!({"metadata": {"name": "c"}, "data": {"a": "b"}})),
    )
    .await;
    assert_eq!(code, 201);
    for (include, want) in [
        ("Object", Some("ConfigMap")),
        ("Metadata", Some("PartialObjectMetadata")),
        ("None", None),
    ] {
        for url in [format!("{cms}/c"), cms.clone()] {
            let (code, body) = send(
                client()
                    .get(format!("{url}?includeObject={include}"))
                    .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io"),
            )
            .await;
            assert_eq!(code, 200, "{body}");
            assert_eq!(body["kind"], "Table");
            let row = &body["rows"][0];
            assert_eq!(
                row.get("object").map(|o| o["kind"].as_str().unwrap()),
                want,
                "{include} {url}: {row}"
            );
        }
    }
}

//! Metadata-only answers (issue 35): `Accept: application/json;as=PartialObjectMetadata` and
//! `as=PartialObjectMetadataList` (`g=meta.k8s.io`, `v=v1` or `v1beta1`), as kube's
//! `handlers/response.go` writes them for client-go's metadata client and informers (the
//! garbage collector's, the namespace and quota controllers'). On both stores, over HTTP:
//! a GET, a LIST (paged), a watch and a write's answer, for Secrets (plugin-served, sealed
//! at rest) and widgets (a custom group); kube's 406 for the wrong shape. Then kube-rs'
//! `list_metadata` and a metadata watcher, and the Python client with `_preload_content=False`
//! — each checked on the bytes, since a client would decode a full list too.

use crate::common;

use common::http::{client, send};
use common::server::{Backend, TestServer};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::PartialObjectMeta;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Config};
use serde_json::{json, Value};
use std::time::Duration;

const POM: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const POM_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// Only `kind`, `apiVersion` and `metadata`, of kind `PartialObjectMetadata` in `api_version`.
fn assert_partial(o: &Value, api_version: &str) {
    assert_eq!(o["kind"], "PartialObjectMetadata", "{o}");
    assert_eq!(o["apiVersion"], api_version, "{o}");
    let keys: Vec<&String> = o.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3, "only kind, apiVersion and metadata: {o}");
    assert!(o["metadata"]["name"].is_string(), "{o}");
}

async fn answers(backend: Backend) {
    let s = TestServer::start_with(backend, &["namespaces", "secrets", "widgets"], &[]);
    let url = &s.url;
    common::http::default_namespace(url).await;
    let secrets = format!("{url}/api/v1/namespaces/default/secrets");
    for i in 0..3 {
        let (code, body) = send(client().post(&secrets).json(&json!({
            "metadata": {"name": format!("s{i}"), "labels": {"app": "demo"}},
            "stringData": {"password": "hunter2"}
        })))
        .await;
        assert_eq!(code, 201, "{body}");
    }
    let widgets = format!("{url}/apis/example.dev/v1/namespaces/default/widgets");
    // A write's answer in the asked form.
    let (code, w) = send(
        client()
            .post(&widgets)
            .header("Accept", POM)
            .json(&json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                          "metadata": {"name": "w1"}, "spec": {"size": "small"}})),
    )
    .await;
    assert_eq!(code, 201, "{w}");
    assert_partial(&w, "meta.k8s.io/v1");
    assert_eq!(w["metadata"]["name"], "w1");

    // GET: one object's metadata, whole (labels, uid, managedFields).
    let (code, o) = send(client().get(format!("{secrets}/s0")).header("Accept", POM)).await;
    assert_eq!(code, 200, "{o}");
    assert_partial(&o, "meta.k8s.io/v1");
    assert_eq!(o["metadata"]["labels"]["app"], "demo", "{o}");
    assert!(o["metadata"]["uid"].is_string() && o["metadata"]["managedFields"].is_array());

    // LIST, with client-go's metadata client's header (protobuf first, then JSON).
    let accept = format!("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{POM_LIST},application/json");
    let (code, l) = send(client().get(&secrets).header("Accept", &accept)).await;
    assert_eq!(code, 200, "{l}");
    assert_eq!(l["kind"], "PartialObjectMetadataList", "{l}");
    assert_eq!(l["apiVersion"], "meta.k8s.io/v1", "{l}");
    assert!(l["metadata"]["resourceVersion"].is_string(), "{l}");
    let items = l["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{l}");
    for i in items {
        assert_partial(i, "meta.k8s.io/v1");
    }
    let text = l.to_string();
    assert!(
        !text.contains("\"data\"") && !text.contains("\"type\""),
        "{text}"
    );
    // Paged: the continue token and the remaining count carried over.
    let (_, page) = send(
        client()
            .get(format!("{secrets}?limit=2"))
            .header("Accept", POM_LIST),
    )
    .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2, "{page}");
    assert!(page["metadata"]["continue"].is_string(), "{page}");
    assert_eq!(page["metadata"]["remainingItemCount"], 1, "{page}");
    // v1beta1 and a custom group.
    let beta = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1";
    let (code, l) = send(client().get(&widgets).header("Accept", beta)).await;
    assert_eq!(code, 200, "{l}");
    assert_eq!(l["apiVersion"], "meta.k8s.io/v1beta1", "{l}");
    assert_partial(&l["items"][0], "meta.k8s.io/v1beta1");
    assert!(!l.to_string().contains("\"spec\""), "{l}");

    // The wrong shape: kube's 406 NotAcceptable.
    let (code, st) = send(client().get(&secrets).header("Accept", POM)).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (406, Some("NotAcceptable")),
        "{st}"
    );
    assert!(
        st["message"]
            .as_str()
            .unwrap()
            .starts_with("you requested PartialObjectMetadata, but the requested object is a list"),
        "{st}"
    );
    let (code, st) = send(
        client()
            .get(format!("{secrets}/s0"))
            .header("Accept", POM_LIST),
    )
    .await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (406, Some("NotAcceptable")),
        "{st}"
    );

    // A watch: every event's object as metadata, the initial events and a new one.
    let rv = l["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut resp = client()
        .get(format!("{secrets}?watch=1&resourceVersion=0"))
        .header("Accept", POM)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (code, _) = send(client().post(&secrets).json(&json!({
        "metadata": {"name": "s3"}, "stringData": {"password": "hunter3"}
    })))
    .await;
    assert_eq!(code, 201);
    let mut buf = String::new();
    let mut names = Vec::new();
    while names.len() < 4 {
        let chunk = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
            .await
            .expect("watch events within 20 s")
            .unwrap()
            .expect("the watch stays open");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(i) = buf.find('\n') {
            let line: Value = serde_json::from_str(&buf[..i]).unwrap();
            buf.drain(..=i);
            assert_eq!(line["type"], "ADDED", "{line}");
            assert_partial(&line["object"], "meta.k8s.io/v1");
            names.push(
                line["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
    }
    assert_eq!(names, ["s0", "s1", "s2", "s3"], "rv {rv}");

    // A deletecollection's answer, the list of what was deleted, in the asked form too.
    let (code, l) = send(client().delete(&widgets).header("Accept", POM_LIST)).await;
    assert_eq!(code, 200, "{l}");
    assert_eq!(l["kind"], "PartialObjectMetadataList", "{l}");
    assert_partial(&l["items"][0], "meta.k8s.io/v1");
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_only_answers_embedded() {
    answers(Backend::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_only_answers_etcd() {
    answers(Backend::Etcd).await;
}

/// kube-rs' metadata API: `list_metadata` and a watcher of `PartialObjectMeta<Secret>` (its requests'
/// `as=PartialObjectMetadataList` / `as=PartialObjectMetadata`), and the bytes of a
/// `list_metadata` request as kube-rs builds it.
#[tokio::test(flavor = "multi_thread")]
async fn kube_rs_metadata_list_and_watcher() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "secrets"], &[]);
    common::http::default_namespace(&s.url).await;
    let kubeconfig = Kubeconfig::read_from(s.kubeconfig()).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    let kube = Client::try_from(config).unwrap();
    let api: Api<Secret> = Api::namespaced(kube.clone(), "default");
    let secret = |name: &str| -> Secret {
        serde_json::from_value(json!({"metadata": {"name": name},
                                      "stringData": {"password": "hunter2"}}))
        .unwrap()
    };
    api.create(&PostParams::default(), &secret("a"))
        .await
        .unwrap();

    let listed = api.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.name.as_deref(), Some("a"));
    let req = kube::core::Request::new("/api/v1/namespaces/default/secrets")
        .list_metadata(&ListParams::default())
        .unwrap();
    let raw: Value = serde_json::from_str(&kube.request_text(req).await.unwrap()).unwrap();
    assert_eq!(raw["kind"], "PartialObjectMetadataList", "{raw}");
    assert!(!raw.to_string().contains("hunter2") && !raw.to_string().contains("\"data\""));

    // kube-rs 5: an `Api<PartialObjectMeta<K>>` makes metadata-only requests (its
    // `metadata_watcher` is this, deprecated).
    let meta: Api<PartialObjectMeta<Secret>> = Api::namespaced(kube.clone(), "default");
    let names = watcher(meta, watcher::Config::default())
        .applied_objects()
        .map_ok(|m| m.metadata.name.unwrap_or_default());
    let mut names = Box::pin(names);
    assert_eq!(names.next().await.unwrap().unwrap(), "a");
    api.create(&PostParams::default(), &secret("b"))
        .await
        .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(20), names.next())
        .await
        .expect("the new Secret within 20 s");
    assert_eq!(next.unwrap().unwrap(), "b");
}

/// The official Python client: `host/tests/python/metadata_only.py`.
#[test]
fn python_client_metadata_only() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "secrets"], &[]);
    common::run_python_client_with("metadata_only.py", &[s.kubeconfig().to_str().unwrap()]);
}

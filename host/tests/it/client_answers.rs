//! Answers typed clients parse, shaped as the official Python client sends its requests
//! (issue: "the answers clients parse"): discovery and version paths with a trailing slash,
//! built-in objects without `apiVersion`/`kind`, and `includeObject` on a single-object Table.

use crate::common;

use common::http::{client, default_namespace, send};
use common::in_process::InProcessServer;
use common::server::{Backend, TestServer};
use common::ServerUrl;
use serde_json::{json, Value};
use std::time::Duration;

/// The ConfigMaps URL of namespace `default` (created if missing) and a new ConfigMap `name`
/// in it, as the server stored it.
async fn configmap(s: &impl ServerUrl, name: &str) -> (String, Value) {
    default_namespace(s.url()).await;
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let (code, body) = send(
        client()
            .post(&cms)
            .json(&json!({"metadata": {"name": name}, "data": {"a": "b"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    (cms, body)
}

// `VersionApi().get_code()` asks for `/version/`, `ApisApi().get_api_versions()` for `/apis/`,
// `CoreApi().get_api_versions()` for `/api/`: go-restful answers both forms.
#[tokio::test(flavor = "multi_thread")]
async fn trailing_slash_paths() {
    let s = InProcessServer::start(Backend::Embedded);
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
    let s = InProcessServer::start(Backend::Embedded);
    let (code, body) = send(
        client()
            .post(format!("{}/api/v1/namespaces", s.url))
            .json(&json!({"metadata": {"name": "typed"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["kind"], "Namespace");
    let cms = format!("{}/api/v1/namespaces/typed/configmaps", s.url);
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
    let s = InProcessServer::start(Backend::Embedded);
    let (cms, _) = configmap(&s, "c").await;
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

/// Read a watch response's events until the stream ends or `limit` passes.
async fn watch_events(url: &str, limit: Duration) -> Vec<Value> {
    timed_watch_events(url, limit)
        .await
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

/// [`watch_events`], each with when it arrived after the request was sent.
async fn timed_watch_events(url: &str, limit: Duration) -> Vec<(Duration, Value)> {
    let sent = std::time::Instant::now();
    let mut resp = client().get(url).send().await.expect("watch");
    assert_eq!(resp.status().as_u16(), 200, "{url}");
    let mut buf = Vec::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let chunk = match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(c))) => c,
            _ => break,
        };
        buf.extend_from_slice(&chunk);
        while let Some(i) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=i).collect();
            let event = serde_json::from_slice(&line).expect("one JSON event per line");
            events.push((sent.elapsed(), event));
        }
    }
    events
}

fn is_end_bookmark(e: &Value) -> bool {
    e["type"] == "BOOKMARK"
        && e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
}

// Watch-list (KEP-3157) as client-go's reflector sends it: `sendInitialEvents=true`,
// `resourceVersionMatch=NotOlderThan`, and resourceVersion unset (a consistent read), "0" or
// a given one — on both stores, with and without the watch cache: the initial ADDED events,
// then the bookmark annotated `k8s.io/initial-events-end`.
#[tokio::test(flavor = "multi_thread")]
async fn watch_list_for_every_resource_version() {
    for backend in [Backend::Embedded, Backend::Etcd] {
        for cache in ["true", "false"] {
            let s = TestServer::start_with(
                backend,
                &["configmaps", "namespaces"],
                &["--watch-cache", cache],
            );
            let mut cms = String::new();
            let mut last_rv = String::new();
            for i in 0..3 {
                let (url, body) = configmap(&s, &format!("c{i}")).await;
                cms = url;
                last_rv = body["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .to_string();
            }
            for rv in [
                "",
                "&resourceVersion=0",
                &format!("&resourceVersion={last_rv}"),
            ] {
                let url = format!(
                    "{cms}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3{rv}"
                );
                let events = watch_events(&url, Duration::from_secs(10)).await;
                let what = format!("{backend:?} cache={cache} rv={rv:?}: {events:?}");
                let end = events.iter().position(is_end_bookmark).expect(&what);
                let added: Vec<&Value> = events[..end]
                    .iter()
                    .filter(|e| e["type"] == "ADDED")
                    .collect();
                assert_eq!(added.len(), 3, "{what}");
            }
            // The validation of watch options: sendInitialEvents needs NotOlderThan.
            let (code, body) = send(client().get(format!(
                "{cms}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1"
            )))
            .await;
            assert_eq!(code, 422, "{body}");
            assert!(
                body["message"].as_str().unwrap().contains(
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                ),
                "{body}"
            );
            let (code, body) = send(client().get(format!("{cms}?sendInitialEvents=true"))).await;
            assert_eq!(code, 422, "{body}");
            assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .contains("sendInitialEvents is forbidden for list"),
                "{body}"
            );
        }
    }
}

// `DELETE` of a pod answers the deleted Pod (`ReturnDeletedObject: true` in kube's pod
// storage), which typed clients decode (`CoreV1Api.delete_namespaced_pod` returns a V1Pod);
// a resource that does not ask for it (ConfigMaps) keeps the `Success` Status.
#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_pod_returns_the_pod() {
    for backend in [Backend::Embedded, Backend::Etcd] {
        let s = InProcessServer::start(backend);
        default_namespace(&s.url).await;
        let pods = format!("{}/api/v1/namespaces/default/pods", s.url);
        let (code, created) = send(client().post(&pods).json(&json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}
        })))
        .await;
        assert_eq!(code, 201, "{created}");
        let (code, body) = send(client().delete(format!("{pods}/p"))).await;
        assert_eq!(code, 200, "{body}");
        assert_eq!(
            (&body["apiVersion"], &body["kind"]),
            (&json!("v1"), &json!("Pod")),
            "{body}"
        );
        assert_eq!(body["metadata"]["uid"], created["metadata"]["uid"]);
        assert_eq!(body["spec"]["containers"][0]["image"], "nginx");
        let (code, _) = send(client().get(format!("{pods}/p"))).await;
        assert_eq!(code, 404);

        let (cms, _) = configmap(&s, "c").await;
        let (code, body) = send(client().delete(format!("{cms}/c"))).await;
        assert_eq!(code, 200, "{body}");
        assert_eq!(
            (&body["kind"], &body["status"]),
            (&json!("Status"), &json!("Success"))
        );
    }
}

// A watch shorter than the bookmark interval (60 s) still gets a bookmark, ~2 s before its
// deadline (kube's `cacheWatcher.nextBookmarkTime`).
#[tokio::test(flavor = "multi_thread")]
async fn short_watches_get_a_bookmark_before_they_end() {
    let s = InProcessServer::start(Backend::Embedded);
    let (cms, body) = configmap(&s, "c").await;
    let rv = body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let events = timed_watch_events(
        &format!("{cms}?watch=1&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion={rv}"),
        Duration::from_secs(15),
    )
    .await;
    // The pre-deadline bookmark is due 3 s in (5 s − 2 s); nothing else sends one earlier.
    let bookmark = events
        .iter()
        .find(|(_, e)| e["type"] == "BOOKMARK")
        .unwrap_or_else(|| panic!("no bookmark in a 5 s watch: {events:?}"));
    assert!(bookmark.0 >= Duration::from_millis(2900), "{events:?}");
    // A watch-list (client-go's reflector: no resourceVersion, sendInitialEvents): the initial
    // events, their end bookmark at once, then the pre-deadline one all the same, though
    // nothing changed in between (kube's cacher sends every due bookmark).
    let events = timed_watch_events(
        &format!(
            "{cms}?watch=1&allowWatchBookmarks=true&timeoutSeconds=5\
             &sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        ),
        Duration::from_secs(15),
    )
    .await;
    let bookmarks: Vec<_> = events
        .iter()
        .filter(|(_, e)| e["type"] == "BOOKMARK")
        .collect();
    assert_eq!(bookmarks.len(), 2, "{events:?}");
    assert!(is_end_bookmark(&bookmarks[0].1), "{events:?}");
    assert!(bookmarks[0].0 < Duration::from_secs(2), "{events:?}");
    assert!(!is_end_bookmark(&bookmarks[1].1), "{events:?}");
    assert!(bookmarks[1].0 >= Duration::from_millis(2900), "{events:?}");
}

// Booleans as kube's parameter codec reads them: the Python client up to 36 sends
// `watch=True`; a watch from "" or "0" defaults to a watch-list (`SetListOptionsDefaults`),
// so bookmarks-allowed watches end their initial events with the end bookmark; list options
// and includeObject are validated as kube does.
#[tokio::test(flavor = "multi_thread")]
async fn query_parameters_as_kube_reads_them() {
    let s = InProcessServer::start(Backend::Embedded);
    let (cms, _) = configmap(&s, "c").await;
    let events = watch_events(
        &format!("{cms}?watch=True&timeoutSeconds=1"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED");
    for rv in ["", "&resourceVersion=0"] {
        let events = watch_events(
            &format!("{cms}?watch=1&allowWatchBookmarks=True&timeoutSeconds=2{rv}"),
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(events[0]["type"], "ADDED", "{events:?}");
        assert!(is_end_bookmark(&events[1]), "{events:?}");
    }
    let (code, body) = send(client().get(format!(
        "{cms}?resourceVersionMatch=Exact&resourceVersion=0"
    )))
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""),
        "{body}"
    );
    let (code, body) = send(client().get(format!(
        "{cms}?resourceVersionMatch=Sometime&resourceVersion=1"
    )))
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Unsupported value: \"Sometime\""),
        "{body}"
    );
    let (code, body) = send(
        client()
            .get(format!("{cms}?includeObject=Everything"))
            .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io"),
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "unrecognized includeObject value: \"Everything\""
    );
}

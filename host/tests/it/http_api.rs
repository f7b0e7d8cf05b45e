//! HTTP-level tests of what kubectl does not exercise: optimistic concurrency, no-op updates,
//! finalizers, graceful deletion, paging, namespace and body checks, error shapes,
//! resourceVersion semantics, watch framing, dry run, subresources, selectors and plugin
//! faults. kube-apiserver's behaviour is the specification; each test names the rule it checks.

use crate::common;

use common::in_process::InProcessServer;
use common::server::{Backend, TestServer};
use common::ServerUrl;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const WIDGETS: &str = "/apis/example.dev/v1/namespaces";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// `/apis/example.dev/v1/namespaces/{ns}/widgets[/{name}]`.
fn widgets(s: &impl ServerUrl, ns: &str) -> String {
    format!("{}{WIDGETS}/{ns}/widgets", s.url())
}

fn widget_url(s: &impl ServerUrl, ns: &str, name: &str) -> String {
    format!("{}/{name}", widgets(s, ns))
}

fn widget(name: &str, size: &str) -> Value {
    json!({"apiVersion": "example.dev/v1", "kind": "Widget",
           "metadata": {"name": name}, "spec": {"size": size}})
}

/// Send and decode: (status code, JSON body or `Value::String` of the raw text).
async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("request");
    let code = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (code, body)
}

async fn get(url: &str) -> (u16, Value) {
    send(client().get(url)).await
}

async fn post(url: &str, body: &Value) -> (u16, Value) {
    send(client().post(url).json(body)).await
}

async fn put(url: &str, body: &Value) -> (u16, Value) {
    send(client().put(url).json(body)).await
}

async fn delete(url: &str) -> (u16, Value) {
    send(client().delete(url)).await
}

async fn merge_patch(url: &str, body: &Value) -> (u16, Value) {
    send(
        client()
            .patch(url)
            .header("content-type", "application/merge-patch+json")
            .body(body.to_string()),
    )
    .await
}

/// Create a widget and return the stored object.
async fn create_widget(s: &impl ServerUrl, ns: &str, name: &str, size: &str) -> Value {
    common::http::namespace(s.url(), ns).await;
    let (code, body) = post(&widgets(s, ns), &widget(name, size)).await;
    assert_eq!(code, 201, "create {ns}/{name}: {body}");
    body
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Assert a `metav1.Status` failure: HTTP code, `code`, `reason`.
fn assert_status(code: u16, body: &Value, want_code: u16, reason: &str) {
    assert_eq!(code, want_code, "unexpected answer: {body}");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1", "{body}");
    assert_eq!(body["status"], "Failure", "{body}");
    assert_eq!(body["code"], want_code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
}

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

/// A running watch: newline-delimited JSON events read from a chunked response.
struct Watch {
    resp: reqwest::Response,
    buf: Vec<u8>,
    ended: bool,
}

impl Watch {
    async fn open(url: &str) -> Watch {
        let resp = client().get(url).send().await.expect("watch request");
        assert_eq!(resp.status().as_u16(), 200, "watch {url}");
        Watch {
            resp,
            buf: Vec::new(),
            ended: false,
        }
    }

    fn content_type(&self) -> String {
        self.resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    }

    /// The next event, or `None` when the stream ends or nothing arrives within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                let line = String::from_utf8(line).expect("utf-8 event");
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let ev: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("event line is not JSON ({e}): {line}"));
                return Some(ev);
            }
            if self.ended {
                assert!(
                    self.buf.iter().all(u8::is_ascii_whitespace),
                    "trailing bytes without newline: {:?}",
                    String::from_utf8_lossy(&self.buf)
                );
                return None;
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Err(_) => return None,
                Ok(Ok(Some(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Ok(None)) => self.ended = true,
                Ok(Err(e)) => panic!("watch stream failed: {e}"),
            }
        }
    }

    /// Every event until the stream ends (the server's `timeoutSeconds`) or `wait` passes.
    async fn drain(&mut self, wait: Duration) -> Vec<Value> {
        let deadline = Instant::now() + wait;
        let mut out = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next(left).await {
                Some(ev) => out.push(ev),
                None => break,
            }
        }
        out
    }
}

fn event_summary(ev: &Value) -> (String, String) {
    (
        ev["type"].as_str().unwrap_or_default().to_string(),
        ev["object"]["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// Every watch event line is exactly `{"type": …, "object": {…}}`.
fn assert_event_shape(ev: &Value) {
    let o = ev.as_object().expect("event is an object");
    assert_eq!(o.len(), 2, "event has exactly type and object: {ev}");
    assert!(o["type"].is_string(), "{ev}");
    assert!(o["object"].is_object(), "{ev}");
}

// 1. store.go / GuaranteedUpdate: a PUT whose metadata.resourceVersion is not the stored one is
//    a 409 Conflict with `OptimisticLockErrorMsg` (apimachinery `errors.NewConflict`).
#[tokio::test(flavor = "multi_thread")]
async fn stale_resource_version_is_a_conflict() {
    let s = InProcessServer::start(Backend::Embedded);
    let created = create_widget(&s, "default", "w", "small").await;
    let url = widget_url(&s, "default", "w");

    let mut first = created.clone();
    first["metadata"]["labels"] = json!({"round": "one"});
    let (code, updated) = put(&url, &first).await;
    assert_eq!(code, 200, "{updated}");
    assert_ne!(rv(&updated), rv(&created));

    // The same resourceVersion again: stale now.
    let mut second = created.clone();
    second["metadata"]["labels"] = json!({"round": "two"});
    let (code, body) = put(&url, &second).await;
    assert_status(code, &body, 409, "Conflict");
    assert_eq!(
        message(&body),
        "Operation cannot be fulfilled on widgets.example.dev \"w\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(body["details"]["name"], "w");
    assert_eq!(body["details"]["group"], "example.dev");
    assert_eq!(body["details"]["kind"], "widgets");

    // Nothing was written.
    let (_, now) = get(&url).await;
    assert_eq!(now["metadata"]["labels"]["round"], "one");
    assert_eq!(rv(&now), rv(&updated));
}

// 2. etcd3 GuaranteedUpdate's no-op short-circuit: an update whose result equals the stored
//    bytes is not written, keeps the resourceVersion and produces no watch event.
#[tokio::test(flavor = "multi_thread")]
async fn noop_update_keeps_resource_version_and_sends_no_event() {
    let s = InProcessServer::start(Backend::Embedded);
    create_widget(&s, "default", "w", "medium").await;
    let url = widget_url(&s, "default", "w");
    let (code, read) = get(&url).await;
    assert_eq!(code, 200);
    let before = rv(&read);

    let mut watch = Watch::open(&format!(
        "{}?watch=true&resourceVersion={before}&timeoutSeconds=2",
        widgets(&s, "default")
    ))
    .await;

    let (code, same) = put(&url, &read).await;
    assert_eq!(code, 200, "{same}");
    assert_eq!(
        rv(&same),
        before,
        "a no-op update keeps the resourceVersion"
    );
    let (_, again) = get(&url).await;
    assert_eq!(rv(&again), before);
    assert_eq!(again, read, "the stored object is unchanged");

    // A real change afterwards: the watch is live, and its first event is this one.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut changed = again.clone();
    changed["metadata"]["labels"] = json!({"changed": "yes"});
    let (code, changed) = put(&url, &changed).await;
    assert_eq!(code, 200, "{changed}");
    assert_ne!(rv(&changed), before);

    let events = watch.drain(Duration::from_secs(5)).await;
    let summary: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                rv(&e["object"]),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [("MODIFIED".to_string(), rv(&changed))],
        "only the real change is an event; the no-op update produced none"
    );
}

// 3. Store.Delete with pending finalizers (`markAsDeleting`): 200 with the object, which stays
//    with deletionTimestamp; removing the last finalizer deletes it (ShouldDeleteDuringUpdate).
#[tokio::test(flavor = "multi_thread")]
async fn finalizers_hold_deletion_until_removed() {
    let s = InProcessServer::start(Backend::Embedded);
    let mut w = widget("w", "small");
    w["metadata"]["finalizers"] = json!(["example.dev/keep"]);
    let (code, created) = post(&widgets(&s, "default"), &w).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["example.dev/keep"])
    );
    let url = widget_url(&s, "default", "w");

    let (code, deleting) = delete(&url).await;
    assert_eq!(code, 200, "{deleting}");
    assert_eq!(
        deleting["kind"], "Widget",
        "the object, not a Status: {deleting}"
    );
    assert!(
        deleting["metadata"]["deletionTimestamp"].is_string(),
        "{deleting}"
    );
    assert_eq!(deleting["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        deleting["metadata"]["finalizers"],
        json!(["example.dev/keep"])
    );

    let (code, still) = get(&url).await;
    assert_eq!(code, 200, "{still}");
    assert!(still["metadata"]["deletionTimestamp"].is_string());

    let (code, patched) = merge_patch(&url, &json!({"metadata": {"finalizers": null}})).await;
    assert_eq!(code, 200, "{patched}");

    let (code, gone) = get(&url).await;
    assert_status(code, &gone, 404, "NotFound");
}

fn scheduled_pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeName": "node-a",
                    "containers": [{"name": "web", "image": "nginx:1.27"}]}})
}

// 4. Graceful deletion (pod strategy `CheckGracefulDelete`, rest.BeforeDelete): a scheduled pod
//    deleted with gracePeriodSeconds=30 stays, terminating; gracePeriodSeconds=0 removes it.
#[tokio::test(flavor = "multi_thread")]
async fn graceful_pod_deletion() {
    let s = InProcessServer::start(Backend::Embedded);
    let pods = format!("{}/api/v1/namespaces/default/pods", s.url);
    let (code, created) = post(&pods, &scheduled_pod("web")).await;
    assert_eq!(code, 201, "{created}");
    let url = format!("{pods}/web");

    let (code, pending) = delete(&format!("{url}?gracePeriodSeconds=30")).await;
    assert_eq!(code, 200, "{pending}");
    assert_eq!(pending["kind"], "Pod", "{pending}");
    assert!(
        pending["metadata"]["deletionTimestamp"].is_string(),
        "{pending}"
    );
    assert_eq!(pending["metadata"]["deletionGracePeriodSeconds"], 30);

    let (code, still) = get(&url).await;
    assert_eq!(code, 200, "{still}");
    assert_eq!(still["metadata"]["deletionGracePeriodSeconds"], 30);
    assert!(still["metadata"]["deletionTimestamp"].is_string());

    // DeleteOptions in the body work the same as the query parameter.
    let (code, done) = send(
        client()
            .delete(&url)
            .json(&json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})),
    )
    .await;
    assert_eq!(code, 200, "{done}");

    let (code, gone) = get(&url).await;
    assert_status(code, &gone, 404, "NotFound");
}

// 4b. Pod storage sets `ReturnDeletedObject: true` (pkg/registry/core/pod/storage/storage.go),
//     so the DELETE that removes a pod answers with the Pod, not a Status.
#[tokio::test(flavor = "multi_thread")]
async fn deleted_pod_is_returned_as_the_object() {
    let s = InProcessServer::start(Backend::Embedded);
    let pods = format!("{}/api/v1/namespaces/default/pods", s.url);
    let mut pod = scheduled_pod("web");
    pod["spec"].as_object_mut().unwrap().remove("nodeName");
    let (code, created) = post(&pods, &pod).await;
    assert_eq!(code, 201, "{created}");
    let (code, body) = delete(&format!("{pods}/web")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["kind"], "Pod", "{body}");
    assert_eq!(body["metadata"]["name"], "web");
}

// 5. List paging (etcd3 GetList, `limit`/`continue`): pages share the list resourceVersion,
//    `remainingItemCount` counts what is left; a token that does not decode is 400.
#[tokio::test(flavor = "multi_thread")]
async fn list_paging_with_limit_and_continue() {
    let s = InProcessServer::start(Backend::Embedded);
    for i in 1..=5 {
        create_widget(&s, "paging", &format!("w{i}"), "small").await;
    }
    let base = widgets(&s, "paging");
    common::http::namespace(s.url(), "paging").await;
    let mut names = Vec::new();
    let mut list_rvs = Vec::new();
    let mut pages = 0;
    let mut cont: Option<String> = None;
    loop {
        let url = match &cont {
            None => format!("{base}?limit=2"),
            Some(c) => format!("{base}?limit=2&continue={c}"),
        };
        let (code, page) = get(&url).await;
        assert_eq!(code, 200, "{page}");
        pages += 1;
        if pages == 1 {
            assert_eq!(page["metadata"]["remainingItemCount"], 3, "{page}");
        }
        assert_eq!(page["kind"], "WidgetList");
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 2);
        names.extend(
            items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        list_rvs.push(
            page["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        match page["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() => cont = Some(c.to_string()),
            _ => {
                assert!(
                    page["metadata"].get("remainingItemCount").is_none(),
                    "{page}"
                );
                break;
            }
        }
        assert!(pages < 10, "paging does not end");
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["w1", "w2", "w3", "w4", "w5"]);
    assert!(
        list_rvs.iter().all(|r| r == &list_rvs[0]),
        "every page carries the first page's resourceVersion: {list_rvs:?}"
    );

    // A continue token with a resourceVersion other than "0" (storage.ValidateListOptions).
    let (_, first) = get(&format!("{base}?limit=2")).await;
    let token = first["metadata"]["continue"].as_str().unwrap();
    let (code, body) = get(&format!(
        "{base}?limit=2&continue={token}&resourceVersion={}",
        list_rvs[0]
    ))
    .await;
    assert_status(code, &body, 400, "BadRequest");
    assert_eq!(
        message(&body),
        "specifying resource version is not allowed when using continue"
    );
}

/// The standard plugins with `--watch-cache=false`: every read and watch goes to storage.
fn without_watch_cache(backend: Backend) -> TestServer {
    TestServer::start_with(
        backend,
        &["pods", "configmaps", "namespaces", "widgets"],
        &["--watch-cache=false"],
    )
}

/// Widget `w{i}` labelled `parity=even|odd`, with an annotation that needs JSON escapes.
fn parity_widget(i: usize) -> Value {
    let mut w = widget(&format!("w{i}"), "small");
    w["metadata"]["labels"] = json!({"parity": if i.is_multiple_of(2) { "even" } else { "odd" }});
    w["metadata"]["annotations"] = json!({"note": "quote \" backslash \\ unicode \u{e9} \u{2028}"});
    w
}

/// With the watch cache off every list is read from storage and written from the stored bytes
/// (`SharedObject::Stored`, resourceVersion spliced in): each listed object must equal what a GET
/// of it returns, label-selected lists (decoded in storage) too, and `kubectl get` must read it.
#[tokio::test(flavor = "multi_thread")]
async fn lists_from_storage_equal_the_objects() {
    let s = without_watch_cache(Backend::Embedded);
    common::http::namespace(s.url(), "stored").await;
    for i in 1..=4 {
        let w = parity_widget(i);
        let (code, body) = post(&widgets(&s, "stored"), &w).await;
        assert_eq!(code, 201, "{body}");
    }
    for (query, want) in [
        ("", vec!["w1", "w2", "w3", "w4"]),
        ("?labelSelector=parity%3Deven", vec!["w2", "w4"]),
    ] {
        let (code, list) = get(&format!("{}{query}", widgets(&s, "stored"))).await;
        assert_eq!(code, 200, "{list}");
        assert_eq!(list["kind"], "WidgetList", "{list}");
        assert_eq!(list["apiVersion"], "example.dev/v1", "{list}");
        let list_rv: u64 = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let items = list["items"].as_array().unwrap();
        let names: Vec<&str> = items
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, want, "{query}");
        for item in items {
            let name = item["metadata"]["name"].as_str().unwrap();
            let (code, obj) = get(&widget_url(&s, "stored", name)).await;
            assert_eq!(code, 200, "{obj}");
            assert_eq!(item, &obj, "{query}: the listed object is the object");
            assert!(rv(item).parse::<u64>().unwrap() <= list_rv);
        }
    }
    let out = s.ok(&[
        "get",
        "widgets",
        "-n",
        "stored",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert_eq!(out.trim(), "w1 w2 w3 w4");
}

/// With the watch cache off every watch reads the store's events, and an unfiltered watch
/// writes each event from the stored bytes (`SharedObject::Stored`, resourceVersion spliced
/// in): each event object must equal what the write returned (a DELETED: the last state with
/// the delete's resourceVersion), for a label-selected watch (decoded in storage) too.
#[tokio::test(flavor = "multi_thread")]
async fn watches_from_storage_write_the_objects() {
    let s = without_watch_cache(Backend::Embedded);
    let base = widgets(&s, "stored");
    common::http::namespace(s.url(), "stored").await;
    let (_, list) = get(&base).await;
    let rv0 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let url = |selector: &str| {
        format!("{base}?watch=true&resourceVersion={rv0}&timeoutSeconds=10{selector}")
    };
    let mut all = Watch::open(&url("")).await;
    let mut even = Watch::open(&url("&labelSelector=parity%3Deven")).await;
    let (mut want_all, mut want_even) = (Vec::new(), Vec::new());
    let mut objects = Vec::new();
    for i in 1..=4 {
        let w = parity_widget(i);
        let (code, body) = post(&base, &w).await;
        assert_eq!(code, 201, "{body}");
        want_all.push(("ADDED", body.clone()));
        if i % 2 == 0 {
            want_even.push(("ADDED", body.clone()));
        }
        objects.push(body);
    }
    let (code, w2) = merge_patch(
        &widget_url(&s, "stored", "w2"),
        &json!({"spec": {"size": "large"}}),
    )
    .await;
    assert_eq!(code, 200, "{w2}");
    want_all.push(("MODIFIED", w2.clone()));
    want_even.push(("MODIFIED", w2.clone()));
    let (code, body) = delete(&widget_url(&s, "stored", "w4")).await;
    assert_eq!(code, 200, "{body}");
    // A custom resource's DELETE answers a Status (kube's default for CRs), so the event's
    // resourceVersion is checked against the object's last one below.
    assert_eq!(body["kind"], "Status", "{body}");
    want_all.push(("DELETED", objects[3].clone()));
    want_even.push(("DELETED", objects[3].clone()));

    for (w, want) in [(&mut all, want_all), (&mut even, want_even)] {
        for (kind, obj) in want {
            let ev = w.next(Duration::from_secs(5)).await.expect("an event");
            assert_event_shape(&ev);
            assert_eq!(ev["type"], kind, "{ev}");
            let mut got = ev["object"].clone();
            if kind == "DELETED" {
                // The last state with the delete's resourceVersion (etcd3 watcher: the previous
                // value at the delete revision), newer than the object's last one.
                let deleted: u64 = rv(&got).parse().unwrap();
                assert!(deleted > rv(&obj).parse().unwrap(), "{ev}");
                got["metadata"]["resourceVersion"] = json!(rv(&obj));
            }
            assert_eq!(got, obj, "{kind}: the event object is the object");
        }
        assert!(w.next(Duration::from_millis(300)).await.is_none());
    }
}

/// etcd3 watcher.go `transform`: an event whose object does not decode ends the watch with an
/// ERROR event (an InternalError Status); nothing after it is delivered. A GET of it is a 500. The stored bytes are
/// written over directly in etcd, under the watch cache (off) and the registry.
#[tokio::test(flavor = "multi_thread")]
async fn watch_of_a_corrupt_object_ends_with_an_error() {
    let s = without_watch_cache(Backend::Etcd);
    let created = create_widget(&s, "corrupt", "w1", "small").await;
    let base = widgets(&s, "corrupt");
    common::http::namespace(s.url(), "corrupt").await;
    let mut w = Watch::open(&format!(
        "{base}?watch=true&resourceVersion={}&timeoutSeconds=10",
        rv(&created)
    ))
    .await;
    let mut etcd = etcd_client::Client::connect([s.etcd_endpoint().unwrap()], None)
        .await
        .expect("etcd client");
    etcd.put(
        "/registry/example.dev/widgets/corrupt/w1",
        "{not json",
        None,
    )
    .await
    .expect("put garbage");
    create_widget(&s, "corrupt", "w2", "small").await;
    let ev = w
        .next(Duration::from_secs(5))
        .await
        .expect("an ERROR event");
    assert_event_shape(&ev);
    assert_eq!(ev["type"], "ERROR", "{ev}");
    assert_eq!(ev["object"]["kind"], "Status", "{ev}");
    assert_eq!(ev["object"]["code"], 500, "{ev}");
    assert!(
        ev["object"]["message"]
            .as_str()
            .unwrap()
            .contains("/registry/example.dev/widgets/corrupt/w1"),
        "{ev}"
    );
    assert!(w.next(Duration::from_secs(2)).await.is_none());
    assert!(w.ended, "the watch ended after its ERROR event");
    // A GET (written from the stored bytes) of the corrupt object is a 500 InternalError.
    let (code, body) = get(&widget_url(&s, "corrupt", "w1")).await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["reason"], "InternalError", "{body}");
}

// 5b. A continue token that does not decode is 400 BadRequest "invalid continue token: continue
//     key is not valid: …" (etcd3 store.go GetList wrapping storage.DecodeContinue).
#[tokio::test(flavor = "multi_thread")]
async fn garbage_continue_token_is_a_bad_request() {
    let s = InProcessServer::start(Backend::Embedded);
    create_widget(&s, "default", "w", "small").await;
    let (code, body) = get(&format!(
        "{}?limit=2&continue=not-a-token",
        widgets(&s, "default")
    ))
    .await;
    assert_status(code, &body, 400, "BadRequest");
    assert!(
        message(&body).starts_with("invalid continue token: continue key is not valid: "),
        "{body}"
    );
}

// 6. rest.BeforeCreate / EnsureObjectNamespaceMatchesRequestNamespace.
#[tokio::test(flavor = "multi_thread")]
async fn namespace_mismatch_is_a_bad_request() {
    let s = InProcessServer::start(Backend::Embedded);
    let mut w = widget("w", "small");
    w["metadata"]["namespace"] = json!("b");
    let (code, body) = post(&widgets(&s, "a"), &w).await;
    assert_status(code, &body, 400, "BadRequest");
    assert_eq!(
        message(&body),
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let (code, _) = get(&widget_url(&s, "b", "w")).await;
    assert_eq!(code, 404);
    let (code, _) = get(&widget_url(&s, "a", "w")).await;
    assert_eq!(code, 404);
}

// 7. Body decoding (handlers/create.go): a body that is not JSON → 400 (transformDecodeError);
//    an apiVersion other than the path's → 400 "the API version in the data (…) does not match
//    the expected API version (…)"; a kind the core scheme cannot decode into the resource's
//    type → 400. (Wrong kind on a custom group: 7b; oversized bodies: 7c, 7d.)
#[tokio::test(flavor = "multi_thread")]
async fn malformed_and_foreign_bodies() {
    let s = InProcessServer::start(Backend::Embedded);
    let url = widgets(&s, "default");

    let (code, body) = send(
        client()
            .post(&url)
            .header("content-type", "application/json")
            .body("{\"apiVersion\": \"example.dev/v1\", \"kind\": "),
    )
    .await;
    assert_status(code, &body, 400, "BadRequest");

    let mut foreign = widget("w", "small");
    foreign["apiVersion"] = json!("v1");
    foreign["kind"] = json!("ConfigMap");
    let (code, body) = post(&url, &foreign).await;
    assert_status(code, &body, 400, "BadRequest");
    assert!(
        message(&body).starts_with(
            "the API version in the data (v1) does not match the expected API version (example.dev/v1)"
        ),
        "{body}"
    );
    let (code, _) = get(&widget_url(&s, "default", "w")).await;
    assert_eq!(code, 404, "nothing was created");

    // The same checks on a PUT.
    create_widget(&s, "default", "w", "small").await;
    let (code, body) = put(&widget_url(&s, "default", "w"), &foreign).await;
    assert_status(code, &body, 400, "BadRequest");

    // Core resources: another kind, and another group, are 400.
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url);
    let (code, body) = post(
        &cms,
        &json!({"apiVersion": "v1", "kind": "Gadget", "metadata": {"name": "c"}}),
    )
    .await;
    assert_status(code, &body, 400, "BadRequest");
    let (code, body) = post(
        &cms,
        &json!({"apiVersion": "example.dev/v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    )
    .await;
    assert_status(code, &body, 400, "BadRequest");
    assert!(
        message(&body).starts_with(
            "the API version in the data (example.dev/v1) does not match the expected API version (v1)"
        ),
        "{body}"
    );
    let (code, _) = get(&format!("{cms}/c")).await;
    assert_eq!(code, 404, "nothing was created");
}

// 7b. A custom-group resource decodes any kind of its own group/version; the wrong kind is caught
//     by the custom resource validator (apiextensions-apiserver
//     pkg/registry/customresource/validator.go `ValidateTypeMeta`): 422 Invalid
//     `kind: Invalid value: "Gadget": must be Widget`.
#[tokio::test(flavor = "multi_thread")]
async fn wrong_kind_on_custom_group_is_invalid() {
    let s = InProcessServer::start(Backend::Embedded);
    let mut wrong_kind = widget("w", "small");
    wrong_kind["kind"] = json!("Gadget");
    let (code, body) = post(&widgets(&s, "default"), &wrong_kind).await;
    assert_status(code, &body, 422, "Invalid");
    assert_eq!(body["details"]["kind"], "Widget", "{body}");
    assert_eq!(body["details"]["causes"][0]["field"], "kind", "{body}");
    assert!(
        message(&body).contains("kind: Invalid value: \"Gadget\": must be Widget"),
        "{body}"
    );
}

// 7c. A body over `--max-request-bytes` (3 MiB, `limitedReadBody` in handlers/rest.go) is 413
//     RequestEntityTooLarge "Request entity too large: limit is 3145728", as a Status.
#[tokio::test(flavor = "multi_thread")]
async fn oversized_body_is_request_entity_too_large() {
    let s = InProcessServer::start(Backend::Embedded);
    let mut big = widget("big", "small");
    big["metadata"]["annotations"] = json!({"filler": "x".repeat(3 * 1024 * 1024 + 1024)});
    let (code, body) = post(&widgets(&s, "default"), &big).await;
    assert_status(code, &body, 413, "RequestEntityTooLarge");
    assert_eq!(message(&body), "Request entity too large: limit is 3145728");
    let (code, body) = send(
        client()
            .patch(widget_url(&s, "default", "big"))
            .header("content-type", "application/merge-patch+json")
            .body(big.to_string()),
    )
    .await;
    assert_status(code, &body, 413, "RequestEntityTooLarge");
}

// 7d. The 3 MiB limit is the only size limit on the way in: a 2.5 MiB widget body whose bulk is
//     an unknown (pruned) field is accepted, as kube-apiserver accepts it for a custom resource.
#[tokio::test(flavor = "multi_thread")]
async fn body_under_three_mib_is_accepted() {
    let s = InProcessServer::start(Backend::Embedded);
    let mut w = widget("roomy", "small");
    w["spec"]["padding"] = json!("x".repeat(5 * 512 * 1024));
    let (code, body) = post(&widgets(&s, "default"), &w).await;
    assert_eq!(code, 201, "{body}");
    assert!(
        body["spec"].get("padding").is_none(),
        "unknown fields are pruned"
    );
}

// 8. Error shapes (apimachinery errors.go): NotFound names the resource in `details.kind`;
//    Invalid names the Kind and lists causes with fields.
#[tokio::test(flavor = "multi_thread")]
async fn not_found_and_invalid_shapes() {
    let s = InProcessServer::start(Backend::Embedded);
    let (code, body) = get(&widget_url(&s, "default", "missing")).await;
    assert_status(code, &body, 404, "NotFound");
    assert_eq!(message(&body), "widgets.example.dev \"missing\" not found");
    assert_eq!(body["details"]["name"], "missing");
    assert_eq!(body["details"]["group"], "example.dev");
    assert_eq!(body["details"]["kind"], "widgets");

    let (code, body) = post(&widgets(&s, "default"), &widget("bad", "huge")).await;
    assert_status(code, &body, 422, "Invalid");
    assert_eq!(
        message(&body),
        "Widget.example.dev \"bad\" is invalid: spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \"large\""
    );
    assert_eq!(body["details"]["name"], "bad");
    assert_eq!(body["details"]["group"], "example.dev");
    assert_eq!(body["details"]["kind"], "Widget");
    let causes = body["details"]["causes"].as_array().expect("causes");
    assert_eq!(causes.len(), 1, "{body}");
    assert_eq!(causes[0]["field"], "spec.size");
    assert_eq!(causes[0]["reason"], "FieldValueNotSupported");

    let (code, body) = post(
        &widgets(&s, "default"),
        &json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                "metadata": {"name": "empty"}, "spec": {}}),
    )
    .await;
    assert_status(code, &body, 422, "Invalid");
    assert_eq!(body["details"]["causes"][0]["field"], "spec.size");
    assert_eq!(body["details"]["causes"][0]["reason"], "FieldValueRequired");
}

// 9. resourceVersion on reads: "0" is any-version; a non-number is 400; resourceVersionMatch
//    without resourceVersion is 422 (ListOptions validation); a GET beyond the current
//    revision is 504 Timeout with a ResourceVersionTooLarge cause (NewTooLargeResourceVersionError).
#[tokio::test(flavor = "multi_thread")]
async fn resource_version_semantics_on_reads() {
    let s = InProcessServer::start(Backend::Embedded);
    create_widget(&s, "default", "w", "small").await;
    let base = widgets(&s, "default");

    // "0" is any version, served by the watch cache, which may not have the create's event
    // yet (kube's semantics): the object shows within a moment.
    let mut list = Value::Null;
    for _ in 0..50 {
        let (code, body) = get(&format!("{base}?resourceVersion=0")).await;
        assert_eq!(code, 200, "{body}");
        list = body;
        if list["items"].as_array().unwrap().len() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");

    let (code, body) = get(&format!("{base}?resourceVersion=abc")).await;
    assert_status(code, &body, 400, "BadRequest");
    assert!(
        message(&body).starts_with("invalid resource version: "),
        "{body}"
    );

    let (code, body) = get(&format!("{base}?resourceVersionMatch=Exact")).await;
    assert_status(code, &body, 422, "Invalid");
    assert!(
        message(&body).contains(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        ),
        "{body}"
    );
    assert_eq!(body["details"]["kind"], "ListOptions");
    assert_eq!(body["details"]["group"], "meta.k8s.io");
    assert_eq!(
        body["details"]["causes"][0]["field"],
        "resourceVersionMatch"
    );

    let current: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let far = current + 1_000_000;
    let started = Instant::now();
    let resp = client()
        .get(widget_url(&s, "default", "w") + &format!("?resourceVersion={far}"))
        .send()
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let retry_after = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let code = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    assert_status(code, &body, 504, "Timeout");
    assert!(
        message(&body).starts_with(&format!(
            "Timeout: Too large resource version: {far}, current: "
        )),
        "{body}"
    );
    assert_eq!(
        body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    assert_eq!(retry_after.as_deref(), Some("1"));
}

// 10. Watch (handlers/watch.go, etcd3 watcher): no resourceVersion replays the current state as
//     ADDED; a list resourceVersion gets only later events; NDJSON `{"type","object"}` lines.
#[tokio::test(flavor = "multi_thread")]
async fn watch_initial_events_and_resume_from_list() {
    let s = InProcessServer::start(Backend::Embedded);
    create_widget(&s, "watching", "w1", "small").await;
    create_widget(&s, "watching", "w2", "large").await;
    let base = widgets(&s, "watching");
    common::http::namespace(s.url(), "watching").await;

    let mut all = Watch::open(&format!("{base}?watch=true&timeoutSeconds=5")).await;
    assert!(
        all.content_type().starts_with("application/json"),
        "{}",
        all.content_type()
    );
    let mut initial = Vec::new();
    for _ in 0..2 {
        let ev = all
            .next(Duration::from_secs(5))
            .await
            .expect("initial event");
        assert_event_shape(&ev);
        assert_eq!(ev["object"]["kind"], "Widget");
        initial.push(event_summary(&ev));
    }
    initial.sort();
    assert_eq!(
        initial,
        [
            ("ADDED".to_string(), "w1".to_string()),
            ("ADDED".to_string(), "w2".to_string())
        ]
    );

    let (_, list) = get(&base).await;
    let list_rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut later = Watch::open(&format!(
        "{base}?watch=true&resourceVersion={list_rv}&timeoutSeconds=5"
    ))
    .await;
    assert!(later.content_type().starts_with("application/json"));

    create_widget(&s, "watching", "w3", "medium").await;
    let (code, _) = delete(&widget_url(&s, "watching", "w1")).await;
    assert_eq!(code, 200);

    for w in [&mut all, &mut later] {
        let ev = w.next(Duration::from_secs(5)).await.expect("ADDED w3");
        assert_event_shape(&ev);
        assert_eq!(event_summary(&ev), ("ADDED".into(), "w3".into()), "{ev}");
        let ev = w.next(Duration::from_secs(5)).await.expect("DELETED w1");
        assert_event_shape(&ev);
        assert_eq!(event_summary(&ev), ("DELETED".into(), "w1".into()), "{ev}");
    }
    // Other namespaces are not watched.
    create_widget(&s, "elsewhere", "x", "small").await;
    assert!(later.next(Duration::from_millis(500)).await.is_none());
}

// 11. dryRun=All (dryrun.go): the answer is what would happen; nothing is stored or deleted.
#[tokio::test(flavor = "multi_thread")]
async fn dry_run_create_and_delete() {
    let s = InProcessServer::start(Backend::Embedded);
    let base = widgets(&s, "default");
    let (code, body) = post(&format!("{base}?dryRun=All"), &widget("ghost", "large")).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["metadata"]["name"], "ghost");
    assert_eq!(body["spec"]["replicas"], 5, "strategies still run");
    assert!(body["metadata"]["uid"].is_string());
    assert!(
        rv(&body).is_empty(),
        "a dry-run create assigns no resourceVersion: {body}"
    );
    let (code, _) = get(&format!("{base}/ghost")).await;
    assert_eq!(code, 404, "dry-run create stored nothing");
    let (_, list) = get(&base).await;
    assert!(list["items"].as_array().unwrap().is_empty());

    create_widget(&s, "default", "real", "small").await;
    let (code, body) = delete(&format!("{base}/real?dryRun=All")).await;
    assert_eq!(code, 200, "{body}");
    let (code, still) = get(&format!("{base}/real")).await;
    assert_eq!(code, 200, "dry-run delete deleted nothing: {still}");

    let (code, body) = post(&format!("{base}?dryRun=Some"), &widget("x", "small")).await;
    assert_status(code, &body, 422, "Invalid");
}

// 12. rest.BeforeCreate on a cluster-scoped resource clears metadata.namespace.
#[tokio::test(flavor = "multi_thread")]
async fn cluster_scoped_create_drops_namespace() {
    let s = InProcessServer::start(Backend::Embedded);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": "team-a", "namespace": "default"}});
    let (code, body) = post(&format!("{}/api/v1/namespaces", s.url), &ns).await;
    assert_eq!(code, 201, "{body}");
    assert!(
        body["metadata"].get("namespace").is_none(),
        "cluster-scoped objects carry no namespace: {body}"
    );
    let (code, got) = get(&format!("{}/api/v1/namespaces/team-a", s.url)).await;
    assert_eq!(code, 200, "{got}");
    assert!(got["metadata"].get("namespace").is_none(), "{got}");
}

// 13. The status strategy: PUT /status changes only status; PUT on the resource keeps the
//     stored status (PrepareForUpdate / PrepareForStatusUpdate).
#[tokio::test(flavor = "multi_thread")]
async fn status_subresource_separates_spec_and_status() {
    let s = InProcessServer::start(Backend::Embedded);
    let created = create_widget(&s, "default", "w", "small").await;
    assert_eq!(created["status"]["phase"], "Pending");
    let url = widget_url(&s, "default", "w");

    let mut body = created.clone();
    body["spec"]["size"] = json!("large");
    body["spec"]["replicas"] = json!(5);
    body["status"]["phase"] = json!("Ready");
    let (code, after_status) = put(&format!("{url}/status"), &body).await;
    assert_eq!(code, 200, "{after_status}");
    assert_eq!(after_status["status"]["phase"], "Ready");
    assert_eq!(
        after_status["spec"]["size"], "small",
        "spec ignored on /status"
    );
    assert_eq!(after_status["spec"]["replicas"], 1);
    assert_eq!(after_status["metadata"]["generation"], 1);
    let (_, got) = get(&url).await;
    assert_eq!(got["status"]["phase"], "Ready");
    assert_eq!(got["spec"]["size"], "small");

    let mut body = got.clone();
    body["spec"]["replicas"] = json!(2);
    body["status"]["phase"] = json!("Failed");
    let (code, after_main) = put(&url, &body).await;
    assert_eq!(code, 200, "{after_main}");
    assert_eq!(after_main["spec"]["replicas"], 2);
    assert_eq!(
        after_main["status"]["phase"], "Ready",
        "status ignored on the resource"
    );
    assert_eq!(after_main["metadata"]["generation"], 2);

    let (code, status_get) = get(&format!("{url}/status")).await;
    assert_eq!(code, 200, "{status_get}");
    assert_eq!(status_get["status"]["phase"], "Ready");
}

// 14. Query parameters the server does not know are ignored (the parameter codec drops them).
#[tokio::test(flavor = "multi_thread")]
async fn unknown_query_parameters_are_ignored() {
    let s = InProcessServer::start(Backend::Embedded);
    let base = widgets(&s, "default");
    let (code, body) = post(
        &format!("{base}?timeout=32s&foo=bar&fieldManager=kubectl-create"),
        &widget("w", "small"),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let (code, list) = get(&format!("{base}?timeout=32s&foo=bar")).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let (code, one) = get(&format!("{base}/w?foo=bar&pretty=true")).await;
    assert_eq!(code, 200, "{one}");
    assert_eq!(one["metadata"]["name"], "w");
}

// 15. Field selectors: metadata.name, metadata.namespace and the resource's selectable fields;
//     anything else is 400 "field label not supported: <label>" (handlers/get.go).
#[tokio::test(flavor = "multi_thread")]
async fn field_selectors() {
    let s = InProcessServer::start(Backend::Embedded);
    create_widget(&s, "default", "w1", "small").await;
    create_widget(&s, "default", "w2", "large").await;
    create_widget(&s, "default", "w3", "small").await;
    let base = widgets(&s, "default");
    let names = |list: &Value| -> Vec<String> {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };

    let (code, list) = get(&format!("{base}?fieldSelector=metadata.name%3Dw1")).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(names(&list), ["w1"]);

    let (code, list) = get(&format!("{base}?fieldSelector=metadata.name!%3Dw1")).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(names(&list), ["w2", "w3"]);

    let (code, list) = get(&format!("{base}?fieldSelector=spec.size%3Dsmall")).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(names(&list), ["w1", "w3"]);

    let (code, body) = get(&format!("{base}?fieldSelector=spec.bogus%3Dx")).await;
    assert_status(code, &body, 400, "BadRequest");
    assert_eq!(message(&body), "field label not supported: spec.bogus");
}

// 16. A plugin fault (trap, deadline) is a 500 InternalError naming the plugin, confined to the
//     request: the server and other plugins keep serving.
#[tokio::test(flavor = "multi_thread")]
async fn plugin_faults_are_internal_errors_and_contained() {
    let s = TestServer::start_with(Backend::Embedded, &["widgets", "misbehaving"], &[]);
    let misbehavers = format!(
        "{}/apis/test.wasm-apiserver.dev/v1/namespaces/default/misbehavers",
        s.url
    );
    let obj = |name: &str, mode: &str| {
        json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
               "metadata": {"name": name, "annotations": {"misbehave": mode}}})
    };

    let (code, body) = post(&misbehavers, &obj("fine", "no")).await;
    assert_eq!(code, 201, "a well-behaved object works: {body}");

    let (code, body) = post(&misbehavers, &obj("t", "trap")).await;
    assert_status(code, &body, 500, "InternalError");
    assert!(
        message(&body).starts_with("Internal error occurred: "),
        "{body}"
    );
    assert!(message(&body).contains("misbehaving"), "{body}");
    let (code, _) = get(&format!("{misbehavers}/t")).await;
    assert_eq!(code, 404);

    create_widget(&s, "default", "after-trap", "small").await;

    let started = Instant::now();
    let (code, body) = post(&misbehavers, &obj("l", "loop")).await;
    let took = started.elapsed();
    assert_eq!(code, 500, "{body}");
    assert!(message(&body).contains("misbehaving"), "{body}");
    assert!(
        took < Duration::from_secs(5),
        "the 1 s deadline stops a loop: {took:?}"
    );

    create_widget(&s, "default", "after-loop", "small").await;
    let (code, list) = get(&misbehavers).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}

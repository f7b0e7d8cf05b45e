//! A CRD converting by webhook (`spec.conversion.strategy: Webhook`, `clientConfig.url`):
//! a real HTTPS webhook in the test process, called with a `ConversionReview` as kube calls
//! it (apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go), verified
//! against the CRD's `caBundle`; objects written and read through kubectl in either version;
//! a webhook's refusal, and a webhook whose certificate the bundle does not trust, answered
//! with kube's `conversion webhook for … failed: …`.

use crate::common;

use common::conversion_webhook as webhook;
use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// v1 `spec.replicas` ↔ v2 `spec.count`; a count of 13 is refused; an object named `slow`
/// takes 3 s.
fn convert(review: &Value) -> Value {
    let request = &review["request"];
    if request["objects"]
        .as_array()
        .is_some_and(|o| o.iter().any(|o| o["metadata"]["name"] == "slow"))
    {
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    let desired = request["desiredAPIVersion"].as_str().unwrap();
    let mut converted = Vec::new();
    for o in request["objects"].as_array().unwrap() {
        let mut o = o.clone();
        let spec = o["spec"].as_object_mut().unwrap();
        let n = spec.remove("replicas").or_else(|| spec.remove("count"));
        if n == Some(json!(13)) {
            return json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": request["uid"], "result": {"status": "Failure", "message": "thirteen is unlucky"}}});
        }
        let field = if desired.ends_with("/v2") {
            "count"
        } else {
            "replicas"
        };
        if let Some(n) = n {
            spec.insert(field.into(), n);
        }
        o["apiVersion"] = json!(desired);
        converted.push(o);
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": converted}})
}

fn crd(port: u16, ca_pem: &str) -> String {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let version = |name: &str, storage: bool, field: &str| {
        format!(
            r#"  - name: {name}
    served: true
    storage: {storage}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              {field}: {{type: integer}}
"#
        )
    };
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: dials.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: dials, singular: dial, kind: Dial}}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        url: https://127.0.0.1:{port}/convert
        caBundle: {ca}
  versions:
{}{}"#,
        version("v1", true, "replicas"),
        version("v2", false, "count"),
    )
}

fn get(s: &TestServer, version: &str, name: &str) -> Value {
    let out = s.ok(&[
        "get",
        &format!("dials.{version}.example.com"),
        name,
        "-o",
        "json",
    ]);
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_crd_converts_through_its_https_webhook() {
    let (ca, cert, key) = webhook::certificates("webhook-ca");
    let calls = Arc::new(AtomicUsize::new(0));
    let port = webhook::start(&cert, &key, convert, calls.clone());
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let crd_file = s.file("crd.yaml", &crd(port, &ca));
    s.ok(&["apply", "-f", crd_file.to_str().unwrap()]);

    // Written in v2, stored in v1 through the webhook, read back in both versions.
    let o = s.file(
        "d1.yaml",
        "apiVersion: example.com/v2\nkind: Dial\nmetadata: {name: d1, labels: {a: b}}\nspec: {count: 3}\n",
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);
    assert!(
        calls.load(Ordering::SeqCst) >= 1,
        "the webhook was not called"
    );
    let v1 = get(&s, "v1", "d1");
    assert_eq!(
        (&v1["apiVersion"], &v1["spec"]),
        (&json!("example.com/v1"), &json!({"replicas": 3}))
    );
    let v2 = get(&s, "v2", "d1");
    assert_eq!(
        (&v2["apiVersion"], &v2["spec"]),
        (&json!("example.com/v2"), &json!({"count": 3}))
    );
    assert_eq!(v2["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(v2["metadata"]["uid"], v1["metadata"]["uid"]);
    // A list in v2 is sent in one review, as kube sends it; a selector in v2 works.
    for i in 0..5 {
        let o = s.file(
            &format!("e{i}.yaml"),
            &format!("apiVersion: example.com/v1\nkind: Dial\nmetadata: {{name: e{i}, labels: {{a: b}}}}\nspec: {{replicas: {i}}}\n"),
        );
        s.ok(&["create", "-f", o.to_str().unwrap()]);
    }
    let before = calls.load(Ordering::SeqCst);
    let list: Value =
        serde_json::from_str(&s.ok(&["get", "dials.v2.example.com", "-o", "json"])).unwrap();
    assert_eq!(list["items"][0]["spec"], json!({"count": 3}), "{list}");
    assert_eq!(list["items"][5]["spec"], json!({"count": 4}), "{list}");
    assert_eq!(
        calls.load(Ordering::SeqCst) - before,
        1,
        "one review for the list"
    );
    let selected = s.ok(&["get", "dials.v2.example.com", "-l", "a=b", "-o", "name"]);
    assert_eq!(selected.lines().count(), 6, "{selected}");

    // The webhook's refusal is the answer's message, as kube words it.
    let bad = s.file(
        "d13.yaml",
        "apiVersion: example.com/v2\nkind: Dial\nmetadata: {name: d13}\nspec: {count: 13}\n",
    );
    let err = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    assert!(
        err.contains(
            "conversion webhook for example.com/v2, Kind=Dial failed: thirteen is unlucky"
        ),
        "{err}"
    );

    // A bundle that does not trust the webhook's certificate: the call fails, named.
    let (other_ca, _, _) = webhook::certificates("another-ca");
    let crd_file = s.file("crd.yaml", &crd(port, &other_ca));
    s.ok(&["apply", "-f", crd_file.to_str().unwrap()]);
    let o = s.file(
        "d2.yaml",
        "apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: d2}\nspec: {replicas: 2}\n",
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);
    let err = s.fails(&["get", "dials.v2.example.com", "d2", "-o", "json"]);
    let want = format!(
        "conversion webhook for example.com/v1, Kind=Dial failed: Post \"https://127.0.0.1:{port}/convert\""
    );
    assert!(
        err.contains(&format!(
            "{want}: client error (Connect): invalid peer certificate: UnknownIssuer"
        )),
        "{err}"
    );
    // The server still serves the resource in its storage version.
    assert_eq!(get(&s, "v1", "d2")["spec"], json!({"replicas": 2}));
}

/// A selector in a version other than the storage version converts each object to match it;
/// a slow webhook then delays that request only: the watch cache's lock is not held while it
/// converts, so a write and a consistent read of the resource go on (before, they waited for
/// the whole list).
#[test]
fn a_slow_webhook_under_a_selector_does_not_stall_the_resource() {
    let (ca, cert, key) = webhook::certificates("webhook-ca");
    let port = webhook::start(&cert, &key, convert, Arc::new(AtomicUsize::new(0)));
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let crd_file = s.file("crd.yaml", &crd(port, &ca));
    s.ok(&["apply", "-f", crd_file.to_str().unwrap()]);
    let o = s.file(
        "slow.yaml",
        "apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: slow, labels: {a: b}}\nspec: {replicas: 1}\n",
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);
    // From the watch cache (resourceVersion=0), selected in v2.
    let path =
        "/apis/example.com/v2/namespaces/default/dials?labelSelector=a%3Db&resourceVersion=0";
    let mut slow = s.kubectl_cmd(&["get", "--raw", path]);
    let list = std::thread::spawn(move || slow.output().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let started = std::time::Instant::now();
    let o = s.file(
        "fast.yaml",
        "apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: fast}\nspec: {replicas: 2}\n",
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);
    assert_eq!(get(&s, "v1", "fast")["spec"], json!({"replicas": 2}));
    let took = started.elapsed();
    let out = list.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["items"][0]["spec"], json!({"count": 1}), "{listed}");
    assert!(
        took < std::time::Duration::from_millis(2000),
        "a write and a read waited {took:?} for the slow list"
    );
}

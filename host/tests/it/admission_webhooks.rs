//! Admission webhooks by URL (`ValidatingWebhookConfiguration`, `MutatingWebhookConfiguration`):
//! real HTTPS webhooks in the test process answering `AdmissionReview` v1 as kube's webhook
//! dispatchers call them (`k8s.io/apiserver/pkg/admission/plugin/webhook/{mutating,validating}/
//! dispatcher.go`), configured and driven through kubectl over TLS: a mutating webhook's JSON
//! Patch and warning, a validating webhook's denial with its Status, `auditAnnotations` and the
//! mutation annotations in the audit log, a dry run, `failurePolicy` for a webhook that cannot
//! be reached or does not answer in `timeoutSeconds`, `matchConditions`, `reinvocationPolicy:
//! IfNeeded`, kube's validation of the objects, and kube's webhook metrics; on both stores.

use crate::common;

use base64::Engine;
use common::conversion_webhook as webhook;
use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn response(review: &Value, body: Value) -> Value {
    let mut r = body;
    r["uid"] = review["request"]["uid"].clone();
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r})
}

fn patch(ops: Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(ops.to_string())
}

/// Adds `team: platform` to a ConfigMap without a team label, with a warning; a ConfigMap
/// named `slow` is answered after 3 s; one named `broken` gets a patch replacing its name.
fn mutate(review: &Value) -> Value {
    let object = &review["request"]["object"];
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    if name == "slow" {
        std::thread::sleep(Duration::from_secs(3));
    }
    if name == "broken" {
        let ops = json!([{"op": "replace", "path": "/metadata/name", "value": "other"}]);
        return response(
            review,
            json!({"allowed": true, "patchType": "JSONPatch", "patch": patch(ops)}),
        );
    }
    if object["metadata"]["labels"]["team"].is_string() {
        return response(review, json!({"allowed": true}));
    }
    let ops = if object["metadata"]["labels"].is_object() {
        json!([{"op": "add", "path": "/metadata/labels/team", "value": "platform"}])
    } else {
        json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "platform"}}])
    };
    response(
        review,
        json!({"allowed": true, "patchType": "JSONPatch", "patch": patch(ops),
               "warnings": ["team defaulted to platform"]}),
    )
}

/// Copies the `team` label to `team-copy` (it runs before `mutate`, by configuration name,
/// so it finds the label only when called again).
fn copy_team(review: &Value) -> Value {
    let labels = &review["request"]["object"]["metadata"]["labels"];
    match (labels["team"].as_str(), labels["team-copy"].as_str()) {
        (Some(t), None) => {
            let ops = json!([{"op": "add", "path": "/metadata/labels/team-copy", "value": t}]);
            response(
                review,
                json!({"allowed": true, "patchType": "JSONPatch", "patch": patch(ops)}),
            )
        }
        _ => response(review, json!({"allowed": true})),
    }
}

/// Refuses a ConfigMap with a `forbidden` key (403, its own reason and message), and annotates
/// the audit event of every request it sees; a ConfigMap named `bad-uid` is answered for
/// another request.
fn validate(review: &Value) -> Value {
    let request = &review["request"];
    let name = request["object"]["metadata"]["name"].as_str().unwrap_or("");
    if name == "bad-uid" {
        let mut r = response(review, json!({"allowed": true}));
        r["response"]["uid"] = json!("someone-else");
        return r;
    }
    // What the webhook saw, for the test to read back: dryRun, options, the request kind.
    let seen = format!(
        "{}/{}/{}",
        request["dryRun"], request["options"]["kind"], request["requestKind"]["kind"]
    );
    if request["object"]["data"]["forbidden"].is_string() {
        return response(
            review,
            json!({"allowed": false, "auditAnnotations": {"seen": seen},
                   "result": {"code": 403, "reason": "Forbidden", "message": "the forbidden key is forbidden"}}),
        );
    }
    response(
        review,
        json!({"allowed": true, "auditAnnotations": {"seen": seen}}),
    )
}

fn configurations(ca: &str, mutate_port: u16, copy_port: u16, validate_port: u16) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: b-team}}
webhooks:
- name: team.example.com
  clientConfig: {{url: "https://127.0.0.1:{mutate_port}/mutate", caBundle: "{ca}"}}
  rules:
  - {{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 1
  matchConditions:
  - {{name: not-skipped, expression: "!has(object.metadata.annotations) || !('skip' in object.metadata.annotations)"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: a-copy}}
webhooks:
- name: copy.example.com
  clientConfig: {{url: "https://127.0.0.1:{copy_port}/copy", caBundle: "{ca}"}}
  rules:
  - {{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}
  sideEffects: None
  admissionReviewVersions: [v1]
  reinvocationPolicy: IfNeeded
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: checks}}
webhooks:
- name: deny.example.com
  clientConfig: {{url: "https://127.0.0.1:{validate_port}/validate", caBundle: "{ca}"}}
  rules:
  - {{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}
  namespaceSelector: {{matchLabels: {{checked: "yes"}}}}
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v2, v1, v1beta1]
"#
    )
}

/// A webhook that cannot be reached, with the given failure policy.
fn unreachable(failure_policy: &str, port: u16) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: down}}
webhooks:
- name: down.example.com
  clientConfig: {{url: "https://127.0.0.1:{port}/down"}}
  rules:
  - {{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}
  objectSelector: {{matchLabels: {{reach: down}}}}
  sideEffects: None
  failurePolicy: {failure_policy}
  admissionReviewVersions: [v1]
"#
    )
}

fn get(s: &TestServer, ns: &str, name: &str) -> Value {
    serde_json::from_str(&s.ok(&["get", "configmap", name, "-n", ns, "-o", "json"])).unwrap()
}

#[test]
fn admission_webhooks_admit_as_kube_calls_them_embedded() {
    admit_as_kube(Backend::Embedded);
}

#[test]
fn admission_webhooks_admit_as_kube_calls_them_etcd() {
    admit_as_kube(Backend::Etcd);
}

fn admit_as_kube(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let audit_policy = dir.path().join("audit-policy.yaml");
    std::fs::write(
        &audit_policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let audit_log = dir.path().join("audit.log");
    let (ca, cert, key) = webhook::certificates("admission-webhook-ca");
    let calls = Arc::new(AtomicUsize::new(0));
    let mutate_port = webhook::start(&cert, &key, mutate, calls.clone());
    let copy_port = webhook::start(&cert, &key, copy_team, Arc::new(AtomicUsize::new(0)));
    let validate_port = webhook::start(&cert, &key, validate, Arc::new(AtomicUsize::new(0)));
    let s = TestServer::start_with(
        backend,
        &["namespaces", "configmaps"],
        &[
            "--audit-policy-file",
            audit_policy.to_str().unwrap(),
            "--audit-log-path",
            audit_log.to_str().unwrap(),
        ],
    );
    let ns = s.file(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: checked, labels: {checked: \"yes\"}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: unchecked}\n",
    );
    s.ok(&["apply", "-f", ns.to_str().unwrap()]);
    let config = s.file(
        "webhooks.yaml",
        &configurations(&ca, mutate_port, copy_port, validate_port),
    );
    s.ok(&["apply", "-f", config.to_str().unwrap()]);
    // A MutatingAdmissionPolicy (IfNeeded) runs before the webhooks: it sees the team only
    // when the mutating stage runs again because a webhook changed the object.
    let policy = s.file("copy-policy.yaml", common::COPY_TEAM_POLICY);
    s.ok(&["apply", "-f", policy.to_str().unwrap()]);
    let listed = s.ok(&["get", "mutatingwebhookconfigurations"]);
    assert!(
        listed.contains("WEBHOOKS") && listed.contains("b-team"),
        "{listed}"
    );
    // Defaults as kube's.
    let stored: Value = serde_json::from_str(&s.ok(&[
        "get",
        "mutatingwebhookconfiguration",
        "b-team",
        "-o",
        "json",
    ]))
    .unwrap();
    let w = &stored["webhooks"][0];
    assert_eq!(
        (
            &w["failurePolicy"],
            &w["matchPolicy"],
            &w["reinvocationPolicy"]
        ),
        (&json!("Fail"), &json!("Equivalent"), &json!("Never")),
        "{stored}"
    );

    // Mutated by JSON Patch, with the webhook's warning; `copy.example.com` (IfNeeded) ran
    // first, found no team, and was called again once the team was set.
    let (ok, _, err) = s.kubectl(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "checked",
        "--from-literal=k=v",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("Warning: team defaulted to platform"), "{err}");
    let cm = get(&s, "checked", "settings");
    assert_eq!(cm["metadata"]["labels"]["team"], "platform", "{cm}");
    assert_eq!(
        cm["metadata"]["labels"]["team-copy"], "platform",
        "reinvoked: {cm}"
    );
    assert_eq!(
        cm["metadata"]["labels"]["team-policy-copy"], "platform",
        "the policy reinvoked after the webhook: {cm}"
    );

    // A matchCondition that is false skips the webhook.
    let skipped = s.file(
        "skipped.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped, namespace: unchecked, annotations: {skip: \"yes\"}}\n",
    );
    s.ok(&["create", "-f", skipped.to_str().unwrap()]);
    assert!(get(&s, "unchecked", "skipped")["metadata"]["labels"].is_null());

    // The validating webhook's denial, as kube answers it: its code, reason and message.
    let refused = s.file(
        "refused.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: refused, namespace: checked}\ndata: {forbidden: \"1\"}\n",
    );
    let err = s.fails(&["create", "-f", refused.to_str().unwrap()]);
    assert!(
        err.contains("Error from server (Forbidden)")
            && err.contains(
                "admission webhook \"deny.example.com\" denied the request: the forbidden key is forbidden"
            ),
        "{err}"
    );
    // Outside the namespace selector it is not called.
    s.ok(&[
        "create",
        "configmap",
        "allowed",
        "-n",
        "unchecked",
        "--from-literal=forbidden=1",
    ]);
    // A dry run reaches it (sideEffects: NoneOnDryRun) and is refused the same way.
    let err = s.fails(&[
        "create",
        "configmap",
        "dry",
        "-n",
        "checked",
        "--from-literal=forbidden=1",
        "--dry-run=server",
    ]);
    assert!(err.contains("denied the request"), "{err}");
    // An answer for another request is a failed call (failurePolicy: Fail): 500, kube's text.
    let err = s.fails(&["create", "configmap", "bad-uid", "-n", "checked"]);
    assert!(
        err.contains("failed calling webhook \"deny.example.com\": received invalid webhook response: expected response.uid="),
        "{err}"
    );
    // A webhook that does not answer within timeoutSeconds (1 s).
    let err = s.fails(&["create", "configmap", "slow", "-n", "unchecked"]);
    assert!(
        err.contains(&format!("failed calling webhook \"team.example.com\": failed to call webhook: Post \"https://127.0.0.1:{mutate_port}/mutate?timeout=1s\": context deadline exceeded")),
        "{err}"
    );
    // A patch that renames the object is refused.
    let err = s.fails(&["create", "configmap", "broken", "-n", "unchecked"]);
    assert!(
        err.contains("the mutation changes apiVersion, kind, name or namespace"),
        "{err}"
    );

    // A webhook that cannot be reached: Ignore admits, Fail refuses, only what it matches.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let down = s.file("down.yaml", &unreachable("Ignore", closed_port));
    s.ok(&["apply", "-f", down.to_str().unwrap()]);
    s.ok(&["create", "configmap", "reach-ignored", "-n", "unchecked"]);
    let f = s.file(
        "reach.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: reach, namespace: unchecked, labels: {reach: down}}\n",
    );
    s.ok(&["create", "-f", f.to_str().unwrap()]);
    let down = s.file("down.yaml", &unreachable("Fail", closed_port));
    s.ok(&["apply", "-f", down.to_str().unwrap()]);
    s.ok(&["delete", "configmap", "reach", "-n", "unchecked"]);
    let err = s.fails(&["create", "-f", f.to_str().unwrap()]);
    assert!(
        err.contains(&format!(
            "Internal error occurred: failed calling webhook \"down.example.com\": failed to call webhook: Post \"https://127.0.0.1:{closed_port}/down?timeout=10s\""
        )),
        "{err}"
    );
    s.ok(&["create", "configmap", "not-matched", "-n", "unchecked"]);
    s.ok(&["delete", "validatingwebhookconfiguration", "down"]);
    s.ok(&["create", "-f", f.to_str().unwrap()]);

    // kube's validation of the objects.
    let bad = s.file(
        "bad.yaml",
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: bad}
webhooks:
- name: bad.example.com
  clientConfig: {service: {namespace: default, name: hook}}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  admissionReviewVersions: [v1]
- name: worse.example.com
  clientConfig: {url: "http://127.0.0.1/x"}
  sideEffects: Some
  timeoutSeconds: 40
  admissionReviewVersions: [v1]
"#,
    );
    let err = s.fails(&["apply", "-f", bad.to_str().unwrap()]);
    for want in [
        "webhooks[0].clientConfig.service: Forbidden: this server has no Services",
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[1].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme",
        "webhooks[1].sideEffects: Unsupported value: \"Some\"",
        "webhooks[1].timeoutSeconds: Invalid value: 40: the timeout value must be between 1 and 30 seconds",
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }

    // kube's metrics.
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    for want in [
        "apiserver_admission_webhook_request_total{code=\"403\",name=\"deny.example.com\",operation=\"CREATE\",rejected=\"true\",type=\"validating\"}",
        "apiserver_admission_webhook_request_total{code=\"200\",name=\"deny.example.com\",operation=\"CREATE\",rejected=\"false\",type=\"validating\"}",
        "apiserver_admission_webhook_rejection_count{error_type=\"no_error\",name=\"deny.example.com\",operation=\"CREATE\",rejection_code=\"403\",type=\"validating\"}",
        "apiserver_admission_webhook_fail_open_count{name=\"down.example.com\",type=\"validating\"}",
        "apiserver_admission_webhook_admission_duration_seconds_count{name=\"team.example.com\",operation=\"CREATE\",rejected=\"false\",type=\"admit\"}",
    ] {
        assert!(metrics.contains(want), "{want}\n{metrics}");
    }

    // The audit event of the first create: the validating webhook's own annotation (what it
    // saw), and one mutation annotation per mutating call (round 1: the reinvocation).
    let mut event = Value::Null;
    s.eventually(Duration::from_secs(10), "the create's audit event", || {
        let text = std::fs::read_to_string(&audit_log).unwrap_or_default();
        event = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| {
                e["objectRef"]["resource"] == "configmaps"
                    && e["objectRef"]["namespace"] == "checked"
                    && e["responseStatus"]["code"] == 201
                    && e["verb"] == "create"
                    && e["stage"] == "ResponseComplete"
            })
            .unwrap_or(Value::Null);
        !event.is_null()
    });
    let annotations = &event["annotations"];
    assert_eq!(
        annotations["deny.example.com/seen"], "false/\"CreateOptions\"/\"ConfigMap\"",
        "{event}"
    );
    let mutation: Value = serde_json::from_str(
        annotations["mutation.webhook.admission.k8s.io/round_0_index_1"]
            .as_str()
            .unwrap_or("null"),
    )
    .unwrap();
    assert_eq!(
        mutation,
        json!({"configuration": "b-team", "webhook": "team.example.com", "mutated": true}),
        "{event}"
    );
    assert!(
        annotations["mutation.webhook.admission.k8s.io/round_1_index_0"].is_string(),
        "{event}"
    );
    // The webhook that could not be reached under `Ignore`: named in the request's audit
    // event, indexed among the validating webhooks called (only it).
    let mut failed_open = false;
    s.eventually(
        Duration::from_secs(10),
        "the failed-open annotation",
        || {
            let text = std::fs::read_to_string(&audit_log).unwrap_or_default();
            failed_open = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|e| {
                    e["stage"] == "ResponseComplete"
                        && e["annotations"]
                            ["failed-open.validating.webhook.admission.k8s.io/round_0_index_0"]
                            == "down.example.com"
                });
            failed_open
        },
    );
    assert!(calls.load(Ordering::SeqCst) > 0);
}

/// The official Python client (`tests/python/admission_webhooks.py`): both configurations
/// created and read back with typed models, a mutated ConfigMap and a denial as kube answers.
#[test]
fn the_python_client_configures_webhooks_and_sees_their_answers() {
    let (ca, cert, key) = webhook::certificates("python-webhook-ca");
    let calls = Arc::new(AtomicUsize::new(0));
    let mutate_port = webhook::start(&cert, &key, mutate, calls.clone());
    let validate_port = webhook::start(&cert, &key, validate, calls.clone());
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    s.create_default_namespace();
    common::run_python_client_with(
        "admission_webhooks.py",
        &[
            &s.url,
            &format!("https://127.0.0.1:{mutate_port}/mutate"),
            &format!("https://127.0.0.1:{validate_port}/validate"),
            &base64::engine::general_purpose::STANDARD.encode(&ca),
        ],
    );
    assert!(calls.load(Ordering::SeqCst) >= 3);
}

//! Server-side apply and field ownership end to end, on the embedded store and on etcd: real
//! `kubectl apply --server-side` by two managers on a widget and on a pod (conflict, then
//! `--force-conflicts` takes the field), `kubectl get --show-managed-fields` showing the entries
//! kube shows for the same steps, fields removed when their only applier stops sending them,
//! update tracking by `fieldManager` and User-Agent, kubectl's upgrade from client-side apply,
//! the status subresource, create-on-apply, and the bad requests kube refuses — each step named
//! after the upstream test it follows (`test/integration/apiserver/apply/apply_test.go`).
//! The official Python client's dynamic `server_side_apply` sees a conflict as kube's 409.

use crate::common;

use common::http::{client, default_namespace, send};
use common::server::{Backend, TestServer};
use serde_json::{json, Value};

fn managed_fields(s: &TestServer, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["get"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", "json", "--show-managed-fields"]);
    let obj: Value = serde_json::from_str(&s.ok(&a)).unwrap();
    obj["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn entry<'a>(entries: &'a [Value], manager: &str, operation: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
        .unwrap_or_else(|| panic!("no {operation} entry of {manager} in {entries:#?}"))
}

fn images_of(s: &TestServer) -> String {
    s.ok(&[
        "get",
        "pod",
        "web",
        "-o",
        "jsonpath={.spec.containers[*].image}",
    ])
}

const WIDGET_ALICE: &str = "apiVersion: example.dev/v1
kind: Widget
metadata:
  name: ssa
spec:
  size: medium
  replicas: 3
";

const WIDGET_BOB: &str = "apiVersion: example.dev/v1
kind: Widget
metadata:
  name: ssa
spec:
  replicas: 5
";

const POD_ALICE: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
    tier: front
spec:
  containers:
  - name: web
    image: nginx:1.27
    ports:
    - containerPort: 80
  - name: sidecar
    image: busybox:1.36
";

const POD_BOB: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:1.28
";

fn kubectl_steps(backend: Backend) {
    let s = TestServer::start(backend);
    let apply = |manager: &str, file: &str, content: &str, force: bool| {
        let path = s.file(file, content);
        let mut args = vec![
            "apply".to_string(),
            "--server-side".into(),
            format!("--field-manager={manager}"),
            "-f".into(),
            path.to_str().unwrap().into(),
        ];
        if force {
            args.push("--force-conflicts".into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        s.kubectl(&args)
    };

    // TestApplyAlsoCreates / TestApplyUpdateApplyConflictForced, on a widget.
    let (ok, out, err) = apply("alice", "a.yaml", WIDGET_ALICE, false);
    assert!(ok && out.contains("serverside-applied"), "{out}{err}");
    let entries = managed_fields(&s, &["wd", "ssa"]);
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let alice = entry(&entries, "alice", "Apply");
    assert_eq!(alice["apiVersion"], "example.dev/v1");
    assert_eq!(alice["fieldsType"], "FieldsV1");
    assert_eq!(
        alice["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}, "f:size": {}}})
    );
    assert!(alice["time"].as_str().is_some_and(|t| t.ends_with('Z')));

    let (ok, _, err) = apply("bob", "b.yaml", WIDGET_BOB, false);
    assert!(!ok);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "alice": .spec.replicas"#),
        "{err}"
    );
    assert_eq!(
        s.ok(&["get", "wd", "ssa", "-o", "jsonpath={.spec.replicas}"]),
        "3"
    );
    let (ok, _, err) = apply("bob", "b.yaml", WIDGET_BOB, true);
    assert!(ok, "{err}");
    assert_eq!(
        s.ok(&["get", "wd", "ssa", "-o", "jsonpath={.spec.replicas}"]),
        "5"
    );
    let entries = managed_fields(&s, &["wd", "ssa"]);
    assert_eq!(
        entry(&entries, "alice", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:size": {}}})
    );
    assert_eq!(
        entry(&entries, "bob", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );

    // TestApplyRemovesEmptyManagedFields' sibling: a field its only applier stops sending is
    // removed; one another manager owns stays.
    let (ok, _, err) = apply(
        "alice",
        "a.yaml",
        &WIDGET_ALICE.replace("replicas: 3", "minReplicas: 1"),
        false,
    );
    assert!(ok, "{err}");
    assert_eq!(
        s.ok(&["get", "wd", "ssa", "-o", "jsonpath={.spec.minReplicas}"]),
        "1"
    );
    let (ok, _, err) = apply(
        "alice",
        "a.yaml",
        &WIDGET_ALICE.replace("  replicas: 3\n", ""),
        false,
    );
    assert!(ok, "{err}");
    let spec: Value =
        serde_json::from_str(&s.ok(&["get", "wd", "ssa", "-o", "jsonpath={.spec}"])).unwrap();
    assert_eq!(spec, json!({"size": "medium", "replicas": 5}));

    // Updates are tracked under kubectl's manager for the verb (TestApplyManagedFields).
    s.ok(&["label", "wd", "ssa", "team=x"]);
    let entries = managed_fields(&s, &["wd", "ssa"]);
    let label = entry(&entries, "kubectl-label", "Update");
    assert_eq!(label["apiVersion"], "example.dev/v1");
    assert_eq!(
        label["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:team": {}}}})
    );
    // Apply entries come before update entries (sortEncodedManagedFields).
    assert_eq!(entries[0]["operation"], "Apply");
    assert_eq!(entries.last().unwrap()["manager"], "kubectl-label");

    // On a pod: containers merge by name, ports by containerPort+protocol.
    let (ok, _, err) = apply("alice", "pa.yaml", POD_ALICE, false);
    assert!(ok, "{err}");
    let (ok, _, err) = apply("bob", "pb.yaml", POD_BOB, false);
    assert!(!ok);
    assert!(
        err.contains(r#"conflict with "alice": .spec.containers[name="web"].image"#),
        "{err}"
    );
    let (ok, _, err) = apply("bob", "pb.yaml", POD_BOB, true);
    assert!(ok, "{err}");
    assert_eq!(images_of(&s), "nginx:1.28 busybox:1.36");
    let entries = managed_fields(&s, &["pod", "web"]);
    let alice = &entry(&entries, "alice", "Apply")["fieldsV1"]["f:spec"]["f:containers"];
    assert_eq!(
        alice[r#"k:{"name":"web"}"#],
        json!({".": {}, "f:name": {}, "f:ports": {
            r#"k:{"containerPort":80,"protocol":"TCP"}"#: {".": {}, "f:containerPort": {}}}})
    );
    let bob = &entry(&entries, "bob", "Apply")["fieldsV1"]["f:spec"]["f:containers"];
    assert_eq!(
        bob[r#"k:{"name":"web"}"#],
        json!({".": {}, "f:image": {}, "f:name": {}})
    );
    // Alice stops applying a label: it goes (pods' containers may not be removed by any
    // update, so the removal is shown on metadata).
    let (ok, _, err) = apply(
        "alice",
        "pa.yaml",
        &POD_ALICE
            .replace("    tier: front\n", "")
            .replace("    image: nginx:1.27\n", ""),
        false,
    );
    assert!(ok, "{err}");
    assert_eq!(
        s.ok(&["get", "pod", "web", "-o", "jsonpath={.metadata.labels}"]),
        r#"{"app":"web"}"#
    );
    assert_eq!(images_of(&s), "nginx:1.28 busybox:1.36");

    // kubectl's upgrade from client-side apply (TestUpgradeClientSideToServerSideApply): the
    // fields client-side apply set are taken over without a conflict.
    let csa = s.file("csa.yaml", &WIDGET_ALICE.replace("name: ssa", "name: csa"));
    s.ok(&["apply", "-f", csa.to_str().unwrap()]);
    let entries = managed_fields(&s, &["wd", "csa"]);
    entry(&entries, "kubectl-client-side-apply", "Update");
    let csa = s.file(
        "csa.yaml",
        &WIDGET_ALICE
            .replace("name: ssa", "name: csa")
            .replace("replicas: 3", "replicas: 4"),
    );
    let (ok, _, err) = s.kubectl(&["apply", "--server-side", "-f", csa.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(
        s.ok(&["get", "wd", "csa", "-o", "jsonpath={.spec.replicas}"]),
        "4"
    );
    let entries = managed_fields(&s, &["wd", "csa"]);
    assert_eq!(
        entry(&entries, "kubectl", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}, "f:size": {}}})
    );
}

#[test]
fn kubectl_server_side_apply_embedded() {
    kubectl_steps(Backend::Embedded);
}

#[test]
fn kubectl_server_side_apply_etcd() {
    kubectl_steps(Backend::Etcd);
}

async fn patch(url: &str, ct: &str, body: &str, agent: &str) -> (u16, Value) {
    send(
        client()
            .patch(url)
            .header("content-type", ct)
            .header("user-agent", agent)
            .body(body.to_string()),
    )
    .await
}

fn widget_url(s: &TestServer, name: &str) -> String {
    format!(
        "{}/apis/example.dev/v1/namespaces/default/widgets/{name}",
        s.url
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_requests_as_kube_answers_them() {
    let s = TestServer::start(Backend::Embedded);
    default_namespace(&s.url).await;
    let apply = "application/apply-patch+yaml";
    let w = widget_url(&s, "h");
    let config =
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: h}\nspec: {size: small}\n";

    // ValidatePatchOptions: fieldManager is required for apply; force only with apply.
    let (code, body) = patch(&w, apply, config, "t").await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#
    );
    let (code, body) = patch(
        &format!("{w}?force=true"),
        "application/merge-patch+json",
        "{}",
        "t",
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("force: Forbidden: may not be specified for non-apply patch"));
    let long = "m".repeat(129);
    let (code, body) = patch(&format!("{w}?fieldManager={long}"), apply, config, "t").await;
    assert_eq!(code, 422, "{body}");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("fieldManager: Too long"));

    // Malformed YAML: 400 naming the line.
    let (code, body) = patch(
        &format!("{w}?fieldManager=a"),
        apply,
        "apiVersion: v1\nkind: [\n",
        "t",
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert!(body["message"].as_str().unwrap().contains("line"), "{body}");

    // A configuration the schema cannot type (a repeated list-map key): 400 naming it.
    let (code, body) = patch(
        &format!(
            "{}/api/v1/namespaces/default/pods/dup?fieldManager=a",
            s.url
        ),
        apply,
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dup"},
            "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]}}"#,
        "t",
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        r#"failed to create typed patch object (/dup; /v1, Kind=Pod): .spec.containers: duplicate entries for key [name="a"]"#
    );

    // Create on apply (TestApplyAlsoCreates): 201.
    let (code, body) = patch(&format!("{w}?fieldManager=a"), apply, config, "t").await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["metadata"]["managedFields"][0]["manager"], "a");
    assert_eq!(body["metadata"]["managedFields"][0]["operation"], "Apply");

    // A name that differs from the URL's: 400 (checkName).
    let (code, body) = patch(
        &format!("{w}?fieldManager=a"),
        apply,
        &config.replace("name: h", "name: other"),
        "t",
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "the name of the object (other) does not match the name on the URL (h)"
    );
    // managedFields in an applied configuration: 400.
    let (code, body) = patch(
        &format!("{w}?fieldManager=a"),
        apply,
        &config.replace("{name: h}", "{name: h, managedFields: [{manager: x}]}"),
        "t",
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["message"], "metadata.managedFields must be nil");
    // Another kind: 400.
    let (code, body) = patch(
        &format!("{w}?fieldManager=a"),
        apply,
        &config.replace("kind: Widget", "kind: Gadget"),
        "t",
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "invalid object type: example.dev/v1, Kind=Gadget"
    );

    // A conflict as kube's Status (TestApplyUpdateApplyConflictForced).
    let (code, body) = patch(
        &format!("{w}?fieldManager=b"),
        apply,
        &config.replace("size: small", "size: large"),
        "t",
    )
    .await;
    assert_eq!(code, 409, "{body}");
    assert_eq!(body["reason"], "Conflict");
    assert_eq!(
        body["message"],
        r#"Apply failed with 1 conflict: conflict with "a": .spec.size"#
    );
    assert_eq!(
        body["details"]["causes"],
        json!([{"type": "FieldManagerConflict", "message": "conflict with \"a\"", "field": ".spec.size"}])
    );

    // Updates: the manager is fieldManager, else the User-Agent's prefix (managerOrUserAgent).
    let (code, body) = patch(
        &w,
        "application/merge-patch+json",
        r#"{"spec": {"replicas": 2}}"#,
        "my-agent/1.2 (linux)",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let entries = body["metadata"]["managedFields"].as_array().unwrap();
    let agent = entry(entries, "my-agent", "Update");
    assert_eq!(agent["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    // Now a's apply changing replicas conflicts with the updater, named with its version.
    let (code, body) = patch(
        &format!("{w}?fieldManager=a"),
        apply,
        &config.replace("{size: small}", "{size: small, replicas: 1}"),
        "t",
    )
    .await;
    assert_eq!(code, 409, "{body}");
    assert_eq!(
        body["message"],
        r#"Apply failed with 1 conflict: conflict with "my-agent" using example.dev/v1: .spec.replicas"#
    );

    // Status apply (TestApplyStatus): its own entry with the subresource; spec is not owned
    // through /status, nor status through the object.
    let (code, body) = patch(
        &format!("{w}/status?fieldManager=ctl"),
        apply,
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: h}\nstatus: {phase: Ready}\n",
        "t",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["status"]["phase"], "Ready");
    let entries = body["metadata"]["managedFields"].as_array().unwrap();
    let status = entries
        .iter()
        .find(|e| e["manager"] == "ctl")
        .expect("status entry");
    assert_eq!(status["operation"], "Apply");
    assert_eq!(status["subresource"], "status");
    assert_eq!(status["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
    // A status update (PUT /status) takes the field, recorded with its subresource.
    let mut obj = body.clone();
    obj["status"]["phase"] = json!("Failed");
    let (code, body) = send(
        client()
            .put(format!("{w}/status"))
            .header("user-agent", "status-writer/1")
            .json(&obj),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let entries = body["metadata"]["managedFields"].as_array().unwrap();
    let writer = entry(entries, "status-writer", "Update");
    assert_eq!(writer["subresource"], "status");
    assert_eq!(writer["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
    assert!(
        entries.iter().all(|e| e["manager"] != "ctl"),
        "{entries:#?}"
    );

    // POST tracks its creator, with what the strategy defaulted (replicas from size).
    let (code, body) = send(
        client()
            .post(format!(
                "{}/apis/example.dev/v1/namespaces/default/widgets",
                s.url
            ))
            .header("user-agent", "creator/0.1")
            .json(&json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                          "metadata": {"name": "p"}, "spec": {"size": "large"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let entries = body["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(
        entry(entries, "creator", "Update")["fieldsV1"],
        json!({"f:spec": {".": {}, "f:replicas": {}, "f:size": {}}})
    );
    // A PUT of what was read (managedFields included) keeps the entries and adds its own.
    let mut obj = body.clone();
    obj["spec"]["minReplicas"] = json!(1);
    let (code, body) = send(
        client()
            .put(widget_url(&s, "p"))
            .header("user-agent", "putter")
            .json(&obj),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let entries = body["metadata"]["managedFields"].as_array().unwrap();
    entry(entries, "creator", "Update");
    assert_eq!(
        entry(entries, "putter", "Update")["fieldsV1"],
        json!({"f:spec": {"f:minReplicas": {}}})
    );
    // `managedFields: []` resets them (TestResetManagedFieldsEmptyList): with nothing changed
    // nobody owns anything, and the object is no longer tracked until an apply.
    obj = body.clone();
    obj["metadata"]["managedFields"] = json!([]);
    let (code, body) = send(
        client()
            .put(widget_url(&s, "p"))
            .header("user-agent", "resetter")
            .json(&obj),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert!(body["metadata"].get("managedFields").is_none(), "{body}");
}

fn cm_url(s: &TestServer, name: &str) -> String {
    format!("{}/api/v1/namespaces/default/configmaps/{name}", s.url)
}

/// ConfigMap steps of kube's `apply_test.go`, each named after the test it ports.
async fn configmap_steps(backend: Backend) {
    let s = TestServer::start(backend);
    default_namespace(&s.url).await;
    let apply = "application/apply-patch+yaml";
    let merge = "application/merge-patch+json";
    let config = r#"{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
        "data": {"key": "value"}}"#;
    let url = cm_url(&s, "test-cm");

    // TestApplyManagedFields: an updater's merge patches join one entry, and the field they
    // changed leaves the applier.
    let (code, created) = patch(
        &format!("{url}?fieldManager=apply_test"),
        apply,
        config,
        "t",
    )
    .await;
    assert_eq!(code, 201, "{created}");
    // TestNoOpApplyWithEmptyMap / TestNoopChangeCreationTime: applying the same configuration
    // again writes nothing.
    let (code, again) = patch(
        &format!("{url}?fieldManager=apply_test"),
        apply,
        config,
        "t",
    )
    .await;
    assert_eq!(code, 200, "{again}");
    assert_eq!(again, created);
    let (code, _) = patch(
        &format!("{url}?fieldManager=updater"),
        merge,
        r#"{"data":{"new-key": "value"}}"#,
        "t",
    )
    .await;
    assert_eq!(code, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (code, body) = patch(
        &format!("{url}?fieldManager=updater"),
        merge,
        r#"{"data":{"key": "new value"}}"#,
        "t",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let entries = body["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{entries:#?}");
    assert_eq!(
        (
            &entries[0]["manager"],
            &entries[0]["operation"],
            &entries[0]["apiVersion"],
            &entries[0]["fieldsType"]
        ),
        (
            &json!("apply_test"),
            &json!("Apply"),
            &json!("v1"),
            &json!("FieldsV1")
        )
    );
    assert_eq!(
        entries[0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:test-label": {}}}})
    );
    assert_eq!(
        (&entries[1]["manager"], &entries[1]["operation"]),
        (&json!("updater"), &json!("Update"))
    );
    assert_eq!(
        entries[1]["fieldsV1"],
        json!({"f:data": {"f:key": {}, "f:new-key": {}}})
    );
    assert_ne!(entries[0]["time"], entries[1]["time"]);
    assert_eq!(
        body["data"],
        json!({"key": "new value", "new-key": "value"})
    );

    // TestNoOpUpdateSameResourceVersion: a PUT of what was read changes nothing.
    let (code, put) = send(client().put(&url).json(&body)).await;
    assert_eq!(code, 200, "{put}");
    assert_eq!(
        put["metadata"]["resourceVersion"],
        body["metadata"]["resourceVersion"]
    );

    // TestClearManagedFieldsWithMergePatch: `[{}]` clears them.
    let (code, body) = patch(&url, merge, r#"{"metadata":{"managedFields": [{}]}}"#, "t").await;
    assert_eq!(code, 200, "{body}");
    assert!(body["metadata"].get("managedFields").is_none(), "{body}");
    assert_eq!(body["metadata"]["labels"], json!({"test-label": "test"}));

    // TestApplyGroupsManySeparateUpdates: 20 updaters leave one apply entry, `ancient-changes`
    // and the 9 newest updaters.
    let many = cm_url(&s, "many");
    let (code, body) = patch(
        &format!("{many}?fieldManager=apply_test"),
        apply,
        &config.replace("test-cm", "many"),
        "t",
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let mut last = Value::Null;
    for i in 0..20 {
        let (code, body) = patch(
            &format!("{many}?fieldManager=updater{i}"),
            merge,
            &format!(r#"{{"metadata":{{"labels":{{"updater{i}":"new"}}}}}}"#),
            "t",
        )
        .await;
        assert_eq!(code, 200, "{body}");
        last = body;
    }
    let entries = last["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 11, "{entries:#?}");
    assert_eq!(entries[0]["manager"], "apply_test");
    assert_eq!(entries[1]["manager"], "ancient-changes");

    // TestApplyRemovesEmptyManagedFields: an apply that owns nothing leaves no entry.
    let bare = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bare", "namespace": "default"}}"#;
    let (code, body) = patch(
        &format!("{}?fieldManager=apply_test", cm_url(&s, "bare")),
        apply,
        bare,
        "t",
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert!(body["metadata"].get("managedFields").is_none(), "{body}");

    // TestNoopChangeCreationTime: a configuration with `creationTimestamp: null` (as generated
    // manifests carry) differs from the stored object only in what the strategy restores, so
    // a re-apply writes nothing — not even new managedFields times.
    let nulls = r#"{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "myconfig", "creationTimestamp": null, "resourceVersion": null},
        "data": {"key": "value"}}"#;
    let my = format!("{}?fieldManager=apply_test", cm_url(&s, "myconfig"));
    let (code, first) = patch(&my, apply, nulls, "t").await;
    assert_eq!(code, 201, "{first}");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (code, second) = patch(&my, apply, nulls, "t").await;
    assert_eq!(code, 200, "{second}");
    assert_eq!(second, first);

    // TestCreateOnApplyFailsWithUID.
    let with_uid = r#"{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "uid", "uid": "88e00824-7f0e-11e8-94a1-c8d3ffb15800"}}"#;
    let (code, body) = patch(
        &format!("{}?fieldManager=apply_test", cm_url(&s, "uid")),
        apply,
        with_uid,
        "t",
    )
    .await;
    assert_eq!(code, 409, "{body}");
    assert_eq!(
        body["message"],
        r#"Operation cannot be fulfilled on configmaps "uid": uid mismatch: the provided object specified uid 88e00824-7f0e-11e8-94a1-c8d3ffb15800, and no existing object was found"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_steps_of_apply_test_go_embedded() {
    configmap_steps(Backend::Embedded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_steps_of_apply_test_go_etcd() {
    configmap_steps(Backend::Etcd).await;
}

#[test]
fn python_dynamic_client_sees_conflicts() {
    let s = TestServer::start(Backend::Embedded);
    common::run_python_client("server_side_apply.py", &s.url);
}

/// TestCreateVeryLargeObject / TestUpdateVeryLargeObject: an object near the storage's limit
/// is written even when its managedFields would take it over (kube then writes it without
/// them); an apply that needs them fails. On etcd (its 1.5 MiB `--max-request-bytes`) and on
/// the embedded store (`--embedded-max-request-bytes`, the same default: before it, the
/// embedded store took the object with its managedFields).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn very_large_objects_are_written_without_managed_fields() {
    very_large_objects(Backend::Etcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn very_large_objects_are_written_without_managed_fields_embedded() {
    very_large_objects(Backend::Embedded).await;
}

async fn very_large_objects(backend: Backend) {
    let s = TestServer::start(backend);
    default_namespace(&s.url).await;
    let data: serde_json::Map<String, Value> = (0..9999)
        .map(|i| {
            (
                format!(
                    "this-key-is-very-long-so-as-to-create-a-very-large-serialized-fieldset-{i}"
                ),
                json!("A"),
            )
        })
        .collect();
    let (code, body) = send(
        client()
            .post(format!("{}/api/v1/namespaces/default/configmaps", s.url))
            .json(&json!({"metadata": {"name": "large-create-test-cm"}, "data": data})),
    )
    .await;
    let head = |b: &Value| b.to_string().chars().take(400).collect::<String>();
    assert_eq!(code, 201, "{}", head(&body));
    assert!(body["metadata"].get("managedFields").is_none());
    let (code, body) = patch(
        &format!("{}?fieldManager=apply_test", cm_url(&s, "large-create-test-cm")),
        "application/apply-patch+yaml",
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "large-create-test-cm"}}"#,
        "t",
    )
    .await;
    // kube answers the refused write 500; the storage's refusal is a 413 here.
    assert_eq!(code, 413, "{}", head(&body));
    assert_eq!(body["reason"], "RequestEntityTooLarge");
}

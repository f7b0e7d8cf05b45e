//! CustomResourceDefinitions through kubectl (issue 32): a CRD applied and its objects applied
//! right after, with no wait, twenty times in a row; the objects pruned, defaulted and
//! validated (schema and CEL) with kube's messages; printer columns; `Established` for
//! `kubectl wait`; a CRD whose resource a plugin serves is stored with `NamesAccepted=False`
//! and its reason; a deleted CRD stops being served. On both stores.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::Value;
use std::time::Duration;

/// A CRD of the ecosystem's shape (defaults, an enum, a CEL rule with a field path, a
/// transition rule, a status subresource, a printer column, a short name).
fn crd(group: &str, kind: &str, plural: &str) -> String {
    let singular = kind.to_lowercase();
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: {plural}, singular: {singular}, kind: {kind}, shortNames: [{singular}x]}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    additionalPrinterColumns:
    - {{name: Replicas, type: integer, jsonPath: .spec.replicas}}
    - {{name: Color, type: string, jsonPath: .spec.color}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {{rule: "self.replicas <= self.maxReplicas", message: "replicas must not exceed maxReplicas", fieldPath: ".replicas"}}
            - {{rule: "self.color == oldSelf.color", message: "color is immutable"}}
            properties:
              color: {{type: string, enum: [red, blue], default: red}}
              replicas: {{type: integer, minimum: 0, default: 1}}
              maxReplicas: {{type: integer, default: 10}}
          status:
            type: object
            properties:
              ready: {{type: boolean}}
"#
    )
}

fn object(group: &str, kind: &str, name: &str, spec: &str) -> String {
    format!("apiVersion: {group}/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec: {spec}\n")
}

fn crds_are_served_before_their_create_returns(backend: Backend) {
    let s = TestServer::start_with(backend, &["namespaces"], &[]);
    s.create_default_namespace();

    // Twenty fresh CRDs, each applied and used at once.
    for i in 0..20 {
        let (group, kind, plural) = (
            format!("g{i}.example.com"),
            format!("Gadget{i}"),
            format!("gadgets{i}"),
        );
        let c = s.file(&format!("crd{i}.yaml"), &crd(&group, &kind, &plural));
        let o = s.file(
            &format!("o{i}.yaml"),
            &object(&group, &kind, "one", "{replicas: 3, extra: 1}"),
        );
        s.ok(&["apply", "-f", c.to_str().unwrap()]);
        // `--validate=false`: kubectl's own schema check would refuse `extra` before the server
        // prunes it (the server's Strict answer is tested below).
        s.ok(&["apply", "--validate=false", "-f", o.to_str().unwrap()]);
    }

    // Pruned and defaulted; the printer columns.
    let got: Value =
        serde_json::from_str(&s.ok(&["get", "gadgets0", "one", "-o", "json"])).unwrap();
    assert_eq!(
        got["spec"],
        serde_json::json!({"color": "red", "replicas": 3, "maxReplicas": 10}),
        "{got}"
    );
    assert_eq!(got["metadata"]["generation"], 1);
    let table = s.ok(&["get", "gadget0x"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "REPLICAS", "COLOR"], "{table}");
    assert!(table.contains("one    3          red"), "{table}");

    // `Established` and the accepted names.
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=10s",
        "crd/gadgets0.g0.example.com",
    ]);
    let c: Value =
        serde_json::from_str(&s.ok(&["get", "crd", "gadgets0.g0.example.com", "-o", "json"]))
            .unwrap();
    assert_eq!(c["status"]["acceptedNames"]["kind"], "Gadget0", "{c}");
    assert_eq!(c["status"]["acceptedNames"]["listKind"], "Gadget0List");
    assert_eq!(c["status"]["storedVersions"], serde_json::json!(["v1"]));

    // Schema and CEL refusals, kube's texts.
    let bad = s.file(
        "bad.yaml",
        &object(
            "g0.example.com",
            "Gadget0",
            "two",
            "{replicas: 30, color: green}",
        ),
    );
    let err = s.fails(&["apply", "-f", bad.to_str().unwrap()]);
    assert!(
        err.contains(r#"spec.color: Unsupported value: "green": supported values: "red", "blue""#),
        "{err}"
    );
    assert!(
        err.contains(
            r#"spec.replicas: Invalid value: "object": replicas must not exceed maxReplicas"#
        ),
        "{err}"
    );
    let err = s.fails(&[
        "patch",
        "gadgets0",
        "one",
        "--type=merge",
        "-p",
        r#"{"spec":{"color":"blue"}}"#,
    ]);
    assert!(err.contains("color is immutable"), "{err}");
    // Strict field validation (kubectl's default) answers an unknown field with 400.
    let strict = s.file(
        "strict.yaml",
        &object("g0.example.com", "Gadget0", "three", "{extra: 1}"),
    );
    let err = s.fails(&["create", "-f", strict.to_str().unwrap()]);
    assert!(err.contains(r#"unknown field "spec.extra""#), "{err}");

    // Deleted: its objects first (kube's cleanup finalizer; `kubectl delete` waits for it),
    // then no longer served; created again, it starts empty.
    s.ok(&["get", "gadgets19", "one"]);
    s.ok(&[
        "delete",
        "crd",
        "gadgets19.g19.example.com",
        "--timeout=30s",
    ]);
    s.eventually(Duration::from_secs(10), "gadgets19 unserved", || {
        !s.kubectl(&["get", "gadgets19"]).0
    });
    let c = s.file(
        "again.yaml",
        &crd("g19.example.com", "Gadget19", "gadgets19"),
    );
    s.ok(&["apply", "-f", c.to_str().unwrap()]);
    let (_, out, err) = s.kubectl(&["get", "gadgets19", "-o", "name"]);
    assert_eq!(
        out.trim(),
        "",
        "the recreated CRD serves the old objects: {out} {err}"
    );
}

#[test]
fn crds_are_served_before_their_create_returns_on_the_embedded_store() {
    crds_are_served_before_their_create_returns(Backend::Embedded);
}

#[test]
fn crds_are_served_before_their_create_returns_on_etcd() {
    crds_are_served_before_their_create_returns(Backend::Etcd);
}

#[test]
fn a_crd_for_a_resource_a_plugin_serves_is_not_accepted() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "widgets"], &[]);
    let c = s.file("crd.yaml", &crd("example.dev", "Widget", "widgets"));
    s.ok(&["apply", "-f", c.to_str().unwrap()]);
    let c: Value =
        serde_json::from_str(&s.ok(&["get", "crd", "widgets.example.dev", "-o", "json"])).unwrap();
    let conditions = c["status"]["conditions"].as_array().unwrap();
    let names = conditions
        .iter()
        .find(|c| c["type"] == "NamesAccepted")
        .unwrap();
    assert_eq!(names["status"], "False", "{c}");
    assert_eq!(names["reason"], "PluralConflict");
    assert_eq!(
        names["message"],
        r#""widgets" is already in use by the plugin "widgets""#
    );
    let established = conditions
        .iter()
        .find(|c| c["type"] == "Established")
        .unwrap();
    assert_eq!(established["status"], "False");
    // The plugin keeps serving the resource.
    s.create_default_namespace();
    let w = s.file(
        "w.yaml",
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: medium\n",
    );
    s.ok(&["create", "-f", w.to_str().unwrap()]);
    // Deleting the CRD that never served the resource deletes none of the plugin's objects.
    s.ok(&["delete", "crd", "widgets.example.dev", "--timeout=30s"]);
    s.ok(&["get", "widgets", "w1"]);
}

#[test]
fn a_plugin_claiming_a_served_crds_resource_is_refused() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    let c = s.file("crd.yaml", &crd("example.dev", "Widget", "widgets"));
    s.ok(&["apply", "-f", c.to_str().unwrap()]);
    std::fs::copy(
        common::plugin("widgets"),
        s.dir.path().join("plugins.d/widgets.wasm"),
    )
    .unwrap();
    s.eventually(Duration::from_secs(60), "widgets plugin refused", || {
        s.kubectl(&[
            "get",
            "strategyplugins",
            "widgets",
            "-o",
            "jsonpath={.status.replicas[0].lastError}",
        ])
        .1
        .contains(r#"widgets.example.dev is already served by the CustomResourceDefinition "widgets.example.dev""#)
    });
    // The CRD keeps serving its resource.
    s.create_default_namespace();
    let o = s.file(
        "o.yaml",
        &object("example.dev", "Widget", "w1", "{replicas: 2}"),
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);
    let got: Value = serde_json::from_str(&s.ok(&["get", "widgets", "w1", "-o", "json"])).unwrap();
    assert_eq!(got["spec"]["maxReplicas"], 10, "the CRD's default: {got}");
}

#[test]
fn a_crd_created_on_one_replica_is_served_by_another_within_two_seconds() {
    use wasm_apiserver_storage::testing::etcd::EtcdServer;
    let etcd = EtcdServer::start();
    let replica = |id: &str| {
        TestServer::start_with(
            Backend::Embedded,
            &["namespaces"],
            &["--etcd-servers", &etcd.endpoint, "--server-id", id],
        )
    };
    let (a, b) = (replica("replica-a"), replica("replica-b"));
    a.create_default_namespace();
    let c = a.file("crd.yaml", &crd("example.com", "Gizmo", "gizmos"));
    a.ok(&["apply", "-f", c.to_str().unwrap()]);
    let created = std::time::Instant::now();
    while !b.kubectl(&["get", "gizmos"]).0 {
        assert!(
            created.elapsed() < Duration::from_secs(2),
            "replica B does not serve gizmos 2 s after A created the CRD"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = b.file("o.yaml", &object("example.com", "Gizmo", "g1", "{}"));
    b.ok(&["create", "-f", o.to_str().unwrap()]);
    let got: Value = serde_json::from_str(&a.ok(&["get", "gizmos", "g1", "-o", "json"])).unwrap();
    assert_eq!(got["spec"]["color"], "red");

    // A schema change on A is B's within 2 s (the watch event's CRD, configured again).
    a.ok(&[
        "patch",
        "crd",
        "gizmos.example.com",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color/default","value":"blue"}]"#,
    ]);
    let changed = std::time::Instant::now();
    let o2 = b.file("o2.yaml", &object("example.com", "Gizmo", "g2", "{}"));
    loop {
        let dry = b.ok(&[
            "create",
            "--dry-run=server",
            "-o",
            "json",
            "-f",
            o2.to_str().unwrap(),
        ]);
        let got: Value = serde_json::from_str(&dry).unwrap();
        if got["spec"]["color"] == "blue" {
            break;
        }
        assert!(
            changed.elapsed() < Duration::from_secs(2),
            "replica B still defaults with the old schema 2 s after A changed it: {got}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // Deleted on A (its objects first): B stops serving it within 2 s of the delete's end.
    a.ok(&["delete", "crd", "gizmos.example.com", "--timeout=30s"]);
    let deleted = std::time::Instant::now();
    while b.kubectl(&["get", "gizmos"]).0 {
        assert!(
            deleted.elapsed() < Duration::from_secs(2),
            "replica B still serves gizmos 2 s after A deleted the CRD"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Custom resources are covered by the namespace controller (deleting a namespace deletes
/// them) and the garbage collector (an object whose owner is gone is deleted), as on kube:
/// both work on whatever the published snapshot serves.
#[test]
fn namespace_deletion_and_the_garbage_collector_cover_custom_resources() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let c = s.file("crd.yaml", &crd("example.com", "Gizmo", "gizmos"));
    s.ok(&["apply", "-f", c.to_str().unwrap()]);

    s.ok(&["create", "namespace", "team"]);
    let o = s.file("o.yaml", &object("example.com", "Gizmo", "in-team", "{}"));
    s.ok(&["create", "-n", "team", "-f", o.to_str().unwrap()]);
    s.ok(&["delete", "namespace", "team", "--timeout=30s"]);
    s.eventually(Duration::from_secs(10), "namespace team gone", || {
        !s.kubectl(&["get", "namespace", "team"]).0
    });
    let (_, out, _) = s.kubectl(&["get", "gizmos", "-A", "-o", "name"]);
    assert_eq!(
        out.trim(),
        "",
        "custom resources left after their namespace: {out}"
    );

    let parent = s.file(
        "parent.yaml",
        &object("example.com", "Gizmo", "parent", "{}"),
    );
    s.ok(&["create", "-f", parent.to_str().unwrap()]);
    let got: Value =
        serde_json::from_str(&s.ok(&["get", "gizmos", "parent", "-o", "json"])).unwrap();
    let uid = got["metadata"]["uid"].as_str().unwrap().to_string();
    let child = s.file(
        "child.yaml",
        &format!(
            "apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: child\n  ownerReferences:\n  - {{apiVersion: example.com/v1, kind: Gizmo, name: parent, uid: {uid}}}\nspec: {{}}\n"
        ),
    );
    s.ok(&["create", "-f", child.to_str().unwrap()]);
    s.ok(&["delete", "gizmos", "parent"]);
    s.eventually(Duration::from_secs(10), "the child collected", || {
        !s.kubectl(&["get", "gizmos", "child"]).0
    });
}

/// `kubectl scale` through a CRD's `scale` subresource (kube's `ScaleREST`): the Scale read
/// from the replicas paths, a new `spec.replicas` written through the resource's own
/// validation (its CEL rule refuses too many), a stale resourceVersion a conflict, negative
/// replicas refused as kube's Scale validation does.
#[test]
fn kubectl_scale_works_through_the_scale_subresource() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let yaml = crd("example.com", "Gizmo", "gizmos")
        .replace(
            "subresources: {status: {}}",
            "subresources: {status: {}, scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}}",
        )
        .replace(
            "ready: {type: boolean}",
            "ready: {type: boolean}\n              replicas: {type: integer}\n              selector: {type: string}",
        );
    let c = s.file("crd.yaml", &yaml);
    s.ok(&["apply", "-f", c.to_str().unwrap()]);
    let o = s.file(
        "o.yaml",
        &object("example.com", "Gizmo", "one", "{replicas: 2}"),
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);

    s.ok(&["scale", "gizmos/one", "--replicas=5"]);
    let got: Value = serde_json::from_str(&s.ok(&["get", "gizmos", "one", "-o", "json"])).unwrap();
    assert_eq!(got["spec"]["replicas"], 5, "{got}");
    assert_eq!(got["metadata"]["generation"], 2, "{got}");

    let url = "/apis/example.com/v1/namespaces/default/gizmos/one/scale";
    let scale: Value = serde_json::from_str(&s.ok(&["get", "--raw", url])).unwrap();
    assert_eq!(scale["apiVersion"], "autoscaling/v1", "{scale}");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["metadata"]["name"], "one");
    assert_eq!(
        scale["metadata"]["resourceVersion"],
        got["metadata"]["resourceVersion"]
    );
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["replicas"], 0);
    // `labelSelectorPath`: the Scale's `status.selector`, once the object's status has it.
    s.ok(&[
        "patch",
        "gizmos",
        "one",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":5,"selector":"app=one"}}"#,
    ]);
    let scale: Value = serde_json::from_str(&s.ok(&["get", "--raw", url])).unwrap();
    assert_eq!(
        (&scale["status"]["replicas"], &scale["status"]["selector"]),
        (&serde_json::json!(5), &serde_json::json!("app=one")),
        "{scale}"
    );

    // The resource's own rules still hold: its CEL rule refuses more than maxReplicas.
    let err = s.fails(&["scale", "gizmos/one", "--replicas=50"]);
    assert!(
        err.contains("replicas must not exceed maxReplicas"),
        "{err}"
    );

    // PUT of a Scale with a stale resourceVersion: 409; negative replicas: 422.
    let mut stale = scale.clone();
    stale["metadata"]["resourceVersion"] = serde_json::json!("1");
    stale["spec"]["replicas"] = serde_json::json!(6);
    let f = s.file("stale.json", &stale.to_string());
    let err = s.fails(&["replace", "--raw", url, "-f", f.to_str().unwrap()]);
    assert!(err.contains("the object has been modified"), "{err}");
    let mut negative = scale.clone();
    negative["spec"]["replicas"] = serde_json::json!(-1);
    let f = s.file("negative.json", &negative.to_string());
    let err = s.fails(&["replace", "--raw", url, "-f", f.to_str().unwrap()]);
    assert!(
        err.contains("spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        "{err}"
    );
    let mut text = scale.clone();
    text["spec"]["replicas"] = serde_json::json!("3");
    let f = s.file("text.json", &text.to_string());
    let err = s.fails(&["replace", "--raw", url, "-f", f.to_str().unwrap()]);
    assert!(err.contains("is not an int32"), "{err}");
    let mut six = scale.clone();
    six["spec"]["replicas"] = serde_json::json!(6);
    let f = s.file("six.json", &six.to_string());
    let put: Value =
        serde_json::from_str(&s.ok(&["replace", "--raw", url, "-f", f.to_str().unwrap()])).unwrap();
    assert_eq!(put["spec"]["replicas"], 6, "{put}");
}

/// A CRD of the largest ecosystem size (a ~1 MiB schema, as the Prometheus operator's, with
/// 51 CEL rules in nested objects and a list-map) goes
/// in with `kubectl apply --server-side` (client-side apply would need a last-applied
/// annotation over 256 KiB), is Established, takes objects, and `kubectl explain` reads
/// its fields from the OpenAPI v3 document.
#[test]
fn a_one_mebibyte_crd_applies_server_side_and_explains() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let description = "A field of a very large schema, described at length as the ecosystem's generated CRDs describe every field. ".repeat(3);
    // 2,600 described fields in 50 nested groups, each with a CEL rule (Gateway API's HTTPRoute
    // alone has ~50), and a list-map.
    let mut fields = String::new();
    for g in 0..50 {
        fields.push_str(&format!(
            "              group{g}:\n                type: object\n                x-kubernetes-validations:\n                - {{rule: \"!has(self.field{f}) || self.field{f}.size() <= 8\", message: \"group{g} keeps field{f} short\"}}\n                properties:\n",
            f = g * 52
        ));
        for i in g * 52..(g + 1) * 52 {
            fields.push_str(&format!(
                "                  field{i}: {{type: string, description: \"{description}\"}}\n"
            ));
        }
    }
    fields.push_str("              ports:\n                type: array\n                maxItems: 64\n                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [name]\n                x-kubernetes-validations:\n                - {rule: \"self.all(p, p.port > 0)\", message: \"ports are positive\"}\n                items:\n                  type: object\n                  required: [name]\n                  properties:\n                    name: {type: string, maxLength: 16}\n                    port: {type: integer}\n");
    let yaml = format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: monsters.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: monsters, singular: monster, kind: Monster}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: "The monster's spec."
            properties:
              replicas: {{type: integer, description: "How many monsters."}}
{fields}"#
    );
    assert!(yaml.len() > 900 * 1024, "{} bytes", yaml.len());
    let c = s.file("big.yaml", &yaml);
    s.ok(&["apply", "--server-side", "-f", c.to_str().unwrap()]);
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=10s",
        "crd/monsters.example.com",
    ]);
    // Applied again unchanged: no conflict, nothing changes.
    s.ok(&["apply", "--server-side", "-f", c.to_str().unwrap()]);
    let o = s.file(
        "m.yaml",
        "apiVersion: example.com/v1\nkind: Monster\nmetadata:\n  name: m\nspec: {replicas: 2, group0: {field7: x}, ports: [{name: a, port: 1}]}\n",
    );
    s.ok(&["apply", "--server-side", "-f", o.to_str().unwrap()]);
    let got: Value = serde_json::from_str(&s.ok(&["get", "monsters", "m", "-o", "json"])).unwrap();
    assert_eq!(got["spec"]["group0"]["field7"], "x", "{got}");
    // The rules and the list-map keys hold, with kube's messages.
    let bad = s.file(
        "bad.yaml",
        "apiVersion: example.com/v1\nkind: Monster\nmetadata:\n  name: bad\nspec: {group3: {field156: much-too-long}, ports: [{name: a, port: 1}, {name: a, port: 0}]}\n",
    );
    // Server-side apply refuses the duplicate key before anything else, as kube does.
    let err = s.fails(&["apply", "--server-side", "-f", bad.to_str().unwrap()]);
    assert!(
        err.contains(r#"failed to create typed patch object (default/bad; example.com/v1, Kind=Monster): .spec.ports: duplicate entries for key [name="a"]"#),
        "{err}"
    );
    let err = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    for want in [
        r#"spec.group3: Invalid value: "object": group3 keeps field156 short"#,
        r#"spec.ports: Invalid value: "array": ports are positive"#,
        r#"spec.ports[1]: Duplicate value: {"name":"a"}"#,
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }
    // kube's default columns for CRDs.
    let table = s.ok(&["get", "crd"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "CREATED", "AT"], "{table}");
    assert!(table.contains("monsters.example.com"), "{table}");
    let explained = s.ok(&["explain", "monster.spec"]);
    assert!(explained.contains("How many monsters."), "{explained}");
    assert!(explained.contains("group49"), "{explained}");
}

/// A CRD's categories and selectable fields through kubectl: `kubectl get <category>` lists
/// its objects, `--field-selector` on a selectable field filters them, and one on a field
/// the CRD does not select is refused as kube refuses it.
#[test]
fn categories_and_selectable_fields_work_through_kubectl() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let yaml = crd("example.com", "Gizmo", "gizmos")
        .replace(
            "shortNames: [gizmox]}",
            "shortNames: [gizmox], categories: [toys]}",
        )
        .replace(
            "    subresources: {status: {}}\n",
            "    subresources: {status: {}}\n    selectableFields: [{jsonPath: .spec.color}]\n",
        );
    assert!(
        yaml.contains("categories") && yaml.contains("selectableFields"),
        "{yaml}"
    );
    let c = s.file("crd.yaml", &yaml);
    s.ok(&["apply", "-f", c.to_str().unwrap()]);
    for (name, color) in [("r", "red"), ("b", "blue")] {
        let o = s.file(
            &format!("{name}.yaml"),
            &object("example.com", "Gizmo", name, &format!("{{color: {color}}}")),
        );
        s.ok(&["create", "-f", o.to_str().unwrap()]);
    }
    let all = s.ok(&["get", "toys", "-o", "name"]);
    assert_eq!(
        all.lines().collect::<Vec<_>>(),
        ["gizmo.example.com/b", "gizmo.example.com/r"],
        "{all}"
    );
    let blue = s.ok(&[
        "get",
        "gizmos",
        "--field-selector",
        "spec.color=blue",
        "-o",
        "name",
    ]);
    assert_eq!(blue.trim(), "gizmo.example.com/b");
    let err = s.fails(&["get", "gizmos", "--field-selector", "spec.replicas=1"]);
    assert!(
        err.contains("field label not supported: spec.replicas"),
        "{err}"
    );
}

/// A schema change applies to stored objects on read, as kube's CRD codec prunes and
/// defaults every object it decodes: after the CRD drops a field and adds a defaulted one,
/// GET, LIST, a Table and a watch all answer the object written before the change pruned
/// and defaulted by the new schema, without a write.
#[test]
fn stored_objects_are_pruned_and_defaulted_on_read_by_the_current_schema() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let crd = |fields: &str| {
        format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: gizmos, singular: gizmo, kind: Gizmo}}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {{name: Size, type: string, jsonPath: .spec.size}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {{type: string, default: red}}
{fields}"#
        )
    };
    let before = s.file(
        "before.yaml",
        &crd("              legacy: {type: string}\n"),
    );
    s.ok(&["apply", "-f", before.to_str().unwrap()]);
    let o = s.file(
        "o.yaml",
        &object("example.com", "Gizmo", "old", "{legacy: x}"),
    );
    s.ok(&["create", "-f", o.to_str().unwrap()]);
    let got: Value = serde_json::from_str(&s.ok(&["get", "gizmos", "old", "-o", "json"])).unwrap();
    assert_eq!(
        got["spec"],
        serde_json::json!({"color": "red", "legacy": "x"})
    );

    let after = s.file(
        "after.yaml",
        &crd("              size: {type: string, default: M}\n"),
    );
    s.ok(&["apply", "-f", after.to_str().unwrap()]);
    let want = serde_json::json!({"color": "red", "size": "M"});
    let got: Value = serde_json::from_str(&s.ok(&["get", "gizmos", "old", "-o", "json"])).unwrap();
    assert_eq!(got["spec"], want, "GET: {got}");
    let list: Value = serde_json::from_str(&s.ok(&["get", "gizmos", "-o", "json"])).unwrap();
    assert_eq!(list["items"][0]["spec"], want, "LIST: {list}");
    let table = s.ok(&["get", "gizmos"]);
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|l| l.split_whitespace().nth(1) == Some("M")),
        "{table}"
    );
    let events = s.ok(&[
        "get",
        "--raw",
        "/apis/example.com/v1/namespaces/default/gizmos?watch=true&timeoutSeconds=1",
    ]);
    let first: Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    assert_eq!(first["object"]["spec"], want, "WATCH: {events}");
}

/// A write is pruned, defaulted and validated by the schema of the version it is sent in, as
/// kube's per-version CRD strategies do (apiextensions-apiserver's `crdInfo.storages`): v2,
/// which is not the storage version, has a field of its own with a default and a CEL rule
/// on it that v1 does not have. As on kube, what only v2 holds is not stored (the conversion
/// to the storage version prunes by its schema).
#[test]
fn a_write_in_another_version_follows_that_versions_schema() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let crd = s.file(
        "shapes.yaml",
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shapes.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: shapes, singular: shape, kind: Shape}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string, default: red}
              size: {type: integer}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: "self.shade != 'blue' || self.size < 5", message: "blue shapes are small"}
            properties:
              shade: {type: string, default: blue}
              size: {type: integer}
"#,
    );
    s.ok(&["apply", "-f", crd.to_str().unwrap()]);
    let shape = |version: &str, name: &str, spec: &str| {
        s.file(
            &format!("{name}.yaml"),
            &format!(
                "apiVersion: example.com/{version}\nkind: Shape\nmetadata:\n  name: {name}\nspec: {spec}\n"
            ),
        )
    };
    // Defaulted to blue by v2 before v2's rule runs.
    let big = shape("v2", "big", "{size: 7}");
    let err = s.fails(&["create", "-f", big.to_str().unwrap()]);
    assert!(
        err.contains(
            r#"The Shape "big" is invalid: spec: Invalid value: "object": blue shapes are small"#
        ),
        "{err}"
    );
    let green = shape("v2", "green", "{size: 7, shade: green}");
    let created: Value =
        serde_json::from_str(&s.ok(&["create", "-f", green.to_str().unwrap(), "-o", "json"]))
            .unwrap();
    assert_eq!(created["spec"], serde_json::json!({"size": 7}), "{created}");
    let get = |resource: &str, name: &str| -> Value {
        serde_json::from_str(&s.ok(&["get", resource, name, "-o", "json"])).unwrap()
    };
    let v2 = get("shapes.v2.example.com", "green");
    assert_eq!(v2["spec"], serde_json::json!({"size": 7}), "{v2}");
    let v1 = get("shapes.v1.example.com", "green");
    assert_eq!(
        v1["spec"],
        serde_json::json!({"color": "red", "size": 7}),
        "{v1}"
    );

    // v1 has no rule; an update in v2 is held to v2's (with v2's default), in v1 to v1's.
    let one = shape("v1", "one", "{size: 9}");
    s.ok(&["create", "-f", one.to_str().unwrap()]);
    let err = s.fails(&[
        "patch",
        "shapes.v2.example.com",
        "one",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":8}}"#,
    ]);
    assert!(err.contains("blue shapes are small"), "{err}");
    s.ok(&[
        "patch",
        "shapes.v1.example.com",
        "one",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":10}}"#,
    ]);
    assert_eq!(get("shapes.v1.example.com", "one")["spec"]["size"], 10);
}

/// On etcd, through kubectl: OpenAPI v3 serves a CRD the moment its create returns;
/// `--validate=warn` warns of an unknown field and drops it; a CRD taking a short name another
/// CRD of its group holds is stored with `NamesAccepted=False`, reason `ShortNamesConflict`
/// (kube's naming controller) and not served; a CEL rule added later with a
/// `messageExpression` and a `reason` is ratcheted for an object that does not change the
/// field; a new storage version is added to `status.storedVersions`; a deleted CRD holds
/// kube's cleanup finalizer and `Terminating` condition until its last object is gone.
#[test]
fn crd_names_warnings_ratcheting_stored_versions_and_cleanup_on_etcd() {
    let s = TestServer::start_with(Backend::Etcd, &["namespaces"], &[]);
    s.create_default_namespace();
    let a = crd("example.com", "Gizmo", "gizmos");
    let file = s.file("gizmos.yaml", &a);
    s.ok(&["apply", "-f", file.to_str().unwrap()]);
    let doc = s.ok(&["get", "--raw", "/openapi/v3/apis/example.com/v1"]);
    assert!(doc.contains(r#""kind":"Gizmo""#), "{doc}");

    // fieldValidation=Warn: created, with a warning and without the field.
    let o1 = s.file(
        "o1.yaml",
        &object("example.com", "Gizmo", "o1", "{color: blue, bogus: 1}"),
    );
    let (ok, _, err) = s.kubectl(&["create", "--validate=warn", "-f", o1.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains(r#"unknown field "spec.bogus""#), "{err}");
    let got: Value = serde_json::from_str(&s.ok(&["get", "gizmos", "o1", "-o", "json"])).unwrap();
    assert_eq!(got["spec"].get("bogus"), None, "{got}");

    // An invalid CRD is refused with kube's field error.
    let invalid = crd("example.com", "Thing", "things").replace("storage: true", "storage: false");
    let file_i = s.file("things.yaml", &invalid);
    let err = s.fails(&["apply", "-f", file_i.to_str().unwrap()]);
    assert!(
        err.contains("must have exactly one version marked as storage version"),
        "{err}"
    );

    // A short name another CRD of the group holds.
    let b = crd("example.com", "Doohickey", "doohickeys")
        .replace("shortNames: [doohickeyx]", "shortNames: [gizmox]");
    let file_b = s.file("doohickeys.yaml", &b);
    s.ok(&["apply", "-f", file_b.to_str().unwrap()]);
    let crd_b: Value =
        serde_json::from_str(&s.ok(&["get", "crd", "doohickeys.example.com", "-o", "json"]))
            .unwrap();
    let names = crd_b["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "NamesAccepted"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&names["status"], &names["reason"], &names["message"]),
        (
            &serde_json::json!("False"),
            &serde_json::json!("ShortNamesConflict"),
            &serde_json::json!(
                r#""gizmox" is already in use by the CustomResourceDefinition "gizmos.example.com""#
            )
        ),
        "{crd_b}"
    );
    assert!(!s.kubectl(&["get", "doohickeys"]).0);

    // A rule added later: o1 (blue) may still change other fields; a new blue one may not.
    let retired = a.replace(
        "color: {type: string, enum: [red, blue], default: red}",
        r#"color: {type: string, enum: [red, blue], default: red, x-kubernetes-validations: [{rule: "self != 'blue'", messageExpression: "'color ' + self + ' is retired'", reason: FieldValueForbidden}]}"#,
    );
    let file = s.file("gizmos.yaml", &retired);
    s.ok(&["apply", "-f", file.to_str().unwrap()]);
    s.ok(&[
        "patch",
        "gizmos",
        "o1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    let o2 = s.file(
        "o2.yaml",
        &object("example.com", "Gizmo", "o2", "{color: blue}"),
    );
    let err = s.fails(&["create", "-f", o2.to_str().unwrap()]);
    assert!(
        err.contains("spec.color: Forbidden: color blue is retired"),
        "{err}"
    );

    // v2 becomes the storage version: both are stored versions now.
    let v1 = &retired[retired.find("  - name: v1").unwrap()..];
    let two =
        retired.replace("storage: true", "storage: false") + &v1.replace("name: v1", "name: v2");
    let file = s.file("gizmos.yaml", &two);
    s.ok(&["apply", "-f", file.to_str().unwrap()]);
    let stored: Value =
        serde_json::from_str(&s.ok(&["get", "crd", "gizmos.example.com", "-o", "json"])).unwrap();
    assert_eq!(
        stored["status"]["storedVersions"],
        serde_json::json!(["v1", "v2"]),
        "{stored}"
    );

    // Deleted while an object waits for its own finalizer: Terminating, held by kube's
    // cleanup finalizer; gone once the object is.
    let held = s.file(
        "held.yaml",
        "apiVersion: example.com/v2\nkind: Gizmo\nmetadata: {name: held, finalizers: [example.com/hold]}\nspec: {color: red}\n",
    );
    s.ok(&["create", "-f", held.to_str().unwrap()]);
    s.ok(&["delete", "crd", "gizmos.example.com", "--wait=false"]);
    let terminating = || -> Value {
        serde_json::from_str(&s.ok(&["get", "crd", "gizmos.example.com", "-o", "json"])).unwrap()
    };
    s.eventually(Duration::from_secs(10), "the CRD terminating", || {
        let c = terminating();
        c["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Terminating" && c["status"] == "True")
        })
    });
    let c = terminating();
    assert_eq!(
        c["metadata"]["finalizers"],
        serde_json::json!(["customresourcecleanup.apiextensions.k8s.io"]),
        "{c}"
    );
    s.ok(&[
        "patch",
        "gizmos.v2.example.com",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    s.eventually(Duration::from_secs(20), "the CRD gone", || {
        !s.kubectl(&["get", "crd", "gizmos.example.com"]).0
    });
}

//! "Start declarative, add code later" (issue 32, item 4): a CRD served by its schema and CEL
//! rules alone; the `widgets` strategy plugin attached to it with
//! `wasm-apiserver plugin push --extends <crd>` (`StrategyPlugin.spec.extends`), its hooks
//! then running around the CRD's — the CRD prunes and defaults, the plugin prepares, the
//! CRD's CEL rule validates what the plugin prepared, the plugin validates, and the plugin
//! converts between its versions; detached again by deleting the object, with the objects
//! written meanwhile still served. Through kubectl.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::time::Duration;

/// `widgets.example.dev` shaped as the widgets plugin describes it (v1 stored, v1alpha1
/// served), with one CEL rule of its own: at most 4 replicas.
const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.dev
spec:
  group: example.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: "!has(self.replicas) || self.replicas <= 4", message: "at most 4 replicas", fieldPath: ".replicas"}
            properties:
              size: {type: string}
              replicas: {type: integer}
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
              storageClass: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              count: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
"#;

fn widget(s: &TestServer, name: &str, size: &str) -> std::path::PathBuf {
    s.file(
        &format!("{name}.yaml"),
        &format!(
            "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {{name: {name}}}\nspec: {{size: {size}}}\n"
        ),
    )
}

fn get(s: &TestServer, resource: &str, name: &str) -> Value {
    serde_json::from_str(&s.ok(&["get", resource, name, "-o", "json"])).unwrap()
}

/// `plugin push` of the widgets component, with `--extends <extends>` unless empty.
fn push(s: &TestServer, extends: &str) -> (bool, String) {
    let file = common::plugin("widgets");
    let mut args = vec![
        "plugin".as_ref(),
        "push".as_ref(),
        file.as_os_str(),
        "--server".as_ref(),
        s.url.as_ref(),
    ];
    if !extends.is_empty() {
        args.extend(["--extends".as_ref(), std::ffi::OsStr::new(extends)]);
    }
    common::cli(args)
}

fn state(s: &TestServer) -> (String, String) {
    let o = get(s, "strategyplugins", "widgets");
    let r = &o["status"]["replicas"][0];
    (
        r["state"].as_str().unwrap_or("").to_string(),
        r["lastError"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn a_strategy_plugin_attaches_to_a_crd_and_detaches_again() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();

    // A plugin naming another resource's CRD is refused in its status, and serves nothing.
    // (The first load may compile the component: a debug build of the server takes long.)
    let (ok, out) = push(&s, "gadgets.example.dev");
    assert!(ok, "{out}");
    s.eventually(Duration::from_secs(120), "the refusal", || {
        state(&s).0 == "Failed"
    });
    assert!(
        state(&s).1.contains("it serves widgets.example.dev, not the resource of the CustomResourceDefinition \"gadgets.example.dev\" it extends"),
        "{:?}",
        state(&s)
    );
    s.ok(&["delete", "strategyplugin", "widgets"]);

    // Pushed before its CRD: refused until the CRD is served, then attached.
    let (ok, out) = push(&s, "widgets.example.dev");
    assert!(ok, "{out}");
    s.eventually(Duration::from_secs(30), "the refusal", || {
        state(&s).1.contains("is not served")
    });
    let crd = s.file("crd.yaml", CRD);
    s.ok(&["apply", "-f", crd.to_str().unwrap()]);
    s.eventually(Duration::from_secs(30), "the plugin attached", || {
        state(&s).0 == "Active"
    });

    // The plugin defaults, validates and converts; the CRD's CEL rule holds for what the
    // plugin prepared, and the status subresource drops the status the plugin set.
    s.ok(&[
        "create",
        "-f",
        widget(&s, "medium", "medium").to_str().unwrap(),
    ]);
    let w = get(&s, "widgets", "medium");
    assert_eq!(w["spec"], json!({"size": "medium", "replicas": 3}), "{w}");
    assert_eq!(w.get("status"), None, "{w}");
    let err = s.fails(&["create", "-f", widget(&s, "tiny", "tiny").to_str().unwrap()]);
    assert!(
        err.contains("spec.size: Unsupported value: \"tiny\": supported values: \"small\", \"medium\", \"large\""),
        "{err}"
    );
    let err = s.fails(&[
        "create",
        "-f",
        widget(&s, "large", "large").to_str().unwrap(),
    ]);
    assert!(
        err.contains("spec.replicas: Invalid value: \"object\": at most 4 replicas"),
        "{err}"
    );
    let old = get(&s, "widgets.v1alpha1.example.dev", "medium");
    assert_eq!(old["spec"]["count"], json!(3), "{old}");

    // The CRD changes under the plugin (a version the plugin does not describe): the CRD
    // serves alone and the plugin's status says why; changed back, the plugin attaches again.
    let v2 = CRD.to_string()
        + "  - name: v2\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n";
    let changed = s.file("crd-v2.yaml", &v2);
    s.ok(&["apply", "-f", changed.to_str().unwrap()]);
    s.eventually(Duration::from_secs(10), "the plugin detached", || {
        state(&s).0 == "Failed"
    });
    assert!(
        state(&s).1.starts_with("not attached: it describes versions [\"v1\", \"v1alpha1\"] stored in v1, the CustomResourceDefinition \"widgets.example.dev\" has [\"v1\", \"v1alpha1\", \"v2\"] stored in v1"),
        "{:?}",
        state(&s)
    );
    s.ok(&["create", "-f", widget(&s, "odd", "odd").to_str().unwrap()]);
    assert_eq!(get(&s, "widgets", "odd")["spec"], json!({"size": "odd"}));
    s.ok(&["apply", "-f", crd.to_str().unwrap()]);
    s.eventually(Duration::from_secs(10), "the plugin attached again", || {
        state(&s).0 == "Active"
    });
    assert_eq!(state(&s).1, "");
    let err = s.fails(&["create", "-f", widget(&s, "tiny", "tiny").to_str().unwrap()]);
    assert!(err.contains("spec.size: Unsupported value"), "{err}");

    // A push without `--extends` keeps the attachment it has.
    let (ok, out) = push(&s, "");
    assert!(ok, "{out}");
    let o = get(&s, "strategyplugins", "widgets");
    assert_eq!(o["spec"]["extends"], json!("widgets.example.dev"), "{o}");
    assert_eq!(state(&s).0, "Active");

    // Detached: the CRD alone again (any size, no defaults), over the same objects.
    s.ok(&["delete", "strategyplugin", "widgets"]);
    s.eventually(Duration::from_secs(10), "the plugin detached", || {
        s.kubectl(&["create", "-f", widget(&s, "tiny", "tiny").to_str().unwrap()])
            .0
    });
    assert_eq!(get(&s, "widgets", "tiny")["spec"], json!({"size": "tiny"}));
    assert_eq!(get(&s, "widgets", "medium")["spec"]["replicas"], json!(3));
}

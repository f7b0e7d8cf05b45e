//! Configured strategies (`configured-strategy-plugin` of `wit/0.3.0/strategy.wit`): the
//! standard `customresources` component, compiled once, serves CustomResourceDefinitions each
//! from its own configuration — the hooks in order, the fused update with the host's restore,
//! `read` of stored objects, several CRDs on one instance, a refused configuration, and each
//! world refused where the other is required.

use crate::common;

use serde_json::{json, Value};
use wasm_apiserver::plugin::{ConfiguredPlugin, LoadErrorKind, PluginRuntime, RuntimeConfig};
use wasm_apiserver::registry::meta;
use wasm_apiserver::strategy::{sequence, Strategy};

fn component() -> std::path::PathBuf {
    common::repo_root().join("target/plugins/configured/customresources.wasm")
}

fn load() -> ConfiguredPlugin {
    let rt = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    rt.load_configured("customresources", &std::fs::read(component()).unwrap())
        .unwrap()
}

/// A CRD of the ecosystem's shape: a status subresource, defaults, an enum, a CEL rule with a
/// field path and a transition rule, a printer column and a selectable field.
fn crd(group: &str, kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "additionalPrinterColumns": [{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [
                            {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas", "fieldPath": ".replicas"},
                            {"rule": "self.color == oldSelf.color", "message": "color is immutable"}],
                        "properties": {
                            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                            "replicas": {"type": "integer", "minimum": 0, "default": 1},
                            "maxReplicas": {"type": "integer", "default": 10}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}})
}

fn object(group: &str, kind: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{group}/v1"), "kind": kind,
        "metadata": {"name": "o", "namespace": "default", "uid": "u1",
            "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec, "status": {"ready": true}})
}

fn no_meta(_: &Value) -> Vec<wasm_apiserver::strategy::FieldError> {
    Vec::new()
}

#[test]
fn one_component_serves_several_crds_through_the_hooks() {
    let plugin = load();
    let gadgets = plugin
        .configure(&crd("example.com", "Gadget", "gadgets").to_string())
        .unwrap();
    let gizmos = plugin
        .configure(&crd("tools.example.org", "Gizmo", "gizmos").to_string())
        .unwrap();
    let d = gadgets.description();
    assert_eq!(
        (d.group.as_str(), d.kind.as_str()),
        ("example.com", "Gadget")
    );
    assert_eq!(d.subresources, ["status"]);
    assert_eq!(d.selectable_fields, ["spec.color"]);
    assert_eq!(gizmos.description().kind, "Gizmo");
    assert_eq!(gadgets.wit_version(), "0.3.0");

    // Create: pruned, defaulted, status dropped, generation 1 — on each CRD, alternating on
    // this thread's one warm instance.
    for (s, group, kind) in [
        (&gadgets, "example.com", "Gadget"),
        (&gizmos, "tools.example.org", "Gizmo"),
        (&gadgets, "example.com", "Gadget"),
    ] {
        let out = sequence::create(
            s,
            &object(group, kind, json!({"replicas": 3, "unknown": 1})),
            &no_meta,
        )
        .unwrap();
        assert_eq!(
            out.object["spec"],
            json!({"color": "red", "replicas": 3, "maxReplicas": 10})
        );
        assert_eq!(out.object.get("status"), None);
        assert_eq!(out.object["metadata"]["generation"], 1);
    }
    let err = sequence::create(
        &gadgets,
        &object("example.com", "Gadget", json!({"replicas": 30})),
        &no_meta,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains(
            "spec.replicas: Invalid value: \"object\": replicas must not exceed maxReplicas"
        ),
        "{err}"
    );
    // A Gizmo is not a Gadget.
    let err = sequence::create(
        &gadgets,
        &object("tools.example.org", "Gizmo", json!({})),
        &no_meta,
    )
    .unwrap_err();
    assert!(err.to_string().contains("kind: Invalid value"), "{err}");
}

#[test]
fn the_fused_update_restores_and_answers_as_the_steps() {
    let plugin = load();
    let s = plugin
        .configure(&crd("example.com", "Gadget", "gadgets").to_string())
        .unwrap();
    let old = sequence::create(
        &s,
        &object("example.com", "Gadget", json!({"replicas": 2})),
        &no_meta,
    )
    .unwrap()
    .object;
    let restore = |o: &mut Value| meta::restore_from_old(o, &old);
    let mut new = object("example.com", "Gadget", json!({"replicas": 4}));
    new["metadata"]["uid"] = json!("");
    new["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z");
    let fused = s.update_sequence(&new, &old, &restore).unwrap();
    assert!(fused.errors.is_empty(), "{:?}", fused.errors);
    assert_eq!(fused.object["metadata"]["uid"], "u1");
    assert_eq!(
        fused.object["metadata"]["creationTimestamp"],
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(fused.object["metadata"]["generation"], 2);
    let steps = sequence::update_in_steps(&s, &new, &old, &restore, &no_meta).unwrap();
    assert_eq!(fused.object, steps.object);
    let through = sequence::update(&s, &new, &old, &restore, &no_meta).unwrap();
    assert_eq!(through.object, steps.object);

    // The transition rule, ratcheted against the stored object.
    let err = sequence::update(
        &s,
        &object(
            "example.com",
            "Gadget",
            json!({"replicas": 2, "color": "blue"}),
        ),
        &old,
        &restore,
        &no_meta,
    )
    .unwrap_err();
    assert!(err.to_string().contains("color is immutable"), "{err}");
}

#[test]
fn read_prunes_and_defaults_stored_objects() {
    let plugin = load();
    let s = plugin
        .configure(&crd("example.com", "Gadget", "gadgets").to_string())
        .unwrap();
    let stored = object(
        "example.com",
        "Gadget",
        json!({"replicas": 2, "gone": true}),
    );
    let out = s.read_stored(&stored).unwrap();
    assert_eq!(
        out["spec"],
        json!({"color": "red", "replicas": 2, "maxReplicas": 10})
    );
    assert_eq!(out["metadata"], stored["metadata"]);
}

#[test]
fn a_configuration_the_component_refuses_is_a_load_error() {
    let plugin = load();
    let mut c = crd("example.com", "Gadget", "gadgets");
    c["spec"]["versions"][0]["storage"] = json!(false);
    let e = plugin.configure(&c.to_string()).unwrap_err();
    assert!(
        e.to_string()
            .contains("it refused its configuration: the CRD has no storage version"),
        "{e}"
    );
    // The component keeps serving other configurations.
    plugin
        .configure(&crd("example.com", "Gadget", "gadgets").to_string())
        .unwrap();
}

#[test]
fn each_world_is_refused_where_the_other_is_required() {
    let rt = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let e = rt.load_file(&component()).unwrap_err();
    assert!(matches!(e.reason, LoadErrorKind::WrongWorld(_)), "{e}");
    assert!(
        e.to_string()
            .contains("exports wasm-apiserver:strategy/configured"),
        "{e}"
    );
    let e = rt
        .load_configured(
            "widgets",
            &std::fs::read(common::plugin("widgets")).unwrap(),
        )
        .unwrap_err();
    assert!(matches!(e.reason, LoadErrorKind::WrongWorld(_)), "{e}");
}

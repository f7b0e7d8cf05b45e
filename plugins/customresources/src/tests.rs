//! The plugin's hooks at string level (what the component exports), natively.

use super::*;
use wasm_apiserver_sdk::configured::Glue;

/// A CRD shaped like the ecosystem's: two versions (`v1beta1` served and deprecated, `v1`
/// stored), a status subresource, defaults, a CEL rule with a transition rule, printer columns
/// and a selectable field.
pub fn crd() -> Value {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas", "fieldPath": ".replicas"},
                {"rule": "self.color == oldSelf.color", "message": "color is immutable"}],
            "properties": {
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                "maxReplicas": {"type": "integer", "default": 10}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList",
                "shortNames": ["gd"], "categories": ["all"]},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                    "schema": {"openAPIV3Schema": schema.clone()}},
                {"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "selectableFields": [{"jsonPath": ".spec.color"}],
                    "additionalPrinterColumns": [
                        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
                    "schema": {"openAPIV3Schema": schema}}]}})
}

fn glue() -> Glue<CustomResources> {
    Glue(CustomResources::configure(&crd().to_string()).unwrap())
}

fn gadget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "default", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec, "status": {"ready": true}})
}

#[test]
fn describes_the_crd() {
    let d = glue().0.describe();
    assert_eq!(
        (
            d.group.as_str(),
            d.version.as_str(),
            d.kind.as_str(),
            d.plural.as_str()
        ),
        ("example.com", "v1", "Gadget", "gadgets")
    );
    assert_eq!(d.short_names, ["gd"]);
    assert_eq!(d.categories, ["all"]);
    assert!(d.namespaced);
    assert_eq!(d.subresources, ["status"]);
    assert_eq!(d.selectable_fields, ["spec.color"]);
    let names: Vec<&str> = d.printer_columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Name", "Replicas"]);
    let beta = d.version_description("v1beta1").unwrap();
    assert!(beta.deprecated && beta.served && !beta.storage);
    let names: Vec<&str> = beta
        .printer_columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["Name", "Age"], "a version without columns gets Age");
}

#[test]
fn create_prunes_defaults_and_validates() {
    let g = glue();
    let out = g
        .create_sequence(&gadget(json!({"replicas": 3, "unknown": 1})).to_string())
        .unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let obj: Value = serde_json::from_str(&out.object).unwrap();
    assert_eq!(
        obj["spec"],
        json!({"color": "red", "replicas": 3, "maxReplicas": 10})
    );
    assert_eq!(obj.get("status"), None, "status is the subresource's");
    assert_eq!(obj["metadata"]["generation"], 1);

    let out = g
        .create_sequence(&gadget(json!({"replicas": 30, "color": "green"})).to_string())
        .unwrap();
    let errors: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\"",
            // The rule's node is the object; `fieldPath` only moves the path (kube's cel/validation.go).
            "spec.replicas: Invalid value: \"object\": replicas must not exceed maxReplicas",
        ]
    );
}

#[test]
fn update_is_the_steps_with_the_restore_in_one_call() {
    let g = glue();
    let old: Value = serde_json::from_str(
        &g.create_sequence(&gadget(json!({"replicas": 2})).to_string())
            .unwrap()
            .object,
    )
    .unwrap();
    let mut new = gadget(json!({"replicas": 4, "color": "red"}));
    new["metadata"]["uid"] = json!("");
    new["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z");
    let out = g
        .update_sequence(&new.to_string(), &old.to_string())
        .unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let obj: Value = serde_json::from_str(&out.object).unwrap();
    assert_eq!(obj["metadata"]["generation"], 2);
    assert_eq!(
        obj["metadata"]["uid"], "u1",
        "restored from the stored object"
    );
    assert_eq!(obj["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
    assert_eq!(obj.get("status"), None, "status kept as stored (none)");

    // The transition rule.
    let new = gadget(json!({"replicas": 2, "color": "blue"}));
    let out = g
        .update_sequence(&new.to_string(), &old.to_string())
        .unwrap();
    let errors: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        ["spec: Invalid value: \"object\": color is immutable"]
    );
}

#[test]
fn status_update_takes_only_status() {
    let g = glue();
    let old = gadget(json!({"replicas": 2, "color": "red", "maxReplicas": 10}));
    let new = gadget(json!({"replicas": 9, "color": "red", "maxReplicas": 10}));
    let out: Value = serde_json::from_str(
        &g.prepare_for_status_update(&new.to_string(), &old.to_string())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(out["spec"]["replicas"], 2);
    assert_eq!(out["status"], json!({"ready": true}));
}

#[test]
fn read_defaults_stored_objects_by_the_current_schema() {
    let g = glue();
    let stored = gadget(json!({"replicas": 2, "gone": true}));
    let out: Value = serde_json::from_str(&g.read(&stored.to_string()).unwrap()).unwrap();
    assert_eq!(
        out["spec"],
        json!({"color": "red", "replicas": 2, "maxReplicas": 10})
    );
}

/// An object the host converted to another version is pruned by that version's schema and
/// not defaulted (kube's `schemaCoercingConverter`).
#[test]
fn read_prunes_a_converted_object_by_its_versions_schema() {
    let mut crd = crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
        "type": "object", "properties": {"count": {"type": "integer", "default": 5}}});
    let g = Glue(CustomResources::configure(&crd.to_string()).unwrap());
    let mut beta = gadget(json!({"replicas": 2, "count": 3}));
    beta["apiVersion"] = json!("example.com/v1beta1");
    let out: Value = serde_json::from_str(&g.read(&beta.to_string()).unwrap()).unwrap();
    assert_eq!(out["spec"], json!({"count": 3}));
    beta["spec"] = json!({});
    let out: Value = serde_json::from_str(&g.read(&beta.to_string()).unwrap()).unwrap();
    assert_eq!(out["spec"], json!({}), "no defaults in another version");
}

#[test]
fn attrs_use_the_objects_version_and_conversion_rewrites_api_version() {
    let g = glue();
    let obj = gadget(json!({"color": "blue"}));
    let a = g.get_attrs(&obj.to_string()).unwrap();
    assert_eq!(a.fields, [("spec.color".to_string(), "blue".to_string())]);
    let beta: Value =
        serde_json::from_str(&g.convert(&obj.to_string(), "example.com/v1beta1").unwrap()).unwrap();
    assert_eq!(beta["apiVersion"], "example.com/v1beta1");
    assert!(g.get_attrs(&beta.to_string()).unwrap().fields.is_empty());
}

#[test]
fn a_configuration_without_a_storage_version_is_refused() {
    let mut c = crd();
    c["spec"]["versions"][1]["storage"] = json!(false);
    let e = CustomResources::configure(&c.to_string()).err().unwrap();
    assert_eq!(e, "the CRD has no storage version");
}

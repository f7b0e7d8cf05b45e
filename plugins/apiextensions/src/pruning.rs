//! Pruning: the fields of a custom resource its schema does not declare are dropped
//! (`apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go`, `PruneWithOptions`),
//! and their paths reported — `fieldValidation=Strict` refuses the object with
//! `strict decoding error: unknown field "spec.foo"`, `Warn` warns, `Ignore` drops them
//! silently.
//!
//! - Under `x-kubernetes-preserve-unknown-fields` unknown fields stay; declared ones are still
//!   pruned inside.
//! - The root of the resource and every `x-kubernetes-embedded-resource` keep `apiVersion`,
//!   `kind` and `metadata` (the metadata is ObjectMeta's to check).
//! - Paths name map keys after a dot and list items by index: `spec.items[0].extra`.

use crate::structural::Structural;
use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::Path;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prune `obj` by `schema`; `resource_root`: `obj` is a whole resource (its `apiVersion`,
/// `kind` and `metadata` are kept). Returns the paths of the fields dropped, in the order
/// found. A schema of `None` declares nothing: everything under it is dropped.
pub fn prune(obj: &mut Json, schema: Option<&Structural>, resource_root: bool) -> Vec<String> {
    let mut root;
    let schema = if resource_root {
        root = schema.cloned().unwrap_or_default();
        root.embedded_resource = true;
        Some(&root)
    } else {
        schema
    };
    let mut unknown = Vec::new();
    prune_node(obj, schema, &Path::new(""), &mut unknown);
    unknown
}

fn prune_node(x: &mut Json, s: Option<&Structural>, path: &Path, unknown: &mut Vec<String>) {
    if let Some(s) = s.filter(|s| s.preserve_unknown_fields) {
        return skip_prune(x, s, path, unknown);
    }
    match x {
        Json::Object(fields) => {
            let Some(s) = s else {
                unknown.extend(fields.keys().map(|k| path.child(k).to_string()));
                fields.clear();
                return;
            };
            fields.retain(|k, v| {
                if s.embedded_resource && META_FIELDS.contains(&k.as_str()) {
                    return true;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(v, Some(prop), &path.child(k), unknown);
                    return true;
                }
                if let Some(ap) = &s.additional_properties {
                    prune_node(v, ap.schema(), &path.child(k), unknown);
                    return true;
                }
                // The root's type and object metadata are not reported (kube's decoder reads
                // them).
                if !META_FIELDS.contains(&k.as_str()) || !path.as_str().is_empty() {
                    unknown.push(path.child(k).to_string());
                }
                false
            });
        }
        Json::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                prune_node(v, item_schema, &path.index(i), unknown);
            }
        }
        _ => {}
    }
}

/// Under `x-kubernetes-preserve-unknown-fields`: unknown fields stay, declared ones are pruned.
fn skip_prune(x: &mut Json, s: &Structural, path: &Path, unknown: &mut Vec<String>) {
    match x {
        Json::Object(fields) => {
            for (k, v) in fields.iter_mut() {
                if s.embedded_resource && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(v, Some(prop), &path.child(k), unknown);
                } else if let Some(ap) = &s.additional_properties {
                    prune_node(v, ap.schema(), &path.child(k), unknown);
                }
            }
        }
        Json::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    skip_prune(v, item_schema, &path.index(i), unknown);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(s: Json) -> Structural {
        Structural::from_json(&s)
    }

    /// Cases after `pruning/algorithm_test.go`, rewritten.
    #[test]
    fn unknown_fields_are_dropped_and_reported() {
        let s = schema(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object",
                    "properties": {"v": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"known": {"type": "object", "properties": {}}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"spec": {"type": "object"}}}}}}}));
        let mut obj = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"},
            "status": {"phase": "x"},
            "spec": {
                "replicas": 1, "extra": true,
                "items": [{"name": "a", "bad": 1}, {"name": "b"}],
                "labels": {"k": {"v": "1", "w": "2"}},
                "free": {"anything": {"deep": 1}, "known": {"dropped": 1}},
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1},
                             "spec": {"a": 1}, "unknown": 1}}});
        let mut unknown = prune(&mut obj, Some(&s), true);
        unknown.sort();
        assert_eq!(
            unknown,
            [
                "spec.extra",
                "spec.free.known.dropped",
                "spec.items[0].bad",
                "spec.labels.k.w",
                "spec.template.spec.a",
                "spec.template.unknown",
                "status",
            ]
        );
        assert_eq!(
            obj,
            json!({
                "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"},
                "spec": {
                    "replicas": 1,
                    "items": [{"name": "a"}, {"name": "b"}],
                    "labels": {"k": {"v": "1"}},
                    "free": {"anything": {"deep": 1}, "known": {}},
                    "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1},
                                 "spec": {}}}})
        );
    }

    #[test]
    fn a_missing_schema_drops_everything_but_a_root_s_type_and_metadata() {
        let mut obj = json!({"apiVersion": "v1", "kind": "K", "metadata": {}, "spec": {"a": 1}});
        assert_eq!(prune(&mut obj, None, true), ["spec"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "v1", "kind": "K", "metadata": {}})
        );
        let mut nested = json!({"a": {"b": 1}});
        assert_eq!(prune(&mut nested, None, false), ["a"]);
    }
}

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
    let mut unknown = Vec::new();
    let root = Seg::Root;
    match schema {
        // A resource's root keeps its type and metadata as an embedded resource does.
        Some(s) if resource_root && s.preserve_unknown_fields => {
            skip_prune(obj, s, true, &root, &mut unknown)
        }
        Some(s) if resource_root => prune_object_or_list(obj, Some(s), true, &root, &mut unknown),
        None if resource_root => {
            let empty = Structural::default();
            prune_object_or_list(obj, Some(&empty), true, &root, &mut unknown)
        }
        _ => prune_node(obj, schema, &root, &mut unknown),
    }
    unknown
}

/// Where a value is, rendered only for an unknown field: most writes have none.
enum Seg<'a> {
    Root,
    Key(&'a Seg<'a>, &'a str),
    Index(&'a Seg<'a>, usize),
}

impl Seg<'_> {
    fn path(&self) -> Path {
        match self {
            Seg::Root => Path::new(""),
            Seg::Key(parent, k) => parent.path().child(k),
            Seg::Index(parent, i) => parent.path().index(*i),
        }
    }

    fn is_root(&self) -> bool {
        matches!(self, Seg::Root)
    }
}

fn prune_node(x: &mut Json, s: Option<&Structural>, at: &Seg<'_>, unknown: &mut Vec<String>) {
    match s {
        Some(s) if s.preserve_unknown_fields => skip_prune(x, s, false, at, unknown),
        _ => prune_object_or_list(x, s, false, at, unknown),
    }
}

/// Prune an object or a list by `s`; `embedded`: `s` is a resource (its root, or an embedded
/// one) whether or not it says so.
fn prune_object_or_list(
    x: &mut Json,
    s: Option<&Structural>,
    embedded: bool,
    at: &Seg<'_>,
    unknown: &mut Vec<String>,
) {
    match x {
        Json::Object(fields) => {
            let Some(s) = s else {
                unknown.extend(fields.keys().map(|k| at.path().child(k).to_string()));
                fields.clear();
                return;
            };
            let embedded = embedded || s.embedded_resource;
            fields.retain(|k, v| {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    return true;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(v, Some(prop), &Seg::Key(at, k), unknown);
                    return true;
                }
                if let Some(ap) = &s.additional_properties {
                    prune_node(v, ap.schema(), &Seg::Key(at, k), unknown);
                    return true;
                }
                // The root's type and object metadata are not reported (kube's decoder reads
                // them).
                if !META_FIELDS.contains(&k.as_str()) || !at.is_root() {
                    unknown.push(at.path().child(k).to_string());
                }
                false
            });
        }
        Json::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                prune_node(v, item_schema, &Seg::Index(at, i), unknown);
            }
        }
        _ => {}
    }
}

/// Under `x-kubernetes-preserve-unknown-fields`: unknown fields stay, declared ones are pruned.
fn skip_prune(
    x: &mut Json,
    s: &Structural,
    embedded: bool,
    at: &Seg<'_>,
    unknown: &mut Vec<String>,
) {
    match x {
        Json::Object(fields) => {
            for (k, v) in fields.iter_mut() {
                if (embedded || s.embedded_resource) && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(v, Some(prop), &Seg::Key(at, k), unknown);
                } else if let Some(ap) = &s.additional_properties {
                    prune_node(v, ap.schema(), &Seg::Key(at, k), unknown);
                }
            }
        }
        Json::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    skip_prune(v, item_schema, false, &Seg::Index(at, i), unknown);
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
    fn a_root_preserving_unknown_fields_keeps_its_metadata_whole() {
        let s = schema(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
                           "spec": {"type": "object", "properties": {"a": {"type": "integer"}}}}}),
        );
        let mut obj = json!({"metadata": {"name": "x", "labels": {"k": "v"}},
                             "spec": {"a": 1, "b": 2}, "other": true});
        assert_eq!(prune(&mut obj, Some(&s), true), ["spec.b"]);
        assert_eq!(
            obj,
            json!({"metadata": {"name": "x", "labels": {"k": "v"}},
                               "spec": {"a": 1}, "other": true})
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

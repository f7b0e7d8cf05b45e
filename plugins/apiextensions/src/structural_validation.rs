//! Whether a CRD version's schema is structural (`apiextensions-apiserver/pkg/apiserver/schema/
//! validation.go`, `ValidateStructural`'s invariants), over the schema's JSON, with kube's
//! paths and messages, sorted as kube sorts them:
//!
//! - every node has a `type` (`must not be empty for specified object fields`), but under
//!   `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`; `object` at the
//!   root; arrays have `items`; no `additionalProperties` at the root;
//! - `x-kubernetes-embedded-resource` is an `object` with properties (or preserving unknown
//!   fields) and no `additionalProperties`; `x-kubernetes-int-or-string` excludes the other two;
//! - `metadata` at the root restricts only `name` and `generateName`; `kind` and
//!   `apiVersion` are strings;
//! - inside `anyOf`, `allOf`, `oneOf`, `not`: no `type`, `default`, `nullable`, `title`,
//!   `description`, `additionalProperties` or `x-kubernetes-*`, no `metadata` (but the
//!   int-or-string `anyOf: [{type: integer}, {type: string}]` patterns);
//! - a `pattern` compiles.
//!
//! Not yet: completeness (a field specified under a junctor must be specified outside too).

use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The structural-schema errors of `schema` (a version's `openAPIV3Schema`) at `at`.
pub fn validate(schema: &Json, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    invariants(schema, Level::Root, at, &mut errors);
    errors.sort_by_key(|e| format!("{}: {}", e.field, e.body()));
    errors
}

fn flag(s: &Json, k: &str) -> bool {
    s.get(k).and_then(Json::as_bool).unwrap_or(false)
}

fn type_of(s: &Json) -> &str {
    s.get("type").and_then(Json::as_str).unwrap_or("")
}

fn invariants(s: &Json, lvl: Level, at: &Path, errors: &mut ErrorList) {
    let t = type_of(s);
    if t == "array" && s.get("items").is_none() {
        errors.push(field::required(&at.child("items"), "must be specified"));
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        invariants(items, Level::Item, &at.child("items"), errors);
    }
    let props = s.get("properties").and_then(Json::as_object);
    for (k, v) in props.into_iter().flatten() {
        invariants(v, Level::Field, &at.child("properties").key(k), errors);
    }
    if let Some(ap) = s.get("additionalProperties") {
        if lvl == Level::Root {
            let detail = "must not be used at the root";
            errors.push(field::forbidden(&at.child("additionalProperties"), detail));
        }
        if ap.is_object() {
            invariants(ap, Level::Field, &at.child("additionalProperties"), errors);
        }
    }
    let (int_or_string, preserve, embedded) = (
        flag(s, "x-kubernetes-int-or-string"),
        flag(s, "x-kubernetes-preserve-unknown-fields"),
        flag(s, "x-kubernetes-embedded-resource"),
    );
    if int_or_string && preserve {
        let at = at.child("x-kubernetes-preserve-unknown-fields");
        errors.push(field::invalid(
            &at,
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        let at = at.child("x-kubernetes-embedded-resource");
        errors.push(field::invalid(
            &at,
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = is_int_or_string_any_of(s.get("anyOf"));
    let skip_first_all_of_any_of = s
        .get("allOf")
        .and_then(Json::as_array)
        .and_then(|a| a.first())
        .is_some_and(|first| is_int_or_string_any_of(first.get("anyOf")));
    value_validation(s, skip_any_of, skip_first_all_of_any_of, lvl, at, errors);

    let embedded_detail = "must be object if x-kubernetes-embedded-resource is true";
    if embedded && t != "object" {
        if t.is_empty() {
            errors.push(field::required(&at.child("type"), embedded_detail));
        } else {
            errors.push(field::invalid(&at.child("type"), t, embedded_detail));
        }
    } else if t.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(field::required(&at.child("type"), detail));
    }
    if embedded && s.get("additionalProperties").is_some() {
        let detail = "must not be used if x-kubernetes-embedded-resource is set";
        errors.push(field::forbidden(&at.child("additionalProperties"), detail));
    }
    if lvl == Level::Root && !t.is_empty() && t != "object" {
        errors.push(field::invalid(
            &at.child("type"),
            t,
            "must be object at the root",
        ));
    }
    let check_metadata = lvl == Level::Root || embedded;
    let prop = |k: &str| props.and_then(|p| p.get(k));
    for (k, want) in [
        ("kind", "string"),
        ("apiVersion", "string"),
        ("metadata", "object"),
    ] {
        if let (Some(p), true) = (prop(k), check_metadata) {
            if type_of(p) != want {
                let at = at.child("properties").key(k).child("type");
                errors.push(field::invalid(&at, type_of(p), format!("must be {want}")));
            }
        }
    }
    if let (Some(meta), Level::Root) = (prop("metadata"), lvl) {
        let only_names = meta.as_object().is_some_and(|m| {
            m.iter().all(|(k, v)| match k.as_str() {
                "type" => true,
                "properties" => v
                    .as_object()
                    .is_some_and(|p| p.keys().all(|n| n == "name" || n == "generateName")),
                _ => false,
            })
        });
        if !only_names {
            let detail = "must not specify anything other than name and generateName, but \
                          metadata is implicitly specified";
            errors.push(field::forbidden(
                &at.child("properties").key("metadata"),
                detail,
            ));
        }
    }
    if embedded && !preserve && props.is_none_or(|p| p.is_empty()) {
        let detail = "must not be empty if x-kubernetes-embedded-resource is true without \
                      x-kubernetes-preserve-unknown-fields";
        errors.push(field::required(&at.child("properties"), detail));
    }
}

/// `anyOf: [{type: integer}, {type: string}]`, the int-or-string pattern.
fn is_int_or_string_any_of(any_of: Option<&Json>) -> bool {
    any_of == Some(&serde_json::json!([{"type": "integer"}, {"type": "string"}]))
}

fn value_validation(
    v: &Json,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    at: &Path,
    errors: &mut ErrorList,
) {
    let list = |k: &str| {
        v.get(k)
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if !skip_any_of {
        for (i, x) in list("anyOf").iter().enumerate() {
            nested(x, false, lvl, &at.child("anyOf").index(i), errors);
        }
    }
    for (i, x) in list("allOf").iter().enumerate() {
        let skip = skip_first_all_of_any_of && i == 0;
        nested(x, skip, lvl, &at.child("allOf").index(i), errors);
    }
    for (i, x) in list("oneOf").iter().enumerate() {
        nested(x, false, lvl, &at.child("oneOf").index(i), errors);
    }
    if let Some(not) = v.get("not") {
        nested(not, false, lvl, &at.child("not"), errors);
    }
    if let Some(p) = v.get("pattern").and_then(Json::as_str) {
        if let Err(e) = regex::Regex::new(p) {
            let detail = format!("must be a valid regular expression, but isn't: {e}");
            errors.push(field::invalid(&at.child("pattern"), p, detail));
        }
    }
}

fn nested(v: &Json, skip_any_of: bool, lvl: Level, at: &Path, errors: &mut ErrorList) {
    value_validation(v, skip_any_of, false, lvl, at, errors);
    if let Some(items) = v.get("items") {
        nested(items, false, lvl, &at.child("items"), errors);
    }
    let props = v.get("properties").and_then(Json::as_object);
    for (k, p) in props.into_iter().flatten() {
        nested(
            p,
            false,
            Level::Field,
            &at.child("properties").key(k),
            errors,
        );
    }
    for (k, what) in [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
    ] {
        if v.get(k).is_some() {
            errors.push(field::forbidden(&at.child(k), what));
        }
    }
    for k in [
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(v, k) {
            errors.push(field::forbidden(
                &at.child(k),
                "must be false to be structural",
            ));
        }
    }
    if props.is_some_and(|p| p.contains_key("metadata")) {
        let at = at.child("properties").key("metadata");
        errors.push(field::forbidden(
            &at,
            "must not be specified in a nested context",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Json) -> Vec<String> {
        validate(&schema, &Path::new("schema"))
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    /// Cases after `schema/validation_test.go`, rewritten.
    #[test]
    fn non_structural_schemas_are_refused_as_kube_refuses_them() {
        assert_eq!(
            messages(json!({"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "port": {"x-kubernetes-int-or-string": true,
                             "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "free": {"x-kubernetes-preserve-unknown-fields": true},
                    "pod": {"type": "object", "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true}}},
                "metadata": {"type": "object", "properties": {"name": {"type": "string"}}}}})),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(json!({"type": "object", "additionalProperties": {"type": "string"},
                "properties": {
                    "a": {"properties": {"b": {"type": "string"}}},
                    "list": {"type": "array"},
                    "either": {"type": "object", "anyOf": [{"type": "string", "properties": {"metadata": {}}}]},
                    "pod": {"x-kubernetes-embedded-resource": true},
                    "re": {"type": "string", "pattern": "("},
                    "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}})),
            [
                "schema.additionalProperties: Forbidden: must not be used at the root",
                "schema.properties[a].type: Required value: must not be empty for specified object fields",
                "schema.properties[either].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
                "schema.properties[either].anyOf[0].type: Forbidden: must be empty to be structural",
                "schema.properties[list].items: Required value: must be specified",
                "schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
                "schema.properties[pod].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                "schema.properties[pod].type: Required value: must be object if x-kubernetes-embedded-resource is true",
                "schema.properties[re].pattern: Invalid value: \"(\": must be a valid regular expression, but isn't: regex parse error:\n    (\n    ^\nerror: unclosed group",
            ]
        );
    }
}

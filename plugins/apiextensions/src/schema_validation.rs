//! The per-node rules of a CRD version's schema (`apiextensions-apiserver/pkg/apis/
//! apiextensions/validation/validation.go`, `ValidateCustomResourceDefinitionOpenAPISchema`
//! with `specStandardValidatorV3` and `validateMapListKeysMapSet`), over the schema's JSON:
//!
//! - OpenAPI features kube does not support: `id`, `additionalItems`, `patternProperties`,
//!   `definitions`, `dependencies`, `$ref`, `type: null`, `items` as an array; `uniqueItems`;
//!   `additionalProperties` beside `properties`;
//! - `x-kubernetes-list-type` (`atomic`, `set`, `map`) and `x-kubernetes-list-map-keys`: a map
//!   list has keys, object items, scalar key properties, each required or defaulted and not
//!   nullable; a set's items are scalars or atomic;
//! - a rule is not empty, its message is not blank and has no line breaks, a multi-line rule
//!   has a message.

use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};

/// The rule errors of `schema` (a version's `openAPIV3Schema`) at `at`, and of every node in it.
pub fn validate(schema: &Json, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    node(schema, at, &mut errors);
    errors
}

fn str_of<'a>(s: &'a Json, k: &str) -> Option<&'a str> {
    s.get(k).and_then(Json::as_str)
}

fn node(s: &Json, at: &Path, errors: &mut ErrorList) {
    standard(s, at, errors);
    if s.get("uniqueItems").and_then(Json::as_bool) == Some(true) {
        let detail =
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic";
        errors.push(field::forbidden(&at.child("uniqueItems"), detail));
    }
    let props = s.get("properties").and_then(Json::as_object);
    if let Some(ap) = s.get("additionalProperties") {
        let restricts = ap.as_bool() == Some(false) || ap.is_object();
        if props.is_some_and(|p| !p.is_empty()) && restricts {
            let detail = "additionalProperties and properties are mutual exclusive";
            errors.push(field::forbidden(&at.child("additionalProperties"), detail));
        }
        if ap.is_object() {
            node(ap, &at.child("additionalProperties"), errors);
        }
    }
    for (k, p) in props.into_iter().flatten() {
        node(p, &at.child("properties").key(k), errors);
    }
    if let Some(not) = s.get("not") {
        node(not, &at.child("not"), errors);
    }
    for junctor in ["allOf", "oneOf", "anyOf"] {
        let list = s.get(junctor).and_then(Json::as_array);
        for (i, x) in list.into_iter().flatten().enumerate() {
            node(x, &at.child(junctor).index(i), errors);
        }
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        node(items, &at.child("items"), errors);
    }
    list_types(s, at, errors);
    rules(s, at, errors);
}

/// `specStandardValidatorV3.validate`: what OpenAPI v3 allows and kube does not.
fn standard(s: &Json, at: &Path, errors: &mut ErrorList) {
    for (k, detail) in [
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ] {
        if s.get(k).is_some() {
            errors.push(field::forbidden(&at.child(k), detail));
        }
    }
    if str_of(s, "type") == Some("null") {
        let detail = "type cannot be set to null, use nullable as an alternative";
        errors.push(field::forbidden(&at.child("type"), detail));
    }
    if s.get("items").is_some_and(Json::is_array) {
        let detail = "items must be a schema object and not an array";
        errors.push(field::forbidden(&at.child("items"), detail));
    }
}

fn list_types(s: &Json, at: &Path, errors: &mut ErrorList) {
    let list_type = str_of(s, "x-kubernetes-list-type");
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Json::as_array)
        .map(|k| k.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let items = s.get("items").filter(|i| i.is_object());
    let lt_at = at.child("x-kubernetes-list-type");
    if let Some(lt) = list_type {
        if !matches!(lt, "atomic" | "set" | "map") {
            errors.push(field::not_supported(&lt_at, lt, &["atomic", "set", "map"]));
        }
    }
    if let (Some("set"), Some(is)) = (list_type, items) {
        let atomic_detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
        match str_of(is, "type") {
            Some("array")
                if str_of(is, "x-kubernetes-list-type").is_some_and(|t| t != "atomic") =>
            {
                let v = str_of(is, "x-kubernetes-list-type");
                errors.push(field::invalid(
                    &at.child("items").child("x-kubernetes-list-type"),
                    v,
                    atomic_detail,
                ));
            }
            Some("object") if str_of(is, "x-kubernetes-map-type") != Some("atomic") => {
                let v = str_of(is, "x-kubernetes-list-type");
                errors.push(field::invalid(
                    &at.child("items").child("x-kubernetes-map-type"),
                    v,
                    atomic_detail,
                ));
            }
            _ => {}
        }
    }
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errors.push(field::required(&lt_at, detail)),
            Some("map") => {}
            Some(other) => errors.push(field::invalid(&lt_at, other, detail)),
        }
    }
    if list_type != Some("map") {
        if let (Some("set"), Some(true)) = (
            list_type,
            items
                .and_then(|i| i.get("nullable"))
                .and_then(Json::as_bool),
        ) {
            let detail = "cannot be nullable when x-kubernetes-list-type is set";
            errors.push(field::forbidden(
                &at.child("items").child("nullable"),
                detail,
            ));
        }
        return;
    }
    let keys_at = at.child("x-kubernetes-list-map-keys");
    if keys.is_empty() {
        let detail = "must not be empty if x-kubernetes-list-type is map";
        errors.push(field::required(&keys_at, detail));
    }
    let Some(is) = items else {
        let detail = "must have a schema if x-kubernetes-list-type is map";
        errors.push(field::required(&at.child("items"), detail));
        return;
    };
    let item_type = str_of(is, "type").unwrap_or("");
    if item_type != "object" {
        let detail = "must be object if parent array's x-kubernetes-list-type is map";
        errors.push(field::invalid(
            &at.child("items").child("type"),
            item_type,
            detail,
        ));
        return;
    }
    let keys_json = s
        .get("x-kubernetes-list-map-keys")
        .cloned()
        .unwrap_or(Json::Null);
    let required: Vec<&str> = is
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let mut seen = Vec::new();
    for k in &keys {
        let prop_at = at.child("items").child("properties").key(k);
        match is.get("properties").and_then(|p| p.get(*k)) {
            Some(p) => {
                if matches!(str_of(p, "type"), Some("array" | "object")) {
                    let detail =
                        "must be a scalar type if parent array's x-kubernetes-list-type is map";
                    errors.push(field::invalid(&prop_at.child("type"), item_type, detail));
                }
                if !required.contains(k) && p.get("default").is_none() {
                    let detail =
                        "this property is in x-kubernetes-list-map-keys, so it must have a \
                                  default or be a required property";
                    errors.push(field::required(&prop_at.child("default"), detail));
                }
                if p.get("nullable").and_then(Json::as_bool) == Some(true) {
                    let detail =
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable";
                    errors.push(field::forbidden(&prop_at.child("nullable"), detail));
                }
            }
            None => {
                let detail = "entries must all be names of item properties";
                errors.push(field::invalid(&keys_at, &keys_json, detail));
            }
        }
        if seen.contains(k) {
            errors.push(field::invalid(
                &keys_at,
                &keys_json,
                "must not contain duplicate entries",
            ));
        }
        seen.push(k);
    }
    if is.get("nullable").and_then(Json::as_bool) == Some(true) {
        let detail = "cannot be nullable when x-kubernetes-list-type is map";
        errors.push(field::forbidden(
            &at.child("items").child("nullable"),
            detail,
        ));
    }
}

/// The text of each `x-kubernetes-validations` entry (compiling is [`crate::cel_validation`]'s).
fn rules(s: &Json, at: &Path, errors: &mut ErrorList) {
    let list = s.get("x-kubernetes-validations").and_then(Json::as_array);
    for (i, r) in list.into_iter().flatten().enumerate() {
        let rat = at.child("x-kubernetes-validations").index(i);
        let rule = str_of(r, "rule").unwrap_or("").trim();
        let raw_message = str_of(r, "message").unwrap_or("");
        let message = raw_message.trim();
        let newline = |t: &str| t.contains(['\n', '\r']);
        if rule.is_empty() {
            errors.push(field::required(&rat.child("rule"), "rule is not specified"));
        } else if !raw_message.is_empty() && message.is_empty() {
            let detail = "message must be non-empty if specified";
            errors.push(field::invalid(&rat.child("message"), raw_message, detail));
        } else if newline(message) {
            let detail = "message must not contain line breaks";
            errors.push(field::invalid(&rat.child("message"), raw_message, detail));
        } else if newline(rule) && message.is_empty() {
            let detail = "message must be specified if rule contains line breaks";
            errors.push(field::required(&rat.child("message"), detail));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Json) -> Vec<String> {
        validate(&schema, &Path::new("s"))
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    /// Cases after `validation_test.go`'s list-type and rule cases, rewritten.
    #[test]
    fn list_types_and_rule_texts_follow_kube_s_rules() {
        let ok = json!({"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"],
                                "properties": {"name": {"type": "string"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}},
            "x-kubernetes-validations": [{"rule": "true"}]});
        assert_eq!(messages(ok), Vec::<String>::new());
        let got = messages(json!({"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name", "proto"],
                      "items": {"type": "object", "properties": {
                          "name": {"type": "string", "nullable": true}}}},
            "weird": {"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}},
            "keyed": {"type": "array", "x-kubernetes-list-map-keys": ["a"], "items": {"type": "object"}},
            "unique": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
            "ref": {"$ref": "#/x"}},
            "x-kubernetes-validations": [{"rule": " "}, {"rule": "a\n|| b"}, {"rule": "true", "message": "a\nb"}]}));
        for want in [
            "s.properties[ports].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            "s.properties[ports].items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            "s.properties[weird].x-kubernetes-list-type: Unsupported value: \"bag\": supported values: \"atomic\", \"set\", \"map\"",
            "s.properties[keyed].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty",
            "s.properties[unique].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "s.properties[ref].$ref: Forbidden: $ref is not supported",
            "s.x-kubernetes-validations[0].rule: Required value: rule is not specified",
            "s.x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks",
            "s.x-kubernetes-validations[2].message: Invalid value: \"a\\nb\": message must not contain line breaks",
        ] {
            assert!(got.iter().any(|g| g == want), "{want}\n{got:#?}");
        }
        assert!(
            got.iter().any(|g| g
                .starts_with("s.properties[ports].x-kubernetes-list-map-keys: Invalid value: ")
                && g.ends_with("entries must all be names of item properties")),
            "{got:#?}"
        );
    }
}

//! Schema validation of a custom resource (`apiextensions-apiserver/pkg/apiserver/validation/
//! validation.go`, `ValidateCustomResource` over kube-openapi's validator), with kube-openapi's
//! messages (`pkg/validation/errors/schema.go`) turned into field errors as
//! `kubeOpenAPIResultToFieldErrors` does:
//!
//! - a wrong type: `spec.replicas: Invalid value: "string": spec.replicas in body must be of
//!   type integer: "string"`;
//! - a missing required property: `spec.image: Required value`;
//! - `enum`: `spec.mode: Unsupported value: "x": supported values: "a", "b"`;
//! - `maxLength`: kube's `Too long`; `maxItems`, `maxProperties`: `Too many`;
//! - the others (`minimum`, `maximum`, `multipleOf`, `minLength`, `pattern`, `minItems`,
//!   `uniqueItems`, `minProperties`, `format`): `Invalid value: <value>: <path> in body …`.
//!
//! Paths print map keys after a dot and list items in brackets (`spec.ports[0].port`).
//! `anyOf`, `oneOf`, `allOf` and `not` add kube-openapi's composite errors
//! (`<nil>: Invalid value: "": spec.x must validate at least one schema (anyOf)`).

use crate::structural::Structural;
use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, FieldError, Path};

/// Validate `obj` against `schema` (the root of a custom resource's schema). Errors: every
/// violation, in the order found.
pub fn validate(obj: &Json, schema: &Structural) -> ErrorList {
    let mut errors = Vec::new();
    validate_node(obj, schema, "", None, &mut errors);
    errors
}

/// Validate an update of `old` to `obj`, with kube's ratcheting (`CRDValidationRatcheting`):
/// a value equal to the old value it corresponds to (by property, map key, or a `map` list's
/// keys) is not validated again, so a field written before a rule existed stays writable.
pub fn validate_update(obj: &Json, old: &Json, schema: &Structural) -> ErrorList {
    let mut errors = Vec::new();
    validate_node(obj, schema, "", Some(old), &mut errors);
    errors
}

/// [`validate`], the errors' paths under `prefix` (kube's `ValidateCustomResource` with a
/// field path: a schema's `default` is validated at `….default`).
pub fn validate_under(obj: &Json, schema: &Structural, prefix: &Path) -> ErrorList {
    let mut errors = validate(obj, schema);
    for e in &mut errors {
        e.field = match e.field.as_str() {
            "" | "<nil>" => prefix.to_string(),
            f => prefix.child(f).to_string(),
        };
    }
    errors
}

/// kube-openapi's name for a JSON value's type (`swag`): `integer` for a whole number.
fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// kube-openapi's subject: `spec.replicas in body`, or `in body` for the value itself.
fn in_body(name: &str) -> String {
    if name.is_empty() {
        "in body".to_string()
    } else {
        format!("{name} in body")
    }
}

fn at(name: &str) -> Path {
    Path::new(name)
}

/// `Invalid value: <value>: <name> in body <message>`.
fn invalid(name: &str, value: &Json, message: String) -> FieldError {
    field::invalid(&at(name), value, format!("{} {message}", in_body(name)))
}

fn child(name: &str, key: &str) -> String {
    if name.is_empty() {
        key.to_string()
    } else {
        format!("{name}.{key}")
    }
}

fn validate_node(v: &Json, s: &Structural, name: &str, old: Option<&Json>, errors: &mut ErrorList) {
    if old == Some(v) {
        return;
    }
    if v.is_null() {
        if !s.nullable && !s.type_.is_empty() {
            let msg = format!("{} must be of type {}: \"null\"", in_body(name), s.type_);
            errors.push(field::type_invalid(&at(name), "null", msg));
        }
        return;
    }
    if s.int_or_string {
        if !matches!(json_type(v), "integer" | "string") {
            let msg = format!(
                "{} must be of type integer,string: {:?}",
                in_body(name),
                json_type(v)
            );
            errors.push(field::type_invalid(&at(name), json_type(v), msg));
            return;
        }
    } else if !s.type_.is_empty() {
        let t = json_type(v);
        let fits = t == s.type_ || (s.type_ == "number" && t == "integer");
        if !fits {
            let msg = format!("{} must be of type {}: {t:?}", in_body(name), s.type_);
            errors.push(field::type_invalid(&at(name), t, msg));
            return;
        }
    }
    let raw = &s.raw;
    let num = |k: &str| raw.get(k).and_then(Json::as_f64);
    let count = |k: &str| raw.get(k).and_then(Json::as_u64);
    if let Some(values) = raw.get("enum").and_then(Json::as_array) {
        if !values.contains(v) {
            let shown: Vec<String> = values
                .iter()
                .map(|x| match x {
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            errors.push(field::not_supported(&at(name), v, &shown));
        }
    }
    match v {
        Json::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let exclusive = |k: &str| raw.get(k).and_then(Json::as_bool).unwrap_or(false);
            if let Some(max) = num("maximum") {
                let exc = exclusive("exclusiveMaximum");
                if x > max || (exc && x == max) {
                    let rel = if exc {
                        "less than"
                    } else {
                        "less than or equal to"
                    };
                    errors.push(invalid(name, v, format!("should be {rel} {max}")));
                }
            }
            if let Some(min) = num("minimum") {
                let exc = exclusive("exclusiveMinimum");
                if x < min || (exc && x == min) {
                    let rel = if exc {
                        "greater than"
                    } else {
                        "greater than or equal to"
                    };
                    errors.push(invalid(name, v, format!("should be {rel} {min}")));
                }
            }
            if let Some(m) = num("multipleOf").filter(|m| *m > 0.0) {
                let q = x / m;
                if (q - q.round()).abs() > 1e-9 {
                    errors.push(invalid(name, v, format!("should be a multiple of {m}")));
                }
            }
        }
        Json::String(text) => {
            let len = text.chars().count() as u64;
            if let Some(max) = count("maxLength").filter(|max| len > *max) {
                errors.push(field::too_long(&at(name), v, max as usize));
            }
            if let Some(min) = count("minLength").filter(|min| len < *min) {
                errors.push(invalid(
                    name,
                    v,
                    format!("should be at least {min} chars long"),
                ));
            }
            if let Some(re) = &s.pattern {
                if !re.0.is_match(text) {
                    let msg = format!("should match '{}'", re.0.as_str());
                    errors.push(invalid(name, v, msg));
                }
            }
            if !s.format.is_empty() && !crate::formats::is_valid(&s.format, text) {
                let msg = format!("{} must be of type {}: {text:?}", in_body(name), s.format);
                errors.push(field::type_invalid(&at(name), v, msg));
            }
        }
        Json::Array(items) => {
            let n = items.len() as u64;
            if let Some(max) = count("maxItems").filter(|max| n > *max) {
                errors.push(field::too_many(&at(name), n as usize, max as usize));
            }
            if let Some(min) = count("minItems").filter(|min| n < *min) {
                errors.push(invalid(
                    name,
                    v,
                    format!("should have at least {min} items"),
                ));
            }
            let unique = raw.get("uniqueItems").and_then(Json::as_bool) == Some(true);
            if unique
                && items
                    .iter()
                    .enumerate()
                    .any(|(i, x)| items[..i].contains(x))
            {
                errors.push(invalid(name, v, "shouldn't contain duplicates".to_string()));
            }
            if let Some(item) = s.items.as_deref() {
                for (i, x) in items.iter().enumerate() {
                    let old_x = crate::cel_validation::correlated_item(s, x, old);
                    validate_node(x, item, &format!("{name}[{i}]"), old_x, errors);
                }
            }
        }
        Json::Object(fields) => {
            let n = fields.len() as u64;
            if let Some(max) = count("maxProperties").filter(|max| n > *max) {
                errors.push(field::too_many(&at(name), n as usize, max as usize));
            }
            if let Some(min) = count("minProperties").filter(|min| n < *min) {
                errors.push(invalid(
                    name,
                    v,
                    format!("should have at least {min} properties"),
                ));
            }
            if let Some(required) = raw.get("required").and_then(Json::as_array) {
                for r in required.iter().filter_map(Json::as_str) {
                    if !fields.contains_key(r) {
                        errors.push(field::required(&at(&child(name, r)), ""));
                    }
                }
            }
            for (k, x) in fields {
                if let Some(prop) = s.property(k) {
                    let old_x = old.and_then(|o| o.get(k));
                    validate_node(x, prop, &child(name, k), old_x, errors);
                }
            }
        }
        Json::Bool(_) | Json::Null => {}
    }
    junctors(v, s, name, errors);
}

/// kube-openapi's `anyOf`, `oneOf`, `allOf` and `not` (`schema_props.go`). Their own errors
/// are composite: kube reports them at no path (`<nil>: Invalid value: "": …`), beside the
/// failures of the closest alternative.
fn junctors(v: &Json, s: &Structural, name: &str, errors: &mut ErrorList) {
    let results = |alternatives: &[Structural]| -> Vec<ErrorList> {
        alternatives
            .iter()
            .map(|sub| {
                let mut e = Vec::new();
                validate_node(v, sub, name, None, &mut e);
                e
            })
            .collect()
    };
    let composite = |msg: String| field::invalid(&Path::new("<nil>"), "", msg);
    let closest = |rs: &[ErrorList]| {
        rs.iter()
            .min_by_key(|r| r.len())
            .cloned()
            .unwrap_or_default()
    };
    let any_of = results(&s.any_of);
    if !any_of.is_empty() && any_of.iter().all(|r| !r.is_empty()) {
        errors.push(composite(format!(
            "{name} must validate at least one schema (anyOf)"
        )));
        errors.extend(closest(&any_of));
    }
    let one_of = results(&s.one_of);
    if !one_of.is_empty() {
        let valid = one_of.iter().filter(|r| r.is_empty()).count();
        if valid != 1 {
            let more = match valid {
                0 => "Found none valid".to_string(),
                n => format!("Found {n} valid alternatives"),
            };
            errors.push(composite(format!(
                "{name} must validate one and only one schema (oneOf). {more}"
            )));
            if valid == 0 {
                errors.extend(closest(&one_of));
            }
        }
    }
    let all_of = results(&s.all_of);
    let valid = all_of.iter().filter(|r| r.is_empty()).count();
    if valid != all_of.len() {
        let none = if valid == 0 { ". None validated" } else { "" };
        errors.push(composite(format!(
            "{name} must validate all the schemas (allOf){none}"
        )));
        errors.extend(all_of.into_iter().flatten());
    }
    if let Some(not) = &s.not {
        let mut e = Vec::new();
        validate_node(v, not, name, None, &mut e);
        if e.is_empty() {
            errors.push(composite(format!(
                "{name} must not validate the schema (not)"
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(obj: Json, schema: Json) -> Vec<String> {
        validate(&obj, &Structural::from_json(&schema))
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    /// Cases after `apiserver/validation/validation_test.go`, rewritten; the texts are kube's.
    #[test]
    fn violations_read_as_kube_reports_them() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "required": ["image"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number", "exclusiveMaximum": true, "maximum": 1, "multipleOf": 0.25},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "name": {"type": "string", "maxLength": 5, "minLength": 2, "pattern": "^[a-z]+$"},
                "email": {"type": "string", "format": "email"},
                "tags": {"type": "array", "maxItems": 2, "uniqueItems": true,
                         "items": {"type": "string"}},
                "port": {"x-kubernetes-int-or-string": true},
                "labels": {"type": "object", "maxProperties": 1,
                           "additionalProperties": {"type": "string"}},
                "note": {"type": "string", "nullable": true},
                "image": {"type": "string"}}}}});
        let errors = messages(
            json!({"spec": {"replicas": 20, "ratio": 1, "mode": "x", "name": "ABCDEFG",
                            "email": "nope", "tags": ["a", "a", "b"], "port": true,
                            "labels": {"a": "1", "b": 2}, "note": null}}),
            schema.clone(),
        );
        for want in [
            "spec.image: Required value",
            "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
            "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1",
            "spec.mode: Unsupported value: \"x\": supported values: \"a\", \"b\"",
            "spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'",
            "spec.email: Invalid value: \"nope\": spec.email in body must be of type email: \"nope\"",
            "spec.tags: Invalid value: [\"a\",\"a\",\"b\"]: spec.tags in body shouldn't contain duplicates",
            "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
            "spec.labels.b: Invalid value: \"integer\": spec.labels.b in body must be of type string: \"integer\"",
        ] {
            assert!(errors.iter().any(|e| e == want), "{want}\n{errors:#?}");
        }
        assert!(
            errors.iter().any(|e| e.starts_with("spec.name: Too long")),
            "{errors:#?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("spec.tags: Too many: 3")),
            "{errors:#?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("spec.labels: Too many: 2")),
            "{errors:#?}"
        );
        // A valid object has no errors; nullable null is fine, non-nullable null is a type error.
        let ok = json!({"spec": {"replicas": 3, "ratio": 0.5, "mode": "a", "name": "abc",
                                 "email": "a@b.c", "tags": ["a"], "port": "80%", "image": "x",
                                 "note": null}});
        assert_eq!(messages(ok, schema.clone()), Vec::<String>::new());
        let errors = messages(json!({"spec": {"image": null}}), schema);
        assert_eq!(
            errors,
            ["spec.image: Invalid value: \"null\": spec.image in body must be of type string: \"null\""]
        );
    }

    #[test]
    fn unchanged_values_are_not_validated_again_on_update() {
        let schema = Structural::from_json(&json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 3},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["n"],
                      "items": {"type": "object", "properties": {
                          "n": {"type": "string"}, "p": {"type": "integer", "maximum": 10}}}}}}));
        let old = json!({"name": "toolong", "ports": [{"n": "a", "p": 99}]});
        // The old, invalid values ratchet; a new invalid value does not.
        let new = json!({"name": "toolong", "ports": [{"n": "b", "p": 1}, {"n": "a", "p": 99}]});
        assert!(validate_update(&new, &old, &schema).is_empty());
        let new = json!({"name": "toolong2", "ports": [{"n": "a", "p": 98}]});
        assert_eq!(validate_update(&new, &old, &schema).len(), 2);
    }

    #[test]
    fn junctors_add_kube_openapi_s_composite_errors() {
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "string", "anyOf": [{"pattern": "^[0-9]+$"}, {"enum": ["auto"]}]},
            "mode": {"type": "string", "oneOf": [{"enum": ["a"]}, {"pattern": "^a"}]},
            "name": {"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3}]},
            "tag": {"type": "string", "not": {"enum": ["latest"]}}}});
        let ok = json!({"size": "12", "mode": "ab", "name": "abc", "tag": "v1"});
        assert_eq!(messages(ok, schema.clone()), Vec::<String>::new());
        let got = messages(
            json!({"size": "big", "mode": "a", "name": "abcd", "tag": "latest"}),
            schema,
        );
        for want in [
            "<nil>: Invalid value: \"\": size must validate at least one schema (anyOf)",
            "<nil>: Invalid value: \"\": mode must validate one and only one schema (oneOf). Found 2 valid alternatives",
            "<nil>: Invalid value: \"\": name must validate all the schemas (allOf)",
            "<nil>: Invalid value: \"\": tag must not validate the schema (not)",
        ] {
            assert!(got.iter().any(|g| g == want), "{want}\n{got:#?}");
        }
        assert!(
            got.iter().any(|g| g.starts_with("name: Too long")),
            "{got:#?}"
        );
    }
}

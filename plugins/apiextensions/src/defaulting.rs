//! Defaulting: a schema's `default`s filled into a custom resource, on write and when a stored
//! object is read (`apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go`,
//! `Default`), after the `null`s the schema neither allows nor defaults are dropped
//! (`prunenulls.go`, `PruneNonNullableNullsWithoutDefaults`).
//!
//! - A property that is missing, or `null` where the schema is not `nullable`, takes a copy of
//!   its schema's `default`; so does a `null` list item or map value.
//! - Defaults apply top-down: a default that is an object is itself defaulted inside.

use crate::structural::Structural;
use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};

/// The errors of a schema's `default`s (`defaulting/validation.go`, `ValidateDefaults`): each
/// must be pruned already (`must not have unknown fields`) and valid against its own schema,
/// with the errors at `….default`. Defaults inside a resource's `metadata`, `apiVersion` and
/// `kind` are not checked here; `additionalProperties` may have none.
pub fn validate_defaults(s: &Structural, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    let mut root = s.clone();
    root.embedded_resource = true;
    validate_defaults_node(&root, at, false, &mut errors);
    errors
}

fn validate_defaults_node(s: &Structural, at: &Path, inside_meta: bool, errors: &mut ErrorList) {
    if let (Some(d), false) = (&s.default, inside_meta) {
        let mut pruned = d.clone();
        crate::pruning::prune(&mut pruned, Some(s), s.embedded_resource);
        if pruned != *d {
            let detail = "must not have unknown fields";
            errors.push(field::invalid(&at.child("default"), d, detail));
        }
        errors.extend(crate::validation::validate_under(
            d,
            s,
            &at.child("default"),
        ));
    }
    if let Some(items) = &s.items {
        validate_defaults_node(items, &at.child("items"), inside_meta, errors);
    }
    for (k, p) in &s.properties {
        let meta = inside_meta
            || (s.embedded_resource && matches!(k.as_str(), "metadata" | "apiVersion" | "kind"));
        validate_defaults_node(p, &at.child("properties").key(k), meta, errors);
    }
}

/// Drop from `x` the `null`s `s` neither allows (`nullable`) nor defaults.
pub fn prune_non_nullable_nulls_without_defaults(x: &mut Json, s: &Structural) {
    match x {
        Json::Object(fields) => fields.retain(|k, v| {
            let Some(prop) = s.property(k) else {
                return true;
            };
            if v.is_null() && !prop.nullable && prop.default.is_none() {
                return false;
            }
            prune_non_nullable_nulls_without_defaults(v, prop);
            true
        }),
        Json::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                items
                    .iter_mut()
                    .for_each(|v| prune_non_nullable_nulls_without_defaults(v, item));
            }
        }
        _ => {}
    }
}

fn is_non_nullable_null(v: &Json, s: &Structural) -> bool {
    v.is_null() && !s.nullable
}

/// Fill `s`'s defaults into `x`.
pub fn default(x: &mut Json, s: &Structural) {
    match x {
        Json::Object(fields) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else {
                    continue;
                };
                match fields.get(k) {
                    Some(v) if !is_non_nullable_null(v, prop) => {}
                    _ => {
                        fields.insert(k.clone(), d.clone());
                    }
                }
            }
            for (k, v) in fields.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default(v, prop);
                } else if let Some(ap) = s.additional_properties.as_ref().and_then(|a| a.schema()) {
                    if let (true, Some(d)) = (is_non_nullable_null(v, ap), &ap.default) {
                        *v = d.clone();
                    }
                    default(v, ap);
                }
            }
        }
        Json::Array(items) => {
            let Some(item) = s.items.as_deref() else {
                return;
            };
            for v in items.iter_mut() {
                if let (true, Some(d)) = (is_non_nullable_null(v, item), &item.default) {
                    *v = d.clone();
                }
                default(v, item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Cases after `defaulting/validation_test.go`, rewritten.
    #[test]
    fn defaults_must_be_pruned_and_valid() {
        let s = Structural::from_json(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "default": {"replicas": "one", "extra": 1},
                     "properties": {"replicas": {"type": "integer", "default": 20, "maximum": 10}}}}}));
        let got: Vec<String> = validate_defaults(&s, &Path::new("schema"))
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect();
        assert_eq!(
            got,
            [
                "schema.properties[spec].default: Invalid value: {\"extra\":1,\"replicas\":\"one\"}: must not have unknown fields",
                "schema.properties[spec].default.replicas: Invalid value: \"string\": replicas in body must be of type integer: \"string\"",
                "schema.properties[spec].properties[replicas].default: Invalid value: 20: in body should be less than or equal to 10",
            ]
        );
    }

    /// Cases after `defaulting/algorithm_test.go` and `prunenulls_test.go`, rewritten.
    #[test]
    fn defaults_fill_missing_and_null_values_top_down() {
        let s = Structural::from_json(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "default": 1},
                "mode": {"type": "string", "default": "auto"},
                "note": {"type": "string", "nullable": true, "default": "n"},
                "dropped": {"type": "string"},
                "kept": {"type": "string", "nullable": true},
                "ports": {"type": "array", "items": {"type": "object", "default": {"port": 80},
                    "properties": {"port": {"type": "integer"},
                                   "protocol": {"type": "string", "default": "TCP"}}}},
                "limits": {"type": "object", "additionalProperties": {"type": "string",
                    "default": "1"}}}}}}));
        let mut obj = json!({"metadata": {"name": "a"}});
        default(&mut obj, &s);
        // `spec` defaults to {}, and is then defaulted inside.
        assert_eq!(
            obj["spec"],
            json!({"replicas": 1, "mode": "auto", "note": "n"})
        );

        let mut obj = json!({"spec": {"mode": null, "note": null, "dropped": null, "kept": null,
                                      "ports": [null, {"port": 8080}],
                                      "limits": {"cpu": null, "memory": "2"}}});
        prune_non_nullable_nulls_without_defaults(&mut obj, &s);
        default(&mut obj, &s);
        assert_eq!(
            obj["spec"],
            json!({"replicas": 1, "mode": "auto", "note": null, "kept": null,
                   "ports": [{"port": 80, "protocol": "TCP"}, {"port": 8080, "protocol": "TCP"}],
                   "limits": {"cpu": "1", "memory": "2"}})
        );
    }
}

//! The CEL type of a value a structural OpenAPI v3 schema describes: kube's `SchemaDeclType`
//! (`k8s.io/apiserver/pkg/cel/common/schemas.go`) with the names `DeclType.MaybeAssignTypeName`
//! gives object types (`k8s.io/apiserver/pkg/cel/types.go`).
//!
//! | schema | type |
//! |---|---|
//! | `x-kubernetes-int-or-string` | `dyn` |
//! | `array` with `items` | `list(items)`, bounded by `maxItems` or by how many of the smallest item fit a request |
//! | `object` with `additionalProperties` | `map(string, additionalProperties)`, bounded by `maxProperties` or the same estimate |
//! | `object` | an object type of the exposed `properties`, names escaped ([`crate::escaping::escape`]); `x-kubernetes-preserve-unknown-fields` exposes no more than those |
//! | `string` | `string`; format `byte`: `bytes`; `duration`: `google.protobuf.Duration`; `date`, `date-time`: `google.protobuf.Timestamp` |
//! | `boolean`, `number`, `integer` | `bool`, `double`, `int` |
//! | anything else (no `type`) | not exposed: `None` |
//!
//! The root of a resource, and of an `x-kubernetes-embedded-resource`, always has `apiVersion`,
//! `kind` and `metadata.name`, `metadata.generateName` (`WithTypeAndObjectMeta`).

use crate::escaping::escape;
use crate::limits::MAX_REQUEST_SIZE_BYTES;
use crate::types::{Bound, Field, ObjectType, Type};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::Arc;

// Sizes of the smallest serialized values (`types.go`), which bound how many fit a request.
const MIN_STRING_SIZE: u64 = 2;
const MIN_BOOL_SIZE: u64 = 4;
const MIN_NUMBER_SIZE: u64 = 1;
const MIN_DURATION_SIZE_JSON: u64 = 3;
const JSON_DATE_SIZE: u64 = 12;
const MIN_DATETIME_SIZE_JSON: u64 = 21;

/// The CEL type of values of `schema`, its object types named from `name` (kube names the
/// root of a CRD's schema `selfType<n>`), or `None` when the schema is not exposed to CEL.
/// `resource_root`: the schema is a resource's (adds `apiVersion`, `kind`, `metadata`).
pub fn schema_type(schema: &Json, name: &str, resource_root: bool) -> Option<Type> {
    decl(schema, name, resource_root).map(|(t, _)| t)
}

/// The type and the smallest serialized size of a value of `s`.
fn decl(s: &Json, name: &str, resource_root: bool) -> Option<(Type, u64)> {
    if flag(s, "x-kubernetes-int-or-string") {
        return Some((Type::Dyn, 1));
    }
    let with_meta;
    let s = if resource_root {
        with_meta = with_type_and_object_meta(s);
        &with_meta
    } else {
        s
    };
    let int = |k: &str| s.get(k).and_then(Json::as_i64).map(|v| v.max(0) as u64);
    match s.get("type").and_then(Json::as_str)? {
        "array" => {
            let items = s.get("items")?;
            let (elem, min) = decl(
                items,
                &format!("{name}.@idx"),
                flag(items, "x-kubernetes-embedded-resource"),
            )?;
            let max = int("maxItems").unwrap_or((MAX_REQUEST_SIZE_BYTES - 2) / (min + 1));
            Some((Type::List(Box::new(elem), Bound(Some(max))), 2))
        }
        "object" => {
            if let Some(props) = s.get("additionalProperties").filter(|p| p.is_object()) {
                let (value, min) = decl(
                    props,
                    &format!("{name}.@elem"),
                    flag(props, "x-kubernetes-embedded-resource"),
                )?;
                let max = int("maxProperties").unwrap_or((MAX_REQUEST_SIZE_BYTES - 2) / (min + 6));
                let map = Type::Map(Box::new(Type::STRING), Box::new(value), Bound(Some(max)));
                return Some((map, 2));
            }
            let required: Vec<&str> = s
                .get("required")
                .and_then(Json::as_array)
                .map(|r| r.iter().filter_map(Json::as_str).collect())
                .unwrap_or_default();
            let mut fields = BTreeMap::new();
            // An object serializes at least as `{}`, plus its required properties without a
            // default (defaults are filled in on the server).
            let mut min_size = 2;
            let empty = serde_json::Map::new();
            let props = s
                .get("properties")
                .and_then(Json::as_object)
                .unwrap_or(&empty);
            for (prop_name, prop) in props {
                let is_required = required.contains(&prop_name.as_str());
                let field_type_name = format!("{name}.{prop_name}");
                let embedded = flag(prop, "x-kubernetes-embedded-resource");
                let Some((ty, min)) = decl(prop, &field_type_name, embedded) else {
                    continue;
                };
                if is_required && prop.get("default").is_none() {
                    min_size += prop_name.len() as u64 + min + 4;
                }
                if let Some(escaped) = escape(prop_name) {
                    let field = Field {
                        ty,
                        required: is_required,
                    };
                    fields.insert(escaped, field);
                }
            }
            let object = ObjectType {
                name: name.to_string(),
                fields,
            };
            Some((Type::Object(Arc::new(object)), min_size))
        }
        "string" => {
            let format = s.get("format").and_then(Json::as_str).unwrap_or("");
            let per_request = MAX_REQUEST_SIZE_BYTES - 2;
            let max_length = int("maxLength");
            Some(match format {
                "byte" => (
                    Type::Bytes(Bound(Some(max_length.unwrap_or(per_request)))),
                    MIN_STRING_SIZE,
                ),
                "duration" => (Type::Duration, MIN_DURATION_SIZE_JSON),
                "date" => (Type::Timestamp, JSON_DATE_SIZE),
                "date-time" => (Type::Timestamp, MIN_DATETIME_SIZE_JSON),
                _ => {
                    let enum_max = s.get("enum").and_then(Json::as_array).map(|values| {
                        values
                            .iter()
                            .filter_map(Json::as_str)
                            .map(|v| v.len() as u64)
                            .max()
                            .unwrap_or(0)
                    });
                    // maxLength counts code points; a code point is up to 4 bytes.
                    let max = max_length
                        .map(|l| l * 4)
                        .or(enum_max)
                        .unwrap_or(per_request);
                    (Type::String(Bound(Some(max))), MIN_STRING_SIZE)
                }
            })
        }
        "boolean" => Some((Type::Bool, MIN_BOOL_SIZE)),
        "number" => Some((Type::Double, MIN_NUMBER_SIZE)),
        "integer" => Some((Type::Int, MIN_NUMBER_SIZE)),
        _ => None,
    }
}

fn flag(s: &Json, name: &str) -> bool {
    s.get(name).and_then(Json::as_bool).unwrap_or(false)
}

/// kube's `WithTypeAndObjectMeta`: `s` with string `kind` and `apiVersion` and a `metadata`
/// object of string `name` and `generateName`, unless it already has them.
fn with_type_and_object_meta(s: &Json) -> Json {
    let is =
        |v: Option<&Json>, t: &str| v.and_then(|v| v.get("type")).and_then(Json::as_str) == Some(t);
    let props = s.get("properties");
    let prop = |k: &str| props.and_then(|p| p.get(k));
    let meta_prop = |k: &str| {
        prop("metadata")
            .and_then(|m| m.get("properties"))
            .and_then(|p| p.get(k))
    };
    if is(prop("kind"), "string")
        && is(prop("apiVersion"), "string")
        && is(prop("metadata"), "object")
        && is(meta_prop("name"), "string")
        && is(meta_prop("generateName"), "string")
    {
        return s.clone();
    }
    let mut result = s.clone();
    let string = json!({"type": "string"});
    let mut props = props.cloned().unwrap_or_else(|| json!({}));
    props["kind"] = string.clone();
    props["apiVersion"] = string.clone();
    props["metadata"] =
        json!({"type": "object", "properties": {"name": string, "generateName": string}});
    result["properties"] = props;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Expression, Variables};

    fn crd_schema() -> Json {
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "required": ["replicas"],
        "properties": {
            "replicas": {"type": "integer"},
            "image": {"type": "string", "maxLength": 64},
            "mode": {"type": "string", "enum": ["a", "bbb"]},
            "port": {"x-kubernetes-int-or-string": true},
            "tags": {"type": "array", "items": {"type": "string"}},
            "limits": {"type": "object", "maxProperties": 8,
                       "additionalProperties": {"type": "string"}},
            "timeout": {"type": "string", "format": "duration"},
            "since": {"type": "string", "format": "date-time"},
            "cert": {"type": "string", "format": "byte"},
            "x-y": {"type": "boolean"},
            "unknown": {"x-kubernetes-preserve-unknown-fields": true},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true}
        }}}})
    }

    #[test]
    fn a_crd_schema_gives_kube_types_and_bounds() {
        let t = schema_type(&crd_schema(), "selfType", true).unwrap();
        let Type::Object(root) = &t else {
            panic!("{t}")
        };
        assert!(root.fields.contains_key("apiVersion") && root.fields.contains_key("metadata"));
        let Type::Object(spec) = &root.fields["spec"].ty else {
            panic!()
        };
        assert_eq!(spec.name, "selfType.spec");
        assert!(spec.fields["replicas"].required);
        let ty = |f: &str| spec.fields[f].ty.clone();
        assert_eq!(ty("image").bound(), Some(256));
        assert_eq!(ty("mode").bound(), Some(3));
        assert_eq!(ty("port"), Type::Dyn);
        // (3 MiB - 2) / (2 + 1): the smallest string item is `""` and a comma.
        assert_eq!(ty("tags").bound(), Some((3 * 1024 * 1024 - 2) / 3));
        assert_eq!(ty("limits").to_string(), "map(string, string)");
        assert_eq!(ty("limits").bound(), Some(8));
        assert_eq!(ty("timeout"), Type::Duration);
        assert_eq!(ty("since"), Type::Timestamp);
        assert_eq!(ty("cert"), Type::BYTES);
        assert!(spec.fields.contains_key("x__dash__y"));
        assert!(!spec.fields.contains_key("unknown"));
        let Type::Object(template) = ty("template") else {
            panic!()
        };
        assert_eq!(
            template.fields.keys().collect::<Vec<_>>(),
            ["apiVersion", "kind", "metadata"]
        );
    }

    #[test]
    fn rules_check_against_the_schema() {
        let t = schema_type(&crd_schema(), "selfType", true).unwrap();
        let vars = Variables::new().with("self", t);
        let check = |rule: &str| {
            Expression::compile_checked(rule, &vars)
                .map(|_| ())
                .map_err(|e| e.0)
        };
        for ok in [
            "self.spec.replicas >= 0",
            "self.metadata.name.startsWith('a')",
            "self.spec.x__dash__y || self.spec.limits.all(k, self.spec.limits[k] != '')",
            "type(self.spec.port) == int ? self.spec.port > 0 : self.spec.port.endsWith('%')",
            "self.spec.timeout < duration('1h') && self.spec.since < timestamp('2030-01-01T00:00:00Z')",
            "self.spec.template.kind == 'Pod'",
        ] {
            check(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for (bad, want) in [
            ("self.spec.unknown == 1", "undefined field 'unknown'"),
            ("self.spec.template.spec == 1", "undefined field 'spec'"),
            (
                "self.spec.replicas == 'x'",
                "found no matching overload for '_==_' applied to '(int, string)'",
            ),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
        // Evaluated, the object's values take the schema's shape: escaped names, formats.
        let rule = "self.spec.x__dash__y && self.spec.timeout < duration('1h') \
                    && self.spec.cert == b'hi'";
        let e = Expression::compile_checked(rule, &vars);
        let e = e.unwrap_or_else(|e| panic!("{e}"));
        let obj = json!({"spec": {"replicas": 1, "x-y": true, "timeout": "30m", "cert": "aGk=",
                                  "unknown": {"a": 1}}});
        assert_eq!(e.evaluate(&[("self", &obj)]), Ok(cel::Value::Bool(true)));
    }
}

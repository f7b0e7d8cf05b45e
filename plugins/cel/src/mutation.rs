//! The object types of a MutatingAdmissionPolicy's expressions, as kube declares them without
//! a schema (`k8s.io/apiserver/pkg/cel/mutation/dynamic/objects.go`, `mutation/jsonpatch.go`):
//!
//! - `Object{…}`, `Object.spec{…}`, `Object.spec.template{…}` …: an apply configuration and
//!   its nested objects, with any fields; the expression of an `ApplyConfiguration` mutation
//!   gives an `Object`. [`object_json`] turns it into JSON and checks what kube's
//!   `CheckTypeNamesMatchFieldPathNames` checks: each nested object is named by its field path
//!   from the root (`Object.spec{selector: Object.spec.wrong{}}` is refused);
//! - `JSONPatch{op, path, from, value}`: one RFC 6902 operation; a `JSONPatch` mutation's
//!   expression gives a list of them, which [`json_patch`] turns into the patch document.
//!
//! Compiled by [`crate::Expression::compile_mutation`]: checked with
//! [`crate::Variables::with_mutation_types`], then evaluated in an environment where each
//! struct name the expression uses is registered (the `cel` crate resolves struct literals by
//! exact name).

use cel::common::ast::{Expr, IdedExpr};
use cel::common::types::{CelString, Type as CelType};
use cel::common::value::{CowVal, Val};
use cel::{ExecutionError, StructType, Value};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// The root object type's name.
pub const OBJECT: &str = "Object";
/// The JSON patch operation type's name.
pub const JSON_PATCH: &str = "JSONPatch";

/// Which mutation type a struct name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructKind {
    Object,
    JsonPatch,
}

/// The mutation type `name` names, if any: `Object`, `Object.<field>…`, `JSONPatch`.
pub fn struct_kind(name: &str) -> Option<StructKind> {
    if name == JSON_PATCH {
        Some(StructKind::JsonPatch)
    } else if name == OBJECT
        || name
            .strip_prefix("Object.")
            .is_some_and(|rest| !rest.is_empty() && rest.split('.').all(|p| !p.is_empty()))
    {
        Some(StructKind::Object)
    } else {
        None
    }
}

/// The struct type names `e` constructs.
pub fn struct_names(e: &IdedExpr) -> BTreeSet<String> {
    fn walk(e: &IdedExpr, names: &mut BTreeSet<String>) {
        if let Expr::Struct(s) = &e.expr {
            names.insert(s.type_name.clone());
        }
        crate::checker::children(e, &mut |c| walk(c, names));
    }
    let mut names = BTreeSet::new();
    walk(e, &mut names);
    names
}

/// A mutation type, constructible by its name.
pub struct MutationType {
    r#type: CelType,
    kind: StructKind,
}

impl MutationType {
    /// The type named `name` ([`struct_kind`] must know it).
    pub fn new(name: &str) -> Option<MutationType> {
        Some(MutationType {
            r#type: CelType::new_struct(name.to_string()),
            kind: struct_kind(name)?,
        })
    }
}

impl StructType for MutationType {
    fn get_type(&self) -> &CelType {
        &self.r#type
    }

    fn new_value<'b, 'v>(
        &self,
        fields: BTreeMap<String, CowVal<'b, 'v>>,
    ) -> Result<Box<dyn Val + 'v>, ExecutionError> {
        let mut s = cel::common::types::CelStruct::new(self.r#type.name().to_string());
        for (name, value) in fields {
            if self.kind == StructKind::JsonPatch {
                match name.as_str() {
                    "op" | "path" | "from" if value.downcast_ref::<CelString>().is_none() => {
                        return Err(ExecutionError::function_error(
                            "JSONPatch",
                            format!("field {name} must be a string"),
                        ));
                    }
                    "op" | "path" | "from" | "value" => {}
                    _ => {
                        return Err(ExecutionError::NoSuchKey(std::sync::Arc::new(format!(
                            "field `{name}` on struct `JSONPatch`"
                        ))))
                    }
                }
            }
            s.add_field_value(name, value);
        }
        Ok(Box::new(s))
    }
}

/// A value as JSON: objects (any mutation object type) as JSON objects, checking that each
/// nested object's type name is `path` joined with its field names (`typeCheck` in kube's
/// `objects.go`, whose error texts these are). Errors: a type name that does not match, a
/// map key that is not a string, a value JSON cannot hold.
pub fn object_json(v: &Value, path: &str) -> Result<Json, String> {
    let mut errors = Vec::new();
    let json = to_json(v, path, &mut errors)?;
    if errors.is_empty() {
        Ok(json)
    } else {
        Err(errors.join("\n"))
    }
}

fn to_json(v: &Value, path: &str, errors: &mut Vec<String>) -> Result<Json, String> {
    match v {
        Value::Struct(s) => {
            if s.name() != path {
                errors.push(format!(
                    "unexpected type name \"{}\", expected \"{path}\", which matches field name path from root Object type",
                    s.name()
                ));
            }
            let mut out = serde_json::Map::new();
            for (k, f) in s.field_values() {
                let f = Value::try_from(f.as_ref()).map_err(|e| e.to_string())?;
                let child = to_json(&f, &format!("{path}.{k}"), errors)
                    .map_err(|e| format!("fail to convert field \"{k}\": {e}"))?;
                out.insert(k, child);
            }
            Ok(Json::Object(out))
        }
        Value::List(items) => items
            .iter()
            .map(|i| to_json(i, path, errors))
            .collect::<Result<Vec<_>, _>>()
            .map(Json::Array),
        Value::Map(m) => {
            let mut out = serde_json::Map::new();
            for (k, item) in m.map.iter() {
                let cel::objects::Key::String(k) = k else {
                    return Err(format!("map key {k:?} is not a string"));
                };
                out.insert(k.to_string(), to_json(item, path, errors)?);
            }
            Ok(Json::Object(out))
        }
        other => other.json().map_err(|e| e.to_string()),
    }
}

/// The RFC 6902 patch a `JSONPatch` mutation's value (a list of `JSONPatch`) stands for:
/// `op`, `path`, `from` when not empty, `value` when set (an object value checked as by
/// [`object_json`], rooted at its own type name). Errors: not a list of `JSONPatch`, a value
/// JSON cannot hold.
pub fn json_patch(v: &Value) -> Result<Json, String> {
    let Value::List(items) = v else {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".into());
    };
    let mut ops = Vec::new();
    for item in items.iter() {
        let Value::Struct(s) = item else {
            return Err(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch"
                    .into(),
            );
        };
        let fields = s.field_values();
        let text = |name: &str| -> String {
            fields
                .get(name)
                .and_then(|f| f.downcast_ref::<CelString>())
                .map(|s| s.inner().to_string())
                .unwrap_or_default()
        };
        let mut op = serde_json::Map::new();
        op.insert("op".into(), Json::String(text("op")));
        op.insert("path".into(), Json::String(text("path")));
        let from = text("from");
        if !from.is_empty() {
            op.insert("from".into(), Json::String(from));
        }
        if let Some(value) = fields.get("value") {
            let value = Value::try_from(value.as_ref()).map_err(|e| e.to_string())?;
            let root = match &value {
                Value::Struct(o) => o.name().to_string(),
                _ => String::new(),
            };
            let json = object_json(&value, &root).map_err(|e| match value {
                Value::Struct(_) => format!("type mismatch: {e}"),
                _ => format!(
                    "JSONPath valueExpression evaluated to a type that could not marshal to JSON: {e}"
                ),
            })?;
            op.insert("value".into(), json);
        }
        ops.push(Json::Object(op));
    }
    Ok(Json::Array(ops))
}

/// Register the struct types `names` (those [`struct_kind`] knows) on `env`.
pub fn register(env: &mut cel::Env, names: &BTreeSet<String>) -> Result<(), cel::DeclarationError> {
    for n in names {
        if let Some(t) = MutationType::new(n) {
            env.add_type(t)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::admission;
    use crate::Expression;
    use serde_json::json;

    fn eval(source: &str, object: Json) -> Result<Value, String> {
        let e = Expression::compile_mutation(source, &admission(&[])).map_err(|e| e.0)?;
        e.evaluate(&[("object", &object)]).map_err(|e| e.message)
    }

    #[test]
    fn apply_configurations_become_json_with_their_type_names_checked() {
        let v = eval(
            r#"Object{metadata: Object.metadata{labels: {"team": object.metadata.name}},
               spec: Object.spec{replicas: 2, ports: [Object.spec.ports{port: 80}]}}"#,
            json!({"metadata": {"name": "a"}}),
        )
        .unwrap();
        assert_eq!(
            object_json(&v, OBJECT).unwrap(),
            json!({"metadata": {"labels": {"team": "a"}},
                   "spec": {"replicas": 2, "ports": [{"port": 80}]}})
        );
        let v = eval(
            "Object{spec: Object.spec{selector: Object.spec.wrong{}}}",
            json!({}),
        )
        .unwrap();
        assert_eq!(
            object_json(&v, OBJECT).unwrap_err(),
            "unexpected type name \"Object.spec.wrong\", expected \"Object.spec.selector\", which matches field name path from root Object type"
        );
    }

    #[test]
    fn the_checker_knows_the_mutation_types_only_where_declared() {
        let e = Expression::compile_mutation("Object{}", &admission(&[])).unwrap();
        assert_eq!(e.checked().unwrap().output, crate::Type::Opaque(OBJECT));
        let e = Expression::compile_mutation(
            "[JSONPatch{op: 'add', path: '/a/' + jsonpatch.escapeKey('x/y~z'), value: 1}]",
            &admission(&[]),
        )
        .unwrap();
        assert_eq!(
            json_patch(&e.evaluate(&[]).unwrap()).unwrap(),
            json!([{"op": "add", "path": "/a/x~1y~0z", "value": 1}])
        );
        let err = Expression::compile_mutation("[JSONPatch{op: 1, nope: 2}]", &admission(&[]))
            .err()
            .unwrap()
            .0;
        assert!(
            err.contains("expected type of field 'op' is 'string' but provided type is 'int'"),
            "{err}"
        );
        assert!(err.contains("undefined field 'nope'"), "{err}");
        // A validating policy's expressions have no object types.
        let err = Expression::compile_checked("Object{}", &admission(&[]))
            .err()
            .unwrap()
            .0;
        assert!(err.contains("undeclared reference to 'Object'"), "{err}");
    }
}

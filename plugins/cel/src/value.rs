//! JSON objects as CEL values, as kube hands an unstructured object to an expression
//! (`k8s.io/apiserver/pkg/cel/common/values.go`, `UnstructuredToVal`).
//!
//! Without a type ([`from_json`]): `null`, booleans, integers (`int`; `uint` past `i64::MAX`),
//! other numbers (`double`), strings, lists and maps with string keys, property names as they
//! are. With the type a schema gives ([`from_json_typed`], [`crate::schema`]): an object's
//! properties by escaped name ([`crate::escaping::escape`]; map keys are not escaped), `byte`
//! strings as `bytes`, `duration` strings as durations, `date` and `date-time` strings as
//! timestamps.

use crate::escaping::escape;
use crate::types::Type;
use base64::Engine;
use cel::common::value::Val;
use cel::objects::{Key, Map};
use cel::Value;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

/// The CEL value of a JSON value.
pub fn from_json(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::UInt(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(items) => Value::List(Arc::new(items.iter().map(from_json).collect())),
        Json::Object(fields) => {
            let map: HashMap<Key, Value> = fields
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), from_json(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// The CEL value of a JSON value of type `t` (a schema's, [`crate::schema::schema_type`]). A
/// value that does not have the type's shape is converted as [`from_json`] converts it.
pub fn from_json_typed(v: &Json, t: &Type) -> Value {
    match (t, v) {
        (Type::Object(o), Json::Object(fields)) => {
            let map: HashMap<Key, Value> = fields
                .iter()
                .filter_map(|(k, v)| {
                    let name = escape(k)?;
                    let field = o.fields.get(&name)?;
                    Some((Key::String(Arc::new(name)), from_json_typed(v, &field.ty)))
                })
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
        (Type::Map(_, value, _), Json::Object(fields)) => {
            let map: HashMap<Key, Value> = fields
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), from_json_typed(v, value)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
        (Type::List(elem, _), Json::Array(items)) => Value::List(Arc::new(
            items.iter().map(|v| from_json_typed(v, elem)).collect(),
        )),
        (Type::Bytes(_), Json::String(s)) => {
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(b) => Value::Bytes(Arc::new(b)),
                Err(_) => from_json(v),
            }
        }
        (Type::Duration, Json::String(s)) => match parse_duration(s) {
            Some(d) => Value::Duration(d),
            None => from_json(v),
        },
        (Type::Timestamp, Json::String(s)) => match parse_timestamp(s) {
            Some(t) => Value::Timestamp(t),
            None => from_json(v),
        },
        _ => from_json(v),
    }
}

/// [`from_json_typed`] (or [`from_json`] with no type), built directly as the interpreter
/// holds values: one pass over the JSON, where going through [`Value`] would convert, and copy,
/// everything twice.
pub fn to_val(v: &Json, t: Option<&Type>) -> Box<dyn Val> {
    use cel::common::types::{
        CelBool, CelBytes, CelDouble, CelDuration, CelInt, CelList, CelMap, CelMapKey, CelNull,
        CelString, CelTimestamp, CelUInt,
    };
    match (t, v) {
        (_, Json::Null) => Box::new(CelNull),
        (_, Json::Bool(b)) => Box::new(CelBool::from(*b)),
        (_, Json::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        (Some(Type::Bytes(_)), Json::String(s)) => {
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(b) => Box::new(CelBytes::from(b)),
                Err(_) => Box::new(CelString::from(s.clone())),
            }
        }
        (Some(Type::Duration), Json::String(s)) => match parse_duration(s) {
            Some(d) => Box::new(CelDuration::from(d)),
            None => Box::new(CelString::from(s.clone())),
        },
        (Some(Type::Timestamp), Json::String(s)) => match parse_timestamp(s) {
            Some(ts) => Box::new(CelTimestamp::from(ts)),
            None => Box::new(CelString::from(s.clone())),
        },
        (_, Json::String(s)) => Box::new(CelString::from(s.clone())),
        (t, Json::Array(items)) => {
            let elem = match t {
                Some(Type::List(e, _)) => Some(&**e),
                _ => None,
            };
            let list: Vec<Box<dyn Val>> = items.iter().map(|x| to_val(x, elem)).collect();
            Box::new(CelList::from(list))
        }
        (Some(Type::Object(o)), Json::Object(fields)) => {
            let map: HashMap<CelMapKey<'static>, Box<dyn Val>> = fields
                .iter()
                .filter_map(|(k, x)| {
                    let name = escape(k)?;
                    let field = o.fields.get(&name)?;
                    Some((CelMapKey::from(name), to_val(x, Some(&field.ty))))
                })
                .collect();
            Box::new(CelMap::from(map))
        }
        (t, Json::Object(fields)) => {
            let value = match t {
                Some(Type::Map(_, v, _)) => Some(&**v),
                _ => None,
            };
            let map: HashMap<CelMapKey<'static>, Box<dyn Val>> = fields
                .iter()
                .map(|(k, x)| (CelMapKey::from(k.clone()), to_val(x, value)))
                .collect();
            Box::new(CelMap::from(map))
        }
    }
}

/// An RFC 3339 date-time, or a full date (`2024-01-31`, midnight UTC).
fn parse_timestamp(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t);
    }
    let date = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc().fixed_offset())
}

/// A duration as Go's `time.ParseDuration` reads it (CEL's `duration()`).
pub use wasm_apiserver_apimachinery::duration::parse_go_duration;
/// A duration as kube-openapi's `strfmt.ParseDuration` reads a `format: duration` string
/// ([`wasm_apiserver_apimachinery::duration::parse_strfmt_duration`]).
pub use wasm_apiserver_apimachinery::duration::parse_strfmt_duration as parse_duration;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_parse_as_go_and_strfmt_read_them() {
        let d = |s| parse_duration(s).map(|d| d.num_milliseconds());
        assert_eq!(d("1h30m"), Some(5_400_000));
        assert_eq!(d("-1.5s"), Some(-1500));
        assert_eq!(d("2d"), Some(172_800_000));
        assert_eq!(d("0"), Some(0));
        assert_eq!(d("1x"), None);
        assert_eq!(d(""), None);
        assert_eq!(d("h"), None);
    }

    /// The direct conversion gives what the conversion through `Value` gives.
    #[test]
    fn to_val_agrees_with_from_json() {
        let schema = json!({"type": "object", "properties": {
            "x-y": {"type": "string"}, "n": {"type": "integer"}, "f": {"type": "number"},
            "at": {"type": "string", "format": "date-time"},
            "l": {"type": "array", "items": {"type": "string", "format": "byte"}},
            "m": {"type": "object", "additionalProperties": {"type": "boolean"}}}});
        let t = crate::schema::schema_type(&schema, "t", false).unwrap();
        let v = json!({"x-y": "a", "n": 1, "f": 1.5, "at": "2024-01-31T00:00:00Z",
                       "l": ["aGk="], "m": {"k": true, "z": null}, "undeclared": 1});
        let direct = Value::try_from(to_val(&v, Some(&t)).as_ref()).unwrap();
        assert_eq!(direct, from_json_typed(&v, &t));
        let untyped = Value::try_from(to_val(&v, None).as_ref()).unwrap();
        assert_eq!(untyped, from_json(&v));
    }

    #[test]
    fn a_schema_type_escapes_fields_and_reads_formats() {
        let schema = json!({"type": "object", "properties": {
            "x-y": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "cert": {"type": "string", "format": "byte"},
            "at": {"type": "string", "format": "date"}}});
        let t = crate::schema::schema_type(&schema, "t", false).unwrap();
        let v = from_json_typed(
            &json!({"x-y": "a", "labels": {"a-b": "c"}, "cert": "aGk=", "at": "2024-01-31",
                    "undeclared": 1}),
            &t,
        );
        let Value::Map(m) = v else { panic!("{v:?}") };
        let get = |k: &str| m.map.get(&Key::String(Arc::new(k.to_string()))).cloned();
        assert_eq!(get("x__dash__y"), Some(Value::String(Arc::new("a".into()))));
        assert_eq!(get("undeclared"), None);
        assert_eq!(get("cert"), Some(Value::Bytes(Arc::new(b"hi".to_vec()))));
        assert!(matches!(get("at"), Some(Value::Timestamp(_))));
        let Some(Value::Map(labels)) = get("labels") else {
            panic!()
        };
        assert!(labels
            .map
            .contains_key(&Key::String(Arc::new("a-b".into()))));
    }
}

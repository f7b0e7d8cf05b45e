//! JSON objects as CEL values, as kube hands an unstructured object to an expression
//! (`k8s.io/apiserver/pkg/cel/common/values.go` without a schema): `null`, booleans, integers
//! (`int`; `uint` past `i64::MAX`), other numbers (`double`), strings, lists and maps with
//! string keys. Property names are kept as they are: escaping them
//! ([`crate::escaping::escape`]) belongs to the schema-typed conversion, where kube tells
//! object fields (escaped) from map keys (not escaped).

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

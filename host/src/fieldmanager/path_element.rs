//! `fieldpath.PathElement` (structured-merge-diff `fieldpath/element.go`, `serialize-pe.go`):
//! one step into an object — a field of a struct or map (`f:name`), an item of an associative
//! list by its key fields (`k:{"name":"web"}`), an item of a set-like list by its value
//! (`v:"a"`), or an item of an atomic list by index (`i:0`) — with its total order and its
//! string form in `FieldsV1`.

use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::fmt;

/// One step of a field path. Ordered as structured-merge-diff orders them (`Compare`): every
/// field before every key, every key before every value, every value before every index; keys
/// lexically by (name, value) pairs, values by [`compare_values`].
#[derive(Clone, Debug)]
pub enum PathElement {
    /// `f:<name>`: a field of a struct or a key of a map.
    Field(String),
    /// `k:{…}`: a list item identified by its key fields, sorted by field name.
    Key(Vec<(String, Value)>),
    /// `v:<json>`: a set-like list item identified by its whole value.
    Value(Value),
    /// `i:<n>`: a list item identified by its position (atomic lists).
    Index(i64),
}

/// Why a `FieldsV1` key is not a path element (`DeserializePathElement`'s errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathElementError {
    /// A well-formed `x:` prefix this version does not know (`ErrUnknownPathElementType`):
    /// readers skip such keys rather than fail.
    #[error("unknown path element type")]
    UnknownType,
    /// Anything else: too short, no colon, not a number, not JSON, trailing data.
    #[error("{0}")]
    Invalid(String),
}

impl PathElement {
    /// The element's `FieldsV1` key (`SerializePathElement`): `f:` + the name as it is (not
    /// escaped), `k:` + a JSON object of the key fields in name order, `v:` + the JSON value,
    /// `i:` + the decimal index.
    pub fn serialize(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let map: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(map))
            }
            PathElement::Value(v) => format!("v:{v}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parse a `FieldsV1` key (`DeserializePathElement`). Errors:
    /// [`PathElementError::UnknownType`] for another well-formed prefix, else
    /// [`PathElementError::Invalid`].
    pub fn deserialize(s: &str) -> Result<PathElement, PathElementError> {
        let bytes = s.as_bytes();
        if bytes.len() < 2 {
            return Err(PathElementError::Invalid(
                "key must be 2 characters long".into(),
            ));
        }
        if bytes[1] != b':' {
            return Err(PathElementError::Invalid(format!("missing colon: {s}")));
        }
        let rest = &s[2..];
        let json = |what: &str| -> Result<Value, PathElementError> {
            serde_json::from_str::<Value>(rest)
                .map_err(|e| PathElementError::Invalid(format!("{what} {rest:?}: {e}")))
        };
        match bytes[0] {
            b'f' => Ok(PathElement::Field(rest.to_string())),
            b'v' => Ok(PathElement::Value(json("value")?)),
            b'k' => match json("key")? {
                // serde_json's map keeps keys sorted: the fields come out in name order.
                Value::Object(map) => Ok(PathElement::Key(map.into_iter().collect())),
                other => Err(PathElementError::Invalid(format!(
                    "key {rest:?} is not a JSON object but {other}"
                ))),
            },
            b'i' => rest
                .parse::<i64>()
                .map(PathElement::Index)
                .map_err(|e| PathElementError::Invalid(format!("index {rest:?}: {e}"))),
            _ => Err(PathElementError::UnknownType),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

/// A path as structured-merge-diff prints it (`Path.String`, `PathElement.String`), the form
/// conflicts name fields in: `.spec.containers[name="web"].image`, `[=5]` for a set item,
/// `[3]` for an index.
pub fn path_string(path: &[PathElement]) -> String {
    let mut out = String::new();
    for pe in path {
        match pe {
            PathElement::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_string(v)))
                    .collect();
                out.push('[');
                out.push_str(&parts.join(","));
                out.push(']');
            }
            PathElement::Value(v) => {
                out.push_str("[=");
                out.push_str(&value_string(v));
                out.push(']');
            }
            PathElement::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// `value.ToString`: strings quoted as Go's `%q`, numbers and booleans bare, lists in brackets.
fn value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        // serde_json's escaping matches `%q` for the printable strings keys hold.
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(value_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", value_string(v)))
            .collect(),
    }
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.serialize())
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => compare_fields(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// `value.FieldList.Compare`: lexically by (name, value), a prefix first.
fn compare_fields(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b) {
        let c = an.cmp(bn).then_with(|| compare_values(av, bv));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

/// structured-merge-diff's `value.Compare`: numbers (integers and floats compared as floats
/// when mixed), then strings, booleans (false first), lists (lexically, a prefix first), maps
/// (by sorted keys, then values, a prefix first), null last.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) if !a.is_f64() && !b.is_f64() => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            // serde_json's maps iterate in key order.
            for ((kp, vp), (kq, vq)) in x.iter().zip(y) {
                let c = kp.cmp(kq).then_with(|| compare_values(vp, vq));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(fields: &[(&str, Value)]) -> PathElement {
        PathElement::Key(
            fields
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
        )
    }

    /// Ported from structured-merge-diff `fieldpath/serialize-pe_test.go`
    /// `TestPathElementRoundTrip`.
    #[test]
    fn path_elements_round_trip() {
        let f = |s: &str| PathElement::Field(s.to_string());
        let cases: Vec<(&str, PathElement)> = vec![
            ("i:0", PathElement::Index(0)),
            ("i:1234", PathElement::Index(1234)),
            ("f:", f("")),
            ("f:spec", f("spec")),
            ("f:more-complicated-string", f("more-complicated-string")),
            ("f: string-with-spaces   ", f(" string-with-spaces   ")),
            (
                "k:{\"name\":\"my-container\"}",
                key(&[("name", json!("my-container"))]),
            ),
            (
                "k:{\"name\":\"   name with spaces   \"}",
                key(&[("name", json!("   name with spaces   "))]),
            ),
            (
                "k:{\"port\":\"8080\",\"protocol\":\"TCP\"}",
                key(&[("port", json!("8080")), ("protocol", json!("TCP"))]),
            ),
            (
                "k:{\"optionalField\":null}",
                key(&[("optionalField", Value::Null)]),
            ),
            (
                "k:{\"jsonField\":{\"A\":1,\"B\":null,\"C\":\"D\",\"E\":{\"F\":\"G\"}}}",
                key(&[(
                    "jsonField",
                    json!({"A": 1, "B": null, "C": "D", "E": {"F": "G"}}),
                )]),
            ),
            (
                "k:{\"listField\":[\"1\",\"2\",\"3\"]}",
                key(&[("listField", json!(["1", "2", "3"]))]),
            ),
            ("v:null", PathElement::Value(Value::Null)),
            (
                "v:\"some-string\"",
                PathElement::Value(json!("some-string")),
            ),
            ("v:1234", PathElement::Value(json!(1234))),
            (
                "v:{\"some\":\"json\"}",
                PathElement::Value(json!({"some": "json"})),
            ),
            ("k:{\"name\":\"app-🚀\"}", key(&[("name", json!("app-🚀"))])),
            (
                "k:{\"name\":\"你好世界\"}",
                key(&[("name", json!("你好世界"))]),
            ),
            ("f:spec-🚀", f("spec-🚀")),
            ("f:spec-\\n", f("spec-\\n")),
        ];
        for (text, want) in cases {
            let got = PathElement::deserialize(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, want, "{text}");
            assert_eq!(got.serialize(), text);
        }
    }

    /// `TestPathElementIgnoreUnknown` and `TestDeserializePathElementError`.
    #[test]
    fn bad_path_elements_are_refused() {
        assert_eq!(
            PathElement::deserialize("r:Hello"),
            Err(PathElementError::UnknownType)
        );
        for bad in [
            "",
            "no-colon",
            "i:index is not a number",
            "i:1.23",
            "i:",
            "v:invalid json",
            "v:",
            "k:invalid json",
            "k:{\"name\":invalid}",
            "v:{\"some\":\" \\x41\"}",
            "v",
            "k",
            "f",
            "i",
            "v:{\"a\":\"b\"",
            "k:{\"a\":\"b\"",
            "i: 0",
            "i:0 ",
            "v:{\"some\":\"json\"} {\"other\":\"json\"}",
            "k:{\"name\":\"my-container\"} {\"other\":\"my-container\"}",
            "v:{\"some\":\"json\"} garbage",
            "k:{\"name\":\"my-container\"} garbage",
            "k:[1]",
        ] {
            assert!(
                matches!(
                    PathElement::deserialize(bad),
                    Err(PathElementError::Invalid(_))
                ),
                "{bad:?} was accepted"
            );
        }
    }

    /// `element_test.go` `TestPathElementLess`: fields < keys < values < indexes, and within
    /// each kind.
    #[test]
    fn path_elements_order_as_structured_merge_diff_does() {
        let order = [
            PathElement::Field("a".into()),
            PathElement::Field("b".into()),
            key(&[("name", json!("a"))]),
            key(&[("name", json!("a")), ("port", json!(80))]),
            key(&[("name", json!("b"))]),
            PathElement::Value(json!(1)),
            PathElement::Value(json!(2.5)),
            PathElement::Value(json!(3)),
            PathElement::Value(json!("a")),
            PathElement::Value(json!(false)),
            PathElement::Value(json!(true)),
            PathElement::Value(json!([1])),
            PathElement::Value(json!([1, 2])),
            PathElement::Value(json!({"a": 1})),
            PathElement::Value(Value::Null),
            PathElement::Index(0),
            PathElement::Index(2),
        ];
        for (i, a) in order.iter().enumerate() {
            for (j, b) in order.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{a} vs {b}");
            }
        }
        // An integer and a float of the same value are one element.
        assert_eq!(PathElement::Value(json!(1)), PathElement::Value(json!(1.0)));
    }
}

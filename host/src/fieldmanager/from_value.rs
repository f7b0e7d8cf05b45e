//! `fieldpath.SetFromValue` (structured-merge-diff `fieldpath/fromvalue.go`): the set of leaf
//! fields of an object without a schema — every scalar (null included) at the end of a path of
//! map fields and list items. A list item that is a map with a scalar `key`, `id` or `name` is
//! named by those (`k:{…}`, the guess `GuessBestListPathElement` makes), any other by its
//! index; empty maps and lists contribute nothing.

use super::path_element::PathElement;
use super::set::Set;
use serde_json::Value;

/// The fields that name a list item when the schema does not say
/// (`AssociativeListCandidateFieldNames`).
pub const ASSOCIATIVE_LIST_CANDIDATE_FIELD_NAMES: [&str; 3] = ["key", "id", "name"];

/// `SetFromValue`: the leaf paths of `v`.
pub fn set_from_value(v: &Value) -> Set {
    let mut set = Set::new();
    walk(v, &mut Vec::new(), &mut set);
    set
}

fn walk(v: &Value, path: &mut Vec<PathElement>, set: &mut Set) {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(list_path_element(i, item));
                walk(item, path, set);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, val) in map {
                path.push(PathElement::Field(k.clone()));
                walk(val, path, set);
                path.pop();
            }
        }
        _ => {
            if !path.is_empty() {
                set.insert(path);
            }
        }
    }
}

/// `GuessBestListPathElement`.
fn list_path_element(index: usize, item: &Value) -> PathElement {
    let Value::Object(map) = item else {
        return PathElement::Index(index as i64);
    };
    let mut keys: Vec<(String, Value)> = ASSOCIATIVE_LIST_CANDIDATE_FIELD_NAMES
        .iter()
        .filter_map(|name| match map.get(*name) {
            None | Some(Value::Null | Value::Object(_) | Value::Array(_)) => None,
            Some(v) => Some((name.to_string(), v.clone())),
        })
        .collect();
    if keys.is_empty() {
        return PathElement::Index(index as i64);
    }
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    PathElement::Key(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(s: &str) -> PathElement {
        PathElement::Field(s.into())
    }

    fn key(fields: &[(&str, &str)]) -> PathElement {
        PathElement::Key(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect(),
        )
    }

    /// Ported from structured-merge-diff `fieldpath/fromvalue_test.go` `TestFromValue`.
    #[test]
    fn leaf_fields_of_objects() {
        let i = PathElement::Index;
        let cases: Vec<(&str, Vec<Vec<PathElement>>)> = vec![
            ("a: a", vec![vec![f("a")]]),
            (r#"{"a": [{"a": null}]}"#, vec![vec![f("a"), i(0), f("a")]]),
            (
                r#"{"a": [{"id": a}]}"#,
                vec![vec![f("a"), key(&[("id", "a")]), f("id")]],
            ),
            (
                r#"{"a": [{"name": a}]}"#,
                vec![vec![f("a"), key(&[("name", "a")]), f("name")]],
            ),
            (
                r#"{"a": [{"key": a}]}"#,
                vec![vec![f("a"), key(&[("key", "a")]), f("key")]],
            ),
            (
                r#"{"a": [{"name": "a", "key": "b"}]}"#,
                vec![
                    vec![f("a"), key(&[("key", "b"), ("name", "a")]), f("key")],
                    vec![f("a"), key(&[("key", "b"), ("name", "a")]), f("name")],
                ],
            ),
            (r#"{"a": [5]}"#, vec![vec![f("a"), i(0)]]),
            (
                r#"{"a": [5,4,3]}"#,
                vec![vec![f("a"), i(0)], vec![f("a"), i(1)], vec![f("a"), i(2)]],
            ),
            (r#"{"a": [[5]]}"#, vec![vec![f("a"), i(0), i(0)]]),
            (
                r#"{"a": 1, "b": true, "c": 1.5, "d": null}"#,
                vec![vec![f("a")], vec![f("b")], vec![f("c")], vec![f("d")]],
            ),
        ];
        for (yaml, paths) in cases {
            let v: Value = serde_yaml_ng::from_str(yaml).unwrap();
            let mut want = Set::new();
            for p in &paths {
                want.insert(p);
            }
            assert_eq!(set_from_value(&v), want, "{yaml}");
        }
        // Empty maps and lists are no fields.
        assert!(set_from_value(&json!({"a": {}, "b": []})).is_empty());
    }
}

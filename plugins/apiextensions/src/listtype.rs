//! `x-kubernetes-list-type: set` and `map` uniqueness, as kube validates every custom resource
//! write (`ValidateListSetsAndMaps`, apiextensions-apiserver/pkg/apiserver/schema/listtype/
//! validation.go): a set's items are unique (compound items by their JSON), a map's items
//! are objects (or null) unique by their `x-kubernetes-list-map-keys` — `Duplicate value` at
//! each later duplicate's index, with the key fields as the value.

use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};

use crate::structural::Structural;

/// The duplicates in the sets and maps of `obj` (an object under `schema`), at `path`.
pub fn validate_list_sets_and_maps(path: &Path, schema: &Structural, obj: &Json) -> ErrorList {
    let mut errs = Vec::new();
    walk(path, schema, obj, &mut errs);
    errs
}

fn walk(path: &Path, s: &Structural, v: &Json, errs: &mut ErrorList) {
    match v {
        Json::Object(o) => {
            for (k, child) in o {
                if let Some(sub) = s.properties.get(k) {
                    walk(&path.child(k), sub, child, errs);
                } else if let Some(sub) = s.additional_properties.as_ref().and_then(|a| a.schema())
                {
                    walk(&path.key(k), sub, child, errs);
                }
            }
        }
        Json::Array(items) => {
            match s.list_type.as_deref() {
                Some("set") => {
                    for i in non_unique(items.iter().cloned()) {
                        errs.push(field::duplicate(&path.index(i), &items[i]));
                    }
                }
                Some("map") => errs.extend(validate_list_map(path, s, items)),
                _ => {}
            }
            if let Some(item) = &s.items {
                for (i, x) in items.iter().enumerate() {
                    walk(&path.index(i), item, x, errs);
                }
            }
        }
        _ => {}
    }
}

/// The indices of the items equal to an earlier one, each value reported once (kube's
/// `validateListSet`: the second occurrence only).
fn non_unique(items: impl Iterator<Item = Json>) -> Vec<usize> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, x) in items.enumerate() {
        let times = seen.entry(x.to_string()).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn validate_list_map(path: &Path, s: &Structural, items: &[Json]) -> ErrorList {
    for (i, x) in items.iter().enumerate() {
        if !(x.is_null() || x.is_object()) {
            let detail = "must be an object for an array of list-type map";
            return vec![field::invalid(&path.index(i), x, detail)];
        }
    }
    if items.len() <= 1 {
        return Vec::new();
    }
    let keys: Vec<Json> = items
        .iter()
        .map(|x| {
            let mut key = Map::new();
            for k in &s.list_map_keys {
                if let Some(v) = x.get(k) {
                    key.insert(k.clone(), v.clone());
                }
            }
            Json::Object(key)
        })
        .collect();
    non_unique(keys.iter().cloned())
        .into_iter()
        .map(|i| field::duplicate(&path.index(i), &keys[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Cases after listtype/validation_test.go, rewritten.
    #[test]
    fn sets_and_maps_are_unique_by_value_and_by_key() {
        let schema = Structural::from_json(&json!({"type": "object", "properties": {
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                "items": {"type": "object", "properties": {
                    "containerPort": {"type": "integer"}, "protocol": {"type": "string"},
                    "hosts": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}},
            "byName": {"type": "object", "additionalProperties": {"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}));
        let obj = json!({
            "tags": ["a", "b", "a", "a"],
            "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"},
                      {"containerPort": 80, "protocol": "TCP", "hosts": ["h", "h"]}],
            "byName": {"x": [{"name": "n"}, {"name": "n"}, {}, {}]}
        });
        let got: Vec<String> = validate_list_sets_and_maps(&Path::new("spec"), &schema, &obj)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect();
        assert_eq!(
            got,
            [
                "spec.byName[x][1]: Duplicate value: {\"name\":\"n\"}",
                "spec.byName[x][3]: Duplicate value: {}",
                "spec.ports[2]: Duplicate value: {\"containerPort\":80,\"protocol\":\"TCP\"}",
                "spec.ports[2].hosts[1]: Duplicate value: \"h\"",
                "spec.tags[2]: Duplicate value: \"a\"",
            ]
        );
        let not_objects = json!({"ports": [1]});
        assert_eq!(
            validate_list_sets_and_maps(&Path::new("spec"), &schema, &not_objects)[0].body(),
            "Invalid value: 1: must be an object for an array of list-type map"
        );
    }
}

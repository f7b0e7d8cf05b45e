//! Strategic merge patch (`k8s.io/apimachinery/pkg/util/strategicpatch` `StrategicMergePatch`),
//! driven by the `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy` markers of an
//! OpenAPI schema: the host's PATCH handler applies it to core resources.

use serde_json::{Map, Value};

fn schema_child<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    let s = schema?;
    s.get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
}

/// Strategic merge patch of `patch` onto `cur`, following `strategicpatch.StrategicMergePatch`:
/// maps merge recursively and `null` deletes; lists whose schema declares
/// `x-kubernetes-patch-strategy: merge` merge by `x-kubernetes-patch-merge-key` (primitive
/// lists by value), other lists are replaced; the directives `$patch` (`replace`, `delete`,
/// `merge`), `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`
/// are honoured. Errors: a directive or list item of the wrong shape.
pub fn strategic_merge(cur: &Value, patch: &Value, schema: &Value) -> Result<Value, String> {
    merge_map(cur, patch, Some(schema))
}

fn merge_map(cur: &Value, patch: &Value, schema: Option<&Value>) -> Result<Value, String> {
    let Some(pm) = patch.as_object() else {
        return Ok(patch.clone());
    };
    match pm.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut m = pm.clone();
            m.remove("$patch");
            return Ok(Value::Object(m));
        }
        Some("delete") => return Ok(Value::Null),
        Some("merge") | None => {}
        Some(other) => return Err(format!("unknown patch type: {other}")),
    }
    let mut out: Map<String, Value> = cur.as_object().cloned().unwrap_or_default();
    let mut orders: Vec<(String, Vec<Value>)> = Vec::new();
    let mut retain: Option<Vec<String>> = None;
    for (k, pv) in pm {
        if k == "$patch" {
            continue;
        }
        if k == "$retainKeys" {
            retain = pv.as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            });
            continue;
        }
        if let Some(list) = k.strip_prefix("$setElementOrder/") {
            orders.push((list.to_string(), pv.as_array().cloned().unwrap_or_default()));
            continue;
        }
        if let Some(list) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Some(del)) = (out.get_mut(list), pv.as_array()) {
                items.retain(|x| !del.contains(x));
            }
            continue;
        }
        if pv.is_null() {
            out.remove(k);
            continue;
        }
        let child_schema = schema_child(schema, k);
        let merged = match (out.get(k), pv) {
            (Some(cv @ Value::Object(_)), Value::Object(_)) => merge_map(cv, pv, child_schema)?,
            (cv, Value::Array(items)) => merge_list(cv, items, child_schema)?,
            (None, Value::Object(_)) => merge_map(&Value::Object(Map::new()), pv, child_schema)?,
            (_, other) => other.clone(),
        };
        if merged.is_null() {
            out.remove(k);
        } else {
            out.insert(k.clone(), merged);
        }
    }
    for (list, order) in orders {
        if let Some(Value::Array(items)) = out.get_mut(&list) {
            let key = schema_child(schema, &list)
                .and_then(|s| s.get("x-kubernetes-patch-merge-key"))
                .and_then(Value::as_str)
                .map(String::from);
            sort_by_order(items, &order, key.as_deref());
        }
    }
    if let Some(keep) = retain {
        out.retain(|k, _| keep.contains(k));
    }
    Ok(Value::Object(out))
}

fn sort_by_order(items: &mut [Value], order: &[Value], key: Option<&str>) {
    let position = |item: &Value| -> usize {
        let id = match key {
            Some(k) => item.get(k).cloned(),
            None => Some(item.clone()),
        };
        order
            .iter()
            .position(|o| match key {
                Some(k) => o.get(k).cloned() == id,
                None => Some(o.clone()) == id,
            })
            .unwrap_or(usize::MAX)
    };
    items.sort_by_key(|i| position(i));
}

fn merge_list(
    cur: Option<&Value>,
    patch: &[Value],
    schema: Option<&Value>,
) -> Result<Value, String> {
    let strategy = schema
        .and_then(|s| s.get("x-kubernetes-patch-strategy"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !strategy.split(',').any(|s| s == "merge") {
        // Replace, but still honour `$patch: delete` items by dropping them.
        return Ok(Value::Array(
            patch
                .iter()
                .filter(|p| p.get("$patch").is_none())
                .cloned()
                .collect(),
        ));
    }
    let item_schema = schema.and_then(|s| s.get("items"));
    let mut out: Vec<Value> = cur.and_then(Value::as_array).cloned().unwrap_or_default();
    let key = schema
        .and_then(|s| s.get("x-kubernetes-patch-merge-key"))
        .and_then(Value::as_str);
    match key {
        None => {
            // A list of primitives merged as a set.
            for p in patch {
                if !out.contains(p) {
                    out.push(p.clone());
                }
            }
        }
        Some(key) => {
            for p in patch {
                let Some(id) = p.get(key) else {
                    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
                        return Ok(Value::Array(Vec::new()));
                    }
                    return Err(format!(
                        "map: {p} does not contain declared merge key: {key}"
                    ));
                };
                let pos = out.iter().position(|c| c.get(key) == Some(id));
                if p.get("$patch").and_then(Value::as_str) == Some("delete") {
                    if let Some(i) = pos {
                        out.remove(i);
                    }
                    continue;
                }
                match pos {
                    Some(i) => out[i] = merge_map(&out[i], p, item_schema)?,
                    None => out.push(merge_map(&Value::Object(Map::new()), p, item_schema)?),
                }
            }
        }
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_schema() -> Value {
        json!({"properties": {"spec": {"properties": {"containers": {
            "type": "array", "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge",
            "items": {"properties": {"name": {}, "image": {}}}}}}}})
    }

    #[test]
    fn containers_merge_by_name() {
        let cur = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let patch = json!({"spec": {"containers": [{"name": "b", "image": "z"}]}});
        let out = strategic_merge(&cur, &patch, &pod_schema()).unwrap();
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "a", "image": "x"}, {"name": "b", "image": "z"}])
        );
    }

    #[test]
    fn directives() {
        let cur = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "metadata": {"labels": {"x": "1", "y": "2"}}});
        let patch = json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}, "metadata": {"labels": {"x": null}}});
        let out = strategic_merge(&cur, &patch, &pod_schema()).unwrap();
        assert_eq!(out["spec"]["containers"], json!([{"name": "b"}]));
        assert_eq!(out["metadata"]["labels"], json!({"y": "2"}));
        let order =
            json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}});
        let out = strategic_merge(&cur, &order, &pod_schema()).unwrap();
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "b"}, {"name": "a"}])
        );
    }

    #[test]
    fn unmarked_lists_are_replaced() {
        let cur = json!({"data": {"list": [1, 2]}});
        let out = strategic_merge(&cur, &json!({"data": {"list": [3]}}), &json!({})).unwrap();
        assert_eq!(out["data"]["list"], json!([3]));
    }
}

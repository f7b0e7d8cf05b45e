//! The two ways a MutatingAdmissionPolicy's mutation changes an object (kube's
//! `k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/{smd,json_patch}.go`):
//!
//! - [`apply_configuration`]: the `Object{…}` an `ApplyConfiguration` expression gives, merged
//!   into the object as server-side apply merges (structured-merge-diff's `Merge` over the
//!   resource's schema: maps by key, associative lists by their keys, atomic values replaced)
//!   — but without a field manager: no `managedFields` entry of its own, no conflicts (here the
//!   fields it sets are then owned by the request's manager: kube updates managedFields before
//!   admission, this server after). An apply
//!   configuration that sets an atomic list, map or struct is refused (`validatePatch`: it
//!   would silently drop the fields it does not repeat);
//! - [`json_patch`]: the RFC 6902 operations a `JSONPatch` expression gives, applied in order
//!   within a PATCH request's bounds; a failed `test` operation leaves the object as it was
//!   (kube's `ErrTestFailed` case).
//!
//! No mutation may make the object larger than a PUT may write.

use crate::fieldmanager::schema::{Atom, ListType, Schema};
use crate::fieldmanager::typed::merge;
use crate::limits;
use serde_json::Value;

/// Merge `patch` (an apply configuration, without `apiVersion`/`kind`: the object's are
/// used) into `object` by `schema`. Errors: kube's texts — `error applying patch: invalid
/// ApplyConfiguration: may not mutate atomic arrays, maps or structs: <paths>`, `error
/// applying patch: failed to merge patch: …` — and an object past the size bound.
pub fn apply_configuration(
    schema: &Schema,
    object: &Value,
    mut patch: Value,
) -> Result<Value, String> {
    if let Some(p) = patch.as_object_mut() {
        for key in ["apiVersion", "kind"] {
            match object.get(key) {
                Some(v) => drop(p.insert(key.into(), v.clone())),
                None => drop(p.remove(key)),
            }
        }
    }
    let mut atomics = Vec::new();
    find_atomics(schema, &patch, &mut String::new(), &mut atomics);
    if !atomics.is_empty() {
        return Err(format!(
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            atomics.join(", ")
        ));
    }
    merge(schema, object, &patch)
        .map_err(|e| format!("error applying patch: failed to merge patch: {e}"))
        .and_then(within_size)
}

/// `findAtomics`: the paths (`.field`, `[index]`) of the atomic lists and maps `v` sets.
fn find_atomics(schema: &Schema, v: &Value, path: &mut String, out: &mut Vec<String>) {
    match schema.atom(v) {
        Atom::Map(m) => {
            if m.atomic() {
                out.push(path.clone());
            }
            // Only declared fields are walked (`Map.FindField`): a map's values are not.
            for (k, child) in v.as_object().into_iter().flatten() {
                if m.declares(k) {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    find_atomics(m.child(k), child, path, out);
                    path.truncate(len);
                }
            }
        }
        Atom::List(l) => {
            if l.list_type == ListType::Atomic {
                out.push(path.clone());
            }
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                find_atomics(&l.items, item, path, out);
                path.truncate(len);
            }
        }
        Atom::Leaf => {
            // A list of no declared structure is atomic (`typed.DeducedParseableType`).
            if matches!(schema, Schema::Deduced) && v.is_array() {
                out.push(path.clone());
            }
        }
    }
}

/// Apply the RFC 6902 `patch` (a JSON array of operations) to `object`, within the bounds a
/// PATCH request has ([`limits::apply_json_patch`]: depth, bytes copied). A failed `test`
/// leaves `object` unchanged. Errors: `JSON Patch: <why>` for an operation that cannot apply.
pub fn json_patch(object: &Value, patch: Value) -> Result<Value, String> {
    let patch: json_patch::Patch =
        serde_json::from_value(patch).map_err(|e| format!("JSON Patch: {e}"))?;
    match limits::apply_json_patch(object, &patch.0) {
        Ok(patched) => within_size(patched),
        Err(e) if e.test_failed => Ok(object.clone()),
        Err(e) => Err(format!("JSON Patch: {}", e.message)),
    }
}

/// `v` unless its JSON is larger than an object a PUT may write ([`limits::MAX_OBJECT_BYTES`]).
pub fn within_size(v: Value) -> Result<Value, String> {
    match limits::json_len_within(&v, limits::MAX_OBJECT_BYTES) {
        Some(_) => Ok(v),
        None => Err(format!(
            "the mutated object is larger than {} bytes",
            limits::MAX_OBJECT_BYTES
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::for_resource(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "containers": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "image": {"type": "string"}}}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"}}}}}}))
    }

    #[test]
    fn apply_configurations_merge_by_the_schema_and_refuse_atomics() {
        let object = json!({"apiVersion": "v1", "kind": "Thing",
            "metadata": {"name": "a", "labels": {"x": "1"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}], "args": ["a"]}});
        let merged = apply_configuration(
            &schema(),
            &object,
            json!({"metadata": {"labels": {"team": "t"}},
                   "spec": {"containers": [{"name": "side", "image": "busybox"}]}}),
        )
        .unwrap();
        assert_eq!(merged["metadata"]["labels"], json!({"x": "1", "team": "t"}));
        assert_eq!(
            merged["spec"]["containers"],
            json!([{"name": "web", "image": "nginx"}, {"name": "side", "image": "busybox"}])
        );
        assert_eq!(merged["apiVersion"], "v1");
        assert_eq!(
            apply_configuration(&schema(), &object,
                json!({"spec": {"args": ["b"], "selector": {"k": "v"}}})).unwrap_err(),
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.args, .spec.selector"
        );
    }

    #[test]
    fn json_patches_apply_in_order_and_a_failed_test_changes_nothing() {
        let object = json!({"metadata": {"name": "a"}});
        let patched = json_patch(
            &object,
            json!([
            {"op": "add", "path": "/metadata/labels", "value": {}},
            {"op": "add", "path": "/metadata/labels/a~1b", "value": "c"}]),
        )
        .unwrap();
        assert_eq!(patched["metadata"]["labels"], json!({"a/b": "c"}));
        let unchanged = json_patch(
            &object,
            json!([
            {"op": "test", "path": "/metadata/name", "value": "z"},
            {"op": "remove", "path": "/metadata/name"}]),
        )
        .unwrap();
        assert_eq!(unchanged, object);
        assert!(
            json_patch(&object, json!([{"op": "remove", "path": "/nope"}]))
                .unwrap_err()
                .starts_with("JSON Patch: ")
        );
    }

    /// Cases of kube's `patch/json_patch_test.go` `TestJSONPatch`, on the same objects as JSON:
    /// the expression compiled as a policy's, its value turned into the patch, applied.
    #[test]
    fn kube_s_json_patch_cases() {
        let run = |expression: &str, object: Value| -> Result<Value, String> {
            let e = wasm_apiserver_cel::Expression::compile_mutation(
                expression,
                &wasm_apiserver_cel::environment::admission(&[]),
            )
            .map_err(|e| e.0)?;
            let v = e.evaluate(&[]).map_err(|e| e.message)?;
            json_patch(&object, wasm_apiserver_cel::mutation::json_patch(&v)?)
        };
        let replicas = json!({"spec": {"replicas": 1}});
        let containers = |names: &[&str]| {
            let c: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
            json!({"spec": {"template": {"spec": {"containers": c}}}})
        };
        let labels = |l: Value| json!({"metadata": {"labels": l}});
        let cases: Vec<(&str, Value, Value)> = vec![
            // jsonPatch with false test operation
            (
                r#"[JSONPatch{op: "test", path: "/spec/replicas", value: 100},
                 JSONPatch{op: "replace", path: "/spec/replicas", value: 3}]"#,
                replicas.clone(),
                replicas.clone(),
            ),
            // jsonPatch with true test operation
            (
                r#"[JSONPatch{op: "test", path: "/spec/replicas", value: 1},
                 JSONPatch{op: "replace", path: "/spec/replicas", value: 3}]"#,
                replicas.clone(),
                json!({"spec": {"replicas": 3}}),
            ),
            // jsonPatch remove map entry by key
            (
                r#"[JSONPatch{op: "remove", path: "/metadata/labels/y"}]"#,
                labels(json!({"x": "1", "y": "1"})),
                labels(json!({"x": "1"})),
            ),
            // jsonPatch copy map entry by key
            (
                r#"[JSONPatch{op: "copy", from: "/metadata/labels/x", path: "/metadata/labels/y"}]"#,
                labels(json!({"x": "1"})),
                labels(json!({"x": "1", "y": "1"})),
            ),
            // jsonPatch move first element to end of list
            (
                r#"[JSONPatch{op: "move", from: "/spec/template/spec/containers/0", path: "/spec/template/spec/containers/-"}]"#,
                containers(&["a", "b", "c"]),
                containers(&["b", "c", "a"]),
            ),
            // JSONPatch patch type has field access
            (
                r#"[JSONPatch{op: "add", path: "/metadata/labels", value: {
                   "op": JSONPatch{op: "opValue"}.op, "path": JSONPatch{path: "pathValue"}.path,
                   "from": JSONPatch{from: "fromValue"}.from,
                   "value": string(JSONPatch{value: "valueValue"}.value)}}]"#,
                labels(json!({})),
                labels(
                    json!({"op": "opValue", "path": "pathValue", "from": "fromValue", "value": "valueValue"}),
                ),
            ),
            // JSONPatch patch type has field testing
            (
                r#"[JSONPatch{op: "add", path: "/metadata/labels", value: {
                   "op": string(has(JSONPatch{op: "opValue"}.op)),
                   "op-unset": string(has(JSONPatch{}.op)),
                   "value-unset": string(has(JSONPatch{}.value))}}]"#,
                labels(json!({})),
                labels(json!({"op": "true", "op-unset": "false", "value-unset": "false"})),
            ),
            // JSONPatch patch type equality
            (
                r#"[JSONPatch{op: "add", path: "/metadata/labels", value: {
                   "empty": string(JSONPatch{} == JSONPatch{}),
                   "different-op": string(JSONPatch{op: "add"} == JSONPatch{op: "remove"}),
                   "different-value": string(JSONPatch{op: "add", value: "1"} == JSONPatch{op: "add", value: 1})}}]"#,
                labels(json!({})),
                labels(
                    json!({"empty": "true", "different-op": "false", "different-value": "false"}),
                ),
            ),
            // JSONPatch key escaping
            (
                r#"[JSONPatch{op: "add", path: "/metadata/labels", value: {}},
                 JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("k8s.io/x~y"), value: "true"}]"#,
                labels(json!({})),
                labels(json!({"k8s.io/x~y": "true"})),
            ),
            // jsonPatch with CEL initializer
            (
                r#"[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
                   name: "x", ports: [Object.spec.template.spec.containers.ports{containerPort: 8080}]}}]"#,
                containers(&["a"]),
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a"},
                 {"name": "x", "ports": [{"containerPort": 8080}]}]}}}}),
            ),
        ];
        for (expression, object, want) in cases {
            assert_eq!(run(expression, object).unwrap(), want, "{expression}");
        }
        // jsonPatch invalid CEL initializer type
        let err = run(
            r#"[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
                 name: "x", ports: [Object.spec.template.spec.containers.portsZ{containerPort: 8080}]}}]"#,
            containers(&["a"]),
        )
        .unwrap_err();
        assert!(err.ends_with("mismatch: unexpected type name \"Object.spec.template.spec.containers.portsZ\", expected \"Object.spec.template.spec.containers.ports\", which matches field name path from root Object type"), "{err}");
        // jsonPatch replace end of list with - not allowed
        let err = run(
            r#"[JSONPatch{op: "replace", path: "/spec/template/spec/containers/-", value: {}}]"#,
            containers(&["a"]),
        )
        .unwrap_err();
        assert!(err.starts_with("JSON Patch: "), "{err}");
    }
}

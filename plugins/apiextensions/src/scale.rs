//! The `scale` subresource of a custom resource (`apiextensions-apiserver/pkg/registry/
//! customresource/etcd.go`, `scaleFromCustomResource` and `scaleUpdatedObjectInfo`): an
//! `autoscaling/v1` Scale read from the paths the CRD names, and a Scale written back into the
//! object's `specReplicasPath`. `kubectl scale` works through it.

use serde_json::{json, Value as Json};

/// A CRD version's `subresources.scale`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    /// `.spec.replicas`, say.
    pub spec_replicas: String,
    /// `.status.replicas`, say.
    pub status_replicas: String,
    /// `.status.selector`, or empty.
    pub label_selector: String,
}

impl ScalePaths {
    /// The scale paths of `version` (a CRD version's JSON), if it has the subresource.
    pub fn of_version(version: &Json) -> Option<ScalePaths> {
        let scale = version.get("subresources")?.get("scale")?;
        let path = |k: &str| {
            scale
                .get(k)
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string()
        };
        Some(ScalePaths {
            spec_replicas: path("specReplicasPath"),
            status_replicas: path("statusReplicasPath"),
            label_selector: path("labelSelectorPath"),
        })
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .collect()
}

fn nested<'a>(obj: &'a Json, path: &str) -> Option<&'a Json> {
    segments(path).iter().try_fold(obj, |o, s| o.get(*s))
}

/// Go's `%T` of a JSON value decoded by `encoding/json`.
fn go_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_i64() => "int64",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

/// `unstructured.NestedInt64`: 0 when absent; an error naming the value's type otherwise.
fn nested_int(obj: &Json, path: &str) -> Result<i64, String> {
    match nested(obj, path) {
        None => Ok(0),
        Some(v) => v.as_i64().ok_or_else(|| {
            format!(
                "{path} accessor error: {v} is of the type {}, expected int64",
                go_type(v)
            )
        }),
    }
}

/// Whether `cr` has a value at the spec replicas path (kube's `scaleFromCustomResource`
/// second result: a Scale GET of an object without one is an internal error, an update must
/// set it).
pub fn spec_replicas_found(cr: &Json, paths: &ScalePaths) -> bool {
    nested(cr, &paths.spec_replicas).is_some()
}

/// The Scale of `cr`. Errors: a replicas path that holds something other than an integer,
/// a selector path that holds something other than a string.
pub fn scale_of(cr: &Json, paths: &ScalePaths) -> Result<Json, String> {
    let spec = nested_int(cr, &paths.spec_replicas)?;
    let status = nested_int(cr, &paths.status_replicas)?;
    let selector = if paths.label_selector.is_empty() {
        String::new()
    } else {
        match nested(cr, &paths.label_selector) {
            None => String::new(),
            Some(Json::String(s)) => s.clone(),
            Some(v) => {
                return Err(format!(
                    "{} accessor error: {v} is of the type {}, expected string",
                    paths.label_selector,
                    go_type(v)
                ))
            }
        }
    };
    let meta = cr.get("metadata").cloned().unwrap_or(json!({}));
    let mut metadata = serde_json::Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(k) {
            metadata.insert(k.to_string(), v.clone());
        }
    }
    let mut status_json = json!({"replicas": status});
    if !selector.is_empty() {
        status_json["selector"] = json!(selector);
    }
    Ok(json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": metadata,
        "spec": {"replicas": spec},
        "status": status_json,
    }))
}

/// `cr` with `scale`'s `spec.replicas` written at the spec replicas path (the objects on the
/// way created as needed).
pub fn apply_scale(cr: &mut Json, scale: &Json, paths: &ScalePaths) {
    let replicas = scale
        .get("spec")
        .and_then(|s| s.get("replicas"))
        .cloned()
        .unwrap_or(json!(0));
    let segs = segments(&paths.spec_replicas);
    let Some((last, parents)) = segs.split_last() else {
        return;
    };
    let mut node = cr;
    for s in parents {
        if !node.get(*s).is_some_and(Json::is_object) {
            node[*s] = json!({});
        }
        node = &mut node[*s];
    }
    node[*last] = replicas;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ScalePaths {
        ScalePaths::of_version(&json!({"subresources": {"scale": {
            "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector"}}}))
        .unwrap()
    }

    #[test]
    fn scale_reads_and_writes_the_crd_s_paths() {
        let cr = json!({"metadata": {"name": "w", "namespace": "d", "uid": "u", "labels": {"a": "b"}},
                        "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=w"}});
        let s = scale_of(&cr, &paths()).unwrap();
        assert_eq!(
            s,
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "w", "namespace": "d", "uid": "u"},
            "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=w"}})
        );
        let mut fresh = json!({"metadata": {"name": "w"}});
        assert_eq!(scale_of(&fresh, &paths()).unwrap()["spec"]["replicas"], 0);
        apply_scale(&mut fresh, &json!({"spec": {"replicas": 5}}), &paths());
        assert_eq!(fresh["spec"]["replicas"], 5);
        let bad = json!({"spec": {"replicas": "three"}});
        assert_eq!(
            scale_of(&bad, &paths()).unwrap_err(),
            ".spec.replicas accessor error: \"three\" is of the type string, expected int64"
        );
    }
}

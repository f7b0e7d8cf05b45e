//! Server-side `metav1.Table` (`as=Table;v=v1;g=meta.k8s.io`) from a plugin's printer columns
//! (`k8s.io/apiserver/pkg/registry/rest/table.go`, and the custom-resource table convertor
//! `apiextensions-apiserver/pkg/registry/customresource/tableconvertor`): JSONPath cells, ages
//! pre-formatted, computed cells from the plugin's `printer-cells`, `includeObject`.

use super::converter::Sharing;
use super::request_scope::RequestScope;
use crate::status::{ApiError, ApiResult};
use crate::strategy::PrinterColumn;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use wasm_apiserver_storage::SharedListResult;

pub use wasm_apiserver_apimachinery::duration::human_duration;

/// The age of a `metav1.Time` string, or `<unknown>`.
pub fn age(timestamp: Option<&str>) -> String {
    match timestamp.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()) {
        Some(t) => {
            human_duration((chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds())
        }
        None => "<unknown>".into(),
    }
}

/// Evaluate a kubectl-style JSONPath (`.status.phase`, `{.spec.containers[0].image}`) with
/// `serde_json_path` (RFC 9535): the first match, or `None`.
pub fn eval_json_path(obj: &Value, path: &str) -> Option<Value> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(p);
    let expr = if p.starts_with('$') {
        p.to_string()
    } else {
        format!("${p}")
    };
    let compiled = serde_json_path::JsonPath::parse(&expr).ok()?;
    compiled.query(obj).first().cloned()
}

fn column_definition(c: &PrinterColumn) -> Value {
    json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority})
}

fn cell(c: &PrinterColumn, obj: &Value, computed: &mut std::vec::IntoIter<Value>) -> Value {
    match c.json_path.as_str() {
        "@name" => obj
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(Value::Null),
        "@age" => json!(age(Some(
            wasm_apiserver_apimachinery::meta::accessor(obj).creation_timestamp()
        ))),
        // A computed `date` cell is a timestamp rendered as an age here, as a JSONPath one
        // is (a plugin has no clock; kube's printers compute ages with `time.Now()`).
        "" => match (c.type_.as_str(), computed.next()) {
            ("date", Some(Value::String(s))) => json!(age(Some(&s))),
            ("date", Some(Value::Null) | None) => json!(age(None)),
            (_, v) => v.unwrap_or(Value::Null),
        },
        path => {
            let v = eval_json_path(obj, path);
            match (c.type_.as_str(), v) {
                ("date", Some(Value::String(s))) => json!(age(Some(&s))),
                (_, Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_)))) => v,
                (_, Some(Value::Null)) | (_, None) => Value::Null,
                (_, Some(other)) => json!(other.to_string()),
            }
        }
    }
}

/// What a Table row carries of its object (`includeObject`, `metav1.IncludeObjectPolicy`):
/// nothing, its metadata as a `PartialObjectMetadata` (the default), or the whole object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludeObject {
    /// `None`.
    None,
    /// `Metadata` (the default, also for an empty value).
    Metadata,
    /// `Object`.
    Object,
}

impl IncludeObject {
    /// From the request's `includeObject` query parameter. Errors: 400
    /// `unrecognized includeObject value: "x"` (kube's `asTable`).
    pub fn from_query(q: &HashMap<String, String>) -> ApiResult<IncludeObject> {
        match q.get("includeObject").map(String::as_str) {
            Some("None") => Ok(IncludeObject::None),
            Some("Object") => Ok(IncludeObject::Object),
            None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
            Some(other) => Err(ApiError::bad_request(format!(
                "unrecognized includeObject value: {other:?}"
            ))),
        }
    }
}

fn row_object(obj: &Value, include: IncludeObject) -> Option<Value> {
    match include {
        IncludeObject::None => None,
        IncludeObject::Object => Some(obj.clone()),
        IncludeObject::Metadata => Some(
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                         "metadata": obj.get("metadata").cloned().unwrap_or(json!({}))}),
        ),
    }
}

/// The rows of `stored` (storage-version objects): computed cells from the plugin's
/// `printer-cells` (which sees the storage version, as every hook), JSONPath cells and the
/// row's object from the object in the Store's version.
async fn rows(
    scope: &Arc<RequestScope>,
    stored: Vec<Arc<Value>>,
    include: IncludeObject,
    sharing: Sharing,
) -> ApiResult<Vec<Value>> {
    let objs = scope.encode_list(stored.clone(), sharing).await?;
    let columns = scope.store.description.printer_columns.clone();
    let needs_computed = columns.iter().any(|c| c.json_path.is_empty());
    let computed: Vec<Vec<Value>> = if needs_computed {
        let scope = scope.clone();
        let objs_owned = stored;
        tokio::task::spawn_blocking(move || {
            objs_owned
                .iter()
                .map(|o| {
                    // printer-cells sees the storage version, as every hook.
                    let o = scope.for_hooks(o)?;
                    scope
                        .store
                        .strategy
                        .printer_cells(&o)
                        .map_err(|e| ApiError::from_strategy(e, scope.kind(), ""))
                })
                .collect::<ApiResult<Vec<_>>>()
        })
        .await
        .map_err(ApiError::internal)??
    } else {
        vec![Vec::new(); objs.len()]
    };
    Ok(objs
        .iter()
        .zip(computed)
        .map(|(o, cells)| {
            let mut it = cells.into_iter();
            let cells: Vec<Value> = columns.iter().map(|c| cell(c, o, &mut it)).collect();
            let mut row = json!({"cells": cells});
            if let Some(obj) = row_object(o, include) {
                row["object"] = obj;
            }
            row
        })
        .collect())
}

fn columns(scope: &RequestScope) -> Vec<Value> {
    scope
        .store
        .description
        .printer_columns
        .iter()
        .map(column_definition)
        .collect()
}

/// A Table of a list, with the list's resourceVersion, continue and remainingItemCount.
pub async fn list_table(
    scope: &Arc<RequestScope>,
    list: &SharedListResult,
    include: IncludeObject,
) -> ApiResult<Value> {
    let items = scope.store.decode_items(list)?;
    Ok(
        json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": super::store::list_meta(list),
              "columnDefinitions": columns(scope), "rows": rows(scope, items, include, Sharing::Stored).await?}),
    )
}

/// A one-row Table of one object (GET of a named object, a write's answer, watch events),
/// `obj` in the storage version, converted for the row as `sharing` says.
/// `headers` = include the column definitions (a watch sends them with its first event only);
/// the row carries the object as `include` says.
pub async fn object_table(
    scope: &Arc<RequestScope>,
    obj: &Value,
    headers: bool,
    include: IncludeObject,
    sharing: Sharing,
) -> ApiResult<Value> {
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(json!(""));
    Ok(
        json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
              "columnDefinitions": if headers { columns(scope) } else { Vec::new() },
              "rows": rows(scope, vec![Arc::new(obj.clone())], include, sharing).await?}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_json_paths() {
        let o =
            json!({"spec": {"containers": [{"image": "nginx"}]}, "status": {"phase": "Running"}});
        assert_eq!(eval_json_path(&o, ".status.phase"), Some(json!("Running")));
        assert_eq!(
            eval_json_path(&o, "{.spec.containers[0].image}"),
            Some(json!("nginx"))
        );
        assert_eq!(eval_json_path(&o, ".status.podIP"), None);
    }
}

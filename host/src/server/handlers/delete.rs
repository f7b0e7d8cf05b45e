//! DELETE of one object and of a collection (`k8s.io/apiserver/pkg/endpoints/handlers/delete.go`
//! `DeleteResource`, `DeleteCollection`).

use super::response::{json_response, respond_object, Output};
use crate::registry::propagation::PropagationPolicy;
use crate::registry::store::{DeleteOptions, DeleteResult};
use crate::registry::Store;
use crate::server::options;
use crate::server::options::Query;
use crate::status::{ApiError, ApiResult};
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::GroupKind;
use wasm_apiserver_storage::Preconditions;

/// `DeleteResource`: 200 with a `Success` Status when the object is gone (with the deleted
/// object instead when the resource returns it, as pods do), 200 with the object when it
/// remains terminating (graceful deletion or finalizers). Namespaces go through
/// `NamespaceLifecycle` (the immortal ones) and their own deletion
/// ([`crate::registry::namespace_rest`]).
pub async fn delete(
    r: &Store,
    ns: &str,
    name: &str,
    body: &Bytes,
    q: &Query,
    out: Output,
) -> ApiResult<Response> {
    let opts = delete_options(body, q)?;
    let result = if r.is_namespaces() {
        crate::admission::namespace_lifecycle::admit_namespace_delete(name)?;
        crate::registry::namespace_rest::delete_namespace(r, name, &opts).await?
    } else {
        r.delete(ns, name, &opts).await?
    };
    match result {
        DeleteResult::Pending(obj) => respond_object(r, obj, out, StatusCode::OK, &[]).await,
        // `ReturnDeletedObject` (pods and any resource whose description asks).
        DeleteResult::Deleted(obj) if r.description.return_deleted_object => {
            respond_object(r, obj, out, StatusCode::OK, &[]).await
        }
        DeleteResult::Deleted(obj) => {
            let d = &r.description;
            Ok(json_response(
                StatusCode::OK,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                        "details": {"name": name, "group": d.group, "kind": d.plural,
                                    "uid": obj.pointer("/metadata/uid").cloned().unwrap_or(Value::Null)}}),
                &[],
            ))
        }
    }
}

/// `DeleteCollection`: the list options select, the delete options apply to each object; the
/// answer is the list of what was deleted.
pub async fn delete_collection(
    r: &Store,
    ns: &str,
    body: &Bytes,
    q: &Query,
) -> ApiResult<Response> {
    let opts = delete_options(body, q)?;
    let list_opts = options::list_options(r, q, false)?;
    let deleted = r.delete_collection(ns, &list_opts, &opts).await?;
    let body = json!({"kind": r.description.list_kind, "apiVersion": r.description.api_version(),
                      "metadata": {"resourceVersion": deleted.resource_version.to_string()},
                      "items": deleted.items});
    Ok(json_response(StatusCode::OK, &body, &[]))
}

fn delete_options(body: &Bytes, q: &Query) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions {
        dry_run: options::is_dry_run(q)?,
        ..Default::default()
    };
    let (mut policy, mut orphan) = (None::<String>, None::<bool>);
    if !body.is_empty() {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        opts.grace_period_seconds = v.get("gracePeriodSeconds").and_then(Value::as_i64);
        if let Some(p) = v.get("preconditions") {
            opts.preconditions = Preconditions {
                uid: p.get("uid").and_then(Value::as_str).map(String::from),
                resource_version: p
                    .get("resourceVersion")
                    .and_then(Value::as_str)
                    .map(String::from),
            };
        }
        policy = v
            .get("propagationPolicy")
            .and_then(Value::as_str)
            .map(String::from);
        orphan = v.get("orphanDependents").and_then(Value::as_bool);
        if v.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| x == "All"))
        {
            opts.dry_run = true;
        }
    }
    // Query parameters as kube's parameter codec reads them into DeleteOptions.
    if let Some(p) = q.get("propagationPolicy") {
        policy = Some(p.clone());
    }
    if let Some(o) = options::query_bool(q, "orphanDependents") {
        orphan = Some(o);
    }
    opts.propagation_policy =
        PropagationPolicy::from_options(policy.as_deref(), orphan).map_err(|errs| {
            ApiError::invalid(
                &GroupKind {
                    group: "meta.k8s.io".into(),
                    kind: "DeleteOptions".into(),
                },
                "",
                &errs,
            )
        })?;
    if let Some(g) = q.get("gracePeriodSeconds") {
        opts.grace_period_seconds = Some(
            g.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds: {g}")))?,
        );
    }
    Ok(opts)
}

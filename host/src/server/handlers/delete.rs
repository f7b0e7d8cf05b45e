//! DELETE of one object and of a collection (`k8s.io/apiserver/pkg/endpoints/handlers/delete.go`
//! `DeleteResource`, `DeleteCollection`).

use super::request::Request;
use super::response::{json_response, respond_object};
use crate::registry::converter::Sharing;
use crate::registry::deletion::{DeleteOptions, DeleteResult};
use crate::registry::propagation::PropagationPolicy;
use crate::registry::{RequestScope, WriteAdmission};
use crate::server::options;
use crate::server::options::Query;
use crate::status::{ApiError, ApiResult};
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_apiserver_apimachinery::GroupKind;
use wasm_apiserver_storage::Preconditions;

/// `DeleteResource`: 200 with a `Success` Status when the object is gone (with the deleted
/// object instead when the resource returns it, as pods do), 200 with the object when it
/// remains terminating (graceful deletion or finalizers). Admission runs in the Store on the
/// object being deleted; namespaces go through their own deletion
/// ([`crate::registry::rest::delete`]).
pub async fn delete(
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let (r, name, out) = (&scope.store, req.name(), req.output);
    let mut opts = delete_options(&req.body, req.query())?;
    opts.admission = admission;
    let result = crate::registry::rest::delete(r, req.namespace(), name, &opts).await?;
    match result {
        // 202 when it was not deleted at once and the client asked for cascading deletion
        // with `orphanDependents: false` (kube keeps 200 otherwise, for old clients).
        DeleteResult::Pending(obj) => {
            let code = if opts.orphan_dependents == Some(false) {
                StatusCode::ACCEPTED
            } else {
                StatusCode::OK
            };
            respond_object(scope, obj, out, code, &[]).await
        }
        // `ReturnDeletedObject` (pods and any resource whose description asks).
        DeleteResult::Deleted(obj) if r.description.return_deleted_object => {
            respond_object(scope, obj, out, StatusCode::OK, &[]).await
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
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let r = &scope.store;
    let mut opts = delete_options(&req.body, req.query())?;
    opts.admission = admission;
    let list_opts = options::list_options(r, req.query(), false)?;
    let deleted = r
        .delete_collection(req.namespace(), &list_opts, &opts)
        .await?;
    // The deleted objects in the form asked for (kube transforms this list as any other).
    let rv = deleted.resource_version.to_string();
    match req.output {
        super::response::Output::PartialObjectMetadataList(v) => {
            let items: Vec<Value> = deleted
                .items
                .iter()
                .map(|o| super::response::partial_object_metadata(o, v))
                .collect();
            let body = json!({"kind": "PartialObjectMetadataList", "apiVersion": v,
                              "metadata": {"resourceVersion": rv}, "items": items});
            return Ok(json_response(StatusCode::OK, &body, &[]));
        }
        super::response::Output::PartialObjectMetadata(_) => {
            return Err(super::response::not_acceptable_shape(true))
        }
        _ => {}
    }
    let items = scope
        .encode_list(
            deleted.items.into_iter().map(Arc::new).collect(),
            Sharing::No,
        )
        .await?
        .into_iter()
        .map(Arc::unwrap_or_clone)
        .collect::<Vec<Value>>();
    let body = json!({"kind": r.description.list_kind, "apiVersion": r.description.api_version(),
                      "metadata": {"resourceVersion": rv},
                      "items": items});
    Ok(json_response(StatusCode::OK, &body, &[]))
}

/// `DeleteOptions` from the body, or, when the body is empty, from the query (kube's
/// `DeleteResource` decodes the parameters only then), validated (`ValidateDeleteOptions`).
fn delete_options(body: &Bytes, q: &Query) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions::default();
    let (policy, orphan) = if !body.is_empty() {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        let wrong = |field: &str, want: &str| {
            ApiError::bad_request(format!(
                "error decoding DeleteOptions: {field}: expected {want}"
            ))
        };
        opts.grace_period_seconds = match v.get("gracePeriodSeconds") {
            None | Some(Value::Null) => None,
            Some(g) => Some(
                g.as_i64()
                    .ok_or_else(|| wrong("gracePeriodSeconds", "an integer"))?,
            ),
        };
        if let Some(p) = v.get("preconditions") {
            opts.preconditions = Preconditions {
                uid: p.get("uid").and_then(Value::as_str).map(String::from),
                resource_version: p
                    .get("resourceVersion")
                    .and_then(Value::as_str)
                    .map(String::from),
            };
        }
        opts.dry_run = v
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| x == "All"));
        let policy = match v.get("propagationPolicy") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(p.clone()),
            Some(_) => return Err(wrong("propagationPolicy", "a string")),
        };
        let orphan = match v.get("orphanDependents") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(wrong("orphanDependents", "a boolean")),
        };
        (policy, orphan)
    } else {
        opts.dry_run = options::is_dry_run(q)?;
        if let Some(g) = q.get("gracePeriodSeconds") {
            opts.grace_period_seconds =
                Some(g.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid gracePeriodSeconds: {g}"))
                })?);
        }
        (
            q.get("propagationPolicy").cloned(),
            options::query_bool(q, "orphanDependents"),
        )
    };
    opts.orphan_dependents = orphan;
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
    Ok(opts)
}

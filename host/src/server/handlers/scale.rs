//! The `scale` subresource of a resource whose Store has replicas paths (a CRD's
//! `subresources.scale`), as kube's `ScaleREST` serves it
//! (apiextensions-apiserver/pkg/registry/customresource/etcd.go): GET answers the
//! `autoscaling/v1` Scale read from the paths; PUT and PATCH (JSON and merge patches, what
//! `kubectl scale` sends) turn the current object into its Scale, change it, and write its
//! `spec.replicas` back into the object through the resource's own update — its strategy
//! validates the result (schema, CEL) — with the Scale's resourceVersion as precondition.

use super::request::Request;
use super::response::json_response;
use crate::registry::converter::Sharing;
use crate::registry::store::{PatchFn, UpdatedObject};
use crate::registry::{RequestScope, UpdateOptions, WriteAdmission};
use crate::server::options::{OptionsKind, WriteOptions};
use crate::status::{ApiError, ApiResult};
use crate::strategy::{ErrorType, FieldError};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_apiserver_apiextensions::scale::{apply_scale, scale_of, spec_replicas_found, ScalePaths};
use wasm_apiserver_apimachinery::GroupKind;

/// kube's marker for "the object has no spec replicas": an update must set them.
const INVALID_SPEC_REPLICAS: i64 = i32::MIN as i64;

/// Serve `method` on the Scale of the object `req` names. Errors: 404 when the object does
/// not exist; 500 when its replicas paths hold something else than an integer (or GET finds
/// no spec replicas, as kube); 400 for a body that is not a Scale or a Scale update that
/// leaves the spec replicas unset; 422 for negative replicas; 415 for other patch types;
/// then the update's own errors (409 on a stale resourceVersion, 422 from the strategy).
pub async fn scale(
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
    method: &Method,
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let r = &scope.store;
    let Some(paths) = r.scale_paths().cloned() else {
        return Err(ApiError::no_route(&req.info.path));
    };
    let (ns, name) = (req.namespace(), req.name());
    if *method == Method::GET {
        let rv = req.query().get("resourceVersion").map(String::as_str);
        let stored = r.get(ns, name, rv.unwrap_or("")).await?;
        // In the request's version, read by the current schema (the paths are that version's).
        let obj = scope.encode(Arc::new(stored), Sharing::Stored).await?;
        if !spec_replicas_found(&obj, &paths) {
            return Err(ApiError::internal(format!(
                "the spec replicas field {:?} does not exist",
                paths.spec_replicas
            )));
        }
        let scale = scale_of(&obj, &paths).map_err(ApiError::internal)?;
        return Ok(json_response(StatusCode::OK, &scale, &[]));
    }
    let kind = if *method == Method::PUT {
        OptionsKind::Update
    } else {
        OptionsKind::Patch
    };
    let options = WriteOptions::decode(req.query(), req.user_agent(), kind, false)?;
    let change = scale_change(req, method)?;
    // The Scale is taken from, and written into, the object in the request's version.
    let patch = scope.decode_patch(
        scale_update(paths.clone(), change, r.gr.clone(), name.to_string()),
        |_| Ok(()),
    );
    let opts = UpdateOptions {
        subresource: crate::registry::store::Subresource::Main,
        force_allow_create: false,
        dry_run: options.dry_run,
        field_manager: Some(&options.field_manager),
        admission,
    };
    let res = r
        .update(ns, name, UpdatedObject::Patch(patch), &opts)
        .await?;
    let obj = scope.encode(Arc::new(res.object), Sharing::No).await?;
    let scale = scale_of(&obj, &paths).map_err(ApiError::bad_request)?;
    Ok(json_response(StatusCode::OK, &scale, &res.warnings))
}

/// How the request changes the current Scale.
type ScaleChange = Arc<dyn Fn(&Value) -> ApiResult<Value> + Send + Sync>;

/// The body as a change of the Scale: PUT replaces it; a JSON or merge patch patches it.
fn scale_change(req: &Request<'_>, method: &Method) -> ApiResult<ScaleChange> {
    if req.body.len() > crate::limits::MAX_BODY_BYTES {
        return Err(ApiError::request_entity_too_large(&format!(
            "limit is {}",
            crate::limits::MAX_BODY_BYTES
        )));
    }
    let body: Value = serde_json::from_slice(&req.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body: {e}")))?;
    if *method == Method::PUT {
        if body.get("kind").is_some_and(|k| k != "Scale") || !body.is_object() {
            return Err(ApiError::bad_request(format!(
                "wrong object passed to Scale update: {body}"
            )));
        }
        return Ok(Arc::new(move |_| Ok(body.clone())));
    }
    match req.content_type().as_str() {
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            // A Scale holds no lists: a strategic merge patch is a merge patch.
            Ok(Arc::new(move |cur: &Value| {
                let mut doc = cur.clone();
                json_patch::merge(&mut doc, &body);
                Ok(doc)
            }))
        }
        "application/json-patch+json" => {
            let patch: json_patch::Patch = serde_json::from_value(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            Ok(Arc::new(move |cur: &Value| {
                super::patch::apply_json_patch(cur, &patch.0)
            }))
        }
        other => Err(ApiError::unsupported_patch_type(
            other,
            "autoscaling/v1, Kind=Scale",
        )),
    }
}

/// kube's `scaleUpdatedObjectInfo.UpdatedObject`: current object → its Scale → the changed
/// Scale (validated as `autoscaling.ValidateScale`) → the object with the new spec replicas
/// and, when the Scale names one, its resourceVersion as the update's precondition.
fn scale_update(
    paths: ScalePaths,
    change: ScaleChange,
    gr: wasm_apiserver_apimachinery::GroupResource,
    name: String,
) -> PatchFn {
    Arc::new(move |current: &Value| {
        if current.is_null() {
            let gr = wasm_apiserver_apimachinery::GroupResource {
                resource: format!("{}/scale", gr.resource),
                ..gr.clone()
            };
            return Err(ApiError::not_found(&gr, &name));
        }
        let mut old = scale_of(current, &paths).map_err(ApiError::internal)?;
        if !spec_replicas_found(current, &paths) {
            old["spec"]["replicas"] = json!(INVALID_SPEC_REPLICAS);
        }
        let mut scale = change(&old)?;
        if !scale.get("spec").is_none_or(Value::is_object) || !scale.is_object() {
            return Err(ApiError::bad_request(format!(
                "wrong object passed to Scale update: {scale}"
            )));
        }
        // Scale's spec.replicas is an int32: anything else does not decode (400).
        let replicas = match scale.pointer("/spec/replicas") {
            None | Some(Value::Null) => Some(0),
            Some(v) => match v.as_i64() {
                Some(n) if n == INVALID_SPEC_REPLICAS || i32::try_from(n).is_ok() => Some(n),
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "unable to decode the Scale: spec.replicas: {v} is not an int32"
                    )))
                }
            },
        };
        if replicas == Some(INVALID_SPEC_REPLICAS) {
            return Err(ApiError::bad_request(format!(
                "the spec replicas field {:?} cannot be empty",
                paths.spec_replicas
            )));
        }
        if let Some(n) = replicas.filter(|n| *n < 0) {
            let scale_kind = GroupKind {
                group: "autoscaling".into(),
                kind: "Scale".into(),
            };
            return Err(ApiError::invalid(
                &scale_kind,
                &name,
                &[FieldError {
                    error_type: ErrorType::Invalid,
                    field: "spec.replicas".into(),
                    bad_value: Some(json!(n)),
                    detail: "must be greater than or equal to 0".into(),
                }],
            ));
        }
        scale["spec"]["replicas"] = json!(replicas.unwrap_or(0));
        let mut cr = current.clone();
        apply_scale(&mut cr, &scale, &paths);
        let rv = scale
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !rv.is_empty() {
            cr["metadata"]["resourceVersion"] = json!(rv);
        }
        Ok(cr)
    })
}

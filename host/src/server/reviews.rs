//! The review endpoints the host serves itself — creates that answer a question and store
//! nothing: `authentication.k8s.io/v1` `SelfSubjectReview` (`kubectl auth whoami`) and
//! `authorization.k8s.io/v1` `SelfSubjectAccessReview`, `SelfSubjectRulesReview`,
//! `SubjectAccessReview`, `LocalSubjectAccessReview` (`kubectl auth can-i`, with and
//! without `--list`). Each is authorized like any create (`system:basic-user` grants the self
//! reviews to every authenticated user). Bodies are JSON, at most
//! [`crate::limits::MAX_BODY_BYTES`].

use super::context::user_of;
use super::state::AppState;
use crate::authentication::self_subject_review;
use crate::authorization::access_review;
use crate::limits::MAX_BODY_BYTES;
use crate::status::{ApiError, ApiResult};
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;
use std::sync::Arc;

/// The review object of a request: JSON, or protobuf as kubectl's typed clients send it.
async fn body(req: Request, kind: &str) -> ApiResult<Value> {
    let protobuf = req
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with(crate::protobuf::CONTENT_TYPE));
    let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::request_entity_too_large(&format!("limit is {MAX_BODY_BYTES}")))?;
    if bytes.is_empty() {
        return Ok(serde_json::json!({}));
    }
    if protobuf {
        return crate::protobuf::decode(&bytes, "authorization.k8s.io/v1", kind);
    }
    // serde_json stops at 128 levels; the document bounds are the ones every body has.
    let v: Value =
        serde_json::from_slice(&bytes).map_err(|e| ApiError::bad_request(e.to_string()))?;
    crate::limits::check_object(&v)
        .map_err(|_| ApiError::bad_request("the request body nests too deeply or is too large"))?;
    Ok(v)
}

fn created(result: ApiResult<Value>) -> Response {
    match result {
        Ok(v) => (StatusCode::CREATED, Json(v)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`.
pub async fn self_subject_review(req: Request) -> Response {
    let user = user_of(&req);
    created(Ok(self_subject_review::review(&user)))
}

/// `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`.
pub async fn self_subject_access_review(
    State(state): State<Arc<AppState>>,
    req: Request,
) -> Response {
    let user = user_of(&req);
    created(match body(req, "SelfSubjectAccessReview").await {
        Ok(review) => access_review::self_subject_access_review(&state.authorizer, &user, review),
        Err(e) => Err(e),
    })
}

/// `POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews`.
pub async fn self_subject_rules_review(
    State(state): State<Arc<AppState>>,
    req: Request,
) -> Response {
    let user = user_of(&req);
    created(match body(req, "SelfSubjectRulesReview").await {
        Ok(review) => access_review::self_subject_rules_review(&state.authorizer, &user, review),
        Err(e) => Err(e),
    })
}

/// `POST /apis/authorization.k8s.io/v1/subjectaccessreviews`.
pub async fn subject_access_review(State(state): State<Arc<AppState>>, req: Request) -> Response {
    created(match body(req, "SubjectAccessReview").await {
        Ok(review) => access_review::subject_access_review(&state.authorizer, review, None),
        Err(e) => Err(e),
    })
}

/// `POST /apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews`.
pub async fn local_subject_access_review(
    State(state): State<Arc<AppState>>,
    Path(namespace): Path<String>,
    req: Request,
) -> Response {
    created(match body(req, "LocalSubjectAccessReview").await {
        Ok(review) => {
            access_review::subject_access_review(&state.authorizer, review, Some(&namespace))
        }
        Err(e) => Err(e),
    })
}

//! Serving OpenAPI v3 (`k8s.io/kube-openapi/pkg/handler3`): `/openapi/v3` lists the
//! group-versions with their documents' hashes, `/openapi/v3/<gv>` serves one document
//! (immutable for a hash, as kube's handler marks it). The documents come from the served
//! [`Snapshot`](crate::registry::Snapshot) ([`crate::registry::openapi`]).

use super::state::AppState;
use crate::registry::openapi;
use crate::status::ApiError;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// `/openapi/v3`.
pub async fn root(State(state): State<Arc<AppState>>) -> Response {
    Json(openapi::root(&state.served.load().openapi)).into_response()
}

/// `/openapi/v3/<gv>`. 404 for a group-version not served.
pub async fn document(State(state): State<Arc<AppState>>, Path(gv): Path<String>) -> Response {
    match state.served.load().openapi.get(gv.trim_matches('/')) {
        Some(doc) => {
            let mut r = Json(doc).into_response();
            r.headers_mut().insert(
                header::CACHE_CONTROL,
                header::HeaderValue::from_static("public, immutable, max-age=31536000"),
            );
            r
        }
        None => ApiError::no_route(&format!("/openapi/v3/{gv}")).into_response(),
    }
}

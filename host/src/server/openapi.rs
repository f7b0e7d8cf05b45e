//! Serving OpenAPI v3 (`k8s.io/kube-openapi/pkg/handler3`): `/openapi/v3` lists the
//! group-versions with their documents' hashes, `/openapi/v3/<gv>` serves one document
//! (immutable for a hash, as kube's handler marks it). The documents come from the served
//! [`Snapshot`](crate::registry::Snapshot) ([`crate::registry::openapi`]).

use super::state::AppState;
use crate::status::ApiError;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// `/openapi/v3`.
pub async fn root(State(state): State<Arc<AppState>>) -> Response {
    Json(state.served.load().openapi_root()).into_response()
}

/// `/openapi/v3/<gv>`. 404 for a group-version not served.
pub async fn document(State(state): State<Arc<AppState>>, Path(gv): Path<String>) -> Response {
    match state.served.load().openapi.get(gv.trim_matches('/')) {
        Some(doc) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "public, immutable, max-age=31536000"),
            ],
            doc.body.clone(),
        )
            .into_response(),
        None => ApiError::no_route(&format!("/openapi/v3/{gv}")).into_response(),
    }
}

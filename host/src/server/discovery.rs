//! Serving discovery (`k8s.io/apiserver/pkg/endpoints/discovery`): aggregated discovery v2 at
//! `/api` and `/apis` when the client's `Accept` asks for it, legacy `APIVersions`,
//! `APIGroupList`, `APIGroup` and `APIResourceList` otherwise. The documents come from the
//! served [`Snapshot`](crate::registry::Snapshot) ([`crate::registry::discovery`]).

use super::state::AppState;
use crate::registry::{discovery, ResourceMap};
use crate::status::ApiError;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

fn aggregated_response(body: &bytes::Bytes) -> Response {
    (
        [(header::CONTENT_TYPE, discovery::AGGREGATED_V2)],
        body.clone(),
    )
        .into_response()
}

/// `/api`: aggregated discovery of the core group, or legacy `APIVersions`.
pub async fn api_root(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if discovery::wants_aggregated(accept(&headers)) {
        return aggregated_response(&state.served.load().discovery_core);
    }
    Json(discovery::api_versions(&state.address)).into_response()
}

/// `/apis`: aggregated discovery of every named group, or legacy `APIGroupList`.
pub async fn apis_root(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let snapshot = state.served.load();
    if discovery::wants_aggregated(accept(&headers)) {
        return aggregated_response(&snapshot.discovery_groups);
    }
    Json(discovery::api_group_list(&snapshot.resources)).into_response()
}

/// Legacy discovery below `/api` and `/apis`: `/api/<v>`, `/apis/<g>`, `/apis/<g>/<v>`.
/// `None` when the path is not one of those; 404 for a group or version not served.
pub fn legacy(map: &ResourceMap, path: &str) -> Option<Response> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let body = match parts.as_slice() {
        ["api", version] => discovery::api_resource_list(map, "", version),
        ["apis", group] => {
            discovery::group_versions(map, group).map(|vs| discovery::api_group(group, &vs))
        }
        ["apis", group, version] => discovery::api_resource_list(map, group, version),
        _ => return None,
    };
    Some(match body {
        Some(b) => Json(b).into_response(),
        None => ApiError::no_route(path).into_response(),
    })
}

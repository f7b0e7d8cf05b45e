//! Resource handlers (`k8s.io/apiserver/pkg/endpoints/handlers`): each decodes the request,
//! makes one registry call and encodes the answer. Every failure is an [`ApiError`] turned
//! into a `metav1.Status` once, in [`resource`].
//!
//! - `get.rs` (get, list), `watch.rs`, `create.rs`, `update.rs`, `patch.rs`, `delete.rs`
//!   (delete, delete-collection): one verb family each;
//! - `body.rs`: decoding an object body; `response.rs`: writing answers (JSON, Tables).
//!
//! Writes carry the request's admission ([`crate::admission::Chain::bind`]), which the
//! registry Store runs; no handler calls an admission member.
//!
//! Query options are decoded in [`crate::server::options`].

pub mod body;
pub mod create;
pub mod delete;
pub mod get;
pub mod patch;
pub mod response;
pub mod update;
pub mod watch;

use super::context::Warnings;
use super::request_info::RequestInfo;
use super::state::AppState;
use super::{discovery, options};
use crate::admission::AdmissionRequest;
use crate::authentication::UserInfo;
use crate::registry::store::Subresource;
use crate::status::{ApiError, ApiResult};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use options::Query;
use std::sync::Arc;

pub use crate::limits::MAX_BODY_BYTES;

/// The one entry point for resource paths (`/api/v1/...`, `/apis/<g>/<v>/...`): the request
/// as the filters left it — its [`RequestInfo`] (read once by the request-info filter), user
/// and [`Warnings`] sink.
pub async fn resource(
    State(state): State<Arc<AppState>>,
    method: Method,
    axum::Extension(info): axum::Extension<Arc<RequestInfo>>,
    axum::Extension(warnings): axum::Extension<Warnings>,
    headers: HeaderMap,
    user: Option<axum::Extension<UserInfo>>,
    body: Body,
) -> Response {
    let user = user.map(|u| u.0).unwrap_or_else(UserInfo::anonymous);
    // `limitedReadBody` (handlers/rest.go): read at most the limit, answer 413 as a Status
    // without reading the rest. (Answering on the announced length alone, before reading,
    // would reset the connection under a client still sending: it would see no answer.)
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::request_entity_too_large(&format!("limit is {MAX_BODY_BYTES}"))
                .into_response()
        }
    };
    match dispatch(&state, &method, &info, &warnings, &headers, &user, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn dispatch(
    state: &Arc<AppState>,
    method: &Method,
    info: &RequestInfo,
    warnings: &Warnings,
    headers: &HeaderMap,
    user: &UserInfo,
    body: Bytes,
) -> ApiResult<Response> {
    let snapshot = state.served.load();
    let map = &snapshot.resources;
    let path = info.path.as_str();
    let q: &Query = &info.query;
    if !info.is_resource_request {
        if *method == Method::GET {
            if let Some(resp) = discovery::legacy(map, path) {
                return Ok(resp);
            }
        }
        return Err(ApiError::no_route(path));
    }
    let Some(r) = map.get(&info.group, &info.version, &info.resource) else {
        return Err(ApiError::no_route(path));
    };
    // A deprecated version's `Warning` on every answer, errors included (apiextensions-apiserver's
    // `customresource_handler.go` adds it before serving the request).
    if let Some(warning) = &r.deprecation_warning {
        warnings.add(warning);
    }
    async {
        let sub = match info.subresource.as_str() {
            "" => Subresource::Main,
            "status" if r.description.has_status() => Subresource::Status,
            _ => return Err(ApiError::no_route(path)),
        };
        if !r.description.namespaced && !info.namespace.is_empty() {
            return Err(ApiError::no_route(path));
        }
        if r.description.namespaced && info.namespace.is_empty() && !info.name.is_empty() {
            return Err(ApiError::no_route(path));
        }
        let watch = info.long_running;
        let out = response::output(headers, q)?;
        if r.read_only && *method != Method::GET {
            return Err(ApiError::method_not_supported(
                &r.gr,
                &method.as_str().to_lowercase(),
            ));
        }
        let (ns, name) = (info.namespace.clone(), info.name.clone());
        // The request's admission, for the Store to run (writes only).
        let admission = || {
            state.admission.bind(AdmissionRequest {
                store: r.clone(),
                snapshot: snapshot.clone(),
                namespace: ns.clone(),
                name: name.clone(),
                subresource: info.subresource.clone(),
                user: user.clone(),
                // An invalid `dryRun` is refused by the handler before the Store runs anything.
                dry_run: options::is_dry_run(q).unwrap_or(false),
            })
        };
        match *method {
            Method::GET if watch => watch::watch(state, &r, &ns, &name, q, out).await,
            Method::GET if !name.is_empty() => get::get(&r, &ns, &name, q, out).await,
            Method::GET => get::list(&r, &ns, q, out).await,
            Method::POST if name.is_empty() && sub == Subresource::Main => {
                create::create(&r, &ns, &body, headers, q, out, admission()).await
            }
            Method::PUT if !name.is_empty() => {
                update::update(&r, &ns, &name, sub, &body, headers, q, out, admission()).await
            }
            Method::PATCH if !name.is_empty() => {
                patch::patch(&r, &ns, &name, sub, &body, headers, q, out, admission()).await
            }
            Method::DELETE if !name.is_empty() && sub == Subresource::Main => {
                delete::delete(&r, &ns, &name, &body, q, out, admission()).await
            }
            // Namespaces have no deletecollection in kube (405): it would bypass their lifecycle.
            Method::DELETE if name.is_empty() && r.is_namespaces() => {
                Err(ApiError::method_not_supported(&r.gr, "deletecollection"))
            }
            Method::DELETE if name.is_empty() && sub == Subresource::Main => {
                delete::delete_collection(&r, &ns, &body, q, admission()).await
            }
            _ => Err(ApiError::method_not_supported(&r.gr, method.as_str())),
        }
    }
    .await
}

/// The request's `User-Agent` (empty when absent or not text).
pub fn user_agent(headers: &axum::http::HeaderMap) -> &str {
    headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The subresource's name in `managedFields` (`""` for the object itself).
pub fn subresource_name(sub: crate::registry::store::Subresource) -> &'static str {
    match sub {
        crate::registry::store::Subresource::Main => "",
        crate::registry::store::Subresource::Status => "status",
    }
}

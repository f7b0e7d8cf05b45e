//! Resource handlers (`k8s.io/apiserver/pkg/endpoints/handlers`): each decodes the request,
//! makes one registry call and encodes the answer. Every failure is an [`ApiError`] turned
//! into a `metav1.Status` once, in [`resource`].
//!
//! Every handler takes the same arguments, as kube's: the resource's
//! [`RequestScope`](crate::registry::RequestScope) (its Store, the Converter, kind and
//! resource, the field manager — built once per path in the snapshot), the [`Request`]
//! (namespace, name, subresource, query, headers, user, output, body) and, for writes, the
//! request's admission ([`crate::admission::Chain::bind`]), which the registry Store runs; no
//! handler calls an admission member, and every conversion goes through the scope.
//!
//! - `get.rs` (get, list), `watch.rs`, `create.rs`, `update.rs`, `patch.rs`, `delete.rs`
//!   (delete, delete-collection): one verb family each;
//! - `request.rs`: the request; `body.rs`: decoding an object body; `response.rs`: writing
//!   answers (JSON, Tables).
//!
//! Query options are decoded and validated in [`crate::server::options`] (each verb's, with
//! kube's names).

pub mod body;
pub mod create;
pub mod delete;
pub mod get;
pub mod patch;
pub mod request;
pub mod response;
pub mod scale;
pub mod update;
pub mod watch;

use super::context::{AuditAnnotations, Warnings};
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
use request::Request;
use std::sync::Arc;

pub use crate::limits::MAX_BODY_BYTES;

/// The one entry point for resource paths (`/api/v1/...`, `/apis/<g>/<v>/...`): the request
/// as the filters left it — its [`RequestInfo`] (read once by the request-info filter), user,
/// [`Warnings`] sink and, when audited, [`AuditAnnotations`] sink (which admission adds to).
// One argument per axum extractor.
#[allow(clippy::too_many_arguments)]
pub async fn resource(
    State(state): State<Arc<AppState>>,
    method: Method,
    axum::Extension(info): axum::Extension<Arc<RequestInfo>>,
    axum::Extension(warnings): axum::Extension<Warnings>,
    audit: Option<axum::Extension<AuditAnnotations>>,
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
    // What admission adds to the request's audit event.
    let audit: Option<crate::admission::AuditSink> = audit.map(|a| {
        let a = a.0;
        Arc::new(move |k: &str, v: String| a.add(k, v)) as crate::admission::AuditSink
    });
    let sinks = (&warnings, audit);
    match dispatch(&state, &method, &info, sinks, &headers, &user, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// Route a resource request to its handler through the [`RequestScope`] of the path's
/// group, version and resource (`crate::registry::RequestScope`), as kube's installer routes
/// each path to a handler bound to its scope.
async fn dispatch(
    state: &Arc<AppState>,
    method: &Method,
    info: &RequestInfo,
    (warnings, audit): (&Warnings, Option<crate::admission::AuditSink>),
    headers: &HeaderMap,
    user: &UserInfo,
    body: Bytes,
) -> ApiResult<Response> {
    let snapshot = state.served.load();
    let map = &snapshot.resources;
    let path = info.path.as_str();
    if !info.is_resource_request {
        if *method == Method::GET {
            if let Some(resp) = discovery::legacy(map, path) {
                return Ok(resp);
            }
        }
        return Err(ApiError::no_route(path));
    }
    let Some(scope) = map.scope(&info.group, &info.version, &info.resource) else {
        return Err(ApiError::no_route(path));
    };
    // A deprecated version's `Warning` on every answer, errors included (apiextensions-apiserver's
    // `customresource_handler.go` adds it before serving the request).
    if let Some(warning) = &scope.deprecation_warning {
        warnings.add(warning);
    }
    let r = &scope.store;
    let subresource = match info.subresource.as_str() {
        "" => Subresource::Main,
        "status" if r.description.has_status() => Subresource::Status,
        // Written through the object itself (`scale.rs`).
        "scale" if r.scale_paths().is_some() && !info.name.is_empty() => Subresource::Main,
        _ => return Err(ApiError::no_route(path)),
    };
    if !r.description.namespaced && !info.namespace.is_empty() {
        return Err(ApiError::no_route(path));
    }
    if r.description.namespaced && info.namespace.is_empty() && !info.name.is_empty() {
        return Err(ApiError::no_route(path));
    }
    let output = response::output(headers, &info.query)?;
    if r.read_only && *method != Method::GET {
        return Err(ApiError::method_not_supported(
            &r.gr,
            &method.as_str().to_lowercase(),
        ));
    }
    let req = Request {
        info,
        subresource,
        headers,
        user,
        output,
        body,
    };
    // The request's admission, for the Store to run (writes only).
    let admission = || {
        state.admission.bind(AdmissionRequest {
            store: r.clone(),
            snapshot: snapshot.clone(),
            namespace: info.namespace.clone(),
            name: info.name.clone(),
            subresource: info.subresource.clone(),
            user: user.clone(),
            // An invalid `dryRun` is refused by the handler before the Store runs anything.
            dry_run: options::is_dry_run(&info.query).unwrap_or(false),
            audit: audit.clone(),
        })
    };
    if info.subresource == "scale" {
        return match *method {
            Method::GET => scale::scale(&scope, &req, method, None).await,
            Method::PUT | Method::PATCH => scale::scale(&scope, &req, method, admission()).await,
            _ => Err(ApiError::method_not_supported(&r.gr, method.as_str())),
        };
    }
    let (named, main) = (!info.name.is_empty(), subresource == Subresource::Main);
    match *method {
        Method::GET if info.long_running => watch::watch(state, &scope, &req).await,
        Method::GET if named => get::get(&scope, &req).await,
        Method::GET => get::list(&scope, &req).await,
        Method::POST if !named && main => create::create(&scope, &req, admission()).await,
        Method::PUT if named => update::update(&scope, &req, admission()).await,
        Method::PATCH if named => patch::patch(&scope, &req, admission()).await,
        Method::DELETE if named && main => delete::delete(&scope, &req, admission()).await,
        // Namespaces have no deletecollection in kube (405): it would bypass their lifecycle.
        Method::DELETE if !named && r.is_namespaces() => {
            Err(ApiError::method_not_supported(&r.gr, "deletecollection"))
        }
        Method::DELETE if !named && main => {
            delete::delete_collection(&scope, &req, admission()).await
        }
        _ => Err(ApiError::method_not_supported(&r.gr, method.as_str())),
    }
}

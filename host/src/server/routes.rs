//! The router (kube-apiserver's `pkg/server/routes` for the non-resource paths, the
//! `/api` and `/apis` trees to discovery and the resource handlers) inside the filter chain.

use super::filters::HandlerChain;
use super::state::AppState;
use super::{components, discovery, handlers, openapi, reviews, token_request};
use crate::status::ApiError;
use axum::extract::{OriginalUri, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

/// The version reported at `/version`: kubectl's dispatcher picks its client by the minor
/// version, and 1.32 selects the built-in kubectl 1.32 (`k8s.io/apimachinery/pkg/version`
/// `Info`).
pub fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.0-wasm-apiserver",
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "linux/amd64"
    })
}

/// The router: non-resource paths by name, everything under `/api` and `/apis` through
/// discovery or the resource handler, inside `chain`'s filters.
pub fn router(state: Arc<AppState>, chain: HandlerChain) -> Router {
    let routes = Router::new()
        .route("/version", get(|| async { Json(version_info()) }))
        // The Python client asks for `/version/`, `/api/` and `/apis/`; go-restful serves both.
        .route("/version/", get(|| async { Json(version_info()) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(|| async { crate::metrics::render() }))
        .route("/api", get(discovery::api_root))
        .route("/api/", get(discovery::api_root))
        .route("/apis", get(discovery::apis_root))
        .route("/apis/", get(discovery::apis_root))
        .route("/openapi/v3", get(openapi::root))
        .route("/openapi/v3/{*gv}", get(openapi::document))
        .route(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            post(reviews::self_subject_review),
        )
        .route(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            post(reviews::self_subject_access_review),
        )
        .route(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            post(reviews::self_subject_rules_review),
        )
        .route(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            post(reviews::subject_access_review),
        )
        .route(
            "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews",
            post(reviews::local_subject_access_review),
        )
        .route(
            "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            post(token_request::create),
        )
        .route(
            "/.well-known/openid-configuration",
            get(token_request::openid_configuration),
        )
        .route("/openid/v1/jwks", get(token_request::jwks))
        .route(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            post(token_request::token_review),
        )
        .route(
            "/apis/wasm-apiserver.dev/v1/strategyplugincomponents/{sha256}",
            get(components::get_component)
                .put(components::put_component)
                .fallback(components::other_method),
        )
        .route("/api/{*rest}", any(handlers::resource))
        .route("/apis/{*rest}", any(handlers::resource))
        .fallback(|OriginalUri(uri): OriginalUri| async move {
            ApiError::no_route(uri.path()).into_response()
        });
    chain
        .build(routes)
        // The resource handler enforces its own limit and answers 413 as a Status.
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(state)
}

/// `/readyz`: fails once shutdown began, when the storage backend is unhealthy, or when a KMS
/// plugin of the encryption configuration is.
async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.terminating.load(std::sync::atomic::Ordering::SeqCst) {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[-]shutdown failed: process is shutting down\nreadyz check failed\n",
        )
            .into_response();
    }
    if let Err(e) = state.backend.health().await {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("[-]storage failed: {e}\nreadyz check failed\n"),
        )
            .into_response();
    }
    // kube's `kms-providers` check (encryptionconfig/config.go): every KMS v2 plugin healthy;
    // as kube's healthz handler, the reason is logged, not answered.
    let mut failed = false;
    for (i, p) in state
        .encryption
        .current()
        .kms_providers()
        .iter()
        .enumerate()
    {
        if let Err(e) = p.check().await {
            tracing::warn!(check = %format!("kms-provider-{i}"), provider = p.name(), error = %e, "readyz: kms-providers failed");
            failed = true;
        }
    }
    if failed {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[-]kms-providers failed: reason withheld\nreadyz check failed\n",
        )
            .into_response();
    }
    "ok".into_response()
}

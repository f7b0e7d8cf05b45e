//! The authentication filter (`k8s.io/apiserver/pkg/endpoints/filters/authentication.go`
//! `WithAuthentication`): every request is authenticated by the configured
//! [`Authenticator`](crate::authentication::Authenticator) from its connection's client
//! certificates and its `Authorization` header; the user travels on as a request extension
//! ([`UserInfo`](crate::authentication::UserInfo)), or the request is answered 401 `Unauthorized` (the reason only logged, as
//! kube does). The `Authorization` header is removed once used, as kube does, so nothing
//! further in the chain sees the credential.

use crate::authentication::Authenticator;
use crate::server::serving::ConnectionInfo;
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Authenticate `req`, then run the rest of the chain with its user.
pub async fn with_authentication(
    State(authenticator): State<Arc<Authenticator>>,
    mut req: Request,
    next: Next,
) -> Response {
    let certificates = req
        .extensions()
        .get::<ConnectionInfo>()
        .map(|c| c.peer_certificates.clone())
        .unwrap_or_default();
    match authenticator
        .authenticate(&certificates, req.headers())
        .await
    {
        Ok(user) => {
            authenticated_user_request(&user.name);
            req.headers_mut().remove(header::AUTHORIZATION);
            req.extensions_mut().insert(user);
            next.run(req).await
        }
        Err(e) => {
            tracing::debug!(error = %e, path = req.uri().path(), "unable to authenticate the request");
            AUTHENTICATION_ATTEMPTS
                .with_label_values(&["failure"])
                .inc();
            ApiError::unauthorized().into_response()
        }
    }
}

/// `authentication_attempts{result}` (`success`, `failure`; `pkg/endpoints/filters/metrics.go`).
static AUTHENTICATION_ATTEMPTS: std::sync::LazyLock<prometheus::IntCounterVec> =
    std::sync::LazyLock::new(|| {
        crate::metrics::counter_vec(
            "authentication_attempts",
            "Counter of authenticated attempts.",
            &["result"],
        )
    });

/// Count an authenticated request by `username` in `authenticated_user_requests{username}`,
/// the name compressed as kube's `compressUsername` (`pkg/endpoints/filters/metrics.go`): a
/// few known names kept, an address-like name `email_id`, anything else `other`, so clients
/// cannot grow the label set.
fn authenticated_user_request(username: &str) {
    static BY_USER: std::sync::LazyLock<prometheus::IntCounterVec> =
        std::sync::LazyLock::new(|| {
            crate::metrics::counter_vec(
                "authenticated_user_requests",
                "Counter of authenticated requests broken out by username.",
                &["username"],
            )
        });
    AUTHENTICATION_ATTEMPTS
        .with_label_values(&["success"])
        .inc();
    let compressed = match username {
        "admin"
        | "client"
        | "kube_proxy"
        | "kubelet"
        | "system:serviceaccount:kube-system:default" => username,
        u if u.contains('@') => "email_id",
        _ => "other",
    };
    BY_USER.with_label_values(&[compressed]).inc();
}

//! The authentication filter (`k8s.io/apiserver/pkg/endpoints/filters/authentication.go`
//! `WithAuthentication`): every request is authenticated by the configured
//! [`Authenticator`](crate::authentication::Authenticator) from its connection's client
//! certificates and its `Authorization` header; the user travels on as a request extension
//! ([`UserInfo`]), or the request is answered 401 `Unauthorized` (the reason only logged, as
//! kube does). The `Authorization` header is removed once used, as kube does, so nothing
//! further in the chain sees the credential.

use super::serving::ConnectionInfo;
use super::state::AppState;
use crate::authentication::UserInfo;
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Authenticate `req`, then run the rest of the chain with its [`UserInfo`].
pub async fn with_authentication(
    State(state): State<Arc<AppState>>,
    mut req: Request,
    next: Next,
) -> Response {
    let certificates = req
        .extensions()
        .get::<ConnectionInfo>()
        .map(|c| c.peer_certificates.clone())
        .unwrap_or_default();
    match state
        .authenticator
        .authenticate(&certificates, req.headers())
    {
        Ok(user) => {
            crate::metrics::authenticated_user_request(&user.name);
            req.headers_mut().remove(header::AUTHORIZATION);
            req.extensions_mut().insert(user);
            next.run(req).await
        }
        Err(e) => {
            tracing::debug!(error = %e, path = req.uri().path(), "unable to authenticate the request");
            crate::metrics::authentication_failure();
            ApiError::unauthorized().into_response()
        }
    }
}

/// The user a request was authenticated as (anonymous when the filter did not run), borrowed
/// from the request when it has one.
pub fn user_ref(req: &Request) -> std::borrow::Cow<'_, UserInfo> {
    match req.extensions().get::<UserInfo>() {
        Some(u) => std::borrow::Cow::Borrowed(u),
        None => std::borrow::Cow::Owned(UserInfo::anonymous()),
    }
}

/// The user a request was authenticated as (anonymous when no authenticator set one), owned.
pub fn user_of(req: &Request) -> UserInfo {
    req.extensions()
        .get::<UserInfo>()
        .cloned()
        .unwrap_or_else(UserInfo::anonymous)
}

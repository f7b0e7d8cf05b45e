//! The authorization filter (`k8s.io/apiserver/pkg/endpoints/filters/authorization.go`
//! `WithAuthorization`): the request's [`Attributes`] — from its path as
//! `k8s.io/apiserver/pkg/endpoints/request/requestinfo.go` `NewRequestInfo` reads it, and the
//! authenticated user — are put to the [`Authorizer`](crate::authorization::Authorizer);
//! anything but `Allow` is answered 403 with kube's message
//! ([`crate::authorization::authorizer::forbidden_message`]).

use super::authentication::user_of;
use super::request_info;
use super::state::AppState;
use crate::authentication::UserInfo;
use crate::authorization::authorizer::forbidden_message;
use crate::authorization::{Attributes, Decision};
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::http::{Method, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use wasm_apiserver_apimachinery::GroupResource;

/// The attributes of a request by `user` (`GetAuthorizerAttributes` over `RequestInfo`):
/// resource verbs from the method (`get`/`list`/`watch`, `create`, `update`, `patch`,
/// `delete`/`deletecollection`), non-resource verbs the lower-cased method. A list or watch
/// with `fieldSelector=metadata.name=<n>` is authorized for that name, and a namespace object
/// is in its own namespace, as kube's `RequestInfo` has them.
pub fn attributes(method: &Method, uri: &Uri, user: UserInfo) -> Attributes {
    let path = uri.path();
    let Some(info) = request_info::parse(path) else {
        return Attributes {
            user,
            verb: method.as_str().to_ascii_lowercase(),
            path: path.to_string(),
            ..Default::default()
        };
    };
    let query = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|q| q.0)
        .unwrap_or_default();
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let mut name = info.name.clone();
    let verb = match *method {
        Method::GET | Method::HEAD if info.watch_path => "watch",
        Method::GET | Method::HEAD if !name.is_empty() => "get",
        Method::GET | Method::HEAD => {
            if matches!(param("watch"), Some("true" | "1")) {
                "watch"
            } else {
                "list"
            }
        }
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if name.is_empty() => "deletecollection",
        Method::DELETE => "delete",
        _ => "",
    };
    let verb = if verb.is_empty() {
        method.as_str().to_ascii_lowercase()
    } else {
        verb.to_string()
    };
    if (verb == "list" || verb == "watch") && name.is_empty() {
        if let Some(selector) = param("fieldSelector") {
            for term in selector.split(',') {
                if let Some(n) = term
                    .strip_prefix("metadata.name==")
                    .or_else(|| term.strip_prefix("metadata.name="))
                {
                    name = n.to_string();
                }
            }
        }
    }
    let namespace = if info.resource == "namespaces" && !info.name.is_empty() {
        info.name.clone()
    } else {
        info.namespace.clone()
    };
    Attributes {
        user,
        verb,
        resource_request: true,
        namespace,
        api_group: info.group,
        api_version: info.version,
        resource: info.resource,
        subresource: info.subresource,
        name,
        path: path.to_string(),
    }
}

/// The 403 for a denied request.
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let mut message = forbidden_message(attrs);
    if !reason.is_empty() {
        message = format!("{message}: {reason}");
    }
    let gr = GroupResource {
        group: attrs.api_group.clone(),
        resource: attrs.resource.clone(),
    };
    ApiError::forbidden(&gr, &attrs.name, &message)
}

/// Authorize `req`; run the rest of the chain only when allowed.
pub async fn with_authorization(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let attrs = attributes(req.method(), req.uri(), user_of(&req));
    let (decision, reason) = state.authorizer.authorize(&attrs);
    crate::metrics::authorization_decision(decision);
    let allowed = decision == Decision::Allow;
    let mut response = if allowed {
        next.run(req).await
    } else {
        tracing::debug!(user = %attrs.user.name, verb = %attrs.verb, path = %attrs.path, %reason, "forbidden");
        forbidden(&attrs, &reason).into_response()
    };
    if state.audit.is_some() {
        response
            .extensions_mut()
            .insert(super::audit::AuthorizationDecision { allowed, reason });
    }
    response
}

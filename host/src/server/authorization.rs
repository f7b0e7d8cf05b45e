//! The authorization filter (`k8s.io/apiserver/pkg/endpoints/filters/authorization.go`
//! `WithAuthorization`): the request's [`Attributes`] — from its path as
//! `k8s.io/apiserver/pkg/endpoints/request/requestinfo.go` `NewRequestInfo` reads it, and the
//! authenticated user — are put to the [`Authorizer`](crate::authorization::Authorizer);
//! anything but `Allow` is answered 403 with kube's message
//! ([`crate::authorization::authorizer::forbidden_message`]).

use super::authentication::{user_of, user_ref};
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
    // The query as the handler reads it (one parse rule for both, so what is authorized is
    // what is served): last value wins, `watch` true unless `0`/`false`.
    let query = parsed_query(uri);
    let watch = info.watch_path || super::options::query_bool(&query, "watch").unwrap_or(false);
    let mut name = info.name.clone();
    let verb = match *method {
        // The handler serves a watch for these, named or not.
        Method::GET | Method::HEAD if watch => "watch",
        Method::GET | Method::HEAD if !name.is_empty() => "get",
        Method::GET | Method::HEAD => "list",
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
        // `RequiresExactMatch("metadata.name")` of the selector the handler will apply.
        if let Some(selector) = query.get("fieldSelector") {
            if let Ok(parsed) = wasm_apiserver_apimachinery::fields::FieldSelector::parse(selector)
            {
                if let Some(n) = parsed.requires_exact_match("metadata.name") {
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

/// The query of `uri` as the resource handler parses it ([`super::options::Query`]).
pub fn parsed_query(uri: &Uri) -> super::options::Query {
    axum::extract::Query::<super::options::Query>::try_from_uri(uri)
        .map(|q| q.0)
        .unwrap_or_default()
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
    // Parsed once by the audit filter when it ran; the user may since have been replaced by
    // impersonation.
    let attrs = match req.extensions().get::<super::audit::RequestAttributes>() {
        Some(a) if a.0.user == *user_ref(&req) => a.0.clone(),
        Some(a) => Arc::new(crate::authorization::Attributes {
            user: user_of(&req),
            ..(*a.0).clone()
        }),
        None => Arc::new(attributes(req.method(), req.uri(), user_of(&req))),
    };
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

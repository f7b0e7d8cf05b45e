//! The request-info filter (`k8s.io/apiserver/pkg/endpoints/filters/requestinfo.go`
//! `WithRequestInfo`), outermost: the request's [`RequestInfo`] — verb, group, version,
//! resource, namespace, name, subresource, long-running, and the decoded query — is read once
//! here and put in the request's extensions, with a [`Warnings`] sink; every later filter and
//! the handler read them from there ([`crate::server::context`]). On the way out, the warnings
//! added by anything inside become the answer's `Warning` headers (kube's
//! `WithWarningRecorder`, `pkg/endpoints/filters/warning.go`).

use crate::server::context::Warnings;
use crate::server::handlers::response::append_warnings;
use crate::server::request_info::RequestInfo;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;

/// Read the request's [`RequestInfo`] and run the rest of the chain with it.
pub async fn with_request_info(mut req: Request, next: Next) -> Response {
    let info = Arc::new(RequestInfo::new(req.method(), req.uri()));
    let warnings = Warnings::default();
    req.extensions_mut().insert(info);
    req.extensions_mut().insert(warnings.clone());
    let mut response = next.run(req).await;
    let added = warnings.take();
    if !added.is_empty() {
        append_warnings(&mut response, &added);
    }
    response
}

//! One resource request as its handler sees it: what kube's handlers read from the
//! `http.Request` and its context (`request.RequestInfoFrom`, `request.UserFrom`,
//! `handlers/rest.go`) — the namespace, name and subresource, the decoded query, the headers,
//! the user, the negotiated output and the body. The resource itself comes from the
//! [`RequestScope`](crate::registry::RequestScope); the options of each verb are decoded from
//! [`Request::query`] by the handler ([`crate::server::options`]).

use super::response::Output;
use crate::authentication::UserInfo;
use crate::registry::store::Subresource;
use crate::server::options::Query;
use crate::server::request_info::RequestInfo;
use axum::body::Bytes;
use axum::http::HeaderMap;

/// One resource request (borrowed from the dispatcher for the handler's call).
pub struct Request<'a> {
    /// What the request-info filter read from the path and query.
    pub info: &'a RequestInfo,
    /// `/status` or the object itself.
    pub subresource: Subresource,
    /// The request's headers (media types, User-Agent).
    pub headers: &'a HeaderMap,
    /// Who asks.
    pub user: &'a UserInfo,
    /// How the answer is written (negotiated from `Accept`).
    pub output: Output,
    /// The body, read within [`crate::limits::MAX_BODY_BYTES`].
    pub body: Bytes,
}

impl Request<'_> {
    /// The namespace of the path (`""`: cluster-scoped or all namespaces).
    pub fn namespace(&self) -> &str {
        &self.info.namespace
    }

    /// The object's name (`""`: the collection).
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The decoded query.
    pub fn query(&self) -> &Query {
        &self.info.query
    }

    /// The `User-Agent` (empty when absent or not text).
    pub fn user_agent(&self) -> &str {
        self.headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The body's media type without parameters (`""` when none is given).
    pub fn content_type(&self) -> String {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    }
}

//! The audit filter (`k8s.io/apiserver/pkg/endpoints/filters/audit.go` `WithAudit`): after
//! authentication, the policy gives the request's level from its attributes and the
//! authenticated user; unless `None`, events go to the log at `RequestReceived`, at
//! `ResponseStarted` (watches, when the stream starts), at `ResponseComplete` (for a watch,
//! when its stream ends) and at `Panic`, minus the omitted stages. The request body is
//! recorded from level `Request`, the response body at `RequestResponse`; every answer carries
//! an `Audit-ID` header. What later layers add to the request's [`AuditAnnotations`] (the
//! authorization decision, as kube's `authorization.k8s.io/decision` and `…/reason`) becomes
//! the event's annotations.

use crate::audit::event::{response_status, Origin, RequestAudit, ResponseStatus};
use crate::audit::{Level, LogBackend, Policy, Stage};
use crate::authentication::UserInfo;
use crate::limits::MAX_BODY_BYTES;
use crate::server::context::{request_info, user_ref, AuditAnnotations, RequestAttributes};
use crate::server::serving::ConnectionInfo;
use crate::status::ApiError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::net::IpAddr;
use std::sync::Arc;

/// Auditing as configured (`--audit-policy-file`, `--audit-log-*`).
#[derive(Clone, Debug)]
pub struct Auditing {
    /// The policy.
    pub policy: Arc<Policy>,
    /// The log.
    pub backend: LogBackend,
}

/// Source IPs as kube lists them (`utilnet.SourceIPs`): `X-Forwarded-For`, then `X-Real-Ip`,
/// then the connection's address; unparsable entries skipped.
fn source_ips(headers: &HeaderMap, peer: Option<std::net::SocketAddr>) -> Vec<IpAddr> {
    let mut ips: Vec<IpAddr> = headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(',')
                .filter_map(|s| s.trim().parse::<IpAddr>().ok())
                .map(|ip| ip.to_canonical())
                .collect()
        })
        .unwrap_or_default();
    let real = headers
        .get("x-real-ip")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse().ok());
    // IPv4-mapped IPv6 addresses as IPv4, as Go prints them.
    for ip in real
        .into_iter()
        .chain(peer.map(|p| p.ip()))
        .map(|ip: IpAddr| ip.to_canonical())
    {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    ips
}

/// The user an `Impersonate-User` header asks for, for `impersonatedUser`.
fn impersonated(headers: &HeaderMap) -> Option<UserInfo> {
    let name = headers.get("impersonate-user")?.to_str().ok()?.to_string();
    let groups = headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    Some(UserInfo {
        name,
        groups,
        ..Default::default()
    })
}

fn json_of(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok()
}

/// A request body as the object it carries: JSON, YAML, or a protobuf envelope of a kind the
/// server decodes; `None` otherwise.
fn request_object_of(bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    if let Some((version, kind)) = crate::protobuf::envelope_kind(bytes) {
        return crate::protobuf::decode(bytes, &version, &kind).ok();
    }
    json_of(bytes).or_else(|| serde_yaml_ng::from_slice(bytes).ok())
}

/// Record the request as the policy says.
pub async fn with_audit(State(auditing): State<Auditing>, req: Request, next: Next) -> Response {
    let info = request_info(&req);
    let attrs = Arc::new(info.attributes(user_ref(&req).into_owned()));
    let (level, omit) = auditing.policy.evaluate(&attrs);
    let mut req = req;
    req.extensions_mut()
        .insert(RequestAttributes(attrs.clone()));
    if level == Level::None {
        return next.run(req).await;
    }
    let annotations = AuditAnnotations::default();
    req.extensions_mut().insert(annotations.clone());
    let id = uuid::Uuid::new_v4();
    let peer = req
        .extensions()
        .get::<ConnectionInfo>()
        .and_then(|c| c.peer_address);
    let mut ra = RequestAudit::new(
        id,
        level,
        req.uri().path_and_query().map_or("/", |p| p.as_str()),
        attrs.clone(),
        Origin {
            impersonated: impersonated(req.headers()),
            source_ips: source_ips(req.headers(), peer),
            user_agent: req.headers().get("user-agent").cloned(),
        },
    );
    let backend = &auditing.backend;
    let emit = |ra: &RequestAudit,
                stage: Stage,
                status: Option<ResponseStatus>,
                req_obj: Option<&Value>,
                resp_obj: Option<&Value>| {
        if !omit.contains(&stage) {
            backend.process(&ra.event(stage, status, req_obj, resp_obj));
        }
    };
    // The request body, from level Request (bounded as the handlers bound it).
    // Uploaded components are bytes, not objects: never buffered for the log.
    let is_component = attrs.resource == crate::reload::COMPONENTS_PLURAL
        && attrs.api_group == crate::reload::STATUS_GROUP;
    let (req, request_object) = if level >= Level::Request && !is_component {
        let (parts, body) = req.into_parts();
        match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
            Ok(bytes) => {
                let obj = request_object_of(&bytes);
                (Request::from_parts(parts, Body::from(bytes)), obj)
            }
            Err(_) => {
                let e = ApiError::request_entity_too_large(&format!("limit is {MAX_BODY_BYTES}"));
                emit(
                    &ra,
                    Stage::ResponseComplete,
                    Some(response_status(413, Some(&e.status()))),
                    None,
                    None,
                );
                return e.into_response();
            }
        }
    } else {
        (req, None)
    };
    emit(
        &ra,
        Stage::RequestReceived,
        None,
        request_object.as_ref(),
        None,
    );
    let long_running = info.long_running;
    let response = match std::panic::AssertUnwindSafe(next.run(req))
        .catch_unwind()
        .await
    {
        Ok(r) => r,
        Err(panic) => {
            emit(
                &ra,
                Stage::Panic,
                Some(response_status(500, None)),
                request_object.as_ref(),
                None,
            );
            std::panic::resume_unwind(panic);
        }
    };
    for (key, value) in annotations.take() {
        ra.annotate(key, value);
    }
    let code = response.status().as_u16();
    let (mut parts, body) = response.into_parts();
    let id = id.hyphenated();
    if let Ok(v) = HeaderValue::from_str(id.encode_lower(&mut uuid::Uuid::encode_buffer())) {
        parts.headers.insert("audit-id", v);
    }
    if long_running && code < 300 {
        emit(
            &ra,
            Stage::ResponseStarted,
            Some(response_status(code, None)),
            request_object.as_ref(),
            None,
        );
        // ResponseComplete when the stream ends (or the client goes away).
        let done = OnDrop(Some({
            let backend = auditing.backend.clone();
            let omitted = omit.contains(&Stage::ResponseComplete);
            move || {
                if !omitted {
                    backend.process(&ra.event(
                        Stage::ResponseComplete,
                        Some(response_status(code, None)),
                        request_object.as_ref(),
                        None,
                    ));
                }
            }
        }));
        let stream = body.into_data_stream().map(move |chunk| {
            let _keep = &done;
            chunk
        });
        return Response::from_parts(parts, Body::from_stream(stream));
    }
    // Failures are small Status bodies; successes are read only at RequestResponse.
    if level == Level::RequestResponse || code >= 400 {
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        let obj = json_of(&bytes);
        let status = response_status(code, obj.as_ref());
        let response_object = obj.as_ref().filter(|_| level == Level::RequestResponse);
        emit(
            &ra,
            Stage::ResponseComplete,
            Some(status),
            request_object.as_ref(),
            response_object,
        );
        return Response::from_parts(parts, Body::from(bytes));
    }
    emit(
        &ra,
        Stage::ResponseComplete,
        Some(response_status(code, None)),
        request_object.as_ref(),
        None,
    );
    Response::from_parts(parts, body)
}

/// Runs its function when dropped.
struct OnDrop<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

//! `audit.k8s.io/v1` `Event` (`k8s.io/apiserver/pkg/apis/audit/v1/types.go`), built as
//! `k8s.io/apiserver/pkg/audit/request.go` does: the request's metadata at every level, the
//! request body from `Request` up, the response body at `RequestResponse`.

use crate::authentication::UserInfo;
use crate::authorization::Attributes;
use axum::http::HeaderValue;
use serde::ser::SerializeMap;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::SystemTime;
use uuid::Uuid;

/// How much of a request is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing.
    None,
    /// Who, what, when, the answer's status.
    Metadata,
    /// … and the request body.
    Request,
    /// … and the response body.
    RequestResponse,
}

impl std::str::FromStr for Level {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Ok(match s {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            _ => return Err(()),
        })
    }
}

impl Level {
    /// The policy's name of the level.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// When in a request's life an event is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// As soon as the request is authenticated.
    RequestReceived,
    /// When the response headers are sent (long-running requests only: watches).
    ResponseStarted,
    /// When the response is complete.
    ResponseComplete,
    /// When the handler panicked.
    Panic,
}

impl std::str::FromStr for Stage {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Ok(match s {
            "RequestReceived" => Stage::RequestReceived,
            "ResponseStarted" => Stage::ResponseStarted,
            "ResponseComplete" => Stage::ResponseComplete,
            "Panic" => Stage::Panic,
            _ => return Err(()),
        })
    }
}

impl Stage {
    /// The event's name of the stage.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }
}

/// RFC 3339 with microseconds (`metav1.MicroTime`) of `t`.
pub fn micro_time(t: SystemTime) -> impl std::fmt::Display {
    humantime::format_rfc3339_micros(t)
}

/// `responseStatus`: the answer's code and, for a failed `Status`, its `status`, `message`,
/// `reason` and `details` (`metav1.Status`, fields in its order).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ResponseStatus {
    metadata: Empty,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Value>,
    code: u16,
}

/// `{}`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
struct Empty {}

/// `responseStatus` for an answer with `code` (and its body, when it is a failed Status).
pub fn response_status(code: u16, body: Option<&Value>) -> ResponseStatus {
    let mut s = ResponseStatus {
        code,
        ..Default::default()
    };
    if let Some(b) = body.filter(|b| b["kind"] == "Status") {
        s.status = b.get("status").cloned();
        s.message = b.get("message").cloned();
        s.reason = b.get("reason").cloned();
        s.details = b.get("details").cloned();
    }
    s
}

/// `objectRef` (`audit.k8s.io/v1` `ObjectReference`) of a resource request; empty fields
/// omitted.
struct ObjectRef<'a>(&'a Attributes);

impl Serialize for ObjectRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let mut m = s.serialize_map(None)?;
        for (k, v) in [
            ("resource", &a.resource),
            ("namespace", &a.namespace),
            ("name", &a.name),
            ("apiGroup", &a.api_group),
            ("apiVersion", &a.api_version),
            ("subresource", &a.subresource),
        ] {
            if !v.is_empty() {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

/// One `audit.k8s.io/v1` `Event`: a stage of a request, borrowing what the request's events
/// share; serialized (fields in kube's order) as soon as it is made.
#[derive(Debug)]
pub struct Event<'a> {
    request: &'a RequestAudit,
    stage: Stage,
    stage_time: SystemTime,
    response_status: Option<ResponseStatus>,
    request_object: Option<&'a Value>,
    response_object: Option<&'a Value>,
}

/// An event's `annotations`: key → value, in key order.
type Annotations = BTreeMap<Cow<'static, str>, Cow<'static, str>>;

impl Serialize for Event<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.request;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", "Event")?;
        m.serialize_entry("apiVersion", "audit.k8s.io/v1")?;
        m.serialize_entry("level", r.level.as_str())?;
        m.serialize_entry(
            "auditID",
            r.audit_id
                .hyphenated()
                .encode_lower(&mut Uuid::encode_buffer()),
        )?;
        m.serialize_entry("stage", self.stage.as_str())?;
        m.serialize_entry("requestURI", &r.request_uri)?;
        m.serialize_entry("verb", &r.attrs.verb)?;
        m.serialize_entry("user", &r.attrs.user)?;
        if let Some(u) = &r.impersonated {
            m.serialize_entry("impersonatedUser", u)?;
        }
        m.serialize_entry("sourceIPs", &r.source_ips)?;
        if let Some(ua) = r.user_agent.as_ref().and_then(|v| v.to_str().ok()) {
            m.serialize_entry("userAgent", ua)?;
        }
        if r.attrs.resource_request {
            m.serialize_entry("objectRef", &ObjectRef(&r.attrs))?;
        }
        if let Some(st) = &self.response_status {
            m.serialize_entry("responseStatus", st)?;
        }
        if let Some(o) = self.request_object {
            m.serialize_entry("requestObject", o)?;
        }
        if let Some(o) = self.response_object {
            m.serialize_entry("responseObject", o)?;
        }
        m.serialize_entry("requestReceivedTimestamp", &Micro(r.received))?;
        m.serialize_entry("stageTimestamp", &Micro(self.stage_time))?;
        if !r.annotations.is_empty() {
            m.serialize_entry("annotations", &r.annotations)?;
        }
        m.end()
    }
}

/// A time written as `metav1.MicroTime`, without an intermediate string.
struct Micro(SystemTime);

impl Serialize for Micro {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&micro_time(self.0))
    }
}

/// What the events of one request share: its id, level, URI, attributes (verb, user,
/// objectRef), origin, when it was received, and the annotations added while it is served.
#[derive(Debug)]
pub struct RequestAudit {
    level: Level,
    audit_id: Uuid,
    request_uri: String,
    attrs: Arc<Attributes>,
    impersonated: Option<UserInfo>,
    source_ips: Vec<IpAddr>,
    user_agent: Option<HeaderValue>,
    received: SystemTime,
    annotations: Annotations,
}

/// Who made a request and how it reached the server, for its events.
pub struct Origin {
    /// The user acted as (`Impersonate-User`), if any; the authenticated user is the
    /// attributes' user.
    pub impersonated: Option<UserInfo>,
    /// `sourceIPs`, in kube's order.
    pub source_ips: Vec<IpAddr>,
    /// The `User-Agent` header.
    pub user_agent: Option<HeaderValue>,
}

impl RequestAudit {
    /// The shared part of the events of a request (`NewEventFromRequest`, `LogRequestMetadata`),
    /// received now.
    pub fn new(
        audit_id: Uuid,
        level: Level,
        request_uri: &str,
        attrs: Arc<Attributes>,
        origin: Origin,
    ) -> RequestAudit {
        RequestAudit {
            level,
            audit_id,
            request_uri: request_uri.to_string(),
            attrs,
            impersonated: origin.impersonated,
            source_ips: origin.source_ips,
            user_agent: origin.user_agent,
            received: SystemTime::now(),
            annotations: Annotations::new(),
        }
    }

    /// Add an annotation (`authorization.k8s.io/decision`, …) to the events from now on.
    pub fn annotate(
        &mut self,
        key: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) {
        self.annotations.insert(key.into(), value.into());
    }

    /// The event of `stage`, now: with the response's status and, when recorded, the bodies.
    pub fn event<'a>(
        &'a self,
        stage: Stage,
        response_status: Option<ResponseStatus>,
        request_object: Option<&'a Value>,
        response_object: Option<&'a Value>,
    ) -> Event<'a> {
        Event {
            request: self,
            stage,
            stage_time: SystemTime::now(),
            response_status,
            request_object,
            response_object,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(level: Level) -> RequestAudit {
        let attrs = Attributes {
            user: UserInfo {
                name: "jane".into(),
                uid: "u1".into(),
                groups: vec!["dev".into(), "system:authenticated".into()],
                ..Default::default()
            },
            verb: "get".into(),
            resource_request: true,
            namespace: "ns".into(),
            api_version: "v1".into(),
            resource: "configmaps".into(),
            name: "a".into(),
            path: "/api/v1/namespaces/ns/configmaps/a".into(),
            ..Default::default()
        };
        RequestAudit::new(
            Uuid::nil(),
            level,
            "/api/v1/namespaces/ns/configmaps/a?x=1",
            Arc::new(attrs),
            Origin {
                impersonated: None,
                source_ips: vec!["10.0.0.1".parse().unwrap(), "127.0.0.1".parse().unwrap()],
                user_agent: Some(HeaderValue::from_static("kubectl/v1.32.0")),
            },
        )
    }

    #[test]
    fn an_event_is_written_as_kube_writes_it() {
        let mut ra = request(Level::Metadata);
        ra.annotate("authorization.k8s.io/decision", "allow");
        let e = ra.event(
            Stage::ResponseComplete,
            Some(response_status(200, None)),
            None,
            None,
        );
        let text = serde_json::to_string(&e).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        // serde_json's map is ordered by key; the text keeps kube's field order.
        assert!(text.starts_with(
            r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"00000000-0000-0000-0000-000000000000","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/a?x=1","verb":"get","user":{"username":"jane","uid":"u1","groups":["dev","system:authenticated"]},"sourceIPs":["10.0.0.1","127.0.0.1"],"userAgent":"kubectl/v1.32.0","objectRef":{"resource":"configmaps","namespace":"ns","name":"a","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":""#
        ), "{text}");
        assert_eq!(keys.len(), 15, "{keys:?}");
        assert_eq!(
            v["annotations"],
            json!({"authorization.k8s.io/decision": "allow"})
        );
        for t in ["requestReceivedTimestamp", "stageTimestamp"] {
            let s = v[t].as_str().unwrap();
            assert!(humantime::parse_rfc3339(s).is_ok() && s.len() == 27, "{s}");
        }
    }

    #[test]
    fn a_failure_records_the_status_and_bodies_by_level() {
        let ra = request(Level::RequestResponse);
        let failure = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "configmaps \"a\" not found", "reason": "NotFound",
            "details": {"name": "a", "kind": "configmaps"}, "code": 404});
        let body = json!({"kind": "ConfigMap"});
        let e = ra.event(
            Stage::ResponseComplete,
            Some(response_status(404, Some(&failure))),
            Some(&body),
            Some(&failure),
        );
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains(r#""responseStatus":{"metadata":{},"status":"Failure","message":"configmaps \"a\" not found","reason":"NotFound","details":{"kind":"configmaps","name":"a"},"code":404}"#), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["requestObject"], body);
        assert_eq!(v["responseObject"], failure);
        // A success's status is its code alone, whatever the body.
        let ok = response_status(200, Some(&json!({"kind": "ConfigMap", "status": "x"})));
        assert_eq!(
            serde_json::to_value(ok).unwrap(),
            json!({"metadata": {}, "code": 200})
        );
    }
}

//! `audit.k8s.io/v1` `Event` (`k8s.io/apiserver/pkg/apis/audit/v1/types.go`), built as
//! `k8s.io/apiserver/pkg/audit/request.go` does: the request's metadata at every level, the
//! request body from `Request` up, the response body at `RequestResponse`.

use crate::authentication::UserInfo;
use crate::authorization::Attributes;
use serde_json::{json, Map, Value};

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

/// RFC 3339 with microseconds (`metav1.MicroTime`).
pub fn micro_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// What every event of one request shares.
#[derive(Clone, Debug)]
pub struct RequestAudit {
    base: Map<String, Value>,
}

/// Who made a request, for the event: the authenticated user and, when impersonating, the
/// impersonated one.
pub struct Actors<'a> {
    /// The authenticated user.
    pub user: &'a UserInfo,
    /// The user acted as (`Impersonate-User`), if any.
    pub impersonated: Option<&'a UserInfo>,
}

impl RequestAudit {
    /// The shared part of the events of a request (`NewEventFromRequest`, `LogRequestMetadata`).
    pub fn new(
        audit_id: &str,
        level: Level,
        request_uri: &str,
        attrs: &Attributes,
        actors: Actors<'_>,
        source_ips: Vec<String>,
        user_agent: Option<&str>,
    ) -> RequestAudit {
        let mut base = Map::new();
        base.insert("kind".into(), json!("Event"));
        base.insert("apiVersion".into(), json!("audit.k8s.io/v1"));
        base.insert("level".into(), json!(level.as_str()));
        base.insert("auditID".into(), json!(audit_id));
        base.insert("requestURI".into(), json!(request_uri));
        base.insert("verb".into(), json!(attrs.verb));
        base.insert("user".into(), actors.user.to_json());
        if let Some(imp) = actors.impersonated {
            base.insert("impersonatedUser".into(), imp.to_json());
        }
        base.insert("sourceIPs".into(), json!(source_ips));
        if let Some(ua) = user_agent {
            base.insert("userAgent".into(), json!(ua));
        }
        if attrs.resource_request {
            let mut r = Map::new();
            for (k, v) in [
                ("resource", &attrs.resource),
                ("namespace", &attrs.namespace),
                ("name", &attrs.name),
                ("apiGroup", &attrs.api_group),
                ("apiVersion", &attrs.api_version),
                ("subresource", &attrs.subresource),
            ] {
                if !v.is_empty() {
                    r.insert(k.into(), json!(v));
                }
            }
            base.insert("objectRef".into(), Value::Object(r));
        }
        base.insert(
            "requestReceivedTimestamp".into(),
            json!(micro_time(chrono::Utc::now())),
        );
        RequestAudit { base }
    }

    /// Add an annotation (`authorization.k8s.io/decision`, …).
    pub fn annotate(&mut self, key: &str, value: &str) {
        let a = self.base.entry("annotations").or_insert_with(|| json!({}));
        a[key] = json!(value);
    }

    /// The event of `stage`: with the response's status (`code`, and for failures the
    /// Status's `status`, `message`, `reason`) and, when recorded, the bodies.
    pub fn event(
        &self,
        stage: Stage,
        response_status: Option<Value>,
        request_object: Option<&Value>,
        response_object: Option<&Value>,
    ) -> Value {
        let mut e = self.base.clone();
        e.insert("stage".into(), json!(stage.as_str()));
        if let Some(s) = response_status {
            e.insert("responseStatus".into(), s);
        }
        if let Some(o) = request_object {
            e.insert("requestObject".into(), o.clone());
        }
        if let Some(o) = response_object {
            e.insert("responseObject".into(), o.clone());
        }
        e.insert(
            "stageTimestamp".into(),
            json!(micro_time(chrono::Utc::now())),
        );
        Value::Object(e)
    }
}

/// `responseStatus` for an answer with `code` (and its body, when it is a failed Status).
pub fn response_status(code: u16, body: Option<&Value>) -> Value {
    let mut s = json!({"metadata": {}, "code": code});
    if let Some(b) = body.filter(|b| b["kind"] == "Status") {
        for k in ["status", "message", "reason", "details"] {
            if let Some(v) = b.get(k) {
                s[k] = v.clone();
            }
        }
    }
    s
}

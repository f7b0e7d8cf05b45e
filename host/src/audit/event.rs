//! `audit.k8s.io/v1` `Event` (`k8s.io/apiserver/pkg/apis/audit/v1/types.go`), built as
//! `k8s.io/apiserver/pkg/audit/request.go` does: the request's metadata at every level, the
//! request body from `Request` up, the response body at `RequestResponse`.

use crate::authentication::UserInfo;
use crate::authorization::Attributes;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

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

/// RFC 3339 with microseconds (`metav1.MicroTime`), now.
pub fn micro_time_now() -> String {
    humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()
}

/// `objectRef` (`audit.k8s.io/v1` `ObjectReference`); empty fields omitted.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[serde(skip_serializing_if = "String::is_empty")]
    resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    subresource: String,
}

/// One `audit.k8s.io/v1` `Event`, serialized by the log's writer thread (a typed value: the
/// request path only moves strings into it).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    kind: &'static str,
    api_version: &'static str,
    level: &'static str,
    #[serde(rename = "auditID")]
    audit_id: String,
    stage: &'static str,
    #[serde(rename = "requestURI")]
    request_uri: String,
    verb: String,
    user: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    impersonated_user: Option<Value>,
    #[serde(rename = "sourceIPs")]
    source_ips: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_status: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_object: Option<Value>,
    request_received_timestamp: String,
    stage_timestamp: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<&'static str, String>,
}

/// What every event of one request shares.
#[derive(Clone, Debug)]
pub struct RequestAudit {
    base: Event,
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
        let object_ref = attrs.resource_request.then(|| ObjectRef {
            resource: attrs.resource.clone(),
            namespace: attrs.namespace.clone(),
            name: attrs.name.clone(),
            api_group: attrs.api_group.clone(),
            api_version: attrs.api_version.clone(),
            subresource: attrs.subresource.clone(),
        });
        RequestAudit {
            base: Event {
                kind: "Event",
                api_version: "audit.k8s.io/v1",
                level: level.as_str(),
                audit_id: audit_id.to_string(),
                stage: "",
                request_uri: request_uri.to_string(),
                verb: attrs.verb.clone(),
                user: actors.user.to_json(),
                impersonated_user: actors.impersonated.map(UserInfo::to_json),
                source_ips,
                user_agent: user_agent.map(str::to_string),
                object_ref,
                response_status: None,
                request_object: None,
                response_object: None,
                request_received_timestamp: micro_time_now(),
                stage_timestamp: String::new(),
                annotations: BTreeMap::new(),
            },
        }
    }

    /// Add an annotation (`authorization.k8s.io/decision`, …).
    pub fn annotate(&mut self, key: &'static str, value: &str) {
        self.base.annotations.insert(key, value.to_string());
    }

    /// The last event of the request: as [`RequestAudit::event`], without copying.
    pub fn finish(
        self,
        stage: Stage,
        response_status: Option<Value>,
        request_object: Option<Value>,
        response_object: Option<Value>,
    ) -> Event {
        let mut e = self.base;
        e.stage = stage.as_str();
        e.response_status = response_status;
        e.request_object = request_object;
        e.response_object = response_object;
        e.stage_timestamp = micro_time_now();
        e
    }

    /// The event of `stage`: with the response's status (`code`, and for failures the
    /// Status's `status`, `message`, `reason`) and, when recorded, the bodies.
    pub fn event(
        &self,
        stage: Stage,
        response_status: Option<Value>,
        request_object: Option<&Value>,
        response_object: Option<&Value>,
    ) -> Event {
        let mut e = self.base.clone();
        e.stage = stage.as_str();
        e.response_status = response_status;
        e.request_object = request_object.cloned();
        e.response_object = response_object.cloned();
        e.stage_timestamp = micro_time_now();
        e
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

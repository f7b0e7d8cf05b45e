//! `metav1.Status` errors: one constructor per kube-apiserver constructor
//! (`k8s.io/apimachinery/pkg/api/errors/errors.go`), used everywhere so every handler answers
//! the same shapes, and the mapping of storage and strategy errors
//! (`k8s.io/apiserver/pkg/storage/errors/storage.go` `Interpret*Error`).

use crate::strategy::{FieldError, PluginFault, Rejection, StrategyError};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::{GroupKind, GroupResource};
use wasm_apiserver_storage::StorageError;

/// A failed request: the HTTP code and the `metav1.Status` body.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `reason` (`NotFound`, `Invalid`, …; empty for unknown).
    pub reason: &'static str,
    /// `message`.
    pub message: String,
    /// `details`, if any.
    pub details: Option<Value>,
    /// `metadata` of the Status (e.g. `continue` on an expired continue token).
    pub metadata: Value,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// Result of an API operation.
pub type ApiResult<T> = Result<T, ApiError>;

/// kube's `metav1.StatusReason`s (`k8s.io/apimachinery/pkg/apis/meta/v1/types.go`).
const REASONS: [&str; 18] = [
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// `reason` as an [`ApiError::reason`] when it is one of kube's `metav1.StatusReason`s (a
/// Status a plugin or a webhook answers may name any text).
pub fn known_reason(reason: &str) -> Option<&'static str> {
    REASONS.iter().find(|r| **r == reason).copied()
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            metadata: json!({}),
        }
    }

    fn with_details(mut self, details: Value) -> ApiError {
        self.details = Some(details);
        self
    }

    /// The same error with another message.
    pub fn with_message(mut self, message: impl Into<String>) -> ApiError {
        self.message = message.into();
        self
    }

    /// The `metav1.Status` body.
    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": self.metadata,
            "status": "Failure", "message": self.message, "reason": self.reason, "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }

    /// `NewNotFound`: 404 `<resource> "<name>" not found`.
    pub fn not_found(gr: &GroupResource, name: &str) -> ApiError {
        ApiError::new(404, "NotFound", format!("{} \"{name}\" not found", gr))
            .with_details(json!({"name": name, "group": gr.group, "kind": gr.resource}))
    }

    /// `NewAlreadyExists`: 409 `<resource> "<name>" already exists`.
    pub fn already_exists(gr: &GroupResource, name: &str) -> ApiError {
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", gr),
        )
        .with_details(json!({"name": name, "group": gr.group, "kind": gr.resource}))
    }

    /// `NewGenerateNameConflict`: 409 AlreadyExists with `retryAfterSeconds`.
    pub fn generate_name_conflict(gr: &GroupResource, name: &str, retry_after: u64) -> ApiError {
        ApiError::new(
            409,
            "AlreadyExists",
            format!(
                "{} \"{name}\" already exists, the server was not able to generate a unique name for the object",
                gr
            ),
        )
        .with_details(json!({"name": name, "group": gr.group, "kind": gr.resource,
                              "retryAfterSeconds": retry_after}))
    }

    /// `NewConflict`: 409 `Operation cannot be fulfilled on <resource> "<name>": <msg>`.
    pub fn conflict(gr: &GroupResource, name: &str, msg: &str) -> ApiError {
        ApiError::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {} \"{name}\": {msg}", gr),
        )
        .with_details(json!({"name": name, "group": gr.group, "kind": gr.resource}))
    }

    /// The optimistic-lock conflict (`OptimisticLockErrorMsg`).
    pub fn optimistic_lock(gr: &GroupResource, name: &str) -> ApiError {
        ApiError::conflict(
            gr,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// `NewInvalid`: 422 `<Kind> "<name>" is invalid: [errs]` with one cause per error.
    pub fn invalid(gk: &GroupKind, name: &str, errs: &[FieldError]) -> ApiError {
        let causes: Vec<Value> = errs
            .iter()
            .map(|e| json!({"reason": e.error_type.cause_type(), "message": e.body(), "field": e.field}))
            .collect();
        let aggregate = match errs {
            [one] => one.to_string(),
            many => format!(
                "[{}]",
                many.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        ApiError::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {aggregate}", gk),
        )
        .with_details(json!({"name": name, "group": gk.group, "kind": gk.kind, "causes": causes}))
    }

    /// `NewApplyConflict` (apply_test.go's conflicts): 409 `Conflict` with `details.causes`,
    /// each `{"type":"FieldManagerConflict","message":"conflict with \"mgr\"","field":".spec.x"}`.
    pub fn apply_conflict(causes: Vec<Value>, message: String) -> ApiError {
        ApiError::new(409, "Conflict", message).with_details(json!({"causes": causes}))
    }

    /// `NewBadRequest`: 400.
    pub fn bad_request(msg: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", msg)
    }

    /// `NewUnauthorized("Unauthorized")`: 401, as the authentication filter answers
    /// (`k8s.io/apiserver/pkg/endpoints/handlers/responsewriters` `unauthorized`).
    pub fn unauthorized() -> ApiError {
        ApiError::new(401, "Unauthorized", "Unauthorized")
    }

    /// `NewForbidden`: 403. `gr` empty: `forbidden: <err>`; else `<gr> is forbidden: <err>`,
    /// or `<gr> "<name>" is forbidden: <err>` with a name.
    pub fn forbidden(gr: &GroupResource, name: &str, err: &str) -> ApiError {
        let message = if gr.resource.is_empty() && gr.group.is_empty() {
            format!("forbidden: {err}")
        } else if name.is_empty() {
            format!("{gr} is forbidden: {err}")
        } else {
            format!("{gr} \"{name}\" is forbidden: {err}")
        };
        let mut details = json!({"group": gr.group, "kind": gr.resource});
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        ApiError::new(403, "Forbidden", message).with_details(details)
    }

    /// `NewTooManyRequests`: 429 with `Retry-After: <retry_after>` and
    /// `details.retryAfterSeconds`.
    pub fn too_many_requests(msg: &str, retry_after: u64) -> ApiError {
        ApiError::new(429, "TooManyRequests", msg)
            .with_details(json!({"retryAfterSeconds": retry_after}))
    }

    /// `NewMethodNotSupported`: 405.
    pub fn method_not_supported(gr: &GroupResource, action: &str) -> ApiError {
        ApiError::new(
            405,
            "MethodNotAllowed",
            format!("{action} is not supported on resources of kind \"{}\"", gr),
        )
        .with_details(json!({"group": gr.group, "kind": gr.resource}))
    }

    /// A 404 for a path that serves nothing (kube-apiserver answers `404 page not found`
    /// as a Status with reason NotFound).
    pub fn no_route(path: &str) -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
        .with_details(json!({}))
    }

    /// `NewResourceExpired`: 410 Expired, optionally carrying a fresh continue token.
    pub fn expired(msg: &str, continue_token: Option<String>) -> ApiError {
        let mut e = ApiError::new(410, "Expired", msg);
        if let Some(c) = continue_token {
            e.metadata = json!({"continue": c});
        }
        e
    }

    /// `NewTooLargeResourceVersionError`: 504 Timeout with a `ResourceVersionTooLarge` cause and
    /// Retry-After 1.
    pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
        ApiError::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        )
        .with_details(json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                             "retryAfterSeconds": 1}))
    }

    /// `NewTimeoutError`: 504.
    pub fn timeout(msg: &str, retry_after: u64) -> ApiError {
        ApiError::new(504, "Timeout", format!("Timeout: {msg}"))
            .with_details(json!({"retryAfterSeconds": retry_after}))
    }

    /// `NewServerTimeout`: 500 ServerTimeout (storage unreachable).
    pub fn server_timeout(gr: &GroupResource, operation: &str, retry_after: u64) -> ApiError {
        ApiError::new(
            500,
            "ServerTimeout",
            format!(
                "The {operation} operation against {} could not be completed at this time, please try again.",
                gr
            ),
        )
        .with_details(json!({"name": operation, "group": gr.group, "kind": gr.resource,
                              "retryAfterSeconds": retry_after}))
    }

    /// `NewInternalError`: 500 `Internal error occurred: <msg>`.
    pub fn internal(msg: impl std::fmt::Display) -> ApiError {
        let msg = msg.to_string();
        ApiError::new(
            500,
            "InternalError",
            format!("Internal error occurred: {msg}"),
        )
        .with_details(json!({"causes": [{"message": msg}]}))
    }

    /// `NewServiceUnavailable`: 503 `ServiceUnavailable` with `msg`.
    pub fn service_unavailable(msg: &str) -> ApiError {
        ApiError::new(503, "ServiceUnavailable", msg)
    }

    /// `NewRequestEntityTooLargeError`: 413.
    pub fn request_entity_too_large(msg: &str) -> ApiError {
        ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: {msg}"),
        )
    }

    /// `NewUnsupportedMediaTypeError` (`handlers/negotiation/errors.go`): 415 for a body in a
    /// media type the resource does not decode, naming the `accepted` ones.
    pub fn unsupported_media_type(accepted: &[&str]) -> ApiError {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// 415 for a patch type the resource does not support (`patch.go`).
    pub fn unsupported_patch_type(patch_type: &str, gvk: &str) -> ApiError {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!("{patch_type} is not supported by {gvk}"),
        )
    }

    /// 406 NotAcceptable.
    pub fn not_acceptable(msg: &str) -> ApiError {
        ApiError::new(406, "NotAcceptable", msg)
    }

    /// Map a storage error for operation `op` on `name` (`InterpretGetError`,
    /// `InterpretUpdateError`, …).
    pub fn from_storage(e: &StorageError, gr: &GroupResource, name: &str) -> ApiError {
        if let Some(api) = e.aborted_as::<ApiError>() {
            return api.clone();
        }
        match e {
            StorageError::KeyNotFound { .. } => ApiError::not_found(gr, name),
            StorageError::KeyExists { .. } => ApiError::already_exists(gr, name),
            StorageError::ResourceVersionConflicts { .. } => ApiError::optimistic_lock(gr, name),
            StorageError::InvalidObj { message, .. } => ApiError::conflict(gr, name, message),
            StorageError::Invalid {
                field,
                value,
                detail,
            } => {
                if field == "resourceVersionMatch" {
                    ApiError::new(
                        422,
                        "Invalid",
                        format!("{field}: Invalid value: {value:?}: {detail}"),
                    )
                } else if field == "continue" {
                    // etcd3 store.go GetList wraps storage.DecodeContinue's error.
                    ApiError::bad_request(format!("invalid continue token: {detail}"))
                } else if field == "resourceVersion" && detail == "invalid resource version" {
                    ApiError::bad_request(format!("invalid resource version: {value}"))
                } else {
                    ApiError::bad_request(detail.clone())
                }
            }
            StorageError::InvalidKey { detail, .. } => ApiError::bad_request(detail.clone()),
            StorageError::TooLargeResourceVersion { requested, current } => {
                ApiError::too_large_resource_version(*requested, *current)
            }
            StorageError::Expired {
                message,
                continue_token,
            } => ApiError::expired(message, continue_token.clone()),
            StorageError::Unreachable(_) => ApiError::server_timeout(gr, "request", 2),
            StorageError::Timeout(m) => ApiError::timeout(m, 2),
            StorageError::RequestTooLarge(m) => ApiError::request_entity_too_large(m),
            StorageError::CorruptObj { .. }
            | StorageError::Internal(_)
            | StorageError::Aborted(_) => ApiError::internal(e),
        }
    }

    /// Map a strategy error: a rejection is 400/422, a plugin fault is 500 (504 for a deadline)
    /// naming the plugin.
    pub fn from_strategy(e: StrategyError, gk: &GroupKind, name: &str) -> ApiError {
        match e {
            StrategyError::Rejected(Rejection::BadRequest(m)) => ApiError::bad_request(m),
            StrategyError::Rejected(Rejection::Invalid(errs)) => ApiError::invalid(gk, name, &errs),
            StrategyError::Fault(f @ PluginFault::Overloaded { .. }) => ApiError::new(
                429,
                "TooManyRequests",
                format!("Too many requests: {f}, please try again later"),
            )
            .with_details(json!({"retryAfterSeconds": 1})),
            // A huge object (the body limit allows 3 MiB of JSON, whose typed form can be
            // hundreds of times larger) that a plugin cannot process within its memory or
            // time limits is the request's size, not the plugin's fault.
            StrategyError::Fault(
                f @ (PluginFault::MemoryExceeded { input_bytes, .. }
                | PluginFault::Timeout { input_bytes, .. }),
            ) if input_bytes >= crate::limits::LARGE_INPUT_BYTES => {
                ApiError::request_entity_too_large(&format!(
                    "{f}, processing an object of {input_bytes} bytes"
                ))
            }
            StrategyError::Fault(f) => ApiError::internal(f),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry = self
            .details
            .as_ref()
            .and_then(|d| d.get("retryAfterSeconds"))
            .and_then(Value::as_u64);
        let mut resp = (code, axum::Json(self.status())).into_response();
        if let Some(r) = retry {
            if let Ok(v) = HeaderValue::from_str(&r.to_string()) {
                resp.headers_mut().insert("Retry-After", v);
            }
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::ErrorType;

    fn widgets() -> GroupResource {
        GroupResource {
            group: "example.dev".into(),
            resource: "widgets".into(),
        }
    }

    fn widget() -> GroupKind {
        GroupKind {
            group: "example.dev".into(),
            kind: "Widget".into(),
        }
    }

    #[test]
    fn invalid_matches_kube_apiserver_shape() {
        let errs = vec![FieldError {
            error_type: ErrorType::Required,
            field: "spec.size".into(),
            bad_value: None,
            detail: String::new(),
        }];
        let s = ApiError::invalid(&widget(), "w", &errs).status();
        assert_eq!(s["code"], 422);
        assert_eq!(
            s["message"],
            "Widget.example.dev \"w\" is invalid: spec.size: Required value"
        );
        assert_eq!(s["details"]["kind"], "Widget");
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueRequired");
        assert_eq!(s["details"]["causes"][0]["field"], "spec.size");
    }

    #[test]
    fn not_found_uses_the_resource() {
        let s = ApiError::not_found(&widgets(), "w").status();
        assert_eq!(s["message"], "widgets.example.dev \"w\" not found");
        assert_eq!(s["details"]["kind"], "widgets");
    }
}

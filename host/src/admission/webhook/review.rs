//! The `AdmissionReview` sent to a webhook and the answer read back, as kube's
//! `k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go`
//! (`CreateV1AdmissionReview`, `CreateV1beta1AdmissionReview`, `VerifyAdmissionResponse`), and
//! a denial as the request's answer (`webhook/errors/statuserror.go` `ToStatusErr`).

use crate::admission::interface::{Attributes, Operation};
use crate::status::ApiError;
use base64::Engine;
use serde_json::{json, Value};

/// The `AdmissionReview` of `version` (`v1` or `v1beta1`) for `request` (kube's
/// `AdmissionRequest` without `uid`, `object`, `oldObject`), with `uid` and the two objects
/// (`Value::Null` when absent).
pub fn request_review(
    version: &str,
    uid: &str,
    request: &Value,
    object: &Value,
    old_object: &Value,
) -> Value {
    let mut r = request.clone();
    r["uid"] = json!(uid);
    r["object"] = object.clone();
    r["oldObject"] = old_object.clone();
    json!({"apiVersion": format!("admission.k8s.io/{version}"), "kind": "AdmissionReview", "request": r})
}

/// The operation's options object as kube sends it in `request.options` (`CreateOptions`,
/// `UpdateOptions`, `DeleteOptions`), with what this server knows of them: `dryRun`.
pub fn options(a: &Attributes<'_>) -> Value {
    let kind = match a.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => return Value::Null,
    };
    let mut o = json!({"apiVersion": "meta.k8s.io/v1", "kind": kind});
    if a.dry_run {
        o["dryRun"] = json!(["All"]);
    }
    o
}

/// A webhook's answer, checked (`VerifyAdmissionResponse`'s `AdmissionResponse`).
#[derive(Debug, Default, PartialEq)]
pub struct AdmissionResponse {
    pub allowed: bool,
    /// `result`: the Status of a denial (may be absent).
    pub result: Option<Value>,
    /// `auditAnnotations`, as given.
    pub audit_annotations: Vec<(String, String)>,
    pub warnings: Vec<String>,
    /// A mutating webhook's `patch` (base64-decoded; read only once the answer allows), with
    /// its `patchType` (`JSONPatch` for v1beta1).
    pub patch: Option<(Vec<u8>, String)>,
}

/// The most warnings and audit annotations kept from one answer (a bound of this server's: an
/// answer may be 64 MiB, and each entry is checked against those kept before it).
pub const MAX_ENTRIES: usize = 64;

/// `VerifyAdmissionResponse`: `answer` to the review of `version` with `uid`, from a mutating
/// webhook or not. Errors: kube's texts (`webhook response was absent`, `expected
/// response.uid="…", got "…"`, …), and a `patch` that is not base64 (kube's decode of the
/// review fails there). At most [`MAX_ENTRIES`] warnings and audit annotations are kept.
pub fn verify_response(
    version: &str,
    uid: &str,
    mutating: bool,
    answer: &Value,
) -> Result<AdmissionResponse, String> {
    let r = answer
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("webhook response was absent")?;
    let s = |k: &str| r.get(k).and_then(Value::as_str);
    let patch_text = s("patch").unwrap_or("");
    let patch_type = r.get("patchType").filter(|t| !t.is_null());
    if version == "v1" {
        let got_uid = s("uid").unwrap_or("");
        if got_uid != uid {
            return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
        }
        let gvk = (
            answer.get("apiVersion").and_then(Value::as_str),
            answer.get("kind").and_then(Value::as_str),
        );
        if gvk != (Some("admission.k8s.io/v1"), Some("AdmissionReview")) {
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}, Kind={}",
                gvk.0.unwrap_or(""),
                gvk.1.unwrap_or("")
            ));
        }
        if mutating {
            if !patch_text.is_empty() && patch_type.is_none() {
                return Err("webhook returned response.patch but not response.patchType".into());
            }
            if patch_text.is_empty() && patch_type.is_some() {
                return Err("webhook returned response.patchType but not response.patch".into());
            }
            if let Some(t) = patch_type {
                if t.as_str().is_none_or(str::is_empty) {
                    return Err(format!(
                        "webhook returned invalid response.patchType of {t}"
                    ));
                }
            }
        } else {
            if !patch_text.is_empty() {
                return Err("validating webhook may not return response.patch".into());
            }
            if patch_type.is_some() {
                return Err("validating webhook may not return response.patchType".into());
            }
        }
    }
    let patch = if mutating && !patch_text.is_empty() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(patch_text)
            .map_err(|e| format!("response.patch: {e}"))?;
        let patch_type = patch_type
            .and_then(Value::as_str)
            .unwrap_or("JSONPatch")
            .to_string();
        Some((bytes, patch_type))
    } else {
        None
    };
    let warnings = r
        .get("warnings")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .take(MAX_ENTRIES)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let audit_annotations = r
        .get("auditAnnotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .take(MAX_ENTRIES)
                .collect()
        })
        .unwrap_or_default();
    Ok(AdmissionResponse {
        allowed: r.get("allowed").and_then(Value::as_bool).unwrap_or(false),
        result: r.get("result").filter(|v| v.is_object()).cloned(),
        audit_annotations,
        warnings,
        patch,
    })
}

/// `ToStatusErr`'s message of a denial: `<denied_by>: <message>`, else `<denied_by>: <reason>`,
/// else `<denied_by> without explanation` (`denied_by` is e.g. `admission webhook "<name>"
/// denied the request`).
pub fn denied_message(denied_by: &str, message: &str, reason: &str) -> String {
    if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    }
}

/// `ToStatusErr`: the webhook `name`'s denial with its `result` Status — its code (400 for
/// one below 400), reason and details kept, its message prefixed with `admission webhook
/// "<name>" denied the request`.
pub fn denial(name: &str, result: Option<&Value>) -> ApiError {
    let denied_by = format!("admission webhook {name:?} denied the request");
    let empty = Value::Null;
    let result = result.unwrap_or(&empty);
    let message = result.get("message").and_then(Value::as_str).unwrap_or("");
    let reason = result.get("reason").and_then(Value::as_str).unwrap_or("");
    let message = denied_message(&denied_by, message, reason);
    // 400 below 400; at most 599 (an HTTP status).
    let code = result.get("code").and_then(Value::as_u64).unwrap_or(0);
    let code = u16::try_from(code.clamp(400, 599)).unwrap_or(599);
    let mut e = ApiError::bad_request(message);
    e.code = code;
    // A reason `ApiError` cannot hold (not one of kube's) is answered without one.
    e.reason = crate::status::known_reason(reason).unwrap_or("");
    e.details = result.get("details").filter(|d| d.is_object()).cloned();
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(response: Value) -> Value {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
    }

    #[test]
    fn responses_are_checked_as_kube_checks_them() {
        let ok = answer(json!({"uid": "u", "allowed": true, "warnings": ["w"],
            "auditAnnotations": {"k": "v"}}));
        let r = verify_response("v1", "u", false, &ok).unwrap();
        assert!(r.allowed);
        assert_eq!(
            (r.warnings, r.audit_annotations),
            (vec!["w".to_string()], vec![("k".into(), "v".into())])
        );
        assert_eq!(
            verify_response("v1", "x", false, &ok).unwrap_err(),
            "expected response.uid=\"x\", got \"u\""
        );
        assert_eq!(
            verify_response("v1", "u", false, &json!({})).unwrap_err(),
            "webhook response was absent"
        );
        let mut wrong = ok.clone();
        wrong["kind"] = json!("Other");
        assert!(verify_response("v1", "u", false, &wrong)
            .unwrap_err()
            .starts_with("expected webhook response of admission.k8s.io/v1"));
        let patch = base64::engine::general_purpose::STANDARD
            .encode(br#"[{"op":"add","path":"/a","value":1}]"#);
        let patched =
            answer(json!({"uid": "u", "allowed": true, "patch": patch, "patchType": "JSONPatch"}));
        assert_eq!(
            verify_response("v1", "u", false, &patched).unwrap_err(),
            "validating webhook may not return response.patch"
        );
        let r = verify_response("v1", "u", true, &patched).unwrap();
        let (bytes, patch_type) = r.patch.unwrap();
        assert_eq!(
            (
                serde_json::from_slice::<Value>(&bytes).unwrap(),
                patch_type.as_str()
            ),
            (
                json!([{"op": "add", "path": "/a", "value": 1}]),
                "JSONPatch"
            )
        );
        let no_type = answer(json!({"uid": "u", "allowed": true, "patch": patch}));
        assert_eq!(
            verify_response("v1", "u", true, &no_type).unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        // v1beta1: no uid check, the patch is a JSON patch.
        let beta = json!({"response": {"allowed": true, "patch": patch}});
        assert!(verify_response("v1beta1", "u", true, &beta)
            .unwrap()
            .patch
            .is_some());
    }

    #[test]
    fn denials_are_kube_s_status_errors() {
        let e = denial(
            "v.example.com",
            Some(&json!({"code": 403, "reason": "Forbidden", "message": "no"})),
        );
        assert_eq!(
            (e.code, e.reason, e.message.as_str()),
            (
                403,
                "Forbidden",
                "admission webhook \"v.example.com\" denied the request: no"
            )
        );
        let e = denial("v.example.com", None);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "admission webhook \"v.example.com\" denied the request without explanation"
            )
        );
        let e = denial(
            "v.example.com",
            Some(&json!({"code": 200, "reason": "Custom"})),
        );
        assert_eq!(
            (e.code, e.reason, e.message.as_str()),
            (
                400,
                "",
                "admission webhook \"v.example.com\" denied the request: Custom"
            )
        );
    }
}

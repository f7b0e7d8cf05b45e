//! A test-only admission policy (`wit/admission/0.1.0/admission.wit`) for the host's tests:
//! what it does to a request is its settings' `action`:
//!
//! - `allow` (default), `deny` (with `message`, `code`, `reason`), `warn` (allowed with a
//!   warning and the audit annotation `greeting: hello`);
//! - `trap` (panics), `loop` (never returns), `hoard` (grows memory until refused);
//! - `label` (mutating build: adds `labels` to the object), `rename` (mutating build: changes
//!   the object's name, which the host must refuse);
//! - `read` (reads `resource` — the policy declares only `configmaps` — and denies with the
//!   outcome, so a test sees what the host answered).
//!
//! Rules: CREATE and UPDATE of `configmaps`. Settings with `"invalid": true` are refused.

use wasm_apiserver_sdk::admission::*;

/// The policy.
pub struct Misbehaving;

fn act(request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
    match settings["action"].as_str().unwrap_or("allow") {
        "allow" => AdmissionResponse::allow(),
        "deny" => AdmissionResponse {
            allowed: false,
            denial: Some(Denial {
                code: settings["code"].as_u64().unwrap_or(0) as u16,
                reason: settings["reason"].as_str().unwrap_or("").into(),
                message: settings["message"].as_str().unwrap_or("").into(),
            }),
            ..Default::default()
        },
        "warn" => AdmissionResponse {
            audit_annotations: vec![("greeting".into(), "hello".into())],
            ..AdmissionResponse::allow().with_warning("misbehaving says hello")
        },
        "trap" => panic!("asked to trap"),
        "loop" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "hoard" => {
            let mut kept: Vec<Vec<u8>> = Vec::new();
            loop {
                kept.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&kept);
            }
        }
        "label" => {
            let mut o = request.object.clone();
            for (k, v) in settings["labels"].as_object().into_iter().flatten() {
                o["metadata"]["labels"][k] = v.clone();
            }
            AdmissionResponse::mutate(o)
        }
        "rename" => {
            let mut o = request.object.clone();
            o["metadata"]["name"] = json!("renamed");
            AdmissionResponse::mutate(o)
        }
        "read" => {
            let resource = settings["resource"].as_str().unwrap_or("configmaps");
            let gvr = GroupVersionResource::new("", "", resource);
            let outcome = match list_objects(&gvr, &request.namespace, "") {
                Ok(items) => format!("read {} {resource}", items.len()),
                Err(e) => format!("read refused: {e}"),
            };
            AdmissionResponse::deny(outcome)
        }
        other => AdmissionResponse::deny(format!("unknown action {other:?}")),
    }
}

impl AdmissionPolicy for Misbehaving {
    fn describe() -> PolicyDescription {
        let rules = vec![Rule::new(&["CREATE", "UPDATE"], "", "configmaps")];
        let d = if cfg!(feature = "mutating") {
            PolicyDescription::mutating(rules)
        } else {
            PolicyDescription::validating(rules)
        };
        d.reads("", "configmaps")
    }

    fn validate_settings(settings: &Value) -> Result<(), String> {
        if settings["invalid"] == json!(true) {
            return Err("asked to refuse these settings".into());
        }
        Ok(())
    }

    fn validate(request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
        act(request, settings)
    }

    fn mutate(request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
        act(request, settings)
    }
}

wasm_apiserver_sdk::export_admission_policy!(Misbehaving);

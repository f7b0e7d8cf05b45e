//! `__NAME__`: a wasm-apiserver admission policy (written by `wasm-apiserver plugin new
//! --policy`). One rule to start from: a ConfigMap must carry the label named by the settings'
//! `label` (`owner` by default).

use wasm_apiserver_sdk::admission::*;

pub struct __KIND__Policy;

/// The label every ConfigMap must carry.
fn label(settings: &Value) -> &str {
    settings["label"].as_str().unwrap_or("owner")
}

impl AdmissionPolicy for __KIND__Policy {
    fn describe() -> PolicyDescription {
        PolicyDescription::validating(vec![Rule::new(&["CREATE", "UPDATE"], "", "configmaps")])
    }

    fn validate_settings(settings: &Value) -> Result<(), String> {
        match settings.get("label") {
            None | Some(Value::String(_)) => Ok(()),
            Some(_) => Err("label: must be a string".into()),
        }
    }

    fn validate(request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
        let label = label(settings);
        if request.object["metadata"]["labels"][label].is_string() {
            return AdmissionResponse::allow();
        }
        AdmissionResponse::deny(format!("a ConfigMap must carry the label {label:?}"))
    }
}

wasm_apiserver_sdk::export_admission_policy!(__KIND__Policy);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_map_without_the_label_is_refused() {
        let request = |labels: Value| AdmissionRequest {
            operation: "CREATE".into(),
            object: json!({"metadata": {"name": "c", "labels": labels}}),
            ..Default::default()
        };
        assert!(__KIND__Policy::validate(&request(json!({"owner": "me"})), &json!({})).allowed);
        assert!(!__KIND__Policy::validate(&request(json!({})), &json!({})).allowed);
    }
}

//! A cross-object admission policy: refuse a Pod whose `configMap` volume, `envFrom`
//! `configMapRef` or `env[].valueFrom.configMapKeyRef` names a ConfigMap that does not exist in
//! the Pod's namespace — unless the reference is `optional: true`, as the kubelet would start
//! it anyway. What kube-apiserver cannot do without a webhook (a ValidatingAdmissionPolicy
//! cannot read other objects, kubernetes#133631): the policy reads the host's watch cache of
//! `configmaps`, which it declares.
//!
//! Settings: `{"exemptNamespaces": ["kube-system"]}` (optional) skips those namespaces.

use wasm_apiserver_sdk::admission::*;

/// The policy.
pub struct ConfigMapReferences;

/// Every ConfigMap a Pod object names and does not mark optional, in order, without repeats.
pub fn required_config_maps(pod: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |r: &Value, key: &str| {
        let Some(name) = r.get(key).and_then(Value::as_str) else {
            return;
        };
        if r.get("optional").and_then(Value::as_bool) != Some(true)
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    };
    let spec = &pod["spec"];
    for v in spec["volumes"].as_array().into_iter().flatten() {
        add(&v["configMap"], "name");
        for s in v["projected"]["sources"].as_array().into_iter().flatten() {
            add(&s["configMap"], "name");
        }
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            for e in c["envFrom"].as_array().into_iter().flatten() {
                add(&e["configMapRef"], "name");
            }
            for e in c["env"].as_array().into_iter().flatten() {
                add(&e["valueFrom"]["configMapKeyRef"], "name");
            }
        }
    }
    names
}

fn configmaps() -> GroupVersionResource {
    GroupVersionResource::new("", "v1", "configmaps")
}

impl AdmissionPolicy for ConfigMapReferences {
    fn describe() -> PolicyDescription {
        PolicyDescription::validating(vec![Rule::new(&["CREATE", "UPDATE"], "", "pods")])
            .reads("", "configmaps")
    }

    fn validate_settings(settings: &Value) -> Result<(), String> {
        match settings.get("exemptNamespaces") {
            None => Ok(()),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(()),
            Some(_) => Err("exemptNamespaces: must be a list of namespace names".into()),
        }
    }

    fn validate(request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
        let exempt = settings["exemptNamespaces"]
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n.as_str() == Some(&request.namespace)));
        if exempt || !request.sub_resource.is_empty() {
            return AdmissionResponse::allow();
        }
        let mut missing = Vec::new();
        for name in required_config_maps(&request.object) {
            match get_object(&configmaps(), &request.namespace, &name) {
                Ok(Some(_)) => {}
                Ok(None) => missing.push(name),
                Err(e) => return AdmissionResponse::deny(format!("cannot read ConfigMaps: {e}")),
            }
        }
        if missing.is_empty() {
            return AdmissionResponse::allow();
        }
        AdmissionResponse::deny(format!(
            "the Pod names ConfigMap(s) that do not exist in namespace {:?}: {} (create them first, or mark the reference optional: true)",
            request.namespace,
            missing.join(", ")
        ))
    }
}

wasm_apiserver_sdk::export_admission_policy!(ConfigMapReferences);

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::admission::testing::with_objects;

    fn request(pod: Value) -> AdmissionRequest {
        AdmissionRequest {
            namespace: "default".into(),
            operation: "CREATE".into(),
            object: pod,
            ..Default::default()
        }
    }

    fn pod() -> Value {
        json!({"metadata": {"name": "p", "namespace": "default"}, "spec": {
            "volumes": [{"name": "v", "configMap": {"name": "settings"}},
                        {"name": "o", "configMap": {"name": "maybe", "optional": true}}],
            "containers": [{"name": "c", "image": "x",
                "envFrom": [{"configMapRef": {"name": "env"}}],
                "env": [{"name": "K", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "k"}}}]}]}})
    }

    #[test]
    fn names_every_required_reference_once() {
        assert_eq!(required_config_maps(&pod()), vec!["settings", "env"]);
    }

    #[test]
    fn refuses_a_missing_config_map_and_admits_once_it_exists() {
        let cm = |name: &str| json!({"metadata": {"name": name, "namespace": "default"}});
        let out = with_objects(vec![("configmaps", cm("settings"))], || {
            ConfigMapReferences::validate(&request(pod()), &json!({}))
        });
        assert!(!out.allowed);
        assert!(out.denial.unwrap().message.contains(": env ("));
        let out = with_objects(
            vec![("configmaps", cm("settings")), ("configmaps", cm("env"))],
            || ConfigMapReferences::validate(&request(pod()), &json!({})),
        );
        assert!(out.allowed, "{out:?}");
        let out = ConfigMapReferences::validate(
            &request(pod()),
            &json!({"exemptNamespaces": ["default"]}),
        );
        assert!(out.allowed);
    }

    #[test]
    fn settings_are_checked() {
        assert!(ConfigMapReferences::validate_settings(&json!({"exemptNamespaces": [1]})).is_err());
        assert!(ConfigMapReferences::validate_settings(&json!({})).is_ok());
    }
}

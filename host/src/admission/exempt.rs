//! The resources no admission policy or webhook applies to (kube's
//! `IsExemptAdmissionConfigurationResource`, `k8s.io/apiserver/pkg/admission/plugin/webhook/
//! predicates/rules/rules.go`): the admission configuration resources — and here also the
//! host's own plugin resources — so that a bad policy can always be removed and a plugin
//! always replaced. Exact group and resource pairs, not whole groups: a CustomResourceDefinition
//! in one of these groups is not exempt.

/// `(group, resource)` pairs exempt from admission policies.
const EXEMPT: [(&str, &str); 9] = [
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
    ),
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
    ),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
    (
        "admissionregistration.k8s.io",
        "mutatingadmissionpolicybindings",
    ),
    ("wasm-apiserver.dev", "strategyplugins"),
    ("wasm-apiserver.dev", "strategyplugincomponents"),
    ("wasm-apiserver.dev", "admissionplugins"),
];

/// Whether `resource` of `group` is exempt from admission policies.
pub fn is_exempt(group: &str, resource: &str) -> bool {
    EXEMPT.iter().any(|(g, r)| *g == group && *r == resource)
}

#[cfg(test)]
mod tests {
    #[test]
    fn exact_resources_not_groups() {
        assert!(super::is_exempt(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies"
        ));
        assert!(super::is_exempt("wasm-apiserver.dev", "admissionplugins"));
        assert!(!super::is_exempt("wasm-apiserver.dev", "gadgets"));
    }
}

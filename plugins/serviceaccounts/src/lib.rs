//! `serviceaccounts` (core/v1 `ServiceAccount`, namespaced): the standard strategy plugin, a
//! port of kube-apiserver's
//! - `pkg/registry/core/serviceaccount/strategy.go`: no generation, `AllowCreateOnUpdate`
//!   false, `AllowUnconditionalUpdate` true, `cleanSecretReferences` on create and update
//!   (each `secrets` entry keeps its `name` only), the warning of
//!   `warnIfHasEnforceMountableSecretsAnnotation` (on create, and on an update that newly sets
//!   the annotation);
//! - `pkg/apis/core/validation/validation.go` (`ValidateServiceAccount`: the name is a DNS-1123
//!   subdomain, `ValidateServiceAccountName`; the rest is ObjectMeta, the host's);
//! - `pkg/printers/internalversion/printers.go` (`printServiceAccount`: NAME, SECRETS, AGE).
//!
//! The `default` ServiceAccount of each namespace is the host's `serviceaccount` controller;
//! tokens (`serviceaccounts/token`) are not served yet.

use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{ObjectReference, ServiceAccount};
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::NameRule;

/// The annotation kube 1.32 deprecates, warned about when set.
pub const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// The strategy of `serviceaccounts`.
pub struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    type Object = ServiceAccount;

    /// ServiceAccounts have no `metadata.generation` in kube-apiserver.
    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            short_names: vec!["sa".into()],
            subresources: vec![],
            printer_columns: vec![
                PrinterColumn::name(),
                // printers.go declares "string" and fills an int64, as ConfigMap's DATA.
                PrinterColumn::computed("Secrets", "integer").describe(SECRETS_DESCRIPTION),
                PrinterColumn::age().describe(CREATION_TIMESTAMP_DESCRIPTION),
            ],
            openapi_schema: schema(),
            example: Some(json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "build-robot", "namespace": "default"},
                "automountServiceAccountToken": false
            })),
            ..ResourceDescription::new("", "v1", "ServiceAccount", "serviceaccounts")
        }
    }

    /// `PrepareForCreate`: `cleanSecretReferences`.
    fn prepare_for_create(sa: &mut ServiceAccount) {
        clean_secret_references(sa);
    }

    /// `ValidateServiceAccount`: the name rule.
    fn validate(sa: &ServiceAccount) -> ErrorList {
        validate_service_account(sa)
    }

    /// `WarningsOnCreate`: the deprecated annotation.
    fn warnings_on_create(sa: &ServiceAccount) -> Vec<String> {
        warn_if_has_enforce_mountable_secrets_annotation(sa, None)
    }

    /// `strategy.AllowCreateOnUpdate`: false.
    fn allow_create_on_update() -> bool {
        false
    }

    /// `strategy.AllowUnconditionalUpdate`: true.
    fn allow_unconditional_update() -> bool {
        true
    }

    /// `PrepareForUpdate`: `cleanSecretReferences`.
    fn prepare_for_update(new: &mut ServiceAccount, _old: &ServiceAccount) {
        clean_secret_references(new);
    }

    /// `ValidateServiceAccountUpdate`: ObjectMeta (the host's), then the name rule.
    fn validate_update(new: &ServiceAccount, _old: &ServiceAccount) -> ErrorList {
        validate_service_account(new)
    }

    /// `WarningsOnUpdate`: the annotation, only when this update sets it.
    fn warnings_on_update(new: &ServiceAccount, old: &ServiceAccount) -> Vec<String> {
        warn_if_has_enforce_mountable_secrets_annotation(new, Some(old))
    }

    /// `printServiceAccount`: SECRETS is `len(Secrets)`.
    fn printer_cells(sa: &ServiceAccount) -> Vec<Value> {
        vec![json!(sa.secrets.as_ref().map_or(0, Vec::len))]
    }
}

export_strategy!(ServiceAccounts);

/// `cleanSecretReferences`: each entry of `secrets` keeps its `name` only.
pub fn clean_secret_references(sa: &mut ServiceAccount) {
    for r in sa.secrets.iter_mut().flatten() {
        *r = ObjectReference {
            name: r.name.take(),
            ..ObjectReference::default()
        };
    }
}

/// `ValidateServiceAccount` (pkg/apis/core/validation/validation.go) past ObjectMeta: the
/// name is a DNS-1123 subdomain.
pub fn validate_service_account(sa: &ServiceAccount) -> ErrorList {
    validation::validate_name(
        sa.metadata.name.as_deref().unwrap_or_default(),
        NameRule::Dns1123Subdomain,
        &Path::new("metadata").child("name"),
    )
}

/// `warnIfHasEnforceMountableSecretsAnnotation` (strategy.go): the annotation is deprecated in
/// 1.32; warned when `new` has it and `old` (an update's stored object) did not.
pub fn warn_if_has_enforce_mountable_secrets_annotation(
    new: &ServiceAccount,
    old: Option<&ServiceAccount>,
) -> Vec<String> {
    let has = |sa: &ServiceAccount| {
        sa.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(ENFORCE_MOUNTABLE_SECRETS))
    };
    if old.is_some_and(has) || !has(new) {
        return Vec::new();
    }
    vec![format!(
        "metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"
    )]
}

/// `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`, shortened.
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the \
     server time when this object was created.";

/// `corev1.ServiceAccount{}.SwaggerDoc()["secrets"]`, abridged: the SECRETS column's
/// description in printers.go.
const SECRETS_DESCRIPTION: &str = "Secrets is a list of the secrets in the same namespace that \
     pods running using this ServiceAccount are allowed to use.";

/// The OpenAPI v3 schema of `io.k8s.api.core.v1.ServiceAccount` (descriptions abridged from
/// staging/src/k8s.io/api/core/v1/types.go).
fn schema() -> Value {
    let reference = json!({
        "type": "object",
        "description": "ObjectReference contains enough information to let you inspect or modify the referred object.",
        "properties": {
            "apiVersion": {"type": "string"}, "fieldPath": {"type": "string"},
            "kind": {"type": "string"}, "name": {"type": "string"},
            "namespace": {"type": "string"}, "resourceVersion": {"type": "string"},
            "uid": {"type": "string"}
        },
        "x-kubernetes-map-type": "atomic"
    });
    json!({
        "type": "object",
        "description": "ServiceAccount binds together: * a name, understood by users, and perhaps by peripheral systems, for an identity * a principal that can be authenticated and authorized * a set of secrets",
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object", "description": "Standard object's metadata."},
            "secrets": {
                "type": "array",
                "description": SECRETS_DESCRIPTION,
                "items": reference,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge"
            },
            "imagePullSecrets": {
                "type": "array",
                "description": "ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}, "x-kubernetes-map-type": "atomic"},
                "x-kubernetes-list-type": "atomic"
            },
            "automountServiceAccountToken": {
                "type": "boolean",
                "description": "AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted."
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::testing;
    use wasm_apiserver_sdk::ErrorType;

    fn sa(extra: Value) -> Value {
        let mut v = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                           "metadata": {"name": "bot", "namespace": "default"}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    }

    #[test]
    fn describe_matches_kube_apiserver() {
        let d = ServiceAccounts::describe();
        assert_eq!(
            (d.kind.as_str(), d.plural.as_str()),
            ("ServiceAccount", "serviceaccounts")
        );
        assert_eq!(d.short_names, vec!["sa"]);
        assert!(d.namespaced);
        let cols: Vec<&str> = d.printer_columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(cols, vec!["Name", "Secrets", "Age"]);
        assert!(testing::create::<ServiceAccounts>(d.example.unwrap())
            .errors
            .is_empty());
    }

    #[test]
    fn secret_references_keep_their_names_only() {
        let out = testing::create::<ServiceAccounts>(sa(json!({
            "secrets": [{"name": "t", "namespace": "other", "uid": "u", "kind": "Secret"}]
        })));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["secrets"], json!([{"name": "t"}]));
        assert!(out.object["metadata"].get("generation").is_none());
        let old = out.object.clone();
        let mut new = old.clone();
        new["secrets"] = json!([{"name": "t"}, {"name": "u", "fieldPath": "x"}]);
        let out = testing::update::<ServiceAccounts>(new, old);
        assert_eq!(out.object["secrets"], json!([{"name": "t"}, {"name": "u"}]));
    }

    #[test]
    fn the_name_is_a_dns_subdomain() {
        let mut v = sa(json!({}));
        v["metadata"]["name"] = json!("Bad_Name");
        let out = testing::create::<ServiceAccounts>(v);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].error_type, ErrorType::Invalid);
        assert_eq!(out.errors[0].field, "metadata.name");
    }

    #[test]
    fn the_deprecated_annotation_is_warned_when_set() {
        let mut v = sa(json!({}));
        v["metadata"]["annotations"] = json!({ENFORCE_MOUNTABLE_SECRETS: "true"});
        let out = testing::create::<ServiceAccounts>(v.clone());
        assert_eq!(out.warnings, vec!["metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"]);
        // Kept on an update: no warning; newly set: warned.
        assert!(testing::update::<ServiceAccounts>(v.clone(), v.clone())
            .warnings
            .is_empty());
        assert_eq!(
            testing::update::<ServiceAccounts>(v, sa(json!({})))
                .warnings
                .len(),
            1
        );
        assert!(testing::create::<ServiceAccounts>(sa(json!({})))
            .warnings
            .is_empty());
    }

    #[test]
    fn secrets_column_counts_references() {
        let obj = sa(json!({"secrets": [{"name": "a"}, {"name": "b"}]}));
        let cells = wasm_apiserver_sdk::glue::printer_cells::<ServiceAccounts>(&obj.to_string());
        assert_eq!(cells, vec!["2".to_string()]);
    }

    #[test]
    fn fixtures() {
        testing::run_fixtures::<ServiceAccounts>(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"));
    }
}

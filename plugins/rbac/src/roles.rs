//! Role (namespaced) and ClusterRole: `pkg/registry/rbac/role/strategy.go`,
//! `pkg/registry/rbac/clusterrole/strategy.go`; printed as NAME and CREATED AT
//! (`printers.go` `roleColumnDefinitions`).

use crate::validation::{validate_aggregation_rule, validate_name, validate_rules};
use crate::{schema, GROUP};
use wasm_apiserver_sdk::k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use wasm_apiserver_sdk::prelude::*;

/// CREATED AT: the creation time as RFC 3339 text (kube prints the time, not an age).
fn created_at() -> PrinterColumn {
    PrinterColumn::computed("Created At", "date")
        .describe("CreationTimestamp is a timestamp representing the server time when this object was created.")
}

fn created_at_cell(
    meta: &wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Vec<Value> {
    vec![json!(meta.creation_timestamp)]
}

/// The strategy of `roles`.
pub struct Roles;

impl Strategy for Roles {
    type Object = Role;

    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            subresources: vec![],
            printer_columns: vec![PrinterColumn::name(), created_at()],
            openapi_schema: schema::role(false),
            example: Some(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "pod-reader", "namespace": "default"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
            })),
            ..ResourceDescription::new(GROUP, "v1", "Role", "roles")
        }
    }

    /// `ValidateRole`.
    fn validate(role: &Role) -> ErrorList {
        let mut errs = validate_name(role.metadata.name.as_deref());
        errs.extend(validate_rules(role.rules.as_deref(), true));
        errs
    }

    /// `AllowCreateOnUpdate`: true.
    fn allow_create_on_update() -> bool {
        true
    }

    /// `ValidateRoleUpdate` = `ValidateRole` (ObjectMeta's update rules are the host's).
    fn validate_update(new: &Role, _old: &Role) -> ErrorList {
        Self::validate(new)
    }

    fn printer_cells(role: &Role) -> Vec<Value> {
        created_at_cell(&role.metadata)
    }
}

/// The strategy of `clusterroles`.
pub struct ClusterRoles;

impl Strategy for ClusterRoles {
    type Object = ClusterRole;

    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            namespaced: false,
            subresources: vec![],
            printer_columns: vec![PrinterColumn::name(), created_at()],
            openapi_schema: schema::role(true),
            example: Some(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "widget-viewer"},
                "rules": [
                    {"apiGroups": ["example.dev"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]},
                    {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}
                ]
            })),
            ..ResourceDescription::new(GROUP, "v1", "ClusterRole", "clusterroles")
        }
    }

    /// `ValidateClusterRole`.
    fn validate(role: &ClusterRole) -> ErrorList {
        let mut errs = validate_name(role.metadata.name.as_deref());
        errs.extend(validate_rules(role.rules.as_deref(), false));
        errs.extend(validate_aggregation_rule(role.aggregation_rule.as_ref()));
        errs
    }

    /// `AllowCreateOnUpdate`: true.
    fn allow_create_on_update() -> bool {
        true
    }

    /// `ValidateClusterRoleUpdate` = `ValidateClusterRole`.
    fn validate_update(new: &ClusterRole, _old: &ClusterRole) -> ErrorList {
        Self::validate(new)
    }

    fn printer_cells(role: &ClusterRole) -> Vec<Value> {
        created_at_cell(&role.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::testing;

    fn fields(errs: &[wasm_apiserver_sdk::FieldError]) -> Vec<String> {
        errs.iter().map(|e| e.field.clone()).collect()
    }

    #[test]
    fn examples_are_valid() {
        for out in [
            testing::create::<Roles>(Roles::describe().example.unwrap()),
            testing::create::<ClusterRoles>(ClusterRoles::describe().example.unwrap()),
        ] {
            assert!(out.errors.is_empty(), "{:?}", out.errors);
        }
        assert!(Roles::describe().namespaced);
        assert!(!ClusterRoles::describe().namespaced);
    }

    #[test]
    fn rules_are_validated_as_kube_does() {
        let out = testing::create::<Roles>(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r", "namespace": "default"},
            "rules": [
                {"verbs": [], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["get"]},
                {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
            ]
        }));
        assert_eq!(
            fields(&out.errors),
            [
                "rules[0].verbs",
                "rules[1].apiGroups",
                "rules[1].resources",
                "rules[2].nonResourceURLs"
            ]
        );
        assert_eq!(
            out.errors[3].detail,
            "namespaced rules cannot apply to non-resource URLs"
        );
        let out = testing::create::<ClusterRoles>(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "c"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "Bad"}]}]}
        }));
        assert_eq!(
            fields(&out.errors),
            [
                "rules[0].nonResourceURLs",
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator"
            ]
        );
    }

    #[test]
    fn names_are_path_segments() {
        let out = testing::create::<ClusterRoles>(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "system:Weird Name"}
        }));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        let out = testing::create::<ClusterRoles>(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "a/b"}
        }));
        assert_eq!(fields(&out.errors), ["metadata.name"]);
    }
}

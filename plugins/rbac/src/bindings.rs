//! RoleBinding (namespaced) and ClusterRoleBinding: `pkg/registry/rbac/rolebinding/
//! strategy.go`, `pkg/registry/rbac/clusterrolebinding/strategy.go`; printed as NAME, ROLE,
//! AGE and, wide, USERS, GROUPS, SERVICEACCOUNTS (`printers.go` `printRoleBinding`,
//! `rbac.SubjectsStrings`).

use crate::validation::{default_binding, validate_name, validate_role_ref, validate_subjects};
use crate::{schema, GROUP};
use wasm_apiserver_sdk::k8s_openapi::api::rbac::v1::{
    ClusterRoleBinding, RoleBinding, RoleRef, Subject,
};
use wasm_apiserver_sdk::prelude::*;

fn columns() -> Vec<PrinterColumn> {
    vec![
        PrinterColumn::name(),
        PrinterColumn::computed("Role", "string").describe("RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace."),
        PrinterColumn::age(),
        PrinterColumn::computed("Users", "string").wide().describe("Users in the binding."),
        PrinterColumn::computed("Groups", "string").wide().describe("Groups in the binding."),
        PrinterColumn::computed("ServiceAccounts", "string").wide().describe("ServiceAccounts in the binding."),
    ]
}

/// ROLE, USERS, GROUPS, SERVICEACCOUNTS.
fn cells(role_ref: &RoleRef, subjects: Option<&[Subject]>) -> Vec<Value> {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for s in subjects.unwrap_or_default() {
        match s.kind.as_str() {
            "ServiceAccount" => sas.push(format!(
                "{}/{}",
                s.namespace.as_deref().unwrap_or_default(),
                s.name
            )),
            "User" => users.push(s.name.clone()),
            "Group" => groups.push(s.name.clone()),
            _ => {}
        }
    }
    vec![
        json!(format!("{}/{}", role_ref.kind, role_ref.name)),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(sas.join(", ")),
    ]
}

/// The errors of a changed `roleRef` (`ValidateRoleBindingUpdate`: the reference is
/// immutable; delete and re-create to change it).
fn role_ref_unchanged(new: &RoleRef, old: &RoleRef) -> ErrorList {
    if new == old {
        return ErrorList::new();
    }
    vec![field::invalid(
        &Path::new("roleRef"),
        json!({"apiGroup": new.api_group, "kind": new.kind, "name": new.name}),
        "cannot change roleRef",
    )]
}

/// The strategy of `rolebindings`.
pub struct RoleBindings;

impl Strategy for RoleBindings {
    type Object = RoleBinding;

    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            subresources: vec![],
            printer_columns: columns(),
            openapi_schema: schema::binding(false),
            example: Some(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "read-pods", "namespace": "default"},
                "subjects": [{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}],
                "roleRef": {"kind": "Role", "name": "pod-reader", "apiGroup": "rbac.authorization.k8s.io"}
            })),
            ..ResourceDescription::new(GROUP, "v1", "RoleBinding", "rolebindings")
        }
    }

    fn prepare_for_create(b: &mut RoleBinding) {
        default_binding(&mut b.role_ref, b.subjects.as_mut());
    }

    /// `ValidateRoleBinding`.
    fn validate(b: &RoleBinding) -> ErrorList {
        let mut errs = validate_name(b.metadata.name.as_deref());
        errs.extend(validate_role_ref(&b.role_ref, &["Role", "ClusterRole"]));
        errs.extend(validate_subjects(b.subjects.as_deref(), true));
        errs
    }

    fn allow_create_on_update() -> bool {
        true
    }

    fn prepare_for_update(new: &mut RoleBinding, _old: &RoleBinding) {
        default_binding(&mut new.role_ref, new.subjects.as_mut());
    }

    /// `ValidateRoleBindingUpdate`.
    fn validate_update(new: &RoleBinding, old: &RoleBinding) -> ErrorList {
        let mut errs = Self::validate(new);
        errs.extend(role_ref_unchanged(&new.role_ref, &old.role_ref));
        errs
    }

    fn printer_cells(b: &RoleBinding) -> Vec<Value> {
        cells(&b.role_ref, b.subjects.as_deref())
    }
}

/// The strategy of `clusterrolebindings`.
pub struct ClusterRoleBindings;

impl Strategy for ClusterRoleBindings {
    type Object = ClusterRoleBinding;

    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            namespaced: false,
            subresources: vec![],
            printer_columns: columns(),
            openapi_schema: schema::binding(true),
            example: Some(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": "view-all"},
                "subjects": [{"kind": "Group", "name": "viewers", "apiGroup": "rbac.authorization.k8s.io"}],
                "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"}
            })),
            ..ResourceDescription::new(GROUP, "v1", "ClusterRoleBinding", "clusterrolebindings")
        }
    }

    fn prepare_for_create(b: &mut ClusterRoleBinding) {
        default_binding(&mut b.role_ref, b.subjects.as_mut());
    }

    /// `ValidateClusterRoleBinding`: the reference is a ClusterRole; service accounts name
    /// their namespace.
    fn validate(b: &ClusterRoleBinding) -> ErrorList {
        let mut errs = validate_name(b.metadata.name.as_deref());
        errs.extend(validate_role_ref(&b.role_ref, &["ClusterRole"]));
        errs.extend(validate_subjects(b.subjects.as_deref(), false));
        errs
    }

    fn allow_create_on_update() -> bool {
        true
    }

    fn prepare_for_update(new: &mut ClusterRoleBinding, _old: &ClusterRoleBinding) {
        default_binding(&mut new.role_ref, new.subjects.as_mut());
    }

    /// `ValidateClusterRoleBindingUpdate`.
    fn validate_update(new: &ClusterRoleBinding, old: &ClusterRoleBinding) -> ErrorList {
        let mut errs = Self::validate(new);
        errs.extend(role_ref_unchanged(&new.role_ref, &old.role_ref));
        errs
    }

    fn printer_cells(b: &ClusterRoleBinding) -> Vec<Value> {
        cells(&b.role_ref, b.subjects.as_deref())
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
    fn examples_are_valid_and_defaults_apply() {
        let out = testing::create::<RoleBindings>(RoleBindings::describe().example.unwrap());
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        let out = testing::create::<ClusterRoleBindings>(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"},
            "subjects": [{"kind": "User", "name": "jane"}],
            "roleRef": {"kind": "ClusterRole", "name": "view"}
        }));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["roleRef"]["apiGroup"], GROUP);
        assert_eq!(out.object["subjects"][0]["apiGroup"], GROUP);
    }

    #[test]
    fn references_and_subjects_are_validated() {
        let out = testing::create::<ClusterRoleBindings>(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "robot"},
                {"kind": "Robot", "name": "x"},
                {"kind": "Group", "name": "", "apiGroup": "rbac.authorization.k8s.io"}
            ],
            "roleRef": {"kind": "Role", "name": "r", "apiGroup": "rbac.authorization.k8s.io"}
        }));
        assert_eq!(
            fields(&out.errors),
            [
                "roleRef.kind",
                "subjects[0].namespace",
                "subjects[1].kind",
                "subjects[2].name"
            ]
        );
    }

    #[test]
    fn role_ref_is_immutable() {
        let old = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "d", "resourceVersion": "1"},
            "roleRef": {"kind": "Role", "name": "r", "apiGroup": "rbac.authorization.k8s.io"}
        });
        let mut new = old.clone();
        new["roleRef"]["name"] = json!("other");
        let out = testing::update::<RoleBindings>(new, old);
        assert_eq!(fields(&out.errors), ["roleRef"]);
        assert_eq!(out.errors[0].detail, "cannot change roleRef");
    }

    #[test]
    fn cells_list_subjects_by_kind() {
        let b: RoleBinding = serde_json::from_value(json!({
            "metadata": {"name": "b"},
            "subjects": [
                {"kind": "User", "name": "jane"}, {"kind": "User", "name": "joe"},
                {"kind": "Group", "name": "dev"},
                {"kind": "ServiceAccount", "name": "robot", "namespace": "ci"}
            ],
            "roleRef": {"kind": "ClusterRole", "name": "edit", "apiGroup": GROUP}
        }))
        .unwrap();
        assert_eq!(
            RoleBindings::printer_cells(&b),
            vec![
                json!("ClusterRole/edit"),
                json!("jane, joe"),
                json!("dev"),
                json!("ci/robot")
            ]
        );
    }
}

//! `rbac.authorization.k8s.io/v1` kinds (`k8s.io/api/rbac/v1/types.go`): what `kubectl create
//! role|clusterrole|rolebinding|clusterrolebinding` send.

use super::json::*;
use super::meta::*;
use k8s_pb::api::rbac::v1 as rbac;
use serde_json::{Map, Value};

fn string(s: String) -> R<Value> {
    Ok(Value::from(s))
}

pub(super) fn policy_rule(r: rbac::PolicyRule) -> R<Value> {
    object!(r, rbac::PolicyRule {
        verbs: "verbs" => list_or_null(string),
        api_groups: "apiGroups" => omitempty_strings,
        resources: "resources" => omitempty_strings,
        resource_names: "resourceNames" => omitempty_strings,
        non_resource_ur_ls: "nonResourceURLs" => omitempty_strings,
    })
}

pub(super) fn role(r: rbac::Role) -> R<Value> {
    object!(r, rbac::Role {
        metadata: "metadata" => struct_value(object_meta),
        rules: "rules" => list_or_null(policy_rule),
    })
}

fn aggregation_rule(a: rbac::AggregationRule) -> R<Value> {
    object!(a, rbac::AggregationRule {
        cluster_role_selectors: "clusterRoleSelectors" => omitempty_list(label_selector),
    })
}

pub(super) fn cluster_role(r: rbac::ClusterRole) -> R<Value> {
    object!(r, rbac::ClusterRole {
        metadata: "metadata" => struct_value(object_meta),
        rules: "rules" => list_or_null(policy_rule),
        aggregation_rule: "aggregationRule" => ptr_struct(aggregation_rule),
    })
}

fn subject(s: rbac::Subject) -> R<Value> {
    object!(s, rbac::Subject {
        kind: "kind" => str_value,
        api_group: "apiGroup" => omitempty_str,
        name: "name" => str_value,
        namespace: "namespace" => omitempty_str,
    })
}

fn role_ref(r: rbac::RoleRef) -> R<Value> {
    object!(r, rbac::RoleRef {
        api_group: "apiGroup" => str_value,
        kind: "kind" => str_value,
        name: "name" => str_value,
    })
}

pub(super) fn role_binding(b: rbac::RoleBinding) -> R<Value> {
    object!(b, rbac::RoleBinding {
        metadata: "metadata" => struct_value(object_meta),
        subjects: "subjects" => omitempty_list(subject),
        role_ref: "roleRef" => struct_value(role_ref),
    })
}

pub(super) fn cluster_role_binding(b: rbac::ClusterRoleBinding) -> R<Value> {
    object!(b, rbac::ClusterRoleBinding {
        metadata: "metadata" => struct_value(object_meta),
        subjects: "subjects" => omitempty_list(subject),
        role_ref: "roleRef" => struct_value(role_ref),
    })
}

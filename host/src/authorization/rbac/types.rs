//! `rbac.authorization.k8s.io/v1` types the authorizer reads (`k8s.io/api/rbac/v1/types.go`),
//! decoded from stored objects' JSON.

use serde::{Deserialize, Serialize};

/// A rule: verbs on resources of API groups (optionally by name), or on non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// Verbs (`*` for all).
    #[serde(default)]
    pub verbs: Vec<String>,
    /// API groups (`""` core, `*` all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*/status`, `*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Object names; empty means every name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Non-resource URLs (`/healthz`, `/apis/*`, `*`).
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

/// Who a binding grants to: `User`, `Group` or `ServiceAccount`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// `rbac.authorization.k8s.io` for users and groups, `""` for service accounts.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// Name.
    pub name: String,
    /// Namespace of a service account.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// The role a binding grants.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleRef {
    /// `rbac.authorization.k8s.io`.
    #[serde(default)]
    pub api_group: String,
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// Name of the role.
    pub name: String,
}

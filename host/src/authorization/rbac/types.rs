//! `rbac.authorization.k8s.io/v1` types the authorizer reads (`k8s.io/api/rbac/v1/types.go`),
//! decoded from stored objects' JSON.

use serde::{Deserialize, Deserializer, Serialize};

/// A list that may be `null` in JSON (Go's nil slice): read as empty, never as an error — so a
/// rule with `"resourceNames": null` is the rule the plugin stores, not a rule that fails to
/// parse.
fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

/// A string that may be `null` in JSON: read as empty.
fn null_as_empty_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// A rule: verbs on resources of API groups (optionally by name), or on non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// Verbs (`*` for all).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub verbs: Vec<String>,
    /// API groups (`""` core, `*` all).
    #[serde(
        default,
        deserialize_with = "null_as_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*/status`, `*`).
    #[serde(
        default,
        deserialize_with = "null_as_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub resources: Vec<String>,
    /// Object names; empty means every name.
    #[serde(
        default,
        deserialize_with = "null_as_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub resource_names: Vec<String>,
    /// Non-resource URLs (`/healthz`, `/apis/*`, `*`).
    #[serde(
        default,
        rename = "nonResourceURLs",
        deserialize_with = "null_as_empty",
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
    #[serde(
        default,
        deserialize_with = "null_as_empty_string",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_group: String,
    /// Name.
    pub name: String,
    /// Namespace of a service account.
    #[serde(
        default,
        deserialize_with = "null_as_empty_string",
        skip_serializing_if = "String::is_empty"
    )]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_lists_are_empty_not_errors() {
        let r: PolicyRule = serde_json::from_value(serde_json::json!({
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "resourceNames": null, "nonResourceURLs": null
        }))
        .unwrap();
        assert_eq!(r.verbs, ["*"]);
        assert!(r.resource_names.is_empty() && r.non_resource_urls.is_empty());
    }
}

//! The roles and bindings the RBAC authorizer reads, held in memory and replaced whole when
//! they change, so authorizing a request reads no storage (kube's authorizer reads informer
//! caches). [`Policy::rules_for`] walks the rules a user holds in a namespace as
//! `pkg/registry/rbac/validation/rule.go` `DefaultRuleResolver.VisitRulesFor` does: cluster
//! role bindings first, then the namespace's role bindings.

use super::evaluation::applies_to_user;
use super::types::{PolicyRule, RoleRef, Subject};
use crate::authentication::UserInfo;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// A RoleBinding or ClusterRoleBinding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// `metadata.name`.
    #[serde(skip)]
    pub name: String,
    /// `metadata.namespace` (`""` for a ClusterRoleBinding).
    #[serde(skip)]
    pub namespace: String,
    /// Who it grants to.
    #[serde(default)]
    pub subjects: Vec<Subject>,
    /// What it grants.
    pub role_ref: RoleRef,
}

#[derive(Deserialize)]
struct Rules {
    #[serde(default)]
    rules: Vec<PolicyRule>,
}

/// Every role and binding.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
    roles: HashMap<(String, String), Vec<PolicyRule>>,
    cluster_role_bindings: Vec<Binding>,
    role_bindings: HashMap<String, Vec<Binding>>,
}

fn meta(obj: &Value, field: &str) -> String {
    wasm_apiserver_apimachinery::meta::accessor(obj)
        .str(field)
        .to_string()
}

fn rules(obj: &Value) -> Vec<PolicyRule> {
    serde_json::from_value::<Rules>(obj.clone())
        .map(|r| r.rules)
        .unwrap_or_default()
}

fn binding(obj: &Value) -> Option<Binding> {
    let mut b: Binding = serde_json::from_value(obj.clone()).ok()?;
    b.name = meta(obj, "name");
    b.namespace = meta(obj, "namespace");
    Some(b)
}

impl Policy {
    /// From the objects' JSON (objects that do not decode are skipped: storage holds only
    /// what the strategies validated).
    pub fn from_objects<'a>(
        cluster_roles: impl IntoIterator<Item = &'a Value>,
        roles: impl IntoIterator<Item = &'a Value>,
        cluster_role_bindings: impl IntoIterator<Item = &'a Value>,
        role_bindings: impl IntoIterator<Item = &'a Value>,
    ) -> Policy {
        let mut p = Policy::default();
        for r in cluster_roles {
            p.cluster_roles.insert(meta(r, "name"), rules(r));
        }
        for r in roles {
            p.roles
                .insert((meta(r, "namespace"), meta(r, "name")), rules(r));
        }
        p.cluster_role_bindings = cluster_role_bindings
            .into_iter()
            .filter_map(binding)
            .collect();
        for b in role_bindings.into_iter().filter_map(binding) {
            p.role_bindings
                .entry(b.namespace.clone())
                .or_default()
                .push(b);
        }
        p
    }

    /// The rules a role reference names, from a binding in `namespace`
    /// (`GetRoleReferenceRules`). Errors: kube's not-found messages.
    pub fn role_reference_rules(
        &self,
        role_ref: &RoleRef,
        namespace: &str,
    ) -> Result<&[PolicyRule], String> {
        match role_ref.kind.as_str() {
            "ClusterRole" => self
                .cluster_roles
                .get(&role_ref.name)
                .map(Vec::as_slice)
                .ok_or_else(|| {
                    format!(
                        "clusterrole.rbac.authorization.k8s.io {:?} not found",
                        role_ref.name
                    )
                }),
            "Role" => self
                .roles
                .get(&(namespace.to_string(), role_ref.name.clone()))
                .map(Vec::as_slice)
                .ok_or_else(|| {
                    format!(
                        "role.rbac.authorization.k8s.io {:?} not found",
                        role_ref.name
                    )
                }),
            other => Err(format!("unsupported role reference kind: {other:?}")),
        }
    }

    /// Visit the rules `user` holds in `namespace` (`""`: cluster-wide only) until `visit`
    /// returns `false`. Returns the errors met on the way (a binding naming a missing role).
    pub fn visit_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        mut visit: impl FnMut(&PolicyRule) -> bool,
    ) -> Vec<String> {
        let mut errors = Vec::new();
        for b in &self.cluster_role_bindings {
            if !b.subjects.iter().any(|s| applies_to_user(user, s, "")) {
                continue;
            }
            match self.role_reference_rules(&b.role_ref, "") {
                Ok(rules) => {
                    for r in rules {
                        if !visit(r) {
                            return errors;
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        if namespace.is_empty() {
            return errors;
        }
        for b in self.role_bindings.get(namespace).into_iter().flatten() {
            if !b
                .subjects
                .iter()
                .any(|s| applies_to_user(user, s, namespace))
            {
                continue;
            }
            match self.role_reference_rules(&b.role_ref, namespace) {
                Ok(rules) => {
                    for r in rules {
                        if !visit(r) {
                            return errors;
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        errors
    }

    /// Every rule `user` holds in `namespace`, and the errors met (`RulesFor`).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let mut rules = Vec::new();
        let errors = self.visit_rules_for(user, namespace, |r| {
            rules.push(r.clone());
            true
        });
        (rules, errors)
    }
}

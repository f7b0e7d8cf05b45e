//! Validation of RBAC objects, ported from `pkg/apis/rbac/validation/validation.go`. Names
//! follow `ValidateRBACName` (`path.IsValidPathSegmentName`); the rest of ObjectMeta is the
//! host's.

use crate::GROUP;
use wasm_apiserver_sdk::k8s_openapi::api::rbac::v1::{
    AggregationRule, PolicyRule, RoleRef, Subject,
};
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::NameRule;

/// `ValidateRBACName` on `metadata.name`.
pub fn validate_name(name: Option<&str>) -> ErrorList {
    validation::validate_name(
        name.unwrap_or_default(),
        NameRule::PathSegment,
        &Path::new("metadata").child("name"),
    )
}

/// `ValidatePolicyRule`: verbs required; non-resource URLs only in cluster roles and never
/// with resources; resource rules need API groups and resources.
pub fn validate_policy_rule(rule: &PolicyRule, namespaced: bool, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if rule.verbs.is_empty() {
        errs.push(field::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = rule.non_resource_urls.as_deref().unwrap_or_default();
    let groups = rule.api_groups.as_deref().unwrap_or_default();
    let resources = rule.resources.as_deref().unwrap_or_default();
    let names = rule.resource_names.as_deref().unwrap_or_default();
    if !urls.is_empty() {
        if namespaced {
            errs.push(field::invalid(
                &path.child("nonResourceURLs"),
                urls,
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if !groups.is_empty() || !resources.is_empty() || !names.is_empty() {
            errs.push(field::invalid(
                &path.child("nonResourceURLs"),
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if groups.is_empty() {
        errs.push(field::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if resources.is_empty() {
        errs.push(field::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// The rules of a Role (`namespaced`) or ClusterRole.
pub fn validate_rules(rules: Option<&[PolicyRule]>, namespaced: bool) -> ErrorList {
    rules
        .unwrap_or_default()
        .iter()
        .enumerate()
        .flat_map(|(i, r)| validate_policy_rule(r, namespaced, &Path::new("rules").index(i)))
        .collect()
}

/// A ClusterRole's `aggregationRule`: at least one selector, each a valid label selector.
pub fn validate_aggregation_rule(rule: Option<&AggregationRule>) -> ErrorList {
    let Some(rule) = rule else {
        return ErrorList::new();
    };
    let path = Path::new("aggregationRule").child("clusterRoleSelectors");
    let selectors = rule.cluster_role_selectors.as_deref().unwrap_or_default();
    let mut errs = ErrorList::new();
    if selectors.is_empty() {
        errs.push(field::required(
            &path,
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, s) in selectors.iter().enumerate() {
        errs.extend(validation::validate_label_selector(s, &path.index(i)));
    }
    errs
}

/// A binding's `roleRef`: API group `rbac.authorization.k8s.io`, kind one of `kinds`, a valid
/// name.
pub fn validate_role_ref(role_ref: &RoleRef, kinds: &[&str]) -> ErrorList {
    let path = Path::new("roleRef");
    let mut errs = ErrorList::new();
    if role_ref.api_group != GROUP {
        errs.push(field::not_supported(
            &path.child("apiGroup"),
            &role_ref.api_group,
            &[GROUP],
        ));
    }
    if !kinds.contains(&role_ref.kind.as_str()) {
        errs.push(field::not_supported(
            &path.child("kind"),
            &role_ref.kind,
            kinds,
        ));
    }
    if role_ref.name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    } else {
        for msg in NameRule::PathSegment.check(&role_ref.name, false) {
            errs.push(field::invalid(&path.child("name"), &role_ref.name, msg));
        }
    }
    errs
}

/// `ValidateRoleBindingSubject`: a name; a service account's name is a DNS subdomain, its API
/// group empty, and (in a ClusterRoleBinding) its namespace given; users and groups are in
/// the RBAC group.
pub fn validate_subject(subject: &Subject, namespaced: bool, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if subject.name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    }
    let api_group = subject.api_group.as_deref().unwrap_or_default();
    match subject.kind.as_str() {
        "ServiceAccount" => {
            if !subject.name.is_empty() {
                for msg in NameRule::Dns1123Subdomain.check(&subject.name, false) {
                    errs.push(field::invalid(&path.child("name"), &subject.name, msg));
                }
            }
            if !api_group.is_empty() {
                errs.push(field::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[""],
                ));
            }
            if !namespaced && subject.namespace.as_deref().unwrap_or_default().is_empty() {
                errs.push(field::required(&path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if api_group != GROUP {
                errs.push(field::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[GROUP],
                ));
            }
        }
        other => errs.push(field::not_supported(
            &path.child("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// Every subject of a binding.
pub fn validate_subjects(subjects: Option<&[Subject]>, namespaced: bool) -> ErrorList {
    subjects
        .unwrap_or_default()
        .iter()
        .enumerate()
        .flat_map(|(i, s)| validate_subject(s, namespaced, &Path::new("subjects").index(i)))
        .collect()
}

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`:
/// an empty `roleRef.apiGroup` is the RBAC group; a user's or group's empty `apiGroup` is the
/// RBAC group.
pub fn default_binding(role_ref: &mut RoleRef, subjects: Option<&mut Vec<Subject>>) {
    if role_ref.api_group.is_empty() {
        role_ref.api_group = GROUP.into();
    }
    for s in subjects.into_iter().flatten() {
        if s.api_group.as_deref().unwrap_or_default().is_empty()
            && (s.kind == "User" || s.kind == "Group")
        {
            s.api_group = Some(GROUP.into());
        }
    }
}

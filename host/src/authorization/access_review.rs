//! The access reviews (`pkg/registry/authorization/{selfsubjectaccessreview,
//! subjectaccessreview,localsubjectaccessreview,selfsubjectrulesreview}/rest.go`,
//! `pkg/apis/authorization/validation`): what `kubectl auth can-i` asks. Nothing is stored;
//! each answers with the object it was given plus a `status`.

use super::authorizer::{Attributes, Authorizer, Decision};
use crate::authentication::UserInfo;
use crate::status::ApiError;
use serde_json::{json, Map, Value};
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::GroupKind;

/// The attributes a review asks about: `spec.resourceAttributes` or
/// `spec.nonResourceAttributes`, exactly one (`ValidateSubjectAccessReviewSpec`). `namespace`
/// overrides the resource attributes' namespace (LocalSubjectAccessReview). Errors: 422 as
/// kube words it.
fn attributes(
    kind: &str,
    spec: &Value,
    user: UserInfo,
    namespace: Option<&str>,
) -> Result<Attributes, ApiError> {
    let res = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let gk = review_kind(kind);
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    match (res, non) {
        (Some(r), None) => {
            if let Some(ns) = namespace {
                let given = s(r, "namespace");
                if given != ns {
                    return Err(ApiError::invalid(
                        &gk,
                        "",
                        &[field::invalid(
                            &Path::new("spec")
                                .child("resourceAttributes")
                                .child("namespace"),
                            given,
                            "must match metadata.namespace",
                        )],
                    ));
                }
            }
            Ok(Attributes {
                user,
                verb: s(r, "verb"),
                resource_request: true,
                namespace: s(r, "namespace"),
                api_group: s(r, "group"),
                api_version: s(r, "version"),
                resource: s(r, "resource"),
                subresource: s(r, "subresource"),
                name: s(r, "name"),
                path: String::new(),
            })
        }
        (None, Some(n)) => Ok(Attributes {
            user,
            verb: s(n, "verb"),
            path: s(n, "path"),
            ..Default::default()
        }),
        (Some(_), Some(_)) => Err(ApiError::invalid(
            &gk,
            "",
            &[field::invalid(
                &Path::new("spec").child("nonResourceAttributes"),
                "null",
                "cannot be specified in combination with resourceAttributes",
            )],
        )),
        (None, None) => Err(ApiError::invalid(
            &gk,
            "",
            &[field::invalid(
                &Path::new("spec").child("resourceAttributes"),
                "null",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )],
        )),
    }
}

/// The `authorization.k8s.io` kind a review's `Invalid` answers name.
fn review_kind(kind: &str) -> GroupKind {
    GroupKind {
        group: "authorization.k8s.io".into(),
        kind: kind.into(),
    }
}

fn answer(kind: &str, mut review: Value, status: Value) -> Value {
    let obj = review
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut out = Map::new();
    out.insert("kind".into(), json!(kind));
    out.insert("apiVersion".into(), json!("authorization.k8s.io/v1"));
    let mut metadata = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    metadata["creationTimestamp"] = Value::Null;
    out.insert("metadata".into(), metadata);
    out.insert(
        "spec".into(),
        obj.get("spec").cloned().unwrap_or_else(|| json!({})),
    );
    out.insert("status".into(), status);
    Value::Object(out)
}

fn decide(authorizer: &Authorizer, attrs: &Attributes) -> Value {
    let (decision, reason) = authorizer.authorize(attrs);
    let mut status = json!({"allowed": decision == Decision::Allow});
    if decision == Decision::Deny {
        status["denied"] = json!(true);
    }
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    status
}

/// `SelfSubjectAccessReview`: may the requester do what the spec says?
pub fn self_subject_access_review(
    authorizer: &Authorizer,
    requester: &UserInfo,
    review: Value,
) -> Result<Value, ApiError> {
    let attrs = attributes(
        "SelfSubjectAccessReview",
        &review["spec"],
        requester.clone(),
        None,
    )?;
    let status = decide(authorizer, &attrs);
    Ok(answer("SelfSubjectAccessReview", review, status))
}

/// `SubjectAccessReview` (cluster-wide) or `LocalSubjectAccessReview` (`namespace`): may the
/// user the spec names (`user`, `uid`, `groups`, `extra`) do what it says? Errors: 422 when
/// neither a user nor groups are given.
pub fn subject_access_review(
    authorizer: &Authorizer,
    review: Value,
    namespace: Option<&str>,
) -> Result<Value, ApiError> {
    let kind = if namespace.is_some() {
        "LocalSubjectAccessReview"
    } else {
        "SubjectAccessReview"
    };
    let spec = &review["spec"];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let user = UserInfo {
        name: spec["user"].as_str().unwrap_or("").to_string(),
        uid: spec["uid"].as_str().unwrap_or("").to_string(),
        groups: strings(&spec["groups"]),
        extra: spec["extra"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
            .unwrap_or_default(),
    };
    if user.name.is_empty() && user.groups.is_empty() {
        return Err(ApiError::invalid(
            &review_kind(kind),
            "",
            &[field::invalid(
                &Path::new("spec").child("user"),
                "",
                "at least one of user or group must be specified",
            )],
        ));
    }
    if namespace.is_some()
        && spec
            .get("nonResourceAttributes")
            .is_some_and(|v| !v.is_null())
    {
        // `ValidateLocalSubjectAccessReview`.
        return Err(ApiError::invalid(
            &review_kind(kind),
            "",
            &[field::invalid(
                &Path::new("spec").child("nonResourceAttributes"),
                spec["nonResourceAttributes"].clone(),
                "disallowed on this kind of request",
            )],
        ));
    }
    let attrs = attributes(kind, spec, user, namespace)?;
    let status = decide(authorizer, &attrs);
    Ok(answer(kind, review, status))
}

/// `SelfSubjectRulesReview`: the rules the requester holds in `spec.namespace`, as the RBAC
/// rule resolver lists them; `incomplete` when a binding named a missing role.
pub fn self_subject_rules_review(
    authorizer: &Authorizer,
    requester: &UserInfo,
    review: Value,
) -> Result<Value, ApiError> {
    let namespace = review["spec"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, errors) = authorizer.rbac().policy().rules_for(requester, &namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for r in rules {
        if !r.non_resource_urls.is_empty() {
            non_resource_rules
                .push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        } else {
            let mut rule =
                json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
            if !r.resource_names.is_empty() {
                rule["resourceNames"] = json!(r.resource_names);
            }
            resource_rules.push(rule);
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    Ok(answer("SelfSubjectRulesReview", review, status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorization::rbac::RbacAuthorizer;
    use std::sync::Arc;

    #[test]
    fn local_reviews_refuse_non_resource_attributes() {
        let authorizer = Authorizer::new(vec![], Arc::new(RbacAuthorizer::default()));
        let review = json!({"spec": {"user": "jane", "nonResourceAttributes": {"path": "/x", "verb": "get"}}});
        let e = subject_access_review(&authorizer, review.clone(), Some("dev")).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.message.contains("disallowed on this kind of request"),
            "{e}"
        );
        assert!(subject_access_review(&authorizer, review, None).is_ok());
        let e = self_subject_rules_review(&authorizer, &UserInfo::default(), json!({"spec": {}}))
            .unwrap_err();
        assert_eq!(e.code, 400);
    }
}

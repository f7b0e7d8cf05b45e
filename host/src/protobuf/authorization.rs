//! `authorization.k8s.io/v1` reviews (`k8s.io/api/authorization/v1/types.go`): what
//! `kubectl auth can-i` sends. The selector attributes of `resourceAttributes` (alpha in
//! 1.31, `AuthorizeWithSelectors`) are refused.

use super::json::*;
use super::meta::*;
use k8s_pb::api::authorization::v1 as authz;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

fn resource_attributes(r: authz::ResourceAttributes) -> R<Value> {
    object!(r, authz::ResourceAttributes {
        namespace: "namespace" => omitempty_str,
        verb: "verb" => omitempty_str,
        group: "group" => omitempty_str,
        version: "version" => omitempty_str,
        resource: "resource" => omitempty_str,
        subresource: "subresource" => omitempty_str,
        name: "name" => omitempty_str,
        field_selector: "fieldSelector" => refused_field("resourceAttributes.fieldSelector"),
        label_selector: "labelSelector" => refused_field("resourceAttributes.labelSelector"),
    })
}

fn non_resource_attributes(n: authz::NonResourceAttributes) -> R<Value> {
    object!(n, authz::NonResourceAttributes {
        path: "path" => omitempty_str,
        verb: "verb" => omitempty_str,
    })
}

fn status(s: authz::SubjectAccessReviewStatus) -> R<Value> {
    object!(s, authz::SubjectAccessReviewStatus {
        allowed: "allowed" => bool_value,
        denied: "denied" => omitempty_bool,
        reason: "reason" => omitempty_str,
        evaluation_error: "evaluationError" => omitempty_str,
    })
}

fn self_spec(s: authz::SelfSubjectAccessReviewSpec) -> R<Value> {
    object!(s, authz::SelfSubjectAccessReviewSpec {
        resource_attributes: "resourceAttributes" => ptr_struct(resource_attributes),
        non_resource_attributes: "nonResourceAttributes" => ptr_struct(non_resource_attributes),
    })
}

fn extra(m: BTreeMap<String, authz::ExtraValue>) -> Out {
    if m.is_empty() {
        return Ok(None);
    }
    Ok(Some(Value::Object(
        m.into_iter()
            .map(|(k, v)| (k, Value::from(v.items)))
            .collect(),
    )))
}

fn spec(s: authz::SubjectAccessReviewSpec) -> R<Value> {
    object!(s, authz::SubjectAccessReviewSpec {
        resource_attributes: "resourceAttributes" => ptr_struct(resource_attributes),
        non_resource_attributes: "nonResourceAttributes" => ptr_struct(non_resource_attributes),
        user: "user" => omitempty_str,
        groups: "groups" => omitempty_strings,
        extra: "extra" => extra,
        uid: "uid" => omitempty_str,
    })
}

pub(super) fn self_subject_access_review(r: authz::SelfSubjectAccessReview) -> R<Value> {
    object!(r, authz::SelfSubjectAccessReview {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(self_spec),
        status: "status" => struct_value(status),
    })
}

pub(super) fn subject_access_review(r: authz::SubjectAccessReview) -> R<Value> {
    object!(r, authz::SubjectAccessReview {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(spec),
        status: "status" => struct_value(status),
    })
}

pub(super) fn local_subject_access_review(r: authz::LocalSubjectAccessReview) -> R<Value> {
    object!(r, authz::LocalSubjectAccessReview {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(spec),
        status: "status" => struct_value(status),
    })
}

fn rules_spec(s: authz::SelfSubjectRulesReviewSpec) -> R<Value> {
    object!(s, authz::SelfSubjectRulesReviewSpec { namespace: "namespace" => omitempty_str })
}

fn ignored_rules_status(_: Option<authz::SubjectRulesReviewStatus>) -> Out {
    // Output only: the server fills it.
    Ok(None)
}

pub(super) fn self_subject_rules_review(r: authz::SelfSubjectRulesReview) -> R<Value> {
    object!(r, authz::SelfSubjectRulesReview {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(rules_spec),
        status: "status" => ignored_rules_status,
    })
}

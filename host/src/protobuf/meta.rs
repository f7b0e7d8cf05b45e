//! meta/v1 (`k8s.io/apimachinery/pkg/apis/meta/v1/types.go`): `ObjectMeta` and what it holds.

use super::json::*;
use crate::status::ApiError;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use serde_json::{Map, Value};

pub(super) fn object_meta(m: meta::ObjectMeta) -> R<Value> {
    object!(m, meta::ObjectMeta {
        name: "name" => omitempty_str,
        generate_name: "generateName" => omitempty_str,
        namespace: "namespace" => omitempty_str,
        self_link: "selfLink" => omitempty_str,
        uid: "uid" => omitempty_str,
        resource_version: "resourceVersion" => omitempty_str,
        generation: "generation" => omitempty_int,
        creation_timestamp: "creationTimestamp" => time,
        deletion_timestamp: "deletionTimestamp" => ptr_time,
        deletion_grace_period_seconds: "deletionGracePeriodSeconds" => ptr_int,
        labels: "labels" => omitempty_string_map,
        annotations: "annotations" => omitempty_string_map,
        owner_references: "ownerReferences" => omitempty_list(owner_reference),
        finalizers: "finalizers" => omitempty_strings,
        managed_fields: "managedFields" => omitempty_list(managed_fields_entry),
    })
}

pub(super) fn owner_reference(r: meta::OwnerReference) -> R<Value> {
    object!(r, meta::OwnerReference {
        api_version: "apiVersion" => str_value,
        kind: "kind" => str_value,
        name: "name" => str_value,
        uid: "uid" => str_value,
        controller: "controller" => ptr_bool,
        block_owner_deletion: "blockOwnerDeletion" => ptr_bool,
    })
}

pub(super) fn managed_fields_entry(e: meta::ManagedFieldsEntry) -> R<Value> {
    object!(e, meta::ManagedFieldsEntry {
        manager: "manager" => omitempty_str,
        operation: "operation" => omitempty_str,
        api_version: "apiVersion" => omitempty_str,
        time: "time" => ptr_time,
        fields_type: "fieldsType" => omitempty_str,
        fields_v1: "fieldsV1" => ptr_struct(fields_v1),
        subresource: "subresource" => omitempty_str,
    })
}

/// `FieldsV1` holds JSON bytes and prints them as they are.
pub(super) fn fields_v1(f: meta::FieldsV1) -> R<Value> {
    let raw = f.raw.unwrap_or_default();
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&raw)
        .map_err(|e| ApiError::bad_request(format!("managedFields fieldsV1 is not JSON: {e}")))
}

pub(super) fn label_selector(l: meta::LabelSelector) -> R<Value> {
    object!(l, meta::LabelSelector {
        match_labels: "matchLabels" => omitempty_string_map,
        match_expressions: "matchExpressions" => omitempty_list(label_selector_requirement),
    })
}

pub(super) fn label_selector_requirement(r: meta::LabelSelectorRequirement) -> R<Value> {
    object!(r, meta::LabelSelectorRequirement {
        key: "key" => str_value,
        operator: "operator" => str_value,
        values: "values" => omitempty_strings,
    })
}

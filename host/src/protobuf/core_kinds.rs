//! core/v1 kinds served as protobuf besides Pod (`Namespace`, `ConfigMap`, `Secret`,
//! `ServiceAccount`) and the
//! small reference types every other family uses (`k8s.io/api/core/v1/types.go`).

use super::json::*;
use super::meta::*;
use k8s_pb::api::core::v1 as core;
use serde_json::{Map, Value};

pub(super) fn namespace(n: core::Namespace) -> R<Value> {
    object!(n, core::Namespace {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(namespace_spec),
        status: "status" => struct_value(namespace_status),
    })
}

pub(super) fn namespace_spec(n: core::NamespaceSpec) -> R<Value> {
    object!(n, core::NamespaceSpec { finalizers: "finalizers" => omitempty_strings })
}

pub(super) fn namespace_status(n: core::NamespaceStatus) -> R<Value> {
    object!(n, core::NamespaceStatus {
        phase: "phase" => omitempty_str,
        conditions: "conditions" => omitempty_list(namespace_condition),
    })
}

pub(super) fn namespace_condition(c: core::NamespaceCondition) -> R<Value> {
    object!(c, core::NamespaceCondition {
        r#type: "type" => str_value,
        status: "status" => str_value,
        last_transition_time: "lastTransitionTime" => time,
        reason: "reason" => omitempty_str,
        message: "message" => omitempty_str,
    })
}

pub(super) fn config_map(c: core::ConfigMap) -> R<Value> {
    object!(c, core::ConfigMap {
        metadata: "metadata" => struct_value(object_meta),
        immutable: "immutable" => ptr_bool,
        data: "data" => omitempty_string_map,
        binary_data: "binaryData" => omitempty_bytes_map,
    })
}

pub(super) fn secret(c: core::Secret) -> R<Value> {
    object!(c, core::Secret {
        metadata: "metadata" => struct_value(object_meta),
        immutable: "immutable" => ptr_bool,
        data: "data" => omitempty_bytes_map,
        string_data: "stringData" => omitempty_string_map,
        r#type: "type" => omitempty_str,
    })
}

pub(super) fn service_account(s: core::ServiceAccount) -> R<Value> {
    object!(s, core::ServiceAccount {
        metadata: "metadata" => struct_value(object_meta),
        secrets: "secrets" => omitempty_list(object_reference),
        image_pull_secrets: "imagePullSecrets" => omitempty_list(local_object_reference),
        automount_service_account_token: "automountServiceAccountToken" => ptr_bool,
    })
}

pub(super) fn object_reference(r: core::ObjectReference) -> R<Value> {
    object!(r, core::ObjectReference {
        kind: "kind" => omitempty_str,
        namespace: "namespace" => omitempty_str,
        name: "name" => omitempty_str,
        uid: "uid" => omitempty_str,
        api_version: "apiVersion" => omitempty_str,
        resource_version: "resourceVersion" => omitempty_str,
        field_path: "fieldPath" => omitempty_str,
    })
}

pub(super) fn object_field_selector(f: core::ObjectFieldSelector) -> R<Value> {
    object!(f, core::ObjectFieldSelector {
        api_version: "apiVersion" => omitempty_str,
        field_path: "fieldPath" => str_value,
    })
}

pub(super) fn resource_field_selector(f: core::ResourceFieldSelector) -> R<Value> {
    object!(f, core::ResourceFieldSelector {
        container_name: "containerName" => omitempty_str,
        resource: "resource" => str_value,
        divisor: "divisor" => quantity,
    })
}

pub(super) fn local_object_reference(r: core::LocalObjectReference) -> R<Value> {
    object!(r, core::LocalObjectReference { name: "name" => omitempty_str })
}

pub(super) fn resource_requirements(r: core::ResourceRequirements) -> R<Value> {
    object!(r, core::ResourceRequirements {
        limits: "limits" => omitempty_resource_list,
        requests: "requests" => omitempty_resource_list,
        claims: "claims" => omitempty_list(resource_claim),
    })
}

pub(super) fn resource_claim(c: core::ResourceClaim) -> R<Value> {
    object!(c, core::ResourceClaim {
        name: "name" => str_value,
        request: "request" => omitempty_str,
    })
}

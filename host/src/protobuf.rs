//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`) for the core/v1 kinds the
//! standard plugins serve, decoded into the object's Kubernetes JSON form so plugins keep
//! receiving JSON.
//!
//! kubectl's imperative commands (`create namespace`, `create configmap`, `create secret`,
//! `run`) send built-in kinds as protobuf and do not fall back to JSON after a 415.
//!
//! Followed:
//! - the envelope: `k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go`
//!   (4-byte prefix `k8s\0`, then a `runtime.Unknown` from
//!   `k8s.io/apimachinery/pkg/runtime/generated.proto`, GVK defaulting `copyKindDefaults`);
//! - the objects: `k8s.io/api/core/v1/generated.proto` (via the `k8s-pb` crate) and the JSON
//!   tags of `k8s.io/api/core/v1/types.go` and `k8s.io/apimachinery/pkg/apis/meta/v1/types.go`.
//!
//! JSON is produced the way Go's `encoding/json` prints the decoded Go struct: gogo-protobuf
//! always encodes non-pointer fields, so a value field with `omitempty` is omitted when it is
//! the zero value, a value field without `omitempty` is always printed, a pointer field is
//! printed when present (even when zero), non-pointer structs are always printed (`{}`), nil
//! slices without `omitempty` print `null`, `metav1.Time` prints RFC 3339 seconds or `null`
//! (`k8s.io/apimachinery/pkg/apis/meta/v1/time.go`, `time_proto.go`), `[]byte` prints base64,
//! `resource.Quantity` its string and `intstr.IntOrString` a number or a string
//! (`k8s.io/apimachinery/pkg/util/intstr/intstr.go`).
//!
//! Every struct is destructured exhaustively, so each protobuf field is either converted or
//! explicitly refused (the legacy in-tree cloud volume sources): nothing is dropped silently.

use crate::status::ApiError;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The media type (`runtime.ContentTypeProtobuf`).
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The envelope prefix (`protobufPrefix` in
/// `k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go`).
pub const MAGIC: &[u8; 4] = b"k8s\x00";

type R<T> = Result<T, ApiError>;
/// A field's JSON value, or `None` when Go would omit it.
type Out = R<Option<Value>>;

/// Decode a protobuf request body for the resource `api_version`/`kind` into its JSON object
/// (with `apiVersion` and `kind` set), following `protobuf.Serializer.Decode`
/// (`k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go`): the `runtime.Unknown`
/// envelope's GVK, defaulted from the resource, must be the resource's.
///
/// Errors: 400 when the bytes are not a protobuf envelope or object, or the envelope names
/// another kind; 415 for a kind (or a field) this decoder does not convert.
pub fn decode(body: &[u8], api_version: &str, kind: &str) -> Result<Value, ApiError> {
    let rest = body.strip_prefix(MAGIC).ok_or_else(|| {
        ApiError::bad_request(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
        )
    })?;
    let unknown = Unknown::decode(rest).map_err(|e| {
        ApiError::bad_request(format!("error decoding the request body as protobuf: {e}"))
    })?;
    let type_meta = unknown.type_meta.unwrap_or_default();
    let data_version = type_meta
        .api_version
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| api_version.to_string());
    let data_kind = type_meta
        .kind
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| kind.to_string());
    if data_version != api_version || data_kind != kind {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({data_version}) does not match the expected API version ({api_version}) or the kind in the data ({data_kind}) does not match the expected kind ({kind})"
        )));
    }
    if let Some(enc) = unknown.content_encoding.filter(|s| !s.is_empty()) {
        return Err(unsupported(format!(
            "the protobuf envelope's content encoding {enc:?} is not supported"
        )));
    }
    if let Some(ct) = unknown
        .content_type
        .filter(|s| !s.is_empty() && s != CONTENT_TYPE)
    {
        return Err(unsupported(format!(
            "the protobuf envelope's content type {ct:?} is not supported"
        )));
    }
    let raw = unknown.raw.unwrap_or_default();
    let body = match (api_version, kind) {
        ("v1", "Namespace") => namespace(message(&raw)?)?,
        ("v1", "ConfigMap") => config_map(message(&raw)?)?,
        ("v1", "Secret") => secret(message(&raw)?)?,
        ("v1", "Pod") => pod(message(&raw)?)?,
        _ => {
            return Err(ApiError::unsupported_media_type(&[
                "application/json",
                "application/yaml",
            ]))
        }
    };
    let mut obj = Map::new();
    obj.insert("kind".into(), Value::from(kind));
    obj.insert("apiVersion".into(), Value::from(api_version));
    if let Value::Object(fields) = body {
        obj.extend(fields);
    }
    Ok(Value::Object(obj))
}

fn message<M: Message + Default>(raw: &[u8]) -> R<M> {
    M::decode(raw).map_err(|e| {
        ApiError::bad_request(format!("error decoding the request body as protobuf: {e}"))
    })
}

/// 415 naming what cannot be converted.
fn unsupported(what: String) -> ApiError {
    ApiError::unsupported_media_type(&[])
        .with_message(format!("{what}; send the object as application/json"))
}

/// Build a JSON object from a k8s-pb struct, destructured exhaustively:
/// `field: "jsonName" => conversion`. The JSON name `""` inlines an embedded struct.
macro_rules! object {
    ($v:expr, $($ty:ident)::+ { $($field:ident : $json:literal => $conv:expr),* $(,)? }) => {{
        // Compile-time check that every field of the struct is listed.
        let _exhaustive = |x: &$($ty)::+| {
            let $($ty)::+ { $($field: _),* } = x;
        };
        let obj: $($ty)::+ = $v;
        let mut o = Map::new();
        $( put(&mut o, $json, ($conv)(obj.$field)?); )*
        Ok(Value::Object(o))
    }};
}

fn put(o: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    match (key, v) {
        (_, None) => {}
        ("", Some(Value::Object(inline))) => o.extend(inline),
        (_, Some(v)) => {
            o.insert(key.to_string(), v);
        }
    }
}

// ---- scalar conversions ----

/// `string` with `omitempty`.
fn s(v: Option<String>) -> Out {
    Ok(v.filter(|s| !s.is_empty()).map(Value::from))
}

/// `string` without `omitempty`.
fn sr(v: Option<String>) -> Out {
    Ok(Some(Value::from(v.unwrap_or_default())))
}

/// `*string` with `omitempty`.
fn sp(v: Option<String>) -> Out {
    Ok(v.map(Value::from))
}

/// `*string` without `omitempty` (`null` when nil).
fn spn(v: Option<String>) -> Out {
    Ok(Some(v.map_or(Value::Null, Value::from)))
}

/// `bool` with `omitempty`.
fn b(v: Option<bool>) -> Out {
    Ok(v.filter(|b| *b).map(Value::from))
}

/// `bool` without `omitempty`.
fn br(v: Option<bool>) -> Out {
    Ok(Some(Value::from(v.unwrap_or(false))))
}

/// `*bool`.
fn bp(v: Option<bool>) -> Out {
    Ok(v.map(Value::from))
}

/// `int32`/`int64` with `omitempty`.
fn i<N: Into<i64>>(v: Option<N>) -> Out {
    Ok(v.map(Into::into).filter(|n| *n != 0).map(Value::from))
}

/// `int32`/`int64` without `omitempty`.
fn ir<N: Into<i64>>(v: Option<N>) -> Out {
    Ok(Some(Value::from(v.map_or(0, Into::into))))
}

/// `*int32`/`*int64`.
fn ip<N: Into<i64>>(v: Option<N>) -> Out {
    Ok(v.map(|n| Value::from(n.into())))
}

/// `[]string` with `omitempty`.
fn strs(v: Vec<String>) -> Out {
    Ok((!v.is_empty()).then(|| Value::from(v)))
}

/// `[]int32`/`[]int64` with `omitempty`.
fn ints<N: Into<i64>>(v: Vec<N>) -> Out {
    Ok((!v.is_empty()).then(|| v.into_iter().map(|n| Value::from(n.into())).collect()))
}

/// `map[string]string` with `omitempty`.
fn smap(v: BTreeMap<String, String>) -> Out {
    Ok((!v.is_empty()).then(|| v.into_iter().map(|(k, v)| (k, Value::from(v))).collect()))
}

/// `map[string][]byte` with `omitempty`: values in base64, as `encoding/json` prints `[]byte`.
fn bmap(v: BTreeMap<String, Vec<u8>>) -> Out {
    Ok((!v.is_empty()).then(|| {
        v.into_iter()
            .map(|(k, v)| (k, Value::from(base64(&v))))
            .collect()
    }))
}

/// `ResourceList` (`map[ResourceName]resource.Quantity`) with `omitempty`.
fn qmap(v: BTreeMap<String, Quantity>) -> Out {
    Ok((!v.is_empty()).then(|| v.into_iter().map(|(k, q)| (k, quantity_value(q))).collect()))
}

/// `resource.Quantity` (a struct: always printed; the zero Quantity prints `"0"`).
fn q(v: Option<Quantity>) -> Out {
    Ok(Some(quantity_value(v.unwrap_or_default())))
}

/// `*resource.Quantity`.
fn qp(v: Option<Quantity>) -> Out {
    Ok(v.map(quantity_value))
}

fn quantity_value(q: Quantity) -> Value {
    Value::from(
        q.string
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "0".into()),
    )
}

/// `intstr.IntOrString` (a struct: always printed), per `IntOrString.MarshalJSON`.
fn ios(v: Option<IntOrString>) -> Out {
    let v = v.unwrap_or_default();
    Ok(Some(match v.r#type.unwrap_or(0) {
        0 => Value::from(v.int_val.unwrap_or(0)),
        1 => Value::from(v.str_val.unwrap_or_default()),
        t => {
            return Err(ApiError::bad_request(format!(
                "impossible IntOrString.Type {t}"
            )))
        }
    }))
}

/// `metav1.Time` (a struct: always printed, `null` when zero).
fn t(v: Option<meta::Time>) -> Out {
    Ok(Some(match v {
        None => Value::Null,
        Some(t) => time_value(t)?,
    }))
}

/// `*metav1.Time`.
fn tp(v: Option<meta::Time>) -> Out {
    v.map(time_value).transpose()
}

/// `metav1.Time.Unmarshal` (an empty message is the zero time; nanoseconds are dropped) then
/// `MarshalJSON` (`null` for the zero time, else RFC 3339 in UTC).
fn time_value(t: meta::Time) -> R<Value> {
    /// `time.Time{}` (January 1, year 1, UTC) in Unix seconds.
    const GO_ZERO_TIME: i64 = -62_135_596_800;
    if t.seconds.is_none() && t.nanos.is_none() {
        return Ok(Value::Null);
    }
    let secs = t.seconds.unwrap_or(0);
    if secs == GO_ZERO_TIME {
        return Ok(Value::Null);
    }
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| Value::from(d.format("%Y-%m-%dT%H:%M:%SZ").to_string()))
        .ok_or_else(|| ApiError::bad_request(format!("time out of range: {secs} seconds")))
}

// ---- structural conversions ----

/// `[]T` with `omitempty`.
fn list<T>(f: fn(T) -> R<Value>) -> impl FnOnce(Vec<T>) -> Out {
    move |v| {
        if v.is_empty() {
            return Ok(None);
        }
        v.into_iter()
            .map(f)
            .collect::<R<Vec<Value>>>()
            .map(|a| Some(Value::Array(a)))
    }
}

/// `[]T` without `omitempty` (`null` when nil).
fn list_req<T>(f: fn(T) -> R<Value>) -> impl FnOnce(Vec<T>) -> Out {
    move |v| Ok(Some(list(f)(v)?.unwrap_or(Value::Null)))
}

/// `*T`.
fn ptr<T>(f: fn(T) -> R<Value>) -> impl FnOnce(Option<T>) -> Out {
    move |v| v.map(f).transpose()
}

/// A non-pointer struct `T` (always printed; with the JSON name `""`, inlined).
fn val<T: Default>(f: fn(T) -> R<Value>) -> impl FnOnce(Option<T>) -> Out {
    move |v| f(v.unwrap_or_default()).map(Some)
}

/// A field this decoder does not convert: refused (415) when set.
fn refuse<T>(name: &'static str) -> impl FnOnce(Option<T>) -> Out {
    move |v| match v {
        None => Ok(None),
        Some(_) => Err(unsupported(format!(
            "the {name} volume source is not supported in protobuf request bodies"
        ))),
    }
}

/// Standard base64 with padding (`encoding/base64.StdEncoding`, as `encoding/json` prints
/// `[]byte`).
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

// ---- meta/v1 (k8s.io/apimachinery/pkg/apis/meta/v1/types.go) ----

fn object_meta(m: meta::ObjectMeta) -> R<Value> {
    object!(m, meta::ObjectMeta {
        name: "name" => s,
        generate_name: "generateName" => s,
        namespace: "namespace" => s,
        self_link: "selfLink" => s,
        uid: "uid" => s,
        resource_version: "resourceVersion" => s,
        generation: "generation" => i,
        creation_timestamp: "creationTimestamp" => t,
        deletion_timestamp: "deletionTimestamp" => tp,
        deletion_grace_period_seconds: "deletionGracePeriodSeconds" => ip,
        labels: "labels" => smap,
        annotations: "annotations" => smap,
        owner_references: "ownerReferences" => list(owner_reference),
        finalizers: "finalizers" => strs,
        managed_fields: "managedFields" => list(managed_fields_entry),
    })
}

fn owner_reference(r: meta::OwnerReference) -> R<Value> {
    object!(r, meta::OwnerReference {
        api_version: "apiVersion" => sr,
        kind: "kind" => sr,
        name: "name" => sr,
        uid: "uid" => sr,
        controller: "controller" => bp,
        block_owner_deletion: "blockOwnerDeletion" => bp,
    })
}

fn managed_fields_entry(e: meta::ManagedFieldsEntry) -> R<Value> {
    object!(e, meta::ManagedFieldsEntry {
        manager: "manager" => s,
        operation: "operation" => s,
        api_version: "apiVersion" => s,
        time: "time" => tp,
        fields_type: "fieldsType" => s,
        fields_v1: "fieldsV1" => ptr(fields_v1),
        subresource: "subresource" => s,
    })
}

/// `FieldsV1` holds JSON bytes and prints them as they are.
fn fields_v1(f: meta::FieldsV1) -> R<Value> {
    let raw = f.raw.unwrap_or_default();
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&raw)
        .map_err(|e| ApiError::bad_request(format!("managedFields fieldsV1 is not JSON: {e}")))
}

fn label_selector(l: meta::LabelSelector) -> R<Value> {
    object!(l, meta::LabelSelector {
        match_labels: "matchLabels" => smap,
        match_expressions: "matchExpressions" => list(label_selector_requirement),
    })
}

fn label_selector_requirement(r: meta::LabelSelectorRequirement) -> R<Value> {
    object!(r, meta::LabelSelectorRequirement {
        key: "key" => sr,
        operator: "operator" => sr,
        values: "values" => strs,
    })
}

// ---- core/v1 (k8s.io/api/core/v1/types.go) ----

fn namespace(n: core::Namespace) -> R<Value> {
    object!(n, core::Namespace {
        metadata: "metadata" => val(object_meta),
        spec: "spec" => val(namespace_spec),
        status: "status" => val(namespace_status),
    })
}

fn namespace_spec(n: core::NamespaceSpec) -> R<Value> {
    object!(n, core::NamespaceSpec { finalizers: "finalizers" => strs })
}

fn namespace_status(n: core::NamespaceStatus) -> R<Value> {
    object!(n, core::NamespaceStatus {
        phase: "phase" => s,
        conditions: "conditions" => list(namespace_condition),
    })
}

fn namespace_condition(c: core::NamespaceCondition) -> R<Value> {
    object!(c, core::NamespaceCondition {
        r#type: "type" => sr,
        status: "status" => sr,
        last_transition_time: "lastTransitionTime" => t,
        reason: "reason" => s,
        message: "message" => s,
    })
}

fn config_map(c: core::ConfigMap) -> R<Value> {
    object!(c, core::ConfigMap {
        metadata: "metadata" => val(object_meta),
        immutable: "immutable" => bp,
        data: "data" => smap,
        binary_data: "binaryData" => bmap,
    })
}

fn secret(c: core::Secret) -> R<Value> {
    object!(c, core::Secret {
        metadata: "metadata" => val(object_meta),
        immutable: "immutable" => bp,
        data: "data" => bmap,
        string_data: "stringData" => smap,
        r#type: "type" => s,
    })
}

fn pod(p: core::Pod) -> R<Value> {
    object!(p, core::Pod {
        metadata: "metadata" => val(object_meta),
        spec: "spec" => val(pod_spec),
        status: "status" => val(pod_status),
    })
}

fn pod_spec(p: core::PodSpec) -> R<Value> {
    object!(p, core::PodSpec {
        volumes: "volumes" => list(volume),
        init_containers: "initContainers" => list(container),
        containers: "containers" => list_req(container),
        ephemeral_containers: "ephemeralContainers" => list(ephemeral_container),
        restart_policy: "restartPolicy" => s,
        termination_grace_period_seconds: "terminationGracePeriodSeconds" => ip,
        active_deadline_seconds: "activeDeadlineSeconds" => ip,
        dns_policy: "dnsPolicy" => s,
        node_selector: "nodeSelector" => smap,
        service_account_name: "serviceAccountName" => s,
        service_account: "serviceAccount" => s,
        automount_service_account_token: "automountServiceAccountToken" => bp,
        node_name: "nodeName" => s,
        host_network: "hostNetwork" => b,
        host_pid: "hostPID" => b,
        host_ipc: "hostIPC" => b,
        share_process_namespace: "shareProcessNamespace" => bp,
        security_context: "securityContext" => ptr(pod_security_context),
        image_pull_secrets: "imagePullSecrets" => list(local_object_reference),
        hostname: "hostname" => s,
        subdomain: "subdomain" => s,
        affinity: "affinity" => ptr(affinity),
        scheduler_name: "schedulerName" => s,
        tolerations: "tolerations" => list(toleration),
        host_aliases: "hostAliases" => list(host_alias),
        priority_class_name: "priorityClassName" => s,
        priority: "priority" => ip,
        dns_config: "dnsConfig" => ptr(pod_dns_config),
        readiness_gates: "readinessGates" => list(pod_readiness_gate),
        runtime_class_name: "runtimeClassName" => sp,
        enable_service_links: "enableServiceLinks" => bp,
        preemption_policy: "preemptionPolicy" => sp,
        overhead: "overhead" => qmap,
        topology_spread_constraints: "topologySpreadConstraints" => list(topology_spread_constraint),
        set_hostname_as_fqdn: "setHostnameAsFQDN" => bp,
        os: "os" => ptr(pod_os),
        host_users: "hostUsers" => bp,
        scheduling_gates: "schedulingGates" => list(pod_scheduling_gate),
        resource_claims: "resourceClaims" => list(pod_resource_claim),
        resources: "resources" => ptr(resource_requirements),
        hostname_override: "hostnameOverride" => sp,
        workload_ref: "workloadRef" => ptr(workload_reference),
    })
}

fn container(c: core::Container) -> R<Value> {
    object!(c, core::Container {
        name: "name" => sr,
        image: "image" => s,
        command: "command" => strs,
        args: "args" => strs,
        working_dir: "workingDir" => s,
        ports: "ports" => list(container_port),
        env_from: "envFrom" => list(env_from_source),
        env: "env" => list(env_var),
        resources: "resources" => val(resource_requirements),
        resize_policy: "resizePolicy" => list(container_resize_policy),
        restart_policy: "restartPolicy" => sp,
        restart_policy_rules: "restartPolicyRules" => list(container_restart_rule),
        volume_mounts: "volumeMounts" => list(volume_mount),
        volume_devices: "volumeDevices" => list(volume_device),
        liveness_probe: "livenessProbe" => ptr(probe),
        readiness_probe: "readinessProbe" => ptr(probe),
        startup_probe: "startupProbe" => ptr(probe),
        lifecycle: "lifecycle" => ptr(lifecycle),
        termination_message_path: "terminationMessagePath" => s,
        termination_message_policy: "terminationMessagePolicy" => s,
        image_pull_policy: "imagePullPolicy" => s,
        security_context: "securityContext" => ptr(security_context),
        stdin: "stdin" => b,
        stdin_once: "stdinOnce" => b,
        tty: "tty" => b,
    })
}

fn ephemeral_container(c: core::EphemeralContainer) -> R<Value> {
    object!(c, core::EphemeralContainer {
        ephemeral_container_common: "" => val(ephemeral_container_common),
        target_container_name: "targetContainerName" => s,
    })
}

fn ephemeral_container_common(c: core::EphemeralContainerCommon) -> R<Value> {
    object!(c, core::EphemeralContainerCommon {
        name: "name" => sr,
        image: "image" => s,
        command: "command" => strs,
        args: "args" => strs,
        working_dir: "workingDir" => s,
        ports: "ports" => list(container_port),
        env_from: "envFrom" => list(env_from_source),
        env: "env" => list(env_var),
        resources: "resources" => val(resource_requirements),
        resize_policy: "resizePolicy" => list(container_resize_policy),
        restart_policy: "restartPolicy" => sp,
        restart_policy_rules: "restartPolicyRules" => list(container_restart_rule),
        volume_mounts: "volumeMounts" => list(volume_mount),
        volume_devices: "volumeDevices" => list(volume_device),
        liveness_probe: "livenessProbe" => ptr(probe),
        readiness_probe: "readinessProbe" => ptr(probe),
        startup_probe: "startupProbe" => ptr(probe),
        lifecycle: "lifecycle" => ptr(lifecycle),
        termination_message_path: "terminationMessagePath" => s,
        termination_message_policy: "terminationMessagePolicy" => s,
        image_pull_policy: "imagePullPolicy" => s,
        security_context: "securityContext" => ptr(security_context),
        stdin: "stdin" => b,
        stdin_once: "stdinOnce" => b,
        tty: "tty" => b,
    })
}

fn container_port(p: core::ContainerPort) -> R<Value> {
    object!(p, core::ContainerPort {
        name: "name" => s,
        host_port: "hostPort" => i,
        container_port: "containerPort" => ir,
        protocol: "protocol" => s,
        host_ip: "hostIP" => s,
    })
}

fn env_from_source(e: core::EnvFromSource) -> R<Value> {
    object!(e, core::EnvFromSource {
        prefix: "prefix" => s,
        config_map_ref: "configMapRef" => ptr(config_map_env_source),
        secret_ref: "secretRef" => ptr(secret_env_source),
    })
}

fn config_map_env_source(e: core::ConfigMapEnvSource) -> R<Value> {
    object!(e, core::ConfigMapEnvSource {
        local_object_reference: "" => val(local_object_reference),
        optional: "optional" => bp,
    })
}

fn secret_env_source(e: core::SecretEnvSource) -> R<Value> {
    object!(e, core::SecretEnvSource {
        local_object_reference: "" => val(local_object_reference),
        optional: "optional" => bp,
    })
}

fn env_var(e: core::EnvVar) -> R<Value> {
    object!(e, core::EnvVar {
        name: "name" => sr,
        value: "value" => s,
        value_from: "valueFrom" => ptr(env_var_source),
    })
}

fn env_var_source(e: core::EnvVarSource) -> R<Value> {
    object!(e, core::EnvVarSource {
        field_ref: "fieldRef" => ptr(object_field_selector),
        resource_field_ref: "resourceFieldRef" => ptr(resource_field_selector),
        config_map_key_ref: "configMapKeyRef" => ptr(config_map_key_selector),
        secret_key_ref: "secretKeyRef" => ptr(secret_key_selector),
        file_key_ref: "fileKeyRef" => ptr(file_key_selector),
    })
}

fn object_field_selector(f: core::ObjectFieldSelector) -> R<Value> {
    object!(f, core::ObjectFieldSelector {
        api_version: "apiVersion" => s,
        field_path: "fieldPath" => sr,
    })
}

fn resource_field_selector(f: core::ResourceFieldSelector) -> R<Value> {
    object!(f, core::ResourceFieldSelector {
        container_name: "containerName" => s,
        resource: "resource" => sr,
        divisor: "divisor" => q,
    })
}

fn config_map_key_selector(k: core::ConfigMapKeySelector) -> R<Value> {
    object!(k, core::ConfigMapKeySelector {
        local_object_reference: "" => val(local_object_reference),
        key: "key" => sr,
        optional: "optional" => bp,
    })
}

fn secret_key_selector(k: core::SecretKeySelector) -> R<Value> {
    object!(k, core::SecretKeySelector {
        local_object_reference: "" => val(local_object_reference),
        key: "key" => sr,
        optional: "optional" => bp,
    })
}

fn file_key_selector(k: core::FileKeySelector) -> R<Value> {
    object!(k, core::FileKeySelector {
        volume_name: "volumeName" => sr,
        path: "path" => sr,
        key: "key" => sr,
        optional: "optional" => bp,
    })
}

fn local_object_reference(r: core::LocalObjectReference) -> R<Value> {
    object!(r, core::LocalObjectReference { name: "name" => s })
}

fn resource_requirements(r: core::ResourceRequirements) -> R<Value> {
    object!(r, core::ResourceRequirements {
        limits: "limits" => qmap,
        requests: "requests" => qmap,
        claims: "claims" => list(resource_claim),
    })
}

fn resource_claim(c: core::ResourceClaim) -> R<Value> {
    object!(c, core::ResourceClaim {
        name: "name" => sr,
        request: "request" => s,
    })
}

fn container_resize_policy(p: core::ContainerResizePolicy) -> R<Value> {
    object!(p, core::ContainerResizePolicy {
        resource_name: "resourceName" => sr,
        restart_policy: "restartPolicy" => sr,
    })
}

fn container_restart_rule(r: core::ContainerRestartRule) -> R<Value> {
    object!(r, core::ContainerRestartRule {
        action: "action" => s,
        exit_codes: "exitCodes" => ptr(container_restart_rule_on_exit_codes),
    })
}

fn container_restart_rule_on_exit_codes(r: core::ContainerRestartRuleOnExitCodes) -> R<Value> {
    object!(r, core::ContainerRestartRuleOnExitCodes {
        operator: "operator" => s,
        values: "values" => ints,
    })
}

fn volume_mount(m: core::VolumeMount) -> R<Value> {
    object!(m, core::VolumeMount {
        name: "name" => sr,
        read_only: "readOnly" => b,
        recursive_read_only: "recursiveReadOnly" => sp,
        mount_path: "mountPath" => sr,
        sub_path: "subPath" => s,
        mount_propagation: "mountPropagation" => sp,
        sub_path_expr: "subPathExpr" => s,
    })
}

fn volume_device(d: core::VolumeDevice) -> R<Value> {
    object!(d, core::VolumeDevice {
        name: "name" => sr,
        device_path: "devicePath" => sr,
    })
}

fn probe(p: core::Probe) -> R<Value> {
    object!(p, core::Probe {
        handler: "" => val(probe_handler),
        initial_delay_seconds: "initialDelaySeconds" => i,
        timeout_seconds: "timeoutSeconds" => i,
        period_seconds: "periodSeconds" => i,
        success_threshold: "successThreshold" => i,
        failure_threshold: "failureThreshold" => i,
        termination_grace_period_seconds: "terminationGracePeriodSeconds" => ip,
    })
}

fn probe_handler(h: core::ProbeHandler) -> R<Value> {
    object!(h, core::ProbeHandler {
        exec: "exec" => ptr(exec_action),
        http_get: "httpGet" => ptr(http_get_action),
        tcp_socket: "tcpSocket" => ptr(tcp_socket_action),
        grpc: "grpc" => ptr(grpc_action),
    })
}

fn exec_action(e: core::ExecAction) -> R<Value> {
    object!(e, core::ExecAction { command: "command" => strs })
}

fn http_get_action(h: core::HttpGetAction) -> R<Value> {
    object!(h, core::HttpGetAction {
        path: "path" => s,
        port: "port" => ios,
        host: "host" => s,
        scheme: "scheme" => s,
        http_headers: "httpHeaders" => list(http_header),
    })
}

fn http_header(h: core::HttpHeader) -> R<Value> {
    object!(h, core::HttpHeader {
        name: "name" => sr,
        value: "value" => sr,
    })
}

fn tcp_socket_action(t: core::TcpSocketAction) -> R<Value> {
    object!(t, core::TcpSocketAction {
        port: "port" => ios,
        host: "host" => s,
    })
}

fn grpc_action(g: core::GrpcAction) -> R<Value> {
    object!(g, core::GrpcAction {
        port: "port" => ir,
        service: "service" => spn,
    })
}

fn sleep_action(a: core::SleepAction) -> R<Value> {
    object!(a, core::SleepAction { seconds: "seconds" => ir })
}

fn lifecycle(l: core::Lifecycle) -> R<Value> {
    object!(l, core::Lifecycle {
        post_start: "postStart" => ptr(lifecycle_handler),
        pre_stop: "preStop" => ptr(lifecycle_handler),
        stop_signal: "stopSignal" => sp,
    })
}

fn lifecycle_handler(h: core::LifecycleHandler) -> R<Value> {
    object!(h, core::LifecycleHandler {
        exec: "exec" => ptr(exec_action),
        http_get: "httpGet" => ptr(http_get_action),
        tcp_socket: "tcpSocket" => ptr(tcp_socket_action),
        sleep: "sleep" => ptr(sleep_action),
    })
}

fn security_context(c: core::SecurityContext) -> R<Value> {
    object!(c, core::SecurityContext {
        capabilities: "capabilities" => ptr(capabilities),
        privileged: "privileged" => bp,
        se_linux_options: "seLinuxOptions" => ptr(se_linux_options),
        windows_options: "windowsOptions" => ptr(windows_security_context_options),
        run_as_user: "runAsUser" => ip,
        run_as_group: "runAsGroup" => ip,
        run_as_non_root: "runAsNonRoot" => bp,
        read_only_root_filesystem: "readOnlyRootFilesystem" => bp,
        allow_privilege_escalation: "allowPrivilegeEscalation" => bp,
        proc_mount: "procMount" => sp,
        seccomp_profile: "seccompProfile" => ptr(seccomp_profile),
        app_armor_profile: "appArmorProfile" => ptr(app_armor_profile),
    })
}

fn capabilities(c: core::Capabilities) -> R<Value> {
    object!(c, core::Capabilities {
        add: "add" => strs,
        drop: "drop" => strs,
    })
}

fn se_linux_options(o: core::SeLinuxOptions) -> R<Value> {
    object!(o, core::SeLinuxOptions {
        user: "user" => s,
        role: "role" => s,
        r#type: "type" => s,
        level: "level" => s,
    })
}

fn windows_security_context_options(o: core::WindowsSecurityContextOptions) -> R<Value> {
    object!(o, core::WindowsSecurityContextOptions {
        gmsa_credential_spec_name: "gmsaCredentialSpecName" => sp,
        gmsa_credential_spec: "gmsaCredentialSpec" => sp,
        run_as_user_name: "runAsUserName" => sp,
        host_process: "hostProcess" => bp,
    })
}

fn seccomp_profile(p: core::SeccompProfile) -> R<Value> {
    object!(p, core::SeccompProfile {
        r#type: "type" => sr,
        localhost_profile: "localhostProfile" => sp,
    })
}

fn app_armor_profile(p: core::AppArmorProfile) -> R<Value> {
    object!(p, core::AppArmorProfile {
        r#type: "type" => sr,
        localhost_profile: "localhostProfile" => sp,
    })
}

fn pod_security_context(c: core::PodSecurityContext) -> R<Value> {
    object!(c, core::PodSecurityContext {
        se_linux_options: "seLinuxOptions" => ptr(se_linux_options),
        windows_options: "windowsOptions" => ptr(windows_security_context_options),
        run_as_user: "runAsUser" => ip,
        run_as_group: "runAsGroup" => ip,
        run_as_non_root: "runAsNonRoot" => bp,
        supplemental_groups: "supplementalGroups" => ints,
        supplemental_groups_policy: "supplementalGroupsPolicy" => sp,
        fs_group: "fsGroup" => ip,
        sysctls: "sysctls" => list(sysctl),
        fs_group_change_policy: "fsGroupChangePolicy" => sp,
        seccomp_profile: "seccompProfile" => ptr(seccomp_profile),
        app_armor_profile: "appArmorProfile" => ptr(app_armor_profile),
        se_linux_change_policy: "seLinuxChangePolicy" => sp,
    })
}

fn sysctl(c: core::Sysctl) -> R<Value> {
    object!(c, core::Sysctl {
        name: "name" => sr,
        value: "value" => sr,
    })
}

fn affinity(a: core::Affinity) -> R<Value> {
    object!(a, core::Affinity {
        node_affinity: "nodeAffinity" => ptr(node_affinity),
        pod_affinity: "podAffinity" => ptr(pod_affinity),
        pod_anti_affinity: "podAntiAffinity" => ptr(pod_anti_affinity),
    })
}

fn node_affinity(a: core::NodeAffinity) -> R<Value> {
    object!(a, core::NodeAffinity {
        required_during_scheduling_ignored_during_execution:
            "requiredDuringSchedulingIgnoredDuringExecution" => ptr(node_selector),
        preferred_during_scheduling_ignored_during_execution:
            "preferredDuringSchedulingIgnoredDuringExecution" => list(preferred_scheduling_term),
    })
}

fn node_selector(n: core::NodeSelector) -> R<Value> {
    object!(n, core::NodeSelector {
        node_selector_terms: "nodeSelectorTerms" => list_req(node_selector_term),
    })
}

fn node_selector_term(n: core::NodeSelectorTerm) -> R<Value> {
    object!(n, core::NodeSelectorTerm {
        match_expressions: "matchExpressions" => list(node_selector_requirement),
        match_fields: "matchFields" => list(node_selector_requirement),
    })
}

fn node_selector_requirement(r: core::NodeSelectorRequirement) -> R<Value> {
    object!(r, core::NodeSelectorRequirement {
        key: "key" => sr,
        operator: "operator" => sr,
        values: "values" => strs,
    })
}

fn preferred_scheduling_term(p: core::PreferredSchedulingTerm) -> R<Value> {
    object!(p, core::PreferredSchedulingTerm {
        weight: "weight" => ir,
        preference: "preference" => val(node_selector_term),
    })
}

fn pod_affinity(a: core::PodAffinity) -> R<Value> {
    object!(a, core::PodAffinity {
        required_during_scheduling_ignored_during_execution:
            "requiredDuringSchedulingIgnoredDuringExecution" => list(pod_affinity_term),
        preferred_during_scheduling_ignored_during_execution:
            "preferredDuringSchedulingIgnoredDuringExecution" => list(weighted_pod_affinity_term),
    })
}

fn pod_anti_affinity(a: core::PodAntiAffinity) -> R<Value> {
    object!(a, core::PodAntiAffinity {
        required_during_scheduling_ignored_during_execution:
            "requiredDuringSchedulingIgnoredDuringExecution" => list(pod_affinity_term),
        preferred_during_scheduling_ignored_during_execution:
            "preferredDuringSchedulingIgnoredDuringExecution" => list(weighted_pod_affinity_term),
    })
}

fn weighted_pod_affinity_term(w: core::WeightedPodAffinityTerm) -> R<Value> {
    object!(w, core::WeightedPodAffinityTerm {
        weight: "weight" => ir,
        pod_affinity_term: "podAffinityTerm" => val(pod_affinity_term),
    })
}

fn pod_affinity_term(p: core::PodAffinityTerm) -> R<Value> {
    object!(p, core::PodAffinityTerm {
        label_selector: "labelSelector" => ptr(label_selector),
        namespaces: "namespaces" => strs,
        topology_key: "topologyKey" => sr,
        namespace_selector: "namespaceSelector" => ptr(label_selector),
        match_label_keys: "matchLabelKeys" => strs,
        mismatch_label_keys: "mismatchLabelKeys" => strs,
    })
}

fn toleration(t: core::Toleration) -> R<Value> {
    object!(t, core::Toleration {
        key: "key" => s,
        operator: "operator" => s,
        value: "value" => s,
        effect: "effect" => s,
        toleration_seconds: "tolerationSeconds" => ip,
    })
}

fn host_alias(h: core::HostAlias) -> R<Value> {
    object!(h, core::HostAlias {
        ip: "ip" => sr,
        hostnames: "hostnames" => strs,
    })
}

fn pod_dns_config(c: core::PodDnsConfig) -> R<Value> {
    object!(c, core::PodDnsConfig {
        nameservers: "nameservers" => strs,
        searches: "searches" => strs,
        options: "options" => list(pod_dns_config_option),
    })
}

fn pod_dns_config_option(o: core::PodDnsConfigOption) -> R<Value> {
    object!(o, core::PodDnsConfigOption {
        name: "name" => s,
        value: "value" => sp,
    })
}

fn pod_readiness_gate(g: core::PodReadinessGate) -> R<Value> {
    object!(g, core::PodReadinessGate { condition_type: "conditionType" => sr })
}

fn topology_spread_constraint(c: core::TopologySpreadConstraint) -> R<Value> {
    object!(c, core::TopologySpreadConstraint {
        max_skew: "maxSkew" => ir,
        topology_key: "topologyKey" => sr,
        when_unsatisfiable: "whenUnsatisfiable" => sr,
        label_selector: "labelSelector" => ptr(label_selector),
        min_domains: "minDomains" => ip,
        node_affinity_policy: "nodeAffinityPolicy" => sp,
        node_taints_policy: "nodeTaintsPolicy" => sp,
        match_label_keys: "matchLabelKeys" => strs,
    })
}

fn pod_os(o: core::PodOs) -> R<Value> {
    object!(o, core::PodOs { name: "name" => sr })
}

fn pod_scheduling_gate(g: core::PodSchedulingGate) -> R<Value> {
    object!(g, core::PodSchedulingGate { name: "name" => sr })
}

fn pod_resource_claim(c: core::PodResourceClaim) -> R<Value> {
    object!(c, core::PodResourceClaim {
        name: "name" => sr,
        resource_claim_name: "resourceClaimName" => sp,
        resource_claim_template_name: "resourceClaimTemplateName" => sp,
    })
}

fn workload_reference(w: core::WorkloadReference) -> R<Value> {
    object!(w, core::WorkloadReference {
        name: "name" => sr,
        pod_group: "podGroup" => sr,
        pod_group_replica_key: "podGroupReplicaKey" => s,
    })
}

fn volume(v: core::Volume) -> R<Value> {
    object!(v, core::Volume {
        name: "name" => sr,
        volume_source: "" => val(volume_source),
    })
}

fn volume_source(v: core::VolumeSource) -> R<Value> {
    object!(v, core::VolumeSource {
        host_path: "hostPath" => ptr(host_path_volume_source),
        empty_dir: "emptyDir" => ptr(empty_dir_volume_source),
        gce_persistent_disk: "gcePersistentDisk" => refuse("gcePersistentDisk"),
        aws_elastic_block_store: "awsElasticBlockStore" => refuse("awsElasticBlockStore"),
        git_repo: "gitRepo" => ptr(git_repo_volume_source),
        secret: "secret" => ptr(secret_volume_source),
        nfs: "nfs" => ptr(nfs_volume_source),
        iscsi: "iscsi" => refuse("iscsi"),
        glusterfs: "glusterfs" => refuse("glusterfs"),
        persistent_volume_claim: "persistentVolumeClaim" => ptr(persistent_volume_claim_volume_source),
        rbd: "rbd" => refuse("rbd"),
        flex_volume: "flexVolume" => refuse("flexVolume"),
        cinder: "cinder" => refuse("cinder"),
        cephfs: "cephfs" => refuse("cephfs"),
        flocker: "flocker" => refuse("flocker"),
        downward_api: "downwardAPI" => ptr(downward_api_volume_source),
        fc: "fc" => refuse("fc"),
        azure_file: "azureFile" => refuse("azureFile"),
        config_map: "configMap" => ptr(config_map_volume_source),
        vsphere_volume: "vsphereVolume" => refuse("vsphereVolume"),
        quobyte: "quobyte" => refuse("quobyte"),
        azure_disk: "azureDisk" => refuse("azureDisk"),
        photon_persistent_disk: "photonPersistentDisk" => refuse("photonPersistentDisk"),
        projected: "projected" => ptr(projected_volume_source),
        portworx_volume: "portworxVolume" => refuse("portworxVolume"),
        scale_io: "scaleIO" => refuse("scaleIO"),
        storageos: "storageos" => refuse("storageos"),
        csi: "csi" => ptr(csi_volume_source),
        ephemeral: "ephemeral" => ptr(ephemeral_volume_source),
        image: "image" => ptr(image_volume_source),
    })
}

fn host_path_volume_source(h: core::HostPathVolumeSource) -> R<Value> {
    object!(h, core::HostPathVolumeSource {
        path: "path" => sr,
        r#type: "type" => sp,
    })
}

fn empty_dir_volume_source(e: core::EmptyDirVolumeSource) -> R<Value> {
    object!(e, core::EmptyDirVolumeSource {
        medium: "medium" => s,
        size_limit: "sizeLimit" => qp,
    })
}

fn git_repo_volume_source(g: core::GitRepoVolumeSource) -> R<Value> {
    object!(g, core::GitRepoVolumeSource {
        repository: "repository" => sr,
        revision: "revision" => s,
        directory: "directory" => s,
    })
}

fn secret_volume_source(v: core::SecretVolumeSource) -> R<Value> {
    object!(v, core::SecretVolumeSource {
        secret_name: "secretName" => s,
        items: "items" => list(key_to_path),
        default_mode: "defaultMode" => ip,
        optional: "optional" => bp,
    })
}

fn config_map_volume_source(v: core::ConfigMapVolumeSource) -> R<Value> {
    object!(v, core::ConfigMapVolumeSource {
        local_object_reference: "" => val(local_object_reference),
        items: "items" => list(key_to_path),
        default_mode: "defaultMode" => ip,
        optional: "optional" => bp,
    })
}

fn key_to_path(k: core::KeyToPath) -> R<Value> {
    object!(k, core::KeyToPath {
        key: "key" => sr,
        path: "path" => sr,
        mode: "mode" => ip,
    })
}

fn nfs_volume_source(n: core::NfsVolumeSource) -> R<Value> {
    object!(n, core::NfsVolumeSource {
        server: "server" => sr,
        path: "path" => sr,
        read_only: "readOnly" => b,
    })
}

fn persistent_volume_claim_volume_source(p: core::PersistentVolumeClaimVolumeSource) -> R<Value> {
    object!(p, core::PersistentVolumeClaimVolumeSource {
        claim_name: "claimName" => sr,
        read_only: "readOnly" => b,
    })
}

fn downward_api_volume_source(d: core::DownwardAPIVolumeSource) -> R<Value> {
    object!(d, core::DownwardAPIVolumeSource {
        items: "items" => list(downward_api_volume_file),
        default_mode: "defaultMode" => ip,
    })
}

fn downward_api_volume_file(f: core::DownwardAPIVolumeFile) -> R<Value> {
    object!(f, core::DownwardAPIVolumeFile {
        path: "path" => sr,
        field_ref: "fieldRef" => ptr(object_field_selector),
        resource_field_ref: "resourceFieldRef" => ptr(resource_field_selector),
        mode: "mode" => ip,
    })
}

fn projected_volume_source(p: core::ProjectedVolumeSource) -> R<Value> {
    object!(p, core::ProjectedVolumeSource {
        sources: "sources" => list_req(volume_projection),
        default_mode: "defaultMode" => ip,
    })
}

fn volume_projection(p: core::VolumeProjection) -> R<Value> {
    object!(p, core::VolumeProjection {
        secret: "secret" => ptr(secret_projection),
        downward_api: "downwardAPI" => ptr(downward_api_projection),
        config_map: "configMap" => ptr(config_map_projection),
        service_account_token: "serviceAccountToken" => ptr(service_account_token_projection),
        cluster_trust_bundle: "clusterTrustBundle" => ptr(cluster_trust_bundle_projection),
        pod_certificate: "podCertificate" => ptr(pod_certificate_projection),
    })
}

fn secret_projection(p: core::SecretProjection) -> R<Value> {
    object!(p, core::SecretProjection {
        local_object_reference: "" => val(local_object_reference),
        items: "items" => list(key_to_path),
        optional: "optional" => bp,
    })
}

fn config_map_projection(p: core::ConfigMapProjection) -> R<Value> {
    object!(p, core::ConfigMapProjection {
        local_object_reference: "" => val(local_object_reference),
        items: "items" => list(key_to_path),
        optional: "optional" => bp,
    })
}

fn downward_api_projection(p: core::DownwardAPIProjection) -> R<Value> {
    object!(p, core::DownwardAPIProjection {
        items: "items" => list(downward_api_volume_file),
    })
}

fn service_account_token_projection(p: core::ServiceAccountTokenProjection) -> R<Value> {
    object!(p, core::ServiceAccountTokenProjection {
        audience: "audience" => s,
        expiration_seconds: "expirationSeconds" => ip,
        path: "path" => sr,
    })
}

fn cluster_trust_bundle_projection(p: core::ClusterTrustBundleProjection) -> R<Value> {
    object!(p, core::ClusterTrustBundleProjection {
        name: "name" => sp,
        signer_name: "signerName" => sp,
        label_selector: "labelSelector" => ptr(label_selector),
        optional: "optional" => bp,
        path: "path" => sr,
    })
}

fn pod_certificate_projection(p: core::PodCertificateProjection) -> R<Value> {
    object!(p, core::PodCertificateProjection {
        signer_name: "signerName" => s,
        key_type: "keyType" => s,
        max_expiration_seconds: "maxExpirationSeconds" => ip,
        credential_bundle_path: "credentialBundlePath" => s,
        key_path: "keyPath" => s,
        certificate_chain_path: "certificateChainPath" => s,
        user_annotations: "userAnnotations" => smap,
    })
}

fn csi_volume_source(c: core::CSIVolumeSource) -> R<Value> {
    object!(c, core::CSIVolumeSource {
        driver: "driver" => sr,
        read_only: "readOnly" => bp,
        fs_type: "fsType" => sp,
        volume_attributes: "volumeAttributes" => smap,
        node_publish_secret_ref: "nodePublishSecretRef" => ptr(local_object_reference),
    })
}

fn ephemeral_volume_source(e: core::EphemeralVolumeSource) -> R<Value> {
    object!(e, core::EphemeralVolumeSource {
        volume_claim_template: "volumeClaimTemplate" => ptr(persistent_volume_claim_template),
    })
}

fn persistent_volume_claim_template(t: core::PersistentVolumeClaimTemplate) -> R<Value> {
    object!(t, core::PersistentVolumeClaimTemplate {
        metadata: "metadata" => val(object_meta),
        spec: "spec" => val(persistent_volume_claim_spec),
    })
}

fn persistent_volume_claim_spec(s_: core::PersistentVolumeClaimSpec) -> R<Value> {
    object!(s_, core::PersistentVolumeClaimSpec {
        access_modes: "accessModes" => strs,
        selector: "selector" => ptr(label_selector),
        resources: "resources" => val(volume_resource_requirements),
        volume_name: "volumeName" => s,
        storage_class_name: "storageClassName" => sp,
        volume_mode: "volumeMode" => sp,
        data_source: "dataSource" => ptr(typed_local_object_reference),
        data_source_ref: "dataSourceRef" => ptr(typed_object_reference),
        volume_attributes_class_name: "volumeAttributesClassName" => sp,
    })
}

fn volume_resource_requirements(r: core::VolumeResourceRequirements) -> R<Value> {
    object!(r, core::VolumeResourceRequirements {
        limits: "limits" => qmap,
        requests: "requests" => qmap,
    })
}

fn typed_local_object_reference(r: core::TypedLocalObjectReference) -> R<Value> {
    object!(r, core::TypedLocalObjectReference {
        api_group: "apiGroup" => sp,
        kind: "kind" => sr,
        name: "name" => sr,
    })
}

fn typed_object_reference(r: core::TypedObjectReference) -> R<Value> {
    object!(r, core::TypedObjectReference {
        api_group: "apiGroup" => sp,
        kind: "kind" => sr,
        name: "name" => sr,
        namespace: "namespace" => sp,
    })
}

fn image_volume_source(i_: core::ImageVolumeSource) -> R<Value> {
    object!(i_, core::ImageVolumeSource {
        reference: "reference" => s,
        pull_policy: "pullPolicy" => s,
    })
}

fn pod_status(p: core::PodStatus) -> R<Value> {
    object!(p, core::PodStatus {
        observed_generation: "observedGeneration" => i,
        phase: "phase" => s,
        conditions: "conditions" => list(pod_condition),
        message: "message" => s,
        reason: "reason" => s,
        nominated_node_name: "nominatedNodeName" => s,
        host_ip: "hostIP" => s,
        host_ips: "hostIPs" => list(host_ip),
        pod_ip: "podIP" => s,
        pod_ips: "podIPs" => list(pod_ip),
        start_time: "startTime" => tp,
        init_container_statuses: "initContainerStatuses" => list(container_status),
        container_statuses: "containerStatuses" => list(container_status),
        qos_class: "qosClass" => s,
        ephemeral_container_statuses: "ephemeralContainerStatuses" => list(container_status),
        resize: "resize" => s,
        resource_claim_statuses: "resourceClaimStatuses" => list(pod_resource_claim_status),
        extended_resource_claim_status: "extendedResourceClaimStatus" => ptr(pod_extended_resource_claim_status),
        allocated_resources: "allocatedResources" => qmap,
        resources: "resources" => ptr(resource_requirements),
    })
}

fn pod_condition(c: core::PodCondition) -> R<Value> {
    object!(c, core::PodCondition {
        r#type: "type" => sr,
        observed_generation: "observedGeneration" => i,
        status: "status" => sr,
        last_probe_time: "lastProbeTime" => t,
        last_transition_time: "lastTransitionTime" => t,
        reason: "reason" => s,
        message: "message" => s,
    })
}

fn host_ip(h: core::HostIp) -> R<Value> {
    object!(h, core::HostIp { ip: "ip" => sr })
}

fn pod_ip(p: core::PodIp) -> R<Value> {
    object!(p, core::PodIp { ip: "ip" => sr })
}

fn container_status(c: core::ContainerStatus) -> R<Value> {
    object!(c, core::ContainerStatus {
        name: "name" => sr,
        state: "state" => val(container_state),
        last_state: "lastState" => val(container_state),
        ready: "ready" => br,
        restart_count: "restartCount" => ir,
        image: "image" => sr,
        image_id: "imageID" => sr,
        container_id: "containerID" => s,
        started: "started" => bp,
        allocated_resources: "allocatedResources" => qmap,
        resources: "resources" => ptr(resource_requirements),
        volume_mounts: "volumeMounts" => list(volume_mount_status),
        user: "user" => ptr(container_user),
        allocated_resources_status: "allocatedResourcesStatus" => list(resource_status),
        stop_signal: "stopSignal" => sp,
    })
}

fn container_state(c: core::ContainerState) -> R<Value> {
    object!(c, core::ContainerState {
        waiting: "waiting" => ptr(container_state_waiting),
        running: "running" => ptr(container_state_running),
        terminated: "terminated" => ptr(container_state_terminated),
    })
}

fn container_state_waiting(w: core::ContainerStateWaiting) -> R<Value> {
    object!(w, core::ContainerStateWaiting {
        reason: "reason" => s,
        message: "message" => s,
    })
}

fn container_state_running(r: core::ContainerStateRunning) -> R<Value> {
    object!(r, core::ContainerStateRunning { started_at: "startedAt" => t })
}

fn container_state_terminated(x: core::ContainerStateTerminated) -> R<Value> {
    object!(x, core::ContainerStateTerminated {
        exit_code: "exitCode" => ir,
        signal: "signal" => i,
        reason: "reason" => s,
        message: "message" => s,
        started_at: "startedAt" => t,
        finished_at: "finishedAt" => t,
        container_id: "containerID" => s,
    })
}

fn volume_mount_status(m: core::VolumeMountStatus) -> R<Value> {
    object!(m, core::VolumeMountStatus {
        name: "name" => sr,
        mount_path: "mountPath" => sr,
        read_only: "readOnly" => b,
        recursive_read_only: "recursiveReadOnly" => sp,
    })
}

fn container_user(u: core::ContainerUser) -> R<Value> {
    object!(u, core::ContainerUser { linux: "linux" => ptr(linux_container_user) })
}

fn linux_container_user(u: core::LinuxContainerUser) -> R<Value> {
    object!(u, core::LinuxContainerUser {
        uid: "uid" => ir,
        gid: "gid" => ir,
        supplemental_groups: "supplementalGroups" => ints,
    })
}

fn resource_status(r: core::ResourceStatus) -> R<Value> {
    object!(r, core::ResourceStatus {
        name: "name" => sr,
        resources: "resources" => list(resource_health),
    })
}

fn resource_health(h: core::ResourceHealth) -> R<Value> {
    object!(h, core::ResourceHealth {
        resource_id: "resourceID" => sr,
        health: "health" => s,
    })
}

fn pod_resource_claim_status(c: core::PodResourceClaimStatus) -> R<Value> {
    object!(c, core::PodResourceClaimStatus {
        name: "name" => sr,
        resource_claim_name: "resourceClaimName" => sp,
    })
}

fn pod_extended_resource_claim_status(c: core::PodExtendedResourceClaimStatus) -> R<Value> {
    object!(c, core::PodExtendedResourceClaimStatus {
        request_mappings: "requestMappings" => list_req(container_extended_resource_request),
        resource_claim_name: "resourceClaimName" => sr,
    })
}

fn container_extended_resource_request(r: core::ContainerExtendedResourceRequest) -> R<Value> {
    object!(r, core::ContainerExtendedResourceRequest {
        container_name: "containerName" => sr,
        resource_name: "resourceName" => sr,
        request_name: "requestName" => sr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_pb::apimachinery::pkg::runtime::TypeMeta;
    use serde_json::json;

    /// The envelope as `protobuf.Serializer.Encode` writes it (empty strings included, as
    /// gogo-protobuf always encodes non-pointer fields).
    fn envelope(api_version: &str, kind: &str, object: &impl Message) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
            }),
            raw: Some(object.encode_to_vec()),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut out = MAGIC.to_vec();
        unknown.encode(&mut out).unwrap();
        out
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn qty(s: &str) -> Quantity {
        Quantity { string: some(s) }
    }

    /// ObjectMeta as a Go client encodes a new object's: every non-pointer field present.
    fn go_meta(name: &str, labels: &[(&str, &str)]) -> meta::ObjectMeta {
        meta::ObjectMeta {
            name: some(name),
            generate_name: some(""),
            namespace: some(""),
            self_link: some(""),
            uid: some(""),
            resource_version: some(""),
            generation: Some(0),
            creation_timestamp: Some(meta::Time::default()),
            labels: map(labels),
            ..Default::default()
        }
    }

    /// A container as `kubectl run NAME --image=IMG` builds it, Go defaults encoded.
    fn go_container(name: &str, image: &str) -> core::Container {
        core::Container {
            name: some(name),
            image: some(image),
            working_dir: some(""),
            resources: Some(core::ResourceRequirements::default()),
            termination_message_path: some(""),
            termination_message_policy: some(""),
            image_pull_policy: some(""),
            stdin: Some(false),
            stdin_once: Some(false),
            tty: Some(false),
            ..Default::default()
        }
    }

    /// The PodSpec `kubectl run` builds, Go defaults encoded.
    fn go_pod_spec(containers: Vec<core::Container>) -> core::PodSpec {
        core::PodSpec {
            containers,
            restart_policy: some("Always"),
            dns_policy: some("ClusterFirst"),
            service_account_name: some(""),
            service_account: some(""),
            node_name: some(""),
            host_network: Some(false),
            host_pid: Some(false),
            host_ipc: Some(false),
            hostname: some(""),
            subdomain: some(""),
            scheduler_name: some(""),
            priority_class_name: some(""),
            ..Default::default()
        }
    }

    fn go_pod_status() -> core::PodStatus {
        core::PodStatus {
            observed_generation: Some(0),
            phase: some(""),
            message: some(""),
            reason: some(""),
            nominated_node_name: some(""),
            host_ip: some(""),
            pod_ip: some(""),
            qos_class: some(""),
            resize: some(""),
            ..Default::default()
        }
    }

    #[test]
    fn namespace_as_kubectl_create_namespace() {
        let ns = core::Namespace {
            metadata: Some(go_meta("demo", &[])),
            spec: Some(core::NamespaceSpec::default()),
            status: Some(core::NamespaceStatus {
                phase: some(""),
                conditions: vec![],
            }),
        };
        let got = decode(&envelope("v1", "Namespace", &ns), "v1", "Namespace").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Namespace", "apiVersion": "v1",
                "metadata": {"name": "demo", "creationTimestamp": null},
                "spec": {}, "status": {}
            })
        );
    }

    #[test]
    fn namespace_with_finalizers_phase_and_conditions() {
        let ns = core::Namespace {
            metadata: Some(meta::ObjectMeta {
                name: some("x"),
                uid: some("0b1c"),
                resource_version: some("42"),
                creation_timestamp: Some(meta::Time {
                    seconds: Some(1_700_000_000),
                    nanos: Some(123),
                }),
                deletion_timestamp: Some(meta::Time {
                    seconds: Some(1_700_000_060),
                    nanos: None,
                }),
                deletion_grace_period_seconds: Some(0),
                finalizers: vec!["example.com/f".into()],
                ..Default::default()
            }),
            spec: Some(core::NamespaceSpec {
                finalizers: vec!["kubernetes".into()],
            }),
            status: Some(core::NamespaceStatus {
                phase: some("Terminating"),
                conditions: vec![core::NamespaceCondition {
                    r#type: some("NamespaceDeletionContentFailure"),
                    status: some("False"),
                    last_transition_time: Some(meta::Time::default()),
                    reason: some(""),
                    message: some("ok"),
                }],
            }),
        };
        let got = decode(&envelope("v1", "Namespace", &ns), "v1", "Namespace").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Namespace", "apiVersion": "v1",
                "metadata": {
                    "name": "x", "uid": "0b1c", "resourceVersion": "42",
                    "creationTimestamp": "2023-11-14T22:13:20Z",
                    "deletionTimestamp": "2023-11-14T22:14:20Z",
                    "deletionGracePeriodSeconds": 0,
                    "finalizers": ["example.com/f"]
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {
                    "phase": "Terminating",
                    "conditions": [{
                        "type": "NamespaceDeletionContentFailure", "status": "False",
                        "lastTransitionTime": null, "message": "ok"
                    }]
                }
            })
        );
    }

    #[test]
    fn config_map_with_data_and_binary_data() {
        let cm = core::ConfigMap {
            metadata: Some(meta::ObjectMeta {
                namespace: some("demo"),
                annotations: map(&[("note", "x")]),
                owner_references: vec![meta::OwnerReference {
                    api_version: some("v1"),
                    kind: some("Namespace"),
                    name: some("demo"),
                    uid: some("u-1"),
                    controller: Some(false),
                    block_owner_deletion: None,
                }],
                managed_fields: vec![meta::ManagedFieldsEntry {
                    manager: some("kubectl-create"),
                    operation: some("Update"),
                    api_version: some("v1"),
                    time: Some(meta::Time {
                        seconds: Some(0),
                        nanos: Some(0),
                    }),
                    fields_type: some("FieldsV1"),
                    fields_v1: Some(meta::FieldsV1 {
                        raw: Some(br#"{"f:data":{".":{},"f:a":{}}}"#.to_vec()),
                    }),
                    subresource: some(""),
                }],
                ..go_meta("c1", &[("app", "web")])
            }),
            immutable: Some(true),
            data: map(&[("a", "b"), ("empty", "")]),
            binary_data: [
                ("bin".to_string(), vec![0u8, 1, 2, 0xfe, 0xff]),
                ("one".to_string(), vec![b'M']),
                ("none".to_string(), vec![]),
            ]
            .into_iter()
            .collect(),
        };
        let got = decode(&envelope("v1", "ConfigMap", &cm), "v1", "ConfigMap").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {
                    "name": "c1", "namespace": "demo", "creationTimestamp": null,
                    "labels": {"app": "web"}, "annotations": {"note": "x"},
                    "ownerReferences": [{
                        "apiVersion": "v1", "kind": "Namespace", "name": "demo", "uid": "u-1",
                        "controller": false
                    }],
                    "managedFields": [{
                        "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                        "time": "1970-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {".": {}, "f:a": {}}}
                    }]
                },
                "immutable": true,
                "data": {"a": "b", "empty": ""},
                "binaryData": {"bin": "AAEC/v8=", "one": "TQ==", "none": ""}
            })
        );
    }

    #[test]
    fn secret_generic() {
        let secret = core::Secret {
            metadata: Some(go_meta("s1", &[])),
            immutable: None,
            data: [("password".to_string(), b"s3cr3t!".to_vec())]
                .into_iter()
                .collect(),
            string_data: map(&[("user", "admin")]),
            r#type: some("Opaque"),
        };
        let got = decode(&envelope("v1", "Secret", &secret), "v1", "Secret").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Secret", "apiVersion": "v1",
                "metadata": {"name": "s1", "creationTimestamp": null},
                "data": {"password": "czNjcjN0IQ=="},
                "stringData": {"user": "admin"},
                "type": "Opaque"
            })
        );
    }

    #[test]
    fn pod_as_kubectl_run() {
        let pod = core::Pod {
            metadata: Some(go_meta("p1", &[("run", "p1")])),
            spec: Some(go_pod_spec(vec![go_container("p1", "nginx")])),
            status: Some(go_pod_status()),
        };
        let got = decode(&envelope("v1", "Pod", &pod), "v1", "Pod").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": "p1", "creationTimestamp": null, "labels": {"run": "p1"}},
                "spec": {
                    "containers": [{"name": "p1", "image": "nginx", "resources": {}}],
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst"
                },
                "status": {}
            })
        );
    }

    #[test]
    fn pod_as_kubectl_run_with_flags() {
        // kubectl run p2 --image=busybox --port=8080 --env=A=1 --labels=app=x
        //   --restart=Never --command -- sh -c 'sleep 1', plus an --overrides-style spec.
        let container = core::Container {
            command: vec!["sh".into(), "-c".into(), "sleep 1".into()],
            ports: vec![core::ContainerPort {
                name: some(""),
                host_port: Some(0),
                container_port: Some(8080),
                protocol: some(""),
                host_ip: some(""),
            }],
            env: vec![
                core::EnvVar {
                    name: some("A"),
                    value: some("1"),
                    value_from: None,
                },
                core::EnvVar {
                    name: some("CPU"),
                    value: some(""),
                    value_from: Some(core::EnvVarSource {
                        resource_field_ref: Some(core::ResourceFieldSelector {
                            container_name: some(""),
                            resource: some("limits.cpu"),
                            divisor: Some(qty("0")),
                        }),
                        ..Default::default()
                    }),
                },
                core::EnvVar {
                    name: some("KEY"),
                    value: some(""),
                    value_from: Some(core::EnvVarSource {
                        config_map_key_ref: Some(core::ConfigMapKeySelector {
                            local_object_reference: Some(core::LocalObjectReference {
                                name: some("c1"),
                            }),
                            key: some("a"),
                            optional: Some(false),
                        }),
                        ..Default::default()
                    }),
                },
            ],
            resources: Some(core::ResourceRequirements {
                limits: [
                    ("cpu".to_string(), qty("500m")),
                    ("memory".to_string(), qty("128Mi")),
                ]
                .into_iter()
                .collect(),
                requests: [("cpu".to_string(), qty("100m"))].into_iter().collect(),
                claims: vec![],
            }),
            liveness_probe: Some(core::Probe {
                handler: Some(core::ProbeHandler {
                    http_get: Some(core::HttpGetAction {
                        path: some("/healthz"),
                        port: Some(IntOrString {
                            r#type: Some(1),
                            int_val: Some(0),
                            str_val: some("http"),
                        }),
                        host: some(""),
                        scheme: some("HTTP"),
                        http_headers: vec![],
                    }),
                    ..Default::default()
                }),
                initial_delay_seconds: Some(0),
                timeout_seconds: Some(1),
                period_seconds: Some(10),
                success_threshold: Some(1),
                failure_threshold: Some(3),
                termination_grace_period_seconds: None,
            }),
            readiness_probe: Some(core::Probe {
                handler: Some(core::ProbeHandler {
                    tcp_socket: Some(core::TcpSocketAction {
                        port: Some(IntOrString {
                            r#type: Some(0),
                            int_val: Some(8080),
                            str_val: some(""),
                        }),
                        host: some(""),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            volume_mounts: vec![core::VolumeMount {
                name: some("cfg"),
                read_only: Some(true),
                mount_path: some("/etc/cfg"),
                sub_path: some(""),
                sub_path_expr: some(""),
                ..Default::default()
            }],
            security_context: Some(core::SecurityContext {
                run_as_user: Some(0),
                allow_privilege_escalation: Some(false),
                capabilities: Some(core::Capabilities {
                    add: vec![],
                    drop: vec!["ALL".into()],
                }),
                ..Default::default()
            }),
            ..go_container("p2", "busybox")
        };
        let mut spec = go_pod_spec(vec![container]);
        spec.restart_policy = some("Never");
        spec.termination_grace_period_seconds = Some(0);
        spec.enable_service_links = Some(false);
        spec.node_selector = map(&[("disk", "ssd")]);
        spec.tolerations = vec![core::Toleration {
            key: some("k"),
            operator: some("Exists"),
            value: some(""),
            effect: some("NoSchedule"),
            toleration_seconds: None,
        }];
        spec.volumes = vec![core::Volume {
            name: some("cfg"),
            volume_source: Some(core::VolumeSource {
                config_map: Some(core::ConfigMapVolumeSource {
                    local_object_reference: Some(core::LocalObjectReference { name: some("c1") }),
                    items: vec![core::KeyToPath {
                        key: some("a"),
                        path: some("a.txt"),
                        mode: None,
                    }],
                    default_mode: Some(0o644),
                    optional: None,
                }),
                ..Default::default()
            }),
        }];
        spec.affinity = Some(core::Affinity {
            node_affinity: Some(core::NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(core::NodeSelector {
                    node_selector_terms: vec![core::NodeSelectorTerm {
                        match_expressions: vec![core::NodeSelectorRequirement {
                            key: some("zone"),
                            operator: some("In"),
                            values: vec!["a".into()],
                        }],
                        match_fields: vec![],
                    }],
                }),
                preferred_during_scheduling_ignored_during_execution: vec![],
            }),
            ..Default::default()
        });
        let pod = core::Pod {
            metadata: Some(go_meta("p2", &[("app", "x")])),
            spec: Some(spec),
            status: Some(go_pod_status()),
        };
        let got = decode(&envelope("v1", "Pod", &pod), "v1", "Pod").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": "p2", "creationTimestamp": null, "labels": {"app": "x"}},
                "spec": {
                    "volumes": [{
                        "name": "cfg",
                        "configMap": {"name": "c1", "items": [{"key": "a", "path": "a.txt"}], "defaultMode": 420}
                    }],
                    "containers": [{
                        "name": "p2", "image": "busybox",
                        "command": ["sh", "-c", "sleep 1"],
                        "ports": [{"containerPort": 8080}],
                        "env": [
                            {"name": "A", "value": "1"},
                            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}},
                            {"name": "KEY", "valueFrom": {"configMapKeyRef": {"name": "c1", "key": "a", "optional": false}}}
                        ],
                        "resources": {
                            "limits": {"cpu": "500m", "memory": "128Mi"},
                            "requests": {"cpu": "100m"}
                        },
                        "volumeMounts": [{"name": "cfg", "readOnly": true, "mountPath": "/etc/cfg"}],
                        "livenessProbe": {
                            "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                            "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                            "failureThreshold": 3
                        },
                        "readinessProbe": {"tcpSocket": {"port": 8080}},
                        "securityContext": {
                            "capabilities": {"drop": ["ALL"]},
                            "runAsUser": 0,
                            "allowPrivilegeEscalation": false
                        }
                    }],
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "dnsPolicy": "ClusterFirst",
                    "nodeSelector": {"disk": "ssd"},
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                    }}},
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                    "enableServiceLinks": false
                },
                "status": {}
            })
        );
    }

    #[test]
    fn minimal_encoding_gives_the_same_json() {
        // A client that leaves every empty field out (as prost does) decodes alike.
        let pod = core::Pod {
            metadata: Some(meta::ObjectMeta {
                name: some("p1"),
                ..Default::default()
            }),
            spec: Some(core::PodSpec {
                containers: vec![core::Container {
                    name: some("p1"),
                    image: some("nginx"),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        };
        let got = decode(&envelope("v1", "Pod", &pod), "v1", "Pod").unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": "p1", "creationTimestamp": null},
                "spec": {"containers": [{"name": "p1", "image": "nginx", "resources": {}}]},
                "status": {}
            })
        );
    }

    #[test]
    fn envelope_kind_defaults_from_the_resource() {
        let cm = core::ConfigMap {
            metadata: Some(go_meta("c", &[])),
            ..Default::default()
        };
        let got = decode(&envelope("", "", &cm), "v1", "ConfigMap").unwrap();
        assert_eq!(got["kind"], "ConfigMap");
        assert_eq!(got["apiVersion"], "v1");
        assert_eq!(got["metadata"]["name"], "c");
    }

    #[test]
    fn errors() {
        // Not an envelope.
        let e = decode(br#"{"kind":"Namespace"}"#, "v1", "Namespace").unwrap_err();
        assert_eq!(e.code, 400);
        // An envelope of garbage.
        let e = decode(b"k8s\x00\x0a\xff\xff", "v1", "Namespace").unwrap_err();
        assert_eq!(e.code, 400);
        // The object bytes are garbage.
        let unknown = Unknown {
            raw: Some(vec![0x0a, 0x05, 0x01]),
            ..Default::default()
        };
        let mut body = MAGIC.to_vec();
        unknown.encode(&mut body).unwrap();
        let e = decode(&body, "v1", "Namespace").unwrap_err();
        assert_eq!(e.code, 400);
        // The envelope names another kind.
        let ns = core::Namespace::default();
        let e = decode(&envelope("v1", "ConfigMap", &ns), "v1", "Namespace").unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e
            .message
            .contains("does not match the expected kind (Namespace)"));
        // A kind this decoder does not convert.
        let e = decode(&envelope("v1", "Service", &ns), "v1", "Service").unwrap_err();
        assert_eq!((e.code, e.reason), (415, "UnsupportedMediaType"));
        let e = decode(
            &envelope("example.dev/v1", "Widget", &ns),
            "example.dev/v1",
            "Widget",
        )
        .unwrap_err();
        assert_eq!(e.code, 415);
        // A refused field.
        let pod = core::Pod {
            spec: Some(core::PodSpec {
                volumes: vec![core::Volume {
                    name: some("v"),
                    volume_source: Some(core::VolumeSource {
                        rbd: Some(Default::default()),
                        ..Default::default()
                    }),
                }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let e = decode(&envelope("v1", "Pod", &pod), "v1", "Pod").unwrap_err();
        assert_eq!(e.code, 415);
        assert!(e.message.contains("rbd"), "{}", e.message);
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Bodies captured from kubectl 1.32, compared with what
    /// `kubectl create ... --dry-run=client -o json` prints for the same command.
    #[test]
    fn kubectl_bodies() {
        // kubectl create namespace demo
        let ns = "6b3873000a0f0a02763112094e616d657370616365121c0a140a0464656d6f12001a0022002a0032003800420012001a020a001a002200";
        assert_eq!(
            decode(&unhex(ns), "v1", "Namespace").unwrap(),
            json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "demo", "creationTimestamp": null}, "spec": {}, "status": {}})
        );
        // kubectl create configmap c2 -n demo --from-file=text.txt --from-file=bin.dat
        //   --from-literal=k=v   (text.txt = "hello\n", bin.dat = 00 01 fe ff)
        let cm = "6b3873000a0f0a0276311209436f6e6669674d617012450a160a02633212001a0464656d6f22002a0032003800420012060a016b12017612120a08746578742e747874120668656c6c6f0a1a0f0a0762696e2e64617412040001feff1a002200";
        assert_eq!(
            decode(&unhex(cm), "v1", "ConfigMap").unwrap(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c2", "namespace": "demo", "creationTimestamp": null}, "data": {"k": "v", "text.txt": "hello\n"}, "binaryData": {"bin.dat": "AAH+/w=="}})
        );
        // kubectl create secret generic s1 -n demo --from-literal=user=admin --from-literal=pw='s3cr3t!'
        let secret = "6b3873000a0c0a027631120653656372657412380a160a02733112001a0464656d6f22002a00320038004200120d0a027077120773336372337421120d0a0475736572120561646d696e1a001a002200";
        assert_eq!(
            decode(&unhex(secret), "v1", "Secret").unwrap(),
            json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s1", "namespace": "demo", "creationTimestamp": null}, "data": {"pw": "czNjcjN0IQ==", "user": "YWRtaW4="}})
        );
        // kubectl create secret docker-registry reg -n demo --docker-server=r.example
        //   --docker-username=u --docker-password=p
        let reg = "6b3873000a0c0a02763112065365637265741295010a170a0372656712001a0464656d6f22002a00320038004200125a0a112e646f636b6572636f6e6669676a736f6e12457b226175746873223a7b22722e6578616d706c65223a7b22757365726e616d65223a2275222c2270617373776f7264223a2270222c2261757468223a2264547077227d7d7d1a1e6b756265726e657465732e696f2f646f636b6572636f6e6669676a736f6e1a002200";
        assert_eq!(
            decode(&unhex(reg), "v1", "Secret").unwrap(),
            json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "reg", "namespace": "demo", "creationTimestamp": null}, "data": {".dockerconfigjson": "eyJhdXRocyI6eyJyLmV4YW1wbGUiOnsidXNlcm5hbWUiOiJ1IiwicGFzc3dvcmQiOiJwIiwiYXV0aCI6ImRUcHcifX19"}, "type": "kubernetes.io/dockerconfigjson"})
        );
    }

    #[test]
    fn base64_matches_std_encoding() {
        for (input, want) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
            (&[0xff, 0xfe, 0xfd], "//79"),
        ] {
            assert_eq!(base64(input), want);
        }
    }

    #[test]
    fn times() {
        let time = |seconds, nanos| meta::Time { seconds, nanos };
        assert_eq!(time_value(time(None, None)).unwrap(), Value::Null);
        assert_eq!(
            time_value(time(Some(-62_135_596_800), None)).unwrap(),
            Value::Null
        );
        assert_eq!(
            time_value(time(Some(0), None)).unwrap(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            time_value(time(Some(1_700_000_000), Some(999_999_999))).unwrap(),
            "2023-11-14T22:13:20Z"
        );
    }
}

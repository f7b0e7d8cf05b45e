//! core/v1 `PodStatus` and the container statuses (`k8s.io/api/core/v1/types.go`).

use super::core_kinds::*;
use super::json::*;
use k8s_pb::api::core::v1 as core;
use serde_json::{Map, Value};

pub(super) fn pod_status(p: core::PodStatus) -> R<Value> {
    object!(p, core::PodStatus {
        observed_generation: "observedGeneration" => omitempty_int,
        phase: "phase" => omitempty_str,
        conditions: "conditions" => omitempty_list(pod_condition),
        message: "message" => omitempty_str,
        reason: "reason" => omitempty_str,
        nominated_node_name: "nominatedNodeName" => omitempty_str,
        host_ip: "hostIP" => omitempty_str,
        host_ips: "hostIPs" => omitempty_list(host_ip),
        pod_ip: "podIP" => omitempty_str,
        pod_ips: "podIPs" => omitempty_list(pod_ip),
        start_time: "startTime" => ptr_time,
        init_container_statuses: "initContainerStatuses" => omitempty_list(container_status),
        container_statuses: "containerStatuses" => omitempty_list(container_status),
        qos_class: "qosClass" => omitempty_str,
        ephemeral_container_statuses: "ephemeralContainerStatuses" => omitempty_list(container_status),
        resize: "resize" => omitempty_str,
        resource_claim_statuses: "resourceClaimStatuses" => omitempty_list(pod_resource_claim_status),
        extended_resource_claim_status: "extendedResourceClaimStatus" => ptr_struct(pod_extended_resource_claim_status),
        allocated_resources: "allocatedResources" => omitempty_resource_list,
        resources: "resources" => ptr_struct(resource_requirements),
    })
}

pub(super) fn pod_condition(c: core::PodCondition) -> R<Value> {
    object!(c, core::PodCondition {
        r#type: "type" => str_value,
        observed_generation: "observedGeneration" => omitempty_int,
        status: "status" => str_value,
        last_probe_time: "lastProbeTime" => time,
        last_transition_time: "lastTransitionTime" => time,
        reason: "reason" => omitempty_str,
        message: "message" => omitempty_str,
    })
}

pub(super) fn host_ip(h: core::HostIp) -> R<Value> {
    object!(h, core::HostIp { ip: "ip" => str_value })
}

pub(super) fn pod_ip(p: core::PodIp) -> R<Value> {
    object!(p, core::PodIp { ip: "ip" => str_value })
}

pub(super) fn container_status(c: core::ContainerStatus) -> R<Value> {
    object!(c, core::ContainerStatus {
        name: "name" => str_value,
        state: "state" => struct_value(container_state),
        last_state: "lastState" => struct_value(container_state),
        ready: "ready" => bool_value,
        restart_count: "restartCount" => int_value,
        image: "image" => str_value,
        image_id: "imageID" => str_value,
        container_id: "containerID" => omitempty_str,
        started: "started" => ptr_bool,
        allocated_resources: "allocatedResources" => omitempty_resource_list,
        resources: "resources" => ptr_struct(resource_requirements),
        volume_mounts: "volumeMounts" => omitempty_list(volume_mount_status),
        user: "user" => ptr_struct(container_user),
        allocated_resources_status: "allocatedResourcesStatus" => omitempty_list(resource_status),
        stop_signal: "stopSignal" => ptr_str,
    })
}

pub(super) fn container_state(c: core::ContainerState) -> R<Value> {
    object!(c, core::ContainerState {
        waiting: "waiting" => ptr_struct(container_state_waiting),
        running: "running" => ptr_struct(container_state_running),
        terminated: "terminated" => ptr_struct(container_state_terminated),
    })
}

pub(super) fn container_state_waiting(w: core::ContainerStateWaiting) -> R<Value> {
    object!(w, core::ContainerStateWaiting {
        reason: "reason" => omitempty_str,
        message: "message" => omitempty_str,
    })
}

pub(super) fn container_state_running(r: core::ContainerStateRunning) -> R<Value> {
    object!(r, core::ContainerStateRunning { started_at: "startedAt" => time })
}

pub(super) fn container_state_terminated(x: core::ContainerStateTerminated) -> R<Value> {
    object!(x, core::ContainerStateTerminated {
        exit_code: "exitCode" => int_value,
        signal: "signal" => omitempty_int,
        reason: "reason" => omitempty_str,
        message: "message" => omitempty_str,
        started_at: "startedAt" => time,
        finished_at: "finishedAt" => time,
        container_id: "containerID" => omitempty_str,
    })
}

pub(super) fn volume_mount_status(m: core::VolumeMountStatus) -> R<Value> {
    object!(m, core::VolumeMountStatus {
        name: "name" => str_value,
        mount_path: "mountPath" => str_value,
        read_only: "readOnly" => omitempty_bool,
        recursive_read_only: "recursiveReadOnly" => ptr_str,
    })
}

pub(super) fn container_user(u: core::ContainerUser) -> R<Value> {
    object!(u, core::ContainerUser { linux: "linux" => ptr_struct(linux_container_user) })
}

pub(super) fn linux_container_user(u: core::LinuxContainerUser) -> R<Value> {
    object!(u, core::LinuxContainerUser {
        uid: "uid" => int_value,
        gid: "gid" => int_value,
        supplemental_groups: "supplementalGroups" => omitempty_ints,
    })
}

pub(super) fn resource_status(r: core::ResourceStatus) -> R<Value> {
    object!(r, core::ResourceStatus {
        name: "name" => str_value,
        resources: "resources" => omitempty_list(resource_health),
    })
}

pub(super) fn resource_health(h: core::ResourceHealth) -> R<Value> {
    object!(h, core::ResourceHealth {
        resource_id: "resourceID" => str_value,
        health: "health" => omitempty_str,
    })
}

pub(super) fn pod_resource_claim_status(c: core::PodResourceClaimStatus) -> R<Value> {
    object!(c, core::PodResourceClaimStatus {
        name: "name" => str_value,
        resource_claim_name: "resourceClaimName" => ptr_str,
    })
}

pub(super) fn pod_extended_resource_claim_status(
    c: core::PodExtendedResourceClaimStatus,
) -> R<Value> {
    object!(c, core::PodExtendedResourceClaimStatus {
        request_mappings: "requestMappings" => list_or_null(container_extended_resource_request),
        resource_claim_name: "resourceClaimName" => str_value,
    })
}

pub(super) fn container_extended_resource_request(
    r: core::ContainerExtendedResourceRequest,
) -> R<Value> {
    object!(r, core::ContainerExtendedResourceRequest {
        container_name: "containerName" => str_value,
        resource_name: "resourceName" => str_value,
        request_name: "requestName" => str_value,
    })
}

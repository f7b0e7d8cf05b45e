//! core/v1 `Pod` and its spec: containers, probes, lifecycle, security contexts, affinity,
//! tolerations, scheduling (`k8s.io/api/core/v1/types.go`).

use super::core_kinds::*;
use super::json::*;
use super::meta::*;
use super::pod_status::pod_status;
use super::volume::volume;
use k8s_pb::api::core::v1 as core;
use serde_json::{Map, Value};

pub(super) fn pod(p: core::Pod) -> R<Value> {
    object!(p, core::Pod {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(pod_spec),
        status: "status" => struct_value(pod_status),
    })
}

pub(super) fn pod_spec(p: core::PodSpec) -> R<Value> {
    object!(p, core::PodSpec {
        volumes: "volumes" => omitempty_list(volume),
        init_containers: "initContainers" => omitempty_list(container),
        containers: "containers" => list_or_null(container),
        ephemeral_containers: "ephemeralContainers" => omitempty_list(ephemeral_container),
        restart_policy: "restartPolicy" => omitempty_str,
        termination_grace_period_seconds: "terminationGracePeriodSeconds" => ptr_int,
        active_deadline_seconds: "activeDeadlineSeconds" => ptr_int,
        dns_policy: "dnsPolicy" => omitempty_str,
        node_selector: "nodeSelector" => omitempty_string_map,
        service_account_name: "serviceAccountName" => omitempty_str,
        service_account: "serviceAccount" => omitempty_str,
        automount_service_account_token: "automountServiceAccountToken" => ptr_bool,
        node_name: "nodeName" => omitempty_str,
        host_network: "hostNetwork" => omitempty_bool,
        host_pid: "hostPID" => omitempty_bool,
        host_ipc: "hostIPC" => omitempty_bool,
        share_process_namespace: "shareProcessNamespace" => ptr_bool,
        security_context: "securityContext" => ptr_struct(pod_security_context),
        image_pull_secrets: "imagePullSecrets" => omitempty_list(local_object_reference),
        hostname: "hostname" => omitempty_str,
        subdomain: "subdomain" => omitempty_str,
        affinity: "affinity" => ptr_struct(affinity),
        scheduler_name: "schedulerName" => omitempty_str,
        tolerations: "tolerations" => omitempty_list(toleration),
        host_aliases: "hostAliases" => omitempty_list(host_alias),
        priority_class_name: "priorityClassName" => omitempty_str,
        priority: "priority" => ptr_int,
        dns_config: "dnsConfig" => ptr_struct(pod_dns_config),
        readiness_gates: "readinessGates" => omitempty_list(pod_readiness_gate),
        runtime_class_name: "runtimeClassName" => ptr_str,
        enable_service_links: "enableServiceLinks" => ptr_bool,
        preemption_policy: "preemptionPolicy" => ptr_str,
        overhead: "overhead" => omitempty_resource_list,
        topology_spread_constraints: "topologySpreadConstraints" => omitempty_list(topology_spread_constraint),
        set_hostname_as_fqdn: "setHostnameAsFQDN" => ptr_bool,
        os: "os" => ptr_struct(pod_os),
        host_users: "hostUsers" => ptr_bool,
        scheduling_gates: "schedulingGates" => omitempty_list(pod_scheduling_gate),
        resource_claims: "resourceClaims" => omitempty_list(pod_resource_claim),
        resources: "resources" => ptr_struct(resource_requirements),
        hostname_override: "hostnameOverride" => ptr_str,
        workload_ref: "workloadRef" => ptr_struct(workload_reference),
    })
}

pub(super) fn container(c: core::Container) -> R<Value> {
    object!(c, core::Container {
        name: "name" => str_value,
        image: "image" => omitempty_str,
        command: "command" => omitempty_strings,
        args: "args" => omitempty_strings,
        working_dir: "workingDir" => omitempty_str,
        ports: "ports" => omitempty_list(container_port),
        env_from: "envFrom" => omitempty_list(env_from_source),
        env: "env" => omitempty_list(env_var),
        resources: "resources" => struct_value(resource_requirements),
        resize_policy: "resizePolicy" => omitempty_list(container_resize_policy),
        restart_policy: "restartPolicy" => ptr_str,
        restart_policy_rules: "restartPolicyRules" => omitempty_list(container_restart_rule),
        volume_mounts: "volumeMounts" => omitempty_list(volume_mount),
        volume_devices: "volumeDevices" => omitempty_list(volume_device),
        liveness_probe: "livenessProbe" => ptr_struct(probe),
        readiness_probe: "readinessProbe" => ptr_struct(probe),
        startup_probe: "startupProbe" => ptr_struct(probe),
        lifecycle: "lifecycle" => ptr_struct(lifecycle),
        termination_message_path: "terminationMessagePath" => omitempty_str,
        termination_message_policy: "terminationMessagePolicy" => omitempty_str,
        image_pull_policy: "imagePullPolicy" => omitempty_str,
        security_context: "securityContext" => ptr_struct(security_context),
        stdin: "stdin" => omitempty_bool,
        stdin_once: "stdinOnce" => omitempty_bool,
        tty: "tty" => omitempty_bool,
    })
}

pub(super) fn ephemeral_container(c: core::EphemeralContainer) -> R<Value> {
    object!(c, core::EphemeralContainer {
        ephemeral_container_common: "" => struct_value(ephemeral_container_common),
        target_container_name: "targetContainerName" => omitempty_str,
    })
}

pub(super) fn ephemeral_container_common(c: core::EphemeralContainerCommon) -> R<Value> {
    object!(c, core::EphemeralContainerCommon {
        name: "name" => str_value,
        image: "image" => omitempty_str,
        command: "command" => omitempty_strings,
        args: "args" => omitempty_strings,
        working_dir: "workingDir" => omitempty_str,
        ports: "ports" => omitempty_list(container_port),
        env_from: "envFrom" => omitempty_list(env_from_source),
        env: "env" => omitempty_list(env_var),
        resources: "resources" => struct_value(resource_requirements),
        resize_policy: "resizePolicy" => omitempty_list(container_resize_policy),
        restart_policy: "restartPolicy" => ptr_str,
        restart_policy_rules: "restartPolicyRules" => omitempty_list(container_restart_rule),
        volume_mounts: "volumeMounts" => omitempty_list(volume_mount),
        volume_devices: "volumeDevices" => omitempty_list(volume_device),
        liveness_probe: "livenessProbe" => ptr_struct(probe),
        readiness_probe: "readinessProbe" => ptr_struct(probe),
        startup_probe: "startupProbe" => ptr_struct(probe),
        lifecycle: "lifecycle" => ptr_struct(lifecycle),
        termination_message_path: "terminationMessagePath" => omitempty_str,
        termination_message_policy: "terminationMessagePolicy" => omitempty_str,
        image_pull_policy: "imagePullPolicy" => omitempty_str,
        security_context: "securityContext" => ptr_struct(security_context),
        stdin: "stdin" => omitempty_bool,
        stdin_once: "stdinOnce" => omitempty_bool,
        tty: "tty" => omitempty_bool,
    })
}

pub(super) fn container_port(p: core::ContainerPort) -> R<Value> {
    object!(p, core::ContainerPort {
        name: "name" => omitempty_str,
        host_port: "hostPort" => omitempty_int,
        container_port: "containerPort" => int_value,
        protocol: "protocol" => omitempty_str,
        host_ip: "hostIP" => omitempty_str,
    })
}

pub(super) fn env_from_source(e: core::EnvFromSource) -> R<Value> {
    object!(e, core::EnvFromSource {
        prefix: "prefix" => omitempty_str,
        config_map_ref: "configMapRef" => ptr_struct(config_map_env_source),
        secret_ref: "secretRef" => ptr_struct(secret_env_source),
    })
}

pub(super) fn config_map_env_source(e: core::ConfigMapEnvSource) -> R<Value> {
    object!(e, core::ConfigMapEnvSource {
        local_object_reference: "" => struct_value(local_object_reference),
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn secret_env_source(e: core::SecretEnvSource) -> R<Value> {
    object!(e, core::SecretEnvSource {
        local_object_reference: "" => struct_value(local_object_reference),
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn env_var(e: core::EnvVar) -> R<Value> {
    object!(e, core::EnvVar {
        name: "name" => str_value,
        value: "value" => omitempty_str,
        value_from: "valueFrom" => ptr_struct(env_var_source),
    })
}

pub(super) fn env_var_source(e: core::EnvVarSource) -> R<Value> {
    object!(e, core::EnvVarSource {
        field_ref: "fieldRef" => ptr_struct(object_field_selector),
        resource_field_ref: "resourceFieldRef" => ptr_struct(resource_field_selector),
        config_map_key_ref: "configMapKeyRef" => ptr_struct(config_map_key_selector),
        secret_key_ref: "secretKeyRef" => ptr_struct(secret_key_selector),
        file_key_ref: "fileKeyRef" => ptr_struct(file_key_selector),
    })
}

pub(super) fn config_map_key_selector(k: core::ConfigMapKeySelector) -> R<Value> {
    object!(k, core::ConfigMapKeySelector {
        local_object_reference: "" => struct_value(local_object_reference),
        key: "key" => str_value,
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn secret_key_selector(k: core::SecretKeySelector) -> R<Value> {
    object!(k, core::SecretKeySelector {
        local_object_reference: "" => struct_value(local_object_reference),
        key: "key" => str_value,
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn file_key_selector(k: core::FileKeySelector) -> R<Value> {
    object!(k, core::FileKeySelector {
        volume_name: "volumeName" => str_value,
        path: "path" => str_value,
        key: "key" => str_value,
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn container_resize_policy(p: core::ContainerResizePolicy) -> R<Value> {
    object!(p, core::ContainerResizePolicy {
        resource_name: "resourceName" => str_value,
        restart_policy: "restartPolicy" => str_value,
    })
}

pub(super) fn container_restart_rule(r: core::ContainerRestartRule) -> R<Value> {
    object!(r, core::ContainerRestartRule {
        action: "action" => omitempty_str,
        exit_codes: "exitCodes" => ptr_struct(container_restart_rule_on_exit_codes),
    })
}

pub(super) fn container_restart_rule_on_exit_codes(
    r: core::ContainerRestartRuleOnExitCodes,
) -> R<Value> {
    object!(r, core::ContainerRestartRuleOnExitCodes {
        operator: "operator" => omitempty_str,
        values: "values" => omitempty_ints,
    })
}

pub(super) fn volume_mount(m: core::VolumeMount) -> R<Value> {
    object!(m, core::VolumeMount {
        name: "name" => str_value,
        read_only: "readOnly" => omitempty_bool,
        recursive_read_only: "recursiveReadOnly" => ptr_str,
        mount_path: "mountPath" => str_value,
        sub_path: "subPath" => omitempty_str,
        mount_propagation: "mountPropagation" => ptr_str,
        sub_path_expr: "subPathExpr" => omitempty_str,
    })
}

pub(super) fn volume_device(d: core::VolumeDevice) -> R<Value> {
    object!(d, core::VolumeDevice {
        name: "name" => str_value,
        device_path: "devicePath" => str_value,
    })
}

pub(super) fn probe(p: core::Probe) -> R<Value> {
    object!(p, core::Probe {
        handler: "" => struct_value(probe_handler),
        initial_delay_seconds: "initialDelaySeconds" => omitempty_int,
        timeout_seconds: "timeoutSeconds" => omitempty_int,
        period_seconds: "periodSeconds" => omitempty_int,
        success_threshold: "successThreshold" => omitempty_int,
        failure_threshold: "failureThreshold" => omitempty_int,
        termination_grace_period_seconds: "terminationGracePeriodSeconds" => ptr_int,
    })
}

pub(super) fn probe_handler(h: core::ProbeHandler) -> R<Value> {
    object!(h, core::ProbeHandler {
        exec: "exec" => ptr_struct(exec_action),
        http_get: "httpGet" => ptr_struct(http_get_action),
        tcp_socket: "tcpSocket" => ptr_struct(tcp_socket_action),
        grpc: "grpc" => ptr_struct(grpc_action),
    })
}

pub(super) fn exec_action(e: core::ExecAction) -> R<Value> {
    object!(e, core::ExecAction { command: "command" => omitempty_strings })
}

pub(super) fn http_get_action(h: core::HttpGetAction) -> R<Value> {
    object!(h, core::HttpGetAction {
        path: "path" => omitempty_str,
        port: "port" => int_or_string,
        host: "host" => omitempty_str,
        scheme: "scheme" => omitempty_str,
        http_headers: "httpHeaders" => omitempty_list(http_header),
    })
}

pub(super) fn http_header(h: core::HttpHeader) -> R<Value> {
    object!(h, core::HttpHeader {
        name: "name" => str_value,
        value: "value" => str_value,
    })
}

pub(super) fn tcp_socket_action(t: core::TcpSocketAction) -> R<Value> {
    object!(t, core::TcpSocketAction {
        port: "port" => int_or_string,
        host: "host" => omitempty_str,
    })
}

pub(super) fn grpc_action(g: core::GrpcAction) -> R<Value> {
    object!(g, core::GrpcAction {
        port: "port" => int_value,
        service: "service" => ptr_str_or_null,
    })
}

pub(super) fn sleep_action(a: core::SleepAction) -> R<Value> {
    object!(a, core::SleepAction { seconds: "seconds" => int_value })
}

pub(super) fn lifecycle(l: core::Lifecycle) -> R<Value> {
    object!(l, core::Lifecycle {
        post_start: "postStart" => ptr_struct(lifecycle_handler),
        pre_stop: "preStop" => ptr_struct(lifecycle_handler),
        stop_signal: "stopSignal" => ptr_str,
    })
}

pub(super) fn lifecycle_handler(h: core::LifecycleHandler) -> R<Value> {
    object!(h, core::LifecycleHandler {
        exec: "exec" => ptr_struct(exec_action),
        http_get: "httpGet" => ptr_struct(http_get_action),
        tcp_socket: "tcpSocket" => ptr_struct(tcp_socket_action),
        sleep: "sleep" => ptr_struct(sleep_action),
    })
}

pub(super) fn security_context(c: core::SecurityContext) -> R<Value> {
    object!(c, core::SecurityContext {
        capabilities: "capabilities" => ptr_struct(capabilities),
        privileged: "privileged" => ptr_bool,
        se_linux_options: "seLinuxOptions" => ptr_struct(se_linux_options),
        windows_options: "windowsOptions" => ptr_struct(windows_security_context_options),
        run_as_user: "runAsUser" => ptr_int,
        run_as_group: "runAsGroup" => ptr_int,
        run_as_non_root: "runAsNonRoot" => ptr_bool,
        read_only_root_filesystem: "readOnlyRootFilesystem" => ptr_bool,
        allow_privilege_escalation: "allowPrivilegeEscalation" => ptr_bool,
        proc_mount: "procMount" => ptr_str,
        seccomp_profile: "seccompProfile" => ptr_struct(seccomp_profile),
        app_armor_profile: "appArmorProfile" => ptr_struct(app_armor_profile),
    })
}

pub(super) fn capabilities(c: core::Capabilities) -> R<Value> {
    object!(c, core::Capabilities {
        add: "add" => omitempty_strings,
        drop: "drop" => omitempty_strings,
    })
}

pub(super) fn se_linux_options(o: core::SeLinuxOptions) -> R<Value> {
    object!(o, core::SeLinuxOptions {
        user: "user" => omitempty_str,
        role: "role" => omitempty_str,
        r#type: "type" => omitempty_str,
        level: "level" => omitempty_str,
    })
}

pub(super) fn windows_security_context_options(o: core::WindowsSecurityContextOptions) -> R<Value> {
    object!(o, core::WindowsSecurityContextOptions {
        gmsa_credential_spec_name: "gmsaCredentialSpecName" => ptr_str,
        gmsa_credential_spec: "gmsaCredentialSpec" => ptr_str,
        run_as_user_name: "runAsUserName" => ptr_str,
        host_process: "hostProcess" => ptr_bool,
    })
}

pub(super) fn seccomp_profile(p: core::SeccompProfile) -> R<Value> {
    object!(p, core::SeccompProfile {
        r#type: "type" => str_value,
        localhost_profile: "localhostProfile" => ptr_str,
    })
}

pub(super) fn app_armor_profile(p: core::AppArmorProfile) -> R<Value> {
    object!(p, core::AppArmorProfile {
        r#type: "type" => str_value,
        localhost_profile: "localhostProfile" => ptr_str,
    })
}

pub(super) fn pod_security_context(c: core::PodSecurityContext) -> R<Value> {
    object!(c, core::PodSecurityContext {
        se_linux_options: "seLinuxOptions" => ptr_struct(se_linux_options),
        windows_options: "windowsOptions" => ptr_struct(windows_security_context_options),
        run_as_user: "runAsUser" => ptr_int,
        run_as_group: "runAsGroup" => ptr_int,
        run_as_non_root: "runAsNonRoot" => ptr_bool,
        supplemental_groups: "supplementalGroups" => omitempty_ints,
        supplemental_groups_policy: "supplementalGroupsPolicy" => ptr_str,
        fs_group: "fsGroup" => ptr_int,
        sysctls: "sysctls" => omitempty_list(sysctl),
        fs_group_change_policy: "fsGroupChangePolicy" => ptr_str,
        seccomp_profile: "seccompProfile" => ptr_struct(seccomp_profile),
        app_armor_profile: "appArmorProfile" => ptr_struct(app_armor_profile),
        se_linux_change_policy: "seLinuxChangePolicy" => ptr_str,
    })
}

pub(super) fn sysctl(c: core::Sysctl) -> R<Value> {
    object!(c, core::Sysctl {
        name: "name" => str_value,
        value: "value" => str_value,
    })
}

pub(super) fn affinity(a: core::Affinity) -> R<Value> {
    object!(a, core::Affinity {
        node_affinity: "nodeAffinity" => ptr_struct(node_affinity),
        pod_affinity: "podAffinity" => ptr_struct(pod_affinity),
        pod_anti_affinity: "podAntiAffinity" => ptr_struct(pod_anti_affinity),
    })
}

pub(super) fn node_affinity(a: core::NodeAffinity) -> R<Value> {
    object!(a, core::NodeAffinity {
        required_during_scheduling_ignored_during_execution:
            "requiredDuringSchedulingIgnoredDuringExecution" => ptr_struct(node_selector),
        preferred_during_scheduling_ignored_during_execution:
            "preferredDuringSchedulingIgnoredDuringExecution" => omitempty_list(preferred_scheduling_term),
    })
}

pub(super) fn node_selector(n: core::NodeSelector) -> R<Value> {
    object!(n, core::NodeSelector {
        node_selector_terms: "nodeSelectorTerms" => list_or_null(node_selector_term),
    })
}

pub(super) fn node_selector_term(n: core::NodeSelectorTerm) -> R<Value> {
    object!(n, core::NodeSelectorTerm {
        match_expressions: "matchExpressions" => omitempty_list(node_selector_requirement),
        match_fields: "matchFields" => omitempty_list(node_selector_requirement),
    })
}

pub(super) fn node_selector_requirement(r: core::NodeSelectorRequirement) -> R<Value> {
    object!(r, core::NodeSelectorRequirement {
        key: "key" => str_value,
        operator: "operator" => str_value,
        values: "values" => omitempty_strings,
    })
}

pub(super) fn preferred_scheduling_term(p: core::PreferredSchedulingTerm) -> R<Value> {
    object!(p, core::PreferredSchedulingTerm {
        weight: "weight" => int_value,
        preference: "preference" => struct_value(node_selector_term),
    })
}

pub(super) fn pod_affinity(a: core::PodAffinity) -> R<Value> {
    object!(a, core::PodAffinity {
        required_during_scheduling_ignored_during_execution:
            "requiredDuringSchedulingIgnoredDuringExecution" => omitempty_list(pod_affinity_term),
        preferred_during_scheduling_ignored_during_execution:
            "preferredDuringSchedulingIgnoredDuringExecution" => omitempty_list(weighted_pod_affinity_term),
    })
}

pub(super) fn pod_anti_affinity(a: core::PodAntiAffinity) -> R<Value> {
    object!(a, core::PodAntiAffinity {
        required_during_scheduling_ignored_during_execution:
            "requiredDuringSchedulingIgnoredDuringExecution" => omitempty_list(pod_affinity_term),
        preferred_during_scheduling_ignored_during_execution:
            "preferredDuringSchedulingIgnoredDuringExecution" => omitempty_list(weighted_pod_affinity_term),
    })
}

pub(super) fn weighted_pod_affinity_term(w: core::WeightedPodAffinityTerm) -> R<Value> {
    object!(w, core::WeightedPodAffinityTerm {
        weight: "weight" => int_value,
        pod_affinity_term: "podAffinityTerm" => struct_value(pod_affinity_term),
    })
}

pub(super) fn pod_affinity_term(p: core::PodAffinityTerm) -> R<Value> {
    object!(p, core::PodAffinityTerm {
        label_selector: "labelSelector" => ptr_struct(label_selector),
        namespaces: "namespaces" => omitempty_strings,
        topology_key: "topologyKey" => str_value,
        namespace_selector: "namespaceSelector" => ptr_struct(label_selector),
        match_label_keys: "matchLabelKeys" => omitempty_strings,
        mismatch_label_keys: "mismatchLabelKeys" => omitempty_strings,
    })
}

pub(super) fn toleration(t: core::Toleration) -> R<Value> {
    object!(t, core::Toleration {
        key: "key" => omitempty_str,
        operator: "operator" => omitempty_str,
        value: "value" => omitempty_str,
        effect: "effect" => omitempty_str,
        toleration_seconds: "tolerationSeconds" => ptr_int,
    })
}

pub(super) fn host_alias(h: core::HostAlias) -> R<Value> {
    object!(h, core::HostAlias {
        ip: "ip" => str_value,
        hostnames: "hostnames" => omitempty_strings,
    })
}

pub(super) fn pod_dns_config(c: core::PodDnsConfig) -> R<Value> {
    object!(c, core::PodDnsConfig {
        nameservers: "nameservers" => omitempty_strings,
        searches: "searches" => omitempty_strings,
        options: "options" => omitempty_list(pod_dns_config_option),
    })
}

pub(super) fn pod_dns_config_option(o: core::PodDnsConfigOption) -> R<Value> {
    object!(o, core::PodDnsConfigOption {
        name: "name" => omitempty_str,
        value: "value" => ptr_str,
    })
}

pub(super) fn pod_readiness_gate(g: core::PodReadinessGate) -> R<Value> {
    object!(g, core::PodReadinessGate { condition_type: "conditionType" => str_value })
}

pub(super) fn topology_spread_constraint(c: core::TopologySpreadConstraint) -> R<Value> {
    object!(c, core::TopologySpreadConstraint {
        max_skew: "maxSkew" => int_value,
        topology_key: "topologyKey" => str_value,
        when_unsatisfiable: "whenUnsatisfiable" => str_value,
        label_selector: "labelSelector" => ptr_struct(label_selector),
        min_domains: "minDomains" => ptr_int,
        node_affinity_policy: "nodeAffinityPolicy" => ptr_str,
        node_taints_policy: "nodeTaintsPolicy" => ptr_str,
        match_label_keys: "matchLabelKeys" => omitempty_strings,
    })
}

pub(super) fn pod_os(o: core::PodOs) -> R<Value> {
    object!(o, core::PodOs { name: "name" => str_value })
}

pub(super) fn pod_scheduling_gate(g: core::PodSchedulingGate) -> R<Value> {
    object!(g, core::PodSchedulingGate { name: "name" => str_value })
}

pub(super) fn pod_resource_claim(c: core::PodResourceClaim) -> R<Value> {
    object!(c, core::PodResourceClaim {
        name: "name" => str_value,
        resource_claim_name: "resourceClaimName" => ptr_str,
        resource_claim_template_name: "resourceClaimTemplateName" => ptr_str,
    })
}

pub(super) fn workload_reference(w: core::WorkloadReference) -> R<Value> {
    object!(w, core::WorkloadReference {
        name: "name" => str_value,
        pod_group: "podGroup" => str_value,
        pod_group_replica_key: "podGroupReplicaKey" => omitempty_str,
    })
}

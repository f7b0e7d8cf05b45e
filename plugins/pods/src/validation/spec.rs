//! `ValidatePodSpec`: restart and DNS policy, DNS config, host network, tolerations, …

use super::common::*;
use super::containers::*;
use super::resources::*;
use super::volumes::*;
use std::collections::BTreeSet;
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{
    PodDNSConfig, PodSpec, ResourceRequirements, Toleration,
};
use wasm_apiserver_sdk::validation::{self as v, NameRule};
// ---------------------------------------------------------------------------------------------
// ValidatePodSpec
// ---------------------------------------------------------------------------------------------

/// `ValidatePodSpec`.
pub fn validate_pod_spec(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    if spec.termination_grace_period_seconds.is_none() {
        errs.push(field::required(
            &path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let grace = spec.termination_grace_period_seconds;
    let restart_policy = s(&spec.restart_policy);

    let (vols, vol_errs) = validate_volumes(
        spec.volumes.as_deref().unwrap_or_default(),
        &path.child("volumes"),
    );
    errs.extend(vol_errs);
    let claim_names: BTreeSet<&str> = spec
        .resource_claims
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect();
    errs.extend(validate_containers(
        &spec.containers,
        &vols,
        &claim_names,
        grace,
        &path.child("containers"),
        restart_policy,
    ));
    errs.extend(validate_init_containers(
        spec.init_containers.as_deref().unwrap_or_default(),
        &spec.containers,
        &vols,
        &claim_names,
        grace,
        &path.child("initContainers"),
        restart_policy,
    ));
    errs.extend(validate_pod_host_network_deps(spec, path));
    errs.extend(validate_restart_policy(
        spec.restart_policy.as_deref(),
        &path.child("restartPolicy"),
    ));
    errs.extend(validate_dns_policy(
        spec.dns_policy.as_deref(),
        &path.child("dnsPolicy"),
    ));
    if let Some(ns) = spec.node_selector.as_ref() {
        errs.extend(v::validate_labels(ns, &path.child("nodeSelector")));
    }
    errs.extend(validate_pod_dns_config(
        spec.dns_config.as_ref(),
        s(&spec.dns_policy),
        &path.child("dnsConfig"),
    ));
    for (i, g) in spec.readiness_gates.iter().flatten().enumerate() {
        errs.extend(validate_qualified_name(
            &g.condition_type,
            &path.child("readinessGates").index(i).child("conditionType"),
        ));
    }
    let mut seen_gates = BTreeSet::new();
    for (i, g) in spec.scheduling_gates.iter().flatten().enumerate() {
        let gate_path = path.child("schedulingGates").index(i);
        errs.extend(validate_qualified_name(&g.name, &gate_path));
        if !seen_gates.insert(g.name.as_str()) {
            errs.push(field::duplicate(&gate_path, &g.name));
        }
    }
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|n| !n.is_empty())
    {
        errs.extend(v::validate_name(
            sa,
            NameRule::Dns1123Subdomain,
            &path.child("serviceAccountName"),
        ));
    }
    if let Some(node) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        errs.extend(v::validate_name(
            node,
            NameRule::Dns1123Subdomain,
            &path.child("nodeName"),
        ));
    }
    if let Some(ads) = spec.active_deadline_seconds {
        if !(1..=MAX_INT32).contains(&ads) {
            errs.push(field::invalid(
                &path.child("activeDeadlineSeconds"),
                ads,
                v::inclusive_range_error(1, MAX_INT32),
            ));
        }
    }
    if let Some(h) = spec.hostname.as_deref().filter(|h| !h.is_empty()) {
        errs.extend(validate_dns1123_label(h, &path.child("hostname")));
    }
    if let Some(d) = spec.subdomain.as_deref().filter(|d| !d.is_empty()) {
        errs.extend(validate_dns1123_label(d, &path.child("subdomain")));
    }
    if let Some(t) = spec.tolerations.as_deref().filter(|t| !t.is_empty()) {
        errs.extend(validate_tolerations(t, &path.child("tolerations")));
    }
    if let Some(p) = spec
        .priority_class_name
        .as_deref()
        .filter(|p| !p.is_empty())
    {
        errs.extend(v::validate_name(
            p,
            NameRule::Dns1123Subdomain,
            &path.child("priorityClassName"),
        ));
    }
    if let Some(r) = spec.runtime_class_name.as_deref() {
        errs.extend(v::validate_name(
            r,
            NameRule::Dns1123Subdomain,
            &path.child("runtimeClassName"),
        ));
    }
    if let Some(p) = spec.preemption_policy.as_deref() {
        const POLICIES: [&str; 2] = ["PreemptLowerPriority", "Never"];
        let pp = path.child("preemptionPolicy");
        if p.is_empty() {
            errs.push(field::required(&pp, ""));
        } else if !POLICIES.contains(&p) {
            errs.push(field::not_supported(&pp, p, &POLICIES));
        }
    }
    if let Some(o) = spec.overhead.as_ref() {
        let req = ResourceRequirements {
            limits: Some(o.clone()),
            ..Default::default()
        };
        errs.extend(validate_resource_requirements(
            &req,
            &BTreeSet::new(),
            &path.child("overhead"),
        ));
    }
    errs
}

/// `validateRestartPolicy`.
pub(super) fn validate_restart_policy(policy: Option<&str>, path: &Path) -> ErrorList {
    const POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];
    match policy.unwrap_or_default() {
        p if POLICIES.contains(&p) => Vec::new(),
        "" => vec![field::required(path, "")],
        p => vec![field::not_supported(path, p, &POLICIES)],
    }
}

/// `validateDNSPolicy`.
pub(super) fn validate_dns_policy(policy: Option<&str>, path: &Path) -> ErrorList {
    const POLICIES: [&str; 4] = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    match policy.unwrap_or_default() {
        p if POLICIES.contains(&p) => Vec::new(),
        "" => vec![field::required(path, "")],
        p => vec![field::not_supported(path, p, &POLICIES)],
    }
}

/// `validatePodDNSConfig` (without the per-entry search-domain check).
pub(super) fn validate_pod_dns_config(
    config: Option<&PodDNSConfig>,
    policy: &str,
    path: &Path,
) -> ErrorList {
    let mut errs = Vec::new();
    if policy == "None" {
        match config {
            None => {
                return vec![field::required(
                    path,
                    "must provide `dnsConfig` when `dnsPolicy` is None",
                )]
            }
            Some(c) if c.nameservers.as_ref().is_none_or(|n| n.is_empty()) => {
                return vec![field::required(
                    &path.child("nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )]
            }
            _ => {}
        }
    }
    let Some(c) = config else { return errs };
    let nameservers = c.nameservers.as_deref().unwrap_or_default();
    if nameservers.len() > 3 {
        errs.push(field::invalid(
            &path.child("nameservers"),
            nameservers,
            "must not have more than 3 nameservers",
        ));
    }
    for (i, ns) in nameservers.iter().enumerate() {
        errs.extend(validate_ip(ns, &path.child("nameservers").index(i)));
    }
    let searches = c.searches.as_deref().unwrap_or_default();
    if searches.len() > 32 {
        errs.push(field::invalid(
            &path.child("searches"),
            searches,
            "must not have more than 32 search paths",
        ));
    }
    if searches.join(" ").len() > 2048 {
        errs.push(field::invalid(
            &path.child("searches"),
            searches,
            "must not have more than 2048 characters (including spaces) in the search list",
        ));
    }
    for (i, o) in c.options.iter().flatten().enumerate() {
        if s(&o.name).is_empty() {
            errs.push(field::required(
                &path.child("options").index(i),
                "must not be empty",
            ));
        }
    }
    errs
}

/// `validatePodHostNetworkDeps`: with `hostNetwork`, a pod's host ports must equal its
/// container ports.
pub(super) fn validate_pod_host_network_deps(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    if spec.host_network != Some(true) {
        return errs;
    }
    let path = path.child("containers");
    for (i, c) in spec.containers.iter().enumerate() {
        for (j, p) in c.ports.iter().flatten().enumerate() {
            let hp = p.host_port.unwrap_or(0);
            if hp != p.container_port {
                errs.push(field::invalid(
                    &path.index(i).child("ports").index(j).child("hostPort"),
                    hp,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errs
}

/// `ValidateTolerations`.
pub(super) fn validate_tolerations(tolerations: &[Toleration], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let idx = path.index(i);
        let (key, op, value, effect) = (s(&t.key), s(&t.operator), s(&t.value), s(&t.effect));
        if !key.is_empty() {
            errs.extend(validate_qualified_name(key, &idx.child("key")));
        }
        if key.is_empty() && op != "Exists" {
            errs.push(field::invalid(
                &idx.child("operator"),
                op,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            errs.push(field::invalid(
                &idx.child("effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "Equal" | "" => {
                let msgs = v::is_valid_label_value(value);
                if !msgs.is_empty() {
                    errs.push(field::invalid(
                        &idx.child("operator"),
                        value,
                        msgs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(field::invalid(
                        &idx.child("operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            _ => errs.push(field::not_supported(
                &idx.child("operator"),
                op,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() {
            const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
            if !EFFECTS.contains(&effect) {
                errs.push(field::not_supported(&idx.child("effect"), effect, &EFFECTS));
            }
        }
    }
    errs
}

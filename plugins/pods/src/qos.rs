//! A pod's QoS class: `GetPodQOS` / `ComputePodQOS` (pkg/apis/core/helper/qos/qos.go).
//!
//! Pod-level resources are not considered: the `PodLevelResources` gate is off by default in
//! Kubernetes 1.33, the version this plugin serves.

use crate::quantities;
use std::collections::BTreeMap;
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::Pod;

/// `core.PodQOSGuaranteed`.
pub const GUARANTEED: &str = "Guaranteed";
/// `core.PodQOSBurstable`.
pub const BURSTABLE: &str = "Burstable";
/// `core.PodQOSBestEffort`.
pub const BEST_EFFORT: &str = "BestEffort";

const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `GetPodQOS`: `status.qosClass` when set, else [`compute_pod_qos`].
pub fn get_pod_qos(pod: &Pod) -> String {
    match pod.status.as_ref().and_then(|s| s.qos_class.as_deref()) {
        Some(q) if !q.is_empty() => q.to_string(),
        _ => compute_pod_qos(pod).to_string(),
    }
}

/// `ComputePodQOS`: BestEffort when no container sets a cpu/memory request or limit,
/// Guaranteed when every container has cpu and memory limits and the summed requests equal the
/// summed limits, Burstable otherwise. Init containers count; ephemeral containers do not.
pub fn compute_pod_qos(pod: &Pod) -> &'static str {
    let mut requests: BTreeMap<&str, i128> = BTreeMap::new();
    let mut limits: BTreeMap<&str, i128> = BTreeMap::new();
    let mut is_guaranteed = true;
    let Some(spec) = pod.spec.as_ref() else {
        return BEST_EFFORT;
    };
    for c in spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
    {
        let res = c.resources.as_ref();
        for (name, q) in res.and_then(|r| r.requests.as_ref()).into_iter().flatten() {
            let Some(name) = QOS_RESOURCES.iter().find(|r| **r == name.as_str()) else {
                continue;
            };
            match quantities::parse(&q.0) {
                Some(v) if v.nanos > 0 => *requests.entry(name).or_insert(0) += v.nanos,
                _ => {}
            }
        }
        let mut found = 0;
        for (name, q) in res.and_then(|r| r.limits.as_ref()).into_iter().flatten() {
            let Some(name) = QOS_RESOURCES.iter().find(|r| **r == name.as_str()) else {
                continue;
            };
            match quantities::parse(&q.0) {
                Some(v) if v.nanos > 0 => {
                    found += 1;
                    *limits.entry(name).or_insert(0) += v.nanos;
                }
                _ => {}
            }
        }
        if found < QOS_RESOURCES.len() {
            is_guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return BEST_EFFORT;
    }
    if is_guaranteed
        && requests
            .iter()
            .all(|(name, req)| limits.get(name) == Some(req))
        && requests.len() == limits.len()
    {
        return GUARANTEED;
    }
    BURSTABLE
}

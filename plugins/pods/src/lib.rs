//! The standard `pods` plugin: core/v1 Pod, namespaced, with a `status` subresource — the
//! behaviour kube-apiserver 1.33 compiles in for pods, as a strategy plugin.
//!
//! Sources (kubernetes/kubernetes):
//! - pkg/registry/core/pod/strategy.go — `podStrategy` (`PrepareForCreate`,
//!   `PrepareForUpdate`, `Validate`, `ValidateUpdate`, `WarningsOnCreate`,
//!   `CheckGracefulDelete`), `podStatusStrategy`, `ToSelectableFields`;
//! - pkg/apis/core/v1/defaults.go — `SetDefaults_Pod`, `SetDefaults_PodSpec`,
//!   `SetDefaults_Container`, … ([`defaults`]);
//! - pkg/apis/core/validation/validation.go — `ValidatePodCreate`, `ValidatePodUpdate`,
//!   `ValidatePodStatusUpdate` ([`validation`]);
//! - pkg/apis/core/helper/qos/qos.go — `GetPodQOS` ([`qos`]);
//! - pkg/printers/internalversion/printers.go — `printPod` ([`printer`]).
//!
//! Feature gates are taken at their 1.33 defaults. Left out, because a plugin cannot or need
//! not do them: admission (service account, priority, default tolerations), the
//! `ephemeralcontainers`, `resize` and `binding` subresources, the AppArmor annotation-to-field
//! sync, `GetWarningsForPod`, and the parts of validation listed in [`validation`].

use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement,
};
use wasm_apiserver_sdk::prelude::*;

pub mod defaults;
pub mod printer;
pub mod qos;
pub mod quantities;
mod schema;
pub mod validation;

/// The pod strategy (`podStrategy` and `podStatusStrategy`).
pub struct Pods;

impl Strategy for Pods {
    type Object = Pod;

    /// Pods get `metadata.generation` 1 on create and a bump on every spec change
    /// (`updatePodGeneration`).
    const TRACKS_GENERATION: bool = true;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            short_names: vec!["po".into()],
            categories: vec!["all".into()],
            // The pod column definitions of printers.go (AddHandlers: podColumnDefinitions).
            printer_columns: vec![
                PrinterColumn::name(),
                PrinterColumn::computed("Ready", "string")
                    .describe("The aggregate readiness state of this pod for accepting traffic."),
                PrinterColumn::computed("Status", "string")
                    .describe("The aggregate status of the containers in this pod."),
                PrinterColumn::computed("Restarts", "string")
                    .describe("The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
                PrinterColumn::age(),
                PrinterColumn::computed("IP", "string")
                    .wide()
                    .describe("IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."),
                PrinterColumn::computed("Node", "string")
                    .wide()
                    .describe("NodeName indicates in which node this pod is scheduled."),
                PrinterColumn::computed("Nominated Node", "string")
                    .wide()
                    .describe("nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled."),
                PrinterColumn::computed("Readiness Gates", "string")
                    .wide()
                    .describe("If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"),
            ],
            selectable_fields: vec!["spec.nodeName".into(), "status.phase".into()],
            openapi_schema: schema::pod_schema(),
            example: Some(example()),
            // `ReturnDeletedObject: true` (pkg/registry/core/pod/storage/storage.go).
            return_deleted_object: true,
            ..ResourceDescription::new("", "v1", "Pod", "pods")
        }
    }

    /// `PrepareForCreate` (strategy.go), after the scheme's defaults (the SDK already dropped
    /// the client's status): `status = {phase: Pending, qosClass: GetPodQOS(pod)}`, the
    /// SchedulingGated condition, and the matchLabelKeys merge of pod (anti-)affinity. Disabled
    /// fields (`spec.resources`: `PodLevelResources` is off in 1.33) are dropped.
    fn prepare_for_create(pod: &mut Pod) {
        defaults::set_defaults_pod(pod);
        drop_disabled_pod_fields(pod, None);
        let qos_class = qos::get_pod_qos(pod);
        pod.status = Some(PodStatus {
            phase: Some("Pending".into()),
            qos_class: Some(qos_class),
            ..Default::default()
        });
        apply_scheduling_gated_condition(pod);
        mutate_pod_affinity(pod);
    }

    /// `Validate`: `ValidatePodCreate`.
    fn validate(pod: &Pod) -> ErrorList {
        validation::validate_pod_create(pod)
    }

    /// `WarningsOnCreate`: a name that is not a DNS label makes a surprising hostname.
    fn warnings_on_create(pod: &Pod) -> Vec<String> {
        let msgs = validation::dns_label_problems(pod.metadata.name.as_deref().unwrap_or_default());
        if msgs.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [{}]",
            msgs.join(" ")
        )]
    }

    /// `PrepareForUpdate`: the body is defaulted as on create (kube-apiserver defaults every
    /// decoded object); the SDK has copied `status` from the stored pod and bumps the
    /// generation when the spec changed.
    fn prepare_for_update(new: &mut Pod, old: &Pod) {
        defaults::set_defaults_pod(new);
        drop_disabled_pod_fields(new, Some(old));
    }

    /// `ValidateUpdate`: `ValidatePodUpdate`.
    fn validate_update(new: &Pod, old: &Pod) -> ErrorList {
        validation::validate_pod_update(new, old)
    }

    /// `podStatusStrategy.PrepareForUpdate` (the SDK kept the stored spec and metadata): owner
    /// references stay, an empty `qosClass` is backfilled, and `observedGeneration` values the
    /// client cleared are preserved (`preserveOldObservedGeneration`).
    fn prepare_for_status_update(new: &mut Pod, old: &Pod) {
        new.metadata.owner_references = old.metadata.owner_references.clone();
        let empty = PodStatus::default();
        let old_status = old.status.as_ref().unwrap_or(&empty);
        let status = new.status.get_or_insert_with(PodStatus::default);
        if status.qos_class.as_deref().unwrap_or_default().is_empty() {
            status.qos_class = old_status.qos_class.clone();
        }
        if status.observed_generation.unwrap_or(0) == 0 && old_status.observed_generation.is_some()
        {
            status.observed_generation = old_status.observed_generation;
        }
        let mut old_generations: Vec<(&str, Option<i64>)> = old_status
            .conditions
            .iter()
            .flatten()
            .map(|c| (c.type_.as_str(), c.observed_generation))
            .collect();
        for c in status.conditions.iter_mut().flatten() {
            let old_generation = old_generations
                .iter()
                .position(|(t, _)| *t == c.type_)
                .map(|i| old_generations.remove(i).1);
            if c.observed_generation.unwrap_or(0) == 0 {
                if let Some(Some(g)) = old_generation {
                    c.observed_generation = Some(g);
                }
            }
        }
    }

    /// The status strategy's `ValidateUpdate`: `ValidatePodStatusUpdate`, plus a known phase.
    fn validate_status_update(new: &Pod, old: &Pod) -> ErrorList {
        validation::validate_pod_status_update(new, old)
    }

    /// `CheckGracefulDelete`: the requested period, else `spec.terminationGracePeriodSeconds`,
    /// else the default 30 (strategy.go uses 0 there, but the field is always defaulted); 0 for
    /// a pod that is not scheduled or has terminated; 1 instead of a negative period.
    fn check_graceful_delete(pod: &Pod, requested: Option<i64>) -> Option<i64> {
        let spec = pod.spec.as_ref();
        let mut period = requested.unwrap_or_else(|| {
            spec.and_then(|s| s.termination_grace_period_seconds)
                .unwrap_or(defaults::DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS)
        });
        if spec
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or_default()
            .is_empty()
        {
            period = 0;
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Failed" | "Succeeded")) {
            period = 0;
        }
        if period < 0 {
            period = 1;
        }
        Some(period)
    }

    /// READY, STATUS and RESTARTS, as `printPod` computes them.
    fn printer_cells(pod: &Pod) -> Vec<Value> {
        let row = printer::print_pod(pod);
        // printPod: an unassigned IP or node prints as `<none>`.
        let or_none = |v: Option<&String>| match v {
            Some(s) if !s.is_empty() => s.clone(),
            _ => "<none>".to_string(),
        };
        let ip = or_none(pod.status.as_ref().and_then(|s| s.pod_ip.as_ref()));
        let node = or_none(pod.spec.as_ref().and_then(|s| s.node_name.as_ref()));
        let nominated = or_none(
            pod.status
                .as_ref()
                .and_then(|s| s.nominated_node_name.as_ref()),
        );
        vec![
            json!(row.ready),
            json!(row.status),
            // printPod prints the count as a string (with "(5m ago)" from the last
            // termination, which needs the clock a plugin does not have).
            json!(row.restarts.to_string()),
            json!(ip),
            json!(node),
            json!(nominated),
            json!(printer::readiness_gates(pod)),
        ]
    }
}

export_strategy!(Pods);

/// `podutil.DropDisabledPodFields` for the one gate that matters by default in 1.33:
/// `PodLevelResources` is off, so `spec.resources` is dropped unless the stored pod has it.
fn drop_disabled_pod_fields(pod: &mut Pod, old: Option<&Pod>) {
    let in_use = old
        .and_then(|o| o.spec.as_ref())
        .is_some_and(|s| s.resources.is_some());
    if !in_use {
        if let Some(spec) = pod.spec.as_mut() {
            spec.resources = None;
        }
    }
}

/// `applySchedulingGatedCondition`: a pod created with scheduling gates gets
/// `{type: PodScheduled, status: False, reason: SchedulingGated}`. The transition time is the
/// creation time (a plugin has no clock).
fn apply_scheduling_gated_condition(pod: &mut Pod) {
    let gated = pod
        .spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|g| !g.is_empty());
    if !gated {
        return;
    }
    let now = pod.metadata.creation_timestamp.clone();
    let status = pod.status.get_or_insert_with(PodStatus::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    if conditions.iter().any(|c| c.type_ == "PodScheduled") {
        return;
    }
    conditions.push(PodCondition {
        type_: "PodScheduled".into(),
        status: "False".into(),
        reason: Some("SchedulingGated".into()),
        message: Some("Scheduling is blocked due to non-empty scheduling gates".into()),
        last_transition_time: now,
        ..Default::default()
    });
}

/// `mutatePodAffinity` (`MatchLabelKeysInPodAffinity`, on in 1.33): each pod (anti-)affinity
/// term's `matchLabelKeys` / `mismatchLabelKeys` become `In` / `NotIn` requirements on the
/// pod's own label values.
fn mutate_pod_affinity(pod: &mut Pod) {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let Some(affinity) = pod.spec.as_mut().and_then(|s| s.affinity.as_mut()) else {
        return;
    };
    let apply = |selector: &mut Option<LabelSelector>,
                 match_keys: &Option<Vec<String>>,
                 mismatch_keys: &Option<Vec<String>>| {
        let (m, mm) = (
            match_keys.as_deref().unwrap_or_default(),
            mismatch_keys.as_deref().unwrap_or_default(),
        );
        let Some(selector) = selector.as_mut() else {
            return;
        };
        if m.is_empty() && mm.is_empty() {
            return;
        }
        for (keys, op) in [(m, "In"), (mm, "NotIn")] {
            for key in keys {
                if let Some(value) = labels.get(key) {
                    selector
                        .match_expressions
                        .get_or_insert_with(Vec::new)
                        .push(LabelSelectorRequirement {
                            key: key.clone(),
                            operator: op.into(),
                            values: Some(vec![value.clone()]),
                        });
                }
            }
        }
    };
    let mut terms = Vec::new();
    if let Some(a) = affinity.pod_affinity.as_mut() {
        terms.extend(
            a.required_during_scheduling_ignored_during_execution
                .iter_mut()
                .flatten(),
        );
        terms.extend(
            a.preferred_during_scheduling_ignored_during_execution
                .iter_mut()
                .flatten()
                .map(|w| &mut w.pod_affinity_term),
        );
    }
    if let Some(a) = affinity.pod_anti_affinity.as_mut() {
        terms.extend(
            a.required_during_scheduling_ignored_during_execution
                .iter_mut()
                .flatten(),
        );
        terms.extend(
            a.preferred_during_scheduling_ignored_during_execution
                .iter_mut()
                .flatten()
                .map(|w| &mut w.pod_affinity_term),
        );
    }
    for t in terms {
        apply(
            &mut t.label_selector,
            &t.match_label_keys,
            &t.mismatch_label_keys,
        );
    }
}

/// The example pod used by the host's load-time smoke test.
pub fn example() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "example", "namespace": "default", "labels": {"app": "example"}},
        "spec": {
            "containers": [{
                "name": "web",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}
            }]
        }
    })
}

#[cfg(test)]
mod tests;

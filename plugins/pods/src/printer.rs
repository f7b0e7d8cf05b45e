//! The computed cells of `kubectl get pods`: READY, STATUS and RESTARTS as `printPod`
//! (pkg/printers/internalversion/printers.go) computes them.
//!
//! RESTARTS is the restart count (a string cell, as printPod's): printPod appends "(5m ago)"
//! from the last termination time, which needs a clock a plugin does not have.

use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};

/// `node.NodeUnreachablePodReason`.
const NODE_UNREACHABLE_POD_REASON: &str = "NodeLost";
/// `v1.PodReasonSchedulingGated`.
const POD_REASON_SCHEDULING_GATED: &str = "SchedulingGated";

/// What printPod shows for a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRow {
    /// READY: `ready/total`.
    pub ready: String,
    /// STATUS: the phase, or a more precise reason.
    pub status: String,
    /// RESTARTS.
    pub restarts: i64,
}

/// `podutil.IsRestartableInitContainer`: an init container with `restartPolicy: Always`.
fn is_restartable_init_container(c: Option<&Container>) -> bool {
    c.and_then(|c| c.restart_policy.as_deref()) == Some("Always")
}

fn terminated(
    s: &ContainerStatus,
) -> Option<&wasm_apiserver_sdk::k8s_openapi::api::core::v1::ContainerStateTerminated> {
    s.state.as_ref().and_then(|st| st.terminated.as_ref())
}

fn waiting_reason(s: &ContainerStatus) -> Option<&str> {
    s.state
        .as_ref()
        .and_then(|st| st.waiting.as_ref())
        .and_then(|w| w.reason.as_deref())
        .filter(|r| !r.is_empty())
}

/// READINESS GATES as `printPod` shows it: `<true>/<gates>` (a gate counts when the pod has a
/// condition of its type with status `True`), or `<none>` without gates.
pub fn readiness_gates(pod: &Pod) -> String {
    let gates = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_deref())
        .unwrap_or_default();
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let true_conditions = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| c.type_ == g.condition_type)
                .is_some_and(|c| c.status == "True")
        })
        .count();
    format!("{true_conditions}/{}", gates.len())
}

/// `printPod`'s cells, without the clock-dependent parts.
pub fn print_pod(pod: &Pod) -> PodRow {
    let empty_spec = Default::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty_spec);
    let empty_status = Default::default();
    let status = pod.status.as_ref().unwrap_or(&empty_status);
    let init_containers = spec.init_containers.as_deref().unwrap_or_default();
    let conditions = status.conditions.as_deref().unwrap_or_default();

    let mut restarts: i64 = 0;
    let mut restartable_init_restarts: i64 = 0;
    let mut total = spec.containers.len();
    let mut ready = 0;

    let phase = status.phase.clone().unwrap_or_default();
    let mut reason = phase.clone();
    if let Some(r) = status.reason.as_deref().filter(|r| !r.is_empty()) {
        reason = r.to_string();
    }
    // {type: PodScheduled, reason: SchedulingGated} shows as SchedulingGated.
    if conditions.iter().any(|c| {
        c.type_ == "PodScheduled" && c.reason.as_deref() == Some(POD_REASON_SCHEDULING_GATED)
    }) {
        reason = POD_REASON_SCHEDULING_GATED.to_string();
    }

    let init_by_name = |name: &str| init_containers.iter().find(|c| c.name == name);
    total += init_containers
        .iter()
        .filter(|c| is_restartable_init_container(Some(c)))
        .count();

    let mut initializing = false;
    for (i, cs) in status.init_container_statuses.iter().flatten().enumerate() {
        restarts += i64::from(cs.restart_count);
        let restartable = is_restartable_init_container(init_by_name(&cs.name));
        if restartable {
            restartable_init_restarts += i64::from(cs.restart_count);
        }
        let term = terminated(cs);
        if term.is_some_and(|t| t.exit_code == 0) {
            continue;
        }
        if restartable && cs.started == Some(true) {
            if cs.ready {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = term {
            // initialization failed
            reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                Some(r) => format!("Init:{r}"),
                None if t.signal.unwrap_or(0) != 0 => {
                    format!("Init:Signal:{}", t.signal.unwrap_or(0))
                }
                None => format!("Init:ExitCode:{}", t.exit_code),
            };
        } else if let Some(w) = waiting_reason(cs).filter(|w| *w != "PodInitializing") {
            reason = format!("Init:{w}");
        } else {
            reason = format!("Init:{}/{}", i, init_containers.len());
        }
        initializing = true;
        break;
    }

    let initialized = conditions
        .iter()
        .any(|c| c.type_ == "Initialized" && c.status == "True");
    if !initializing || initialized {
        restarts = restartable_init_restarts;
        let mut has_running = false;
        for cs in status.container_statuses.iter().flatten().rev() {
            restarts += i64::from(cs.restart_count);
            let term = terminated(cs);
            if let Some(w) = waiting_reason(cs) {
                reason = w.to_string();
            } else if let Some(r) = term
                .and_then(|t| t.reason.as_deref())
                .filter(|r| !r.is_empty())
            {
                reason = r.to_string();
            } else if let Some(t) = term {
                reason = match t.signal.unwrap_or(0) {
                    0 => format!("ExitCode:{}", t.exit_code),
                    s => format!("Signal:{s}"),
                };
            } else if cs.ready && cs.state.as_ref().is_some_and(|s| s.running.is_some()) {
                has_running = true;
                ready += 1;
            }
        }
        // back to "Running" if at least one container is still running
        if reason == "Completed" && has_running {
            let pod_ready = conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.to_string();
        }
    }

    if pod.metadata.deletion_timestamp.is_some() {
        if status.reason.as_deref() == Some(NODE_UNREACHABLE_POD_REASON) {
            reason = "Unknown".to_string();
        } else if phase != "Failed" && phase != "Succeeded" {
            reason = "Terminating".to_string();
        }
    }

    PodRow {
        ready: format!("{ready}/{total}"),
        status: reason,
        restarts,
    }
}

//! `ValidatePodCreate`, `ValidatePodUpdate`, `ValidatePodStatusUpdate` and their helpers.

use super::common::*;
use super::containers::*;
use super::spec::*;
use crate::defaults::set_defaults_pod;
use crate::quantities;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodSpec, Toleration,
};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use wasm_apiserver_sdk::validation::{self as v, NameRule};
// ---------------------------------------------------------------------------------------------
// Create / update / status update entry points
// ---------------------------------------------------------------------------------------------

/// `ValidatePodCreate`.
pub fn validate_pod_create(pod: &Pod) -> ErrorList {
    let mut errs = validate_pod_metadata_and_spec(pod, Opts::new(None));
    let spec = spec_of(pod);
    let spec_path = Path::new("spec");
    // Ephemeral containers can only be set on update using the ephemeralcontainers subresource.
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(field::forbidden(
            &spec_path.child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    // A Pod cannot be assigned a Node if there are remaining scheduling gates.
    if !s(&spec.node_name).is_empty()
        && spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty())
    {
        errs.push(field::forbidden(
            &spec_path.child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs
}

/// `validatePodMetadataAndSpec`: the name (`ValidatePodName` = DNS-1123 subdomain), the
/// pod-specific annotations, the spec, and the pod-only container checks. The rest of the
/// ObjectMeta validation is the host's.
pub(super) fn validate_pod_metadata_and_spec(pod: &Pod, opts: Opts) -> ErrorList {
    let meta_path = Path::new("metadata");
    let spec_path = Path::new("spec");
    let spec = spec_of(pod);
    let mut errs = v::validate_name(
        pod.metadata.name.as_deref().unwrap_or_default(),
        NameRule::Dns1123Subdomain,
        &meta_path.child("name"),
    );
    errs.extend(validate_pod_specific_annotations(
        pod.metadata.annotations.as_ref(),
        &spec,
        &meta_path.child("annotations"),
        opts,
    ));
    errs.extend(validate_pod_spec(&spec, &spec_path));

    // Projected service account tokens need a service account.
    if s(&spec.service_account_name).is_empty() {
        for (vi, vol) in spec.volumes.iter().flatten().enumerate() {
            let path = spec_path.child("volumes").index(vi).child("projected");
            for (si, src) in vol
                .projected
                .iter()
                .flat_map(|p| p.sources.iter().flatten())
                .enumerate()
            {
                if src.service_account_token.is_some() {
                    errs.push(field::forbidden(
                        &path.child("sources").index(si).child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }

    errs.extend(validate_containers_only_for_pod(
        &spec.containers,
        &spec_path.child("containers"),
    ));
    errs.extend(validate_containers_only_for_pod(
        spec.init_containers.as_deref().unwrap_or_default(),
        &spec_path.child("initContainers"),
    ));
    errs
}

/// `ValidatePodSpecificAnnotations`: the mirror-pod annotation needs a node, the
/// pod-deletion-cost annotation must be an int32.
pub(super) fn validate_pod_specific_annotations(
    annotations: Option<&BTreeMap<String, String>>,
    spec: &PodSpec,
    path: &Path,
    opts: Opts,
) -> ErrorList {
    let mut errs = Vec::new();
    if let Some(value) = annotations.and_then(|a| a.get(MIRROR_POD_ANNOTATION_KEY)) {
        if s(&spec.node_name).is_empty() {
            errs.push(field::invalid(
                &path.key(MIRROR_POD_ANNOTATION_KEY),
                value,
                "must set spec.nodeName if mirror pod annotation is set",
            ));
        }
    }
    if !opts.allow_invalid_pod_deletion_cost && deletion_cost(annotations).is_err() {
        let value = annotations
            .and_then(|a| a.get(POD_DELETION_COST))
            .cloned()
            .unwrap_or_default();
        errs.push(field::invalid(
            &path.key(POD_DELETION_COST),
            value,
            "must be a 32bit integer",
        ));
    }
    errs
}

/// `ValidatePodSpecificAnnotationUpdates`: AppArmor beta annotations and the mirror-pod
/// annotation may not be added, removed or changed; then `ValidatePodSpecificAnnotations`.
pub(super) fn validate_pod_specific_annotation_updates(
    new: &Pod,
    old: &Pod,
    path: &Path,
    opts: Opts,
) -> ErrorList {
    let empty = BTreeMap::new();
    let new_a = new.metadata.annotations.as_ref().unwrap_or(&empty);
    let old_a = old.metadata.annotations.as_ref().unwrap_or(&empty);
    let mut errs = Vec::new();
    for (k, old_v) in old_a {
        if new_a.get(k) == Some(old_v) {
            continue;
        }
        if k.starts_with(APPARMOR_BETA_CONTAINER_ANNOTATION_KEY_PREFIX) {
            errs.push(field::forbidden(
                &path.key(k),
                "may not remove or update AppArmor annotations",
            ));
        }
        if k == MIRROR_POD_ANNOTATION_KEY {
            errs.push(field::forbidden(
                &path.key(k),
                "may not remove or update mirror pod annotation",
            ));
        }
    }
    for k in new_a.keys() {
        if old_a.contains_key(k) {
            continue;
        }
        if k.starts_with(APPARMOR_BETA_CONTAINER_ANNOTATION_KEY_PREFIX) {
            errs.push(field::forbidden(
                &path.key(k),
                "may not add AppArmor annotations",
            ));
        }
        if k == MIRROR_POD_ANNOTATION_KEY {
            errs.push(field::forbidden(
                &path.key(k),
                "may not add mirror pod annotation",
            ));
        }
    }
    errs.extend(validate_pod_specific_annotations(
        Some(new_a),
        &spec_of(new),
        path,
        opts,
    ));
    errs
}

/// `ValidatePodUpdate`: the new pod must be valid, and the spec may change only in
/// `updatablePodSpecFields`. `old` is defaulted first, as kube-apiserver defaults what it reads
/// from storage.
pub fn validate_pod_update(new: &Pod, old: &Pod) -> ErrorList {
    let mut old = old.clone();
    set_defaults_pod(&mut old);
    let opts = Opts::new(Some(&old));
    let meta_path = Path::new("metadata");
    let spec_path = Path::new("spec");
    let mut errs = validate_pod_metadata_and_spec(new, opts);
    errs.extend(validate_pod_specific_annotation_updates(
        new,
        &old,
        &meta_path.child("annotations"),
        opts,
    ));

    let new_spec = spec_of(new);
    let old_spec = spec_of(&old);

    let (container_errs, stop) = validate_container_updates(
        &new_spec.containers,
        &old_spec.containers,
        &spec_path.child("containers"),
    );
    errs.extend(container_errs);
    if stop {
        return errs;
    }
    let (container_errs, stop) = validate_container_updates(
        new_spec.init_containers.as_deref().unwrap_or_default(),
        old_spec.init_containers.as_deref().unwrap_or_default(),
        &spec_path.child("initContainers"),
    );
    errs.extend(container_errs);
    if stop {
        return errs;
    }

    // activeDeadlineSeconds: from nil to a positive value, or down to a lesser non-negative one.
    let ads_path = spec_path.child("activeDeadlineSeconds");
    match (
        new_spec.active_deadline_seconds,
        old_spec.active_deadline_seconds,
    ) {
        (Some(n), old_ads) => {
            if !(0..=MAX_INT32).contains(&n) {
                errs.push(field::invalid(
                    &ads_path,
                    n,
                    v::inclusive_range_error(0, MAX_INT32),
                ));
                return errs;
            }
            if old_ads.is_some_and(|o| o < n) {
                errs.push(field::invalid(
                    &ads_path,
                    n,
                    "must be less than or equal to previous value",
                ));
                return errs;
            }
        }
        (None, Some(_)) => {
            errs.push(field::invalid(
                &ads_path,
                Value::Null,
                "must not update from a positive integer to nil value",
            ));
        }
        (None, None) => {}
    }

    errs.extend(validate_only_added_tolerations(
        new_spec.tolerations.as_deref().unwrap_or_default(),
        old_spec.tolerations.as_deref().unwrap_or_default(),
        &spec_path.child("tolerations"),
    ));
    errs.extend(validate_only_deleted_scheduling_gates(
        &new_spec,
        &old_spec,
        &spec_path.child("schedulingGates"),
    ));

    // Munge the updatable fields, then the specs must be equal.
    let mut munged = new_spec.clone().into_owned();
    for (c, o) in munged.containers.iter_mut().zip(&old_spec.containers) {
        c.image = o.image.clone();
    }
    for (c, o) in munged
        .init_containers
        .iter_mut()
        .flatten()
        .zip(old_spec.init_containers.iter().flatten())
    {
        c.image = o.image.clone();
    }
    munged.active_deadline_seconds = old_spec.active_deadline_seconds;
    munged.scheduling_gates = old_spec.scheduling_gates.clone();
    munged.tolerations = old_spec.tolerations.clone();
    if old_spec
        .termination_grace_period_seconds
        .is_some_and(|t| t < 0)
        && munged.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old_spec.termination_grace_period_seconds;
    }
    let (a, b) = (semantic(&old_spec), semantic(&munged));
    if a != b {
        let mut diff = String::new();
        spec_diff("spec", &a, &b, &mut diff);
        errs.push(field::forbidden(
            &spec_path,
            format!(
                "pod updates may not change fields other than {}\n{}",
                UPDATABLE_POD_SPEC_FIELDS.join(","),
                diff
            ),
        ));
    }
    errs
}

/// The spec as `apiequality.Semantic.DeepEqual` sees it: quantities compared by value, and
/// absent, null, empty and zero values alike (Go's non-pointer fields cannot tell them apart).
pub(super) fn semantic(spec: &PodSpec) -> Value {
    let mut spec = spec.clone();
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        if let Some(r) = c.resources.as_mut() {
            for list in [r.limits.as_mut(), r.requests.as_mut()]
                .into_iter()
                .flatten()
            {
                canonical_list(list);
            }
        }
    }
    if let Some(o) = spec.overhead.as_mut() {
        canonical_list(o);
    }
    let mut value = serde_json::to_value(&spec).unwrap_or(Value::Null);
    prune(&mut value);
    value
}

pub(super) fn canonical_list(list: &mut BTreeMap<String, Quantity>) {
    for q in list.values_mut() {
        if let Some(c) = quantities::canonicalize(&q.0) {
            q.0 = c;
        }
    }
}

/// Remove null, "", false, 0, [] and {} recursively. Returns whether `v` is itself empty.
pub(super) fn prune(v: &mut Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !*b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => {
            for x in a.iter_mut() {
                prune(x);
            }
            a.is_empty()
        }
        Value::Object(m) => {
            let empty: Vec<String> = m
                .iter_mut()
                .filter_map(|(k, x)| prune(x).then(|| k.clone()))
                .collect();
            for k in empty {
                m.remove(&k);
            }
            m.is_empty()
        }
    }
}

/// A short description of what differs between two pruned specs, one `-`/`+` pair per
/// changed value (in place of Go's `cmp.Diff`).
pub(super) fn spec_diff(path: &str, old: &Value, new: &Value, out: &mut String) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                if x != y {
                    spec_diff(&format!("{path}.{k}"), x, y, out);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    spec_diff(&format!("{path}[{i}]"), x, y, out);
                }
            }
        }
        _ => {
            if !old.is_null() {
                out.push_str(&format!("- {path}: {old}\n"));
            }
            if !new.is_null() {
                out.push_str(&format!("+ {path}: {new}\n"));
            }
        }
    }
}

/// `ValidateContainerUpdates`: no containers added or removed (stop), images required and
/// without surrounding whitespace.
pub(super) fn validate_container_updates(
    new: &[Container],
    old: &[Container],
    path: &Path,
) -> (ErrorList, bool) {
    if new.len() != old.len() {
        return (
            vec![field::forbidden(
                path,
                "pod updates may not add or remove containers",
            )],
            true,
        );
    }
    let mut errs = Vec::new();
    for (i, c) in new.iter().enumerate() {
        let image = s(&c.image);
        if image.is_empty() {
            errs.push(field::required(&path.index(i).child("image"), ""));
        }
        if image.trim() != image {
            errs.push(field::invalid(
                &path.index(i).child("image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
    }
    (errs, false)
}

/// `validateOnlyAddedTolerations`: every old toleration must still be there (its
/// `tolerationSeconds` may change); then `ValidateTolerations` on the new list.
pub(super) fn validate_only_added_tolerations(
    new: &[Toleration],
    old: &[Toleration],
    path: &Path,
) -> ErrorList {
    for o in old {
        let found = new.iter().any(|n| {
            let mut o = o.clone();
            o.toleration_seconds = n.toleration_seconds;
            toleration_eq(&o, n)
        });
        if !found {
            return vec![field::forbidden(
                path,
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    validate_tolerations(new, path)
}

pub(super) fn toleration_eq(a: &Toleration, b: &Toleration) -> bool {
    s(&a.key) == s(&b.key)
        && s(&a.operator) == s(&b.operator)
        && s(&a.value) == s(&b.value)
        && s(&a.effect) == s(&b.effect)
        && a.toleration_seconds == b.toleration_seconds
}

/// `validateOnlyDeletedSchedulingGates`.
pub(super) fn validate_only_deleted_scheduling_gates(
    new: &PodSpec,
    old: &PodSpec,
    path: &Path,
) -> ErrorList {
    let new_gates = new.scheduling_gates.as_deref().unwrap_or_default();
    let old_names: BTreeSet<&str> = old
        .scheduling_gates
        .iter()
        .flatten()
        .map(|g| g.name.as_str())
        .collect();
    let mut added: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in new_gates.iter().enumerate() {
        added.insert(g.name.as_str(), i);
    }
    added
        .into_iter()
        .filter(|(name, _)| !old_names.contains(name))
        .map(|(name, i)| {
            field::forbidden(
                &path.index(i).child("name"),
                format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            )
        })
        .collect()
}

/// `ValidatePodStatusUpdate`, plus a check that `status.phase` is one of the five pod phases
/// (kube-apiserver relies on the kubelet for that).
pub fn validate_pod_status_update(new: &Pod, old: &Pod) -> ErrorList {
    let meta_path = Path::new("metadata");
    let mut errs = validate_pod_specific_annotation_updates(
        new,
        old,
        &meta_path.child("annotations"),
        Opts::new(Some(old)),
    );
    let empty = Default::default();
    let status = new.status.as_ref().unwrap_or(&empty);
    let old_status = old.status.as_ref().unwrap_or(&empty);

    // validatePodConditions (kube-apiserver words the path metadata.conditions[i].Type).
    for (i, c) in status.conditions.iter().flatten().enumerate() {
        if ["PodScheduled", "Ready", "Initialized"].contains(&c.type_.as_str()) {
            continue;
        }
        errs.extend(validate_qualified_name(
            &c.type_,
            &meta_path.child("conditions").index(i).child("Type"),
        ));
    }

    let status_path = Path::new("status");
    let (new_spec, old_spec) = (spec_of(new), spec_of(old));
    if s(&new_spec.node_name) != s(&old_spec.node_name) {
        errs.push(field::forbidden(
            &status_path.child("nodeName"),
            "may not be changed directly",
        ));
    }
    let nominated = s(&status.nominated_node_name);
    if nominated != s(&old_status.nominated_node_name) && !nominated.is_empty() {
        errs.extend(v::validate_name(
            nominated,
            NameRule::Dns1123Subdomain,
            &status_path.child("nominatedNodeName"),
        ));
    }

    const PHASES: [&str; 5] = ["Pending", "Running", "Succeeded", "Failed", "Unknown"];
    if let Some(p) = status.phase.as_deref().filter(|p| !p.is_empty()) {
        if !PHASES.contains(&p) {
            errs.push(field::not_supported(
                &status_path.child("phase"),
                p,
                &PHASES,
            ));
        }
    }

    // Pod QoS is immutable.
    errs.extend(v::validate_immutable_field(
        &s(&status.qos_class).to_string(),
        &s(&old_status.qos_class).to_string(),
        &status_path.child("qosClass"),
    ));

    let restart_policy = s(&old_spec.restart_policy);
    errs.extend(validate_container_state_transition(
        status.container_statuses.as_deref().unwrap_or_default(),
        old_status.container_statuses.as_deref().unwrap_or_default(),
        &status_path.child("containerStatuses"),
        restart_policy,
        None,
    ));
    errs.extend(validate_container_state_transition(
        status
            .init_container_statuses
            .as_deref()
            .unwrap_or_default(),
        old_status
            .init_container_statuses
            .as_deref()
            .unwrap_or_default(),
        &status_path.child("initContainerStatuses"),
        restart_policy,
        Some(old_spec.init_containers.as_deref().unwrap_or_default()),
    ));
    // The kubelet never restarts ephemeral containers: an implicit RestartPolicyNever.
    errs.extend(validate_container_state_transition(
        status
            .ephemeral_container_statuses
            .as_deref()
            .unwrap_or_default(),
        old_status
            .ephemeral_container_statuses
            .as_deref()
            .unwrap_or_default(),
        &status_path.child("ephemeralContainerStatuses"),
        "Never",
        None,
    ));

    errs.extend(validate_pod_ips(status));
    errs.extend(validate_host_ips(status));
    errs
}

/// `ValidateContainerStateTransition` / `ValidateInitContainerStateTransition`: unless the
/// restart policy allows it, a terminated container may not go back to a non-terminated state.
/// `init` is the init containers (restartable ones may restart).
pub(super) fn validate_container_state_transition(
    new: &[ContainerStatus],
    old: &[ContainerStatus],
    path: &Path,
    restart_policy: &str,
    init: Option<&[Container]>,
) -> ErrorList {
    let mut errs = Vec::new();
    if restart_policy == "Always" {
        return errs;
    }
    let terminated = |s: &ContainerStatus| {
        s.state
            .as_ref()
            .and_then(|st| st.terminated.as_ref())
            .cloned()
    };
    for (i, o) in old.iter().enumerate() {
        let Some(t) = terminated(o) else { continue };
        if t.exit_code != 0 && restart_policy == "OnFailure" {
            continue;
        }
        if let Some(init) = init {
            let restartable = init
                .iter()
                .find(|c| c.name == o.name)
                .is_some_and(|c| c.restart_policy.as_deref() == Some("Always"));
            if restartable {
                continue;
            }
        }
        for n in new {
            if n.name == o.name && terminated(n).is_none() {
                errs.push(field::forbidden(
                    &path.index(i).child("state"),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
    errs
}

pub(super) fn dual_stack(ips: &[&str]) -> bool {
    let parsed: Vec<_> = ips.iter().filter_map(|ip| v::parse_ip_sloppy(ip)).collect();
    parsed.len() == 2 && parsed[0].is_ipv4() != parsed[1].is_ipv4()
}

/// `validatePodIPs`.
pub(super) fn validate_pod_ips(
    status: &wasm_apiserver_sdk::k8s_openapi::api::core::v1::PodStatus,
) -> ErrorList {
    let path = Path::new("status").child("podIPs");
    let ips = status.pod_ips.as_deref().unwrap_or_default();
    let mut errs: ErrorList = ips
        .iter()
        .enumerate()
        .flat_map(|(i, ip)| validate_ip(&ip.ip, &path.index(i)))
        .collect();
    if ips.len() > 1 {
        let list: Vec<&str> = ips.iter().map(|ip| ip.ip.as_str()).collect();
        if !dual_stack(&list) {
            errs.push(field::invalid(
                &path,
                ips,
                "may specify no more than one IP for each IP family",
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, ip) in ips.iter().enumerate() {
            if !seen.insert(ip.ip.as_str()) {
                errs.push(field::duplicate(&path.index(i), ip));
            }
        }
    }
    errs
}

/// `validateHostIPs`.
pub(super) fn validate_host_ips(
    status: &wasm_apiserver_sdk::k8s_openapi::api::core::v1::PodStatus,
) -> ErrorList {
    let ips = status.host_ips.as_deref().unwrap_or_default();
    let mut errs = Vec::new();
    if ips.is_empty() {
        return errs;
    }
    let path = Path::new("status").child("hostIPs");
    if s(&status.host_ip) != ips[0].ip {
        errs.push(field::invalid(
            &path.index(0).child("ip"),
            &ips[0].ip,
            "must be equal to `hostIP`",
        ));
    }
    for (i, ip) in ips.iter().enumerate() {
        errs.extend(validate_ip(&ip.ip, &path.index(i)));
    }
    if ips.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, ip) in ips.iter().enumerate() {
            if !seen.insert(ip.ip.as_str()) {
                errs.push(field::duplicate(&path.index(i), ip));
            }
        }
        let list: Vec<&str> = ips.iter().map(|ip| ip.ip.as_str()).collect();
        if !dual_stack(&list) {
            errs.push(field::invalid(
                &path,
                ips,
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    errs
}

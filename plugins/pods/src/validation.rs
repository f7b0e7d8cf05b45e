//! Pod validation, ported from pkg/apis/core/validation/validation.go: `ValidatePodCreate`,
//! `ValidatePodUpdate`, `ValidatePodStatusUpdate` and what they call (`ValidatePodSpec`,
//! `validateContainers`, `validateInitContainers`, `validateContainerCommon`,
//! `ValidateResourceRequirements`, `validateContainerPorts`, `ValidateVolumes`,
//! `ValidateVolumeMounts`, `ValidateTolerations`, probes and lifecycle handlers, …), with the
//! `PodValidationOptions` kube-apiserver 1.33 uses for pods.
//!
//! Field paths, error types and details are Kubernetes'. Maps are walked in key order (Go walks
//! them in random order). Not ported (documented gaps): per-volume-source checks, security
//! contexts, affinity, topology spread constraints, OS-specific rules, host aliases, seccomp and
//! AppArmor annotation consistency, per-entry DNS search validation, ephemeral containers beyond
//! "cannot be set on create", and the gated-pod relaxations of `ValidatePodUpdate`.

use crate::defaults::set_defaults_pod;
use crate::quantities;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{
    Container, ContainerPort, ContainerStatus, EnvVar, Lifecycle, LifecycleHandler, Pod,
    PodDNSConfig, PodSpec, Probe, ResourceRequirements, Toleration, Volume, VolumeMount,
};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use wasm_apiserver_sdk::validation::{self as v, NameRule};

/// `core.MirrorPodAnnotationKey`.
const MIRROR_POD_ANNOTATION_KEY: &str = "kubernetes.io/config.mirror";
/// `core.PodDeletionCost`.
const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// `v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix`.
const APPARMOR_BETA_CONTAINER_ANNOTATION_KEY_PREFIX: &str =
    "container.apparmor.security.beta.kubernetes.io/";

const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";
const IS_NOT_INTEGER_ERROR_MSG: &str = "must be an integer";
const INVALID_IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const MAX_INT32: i64 = i32::MAX as i64;

/// `updatablePodSpecFields`.
const UPDATABLE_POD_SPEC_FIELDS: [&str; 5] = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/// The `PodValidationOptions` that matter here (`GetValidationOptionsFromPodSpecAndMeta`).
#[derive(Clone, Copy, Debug, Default)]
struct Opts {
    /// The old pod already had an invalid pod-deletion-cost annotation.
    allow_invalid_pod_deletion_cost: bool,
}

impl Opts {
    fn new(old: Option<&Pod>) -> Opts {
        let old_invalid =
            old.is_some_and(|o| deletion_cost(o.metadata.annotations.as_ref()).is_err());
        Opts {
            allow_invalid_pod_deletion_cost: old_invalid,
        }
    }
}

fn spec_of(pod: &Pod) -> std::borrow::Cow<'_, PodSpec> {
    match pod.spec.as_ref() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(PodSpec::default()),
    }
}

fn s(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or_default()
}

fn invalid_for_each(path: &Path, value: &str, msgs: Vec<String>) -> ErrorList {
    msgs.into_iter()
        .map(|m| field::invalid(path, value, m))
        .collect()
}

/// `ValidateDNS1123Label`.
fn validate_dns1123_label(value: &str, path: &Path) -> ErrorList {
    invalid_for_each(path, value, v::is_dns1123_label(value))
}

/// `ValidateQualifiedName` / `ValidateLabelName`.
fn validate_qualified_name(value: &str, path: &Path) -> ErrorList {
    invalid_for_each(path, value, v::is_qualified_name(value))
}

/// `ValidateNonnegativeField`.
fn validate_nonnegative(value: i64, path: &Path) -> ErrorList {
    if value < 0 {
        vec![field::invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    } else {
        Vec::new()
    }
}

/// `validation.IsValidIP`.
fn validate_ip(value: &str, path: &Path) -> ErrorList {
    match v::parse_ip_sloppy(value) {
        Some(_) => Vec::new(),
        None => vec![field::invalid(path, value, INVALID_IP_MSG)],
    }
}

/// `helper.GetDeletionCostFromPodAnnotations`: the annotation, if present, must be a 32-bit
/// integer without a plus sign or leading zeros.
fn deletion_cost(annotations: Option<&BTreeMap<String, String>>) -> Result<(), ()> {
    let Some(value) = annotations.and_then(|a| a.get(POD_DELETION_COST)) else {
        return Ok(());
    };
    let first_ok = match value.as_bytes().first() {
        Some(b'-') => true,
        Some(b'0') => value == "0",
        Some(b'1'..=b'9') => true,
        _ => false,
    };
    if first_ok && value.parse::<i32>().is_ok() {
        Ok(())
    } else {
        Err(())
    }
}

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
fn validate_pod_metadata_and_spec(pod: &Pod, opts: Opts) -> ErrorList {
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
fn validate_pod_specific_annotations(
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
fn validate_pod_specific_annotation_updates(
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
fn semantic(spec: &PodSpec) -> Value {
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

fn canonical_list(list: &mut BTreeMap<String, Quantity>) {
    for q in list.values_mut() {
        if let Some(c) = quantities::canonicalize(&q.0) {
            q.0 = c;
        }
    }
}

/// Remove null, "", false, 0, [] and {} recursively. Returns whether `v` is itself empty.
fn prune(v: &mut Value) -> bool {
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
fn spec_diff(path: &str, old: &Value, new: &Value, out: &mut String) {
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
fn validate_container_updates(
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
fn validate_only_added_tolerations(
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

fn toleration_eq(a: &Toleration, b: &Toleration) -> bool {
    s(&a.key) == s(&b.key)
        && s(&a.operator) == s(&b.operator)
        && s(&a.value) == s(&b.value)
        && s(&a.effect) == s(&b.effect)
        && a.toleration_seconds == b.toleration_seconds
}

/// `validateOnlyDeletedSchedulingGates`.
fn validate_only_deleted_scheduling_gates(new: &PodSpec, old: &PodSpec, path: &Path) -> ErrorList {
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
fn validate_container_state_transition(
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

fn dual_stack(ips: &[&str]) -> bool {
    let parsed: Vec<_> = ips.iter().filter_map(|ip| v::parse_ip_sloppy(ip)).collect();
    parsed.len() == 2 && parsed[0].is_ipv4() != parsed[1].is_ipv4()
}

/// `validatePodIPs`.
fn validate_pod_ips(
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
fn validate_host_ips(
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
fn validate_restart_policy(policy: Option<&str>, path: &Path) -> ErrorList {
    const POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];
    match policy.unwrap_or_default() {
        p if POLICIES.contains(&p) => Vec::new(),
        "" => vec![field::required(path, "")],
        p => vec![field::not_supported(path, p, &POLICIES)],
    }
}

/// `validateDNSPolicy`.
fn validate_dns_policy(policy: Option<&str>, path: &Path) -> ErrorList {
    const POLICIES: [&str; 4] = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    match policy.unwrap_or_default() {
        p if POLICIES.contains(&p) => Vec::new(),
        "" => vec![field::required(path, "")],
        p => vec![field::not_supported(path, p, &POLICIES)],
    }
}

/// `validatePodDNSConfig` (without the per-entry search-domain check).
fn validate_pod_dns_config(config: Option<&PodDNSConfig>, policy: &str, path: &Path) -> ErrorList {
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
fn validate_pod_host_network_deps(spec: &PodSpec, path: &Path) -> ErrorList {
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
fn validate_tolerations(tolerations: &[Toleration], path: &Path) -> ErrorList {
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

// ---------------------------------------------------------------------------------------------
// Volumes
// ---------------------------------------------------------------------------------------------

/// `ValidateVolumes` (names and the one-source rule): the valid volume names, and the errors.
fn validate_volumes(volumes: &[Volume], path: &Path) -> (BTreeSet<String>, ErrorList) {
    let mut names = BTreeSet::new();
    let mut errs = Vec::new();
    for (i, vol) in volumes.iter().enumerate() {
        let idx = path.index(i);
        let name_path = idx.child("name");
        let sources = crate::defaults::volume_sources(vol);
        let mut el = Vec::new();
        match sources.as_slice() {
            [] => el.push(field::required(&idx, "must specify a volume type")),
            [_] => {}
            [_, rest @ ..] => {
                for src in rest {
                    el.push(field::forbidden(
                        &idx.child(src),
                        "may not specify more than 1 volume type",
                    ));
                }
            }
        }
        if vol.name.is_empty() {
            el.push(field::required(&name_path, ""));
        } else {
            el.extend(validate_dns1123_label(&vol.name, &name_path));
        }
        if names.contains(&vol.name) {
            el.push(field::duplicate(&name_path, &vol.name));
        }
        if el.is_empty() {
            names.insert(vol.name.clone());
        } else {
            errs.extend(el);
        }
    }
    (names, errs)
}

/// `ValidateVolumeMounts` (name, mount path, uniqueness).
fn validate_volume_mounts(
    mounts: &[VolumeMount],
    volumes: &BTreeSet<String>,
    path: &Path,
) -> ErrorList {
    let mut errs = Vec::new();
    let mut mount_points = BTreeSet::new();
    for (i, m) in mounts.iter().enumerate() {
        // Paths are built only for an error.
        let idx = || path.index(i);
        if m.name.is_empty() {
            errs.push(field::required(&idx().child("name"), ""));
        }
        if !volumes.contains(&m.name) {
            errs.push(field::not_found(&idx().child("name"), &m.name));
        }
        if m.mount_path.is_empty() {
            errs.push(field::required(&idx().child("mountPath"), ""));
        }
        if !mount_points.insert(m.mount_path.as_str()) {
            errs.push(field::invalid(
                &idx().child("mountPath"),
                &m.mount_path,
                "must be unique",
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------------------------

/// `validateContainers`: at least one; each valid; names unique; probes and lifecycle;
/// `restartPolicy` only for init containers; host ports unique across all.
fn validate_containers(
    containers: &[Container],
    vols: &BTreeSet<String>,
    claims: &BTreeSet<&str>,
    grace: Option<i64>,
    path: &Path,
    pod_restart_policy: &str,
) -> ErrorList {
    if containers.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let idx = path.index(i);
        errs.extend(validate_container_common(
            c,
            vols,
            claims,
            &idx,
            pod_restart_policy,
        ));
        if !names.insert(c.name.as_str()) {
            errs.push(field::duplicate(&idx.child("name"), &c.name));
        }
        if let Some(l) = c.lifecycle.as_ref() {
            errs.extend(validate_lifecycle(l, grace, &idx.child("lifecycle")));
        }
        errs.extend(validate_liveness_probe(
            c.liveness_probe.as_ref(),
            grace,
            &idx.child("livenessProbe"),
        ));
        errs.extend(validate_readiness_probe(
            c.readiness_probe.as_ref(),
            grace,
            &idx.child("readinessProbe"),
        ));
        errs.extend(validate_startup_probe(
            c.startup_probe.as_ref(),
            grace,
            &idx.child("startupProbe"),
        ));
        if c.restart_policy.is_some() {
            errs.push(field::forbidden(
                &idx.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errs.extend(check_host_port_conflicts(containers, path));
    errs
}

/// `validateInitContainers`: each valid; names unique across init and regular containers;
/// `restartPolicy` only `Always` (sidecars), which alone may have probes and lifecycle hooks.
fn validate_init_containers(
    containers: &[Container],
    regular: &[Container],
    vols: &BTreeSet<String>,
    claims: &BTreeSet<&str>,
    grace: Option<i64>,
    path: &Path,
    pod_restart_policy: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let mut names: BTreeSet<&str> = regular.iter().map(|c| c.name.as_str()).collect();
    for (i, c) in containers.iter().enumerate() {
        let idx = path.index(i);
        errs.extend(validate_container_common(
            c,
            vols,
            claims,
            &idx,
            pod_restart_policy,
        ));
        let mut restart_always = false;
        if let Some(rp) = c.restart_policy.as_deref() {
            if rp != "Always" {
                errs.push(field::not_supported(
                    &idx.child("restartPolicy"),
                    rp,
                    &["Always"],
                ));
            }
            restart_always = rp == "Always";
        }
        if names.contains(c.name.as_str()) {
            errs.push(field::duplicate(&idx.child("name"), &c.name));
        } else if !c.name.is_empty() {
            names.insert(c.name.as_str());
        }
        // Init containers run one by one: host ports are checked per container (and, as in
        // kube-apiserver, reported at index 0).
        errs.extend(check_host_port_conflicts(std::slice::from_ref(c), path));
        if restart_always {
            if let Some(l) = c.lifecycle.as_ref() {
                errs.extend(validate_lifecycle(l, grace, &idx.child("lifecycle")));
            }
            errs.extend(validate_liveness_probe(
                c.liveness_probe.as_ref(),
                grace,
                &idx.child("livenessProbe"),
            ));
            errs.extend(validate_readiness_probe(
                c.readiness_probe.as_ref(),
                grace,
                &idx.child("readinessProbe"),
            ));
            errs.extend(validate_startup_probe(
                c.startup_probe.as_ref(),
                grace,
                &idx.child("startupProbe"),
            ));
        } else {
            const MSG: &str = "may not be set for init containers without restartPolicy=Always";
            if c.lifecycle.is_some() {
                errs.push(field::forbidden(&idx.child("lifecycle"), MSG));
            }
            if c.liveness_probe.is_some() {
                errs.push(field::forbidden(&idx.child("livenessProbe"), MSG));
            }
            if c.readiness_probe.is_some() {
                errs.push(field::forbidden(&idx.child("readinessProbe"), MSG));
            }
            if c.startup_probe.is_some() {
                errs.push(field::forbidden(&idx.child("startupProbe"), MSG));
            }
        }
    }
    errs
}

/// `validateContainerCommon`: name, image, termination message policy, ports, env, volume
/// mounts, pull policy, resources, resize policy.
fn validate_container_common(
    c: &Container,
    vols: &BTreeSet<String>,
    claims: &BTreeSet<&str>,
    path: &Path,
    pod_restart_policy: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let name_path = path.child("name");
    if c.name.is_empty() {
        errs.push(field::required(&name_path, ""));
    } else {
        errs.extend(validate_dns1123_label(&c.name, &name_path));
    }
    if s(&c.image).is_empty() {
        errs.push(field::required(&path.child("image"), ""));
    }
    const TMP: [&str; 2] = ["File", "FallbackToLogsOnError"];
    match s(&c.termination_message_policy) {
        p if TMP.contains(&p) => {}
        "" => errs.push(field::required(&path.child("terminationMessagePolicy"), "")),
        p => errs.push(field::not_supported(
            &path.child("terminationMessagePolicy"),
            p,
            &TMP,
        )),
    }
    errs.extend(validate_container_ports(
        c.ports.as_deref().unwrap_or_default(),
        &path.child("ports"),
    ));
    errs.extend(validate_env(
        c.env.as_deref().unwrap_or_default(),
        &path.child("env"),
    ));
    errs.extend(validate_volume_mounts(
        c.volume_mounts.as_deref().unwrap_or_default(),
        vols,
        &path.child("volumeMounts"),
    ));
    const PULL: [&str; 3] = ["Always", "IfNotPresent", "Never"];
    match s(&c.image_pull_policy) {
        p if PULL.contains(&p) => {}
        "" => errs.push(field::required(&path.child("imagePullPolicy"), "")),
        p => errs.push(field::not_supported(
            &path.child("imagePullPolicy"),
            p,
            &PULL,
        )),
    }
    let empty = ResourceRequirements::default();
    errs.extend(validate_resource_requirements(
        c.resources.as_ref().unwrap_or(&empty),
        claims,
        &path.child("resources"),
    ));
    errs.extend(validate_resize_policy(
        c,
        &path.child("resizePolicy"),
        pod_restart_policy,
    ));
    errs
}

/// `validateContainerOnlyForPod`: no whitespace around the image.
fn validate_containers_only_for_pod(containers: &[Container], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        let image = s(&c.image);
        if image.trim() != image {
            errs.push(field::invalid(
                &path.index(i).child("image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
    }
    errs
}

/// `validateContainerPorts`.
fn validate_container_ports(ports: &[ContainerPort], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        // Paths are built only for an error.
        let idx = || path.index(i);
        if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
            let msgs = v::is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.extend(invalid_for_each(&idx().child("name"), name, msgs));
            } else if !names.insert(name) {
                errs.push(field::duplicate(&idx().child("name"), name));
            }
        }
        if p.container_port == 0 {
            errs.push(field::required(&idx().child("containerPort"), ""));
        } else {
            for m in v::is_valid_port_num(p.container_port) {
                errs.push(field::invalid(
                    &idx().child("containerPort"),
                    p.container_port,
                    m,
                ));
            }
        }
        if let Some(hp) = p.host_port.filter(|hp| *hp != 0) {
            for m in v::is_valid_port_num(hp) {
                errs.push(field::invalid(&idx().child("hostPort"), hp, m));
            }
        }
        const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
        match s(&p.protocol) {
            "" => errs.push(field::required(&idx().child("protocol"), "")),
            proto if !PROTOCOLS.contains(&proto) => errs.push(field::not_supported(
                &idx().child("protocol"),
                proto,
                &PROTOCOLS,
            )),
            _ => {}
        }
    }
    errs
}

/// `AccumulateUniqueHostPorts` / `checkHostPortConflicts`.
fn check_host_port_conflicts(containers: &[Container], path: &Path) -> ErrorList {
    let mut seen = BTreeSet::new();
    let mut errs = Vec::new();
    for (ci, c) in containers.iter().enumerate() {
        for (pi, p) in c.ports.iter().flatten().enumerate() {
            let hp = p.host_port.unwrap_or(0);
            if hp == 0 {
                continue;
            }
            let key = format!("{}/{}/{}", s(&p.protocol), s(&p.host_ip), hp);
            if seen.contains(&key) {
                errs.push(field::duplicate(
                    &path.index(ci).child("ports").index(pi).child("hostPort"),
                    &key,
                ));
            } else {
                seen.insert(key);
            }
        }
    }
    errs
}

/// `ValidateEnv` with `AllowRelaxedEnvironmentVariableValidation` (on in 1.33).
fn validate_env(vars: &[EnvVar], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (i, e) in vars.iter().enumerate() {
        // The path is built only for an error.
        let name_path = || path.index(i).child("name");
        if e.name.is_empty() {
            errs.push(field::required(&name_path(), ""));
        } else if e
            .name
            .chars()
            .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
        {
            errs.push(field::invalid(
                &name_path(),
                &e.name,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
    }
    errs
}

/// `validateResizePolicy`.
fn validate_resize_policy(c: &Container, path: &Path, pod_restart_policy: &str) -> ErrorList {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, p) in c.resize_policy.iter().flatten().enumerate() {
        if !seen.insert(p.resource_name.as_str()) {
            errs.push(field::duplicate(&path.index(i), &p.resource_name));
        }
        match p.resource_name.as_str() {
            "cpu" | "memory" => {}
            "" => errs.push(field::required(path, "")),
            r => errs.push(field::not_supported(path, r, &["cpu", "memory"])),
        }
        match p.restart_policy.as_str() {
            "NotRequired" | "RestartContainer" => {}
            "" => errs.push(field::required(path, "")),
            r => errs.push(field::not_supported(
                path,
                r,
                &["NotRequired", "RestartContainer"],
            )),
        }
        if pod_restart_policy == "Never" && p.restart_policy != "NotRequired" {
            errs.push(field::invalid(
                path,
                &p.restart_policy,
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

fn is_hugepage(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// `helper.IsNativeResource`: unprefixed, or in `kubernetes.io/`.
fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `helper.IsExtendedResourceName`.
fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    v::is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `helper.IsOvercommitAllowed`.
fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepage(name)
}

/// `helper.IsStandardContainerResourceName`.
fn is_standard_container_resource_name(name: &str) -> bool {
    ["cpu", "memory", "ephemeral-storage"].contains(&name) || is_hugepage(name)
}

/// `helper.IsStandardResourceName`.
fn is_standard_resource_name(name: &str) -> bool {
    const STANDARD: [&str; 19] = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    ];
    STANDARD.contains(&name) || is_hugepage(name) || name.starts_with("requests.hugepages-")
}

/// `validateContainerResourceName` (with `validateResourceName`).
fn validate_container_resource_name(name: &str, path: &dyn Fn() -> Path) -> ErrorList {
    let msgs = v::is_qualified_name(name);
    let mut errs = if msgs.is_empty() {
        Vec::new()
    } else {
        invalid_for_each(&path(), name, msgs)
    };
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/') {
        if !is_standard_resource_name(name) {
            errs.push(field::invalid(
                &path(),
                name,
                "must be a standard resource type or fully qualified",
            ));
        }
        if !is_standard_container_resource_name(name) {
            errs.push(field::invalid(
                &path(),
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native_resource(name) && !is_extended_resource_name(name) {
        errs.push(field::invalid(
            &path(),
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// `ValidateResourceQuantityValue`, after the syntax check kube-apiserver does when decoding
/// (`ParseQuantity`'s error, reported here as an Invalid field error instead of a 400).
fn validate_resource_quantity_value(
    name: &str,
    q: &Quantity,
    path: &dyn Fn() -> Path,
) -> (Option<i128>, ErrorList) {
    // `quantities::parse` is the SDK parse plus the format check; parse once.
    let parsed = match (
        quantities::has_known_format(&q.0),
        wasm_apiserver_sdk::quantity::parse(&q.0),
    ) {
        (true, Ok(parsed)) => parsed,
        (_, Err(msg)) => return (None, vec![field::invalid(&path(), &q.0, msg)]),
        (false, Ok(_)) => {
            return (
                None,
                vec![field::invalid(
                    &path(),
                    &q.0,
                    wasm_apiserver_sdk::quantity::ERR_SUFFIX,
                )],
            )
        }
    };
    let mut errs = Vec::new();
    if parsed.nanos < 0 {
        errs.push(field::invalid(
            &path(),
            quantities::to_string(parsed, &q.0),
            IS_NEGATIVE_ERROR_MSG,
        ));
    }
    if is_extended_resource_name(name) && parsed.nanos % 1_000_000_000 != 0 {
        errs.push(field::invalid(
            &path(),
            quantities::to_string(parsed, &q.0),
            IS_NOT_INTEGER_ERROR_MSG,
        ));
    }
    (Some(parsed.nanos), errs)
}

/// `ValidateResourceRequirements`: valid names and quantities, requests ≤ limits (equal for
/// resources that cannot be overcommitted), hugepages need cpu or memory, claims exist.
fn validate_resource_requirements(
    req: &ResourceRequirements,
    claims: &BTreeSet<&str>,
    path: &Path,
) -> ErrorList {
    let mut errs = Vec::new();
    let lim_path = path.child("limits");
    let req_path = path.child("requests");
    let (mut lim_cpu_mem, mut req_cpu_mem, mut lim_huge, mut req_huge) =
        (false, false, false, false);
    let empty = BTreeMap::new();
    let limits = req.limits.as_ref().unwrap_or(&empty);
    for (name, q) in limits {
        // The path is built only for an error.
        let p = || lim_path.key(name);
        errs.extend(validate_container_resource_name(name, &p));
        errs.extend(validate_resource_quantity_value(name, q, &p).1);
        lim_huge |= is_hugepage(name);
        lim_cpu_mem |= name == "cpu" || name == "memory";
    }
    for (name, q) in req.requests.iter().flatten() {
        let p = || req_path.key(name);
        errs.extend(validate_container_resource_name(name, &p));
        let (value, e) = validate_resource_quantity_value(name, q, &p);
        errs.extend(e);
        match (value, limits.get(name)) {
            (Some(value), Some(limit)) => {
                if let Some(lim) = quantities::parse(&limit.0) {
                    // The messages' values, built only for an error.
                    let shown =
                        || quantities::to_string(quantities::Quantity::from_nanos(value), &q.0);
                    let limit_shown = || quantities::to_string(lim, &limit.0);
                    if value != lim.nanos && !is_overcommit_allowed(name) {
                        let (shown, limit_shown) = (shown(), limit_shown());
                        errs.push(field::invalid(
                            &req_path,
                            shown,
                            format!("must be equal to {name} limit of {limit_shown}"),
                        ));
                    } else if value > lim.nanos {
                        let (shown, limit_shown) = (shown(), limit_shown());
                        errs.push(field::invalid(
                            &req_path,
                            shown,
                            format!("must be less than or equal to {name} limit of {limit_shown}"),
                        ));
                    }
                }
            }
            (_, None) if !is_overcommit_allowed(name) => {
                errs.push(field::required(
                    &lim_path,
                    "Limit must be set for non overcommitable resources",
                ));
            }
            _ => {}
        }
        req_huge |= is_hugepage(name);
        req_cpu_mem |= name == "cpu" || name == "memory";
    }
    if !lim_cpu_mem && !req_cpu_mem && (req_huge || lim_huge) {
        errs.push(field::forbidden(path, "HugePages require cpu or memory"));
    }
    // validateResourceClaimNames
    let mut seen = BTreeSet::new();
    for (i, c) in req.claims.iter().flatten().enumerate() {
        let p = path.child("claims").index(i);
        if c.name.is_empty() {
            errs.push(field::required(&p, ""));
            continue;
        }
        if !seen.insert(c.name.as_str()) {
            errs.push(field::duplicate(&p, &c.name));
        }
        if !claims.contains(c.name.as_str()) {
            let mut e = field::not_found(&p, &c.name);
            e.detail = if claims.is_empty() {
                "must be one of the names in pod.spec.resourceClaims which is empty".to_string()
            } else {
                let names: Vec<&str> = claims.iter().copied().collect();
                format!(
                    "must be one of the names in pod.spec.resourceClaims: {}",
                    names.join(", ")
                )
            };
            errs.push(e);
        }
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Probes and lifecycle handlers
// ---------------------------------------------------------------------------------------------

/// `ValidatePortNumOrName`.
fn validate_port_num_or_name(port: &IntOrString, path: &Path) -> ErrorList {
    match port {
        IntOrString::Int(n) => v::is_valid_port_num(*n)
            .into_iter()
            .map(|m| field::invalid(path, n, m))
            .collect(),
        IntOrString::String(name) => invalid_for_each(path, name, v::is_valid_port_name(name)),
    }
}

/// `validateHandler` over the handler fields that are set (`exec`, `httpGet`, `tcpSocket`,
/// `grpc`, `sleep`), in that order.
fn validate_handler(
    set: [bool; 5],
    typed: Handler<'_>,
    grace: Option<i64>,
    path: &Path,
) -> ErrorList {
    let mut errs = Vec::new();
    let mut count = 0;
    for (kind, set) in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"]
        .into_iter()
        .zip(set)
    {
        if !set {
            continue;
        }
        let p = path.child(kind);
        if count > 0 {
            errs.push(field::forbidden(
                &p,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match kind {
            "exec" => {
                let cmd = typed.exec.and_then(|e| e.command.as_ref());
                if cmd.is_none_or(|c| c.is_empty()) {
                    errs.push(field::required(&p.child("command"), ""));
                }
            }
            "httpGet" => {
                if let Some(h) = typed.http_get {
                    if s(&h.path).is_empty() {
                        errs.push(field::required(&p.child("path"), ""));
                    }
                    errs.extend(validate_port_num_or_name(&h.port, &p.child("port")));
                    let scheme = s(&h.scheme);
                    if scheme != "HTTP" && scheme != "HTTPS" {
                        errs.push(field::not_supported(
                            &p.child("scheme"),
                            scheme,
                            &["HTTP", "HTTPS"],
                        ));
                    }
                }
            }
            "tcpSocket" => {
                if let Some(t) = typed.tcp_socket {
                    errs.extend(validate_port_num_or_name(&t.port, &p.child("port")));
                }
            }
            "grpc" => {
                if let Some(g) = typed.grpc_port {
                    errs.extend(validate_port_num_or_name(
                        &IntOrString::Int(g),
                        &p.child("port"),
                    ));
                }
            }
            _ => {
                // validateSleepAction with AllowPodLifecycleSleepActionZeroValue (on in 1.33).
                if let (Some(sec), Some(grace)) = (typed.sleep_seconds, grace) {
                    if sec < 0 || sec > grace {
                        errs.push(field::invalid(
                            &p,
                            sec,
                            format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})"),
                        ));
                    }
                }
            }
        }
    }
    if count == 0 {
        errs.push(field::required(path, "must specify a handler type"));
    }
    errs
}

/// The handler fields of a probe or lifecycle handler.
#[derive(Clone, Copy, Default)]
struct Handler<'a> {
    exec: Option<&'a wasm_apiserver_sdk::k8s_openapi::api::core::v1::ExecAction>,
    http_get: Option<&'a wasm_apiserver_sdk::k8s_openapi::api::core::v1::HTTPGetAction>,
    tcp_socket: Option<&'a wasm_apiserver_sdk::k8s_openapi::api::core::v1::TCPSocketAction>,
    grpc_port: Option<i32>,
    sleep_seconds: Option<i64>,
}

/// The handler kinds a probe or lifecycle handler sets (the keys its JSON would carry).
fn handler_kinds(h: Handler<'_>, sleep: bool) -> [bool; 5] {
    [
        h.exec.is_some(),
        h.http_get.is_some(),
        h.tcp_socket.is_some(),
        h.grpc_port.is_some(),
        sleep,
    ]
}

/// `validateLifecycle`.
fn validate_lifecycle(l: &Lifecycle, grace: Option<i64>, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (name, h) in [("postStart", &l.post_start), ("preStop", &l.pre_stop)] {
        if let Some(h) = h {
            let typed = lifecycle_handler(h);
            errs.extend(validate_handler(
                handler_kinds(typed, h.sleep.is_some()),
                typed,
                grace,
                &path.child(name),
            ));
        }
    }
    errs
}

fn lifecycle_handler(h: &LifecycleHandler) -> Handler<'_> {
    Handler {
        exec: h.exec.as_ref(),
        http_get: h.http_get.as_ref(),
        tcp_socket: h.tcp_socket.as_ref(),
        grpc_port: None,
        sleep_seconds: h.sleep.as_ref().map(|s| s.seconds),
    }
}

/// `validateProbe`.
fn validate_probe(p: &Probe, grace: Option<i64>, path: &Path) -> ErrorList {
    let typed = Handler {
        exec: p.exec.as_ref(),
        http_get: p.http_get.as_ref(),
        tcp_socket: p.tcp_socket.as_ref(),
        grpc_port: p.grpc.as_ref().map(|g| g.port),
        sleep_seconds: None,
    };
    let mut errs = validate_handler(handler_kinds(typed, false), typed, grace, path);
    for (name, value) in [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ] {
        let value = i64::from(value.unwrap_or(0));
        // The path is built only for an error.
        if value < 0 {
            errs.extend(validate_nonnegative(value, &path.child(name)));
        }
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        errs.push(field::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must be greater than 0",
        ));
    }
    errs
}

/// `validateLivenessProbe`.
fn validate_liveness_probe(p: Option<&Probe>, grace: Option<i64>, path: &Path) -> ErrorList {
    let Some(p) = p else { return Vec::new() };
    let mut errs = validate_probe(p, grace, path);
    let st = p.success_threshold.unwrap_or(0);
    if st != 1 {
        errs.push(field::invalid(
            &path.child("successThreshold"),
            st,
            "must be 1",
        ));
    }
    errs
}

/// `validateReadinessProbe`.
fn validate_readiness_probe(p: Option<&Probe>, grace: Option<i64>, path: &Path) -> ErrorList {
    let Some(p) = p else { return Vec::new() };
    let mut errs = validate_probe(p, grace, path);
    if let Some(t) = p.termination_grace_period_seconds {
        errs.push(field::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must not be set for readinessProbes",
        ));
    }
    errs
}

/// `validateStartupProbe`.
fn validate_startup_probe(p: Option<&Probe>, grace: Option<i64>, path: &Path) -> ErrorList {
    validate_liveness_probe(p, grace, path)
}

/// `IsDNS1123Label`'s problems with `value` (for the hostname warning of `WarningsOnCreate`).
pub fn dns_label_problems(value: &str) -> Vec<String> {
    v::is_dns1123_label(value)
}

//! The defaults kube-apiserver's scheme applies to every Pod it decodes (request bodies and
//! stored objects alike): `SetObjectDefaults_Pod` (pkg/apis/core/v1/zz_generated.defaults.go),
//! which calls `SetDefaults_Pod`, `SetDefaults_PodSpec`, `SetDefaults_Container`,
//! `SetDefaults_Volume`, `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`,
//! `SetDefaults_ResourceList`, … from pkg/apis/core/v1/defaults.go, plus the declarative
//! `+default` markers of k8s.io/api/core/v1/types.go (`ContainerPort.Protocol = TCP`).
//!
//! Not applied: the defaults of rarely used volume sources (RBD pool, iSCSI interface, Azure
//! disk caching mode, …) and pod-level resources (the `PodLevelResources` gate is off in 1.33).

use crate::quantities;
use std::collections::BTreeMap;
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{
    Container, EphemeralContainer, HTTPGetAction, LifecycleHandler, ObjectFieldSelector, Pod,
    PodSecurityContext, PodSpec, Probe, ResourceRequirements, Volume,
};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// `v1.DefaultTerminationGracePeriodSeconds`.
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// `v1.DefaultSchedulerName`.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
/// `v1.TerminationMessagePathDefault`.
pub const TERMINATION_MESSAGE_PATH_DEFAULT: &str = "/dev/termination-log";
/// `SecretVolumeSourceDefaultMode` and friends: 0644.
const VOLUME_DEFAULT_MODE: i32 = 0o644;

/// `SetObjectDefaults_Pod`: everything the scheme defaults on a Pod. Idempotent.
pub fn set_defaults_pod(pod: &mut Pod) {
    let spec = pod.spec.get_or_insert_with(PodSpec::default);
    set_defaults_pod_requests(spec);
    set_defaults_pod_spec(spec);
    for v in spec.volumes.iter_mut().flatten() {
        set_defaults_volume(v);
    }
    for c in spec.init_containers.iter_mut().flatten() {
        set_defaults_container(c);
    }
    for c in spec.containers.iter_mut() {
        set_defaults_container(c);
    }
    for c in spec.ephemeral_containers.iter_mut().flatten() {
        set_defaults_ephemeral_container(c);
    }
    if let Some(overhead) = spec.overhead.as_mut() {
        set_defaults_resource_list(overhead);
    }
}

/// The Pod-only part of `SetDefaults_Pod`: requests default to limits, `enableServiceLinks`,
/// and host ports for host-network pods.
fn set_defaults_pod_requests(spec: &mut PodSpec) {
    let all = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten());
    for c in all {
        let Some(res) = c.resources.as_mut() else {
            continue;
        };
        let Some(limits) = res.limits.as_ref() else {
            continue;
        };
        let requests = res.requests.get_or_insert_with(BTreeMap::new);
        for (k, v) in limits {
            requests.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    if spec.enable_service_links.is_none() {
        spec.enable_service_links = Some(true);
    }
    if spec.host_network == Some(true) {
        let all = spec
            .containers
            .iter_mut()
            .chain(spec.init_containers.iter_mut().flatten());
        for c in all {
            for p in c.ports.iter_mut().flatten() {
                if p.host_port.unwrap_or(0) == 0 {
                    p.host_port = Some(p.container_port);
                }
            }
        }
    }
}

/// `SetDefaults_PodSpec`.
fn set_defaults_pod_spec(spec: &mut PodSpec) {
    if spec.dns_policy.as_deref().unwrap_or_default().is_empty() {
        spec.dns_policy = Some("ClusterFirst".into());
    }
    if spec
        .restart_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        spec.restart_policy = Some("Always".into());
    }
    if spec.security_context.is_none() {
        spec.security_context = Some(PodSecurityContext::default());
    }
    if spec.termination_grace_period_seconds.is_none() {
        spec.termination_grace_period_seconds = Some(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
    }
    if spec
        .scheduler_name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        spec.scheduler_name = Some(DEFAULT_SCHEDULER_NAME.into());
    }
}

/// The volume sources set on a volume, by JSON name, in key order (what the keys of its JSON
/// other than `name` would be, without serializing it).
macro_rules! volume_sources {
    ($($json:literal => $field:ident),* $(,)?) => {
        /// The JSON names of the sources `v` sets, in key order.
        pub fn volume_sources(v: &Volume) -> Vec<&'static str> {
            let mut out = Vec::new();
            $(if v.$field.is_some() { out.push($json); })*
            out
        }

        #[cfg(test)]
        /// Set every source of `v` to its default (for the test against serialization).
        fn set_every_volume_source(v: &mut Volume) {
            $(v.$field = Some(Default::default());)*
        }

        #[cfg(test)]
        /// Set the `i`-th source only.
        fn set_volume_source(v: &mut Volume, i: usize) {
            let mut n = 0;
            $(if n == i { v.$field = Some(Default::default()); } n += 1;)*
            let _ = n;
        }
    };
}

volume_sources! {
    "awsElasticBlockStore" => aws_elastic_block_store,
    "azureDisk" => azure_disk,
    "azureFile" => azure_file,
    "cephfs" => cephfs,
    "cinder" => cinder,
    "configMap" => config_map,
    "csi" => csi,
    "downwardAPI" => downward_api,
    "emptyDir" => empty_dir,
    "ephemeral" => ephemeral,
    "fc" => fc,
    "flexVolume" => flex_volume,
    "flocker" => flocker,
    "gcePersistentDisk" => gce_persistent_disk,
    "gitRepo" => git_repo,
    "glusterfs" => glusterfs,
    "hostPath" => host_path,
    "image" => image,
    "iscsi" => iscsi,
    "nfs" => nfs,
    "persistentVolumeClaim" => persistent_volume_claim,
    "photonPersistentDisk" => photon_persistent_disk,
    "portworxVolume" => portworx_volume,
    "projected" => projected,
    "quobyte" => quobyte,
    "rbd" => rbd,
    "scaleIO" => scale_io,
    "secret" => secret,
    "storageos" => storageos,
    "vsphereVolume" => vsphere_volume
}

/// `SetDefaults_Volume` (an `emptyDir` when no source is set) and the default modes of
/// secret, configMap, downwardAPI and projected volumes.
fn set_defaults_volume(v: &mut Volume) {
    if volume_sources(v).is_empty() {
        v.empty_dir = Some(Default::default());
    }
    if let Some(s) = v.secret.as_mut() {
        s.default_mode.get_or_insert(VOLUME_DEFAULT_MODE);
    }
    if let Some(s) = v.config_map.as_mut() {
        s.default_mode.get_or_insert(VOLUME_DEFAULT_MODE);
    }
    if let Some(s) = v.downward_api.as_mut() {
        s.default_mode.get_or_insert(VOLUME_DEFAULT_MODE);
        for item in s.items.iter_mut().flatten() {
            item.field_ref
                .as_mut()
                .map(set_defaults_object_field_selector);
        }
    }
    if let Some(s) = v.projected.as_mut() {
        s.default_mode.get_or_insert(VOLUME_DEFAULT_MODE);
    }
    if let Some(s) = v.host_path.as_mut() {
        s.type_.get_or_insert_with(String::new);
    }
}

/// `ParseImageName`'s tag (pkg/util/parsers): the tag after the last `:` of the last path
/// component, `latest` when neither tag nor digest is given, `None` when the reference is not
/// parseable.
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let components: Vec<&str> = name.split('/').collect();
    let has_domain = components.len() > 1
        && (components[0].contains(['.', ':']) || components[0] == "localhost");
    let (last, tag) = match components[components.len() - 1].rsplit_once(':') {
        Some((r, t)) => (r, Some(t)),
        None => (components[components.len() - 1], None),
    };
    // Repository path components must be non-empty and lower case (reference.ParseNormalizedNamed).
    let repo = &components[usize::from(has_domain)..components.len() - 1];
    if repo
        .iter()
        .chain([&last])
        .any(|c| c.is_empty() || c.chars().any(|c| c.is_ascii_uppercase()))
    {
        return None;
    }
    match (tag, digest) {
        (Some(t), _) => Some(t.to_string()),
        (None, None) => Some("latest".into()),
        (None, Some(_)) => Some(String::new()),
    }
}

/// `SetDefaults_Container` plus the generated defaults of a container's ports, probes,
/// lifecycle handlers, env and resources.
pub fn set_defaults_container(c: &mut Container) {
    if c.image_pull_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        let tag = image_tag(c.image.as_deref().unwrap_or_default());
        let policy = if tag.as_deref() == Some("latest") {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.image_pull_policy = Some(policy.into());
    }
    if c.termination_message_path
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        c.termination_message_path = Some(TERMINATION_MESSAGE_PATH_DEFAULT.into());
    }
    if c.termination_message_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        c.termination_message_policy = Some("File".into());
    }
    for p in c.ports.iter_mut().flatten() {
        if p.protocol.as_deref().unwrap_or_default().is_empty() {
            p.protocol = Some("TCP".into());
        }
    }
    for e in c.env.iter_mut().flatten() {
        if let Some(f) = e.value_from.as_mut().and_then(|s| s.field_ref.as_mut()) {
            set_defaults_object_field_selector(f);
        }
    }
    let res = c
        .resources
        .get_or_insert_with(ResourceRequirements::default);
    if let Some(l) = res.limits.as_mut() {
        set_defaults_resource_list(l);
    }
    if let Some(r) = res.requests.as_mut() {
        set_defaults_resource_list(r);
    }
    for p in [
        &mut c.liveness_probe,
        &mut c.readiness_probe,
        &mut c.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        set_defaults_probe(p);
    }
    if let Some(l) = c.lifecycle.as_mut() {
        for h in [&mut l.post_start, &mut l.pre_stop].into_iter().flatten() {
            set_defaults_lifecycle_handler(h);
        }
    }
}

/// `SetDefaults_EphemeralContainer`: the container defaults.
fn set_defaults_ephemeral_container(c: &mut EphemeralContainer) {
    if c.image_pull_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        let tag = image_tag(c.image.as_deref().unwrap_or_default());
        let policy = if tag.as_deref() == Some("latest") {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.image_pull_policy = Some(policy.into());
    }
    if c.termination_message_path
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        c.termination_message_path = Some(TERMINATION_MESSAGE_PATH_DEFAULT.into());
    }
    if c.termination_message_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        c.termination_message_policy = Some("File".into());
    }
}

/// `SetDefaults_ResourceList`: round up to milli precision (and store the canonical form).
pub fn set_defaults_resource_list(list: &mut BTreeMap<String, Quantity>) {
    for q in list.values_mut() {
        q.0 = quantities::default_resource_value(&q.0);
    }
}

/// `SetDefaults_Probe` and the defaults of its handler.
fn set_defaults_probe(p: &mut Probe) {
    if p.timeout_seconds.unwrap_or(0) == 0 {
        p.timeout_seconds = Some(1);
    }
    if p.period_seconds.unwrap_or(0) == 0 {
        p.period_seconds = Some(10);
    }
    if p.success_threshold.unwrap_or(0) == 0 {
        p.success_threshold = Some(1);
    }
    if p.failure_threshold.unwrap_or(0) == 0 {
        p.failure_threshold = Some(3);
    }
    if let Some(h) = p.http_get.as_mut() {
        set_defaults_http_get_action(h);
    }
}

fn set_defaults_lifecycle_handler(h: &mut LifecycleHandler) {
    if let Some(g) = h.http_get.as_mut() {
        set_defaults_http_get_action(g);
    }
}

/// `SetDefaults_HTTPGetAction`.
fn set_defaults_http_get_action(h: &mut HTTPGetAction) {
    if h.path.as_deref().unwrap_or_default().is_empty() {
        h.path = Some("/".into());
    }
    if h.scheme.as_deref().unwrap_or_default().is_empty() {
        h.scheme = Some("HTTP".into());
    }
}

/// `SetDefaults_ObjectFieldSelector`.
fn set_defaults_object_field_selector(f: &mut ObjectFieldSelector) {
    if f.api_version.as_deref().unwrap_or_default().is_empty() {
        f.api_version = Some("v1".into());
    }
}

#[cfg(test)]
mod tests {
    use super::{image_tag, set_every_volume_source, set_volume_source, volume_sources};
    use wasm_apiserver_sdk::k8s_openapi::api::core::v1::Volume;

    /// The keys of the volume's JSON other than `name`, as serialization gives them.
    fn serialized_sources(v: &Volume) -> Vec<String> {
        let j = serde_json::to_value(v).unwrap();
        j.as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "name")
            .cloned()
            .collect()
    }

    #[test]
    fn volume_sources_are_the_serialized_keys() {
        let v = Volume {
            name: "v".into(),
            ..Default::default()
        };
        assert!(volume_sources(&v).is_empty());
        let mut all = v.clone();
        set_every_volume_source(&mut all);
        assert_eq!(volume_sources(&all), serialized_sources(&all));
        assert_eq!(
            volume_sources(&all).len(),
            30,
            "every source of k8s-openapi's Volume"
        );
        for i in 0..30 {
            let mut one = v.clone();
            set_volume_source(&mut one, i);
            assert_eq!(volume_sources(&one), serialized_sources(&one), "source {i}");
        }
    }

    #[test]
    fn image_tags_parse_like_docker_references() {
        assert_eq!(image_tag("nginx").as_deref(), Some("latest"));
        assert_eq!(image_tag("nginx:latest").as_deref(), Some("latest"));
        assert_eq!(image_tag("nginx:1.27").as_deref(), Some("1.27"));
        assert_eq!(
            image_tag("registry:5000/team/app").as_deref(),
            Some("latest")
        );
        assert_eq!(
            image_tag("registry:5000/team/app:v2").as_deref(),
            Some("v2")
        );
        assert_eq!(image_tag("nginx@sha256:abc").as_deref(), Some(""));
        assert_eq!(image_tag("Nginx"), None);
        assert_eq!(image_tag(""), None);
    }
}

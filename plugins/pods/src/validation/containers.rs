//! `validateContainers`, `validateInitContainers`, `validateContainerCommon`, ports, env, resize policy.

use super::common::*;
use super::probes::*;
use super::resources::*;
use super::volumes::*;
use std::collections::BTreeSet;
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, ResourceRequirements,
};
use wasm_apiserver_sdk::validation::{self as v};
// ---------------------------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------------------------

/// `validateContainers`: at least one; each valid; names unique; probes and lifecycle;
/// `restartPolicy` only for init containers; host ports unique across all.
pub(super) fn validate_containers(
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
pub(super) fn validate_init_containers(
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
pub(super) fn validate_container_common(
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
pub(super) fn validate_containers_only_for_pod(containers: &[Container], path: &Path) -> ErrorList {
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
pub(super) fn validate_container_ports(ports: &[ContainerPort], path: &Path) -> ErrorList {
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
pub(super) fn check_host_port_conflicts(containers: &[Container], path: &Path) -> ErrorList {
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
pub(super) fn validate_env(vars: &[EnvVar], path: &Path) -> ErrorList {
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
pub(super) fn validate_resize_policy(
    c: &Container,
    path: &Path,
    pod_restart_policy: &str,
) -> ErrorList {
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

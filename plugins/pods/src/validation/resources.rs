//! `ValidateResourceRequirements` and resource names and quantities.

use super::common::*;
use crate::quantities;
use std::collections::{BTreeMap, BTreeSet};
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::ResourceRequirements;
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use wasm_apiserver_sdk::validation::{self as v};
// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

pub(super) fn is_hugepage(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// `helper.IsNativeResource`: unprefixed, or in `kubernetes.io/`.
pub(super) fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `helper.IsExtendedResourceName`.
pub(super) fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    v::is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `helper.IsOvercommitAllowed`.
pub(super) fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepage(name)
}

/// `helper.IsStandardContainerResourceName`.
pub(super) fn is_standard_container_resource_name(name: &str) -> bool {
    ["cpu", "memory", "ephemeral-storage"].contains(&name) || is_hugepage(name)
}

/// `helper.IsStandardResourceName`.
pub(super) fn is_standard_resource_name(name: &str) -> bool {
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
pub(super) fn validate_container_resource_name(name: &str, path: &dyn Fn() -> Path) -> ErrorList {
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
pub(super) fn validate_resource_quantity_value(
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
pub(super) fn validate_resource_requirements(
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

//! `ValidateVolumes` and `ValidateVolumeMounts`.

use super::common::*;
use std::collections::BTreeSet;
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{Volume, VolumeMount};
// ---------------------------------------------------------------------------------------------
// Volumes
// ---------------------------------------------------------------------------------------------

/// `ValidateVolumes` (names and the one-source rule): the valid volume names, and the errors.
pub(super) fn validate_volumes(volumes: &[Volume], path: &Path) -> (BTreeSet<String>, ErrorList) {
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
pub(super) fn validate_volume_mounts(
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

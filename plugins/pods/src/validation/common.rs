//! Constants, options and small helpers every section uses.

use std::collections::BTreeMap;
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{Pod, PodSpec};
use wasm_apiserver_sdk::validation::{self as v};
/// `core.MirrorPodAnnotationKey`.
pub(super) const MIRROR_POD_ANNOTATION_KEY: &str = "kubernetes.io/config.mirror";
/// `core.PodDeletionCost`.
pub(super) const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// `v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix`.
pub(super) const APPARMOR_BETA_CONTAINER_ANNOTATION_KEY_PREFIX: &str =
    "container.apparmor.security.beta.kubernetes.io/";

pub(super) const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";
pub(super) const IS_NOT_INTEGER_ERROR_MSG: &str = "must be an integer";
pub(super) const INVALID_IP_MSG: &str =
    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
pub(super) const MAX_INT32: i64 = i32::MAX as i64;

/// `updatablePodSpecFields`.
pub(super) const UPDATABLE_POD_SPEC_FIELDS: [&str; 5] = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/// The `PodValidationOptions` that matter here (`GetValidationOptionsFromPodSpecAndMeta`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Opts {
    /// The old pod already had an invalid pod-deletion-cost annotation.
    pub(super) allow_invalid_pod_deletion_cost: bool,
}

impl Opts {
    pub(super) fn new(old: Option<&Pod>) -> Opts {
        let old_invalid =
            old.is_some_and(|o| deletion_cost(o.metadata.annotations.as_ref()).is_err());
        Opts {
            allow_invalid_pod_deletion_cost: old_invalid,
        }
    }
}

pub(super) fn spec_of(pod: &Pod) -> std::borrow::Cow<'_, PodSpec> {
    match pod.spec.as_ref() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(PodSpec::default()),
    }
}

pub(super) fn s(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or_default()
}

pub(super) fn invalid_for_each(path: &Path, value: &str, msgs: Vec<String>) -> ErrorList {
    msgs.into_iter()
        .map(|m| field::invalid(path, value, m))
        .collect()
}

/// `ValidateDNS1123Label`.
pub(super) fn validate_dns1123_label(value: &str, path: &Path) -> ErrorList {
    invalid_for_each(path, value, v::is_dns1123_label(value))
}

/// `ValidateQualifiedName` / `ValidateLabelName`.
pub(super) fn validate_qualified_name(value: &str, path: &Path) -> ErrorList {
    invalid_for_each(path, value, v::is_qualified_name(value))
}

/// `ValidateNonnegativeField`.
pub(super) fn validate_nonnegative(value: i64, path: &Path) -> ErrorList {
    if value < 0 {
        vec![field::invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    } else {
        Vec::new()
    }
}

/// `validation.IsValidIP`.
pub(super) fn validate_ip(value: &str, path: &Path) -> ErrorList {
    match v::parse_ip_sloppy(value) {
        Some(_) => Vec::new(),
        None => vec![field::invalid(path, value, INVALID_IP_MSG)],
    }
}

/// `helper.GetDeletionCostFromPodAnnotations`: the annotation, if present, must be a 32-bit
/// integer without a plus sign or leading zeros.
pub(super) fn deletion_cost(annotations: Option<&BTreeMap<String, String>>) -> Result<(), ()> {
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

//! Kubernetes validation helpers, ported from `k8s.io/apimachinery/pkg/util/validation`
//! (`validation.go`) and `k8s.io/apimachinery/pkg/api/validation` (`objectmeta.go`,
//! `generic.go`). The `is_*` functions return the list of problems as Kubernetes words them
//! (empty = valid); the `validate_*` functions return [`ErrorList`]s with field paths.
//!
//! The messages are those of Kubernetes 1.33 (apimachinery v0.33, the API version this workspace
//! builds against through `k8s-openapi`'s `v1_33` feature). The regular expressions Kubernetes
//! uses are hand-written here as small byte matchers (no regex dependency, to keep plugins small);
//! the messages still quote the original expressions.

use crate::field::{self, ErrorList, Path};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference,
};
use std::collections::{BTreeMap, BTreeSet};

/// Maximum length of a DNS-1123 label (63).
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Maximum length of a DNS-1123 subdomain (253).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Maximum length of a label value (63).
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
/// Maximum total size of all annotations of one object (256 KiB), `TotalAnnotationSizeLimitB`.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// Maximum length of a DNS-1035 label (63), `DNS1035LabelMaxLength`.
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;
/// Maximum length of the name part of a qualified name (63), `qualifiedNameMaxLength`.
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Maximum length of `managedFields[*].manager` (128), `FieldManagerMaxLength`
/// (`k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;
/// Maximum length of `managedFields[*].subresource` (256), `MaxSubresourceNameLength`.
pub const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;

/// `FieldImmutableErrorMsg` (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go`).
pub const FIELD_IMMUTABLE_ERROR_MSG: &str = "field is immutable";
/// `IsNegativeErrorMsg` (`k8s.io/apimachinery/pkg/api/validation/generic.go`).
pub const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";
/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// How `metadata.name` is validated (`ValidateNameFunc` in kube-apiserver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain` (most resources, e.g. configmaps, custom resources).
    Dns1123Subdomain,
    /// `NameIsDNSLabel` (e.g. namespaces).
    Dns1123Label,
    /// `NameIsDNS1035Label` (e.g. services).
    Dns1035Label,
    /// `path.IsValidPathSegmentName`: only `.`, `..`, `/` and `%` are refused.
    PathSegment,
}

impl NameRule {
    /// The rule as a `ValidateNameFunc(name, prefix)`: the problems with `name`, worded as
    /// Kubernetes does (empty = valid). With `prefix` (used for `metadata.generateName`), the
    /// name is checked as the start of a name that will get a suffix appended: the DNS rules
    /// mask a trailing `-` (`maskTrailingDash`) and the path-segment rule only refuses `/` and
    /// `%` (`IsValidPathSegmentPrefix`).
    ///
    /// Ported from `k8s.io/apimachinery/pkg/api/validation/generic.go` (`NameIsDNSSubdomain`,
    /// `NameIsDNSLabel`, `NameIsDNS1035Label`, `maskTrailingDash`) and
    /// `k8s.io/apimachinery/pkg/api/validation/path/name.go` (`ValidatePathSegmentName`).
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        match self {
            NameRule::PathSegment => {
                if prefix {
                    is_valid_path_segment_prefix(name)
                } else {
                    is_valid_path_segment_name(name)
                }
            }
            dns => {
                let masked;
                let name = if prefix {
                    masked = mask_trailing_dash(name);
                    masked.as_str()
                } else {
                    name
                };
                match dns {
                    NameRule::Dns1123Subdomain => is_dns1123_subdomain(name),
                    NameRule::Dns1123Label => is_dns1123_label(name),
                    _ => is_dns1035_label(name),
                }
            }
        }
    }
}

/// `maskTrailingDash` (`generic.go`): if the name ends in `-` (and is longer than one byte),
/// Kubernetes replaces the *last two* bytes with `a` (`name[:len(name)-2] + "a"`); kept as is.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        // The byte before the dash may start a multi-byte character; Go slices bytes, so do the
        // same and let the (then invalid) name fail the rule.
        let mut bytes = name.as_bytes()[..name.len() - 2].to_vec();
        bytes.push(b'a');
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        name.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Message helpers (`k8s.io/apimachinery/pkg/util/validation/validation.go`).
// ---------------------------------------------------------------------------------------------

/// `MaxLenError`: `must be no more than N characters`.
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// `EmptyError`: `must be non-empty`.
pub fn empty_error() -> String {
    "must be non-empty".to_string()
}

/// `RegexError(msg, fmt, examples...)`: `msg (e.g. 'a',  or 'b', regex used for validation is
/// 'fmt')` (the double space before `or` is Kubernetes').
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut out = String::from(msg);
    out.push_str(" (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

// ---------------------------------------------------------------------------------------------
// Hand-written matchers for the regular expressions of validation.go.
// ---------------------------------------------------------------------------------------------

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR_MSG: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_ERR_MSG: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1123_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first)
                && is_lower_alnum(last)
                && s.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
fn matches_dns1123_subdomain(s: &[u8]) -> bool {
    s.split(|&c| c == b'.').all(matches_dns1123_label)
}

/// `^[a-z]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1035_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&first), Some(&last)) => {
            first.is_ascii_lowercase()
                && is_lower_alnum(last)
                && s.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn matches_qualified_name_part(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&first), Some(&last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && s.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `^[-._a-zA-Z0-9]+$`
fn matches_config_map_key(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `hasChDirPrefix` (`validation.go`).
fn has_chdir_prefix(value: &str) -> Vec<String> {
    if value == "." {
        vec!["must not be '.'".to_string()]
    } else if value == ".." {
        vec!["must not be '..'".to_string()]
    } else if value.starts_with("..") {
        vec!["must not start with '..'".to_string()]
    } else {
        Vec::new()
    }
}

// ---------------------------------------------------------------------------------------------
// `is_*`: k8s.io/apimachinery/pkg/util/validation/validation.go
// ---------------------------------------------------------------------------------------------

/// `IsDNS1123Label`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 63 characters
/// matching `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value.as_bytes()) {
        errs.push(regex_error(
            DNS1123_LABEL_ERR_MSG,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 253 characters,
/// dot-separated DNS-1123 labels.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value.as_bytes()) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1035Label`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 63 characters
/// matching `[a-z]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !matches_dns1035_label(value.as_bytes()) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsQualifiedName` (label keys, annotation keys, finalizer names).
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: an optional DNS-1123
/// subdomain prefix and `/`, then a name part of at most 63 characters matching
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`. Messages are prefixed with `prefix part ` /
/// `name part ` as in Kubernetes.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_qualified_name_part(name.as_bytes()) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: empty, or at most 63
/// characters matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !(value.is_empty() || matches_qualified_name_part(value.as_bytes())) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsConfigMapKey`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 253 characters
/// matching `[-._a-zA-Z0-9]+`, and not `.`, `..` or starting with `..`.
pub fn is_config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_config_map_key(value.as_bytes()) {
        errs.push(regex_error(
            CONFIG_MAP_KEY_ERR_MSG,
            CONFIG_MAP_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    errs.extend(has_chdir_prefix(value));
    errs
}

/// `IsValidPathSegmentName`: the name can be used as one segment of a URL path (or storage
/// key): it may not be `.` or `..`, nor contain `/` or `%`.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/path/name.go`.
pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    for illegal in [".", ".."] {
        if name == illegal {
            return vec![format!("may not be '{illegal}'")];
        }
    }
    is_valid_path_segment_prefix(name)
}

/// `IsValidPathSegmentPrefix`: like [`is_valid_path_segment_name`] for a prefix to which a
/// suffix will be appended, so `.` and `..` are allowed.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/path/name.go`.
pub fn is_valid_path_segment_prefix(name: &str) -> Vec<String> {
    ["/", "%"]
        .iter()
        .filter(|illegal| name.contains(**illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// `validate_*`: k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go and
// k8s.io/apimachinery/pkg/api/validation/objectmeta.go
// ---------------------------------------------------------------------------------------------

/// `ValidateLabelName` (`metav1validation`): the key must be a qualified name; each problem is a
/// `field.Invalid(path, key, msg)`.
///
/// Ported from `k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`.
pub fn validate_label_name(name: &str, path: &Path) -> ErrorList {
    is_qualified_name(name)
        .into_iter()
        .map(|msg| field::invalid(path, name, msg))
        .collect()
}

/// `ValidateLabels` (`metav1validation`).
///
/// Ported from `k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`: each key via
/// `IsQualifiedName` (`field.Invalid(path, key, msg)`), each value via `IsValidLabelValue`
/// (`field.Invalid(path, value, msg)`). As in Kubernetes, the errors are reported at `path`
/// itself (e.g. `metadata.labels`), not at `path[key]`; the offending key or value is the
/// error's value. Keys are visited in sorted order (Go visits them in map order).
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (k, v) in labels {
        errs.extend(validate_label_name(k, path));
        errs.extend(
            is_valid_label_value(v)
                .into_iter()
                .map(|msg| field::invalid(path, v, msg)),
        );
    }
    errs
}

/// `ValidateAnnotations`.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`: every key, lower-cased,
/// must be a qualified name (`field.Invalid(path, key, msg)`, reported at `path` as Kubernetes
/// does), and the keys and values together may not exceed [`TOTAL_ANNOTATION_SIZE_LIMIT`] bytes
/// (`ValidateAnnotationsSize`; then one `field.TooLong(path, "", 262144)`).
pub fn validate_annotations(annotations: &BTreeMap<String, String>, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    let mut total: usize = 0;
    for (k, v) in annotations {
        // The rule is QualifiedName except that case doesn't matter.
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(field::invalid(path, k, msg));
        }
        total = total.saturating_add(k.len()).saturating_add(v.len());
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(field::too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errs
}

/// `metadata.name` against a [`NameRule`].
///
/// As kube-apiserver's `ValidateObjectMeta` does (`k8s.io/apimachinery/pkg/api/validation/
/// objectmeta.go`), each message of the rule becomes `field.Invalid(path, name, msg)`. An empty
/// name is not special-cased here: it gets the rule's own errors (none for
/// [`NameRule::PathSegment`]); [`validate_object_meta`] reports a missing name as `Required`.
pub fn validate_name(name: &str, rule: NameRule, path: &Path) -> ErrorList {
    rule.check(name, false)
        .into_iter()
        .map(|msg| field::invalid(path, name, msg))
        .collect()
}

/// `ValidateNonnegativeField`: `field.Invalid(path, value, "must be greater than or equal to
/// 0")` for a negative value.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/generic.go`.
pub fn validate_nonnegative_field(value: i64, path: &Path) -> ErrorList {
    if value < 0 {
        vec![field::invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    } else {
        Vec::new()
    }
}

/// `ValidateFinalizerName`: a finalizer must be a qualified name (`field.Invalid(path, name,
/// msg)`).
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`.
pub fn validate_finalizer_name(name: &str, path: &Path) -> ErrorList {
    is_qualified_name(name)
        .into_iter()
        .map(|msg| field::invalid(path, name, msg))
        .collect()
}

/// `ValidateFinalizers`: every name via [`validate_finalizer_name`] (reported at `path`, not
/// per index, as Kubernetes does), and `orphan` and `foregroundDeletion` may not both be set.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`.
pub fn validate_finalizers(finalizers: &[String], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    let mut orphan = false;
    let mut delete = false;
    for f in finalizers {
        errs.extend(validate_finalizer_name(f, path));
        orphan |= f == FINALIZER_ORPHAN_DEPENDENTS;
        delete |= f == FINALIZER_DELETE_DEPENDENTS;
    }
    if orphan && delete {
        errs.push(field::invalid(
            path,
            finalizers,
            format!("finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set"),
        ));
    }
    errs
}

/// `ValidateNoNewFinalizers`: once an object is being deleted, no finalizer may be added.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`; the message lists the
/// new finalizers sorted, in Go's `%#v` form (`[]string{"a", "b"}`).
pub fn validate_no_new_finalizers(new: &[String], old: &[String], path: &Path) -> ErrorList {
    let old: BTreeSet<&str> = old.iter().map(String::as_str).collect();
    let extra: BTreeSet<&str> = new
        .iter()
        .map(String::as_str)
        .filter(|f| !old.contains(f))
        .collect();
    if extra.is_empty() {
        return Vec::new();
    }
    let quoted: Vec<String> = extra
        .iter()
        .map(|f| serde_json::to_string(f).unwrap_or_else(|_| format!("\"{f}\"")))
        .collect();
    vec![field::forbidden(
        path,
        format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            quoted.join(", ")
        ),
    )]
}

/// `(group, version, kind)` as `schema.FromAPIVersionAndKind` parses them.
fn group_version_kind<'a>(api_version: &'a str, kind: &'a str) -> (&'a str, &'a str, &'a str) {
    if api_version.is_empty() || api_version == "/" {
        return ("", "", kind);
    }
    match api_version.matches('/').count() {
        0 => ("", api_version, kind),
        1 => {
            let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
            (g, v, kind)
        }
        // ParseGroupVersion fails: FromAPIVersionAndKind keeps only the kind.
        _ => ("", "", kind),
    }
}

/// `ValidateOwnerReferences`: each reference needs an apiVersion with a version, a kind, a name
/// and a uid; `v1/Event` may not be an owner; at most one reference may be the controller.
/// As in Kubernetes, the per-reference errors use `path` itself (e.g.
/// `metadata.ownerReferences.uid`), not an indexed path.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
/// (`validateOwnerReference`, `ValidateOwnerReferences`, `BannedOwners`).
pub fn validate_owner_references(refs: &[OwnerReference], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    for r in refs {
        let (group, version, kind) = group_version_kind(&r.api_version, &r.kind);
        if version.is_empty() {
            errs.push(field::invalid(
                &path.child("apiVersion"),
                &r.api_version,
                "version must not be empty",
            ));
        }
        if kind.is_empty() {
            errs.push(field::invalid(
                &path.child("kind"),
                &r.kind,
                "must not be empty",
            ));
        }
        if r.name.is_empty() {
            errs.push(field::invalid(
                &path.child("name"),
                &r.name,
                "must not be empty",
            ));
        }
        if r.uid.is_empty() {
            errs.push(field::invalid(
                &path.child("uid"),
                &r.uid,
                "must not be empty",
            ));
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            errs.push(field::invalid(
                path,
                r,
                format!("{group}/{version}, Kind={kind} is disallowed from being an owner"),
            ));
        }
        if r.controller == Some(true) {
            let current = format!("{}/{}", r.kind, r.name);
            match &first_controller {
                Some(first) => errs.push(field::invalid(
                    path,
                    refs,
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    ),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errs
}

/// Whether Go's `unicode.IsPrint` would refuse `c`. Without Unicode tables this is an
/// approximation: control characters, whitespace other than the ASCII space, the common format
/// characters (soft hyphen, zero-width and bidi controls, BOM, ...) and private-use characters
/// are refused; unassigned code points are accepted.
fn is_non_printable(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(
            u,
            0x00AD
                | 0x0600..=0x0605
                | 0x061C
                | 0x06DD
                | 0x070F
                | 0x0890..=0x0891
                | 0x08E2
                | 0x180E
                | 0x200B..=0x200F
                | 0x202A..=0x202E
                | 0x2060..=0x2064
                | 0x2066..=0x206F
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
                | 0xE000..=0xF8FF
                | 0xF0000..=0xFFFFD
                | 0x100000..=0x10FFFD
        )
}

/// `ValidateFieldManager`: at most 128 bytes (`field.TooLong`), printable characters only
/// (`invalid character U+0007 (at position 3)`, position in bytes).
///
/// Ported from `k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`. Go's
/// `unicode.IsPrint` is approximated (see the source): unassigned code points are accepted.
pub fn validate_field_manager(manager: &str, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(field::too_long(path, manager, FIELD_MANAGER_MAX_LENGTH));
    }
    for (i, c) in manager.char_indices() {
        if is_non_printable(c) {
            errs.push(field::invalid(
                path,
                manager,
                format!("invalid character U+{:04X} (at position {i})", c as u32),
            ));
        }
    }
    errs
}

/// `ValidateManagedFields`: operation `Apply` or `Update`, fieldsType empty or `FieldsV1`, a
/// valid manager, a subresource of at most 256 bytes.
///
/// Ported from `k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`.
pub fn validate_managed_fields(entries: &[ManagedFieldsEntry], path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let p = path.index(i);
        let operation = entry.operation.as_deref().unwrap_or("");
        if operation != "Apply" && operation != "Update" {
            errs.push(field::invalid(
                &p.child("operation"),
                operation,
                "must be `Apply` or `Update`",
            ));
        }
        let fields_type = entry.fields_type.as_deref().unwrap_or("");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errs.push(field::invalid(
                &p.child("fieldsType"),
                fields_type,
                "must be `FieldsV1`",
            ));
        }
        errs.extend(validate_field_manager(
            entry.manager.as_deref().unwrap_or(""),
            &p.child("manager"),
        ));
        let subresource = entry.subresource.as_deref().unwrap_or("");
        if subresource.len() > MAX_SUBRESOURCE_NAME_LENGTH {
            errs.push(field::too_long(
                &p.child("subresource"),
                subresource,
                MAX_SUBRESOURCE_NAME_LENGTH,
            ));
        }
    }
    errs
}

/// `ValidateObjectMeta`.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
/// (`ValidateObjectMetaAccessor` and `validateObjectMetaAccessorWithOptsCommon`), in the same
/// order: `generateName` (checked with the rule as a prefix), `name` (`Required` "name or
/// generateName is required" when empty, else [`validate_name`]), `namespace` (required and a
/// DNS-1123 label when `namespaced`, else `Forbidden` "not allowed on this type"), `generation`
/// (not negative), `labels`, `annotations`, `ownerReferences`, `finalizers`, `managedFields`.
///
/// One deliberate difference: Kubernetes runs this after name generation, so an empty name is
/// always `Required` there; here an empty name is accepted when `generateName` is set, so that
/// plugins (and their tests) can validate an object before the host has generated its name.
pub fn validate_object_meta(
    meta: &ObjectMeta,
    namespaced: bool,
    rule: NameRule,
    path: &Path,
) -> ErrorList {
    let mut errs = Vec::new();

    let generate_name = meta.generate_name.as_deref().unwrap_or("");
    if !generate_name.is_empty() {
        let p = path.child("generateName");
        for msg in rule.check(generate_name, true) {
            errs.push(field::invalid(&p, generate_name, msg));
        }
    }
    let name = meta.name.as_deref().unwrap_or("");
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(field::required(
                &path.child("name"),
                "name or generateName is required",
            ));
        }
    } else {
        errs.extend(validate_name(name, rule, &path.child("name")));
    }

    let namespace = meta.namespace.as_deref().unwrap_or("");
    let ns_path = path.child("namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.push(field::required(&ns_path, ""));
        } else {
            // ValidateNamespaceName = NameIsDNSLabel.
            for msg in NameRule::Dns1123Label.check(namespace, false) {
                errs.push(field::invalid(&ns_path, namespace, msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(field::forbidden(&ns_path, "not allowed on this type"));
    }

    errs.extend(validate_nonnegative_field(
        meta.generation.unwrap_or(0),
        &path.child("generation"),
    ));
    errs.extend(validate_common(meta, path));
    errs.extend(validate_finalizers(
        meta.finalizers.as_deref().unwrap_or(&[]),
        &path.child("finalizers"),
    ));
    errs.extend(validate_managed_fields(
        meta.managed_fields.as_deref().unwrap_or(&[]),
        &path.child("managedFields"),
    ));
    errs
}

/// Labels, annotations and owner references, shared by create and update.
fn validate_common(meta: &ObjectMeta, path: &Path) -> ErrorList {
    let empty = BTreeMap::new();
    let mut errs = validate_labels(
        meta.labels.as_ref().unwrap_or(&empty),
        &path.child("labels"),
    );
    errs.extend(validate_annotations(
        meta.annotations.as_ref().unwrap_or(&empty),
        &path.child("annotations"),
    ));
    errs.extend(validate_owner_references(
        meta.owner_references.as_deref().unwrap_or(&[]),
        &path.child("ownerReferences"),
    ));
    errs
}

/// `ValidateObjectMetaUpdate`: validate `new` metadata against the stored `old` one.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
/// (`ValidateObjectMetaAccessorUpdate`), in the same order: no new finalizers once `old` is being
/// deleted, `generation` may not decrease ("must not be decremented"), `name`, `namespace`,
/// `uid`, `creationTimestamp`, `deletionTimestamp` and `deletionGracePeriodSeconds` are
/// immutable ("field is immutable"), then `labels`, `annotations`, `ownerReferences` and
/// `managedFields` of `new` are validated (finalizer names are not re-validated on update, as in
/// Kubernetes).
///
/// Not ported: the "must be specified for an update" check on `resourceVersion`. In
/// kube-apiserver it can never fire from a strategy's point of view (the store fills in the
/// stored resourceVersion for unconditional updates before validation); here the host owns
/// resourceVersion and its preconditions.
pub fn validate_object_meta_update(new: &ObjectMeta, old: &ObjectMeta, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    if old.deletion_timestamp.is_some() {
        errs.extend(validate_no_new_finalizers(
            new.finalizers.as_deref().unwrap_or(&[]),
            old.finalizers.as_deref().unwrap_or(&[]),
            &path.child("finalizers"),
        ));
    }

    let new_generation = new.generation.unwrap_or(0);
    if new_generation < old.generation.unwrap_or(0) {
        errs.push(field::invalid(
            &path.child("generation"),
            new_generation,
            "must not be decremented",
        ));
    }

    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    errs.extend(validate_immutable_field(
        &s(&new.name),
        &s(&old.name),
        &path.child("name"),
    ));
    errs.extend(validate_immutable_field(
        &s(&new.namespace),
        &s(&old.namespace),
        &path.child("namespace"),
    ));
    errs.extend(validate_immutable_field(
        &s(&new.uid),
        &s(&old.uid),
        &path.child("uid"),
    ));
    errs.extend(validate_immutable_field(
        &new.creation_timestamp,
        &old.creation_timestamp,
        &path.child("creationTimestamp"),
    ));
    errs.extend(validate_immutable_field(
        &new.deletion_timestamp,
        &old.deletion_timestamp,
        &path.child("deletionTimestamp"),
    ));
    errs.extend(validate_immutable_field(
        &new.deletion_grace_period_seconds,
        &old.deletion_grace_period_seconds,
        &path.child("deletionGracePeriodSeconds"),
    ));

    errs.extend(validate_common(new, path));
    errs.extend(validate_managed_fields(
        new.managed_fields.as_deref().unwrap_or(&[]),
        &path.child("managedFields"),
    ));
    errs
}

/// `ValidateImmutableField`: "field is immutable".
pub fn validate_immutable_field<T: PartialEq + serde::Serialize>(
    new: &T,
    old: &T,
    path: &Path,
) -> ErrorList {
    if new == old {
        Vec::new()
    } else {
        vec![field::invalid(path, new, "field is immutable")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::ErrorType;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn details(errs: &ErrorList) -> Vec<(&str, &str)> {
        errs.iter()
            .map(|e| (e.field.as_str(), e.detail.as_str()))
            .collect()
    }

    fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_string()),
            namespace: namespace.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn dns1123_label() {
        for ok in [
            "a",
            "0",
            "my-name",
            "123-abc",
            "a-b-c",
            "a--b",
            &"a".repeat(63),
        ] {
            assert!(is_dns1123_label(ok).is_empty(), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "my_name", "a.b", "ä", "a b"] {
            assert_eq!(
                is_dns1123_label(bad),
                vec![LABEL_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_dns1123_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
        assert_eq!(
            is_dns1123_label(&format!("-{}", "a".repeat(63))),
            vec![
                "must be no more than 63 characters".to_string(),
                LABEL_MSG.to_string()
            ]
        );
    }

    #[test]
    fn dns1123_subdomain() {
        for ok in [
            "a",
            "example.com",
            "a.b.c",
            "1.2.3",
            "a-b.c-d",
            &"a".repeat(253),
        ] {
            assert!(is_dns1123_subdomain(ok).is_empty(), "{ok}");
        }
        for bad in ["", ".", "a.", ".a", "a..b", "a.-b", "A.b", "a_b", "a/b"] {
            assert_eq!(
                is_dns1123_subdomain(bad),
                vec![SUBDOMAIN_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_dns1123_subdomain(&"a".repeat(254)),
            vec!["must be no more than 253 characters".to_string()]
        );
    }

    #[test]
    fn dns1035_label() {
        for ok in ["a", "my-name", "abc-123", "a1"] {
            assert!(is_dns1035_label(ok).is_empty(), "{ok}");
        }
        for bad in ["", "1a", "123-abc", "-a", "a-", "a.b", "Ab"] {
            assert_eq!(
                is_dns1035_label(bad),
                vec![DNS1035_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_dns1035_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
    }

    #[test]
    fn qualified_names() {
        for ok in [
            "app",
            "App",
            "my.name",
            "123-abc",
            "a_b",
            "example.com/app",
            "kubernetes.io/metadata.name",
            "a/B",
            &"a".repeat(63),
            &format!("{}/{}", "a".repeat(253), "b".repeat(63)),
        ] {
            assert!(is_qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_qualified_name(""),
            vec![
                "name part must be non-empty".to_string(),
                NAME_PART_MSG.to_string()
            ]
        );
        assert_eq!(
            is_qualified_name(&"a".repeat(64)),
            vec!["name part must be no more than 63 characters".to_string()]
        );
        assert_eq!(is_qualified_name("-app"), vec![NAME_PART_MSG.to_string()]);
        assert_eq!(is_qualified_name("app_"), vec![NAME_PART_MSG.to_string()]);
        assert_eq!(
            is_qualified_name("/app"),
            vec!["prefix part must be non-empty".to_string()]
        );
        assert_eq!(
            is_qualified_name("example.com/"),
            vec![
                "name part must be non-empty".to_string(),
                NAME_PART_MSG.to_string()
            ]
        );
        assert_eq!(
            is_qualified_name("Example.com/app"),
            vec![format!("prefix part {SUBDOMAIN_MSG}")]
        );
        assert_eq!(
            is_qualified_name(&format!("{}/app", "a".repeat(254))),
            vec!["prefix part must be no more than 253 characters".to_string()]
        );
        assert_eq!(
            is_qualified_name("a/b/c"),
            vec!["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string()]
        );
    }

    #[test]
    fn label_values() {
        for ok in [
            "",
            "v1",
            "MyValue",
            "my_value",
            "12345",
            "a.b-c_d",
            &"a".repeat(63),
        ] {
            assert!(is_valid_label_value(ok).is_empty(), "{ok:?}");
        }
        for bad in ["-a", "a-", "_a", "a b", "a/b", "ä"] {
            assert_eq!(
                is_valid_label_value(bad),
                vec![LABEL_VALUE_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_valid_label_value(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
    }

    #[test]
    fn config_map_keys() {
        for ok in [
            "key", "key.name", "KEY_NAME", "key-name", ".dotfile", "a..b",
        ] {
            assert!(is_config_map_key(ok).is_empty(), "{ok}");
        }
        assert_eq!(is_config_map_key(""), vec![CONFIG_KEY_MSG.to_string()]);
        assert_eq!(is_config_map_key("a/b"), vec![CONFIG_KEY_MSG.to_string()]);
        assert_eq!(is_config_map_key("."), vec!["must not be '.'".to_string()]);
        assert_eq!(
            is_config_map_key(".."),
            vec!["must not be '..'".to_string()]
        );
        assert_eq!(
            is_config_map_key("..a"),
            vec!["must not start with '..'".to_string()]
        );
        assert_eq!(
            is_config_map_key(&"a".repeat(254)),
            vec!["must be no more than 253 characters".to_string()]
        );
    }

    #[test]
    fn path_segment_names() {
        assert!(is_valid_path_segment_name("Any thing: ok!").is_empty());
        assert!(is_valid_path_segment_name("").is_empty());
        assert_eq!(
            is_valid_path_segment_name("."),
            vec!["may not be '.'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name(".."),
            vec!["may not be '..'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name("a/b"),
            vec!["may not contain '/'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name("a/%b"),
            vec![
                "may not contain '/'".to_string(),
                "may not contain '%'".to_string()
            ]
        );
        assert!(is_valid_path_segment_prefix("..").is_empty());
        assert_eq!(
            is_valid_path_segment_prefix("%"),
            vec!["may not contain '%'".to_string()]
        );
    }

    #[test]
    fn validate_name_uses_the_rule() {
        let p = Path::new("metadata").child("name");
        assert!(validate_name("my.config", NameRule::Dns1123Subdomain, &p).is_empty());
        let errs = validate_name("my.config", NameRule::Dns1123Label, &p);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].error_type, ErrorType::Invalid);
        assert_eq!(errs[0].field, "metadata.name");
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("my.config")));
        assert_eq!(errs[0].detail, LABEL_MSG);
        assert_eq!(
            details(&validate_name("1abc", NameRule::Dns1035Label, &p)),
            vec![("metadata.name", DNS1035_MSG)]
        );
        assert!(validate_name("Weird Name", NameRule::PathSegment, &p).is_empty());
        assert_eq!(
            details(&validate_name("..", NameRule::PathSegment, &p)),
            vec![("metadata.name", "may not be '..'")]
        );
        // An empty name gets the rule's errors, not Required.
        assert_eq!(
            details(&validate_name("", NameRule::Dns1123Subdomain, &p)),
            vec![("metadata.name", SUBDOMAIN_MSG)]
        );
        assert!(validate_name("", NameRule::PathSegment, &p).is_empty());
        // Too long and malformed: two errors.
        assert_eq!(
            validate_name(&format!("{}-", "a".repeat(63)), NameRule::Dns1123Label, &p).len(),
            2
        );
    }

    #[test]
    fn prefix_rules_mask_the_trailing_dash() {
        assert!(NameRule::Dns1123Label.check("web-", true).is_empty());
        assert_eq!(
            NameRule::Dns1123Label.check("web-", false),
            vec![LABEL_MSG.to_string()]
        );
        assert!(NameRule::Dns1035Label.check("a-", true).is_empty());
        assert!(NameRule::Dns1123Subdomain.check("my.app-", true).is_empty());
        assert_eq!(
            NameRule::Dns1123Label.check("-", true),
            vec![LABEL_MSG.to_string()]
        );
        assert!(NameRule::PathSegment.check(".", true).is_empty());
        assert_eq!(
            NameRule::PathSegment.check(".", false),
            vec!["may not be '.'".to_string()]
        );
    }

    #[test]
    fn labels_validation() {
        let p = Path::new("metadata").child("labels");
        let ok = labels(&[
            ("app", "web"),
            ("example.com/app", "v1.2_3"),
            ("App.Kubernetes.io-x", ""),
            (&"k".repeat(63), &"v".repeat(63)),
        ]);
        assert!(validate_labels(&ok, &p).is_empty());

        let errs = validate_labels(&labels(&[("app", &"v".repeat(64))]), &p);
        assert_eq!(
            details(&errs),
            vec![("metadata.labels", "must be no more than 63 characters")]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("v".repeat(64))));

        let errs = validate_labels(&labels(&[(&"k".repeat(64), "v")]), &p);
        assert_eq!(
            details(&errs),
            vec![(
                "metadata.labels",
                "name part must be no more than 63 characters"
            )]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("k".repeat(64))));

        let errs = validate_labels(&labels(&[("/app", "v")]), &p);
        assert_eq!(
            details(&errs),
            vec![("metadata.labels", "prefix part must be non-empty")]
        );

        let errs = validate_labels(&labels(&[("Example.com/app", "v")]), &p);
        assert_eq!(errs.len(), 1);
        assert!(errs[0]
            .detail
            .starts_with("prefix part a lowercase RFC 1123 subdomain"));

        let errs = validate_labels(&labels(&[("bad key", "-bad")]), &p);
        assert_eq!(
            details(&errs),
            vec![
                ("metadata.labels", NAME_PART_MSG),
                ("metadata.labels", LABEL_VALUE_MSG)
            ]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("bad key")));
        assert_eq!(errs[1].bad_value, Some(serde_json::json!("-bad")));
        assert!(errs.iter().all(|e| e.error_type == ErrorType::Invalid));
    }

    #[test]
    fn annotations_validation() {
        let p = Path::new("metadata").child("annotations");
        // Case does not matter for annotation keys; values are free-form.
        let ok = labels(&[("Example.COM/Some-Key", "any value at all: {}"), ("x", "")]);
        assert!(validate_annotations(&ok, &p).is_empty());

        let errs = validate_annotations(&labels(&[("a b", "v")]), &p);
        assert_eq!(
            details(&errs),
            vec![("metadata.annotations", NAME_PART_MSG)]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("a b")));

        // Exactly at the limit (key + value bytes) is fine; one byte more is TooLong.
        let at_limit = labels(&[("k", &"v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - 1))]);
        assert!(validate_annotations(&at_limit, &p).is_empty());
        let over = labels(&[
            ("k", &"v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT / 2)),
            ("l", &"v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT / 2)),
        ]);
        let errs = validate_annotations(&over, &p);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].error_type, ErrorType::TooLong);
        assert_eq!(errs[0].field, "metadata.annotations");
        assert_eq!(errs[0], field::too_long(&p, "", 262144));
    }

    #[test]
    fn finalizers_validation() {
        let p = Path::new("metadata").child("finalizers");
        let ok = vec![
            "kubernetes".to_string(),
            "example.com/cleanup".to_string(),
            "orphan".to_string(),
        ];
        assert!(validate_finalizers(&ok, &p).is_empty());
        let errs = validate_finalizers(&["bad/one/two".to_string()], &p);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.finalizers");
        let both = vec!["orphan".to_string(), "foregroundDeletion".to_string()];
        assert_eq!(
            details(&validate_finalizers(&both, &p)),
            vec![(
                "metadata.finalizers",
                "finalizer orphan and foregroundDeletion cannot be both set"
            )]
        );
        let errs =
            validate_no_new_finalizers(&["b".into(), "a".into(), "c".into()], &["c".into()], &p);
        assert_eq!(errs[0].error_type, ErrorType::Forbidden);
        assert_eq!(
            errs[0].detail,
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{\"a\", \"b\"}"
        );
        assert!(
            validate_no_new_finalizers(&["c".into()], &["c".into(), "d".into()], &p).is_empty()
        );
    }

    #[test]
    fn owner_references_validation() {
        let p = Path::new("metadata").child("ownerReferences");
        let good = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "rs".into(),
            uid: "123".into(),
            controller: Some(true),
            ..Default::default()
        };
        assert!(validate_owner_references(std::slice::from_ref(&good), &p).is_empty());
        let empty = OwnerReference::default();
        assert_eq!(
            details(&validate_owner_references(&[empty], &p)),
            vec![
                (
                    "metadata.ownerReferences.apiVersion",
                    "version must not be empty"
                ),
                ("metadata.ownerReferences.kind", "must not be empty"),
                ("metadata.ownerReferences.name", "must not be empty"),
                ("metadata.ownerReferences.uid", "must not be empty"),
            ]
        );
        let event = OwnerReference {
            api_version: "v1".into(),
            kind: "Event".into(),
            ..good.clone()
        };
        let errs = validate_owner_references(&[event], &p);
        assert_eq!(
            details(&errs),
            vec![(
                "metadata.ownerReferences",
                "/v1, Kind=Event is disallowed from being an owner"
            )]
        );
        let other = OwnerReference {
            name: "rs2".into(),
            ..good.clone()
        };
        let errs = validate_owner_references(&[good, other], &p);
        assert_eq!(
            details(&errs),
            vec![(
                "metadata.ownerReferences",
                "Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/rs and ReplicaSet/rs2"
            )]
        );
        let too_many_slashes = OwnerReference {
            api_version: "a/b/c".into(),
            kind: "K".into(),
            name: "n".into(),
            uid: "u".into(),
            ..Default::default()
        };
        assert_eq!(
            details(&validate_owner_references(&[too_many_slashes], &p)),
            vec![(
                "metadata.ownerReferences.apiVersion",
                "version must not be empty"
            )]
        );
    }

    #[test]
    fn managed_fields_validation() {
        let p = Path::new("metadata").child("managedFields");
        let good = ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            operation: Some("Apply".into()),
            fields_type: Some("FieldsV1".into()),
            ..Default::default()
        };
        assert!(validate_managed_fields(std::slice::from_ref(&good), &p).is_empty());
        let bad = ManagedFieldsEntry {
            manager: Some(format!("bad\u{7}{}", "m".repeat(130))),
            operation: Some("Patch".into()),
            fields_type: Some("FieldsV2".into()),
            subresource: Some("s".repeat(257)),
            ..Default::default()
        };
        let errs = validate_managed_fields(&[good, bad], &p);
        assert_eq!(
            details(&errs),
            vec![
                (
                    "metadata.managedFields[1].operation",
                    "must be `Apply` or `Update`"
                ),
                ("metadata.managedFields[1].fieldsType", "must be `FieldsV1`"),
                ("metadata.managedFields[1].manager", errs[2].detail.as_str()),
                (
                    "metadata.managedFields[1].manager",
                    "invalid character U+0007 (at position 3)"
                ),
                (
                    "metadata.managedFields[1].subresource",
                    errs[4].detail.as_str()
                ),
            ]
        );
        assert_eq!(errs[2].error_type, ErrorType::TooLong);
        assert_eq!(errs[4].error_type, ErrorType::TooLong);
        assert!(validate_field_manager("kube-controller-manager é 日本", &p).is_empty());
        assert_eq!(validate_field_manager("a\u{200B}", &p).len(), 1);
    }

    #[test]
    fn object_meta_create() {
        let p = Path::new("metadata");
        assert!(validate_object_meta(
            &meta("web", Some("default")),
            true,
            NameRule::Dns1123Subdomain,
            &p
        )
        .is_empty());
        assert!(
            validate_object_meta(&meta("web", None), false, NameRule::Dns1123Label, &p).is_empty()
        );

        // Missing name.
        let errs = validate_object_meta(
            &ObjectMeta::default(),
            false,
            NameRule::Dns1123Subdomain,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![("metadata.name", "name or generateName is required")]
        );
        assert_eq!(errs[0].error_type, ErrorType::Required);

        // generateName alone is accepted (and checked as a prefix).
        let gen = ObjectMeta {
            generate_name: Some("web-".into()),
            ..Default::default()
        };
        assert!(validate_object_meta(&gen, false, NameRule::Dns1123Label, &p).is_empty());
        let bad_gen = ObjectMeta {
            generate_name: Some("Web-".into()),
            ..Default::default()
        };
        assert_eq!(
            details(&validate_object_meta(
                &bad_gen,
                false,
                NameRule::Dns1123Label,
                &p
            )),
            vec![("metadata.generateName", LABEL_MSG)]
        );

        // Bad name.
        let errs = validate_object_meta(&meta("Web", None), false, NameRule::Dns1123Subdomain, &p);
        assert_eq!(details(&errs), vec![("metadata.name", SUBDOMAIN_MSG)]);

        // Namespace required / forbidden / validated as a DNS-1123 label.
        let errs = validate_object_meta(&meta("web", None), true, NameRule::Dns1123Subdomain, &p);
        assert_eq!(details(&errs), vec![("metadata.namespace", "")]);
        assert_eq!(errs[0].error_type, ErrorType::Required);
        let errs = validate_object_meta(
            &meta("web", Some("default")),
            false,
            NameRule::Dns1123Subdomain,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![("metadata.namespace", "not allowed on this type")]
        );
        assert_eq!(errs[0].error_type, ErrorType::Forbidden);
        let errs = validate_object_meta(
            &meta("web", Some("my.ns")),
            true,
            NameRule::Dns1123Subdomain,
            &p,
        );
        assert_eq!(details(&errs), vec![("metadata.namespace", LABEL_MSG)]);

        // Everything else, in Kubernetes' order.
        let m = ObjectMeta {
            generation: Some(-1),
            labels: Some(labels(&[("app", "-x")])),
            annotations: Some(labels(&[("a b", "")])),
            finalizers: Some(vec!["a/b/c".into()]),
            ..meta("web", None)
        };
        let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &p);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "metadata.generation",
                "metadata.labels",
                "metadata.annotations",
                "metadata.finalizers"
            ]
        );
        assert_eq!(errs[0].detail, "must be greater than or equal to 0");
        assert_eq!(errs[0].bad_value, Some(serde_json::json!(-1)));
    }

    #[test]
    fn object_meta_update() {
        let p = Path::new("metadata");
        let t1 = Time("2024-01-01T00:00:00Z".parse().unwrap());
        let t2 = Time("2024-01-02T00:00:00Z".parse().unwrap());
        let old = ObjectMeta {
            uid: Some("u1".into()),
            generation: Some(3),
            creation_timestamp: Some(t1.clone()),
            resource_version: Some("5".into()),
            ..meta("web", Some("default"))
        };
        let same = ObjectMeta {
            generation: Some(4),
            labels: Some(labels(&[("app", "web")])),
            ..old.clone()
        };
        assert!(validate_object_meta_update(&same, &old, &p).is_empty());

        let changed = ObjectMeta {
            name: Some("web2".into()),
            namespace: Some("other".into()),
            uid: Some("u2".into()),
            generation: Some(2),
            creation_timestamp: Some(t2.clone()),
            ..old.clone()
        };
        let errs = validate_object_meta_update(&changed, &old, &p);
        assert_eq!(
            details(&errs),
            vec![
                ("metadata.generation", "must not be decremented"),
                ("metadata.name", "field is immutable"),
                ("metadata.namespace", "field is immutable"),
                ("metadata.uid", "field is immutable"),
                ("metadata.creationTimestamp", "field is immutable"),
            ]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!(2)));
        assert_eq!(errs[1].bad_value, Some(serde_json::json!("web2")));
        assert_eq!(
            errs[4].bad_value,
            Some(serde_json::json!("2024-01-02T00:00:00Z"))
        );

        // Deletion fields are immutable; no finalizer may be added once deleting.
        let deleting = ObjectMeta {
            deletion_timestamp: Some(t2.clone()),
            deletion_grace_period_seconds: Some(30),
            finalizers: Some(vec!["a".into()]),
            ..old.clone()
        };
        let errs = validate_object_meta_update(
            &ObjectMeta {
                finalizers: Some(vec!["a".into(), "b".into()]),
                deletion_grace_period_seconds: Some(0),
                ..deleting.clone()
            },
            &deleting,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![
                ("metadata.finalizers", "no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b\"}"),
                ("metadata.deletionGracePeriodSeconds", "field is immutable"),
            ]
        );
        let errs = validate_object_meta_update(
            &ObjectMeta {
                deletion_timestamp: None,
                ..deleting.clone()
            },
            &deleting,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![("metadata.deletionTimestamp", "field is immutable")]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::Value::Null));

        // New labels and annotations are validated.
        let bad = ObjectMeta {
            labels: Some(labels(&[("a b", "")])),
            ..old.clone()
        };
        assert_eq!(
            details(&validate_object_meta_update(&bad, &old, &p)),
            vec![("metadata.labels", NAME_PART_MSG)]
        );
    }

    #[test]
    fn immutable_field() {
        let p = Path::new("spec").child("x");
        assert!(validate_immutable_field(&1, &1, &p).is_empty());
        assert_eq!(
            details(&validate_immutable_field(&"a", &"b", &p)),
            vec![("spec.x", "field is immutable")]
        );
    }
}

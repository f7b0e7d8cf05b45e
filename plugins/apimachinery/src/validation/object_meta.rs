//! `ObjectMeta` and what it holds (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go`,
//! `pkg/apis/meta/v1/validation/validation.go`): labels, annotations, finalizers, owner
//! references, managed fields, the name rule, and the update rules.

use super::names::*;
use crate::field::{self, ErrorList, Path};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference,
};
use std::collections::{BTreeMap, BTreeSet};

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

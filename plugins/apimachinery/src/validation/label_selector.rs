//! `ValidateLabelSelector` and `ValidateLabelSelectorRequirement`, ported from
//! `k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go` (with
//! `AllowInvalidLabelValueInSelector` false): `matchLabels` as labels, each expression's
//! operator, key and values.

use super::names::is_valid_label_value;
use super::object_meta::{validate_label_name, validate_labels};
use crate::field::{self, ErrorList, Path};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// `ValidateLabelSelector`: the problems of `selector` at `path`.
pub fn validate_label_selector(selector: &LabelSelector, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(labels) = &selector.match_labels {
        errs.extend(validate_labels(labels, &path.child("matchLabels")));
    }
    for (i, expr) in selector.match_expressions.iter().flatten().enumerate() {
        errs.extend(validate_label_selector_requirement(
            expr,
            &path.child("matchExpressions").index(i),
        ));
    }
    errs
}

/// `ValidateLabelSelectorRequirement`.
pub fn validate_label_selector_requirement(
    req: &LabelSelectorRequirement,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let values = req.values.as_deref().unwrap_or_default();
    match req.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                errs.push(field::required(
                    &path.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errs.push(field::forbidden(
                    &path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        other => errs.push(field::invalid(
            &path.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    errs.extend(validate_label_name(&req.key, &path.child("key")));
    for (i, v) in values.iter().enumerate() {
        for msg in is_valid_label_value(v) {
            errs.push(field::invalid(&path.child("values").index(i), v, msg));
        }
    }
    errs
}

//! Checking a plugin's self-description before it may serve anything. The rules are those
//! kube-apiserver applies to a CustomResourceDefinition's names
//! (`apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`
//! `ValidateCustomResourceDefinitionNames`, `ValidateCustomResourceDefinitionSpec`), with the
//! core group (`""`) allowed for the standard plugins.

use crate::strategy::ResourceDescription;
use serde_json::Value;
use wasm_apiserver_apimachinery::validation;

/// `IsDNS1035Label` (apimachinery's `validation.go`) holds.
fn is_dns1035_label(s: &str) -> bool {
    validation::is_dns1035_label(s).is_empty()
}

/// `IsDNS1123Subdomain` (apimachinery's `validation.go`) holds.
fn is_dns1123_subdomain(s: &str) -> bool {
    validation::is_dns1123_subdomain(s).is_empty()
}

fn is_kind(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Every problem with a description, worded for the plugin author. Empty = valid.
pub fn validate(d: &ResourceDescription) -> Vec<String> {
    let mut p = Vec::new();
    let group_ok = d.group.is_empty() || (is_dns1123_subdomain(&d.group) && d.group.contains('.'));
    if !group_ok {
        p.push(format!(
            "group {:?}: must be empty (core) or a DNS-1123 subdomain with at least one dot, e.g. example.dev",
            d.group
        ));
    }
    if !is_dns1035_label(&d.version) || !d.version.starts_with('v') {
        p.push(format!(
            "version {:?}: must look like v1, v1beta1 or v2alpha1",
            d.version
        ));
    }
    if !is_kind(&d.kind) {
        p.push(format!(
            "kind {:?}: must be UpperCamelCase letters and digits, e.g. Widget",
            d.kind
        ));
    }
    if !is_kind(&d.list_kind) || d.list_kind == d.kind {
        p.push(format!(
            "listKind {:?}: must be UpperCamelCase and differ from kind, e.g. {}List",
            d.list_kind, d.kind
        ));
    }
    if !is_dns1035_label(&d.plural) {
        p.push(format!(
            "plural {:?}: must be a lower-case DNS-1035 label, e.g. widgets",
            d.plural
        ));
    }
    if !is_dns1035_label(&d.singular) {
        p.push(format!(
            "singular {:?}: must be a lower-case DNS-1035 label, e.g. widget",
            d.singular
        ));
    }
    for s in &d.short_names {
        if !is_dns1035_label(s) {
            p.push(format!(
                "shortName {s:?}: must be a lower-case DNS-1035 label"
            ));
        }
    }
    for s in &d.subresources {
        if s != "status" {
            p.push(format!("subresource {s:?}: only \"status\" is supported"));
        }
    }
    for c in &d.printer_columns {
        if c.name.is_empty() {
            p.push("printer column with an empty name".to_string());
        }
        if !["integer", "number", "string", "boolean", "date"].contains(&c.type_.as_str()) {
            p.push(format!(
                "printer column {:?}: type {:?} must be integer, number, string, boolean or date",
                c.name, c.type_
            ));
        }
        let path_ok = c.json_path.is_empty()
            || c.json_path == "@name"
            || c.json_path == "@age"
            || c.json_path.starts_with('.');
        if !path_ok {
            p.push(format!(
                "printer column {:?}: jsonPath {:?} must start with '.', or be @name, @age or empty",
                c.name, c.json_path
            ));
        }
    }
    for f in &d.selectable_fields {
        if f.is_empty() || f.starts_with('.') || f.ends_with('.') || f.contains("..") {
            p.push(format!(
                "selectable field {f:?}: must be a dotted path such as spec.nodeName"
            ));
        }
    }
    if let Some(ex) = &d.example {
        if ex.get("apiVersion").and_then(Value::as_str) != Some(d.api_version().as_str())
            || ex.get("kind").and_then(Value::as_str) != Some(d.kind.as_str())
        {
            p.push(format!(
                "example: must have apiVersion {:?} and kind {:?}",
                d.api_version(),
                d.kind
            ));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn good() -> ResourceDescription {
        ResourceDescription {
            group: "example.dev".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            short_names: vec!["wd".into()],
            categories: vec!["all".into()],
            namespaced: true,
            subresources: vec!["status".into()],
            printer_columns: vec![],
            selectable_fields: vec!["spec.size".into()],
            openapi_schema: json!({"type": "object"}),
            example: Some(json!({"apiVersion": "example.dev/v1", "kind": "Widget"})),
            return_deleted_object: false,
        }
    }

    #[test]
    fn a_good_description_passes() {
        assert!(validate(&good()).is_empty());
        let core = ResourceDescription {
            group: String::new(),
            ..good()
        };
        assert_eq!(
            validate(&core).len(),
            1,
            "example apiVersion now mismatches"
        );
    }

    #[test]
    fn bad_names_are_each_reported() {
        let d = ResourceDescription {
            group: "nodots".into(),
            version: "one".into(),
            kind: "widget".into(),
            plural: "Widgets".into(),
            subresources: vec!["scale".into()],
            ..good()
        };
        let p = validate(&d);
        for needle in ["group", "version", "kind", "plural", "subresource"] {
            assert!(
                p.iter().any(|m| m.starts_with(needle)),
                "{needle} not in {p:?}"
            );
        }
    }
}

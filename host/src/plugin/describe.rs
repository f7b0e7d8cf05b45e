//! Checking a plugin's self-description before it may serve anything. The rules are those
//! kube-apiserver applies to a CustomResourceDefinition's names
//! (`apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`
//! `ValidateCustomResourceDefinitionNames`, `ValidateCustomResourceDefinitionSpec`), with the
//! core group (`""`) allowed for the standard plugins.

use crate::strategy::{PrinterColumn, ResourceDescription};
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

fn check_columns_and_fields(
    columns: &[crate::strategy::PrinterColumn],
    fields: &[String],
    version: &str,
    p: &mut Vec<String>,
) {
    for c in columns {
        if c.name.is_empty() {
            p.push(format!("{version}printer column with an empty name"));
        }
        if !["integer", "number", "string", "boolean", "date"].contains(&c.type_.as_str()) {
            p.push(format!(
                "{version}printer column {:?}: type {:?} must be integer, number, string, boolean or date",
                c.name, c.type_
            ));
        }
        let path_ok = c.json_path.is_empty()
            || c.json_path == "@name"
            || c.json_path == "@age"
            || c.json_path.starts_with('.');
        if !path_ok {
            p.push(format!(
                "{version}printer column {:?}: jsonPath {:?} must start with '.', or be @name, @age or empty",
                c.name, c.json_path
            ));
        }
    }
    for f in fields {
        if f.is_empty() || f.starts_with('.') || f.ends_with('.') || f.contains("..") {
            p.push(format!(
                "{version}selectable field {f:?}: must be a dotted path such as spec.nodeName"
            ));
        }
    }
}

/// The rules of a CRD's `spec.versions` (`ValidateCustomResourceDefinitionSpec`): unique
/// version names, at least one served, a deprecation warning only on a deprecated version, at
/// most 256 bytes and printable; the core group serves `v1` alone.
fn check_versions(d: &ResourceDescription, p: &mut Vec<String>) {
    if d.versions.is_empty() {
        return;
    }
    let mut seen = std::collections::BTreeSet::new();
    for v in &d.versions {
        if !seen.insert(v.name.as_str()) {
            p.push(format!("versions: {:?} is listed twice", v.name));
        }
        if !is_dns1035_label(&v.name) || !v.name.starts_with('v') {
            p.push(format!(
                "version {:?}: must look like v1, v1beta1 or v2alpha1",
                v.name
            ));
        }
        match &v.deprecation_warning {
            Some(_) if !v.deprecated => p.push(format!(
                "version {:?}: deprecation-warning is set but the version is not deprecated",
                v.name
            )),
            // Go's len() counts bytes; the text goes into a `Warning` header.
            Some(w) if w.len() > 256 => p.push(format!(
                "version {:?}: deprecation-warning must be at most 256 bytes",
                v.name
            )),
            Some(w) if w.chars().any(char::is_control) => p.push(format!(
                "version {:?}: deprecation-warning must contain only printable characters",
                v.name
            )),
            _ => {}
        }
        if !v.openapi_schema.is_object() {
            p.push(format!(
                "version {:?}: openapi-schema must be a JSON object",
                v.name
            ));
        }
        check_columns_and_fields(
            &v.printer_columns,
            &v.selectable_fields,
            &format!("version {:?}: ", v.name),
            p,
        );
    }
    if !d.versions.iter().any(|v| v.served) {
        p.push("versions: at least one version must be served".into());
    }
    if d.group.is_empty() && (d.versions.len() > 1 || d.version != "v1") {
        p.push("versions: the core group serves one version, v1".into());
    }
    // `printer-cells` sees the storage version and answers its computed columns, in order:
    // every version's computed columns must be the same, so the cells fit any of them.
    let computed = |cs: &[PrinterColumn]| -> Vec<String> {
        cs.iter()
            .filter(|c| c.json_path.is_empty())
            .map(|c| c.name.clone())
            .collect()
    };
    if let Some(storage) = d.versions.iter().find(|v| v.storage) {
        for v in d.versions.iter().filter(|v| v.served) {
            if computed(&v.printer_columns) != computed(&storage.printer_columns) {
                p.push(format!(
                    "version {:?}: its computed printer columns (empty JSONPath) must be the storage version's, {:?}: printer-cells answers them from the storage version",
                    v.name,
                    computed(&storage.printer_columns)
                ));
            }
        }
    }
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
    // With `versions`, the description's own columns and fields are the storage version's,
    // checked there.
    if d.versions.is_empty() {
        check_columns_and_fields(&d.printer_columns, &d.selectable_fields, "", &mut p);
    }
    check_versions(d, &mut p);
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
            versions: Vec::new(),
        }
    }

    #[test]
    fn a_good_description_passes() {
        assert!(validate(&good()).is_empty());
        // Served beside the storage version, deprecated: valid; computed columns differing
        // from the storage version's are not.
        let mut old = version("v1alpha1", false);
        old.deprecated = true;
        let mut d = ResourceDescription {
            versions: vec![version("v1", true), old],
            ..good()
        };
        assert!(validate(&d).is_empty(), "{:?}", validate(&d));
        d.versions[1].printer_columns = vec![PrinterColumn::computed("Ready", "string")];
        assert!(validate(&d).iter().any(|m| m
            .contains("computed printer columns (empty JSONPath) must be the storage version's")));
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

    fn version(
        name: &str,
        storage: bool,
    ) -> wasm_apiserver_apimachinery::resource::VersionDescription {
        wasm_apiserver_apimachinery::resource::VersionDescription {
            name: name.into(),
            served: true,
            storage,
            deprecated: false,
            deprecation_warning: None,
            openapi_schema: json!({"type": "object"}),
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
        }
    }

    #[test]
    fn versions_follow_a_crds_rules() {
        let one = ResourceDescription {
            versions: vec![version("v1", true)],
            ..good()
        };
        assert!(validate(&one).is_empty(), "{:?}", validate(&one));
        let mut twice = version("v1", false);
        twice.deprecation_warning = Some("old".into());
        twice.served = false;
        let d = ResourceDescription {
            versions: vec![version("v1", true), twice, version("one", false)],
            ..good()
        };
        let p = validate(&d);
        for needle in [
            "versions: \"v1\" is listed twice",
            "deprecation-warning is set but the version is not deprecated",
            "version \"one\": must look like v1",
        ] {
            assert!(
                p.iter().any(|m| m.contains(needle)),
                "{needle} not in {p:?}"
            );
        }
        let core = ResourceDescription {
            group: String::new(),
            example: None,
            versions: vec![version("v1", true), version("v2", false)],
            ..good()
        };
        assert!(validate(&core)
            .iter()
            .any(|m| m == "versions: the core group serves one version, v1"));
    }
}

//! The host side of `wasm-apiserver:strategy@0.2.0` (`wit/0.2.0/strategy.wit`): the generated
//! bindings, the `host` imports, and the conversions from its records to the host's
//! [`Strategy`](crate::strategy::Strategy) types — the versions of a resource
//! (`served-version`), `return-deleted-object` as a field, and `convert`.

use super::{Call, RawCreateOutcome};
use crate::plugin::host_state::HostState;
use crate::strategy::{Attributes, FieldError, Rejection, ResourceDescription};
use serde_json::Value;
use wasm_apiserver_apimachinery::resource::VersionDescription;
use wasmtime::Store;

mod generated {
    wasmtime::component::bindgen!({
        world: "strategy-plugin",
        path: "../wit/0.2.0",
    });
}

pub use generated::exports::wasm_apiserver::strategy::strategy::Guest;
pub use generated::wasm_apiserver::strategy::{host, types};
pub use generated::{StrategyPlugin, StrategyPluginPre};

/// The version of the contract this module implements.
pub const VERSION: &str = "0.2.0";

fn json_object(what: &str, text: &str, problems: &mut Vec<String>) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            problems.push(format!("{what}: must be a JSON object"));
            Value::Null
        }
        Err(e) => {
            problems.push(format!("{what}: not JSON: {e}"));
            Value::Null
        }
    }
}

/// Convert the WIT record, parsing the schemas and the example. The storage version's schema,
/// columns and fields become the description's own (what the hooks see); every version is in
/// `versions`. Errors: the problems found (the rules on versions are `describe::validate`'s).
pub fn description(d: types::ResourceDescription) -> Result<ResourceDescription, Vec<String>> {
    let mut problems = Vec::new();
    let versions: Vec<VersionDescription> = d
        .versions
        .into_iter()
        .map(|v| VersionDescription {
            openapi_schema: json_object(
                &format!("versions[{}].openapi-schema", v.name),
                &v.openapi_schema,
                &mut problems,
            ),
            name: v.name,
            served: v.served,
            storage: v.storage,
            deprecated: v.deprecated,
            deprecation_warning: v.deprecation_warning,
            printer_columns: v.printer_columns.into_iter().map(printer_column).collect(),
            selectable_fields: v.selectable_fields,
        })
        .collect();
    let example = d
        .example
        .as_deref()
        .map(|e| json_object("example", e, &mut problems));
    let storage = match versions.iter().filter(|v| v.storage).count() {
        1 => versions.iter().find(|v| v.storage).cloned(),
        0 => {
            problems.push("versions: no version is the storage version".into());
            None
        }
        n => {
            problems.push(format!(
                "versions: {n} versions are the storage version; exactly one must be"
            ));
            None
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let storage = storage.expect("checked above");
    Ok(ResourceDescription {
        group: d.group,
        version: storage.name,
        kind: d.kind,
        list_kind: d.list_kind,
        plural: d.plural,
        singular: d.singular,
        short_names: d.short_names,
        categories: d.categories,
        namespaced: d.namespaced,
        subresources: d.subresources,
        printer_columns: storage.printer_columns,
        selectable_fields: storage.selectable_fields,
        openapi_schema: storage.openapi_schema,
        example,
        return_deleted_object: d.return_deleted_object,
        versions,
    })
}

super::shared_hooks!();

impl super::Guest for Guest {
    fn convert(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
        desired_api_version: &str,
    ) -> Call<Result<String, Rejection>> {
        Ok(self
            .call_convert(s, obj, desired_api_version)?
            .map_err(rejection))
    }

    shared_guest_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(name: &str, storage: bool) -> types::ServedVersion {
        types::ServedVersion {
            name: name.into(),
            served: true,
            storage,
            deprecated: false,
            deprecation_warning: None,
            openapi_schema: format!(r#"{{"type":"object","description":"{name}"}}"#),
            printer_columns: Vec::new(),
            selectable_fields: vec![format!("spec.{name}")],
        }
    }

    fn record(versions: Vec<types::ServedVersion>) -> types::ResourceDescription {
        types::ResourceDescription {
            group: "example.dev".into(),
            versions,
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: true,
            subresources: Vec::new(),
            return_deleted_object: true,
            example: None,
        }
    }

    #[test]
    fn the_storage_version_is_what_the_hooks_see() {
        let d = description(record(vec![
            version("v1alpha1", false),
            version("v1", true),
        ]))
        .unwrap();
        assert_eq!(d.version, "v1");
        assert_eq!(d.openapi_schema["description"], "v1");
        assert_eq!(d.selectable_fields, vec!["spec.v1".to_string()]);
        assert_eq!(d.versions.len(), 2);
        assert_eq!(d.served_versions(), vec!["v1", "v1alpha1"]);
        assert!(d.return_deleted_object);
    }

    #[test]
    fn exactly_one_storage_version() {
        let p = description(record(vec![version("v1", false)])).unwrap_err();
        assert_eq!(p, vec!["versions: no version is the storage version"]);
        let p = description(record(vec![version("v1", true), version("v2", true)])).unwrap_err();
        assert!(p[0].contains("2 versions are the storage version"), "{p:?}");
    }
}

//! The host side of `wasm-apiserver:strategy@0.1.0` (`wit/0.1.0/strategy.wit`, frozen as
//! released): the generated bindings, the `host` imports this version gives a guest, and the
//! conversions from its records to the host's [`Strategy`](crate::strategy::Strategy) types.

use super::{Call, RawCreateOutcome};
use crate::plugin::host_state::HostState;
use crate::strategy::{Attributes, FieldError, Rejection, ResourceDescription};
use serde_json::Value;
use wasm_apiserver_apimachinery::resource::RETURN_DELETED_OBJECT_EXTENSION;
use wasmtime::Store;

mod generated {
    wasmtime::component::bindgen!({
        world: "strategy-plugin",
        path: "../wit/0.1.0",
    });
}

pub use generated::exports::wasm_apiserver::strategy::strategy::Guest;
pub use generated::wasm_apiserver::strategy::{host, types};
pub use generated::{StrategyPlugin, StrategyPluginPre};

/// The version of the contract this module implements.
pub const VERSION: &str = "0.1.0";

/// Convert the WIT record, parsing the schema and example. Errors: the problems found.
pub fn description(d: types::ResourceDescription) -> Result<ResourceDescription, Vec<String>> {
    let mut problems = Vec::new();
    let mut return_deleted_object = false;
    let openapi_schema = match serde_json::from_str::<Value>(&d.openapi_schema) {
        Ok(Value::Object(mut root)) => {
            match root.remove(RETURN_DELETED_OBJECT_EXTENSION) {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => return_deleted_object = true,
                Some(_) => problems.push(format!(
                    "openapi-schema: {RETURN_DELETED_OBJECT_EXTENSION} must be a boolean"
                )),
            }
            Value::Object(root)
        }
        Ok(_) => {
            problems.push("openapi-schema: must be a JSON object".to_string());
            Value::Null
        }
        Err(e) => {
            problems.push(format!("openapi-schema: not JSON: {e}"));
            Value::Null
        }
    };
    let example = match d.example.as_deref().map(serde_json::from_str::<Value>) {
        None => None,
        Some(Ok(v @ Value::Object(_))) => Some(v),
        Some(Ok(_)) => {
            problems.push("example: must be a JSON object".to_string());
            None
        }
        Some(Err(e)) => {
            problems.push(format!("example: not JSON: {e}"));
            None
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ResourceDescription {
        group: d.group,
        version: d.version,
        kind: d.kind,
        list_kind: d.list_kind,
        plural: d.plural,
        singular: d.singular,
        short_names: d.short_names,
        categories: d.categories,
        namespaced: d.namespaced,
        subresources: d.subresources,
        printer_columns: d.printer_columns.into_iter().map(printer_column).collect(),
        selectable_fields: d.selectable_fields,
        openapi_schema,
        example,
        return_deleted_object,
        versions: Vec::new(),
    })
}

super::shared_hooks!();

impl super::Guest for Guest {
    /// A 0.1 component serves one version: a conversion is only ever to that version, and
    /// the host does not call this.
    fn convert(
        &self,
        _s: &mut Store<HostState>,
        _obj: &str,
        desired_api_version: &str,
    ) -> Call<Result<String, Rejection>> {
        Ok(Err(Rejection::BadRequest(format!(
            "a wasm-apiserver:strategy@{VERSION} plugin serves one version and cannot convert to {desired_api_version}"
        ))))
    }

    shared_guest_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(schema: &str) -> types::ResourceDescription {
        types::ResourceDescription {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
            list_kind: "PodList".into(),
            plural: "pods".into(),
            singular: "pod".into(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: true,
            subresources: Vec::new(),
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
            openapi_schema: schema.into(),
            example: None,
        }
    }

    #[test]
    fn return_deleted_object_travels_in_the_schema() {
        let d = description(record(r#"{"type":"object"}"#)).unwrap();
        assert!(
            !d.return_deleted_object,
            "a 0.1 plugin keeps its Status answer"
        );
        let d = description(record(&format!(
            r#"{{"type":"object","{RETURN_DELETED_OBJECT_EXTENSION}":true}}"#
        )))
        .unwrap();
        assert!(d.return_deleted_object);
        // Not published: the schema the host serves is the plugin's without the extension.
        assert_eq!(d.openapi_schema, serde_json::json!({"type": "object"}));
        let problems = description(record(&format!(
            r#"{{"type":"object","{RETURN_DELETED_OBJECT_EXTENSION}":"yes"}}"#
        )))
        .unwrap_err();
        assert!(problems[0].contains("must be a boolean"), "{problems:?}");
    }
}

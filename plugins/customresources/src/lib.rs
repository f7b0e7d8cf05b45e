//! The standard strategy of custom resources: one component serving every
//! CustomResourceDefinition, configured with each CRD's JSON (world
//! `configured-strategy-plugin` of `wit/0.3.0/strategy.wit`). What kube-apiserver does to a
//! custom resource in `apiextensions-apiserver/pkg/registry/customresource/strategy.go`,
//! `status_strategy.go` and `validator.go`, and in the decoding of
//! `pkg/apiserver/customresource_handler.go`, through [`wasm_apiserver_apiextensions`]:
//!
//! - `read`: a stored object pruned and defaulted by the current schema (one converted to
//!   another version: pruned by that version's schema);
//! - create and update: pruned (unknown fields dropped; the host has already answered
//!   `fieldValidation=Strict` and `Warn` from the schema), non-nullable `null`s dropped,
//!   defaulted; `generation` 1 on create and + 1 when anything but `metadata` changed; with the
//!   status subresource, `status` dropped on create and kept from the stored object on update;
//! - the status update: the stored object with the request's `status`;
//! - validation: `apiVersion` and `kind`, the OpenAPI v3 schema with kube's messages, and the
//!   `x-kubernetes-validations` CEL rules (transition rules ratcheted on update);
//! - `get-attrs`: labels and the version's `selectableFields`;
//! - `convert`: strategy `None` (the `apiVersion` rewritten). `Webhook` conversion is the
//!   host's (it calls the URL, `host/src/strategy/webhook_converter.rs`, and never calls this
//!   hook then); this plugin refuses it.
//!
//! The hooks see objects in the storage version, whose schema they validate against.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use wasm_apiserver_apiextensions::conversion::convert_none;
use wasm_apiserver_apiextensions::custom_resource::{CustomResource, FieldValidation};
use wasm_apiserver_sdk::configured::ConfiguredStrategy;
use wasm_apiserver_sdk::field::ErrorList;
use wasm_apiserver_sdk::glue::{default_attrs, HookError};
use wasm_apiserver_sdk::{
    export_configured_strategy, Attributes, PrinterColumn, ResourceDescription, VersionDescription,
};

/// One CRD, ready to serve its custom resources.
pub struct CustomResources {
    description: ResourceDescription,
    /// The storage version's generic strategy: every hook but `convert` and `read` sees that
    /// version.
    storage: CustomResource,
    /// The other versions' (by `apiVersion`), whose schemas prune what is converted to them.
    others: BTreeMap<String, CustomResource>,
    /// `conversion.strategy` is `None` (or absent).
    convert_none: bool,
    /// Selectable fields by `apiVersion`.
    selectable: BTreeMap<String, Vec<String>>,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A CRD version's `additionalPrinterColumns` as the host's columns: `Name` first, as kube's
/// table convertor puts it (apiextensions-apiserver/pkg/registry/customresource/
/// tableconvertor/tableconvertor.go), and `Age` when the version declares no column.
fn columns(version: &Value) -> Vec<PrinterColumn> {
    let mut out = vec![PrinterColumn::name()];
    let declared = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if declared.is_empty() {
        out.push(PrinterColumn::age());
    }
    for c in declared {
        let path = str_at(&c, &["jsonPath"]);
        let mut col = PrinterColumn::new(str_at(&c, &["name"]), str_at(&c, &["type"]), path);
        col.format = str_at(&c, &["format"]).to_string();
        col.description = match str_at(&c, &["description"]) {
            "" => format!("Custom resource definition column (in JSONPath format): {path}"),
            d => d.to_string(),
        };
        col.priority = c.get("priority").and_then(Value::as_i64).unwrap_or(0) as i32;
        out.push(col);
    }
    out
}

impl CustomResources {
    /// Serve `crd` (a CustomResourceDefinition's JSON, as validated when it was written).
    /// Errors: it is not JSON, or it has no storage version.
    pub fn new(crd: &Value) -> Result<CustomResources, String> {
        let spec = crd.get("spec").ok_or("the CRD has no spec")?;
        let group = str_at(spec, &["group"]).to_string();
        let versions = spec
            .get("versions")
            .and_then(Value::as_array)
            .ok_or("the CRD has no versions")?;
        let storage_name = versions
            .iter()
            .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .map(|v| str_at(v, &["name"]).to_string())
            .ok_or("the CRD has no storage version")?;
        let (storage, _) = CustomResource::new(crd, &storage_name)
            .ok_or("the CRD's storage version is not among its versions")?;
        let mut selectable = BTreeMap::new();
        let mut descriptions = Vec::new();
        let mut others = BTreeMap::new();
        for v in versions {
            let name = str_at(v, &["name"]).to_string();
            if name != storage_name {
                if let Some((cr, _)) = CustomResource::new(crd, &name) {
                    others.insert(format!("{group}/{name}"), cr);
                }
            }
            let fields: Vec<String> = v
                .get("selectableFields")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|f| str_at(f, &["jsonPath"]).trim_start_matches('.').to_string())
                        .collect()
                })
                .unwrap_or_default();
            selectable.insert(format!("{group}/{name}"), fields.clone());
            descriptions.push(VersionDescription {
                served: v.get("served").and_then(Value::as_bool).unwrap_or(false),
                storage: name == storage_name,
                deprecated: v
                    .get("deprecated")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                deprecation_warning: v
                    .get("deprecationWarning")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                openapi_schema: v
                    .pointer("/schema/openAPIV3Schema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"})),
                printer_columns: columns(v),
                selectable_fields: fields,
                name,
            });
        }
        let names = spec.get("names").cloned().unwrap_or(Value::Null);
        let kind = str_at(&names, &["kind"]).to_string();
        let mut d =
            ResourceDescription::new(&group, &storage_name, &kind, str_at(&names, &["plural"]));
        d.list_kind = match str_at(&names, &["listKind"]) {
            "" => format!("{kind}List"),
            l => l.to_string(),
        };
        d.singular = match str_at(&names, &["singular"]) {
            "" => kind.to_lowercase(),
            s => s.to_string(),
        };
        d.short_names = strings(names.get("shortNames"));
        d.categories = strings(names.get("categories"));
        d.namespaced = str_at(spec, &["scope"]) != "Cluster";
        let storage_version = versions
            .iter()
            .find(|v| str_at(v, &["name"]) == storage_name)
            .expect("found above");
        if storage_version.pointer("/subresources/status").is_some() {
            d.subresources = vec!["status".into()];
        }
        let storage_description = descriptions
            .iter()
            .find(|v| v.storage)
            .expect("one storage version")
            .clone();
        d.openapi_schema = storage_description.openapi_schema;
        d.printer_columns = storage_description.printer_columns;
        d.selectable_fields = storage_description.selectable_fields;
        d.versions = descriptions;
        let strategy = str_at(spec, &["conversion", "strategy"]);
        Ok(CustomResources {
            description: d,
            storage,
            others,
            convert_none: strategy.is_empty() || strategy == "None",
            selectable,
        })
    }

    /// Prune, drop non-nullable nulls and default a written object.
    fn decode(&self, obj: &mut Value) {
        // Strict and Warn were answered by the host from the schema; what is left to do here
        // is drop what the schema does not hold.
        let _ = self.storage.decode(obj, FieldValidation::Ignore);
    }
}

impl ConfiguredStrategy for CustomResources {
    fn configure(config: &str) -> Result<Self, String> {
        let crd: Value = serde_json::from_str(config)
            .map_err(|e| format!("the configuration is not JSON: {e}"))?;
        CustomResources::new(&crd)
    }

    fn describe(&self) -> ResourceDescription {
        self.description.clone()
    }

    /// In the storage version: pruned and defaulted by its current schema. In another version
    /// (an object the host converted to it): pruned by that version's schema, as kube prunes
    /// after a conversion.
    fn read(&self, obj: &mut Value) -> Result<(), HookError> {
        let api_version = str_at(obj, &["apiVersion"]).to_string();
        match self.others.get(&api_version) {
            Some(other) => other.prune_converted(obj),
            None => self.storage.read(obj),
        }
        Ok(())
    }

    fn prepare_for_create(&self, obj: &mut Value) -> Result<(), HookError> {
        self.decode(obj);
        self.storage.prepare_for_create(obj);
        Ok(())
    }

    fn validate(&self, obj: &Value) -> ErrorList {
        self.storage.validate(obj, None)
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) -> Result<(), HookError> {
        self.decode(new);
        self.storage.prepare_for_update(new, old);
        Ok(())
    }

    fn validate_update(&self, new: &Value, old: &Value) -> ErrorList {
        self.storage.validate(new, Some(old))
    }

    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) -> Result<(), HookError> {
        self.decode(new);
        self.storage.prepare_for_status_update(new, old);
        Ok(())
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> ErrorList {
        self.storage.validate(new, Some(old))
    }

    fn get_attrs(&self, obj: &Value) -> Attributes {
        let api_version = str_at(obj, &["apiVersion"]);
        let fields = self
            .selectable
            .get(api_version)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        default_attrs(obj, fields)
    }

    fn convert(&self, mut obj: Value, desired_api_version: &str) -> Result<Value, HookError> {
        if !self.convert_none {
            return Err(HookError::BadRequest(
                "the CRD converts by webhook, which the host calls, not this plugin".into(),
            ));
        }
        convert_none(&mut obj, desired_api_version);
        Ok(obj)
    }
}

export_configured_strategy!(CustomResources);

#[cfg(test)]
mod tests;

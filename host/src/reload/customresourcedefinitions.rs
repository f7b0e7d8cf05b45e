//! The host-side strategy of `customresourcedefinitions.apiextensions.k8s.io/v1`: kube's
//! (`apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go`), with the
//! CRD's validation from `plugins/apiextensions` (`crd_validation.rs`, a port of
//! `pkg/apis/apiextensions/validation/validation.go`, CEL rules compiled at write time). What
//! the CRD serves is the plugin manager's (`crds.rs`); this file is only the object's rules.

use super::strategyplugins::set_generation;
use crate::strategy::{
    with_status_of, Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy,
    StrategyResult,
};
use serde_json::{json, Value};
use wasm_apiserver_apiextensions::crd_validation;

/// The group of CustomResourceDefinitions.
pub const CRD_GROUP: &str = "apiextensions.k8s.io";
/// Their plural.
pub const CRD_PLURAL: &str = "customresourcedefinitions";

/// The strategy of CustomResourceDefinition objects (cluster-scoped, with a status
/// subresource the servers write).
pub struct CustomResourceDefinitionStrategy {
    description: ResourceDescription,
}

impl CustomResourceDefinitionStrategy {
    /// kube's resource: `crd`/`crds`, category `api-extensions`, columns `Name` and
    /// `Created At` (as `kubectl get crd` prints them).
    pub fn new() -> CustomResourceDefinitionStrategy {
        let mut d =
            ResourceDescription::new(CRD_GROUP, "v1", "CustomResourceDefinition", CRD_PLURAL);
        d.short_names = vec!["crd".into(), "crds".into()];
        d.categories = vec!["api-extensions".into()];
        d.namespaced = false;
        d.subresources = vec!["status".into()];
        d.printer_columns = vec![
            PrinterColumn::name(),
            PrinterColumn::new("Created At", "date", ".metadata.creationTimestamp"),
        ];
        // Served as kube serves it; the schema of the CRD object itself is kept open (its own
        // rules are `crd_validation`'s).
        d.openapi_schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        CustomResourceDefinitionStrategy { description: d }
    }
}

impl Default for CustomResourceDefinitionStrategy {
    fn default() -> Self {
        Self::new()
    }
}

fn generation(obj: &Value) -> i64 {
    wasm_apiserver_apimachinery::meta::accessor(obj)
        .generation()
        .unwrap_or(0)
}

/// `SetDefaults_CustomResourceDefinitionSpec` (apiextensions-apiserver/pkg/apis/apiextensions/
/// v1/defaults.go), which kube runs when it decodes a write: `names.singular` the lower-cased
/// kind, `names.listKind` `<Kind>List`, `conversion` strategy `None`.
fn set_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let empty = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
        if empty(names.get("singular")) {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if empty(names.get("listKind")) && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if spec.get("conversion").is_none_or(Value::is_null) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// strategy.go: the storage version is added to `status.storedVersions` on every write of the
/// spec, so that a version objects were ever written in is known until removed by hand.
fn add_stored_version(obj: &mut Value) {
    let storage = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        })
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let Some(storage) = storage else { return };
    let Some(o) = obj.as_object_mut() else { return };
    let status = o.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let status = status.as_object_mut().expect("an object");
    // Not `omitempty` in kube's type: a new CRD answers `acceptedNames: {plural: "", kind: ""}`,
    // which typed clients (Python's models) require.
    status
        .entry("acceptedNames")
        .or_insert_with(|| json!({"plural": "", "kind": ""}));
    let stored = status.entry("storedVersions").or_insert_with(|| json!([]));
    if !stored.is_array() {
        *stored = json!([]);
    }
    let list = stored.as_array_mut().expect("an array");
    if !list.iter().any(|v| v.as_str() == Some(storage.as_str())) {
        list.push(json!(storage));
    }
}

impl Strategy for CustomResourceDefinitionStrategy {
    fn name(&self) -> &str {
        "wasm-apiserver"
    }
    fn description(&self) -> &ResourceDescription {
        &self.description
    }
    fn allow_create_on_update(&self) -> bool {
        false
    }
    fn allow_unconditional_update(&self) -> bool {
        false
    }
    /// `PrepareForCreate`: status cleared, generation 1, the storage version stored.
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let mut obj = obj.clone();
        if let Some(m) = obj.as_object_mut() {
            m.remove("status");
        }
        set_defaults(&mut obj);
        set_generation(&mut obj, 1);
        add_stored_version(&mut obj);
        Ok(obj)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(crd_validation::validate(obj).errors)
    }
    fn warnings_on_create(&self, obj: &Value) -> StrategyResult<Vec<String>> {
        Ok(crd_validation::validate(obj).warnings)
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    /// `PrepareForUpdate`: status kept, generation + 1 when the spec changed, the storage
    /// version stored.
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut new = new.clone();
        with_status_of(&mut new, old);
        set_defaults(&mut new);
        let changed = new.get("spec") != old.get("spec");
        set_generation(&mut new, generation(old) + i64::from(changed));
        add_stored_version(&mut new);
        Ok(new)
    }
    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(crd_validation::validate_update(new, old).errors)
    }
    fn warnings_on_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        Ok(crd_validation::validate_update(new, old).warnings)
    }
    /// The status strategy: the stored object with the new status.
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut out = old.clone();
        with_status_of(&mut out, new);
        Ok(out)
    }
    fn validate_status_update(&self, new: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(crd_validation::validate_status_update(new).errors)
    }
    fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
        Ok(None)
    }
    fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn printer_cells(&self, _: &Value) -> StrategyResult<Vec<Value>> {
        Ok(Vec::new())
    }
    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes> {
        Ok(Attributes::labels_only(obj))
    }
}

//! `storageversionmigrations.storagemigration.k8s.io/v1alpha1`, served by the host as kube
//! 1.30–1.34 serves it (`pkg/registry/storagemigration/storageversionmigration/strategy.go`,
//! `pkg/apis/storagemigration/validation/validation.go`): cluster-scoped, a `status`
//! subresource, no `generation`. A `StorageVersionMigration` names a
//! resource (`spec.resource`: group, version, resource); the storage version migrator
//! (`controllers/storage_version_migrator.rs`) rewrites every stored object of it — after an
//! encryption key rotation, every object sealed with an older key is sealed again with the
//! write key — and reports `Running`, then `Succeeded` or `Failed`, in `status.conditions`.

use crate::strategy::{
    with_status_of, Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy,
    StrategyResult,
};
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_apimachinery::validation::{
    is_dns1123_subdomain, regex_error, validate_label_name,
};

/// The group.
pub const GROUP: &str = "storagemigration.k8s.io";

/// The version served.
pub const VERSION: &str = "v1alpha1";

/// The plural.
pub const PLURAL: &str = "storageversionmigrations";

/// Condition types (`MigrationConditionType`).
pub const RUNNING: &str = "Running";
/// The migration is over and every object was rewritten.
pub const SUCCEEDED: &str = "Succeeded";
/// The migration is over and stopped at an error.
pub const FAILED: &str = "Failed";

/// The strategy.
pub struct StorageVersionMigrationStrategy {
    description: ResourceDescription,
}

impl Default for StorageVersionMigrationStrategy {
    fn default() -> Self {
        let mut d = ResourceDescription::new(GROUP, VERSION, "StorageVersionMigration", PLURAL);
        d.namespaced = false;
        d.subresources = vec!["status".into()];
        d.printer_columns = vec![PrinterColumn::name(), PrinterColumn::age()];
        // `status.conditions` merge by type (`+listType=map`, `+listMapKey=type`).
        d.openapi_schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"conditions": {"type": "array",
                    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                    "x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge",
                    "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "required": ["type"], "properties": {"type": {"type": "string"}}}}}}}});
        StorageVersionMigrationStrategy { description: d }
    }
}

/// Whether `svm` has the condition `ty` with status `True`.
pub fn is_condition_true(svm: &Value, ty: &str) -> bool {
    svm["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == ty && c["status"] == "True")
}

/// `ValidateStorageVersionMigration`: the name a DNS-1123 subdomain, `resource` and
/// `version` required.
fn validate(svm: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = accessor(svm).name().to_string();
    let name_path = Path::new("metadata").child("name");
    if name.is_empty() {
        errs.push(field::required(
            &name_path,
            "name or generateName is required",
        ));
    } else {
        for e in is_dns1123_subdomain(&name) {
            errs.push(field::invalid(&name_path, &name, e));
        }
    }
    let r = Path::new("spec").child("resource");
    let resource = &svm["spec"]["resource"];
    for (key, msg) in [
        ("resource", "resource is required"),
        ("version", "version is required"),
    ] {
        if resource[key].as_str().is_none_or(str::is_empty) {
            errs.push(field::required(&r.child(key), msg));
        }
    }
    errs
}

/// `ValidateStorageVersionMigrationStatusUpdate`'s rules on the new status against the old.
fn validate_status(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let status = Path::new("status");
    let rv = new["status"]["resourceVersion"].as_str().unwrap_or("");
    let rv_path = status.child("resourceVersion");
    if !rv.is_empty() {
        match rv.parse::<i64>() {
            Err(_) => errs.push(field::invalid(
                &rv_path,
                rv,
                format!("failed to parse resource version {rv:?}: strconv.ParseInt: parsing {rv:?}: invalid syntax"),
            )),
            Ok(n) if n < 0 => errs.push(field::invalid(
                &rv_path,
                n,
                "must be greater than or equal to 0",
            )),
            Ok(_) => {}
        }
    }
    let conditions = new["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let cpath = status.child("conditions");
    let mut types = std::collections::BTreeSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let p = cpath.index(i);
        let ty = c["type"].as_str().unwrap_or("");
        if !types.insert(ty) {
            errs.push(field::duplicate(&p.child("type"), ty));
        }
        errs.extend(validate_label_name(ty, &p.child("type")));
        let st = c["status"].as_str().unwrap_or("");
        if !["False", "True", "Unknown"].contains(&st) {
            errs.push(field::not_supported(
                &p.child("status"),
                st,
                &["False", "True", "Unknown"],
            ));
        }
        if c["lastUpdateTime"].as_str().is_none_or(str::is_empty) {
            errs.push(field::required(
                &p.child("lastTransitionTime"),
                "must be set",
            ));
        }
        match c["reason"].as_str().unwrap_or("") {
            "" => errs.push(field::required(&p.child("reason"), "must be set")),
            reason => {
                if !valid_reason(reason) {
                    errs.push(field::invalid(
                        &p.child("reason"),
                        reason,
                        regex_error(
                            "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
                            "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?",
                            &["my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB"],
                        ),
                    ));
                }
                if reason.len() > 1024 {
                    errs.push(field::too_long(&p.child("reason"), reason, 1024));
                }
            }
        }
        let message = c["message"].as_str().unwrap_or("");
        if message.len() > 32 * 1024 {
            errs.push(field::too_long(&p.child("message"), message, 32 * 1024));
        }
    }
    let old_rv = old["status"]["resourceVersion"].as_str().unwrap_or("");
    if !old_rv.is_empty() && old_rv != rv {
        errs.push(field::invalid(
            &rv_path,
            rv,
            "resourceVersion cannot be updated",
        ));
    }
    let (ok, failed, running) = (
        is_condition_true(new, SUCCEEDED),
        is_condition_true(new, FAILED),
        is_condition_true(new, RUNNING),
    );
    let list = Value::Array(conditions);
    let mut refuse = |msg: &str| errs.push(field::invalid(&cpath, &list, msg));
    if ok && failed {
        refuse("Both success and failed conditions cannot be true at the same time");
    }
    if ok && running {
        refuse("Running condition cannot be true when success condition is true");
    }
    if failed && running {
        refuse("Running condition cannot be true when failed condition is true");
    }
    if is_condition_true(old, SUCCEEDED) && !ok {
        refuse("Success condition cannot be set to false once it is true");
    }
    if is_condition_true(old, FAILED) && !failed {
        refuse("Failed condition cannot be set to false once it is true");
    }
    errs
}

/// `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`.
fn valid_reason(r: &str) -> bool {
    let b = r.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter().all(inner)
        && (b.len() == 1 || b[b.len() - 1].is_ascii_alphanumeric() || b[b.len() - 1] == b'_')
}

impl Strategy for StorageVersionMigrationStrategy {
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
    /// `PrepareForCreate`: no status (kube's strategy keeps no generation).
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let mut obj = obj.clone();
        if let Some(m) = obj.as_object_mut() {
            m.remove("status");
        }
        Ok(obj)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(validate(obj))
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    /// `PrepareForUpdate`: the stored status.
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut new = new.clone();
        with_status_of(&mut new, old);
        Ok(new)
    }
    /// `ValidateStorageVersionMigrationUpdate`: the resource is immutable (kube's paths).
    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let mut errs = validate(new);
        for key in ["group", "version", "resource"] {
            let (n, o) = (&new["spec"]["resource"][key], &old["spec"]["resource"][key]);
            if n.as_str().unwrap_or("") != o.as_str().unwrap_or("") {
                errs.push(field::invalid(
                    &Path::new(key),
                    n.as_str().unwrap_or(""),
                    "field is immutable",
                ));
            }
        }
        Ok(errs)
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    /// The status strategy's `PrepareForUpdate`: everything but the status is the stored one.
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut out = old.clone();
        with_status_of(&mut out, new);
        Ok(out)
    }
    fn validate_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(validate_status(new, old))
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

/// The resource's Store over `factory`'s storage.
pub fn store(factory: &wasm_apiserver_storage::factory::StorageFactory) -> super::Store {
    let strategy = std::sync::Arc::new(StorageVersionMigrationStrategy::default());
    let d = strategy.description().clone();
    let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
    super::Store::new(strategy, storage)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svm(status: Value) -> Value {
        json!({"metadata": {"name": "m"}, "spec": {"resource": {"version": "v1", "resource": "secrets"}},
               "status": status})
    }

    fn cond(ty: &str, st: &str) -> Value {
        json!({"type": ty, "status": st, "lastUpdateTime": "2026-01-01T00:00:00Z",
               "reason": "StorageVersionMigrationInProgress"})
    }

    #[test]
    fn kubes_rules() {
        let s = StorageVersionMigrationStrategy::default();
        let errs = validate(&json!({"metadata": {"name": "m"}, "spec": {"resource": {}}}));
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            text,
            [
                "spec.resource.resource: Required value: resource is required",
                "spec.resource.version: Required value: version is required"
            ]
        );
        let old = svm(json!({}));
        let mut new = old.clone();
        new["spec"]["resource"]["resource"] = json!("configmaps");
        let errs = s.validate_update(&new, &old).unwrap();
        assert_eq!(
            errs[0].to_string(),
            "resource: Invalid value: \"configmaps\": field is immutable"
        );
        let ok = svm(json!({"resourceVersion": "5", "conditions": [cond("Running", "True")]}));
        assert!(validate_status(&ok, &old).is_empty());
        let both = svm(
            json!({"resourceVersion": "5", "conditions": [cond("Running", "True"), cond("Succeeded", "True")]}),
        );
        assert!(validate_status(&both, &old)[0]
            .to_string()
            .contains("Running condition cannot be true when success condition is true"));
        let moved = svm(json!({"resourceVersion": "6"}));
        assert!(validate_status(&moved, &ok)[0]
            .to_string()
            .contains("resourceVersion cannot be updated"));
        let bad =
            svm(json!({"conditions": [{"type": "Running", "status": "Maybe", "reason": "9x"}]}));
        assert_eq!(validate_status(&bad, &old).len(), 3, "status, time, reason");
        assert!(valid_reason("A") && valid_reason("A_b:c") && !valid_reason("A:"));
    }
}

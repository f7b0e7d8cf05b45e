//! A native strategy and a Store over a real embedded store in a temporary directory, for the
//! registry's unit tests (as upstream's `store_test.go` runs the generic Store with a test
//! strategy over etcd's test server). Test-only.

use super::store::Store;
use crate::strategy::{
    Attributes, ErrorType, FieldError, ResourceDescription, Strategy, StrategyResult,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::factory::{AnyBackend, StorageFactory};

/// `example.dev/v1` Widgets, namespaced with a status: `spec.size` must be `small`, `medium`
/// or `large`; `PrepareForCreate` drops the status and defaults `spec.color`; an update keeps
/// the status, a status update keeps the spec. Records the hooks it ran, in order.
#[derive(Debug)]
pub struct Widgets {
    d: ResourceDescription,
    /// The hooks called, in order.
    pub calls: Mutex<Vec<&'static str>>,
}

impl Widgets {
    /// The strategy.
    pub fn new() -> Widgets {
        let mut d = ResourceDescription::new("example.dev", "v1", "Widget", "widgets");
        d.subresources = vec!["status".into()];
        Widgets {
            d,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The same strategy for `<group>/v1` Widgets (to serve several resources).
    pub fn in_group(group: &str) -> Widgets {
        let w = Widgets::new();
        Widgets {
            d: ResourceDescription {
                group: group.into(),
                ..w.d
            },
            ..w
        }
    }

    fn called(&self, hook: &'static str) {
        self.calls.lock().unwrap().push(hook);
    }

    /// The hooks called so far, cleared.
    pub fn take_calls(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

fn size_errors(o: &Value) -> Vec<FieldError> {
    match o.pointer("/spec/size").and_then(Value::as_str) {
        Some("small" | "medium" | "large") => vec![],
        other => vec![FieldError {
            error_type: ErrorType::NotSupported,
            field: "spec.size".into(),
            bad_value: Some(json!(other)),
            detail: "supported values: \"small\", \"medium\", \"large\"".into(),
        }],
    }
}

impl Strategy for Widgets {
    fn name(&self) -> &str {
        "widgets"
    }
    fn description(&self) -> &ResourceDescription {
        &self.d
    }
    fn allow_create_on_update(&self) -> bool {
        false
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, o: &Value) -> StrategyResult<Value> {
        self.called("prepare_for_create");
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.remove("status");
        }
        if o.pointer("/spec/color").is_none() {
            o["spec"]["color"] = json!("blue");
        }
        Ok(o)
    }
    fn validate(&self, o: &Value) -> StrategyResult<Vec<FieldError>> {
        self.called("validate");
        Ok(size_errors(o))
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        self.called("warnings_on_create");
        Ok(vec![])
    }
    fn canonicalize(&self, o: &Value) -> StrategyResult<Value> {
        self.called("canonicalize");
        Ok(o.clone())
    }
    fn prepare_for_update(&self, n: &Value, old: &Value) -> StrategyResult<Value> {
        self.called("prepare_for_update");
        let mut n = n.clone();
        match old.get("status") {
            Some(s) => n["status"] = s.clone(),
            None => {
                if let Some(m) = n.as_object_mut() {
                    m.remove("status");
                }
            }
        }
        Ok(n)
    }
    fn validate_update(&self, n: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        self.called("validate_update");
        Ok(size_errors(n))
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(vec![])
    }
    fn prepare_for_status_update(&self, n: &Value, old: &Value) -> StrategyResult<Value> {
        self.called("prepare_for_status_update");
        let mut n = n.clone();
        n["spec"] = old["spec"].clone();
        Ok(n)
    }
    fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(vec![])
    }
    fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(vec![])
    }
    fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
        Ok(None)
    }
    fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(vec![])
    }
    fn printer_cells(&self, _: &Value) -> StrategyResult<Vec<Value>> {
        Ok(vec![])
    }
    fn get_attrs(&self, _: &Value) -> StrategyResult<Attributes> {
        Ok(Attributes::default())
    }
}

/// A Widgets Store over a fresh embedded store (no watch cache), with the directory that
/// holds it (removed when dropped) and the strategy.
pub async fn widgets_store() -> (tempfile::TempDir, Arc<Widgets>, Arc<Store>) {
    let dir = tempfile::tempdir().unwrap();
    let embedded = Embedded::open(dir.path(), EmbeddedOptions::default())
        .await
        .unwrap();
    let mut factory = StorageFactory::new("/registry", AnyBackend::Embedded(Arc::new(embedded)));
    factory.set_watch_cache(false);
    let strategy = Arc::new(Widgets::new());
    let d = strategy.description().clone();
    let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
    let store = Arc::new(Store::new(strategy.clone(), storage));
    (dir, strategy, store)
}

/// A Widget named `name` in `default` of `size`.
pub fn widget(name: &str, size: &str) -> Value {
    json!({"apiVersion": "example.dev/v1", "kind": "Widget",
           "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}})
}

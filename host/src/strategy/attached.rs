//! A CRD with a strategy plugin attached (a `StrategyPlugin` whose `spec.extends` names the
//! CRD): "start declarative, add code later". The CRD's configured strategy keeps what
//! kube's CRD strategy does (pruning, defaulting, generation, the status split, schema and
//! CEL validation, printer columns, selectable fields, reads of stored objects); the attached
//! plugin adds its hooks around it, in this order, so that nothing the plugin changes escapes
//! the CRD's validation:
//!
//! 1. the CRD's prepare (pruning, defaulting, generation, the status split) —
//!    `PrepareForCreate`, `PrepareForUpdate` and the status update's;
//! 2. the attached plugin's prepare;
//! 3. the CRD's prepare again, on what the plugin prepared: a field the schema does not hold
//!    is pruned, a `status` set through the main resource dropped (with a status
//!    subresource), and `generation` counts the plugin's changes too (each step is
//!    idempotent, so what the plugin left alone is unchanged);
//! 4. the CRD's validation (schema, CEL), then the attached plugin's: both lists of field
//!    errors are answered together, as kube aggregates one strategy's;
//! 5. warnings of both; canonicalize the CRD's, then the plugin's.
//!
//! Graceful deletion is the plugin's; delete validation both. Conversion between versions is
//! the plugin's `convert` when it describes more than one version — it then replaces the
//! CRD's `None` or webhook, and no value is added to `spec.conversion.strategy`, so the CRD
//! stays portable — else the CRD's. The plugin describes the CRD's versions and storage
//! version (`reload/attachments.rs` checks it). Detaching (deleting the `StrategyPlugin`) serves the CRD alone again over the same
//! stored objects: nothing migrates.

use std::sync::Arc;

use serde_json::Value;

use super::{Attributes, FieldError, ResourceDescription, Strategy, StrategyResult};

/// The CRD's strategy with a plugin's hooks attached; see the module documentation for the
/// order.
pub struct AttachedStrategy {
    crd: Arc<dyn Strategy>,
    attached: Arc<dyn Strategy>,
    name: String,
    converts: bool,
}

impl AttachedStrategy {
    /// `attached`'s hooks around `crd`'s. Both serve one resource (the caller checked that
    /// the plugin describes the CRD's group, plural, kind and scope).
    pub fn new(crd: Arc<dyn Strategy>, attached: Arc<dyn Strategy>) -> AttachedStrategy {
        AttachedStrategy {
            name: format!("{}+{}", crd.name(), attached.name()),
            converts: attached.description().versions.len() > 1,
            crd,
            attached,
        }
    }

    /// The CRD's strategy.
    pub fn crd(&self) -> &Arc<dyn Strategy> {
        &self.crd
    }

    /// The attached plugin's strategy.
    pub fn attached(&self) -> &Arc<dyn Strategy> {
        &self.attached
    }

    /// Who converts between versions: the plugin when it describes several, else the CRD.
    fn converter(&self) -> &Arc<dyn Strategy> {
        if self.converts {
            &self.attached
        } else {
            &self.crd
        }
    }
}

fn both<T>(
    a: StrategyResult<Vec<T>>,
    b: impl FnOnce() -> StrategyResult<Vec<T>>,
) -> StrategyResult<Vec<T>> {
    let mut out = a?;
    out.extend(b()?);
    Ok(out)
}

impl Strategy for AttachedStrategy {
    /// `<crd component>+<plugin>`, e.g. `customresources+widgets`.
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &ResourceDescription {
        self.crd.description()
    }
    fn allow_create_on_update(&self) -> bool {
        self.crd.allow_create_on_update()
    }
    fn allow_unconditional_update(&self) -> bool {
        self.crd.allow_unconditional_update()
    }
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let prepared = self.crd.prepare_for_create(obj)?;
        let by_plugin = self.attached.prepare_for_create(&prepared)?;
        self.crd.prepare_for_create(&by_plugin)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        both(self.crd.validate(obj), || self.attached.validate(obj))
    }
    fn warnings_on_create(&self, obj: &Value) -> StrategyResult<Vec<String>> {
        both(self.crd.warnings_on_create(obj), || {
            self.attached.warnings_on_create(obj)
        })
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        let c = self.crd.canonicalize(obj)?;
        self.attached.canonicalize(&c)
    }
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let prepared = self.crd.prepare_for_update(new, old)?;
        let by_plugin = self.attached.prepare_for_update(&prepared, old)?;
        self.crd.prepare_for_update(&by_plugin, old)
    }
    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        both(self.crd.validate_update(new, old), || {
            self.attached.validate_update(new, old)
        })
    }
    fn warnings_on_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        both(self.crd.warnings_on_update(new, old), || {
            self.attached.warnings_on_update(new, old)
        })
    }
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let prepared = self.crd.prepare_for_status_update(new, old)?;
        let by_plugin = self.attached.prepare_for_status_update(&prepared, old)?;
        self.crd.prepare_for_status_update(&by_plugin, old)
    }
    fn validate_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        both(self.crd.validate_status_update(new, old), || {
            self.attached.validate_status_update(new, old)
        })
    }
    fn warnings_on_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        both(self.crd.warnings_on_status_update(new, old), || {
            self.attached.warnings_on_status_update(new, old)
        })
    }
    fn check_graceful_delete(
        &self,
        obj: &Value,
        requested: Option<i64>,
    ) -> StrategyResult<Option<i64>> {
        self.attached.check_graceful_delete(obj, requested)
    }
    fn validate_delete(&self, old: &Value) -> StrategyResult<Vec<FieldError>> {
        both(self.crd.validate_delete(old), || {
            self.attached.validate_delete(old)
        })
    }
    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>> {
        self.crd.printer_cells(obj)
    }
    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes> {
        self.crd.get_attrs(obj)
    }
    fn reads_stored(&self) -> bool {
        self.crd.reads_stored()
    }
    fn read_stored(&self, obj: &Value) -> StrategyResult<Value> {
        self.crd.read_stored(obj)
    }
    fn convert(&self, obj: &Value, desired_api_version: &str) -> StrategyResult<Value> {
        self.converter().convert(obj, desired_api_version)
    }
    fn convert_list(
        &self,
        objs: &[&Value],
        desired_api_version: &str,
    ) -> StrategyResult<Vec<Value>> {
        self.converter().convert_list(objs, desired_api_version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::ErrorType;
    use serde_json::json;
    use std::sync::Mutex;

    /// A strategy that records the hooks called and adds `spec.<name>` in prepare; its
    /// validation refuses `spec.bad == <name>`.
    struct Recording {
        name: &'static str,
        d: ResourceDescription,
        calls: Arc<Mutex<Vec<String>>>,
    }

    impl Recording {
        fn log(&self, hook: &str) {
            self.calls
                .lock()
                .unwrap()
                .push(format!("{}.{hook}", self.name));
        }
    }

    impl Strategy for Recording {
        fn name(&self) -> &str {
            self.name
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
            self.log("prepare");
            let mut o = o.clone();
            o["spec"][self.name] = json!(true);
            Ok(o)
        }
        fn validate(&self, o: &Value) -> StrategyResult<Vec<FieldError>> {
            self.log("validate");
            // Each sees what the other prepared.
            let seen = o["spec"].as_object().map(|m| m.len()).unwrap_or(0);
            assert!(seen >= 2, "{o}");
            Ok(if o["spec"]["bad"] == json!(self.name) {
                vec![FieldError {
                    error_type: ErrorType::Invalid,
                    field: "spec.bad".into(),
                    bad_value: Some(json!(self.name)),
                    detail: format!("refused by {}", self.name),
                }]
            } else {
                Vec::new()
            })
        }
        fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
            self.log("warnings");
            Ok(vec![format!("{} warns", self.name)])
        }
        fn canonicalize(&self, o: &Value) -> StrategyResult<Value> {
            self.log("canonicalize");
            Ok(o.clone())
        }
        fn prepare_for_update(&self, n: &Value, _: &Value) -> StrategyResult<Value> {
            Ok(n.clone())
        }
        fn validate_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(Vec::new())
        }
        fn prepare_for_status_update(&self, n: &Value, _: &Value) -> StrategyResult<Value> {
            Ok(n.clone())
        }
        fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(Vec::new())
        }
        fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
            Ok(Some(if self.name == "plugin" { 7 } else { 0 }))
        }
        fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn printer_cells(&self, _: &Value) -> StrategyResult<Vec<Value>> {
            Ok(vec![json!(self.name)])
        }
        fn get_attrs(&self, _: &Value) -> StrategyResult<Attributes> {
            Ok(Attributes::default())
        }
    }

    fn attached() -> (AttachedStrategy, Arc<Mutex<Vec<String>>>) {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let d = ResourceDescription::new("example.com", "v1", "Gadget", "gadgets");
        let make = |name| -> Arc<dyn Strategy> {
            Arc::new(Recording {
                name,
                d: d.clone(),
                calls: calls.clone(),
            })
        };
        (AttachedStrategy::new(make("crd"), make("plugin")), calls)
    }

    #[test]
    fn the_crd_prepares_first_and_validates_what_the_plugin_prepared() {
        let (s, calls) = attached();
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g"}, "spec": {}});
        let out = s.create_sequence(&obj).unwrap();
        assert_eq!(out.object["spec"], json!({"crd": true, "plugin": true}));
        assert_eq!(out.warnings, vec!["crd warns", "plugin warns"]);
        assert_eq!(
            *calls.lock().unwrap(),
            [
                "crd.prepare",
                "plugin.prepare",
                "crd.prepare",
                "crd.validate",
                "plugin.validate",
                "crd.warnings",
                "plugin.warnings",
                "crd.canonicalize",
                "plugin.canonicalize"
            ]
        );
        for who in ["crd", "plugin"] {
            let mut bad = obj.clone();
            bad["spec"]["bad"] = json!(who);
            let out = s.create_sequence(&bad).unwrap();
            let details: Vec<&str> = out.errors.iter().map(|e| e.detail.as_str()).collect();
            assert!(
                details.contains(&format!("refused by {who}").as_str()),
                "{details:?}"
            );
        }
        assert_eq!(s.name(), "crd+plugin");
        assert_eq!(s.check_graceful_delete(&obj, None).unwrap(), Some(7));
        assert_eq!(s.printer_cells(&obj).unwrap(), vec![json!("crd")]);
    }
}

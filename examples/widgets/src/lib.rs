//! `widgets.example.dev/v1`: the plugin author's tutorial (see `plugins/README.md`).
//!
//! It shows each thing a strategy usually does:
//! - a **computed default**: `spec.replicas` defaults from `spec.size` (small 1, medium 3, large 5);
//! - a **cross-field rule**: `spec.minReplicas ≤ spec.replicas ≤ spec.maxReplicas`;
//! - a **warning**: more than 10 replicas;
//! - an **immutable field**: `spec.storageClass` cannot change after create;
//! - **printer columns**: SIZE, REPLICAS, PHASE (and STORAGE-CLASS with `-o wide`);
//! - a **status** the client cannot set: `status.phase` starts as `Pending`;
//! - a **second version**, `v1alpha1` (deprecated, still served), converted to and from the
//!   storage version `v1` by `convert`: `spec.count` is v1's `spec.replicas` renamed, v1's
//!   `spec.size` is computed from the count when a v1alpha1 object has none, and what v1alpha1
//!   cannot hold travels in an annotation so that v1 → v1alpha1 → v1 gives the object back.

use serde_json::Map;
use wasm_apiserver_sdk::glue::HookError;
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::{validate_immutable_field, NameRule};
use wasm_apiserver_sdk::VersionDescription;

/// A Widget. Unknown fields are dropped, as kube-apiserver prunes them for a structural schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: WidgetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WidgetStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// `small`, `medium` or `large`.
    #[serde(default)]
    pub size: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

const SIZES: [&str; 3] = ["small", "medium", "large"];

/// The storage version (every hook but `convert` sees it) and the older one.
const V1: &str = "example.dev/v1";
const V1ALPHA1: &str = "example.dev/v1alpha1";

/// Where a v1alpha1 object keeps the v1 fields it has no place for (JSON of the part of v1's
/// `spec` that `spec.count` and the computed size do not give back).
pub const V1_SPEC_ANNOTATION: &str = "widgets.example.dev/v1-spec";

/// The size a v1alpha1 widget without one gets in v1: the smallest holding its count.
fn size_for(count: Option<i64>) -> &'static str {
    match count.unwrap_or(1) {
        ..=1 => "small",
        2..=3 => "medium",
        _ => "large",
    }
}

fn default_replicas(size: &str) -> Option<i32> {
    match size {
        "small" => Some(1),
        "medium" => Some(3),
        "large" => Some(5),
        _ => None,
    }
}

pub struct Widgets;

impl Strategy for Widgets {
    type Object = Widget;

    fn describe() -> ResourceDescription {
        let d = ResourceDescription {
            short_names: vec!["wd".into()],
            categories: vec!["all".into()],
            printer_columns: vec![
                PrinterColumn::name(),
                PrinterColumn::new("Size", "string", ".spec.size"),
                PrinterColumn::new("Replicas", "integer", ".spec.replicas"),
                PrinterColumn::new("Phase", "string", ".status.phase"),
                PrinterColumn::age(),
                PrinterColumn::new("Storage-Class", "string", ".spec.storageClass").wide(),
            ],
            selectable_fields: vec!["spec.size".into()],
            openapi_schema: schema(),
            example: Some(json!({
                "apiVersion": "example.dev/v1", "kind": "Widget",
                "metadata": {"name": "example", "namespace": "default"},
                "spec": {"size": "medium"}
            })),
            ..ResourceDescription::new("example.dev", "v1", "Widget", "widgets")
        };
        // Served in v1 (stored) and v1alpha1 (deprecated): a CRD's spec.versions.
        let v1 = VersionDescription {
            name: "v1".into(),
            served: true,
            storage: true,
            deprecated: false,
            deprecation_warning: None,
            openapi_schema: d.openapi_schema.clone(),
            printer_columns: d.printer_columns.clone(),
            selectable_fields: d.selectable_fields.clone(),
        };
        let v1alpha1 = VersionDescription {
            name: "v1alpha1".into(),
            served: true,
            storage: false,
            deprecated: true,
            deprecation_warning: None,
            openapi_schema: schema_v1alpha1(),
            printer_columns: vec![
                PrinterColumn::name(),
                PrinterColumn::new("Count", "integer", ".spec.count"),
                PrinterColumn::new("Phase", "string", ".status.phase"),
                PrinterColumn::age(),
            ],
            selectable_fields: vec!["spec.count".into()],
        };
        ResourceDescription {
            versions: vec![v1, v1alpha1],
            ..d
        }
    }

    /// v1 ↔ v1alpha1. To v1alpha1: `spec.replicas` becomes `spec.count`; `size` (unless it
    /// is the one the count computes), `minReplicas` and `maxReplicas` go into the
    /// [`V1_SPEC_ANNOTATION`]. To v1: the reverse, with `size` computed from the count when
    /// the annotation has none. `status` and the rest of `spec` are the same in both.
    fn convert(mut obj: Value, desired_api_version: &str) -> Result<Value, HookError> {
        let from = obj["apiVersion"].as_str().unwrap_or_default().to_string();
        let mut spec = match obj.get_mut("spec").map(Value::take) {
            Some(Value::Object(m)) => m,
            None | Some(Value::Null) => Map::new(),
            Some(other) => {
                return Err(HookError::BadRequest(format!(
                    "spec: must be an object, not {other}"
                )))
            }
        };
        let annotations = obj
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut);
        match (from.as_str(), desired_api_version) {
            (V1, V1ALPHA1) => {
                let replicas = spec.remove("replicas");
                let mut kept = Map::new();
                for f in ["size", "minReplicas", "maxReplicas"] {
                    if let Some(v) = spec.remove(f) {
                        kept.insert(f.into(), v);
                    }
                }
                let count = replicas.as_ref().and_then(Value::as_i64);
                if kept.get("size").and_then(Value::as_str) == Some(size_for(count)) {
                    kept.remove("size");
                }
                if let Some(r) = replicas {
                    spec.insert("count".into(), r);
                }
                if !kept.is_empty() {
                    let text = Value::Object(kept).to_string();
                    match annotations {
                        Some(a) => {
                            a.insert(V1_SPEC_ANNOTATION.into(), json!(text));
                        }
                        None => {
                            obj["metadata"]["annotations"] = json!({V1_SPEC_ANNOTATION: text});
                        }
                    }
                }
            }
            (V1ALPHA1, V1) => {
                let count = spec.remove("count");
                let kept = annotations
                    .and_then(|a| a.remove(V1_SPEC_ANNOTATION))
                    .and_then(|t| serde_json::from_str::<Map<String, Value>>(t.as_str()?).ok())
                    .unwrap_or_default();
                if obj
                    .pointer("/metadata/annotations")
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty)
                {
                    obj["metadata"]
                        .as_object_mut()
                        .map(|m| m.remove("annotations"));
                }
                let size = kept
                    .get("size")
                    .cloned()
                    .unwrap_or_else(|| json!(size_for(count.as_ref().and_then(Value::as_i64))));
                spec.insert("size".into(), size);
                for (k, v) in kept {
                    spec.entry(k).or_insert(v);
                }
                if let Some(c) = count {
                    spec.insert("replicas".into(), c);
                }
            }
            (from, to) => {
                return Err(HookError::BadRequest(format!(
                    "cannot convert from {from} to {to}: widgets are served in {V1} and {V1ALPHA1}"
                )))
            }
        }
        obj["spec"] = Value::Object(spec);
        obj["apiVersion"] = json!(desired_api_version);
        Ok(obj)
    }

    fn prepare_for_create(w: &mut Widget) {
        if w.spec.replicas.is_none() {
            w.spec.replicas = default_replicas(&w.spec.size);
        }
        w.status = Some(WidgetStatus {
            phase: Some("Pending".into()),
        });
    }

    fn validate(w: &Widget) -> ErrorList {
        let spec = Path::new("spec");
        let mut errs = validation::validate_name(
            w.metadata.name.as_deref().unwrap_or_default(),
            NameRule::Dns1123Subdomain,
            &Path::new("metadata").child("name"),
        );
        if w.spec.size.is_empty() {
            errs.push(field::required(&spec.child("size"), ""));
        } else if !SIZES.contains(&w.spec.size.as_str()) {
            errs.push(field::not_supported(
                &spec.child("size"),
                &w.spec.size,
                &SIZES,
            ));
        }
        if let Some(r) = w.spec.replicas {
            if r < 0 {
                errs.push(field::invalid(
                    &spec.child("replicas"),
                    r,
                    "must be greater than or equal to 0",
                ));
            }
            if let Some(min) = w.spec.min_replicas.filter(|&min| r < min) {
                errs.push(field::invalid(
                    &spec.child("replicas"),
                    r,
                    format!("must be greater than or equal to spec.minReplicas ({min})"),
                ));
            }
            if let Some(max) = w.spec.max_replicas.filter(|&max| r > max) {
                errs.push(field::invalid(
                    &spec.child("replicas"),
                    r,
                    format!("must be less than or equal to spec.maxReplicas ({max})"),
                ));
            }
        }
        errs
    }

    fn warnings_on_create(w: &Widget) -> Vec<String> {
        match w.spec.replicas {
            Some(r) if r > 10 => vec![format!(
                "spec.replicas: {r} replicas is more than 10; widgets are expensive"
            )],
            _ => Vec::new(),
        }
    }

    fn validate_update(new: &Widget, old: &Widget) -> ErrorList {
        let mut errs = Self::validate(new);
        errs.extend(validate_immutable_field(
            &new.spec.storage_class,
            &old.spec.storage_class,
            &Path::new("spec").child("storageClass"),
        ));
        errs
    }

    fn warnings_on_update(new: &Widget, _old: &Widget) -> Vec<String> {
        Self::warnings_on_create(new)
    }

    fn validate_status_update(new: &Widget, _old: &Widget) -> ErrorList {
        const PHASES: [&str; 3] = ["Pending", "Ready", "Failed"];
        match new.status.as_ref().and_then(|s| s.phase.as_deref()) {
            Some(p) if !PHASES.contains(&p) => {
                vec![field::not_supported(
                    &Path::new("status").child("phase"),
                    p,
                    &PHASES,
                )]
            }
            _ => Vec::new(),
        }
    }
}

export_strategy!(Widgets);

fn schema() -> Value {
    json!({
        "type": "object",
        "description": "A Widget is the tutorial resource of wasm-apiserver.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "description": "Desired state of the widget.",
                "required": ["size"],
                "properties": {
                    "size": {"type": "string", "enum": SIZES, "description": "small, medium or large."},
                    "replicas": {"type": "integer", "format": "int32", "description": "Defaults from size: 1, 3 or 5."},
                    "minReplicas": {"type": "integer", "format": "int32"},
                    "maxReplicas": {"type": "integer", "format": "int32"},
                    "storageClass": {"type": "string", "description": "Immutable once set."}
                }
            },
            "status": {
                "type": "object",
                "properties": {"phase": {"type": "string", "description": "Pending, Ready or Failed."}}
            }
        }
    })
}

/// The v1alpha1 schema: v1's, with `spec.count` where v1 has `spec.replicas` and no size,
/// minimum or maximum.
fn schema_v1alpha1() -> Value {
    let mut s = schema();
    s["description"] = json!("A Widget, as first served (deprecated: use example.dev/v1).");
    s["properties"]["spec"] = json!({
        "type": "object",
        "description": "Desired state of the widget.",
        "properties": {
            "count": {"type": "integer", "format": "int32", "description": "How many (v1: spec.replicas)."},
            "storageClass": {"type": "string", "description": "Immutable once set."}
        }
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::testing;

    fn widget(spec: Value) -> Value {
        json!({"apiVersion": "example.dev/v1", "kind": "Widget",
               "metadata": {"name": "w", "namespace": "default"}, "spec": spec})
    }

    #[test]
    fn replicas_default_from_size_and_status_is_pending() {
        let out = testing::create::<Widgets>(widget(json!({"size": "large"})));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["spec"]["replicas"], 5);
        assert_eq!(out.object["status"]["phase"], "Pending");
        assert_eq!(out.object["metadata"]["generation"], 1);
    }

    #[test]
    fn replicas_outside_min_max_is_invalid() {
        let out = testing::create::<Widgets>(widget(
            json!({"size": "small", "replicas": 9, "maxReplicas": 4}),
        ));
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].field, "spec.replicas");
    }

    #[test]
    fn many_replicas_warn() {
        let out = testing::create::<Widgets>(widget(json!({"size": "small", "replicas": 11})));
        assert_eq!(out.warnings.len(), 1);
    }

    #[test]
    fn storage_class_is_immutable_and_spec_change_bumps_generation() {
        let old =
            testing::create::<Widgets>(widget(json!({"size": "small", "storageClass": "fast"})))
                .object;
        let mut new = old.clone();
        new["spec"]["storageClass"] = json!("slow");
        let out = testing::update::<Widgets>(new, old.clone());
        assert_eq!(out.errors[0].field, "spec.storageClass");
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(2);
        new["status"] = json!({"phase": "Ready"});
        let out = testing::update::<Widgets>(new, old);
        assert!(out.errors.is_empty());
        assert_eq!(out.object["metadata"]["generation"], 2);
        assert_eq!(
            out.object["status"]["phase"], "Pending",
            "status comes from the stored object"
        );
    }
}

#[cfg(test)]
mod fixture_tests {
    /// The same fixtures `wasm-apiserver plugin test` runs against the component, natively.
    #[test]
    fn fixtures() {
        wasm_apiserver_sdk::testing::run_fixtures::<super::Widgets>(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures"
        ));
    }

    /// The conversion cases (a folder of their own: the Python and JavaScript widgets, which
    /// serve v1 only, run the fixtures above).
    #[test]
    fn conversion_fixtures() {
        wasm_apiserver_sdk::testing::run_fixtures::<super::Widgets>(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/conversion"
        ));
    }
}

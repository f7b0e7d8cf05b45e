//! `widgets.example.dev/v1`: the plugin author's tutorial (see `plugins/README.md`).
//!
//! It shows each thing a strategy usually does:
//! - a **computed default**: `spec.replicas` defaults from `spec.size` (small 1, medium 3, large 5);
//! - a **cross-field rule**: `spec.minReplicas ≤ spec.replicas ≤ spec.maxReplicas`;
//! - a **warning**: more than 10 replicas;
//! - an **immutable field**: `spec.storageClass` cannot change after create;
//! - **printer columns**: SIZE, REPLICAS, PHASE (and STORAGE-CLASS with `-o wide`);
//! - a **status** the client cannot set: `status.phase` starts as `Pending`.

use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::{validate_immutable_field, NameRule};

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
        ResourceDescription {
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
        }
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
}

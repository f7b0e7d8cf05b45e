//! `strategyplugins.wasm-apiserver.dev/v1`: one cluster-scoped `StrategyPlugin` object per
//! plugin file, showing its state (`kubectl get strategyplugins`).

use crate::strategy::{
    Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy, StrategyResult,
};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Group of the host's own resources.
pub const STATUS_GROUP: &str = "wasm-apiserver.dev";
/// Plural of the plugin status resource.
pub const STATUS_PLURAL: &str = "strategyplugins";
/// The state of one plugin file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginState {
    /// Serving its resource.
    Active,
    /// The file failed to load; the last good version (if any) keeps serving.
    Failed,
    /// The file was deleted; its resource is no longer served.
    Removed,
}

impl PluginState {
    /// `Active`, `Failed` or `Removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginState::Active => "Active",
            PluginState::Failed => "Failed",
            PluginState::Removed => "Removed",
        }
    }
}

/// What is known of one plugin file.
#[derive(Clone, Debug)]
pub struct PluginStatus {
    /// The file.
    pub file: PathBuf,
    /// sha256 of the file as last read.
    pub sha256: String,
    /// sha256 of the version serving now (may differ from `sha256` after a failed reload).
    pub active_sha256: Option<String>,
    /// `plural.group/version` served (or last served).
    pub resource: String,
    /// WIT version of the serving version.
    pub wit_version: String,
    /// State.
    pub state: PluginState,
    /// Number of versions activated so far.
    pub generation: u64,
    /// The last load error, if the last attempt failed.
    pub last_error: Option<String>,
    /// When the serving version was activated (RFC 3339).
    pub loaded_at: Option<String>,
}

/// The `StrategyPlugin` object recording `status` of the file `stem`.
pub fn object(stem: &str, st: &PluginStatus) -> Value {
    json!({
        "apiVersion": format!("{STATUS_GROUP}/v1"),
        "kind": "StrategyPlugin",
        "metadata": {"name": stem},
        // The file's name only: the server's own paths are not the API's business.
        "spec": {"file": st.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()},
        "status": {
            "state": st.state.as_str(),
            "sha256": st.sha256,
            "activeSha256": st.active_sha256,
            "resource": st.resource,
            "witVersion": st.wit_version,
            "generation": st.generation,
            "lastError": st.last_error,
            "loadedAt": st.loaded_at,
        }
    })
}

/// The host-side strategy of `strategyplugins`: a resource read-only through the API
/// (writes answer 405) and written only by the [`PluginManager`](super::PluginManager),
/// through the registry like any other resource.
pub struct StrategyPluginStrategy {
    description: ResourceDescription,
}

impl StrategyPluginStrategy {
    pub fn new() -> StrategyPluginStrategy {
        let col = |name: &str, ty: &str, path: &str, priority: i32| PrinterColumn {
            name: name.into(),
            type_: ty.into(),
            format: String::new(),
            description: String::new(),
            priority,
            json_path: path.into(),
        };
        StrategyPluginStrategy {
            description: ResourceDescription {
                group: STATUS_GROUP.into(),
                version: "v1".into(),
                kind: "StrategyPlugin".into(),
                list_kind: "StrategyPluginList".into(),
                plural: STATUS_PLURAL.into(),
                singular: "strategyplugin".into(),
                short_names: vec!["sp".into()],
                categories: Vec::new(),
                namespaced: false,
                subresources: Vec::new(),
                printer_columns: vec![
                    col("Name", "string", "@name", 0),
                    col("Resource", "string", ".status.resource", 0),
                    col("State", "string", ".status.state", 0),
                    col("Generation", "integer", ".status.generation", 0),
                    col("WIT", "string", ".status.witVersion", 0),
                    col("Loaded", "date", ".status.loadedAt", 0),
                    col("SHA256", "string", ".status.sha256", 1),
                    col("Last-Error", "string", ".status.lastError", 1),
                ],
                selectable_fields: vec!["status.state".into()],
                openapi_schema: json!({
                    "type": "object",
                    "description": "The state of one strategy plugin file of the server's --plugin-dir (read-only).",
                    "properties": {
                        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
                        "spec": {"type": "object", "properties": {"file": {"type": "string", "description": "The plugin file."}}},
                        "status": {"type": "object", "properties": {
                            "state": {"type": "string", "description": "Active, Failed (the file was refused; the last good version, if any, keeps serving) or Removed."},
                            "sha256": {"type": "string", "description": "sha256 of the file as last read."},
                            "activeSha256": {"type": "string", "description": "sha256 of the version serving now."},
                            "resource": {"type": "string", "description": "The resource served: plural.group/version."},
                            "witVersion": {"type": "string"},
                            "generation": {"type": "integer", "description": "Number of versions activated."},
                            "lastError": {"type": "string", "description": "Why the last load failed."},
                            "loadedAt": {"type": "string", "description": "When the serving version was activated."}
                        }}
                    }
                }),
                example: None,
                return_deleted_object: false,
            },
        }
    }
}

impl Strategy for StrategyPluginStrategy {
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
        true
    }
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    fn validate(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    fn prepare_for_update(&self, new: &Value, _: &Value) -> StrategyResult<Value> {
        Ok(new.clone())
    }
    fn validate_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn prepare_for_status_update(&self, new: &Value, _: &Value) -> StrategyResult<Value> {
        Ok(new.clone())
    }
    fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
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
    fn get_attrs(&self, _: &Value) -> StrategyResult<Attributes> {
        Ok(Attributes::default())
    }
}

impl Default for StrategyPluginStrategy {
    fn default() -> Self {
        Self::new()
    }
}

//! `strategyplugins.wasm-apiserver.dev/v1`: the cluster-scoped `StrategyPlugin` resource and
//! its host-side strategy — what `kubectl apply -f crd.yaml` is to kube-apiserver's
//! apiextensions (`apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go`
//! is the model for the spec/status split and `metadata.generation`).
//!
//! ```yaml
//! apiVersion: wasm-apiserver.dev/v1
//! kind: StrategyPlugin
//! metadata: {name: widgets}
//! spec:
//!   sha256: 5f0c…            # a component uploaded to strategyplugincomponents/<sha256>
//!   active: true             # false: the resource is unregistered (its data kept)
//!   extends: widgets.example.com  # optional: attach to this CRD instead of serving alone
//!   # or  file: widgets.wasm  — a record a server writes for a file of its --plugin-dir
//! status:
//!   replicas:                # one entry per server, written by that server
//!   - {server: apiserver-…, state: Active, observedGeneration: 2, sha256: 5f0c…,
//!      resource: widgets.example.dev/v1, witVersion: 0.1.0, activations: 2, loadedAt: …}
//!   conditions:              # every replica summarised ([`with_conditions`])
//!   - {type: Ready, status: "True", observedGeneration: 2, reason: Active, …}
//!   - {type: Progressing, status: "False", …}
//!   - {type: Degraded, status: "False", …}
//! ```

use crate::strategy::with_status_of;
use crate::strategy::{
    Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy, StrategyResult,
};
use serde_json::{json, Map, Value};
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::validation::{is_dns1123_subdomain, validate_immutable_field};
use wasm_apiserver_storage::blob_store::is_sha256;

/// Group of the host's own resources.
pub const STATUS_GROUP: &str = "wasm-apiserver.dev";
/// Plural of the plugin resource.
pub const STATUS_PLURAL: &str = "strategyplugins";
/// Plural of the uploaded components (`PUT /apis/wasm-apiserver.dev/v1/strategyplugincomponents/<sha256>`),
/// the resource name RBAC grants uploads under.
pub const COMPONENTS_PLURAL: &str = "strategyplugincomponents";

/// The state of one plugin on one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginState {
    /// Serving its resource.
    Active,
    /// The version asked for was refused; the last good version (if any) keeps serving.
    Failed,
    /// The file was deleted; its resource is no longer served.
    Removed,
    /// `spec.active` is false: the resource is not served.
    Inactive,
}

impl PluginState {
    /// `Active`, `Failed`, `Removed` or `Inactive`.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginState::Active => "Active",
            PluginState::Failed => "Failed",
            PluginState::Removed => "Removed",
            PluginState::Inactive => "Inactive",
        }
    }
}

/// What one server knows of one plugin: its entry of `status.replicas`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginStatus {
    /// The server (`--server-id`).
    pub server: String,
    /// State.
    pub state: PluginState,
    /// The `metadata.generation` this entry answers (1 for file records).
    pub observed_generation: i64,
    /// sha256 of the version serving now (may differ from the one asked for after a refusal).
    pub sha256: Option<String>,
    /// `plural.group/version` served (or last served).
    pub resource: String,
    /// WIT version of the serving version.
    pub wit_version: String,
    /// Number of versions this server activated so far.
    pub activations: u64,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When the serving version was activated (RFC 3339).
    pub loaded_at: Option<String>,
}

impl PluginStatus {
    /// A first entry for `server`: `Failed`, nothing served yet.
    pub fn new(server: &str) -> PluginStatus {
        PluginStatus {
            server: server.to_string(),
            state: PluginState::Failed,
            observed_generation: 0,
            sha256: None,
            resource: String::new(),
            wit_version: String::new(),
            activations: 0,
            last_error: None,
            loaded_at: None,
        }
    }

    /// The entry as JSON (`status.replicas[]`).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("server".into(), json!(self.server));
        m.insert("state".into(), json!(self.state.as_str()));
        m.insert("observedGeneration".into(), json!(self.observed_generation));
        if let Some(s) = &self.sha256 {
            m.insert("sha256".into(), json!(s));
        }
        if !self.resource.is_empty() {
            m.insert("resource".into(), json!(self.resource));
        }
        if !self.wit_version.is_empty() {
            m.insert("witVersion".into(), json!(self.wit_version));
        }
        m.insert("activations".into(), json!(self.activations));
        if let Some(e) = &self.last_error {
            m.insert("lastError".into(), json!(e));
        }
        if let Some(t) = &self.loaded_at {
            m.insert("loadedAt".into(), json!(t));
        }
        Value::Object(m)
    }
}

/// The object recording a file of a server's plugin folder (`spec.file`).
pub fn file_record(name: &str, file: &str) -> Value {
    json!({
        "apiVersion": format!("{STATUS_GROUP}/v1"),
        "kind": "StrategyPlugin",
        "metadata": {"name": name},
        "spec": {"file": file},
    })
}

/// `obj` with `entry` as its server's `status.replicas` entry (replacing that server's
/// previous one; entries sorted by server). `None` when the entry is already there as is.
pub fn with_replica_status(obj: &Value, entry: &PluginStatus) -> Option<Value> {
    let new = entry.to_json();
    let mut replicas: Vec<Value> = obj
        .pointer("/status/replicas")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(pos) = replicas
        .iter()
        .position(|r| r["server"].as_str() == Some(entry.server.as_str()))
    {
        if replicas[pos] == new {
            return None;
        }
        replicas[pos] = new;
    } else {
        replicas.push(new);
    }
    replicas.sort_by(|a, b| a["server"].as_str().cmp(&b["server"].as_str()));
    let mut obj = obj.clone();
    let conditions = obj.pointer("/status/conditions").cloned();
    obj["status"] = json!({"replicas": replicas});
    if let Some(c) = conditions {
        obj["status"]["conditions"] = c;
    }
    with_conditions(&mut obj);
    Some(obj)
}

/// Set `status.conditions` from the replicas' entries, in kube's `metav1.Condition` shape, so
/// that `kubectl wait --for=condition=Ready` and kstatus-based health checks (Argo CD, Flux)
/// read a rollout: `Ready` (every replica serves — or, `spec.active: false`, has
/// unregistered — the current generation), `Progressing` (an entry is missing or behind it),
/// `Degraded` (a replica refused it; the last good version keeps serving), each with the
/// `observedGeneration` it describes and its `lastTransitionTime` kept while its status holds.
/// Nothing when there is no entry yet.
pub fn with_conditions(obj: &mut Value) {
    let Some(replicas) = obj.pointer("/status/replicas").and_then(Value::as_array) else {
        return;
    };
    let generation = generation(obj);
    let total = replicas.len();
    let current = replicas
        .iter()
        .filter(|r| r["observedGeneration"].as_i64() == Some(generation))
        .count();
    let state = summary(obj);
    let message = format!("{current} of {total} replicas observed generation {generation}");
    let (ready, progressing, degraded) = match state {
        "Active" | "Inactive" => (true, false, false),
        "Failed" => (false, false, true),
        "Removed" => (false, false, false),
        _ => (false, true, false),
    };
    let old = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let condition = |kind: &str, holds: bool| {
        let status = if holds { "True" } else { "False" };
        let since = wasm_apiserver_apimachinery::conditions::transition_time(&old, kind, status);
        json!({"type": kind, "status": status, "observedGeneration": generation,
               "reason": state, "message": message, "lastTransitionTime": since})
    };
    obj["status"]["conditions"] = json!([
        condition("Ready", ready),
        condition("Progressing", progressing),
        condition("Degraded", degraded),
    ]);
}

/// The one-word summary of the replicas' entries: `Pending` (none yet), the common state,
/// `Progressing` (entries behind `metadata.generation`, or mixed), or `Failed` if any failed.
pub fn summary(obj: &Value) -> &'static str {
    let generation = generation(obj);
    let replicas = obj
        .pointer("/status/replicas")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let states: Vec<&str> = replicas
        .iter()
        .filter_map(|r| r["state"].as_str())
        .collect();
    if states.is_empty() {
        return "Pending";
    }
    if states.contains(&"Failed") {
        return "Failed";
    }
    let behind = replicas
        .iter()
        .any(|r| r["observedGeneration"].as_i64().unwrap_or(0) < generation);
    if behind {
        return "Progressing";
    }
    for s in [
        PluginState::Active,
        PluginState::Inactive,
        PluginState::Removed,
    ] {
        if states.iter().all(|x| *x == s.as_str()) {
            return s.as_str();
        }
    }
    "Progressing"
}

/// The host-side strategy of `strategyplugins`: spec written by users (`plugin push`,
/// `kubectl apply`), `status` by the servers through the status subresource.
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
                subresources: vec!["status".into()],
                printer_columns: vec![
                    col("Name", "string", "@name", 0),
                    col("Resource", "string", "", 0),
                    col("Source", "string", "", 0),
                    col("Generation", "integer", ".metadata.generation", 0),
                    col("State", "string", "", 0),
                    col("Replicas", "string", "", 0),
                    col("Age", "date", ".metadata.creationTimestamp", 0),
                    col("WIT", "string", "", 1),
                    col("Last-Error", "string", "", 1),
                ],
                selectable_fields: Vec::new(),
                openapi_schema: schema(),
                example: None,
                return_deleted_object: false,
                versions: Vec::new(),
            },
        }
    }
}

fn schema() -> Value {
    json!({
        "type": "object",
        "description": "A strategy plugin served by every replica: a component uploaded by sha256 (or a record of a file in a server's --plugin-dir).",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {
                "sha256": {"type": "string", "description": "sha256 (64 lowercase hex digits) of a component uploaded to /apis/wasm-apiserver.dev/v1/strategyplugincomponents/<sha256>."},
                "active": {"type": "boolean", "description": "Whether the resource is served (default true); false unregisters it, keeping its data."},
                "file": {"type": "string", "description": "Set by a server for a file of its --plugin-dir (instead of sha256)."},
                "extends": {"type": "string", "description": "The name of a CustomResourceDefinition (<plural>.<group>) this plugin's hooks attach to, instead of serving a resource of its own: the CRD prunes and defaults, the plugin prepares, the CRD's schema and CEL rules validate, then the plugin validates. Immutable; delete the object to detach."}
            }},
            "status": {"type": "object", "properties": {
                "replicas": {"type": "array", "description": "One entry per server, written by that server.", "items": {"type": "object", "properties": {
                    "server": {"type": "string", "description": "The server's identity (--server-id)."},
                    "state": {"type": "string", "description": "Active, Failed (the version asked for was refused; the last good one, if any, keeps serving), Removed (the file was deleted) or Inactive."},
                    "observedGeneration": {"type": "integer", "description": "The metadata.generation this entry answers."},
                    "sha256": {"type": "string", "description": "sha256 of the version serving on this server."},
                    "resource": {"type": "string", "description": "The resource served: plural.group/version."},
                    "witVersion": {"type": "string"},
                    "activations": {"type": "integer", "description": "Versions this server activated so far."},
                    "lastError": {"type": "string", "description": "Why the last attempt failed."},
                    "loadedAt": {"type": "string", "description": "When the serving version was activated."}
                }}},
                "conditions": {"type": "array", "description": "Ready, Progressing and Degraded, summarising every replica's entry for the current generation (metav1.Condition).", "items": {"type": "object"}}
            }}
        }
    })
}

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let path = Path::new("spec");
    let mut errs = Vec::new();
    let Some(s) = obj.get("spec").and_then(Value::as_object) else {
        errs.push(field::required(&path, "sha256 or file is required"));
        return errs;
    };
    match (s.get("sha256"), s.get("file")) {
        (None, None) => errs.push(field::required(
            &path.child("sha256"),
            "the sha256 of an uploaded component",
        )),
        (Some(_), Some(_)) => errs.push(field::forbidden(
            &path.child("file"),
            "may not be set with sha256",
        )),
        (Some(sha), None) => {
            if !sha.as_str().is_some_and(is_sha256) {
                errs.push(field::invalid(
                    &path.child("sha256"),
                    sha,
                    "must be 64 lowercase hexadecimal characters",
                ));
            }
        }
        (None, Some(file)) => {
            let ok = file
                .as_str()
                .is_some_and(|f| f.ends_with(".wasm") && !f.contains('/') && f.len() > 5);
            if !ok {
                errs.push(field::invalid(
                    &path.child("file"),
                    file,
                    "must be the name of a .wasm file",
                ));
            }
        }
    }
    if let Some(e) = s.get("extends") {
        let at = path.child("extends");
        match e.as_str() {
            _ if s.contains_key("file") => errs.push(field::forbidden(
                &at,
                "a plugin file of a server's folder cannot attach to a CRD: push it",
            )),
            Some(name) if name.contains('.') && is_dns1123_subdomain(name).is_empty() => {}
            _ => errs.push(field::invalid(
                &at,
                e,
                "must be the name of a CustomResourceDefinition (<plural>.<group>)",
            )),
        }
    }
    if let Some(a) = s.get("active") {
        if !a.is_boolean() {
            errs.push(field::type_invalid(
                &path.child("active"),
                a,
                "must be a boolean",
            ));
        }
    }
    for k in s.keys() {
        if !["sha256", "file", "active", "extends"].contains(&k.as_str()) {
            errs.push(field::forbidden(&path.child(k), "unknown field"));
        }
    }
    errs
}

/// The object without `metadata` and `status`: what a generation counts changes of.
fn content(obj: &Value) -> Value {
    let mut c = obj.clone();
    if let Some(m) = c.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    c
}

pub(super) fn set_generation(obj: &mut Value, g: i64) {
    wasm_apiserver_apimachinery::meta::accessor_mut(obj).set("generation", g);
}

fn generation(obj: &Value) -> i64 {
    wasm_apiserver_apimachinery::meta::accessor(obj)
        .generation()
        .unwrap_or(1)
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
    /// The CRD strategy's `PrepareForCreate`: status dropped, generation 1.
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let mut obj = obj.clone();
        if let Some(m) = obj.as_object_mut() {
            m.remove("status");
        }
        set_generation(&mut obj, 1);
        Ok(obj)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(validate_spec(obj))
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    /// `PrepareForUpdate` (`customresource/strategy.go`): status kept; generation bumped when
    /// anything but metadata and status changed.
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut new = new.clone();
        with_status_of(&mut new, old);
        let g = generation(old) + i64::from(content(&new) != content(old));
        set_generation(&mut new, g);
        // A new generation is not Ready until the replicas report it.
        if g != generation(old) {
            with_conditions(&mut new);
        }
        Ok(new)
    }
    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let mut errs = validate_spec(new);
        let kind = |o: &Value| spec(o).get("file").is_some();
        errs.extend(validate_immutable_field(
            &kind(new),
            &kind(old),
            &Path::new("spec").child("file"),
        ));
        let extends = |o: &Value| spec(o).get("extends").cloned();
        errs.extend(validate_immutable_field(
            &extends(new),
            &extends(old),
            &Path::new("spec").child("extends"),
        ));
        Ok(errs)
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    /// The status strategy's `PrepareForUpdate` (`customresource/status_strategy.go`): the
    /// old object with the new status (metadata, spec and generation kept).
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut out = old.clone();
        with_status_of(&mut out, new);
        Ok(out)
    }
    fn validate_status_update(&self, new: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        let path = Path::new("status").child("replicas");
        let mut errs = Vec::new();
        if let Some(r) = new.pointer("/status/replicas") {
            match r.as_array() {
                None => errs.push(field::type_invalid(&path, r, "must be an array")),
                Some(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if item["server"].as_str().is_none_or(|s| s.is_empty()) {
                            errs.push(field::required(&path.index(i).child("server"), ""));
                        }
                    }
                }
            }
        }
        Ok(errs)
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
    /// Resource, Source, State, Replicas (`server=State@generation …`), WIT, Last-Error.
    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>> {
        let replicas = obj
            .pointer("/status/replicas")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let first = |k: &str| {
            let mut seen: Vec<&str> = replicas.iter().filter_map(|r| r[k].as_str()).collect();
            seen.dedup();
            seen.join(",")
        };
        let s = spec(obj);
        let source = match (s["sha256"].as_str(), s["file"].as_str()) {
            (Some(sha), _) => format!("sha256:{}", &sha[..sha.len().min(12)]),
            (None, Some(f)) => f.to_string(),
            _ => String::new(),
        };
        let per_replica: Vec<String> = replicas
            .iter()
            .map(|r| {
                format!(
                    "{}={}@{}",
                    r["server"].as_str().unwrap_or(""),
                    r["state"].as_str().unwrap_or(""),
                    r["observedGeneration"].as_i64().unwrap_or(0)
                )
            })
            .collect();
        Ok(vec![
            json!(first("resource")),
            json!(source),
            json!(summary(obj)),
            json!(per_replica.join(" ")),
            json!(first("witVersion")),
            json!(first("lastError")),
        ])
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

/// The uploaded components of `factory`'s storage: `<prefix>/wasm-apiserver.dev/components`
/// in the backend that stores `strategyplugins`.
pub fn components(
    factory: &wasm_apiserver_storage::factory::StorageFactory,
) -> wasm_apiserver_storage::blob_store::BlobStore {
    let backend = factory.backend_for(STATUS_GROUP, STATUS_PLURAL).backend();
    wasm_apiserver_storage::blob_store::BlobStore::new(
        backend,
        &format!("{}/{STATUS_GROUP}/components", factory.prefix()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha() -> String {
        "ab".repeat(32)
    }

    #[test]
    fn spec_validation() {
        let s = StrategyPluginStrategy::new();
        let ok = json!({"metadata": {"name": "w"}, "spec": {"sha256": sha(), "active": true}});
        assert!(s.validate(&ok).unwrap().is_empty());
        let file = json!({"spec": {"file": "w.wasm"}});
        assert!(s.validate(&file).unwrap().is_empty());
        let attached = json!({"spec": {"sha256": sha(), "extends": "widgets.example.com"}});
        assert!(s.validate(&attached).unwrap().is_empty());
        let detached = json!({"spec": {"sha256": sha()}});
        let errs = s.validate_update(&detached, &attached).unwrap();
        assert_eq!(errs[0].field, "spec.extends", "{errs:?}");
        for (bad, field) in [
            (json!({}), "spec"),
            (json!({"spec": {}}), "spec.sha256"),
            (json!({"spec": {"sha256": "ABC"}}), "spec.sha256"),
            (
                json!({"spec": {"sha256": sha(), "file": "w.wasm"}}),
                "spec.file",
            ),
            (json!({"spec": {"file": "../w.wasm"}}), "spec.file"),
            (
                json!({"spec": {"sha256": sha(), "active": "yes"}}),
                "spec.active",
            ),
            (json!({"spec": {"sha256": sha(), "url": "x"}}), "spec.url"),
            (
                json!({"spec": {"sha256": sha(), "extends": "widgets"}}),
                "spec.extends",
            ),
            (
                json!({"spec": {"sha256": sha(), "extends": 1}}),
                "spec.extends",
            ),
            (
                json!({"spec": {"file": "w.wasm", "extends": "widgets.example.com"}}),
                "spec.extends",
            ),
        ] {
            let errs = s.validate(&bad).unwrap();
            assert_eq!(errs.len(), 1, "{bad}: {errs:?}");
            assert_eq!(errs[0].field, field, "{bad}");
        }
        let errs = s.validate_update(&ok, &file).unwrap();
        assert_eq!(errs[0].field, "spec.file", "{errs:?}");
    }

    #[test]
    fn generation_and_status_follow_the_crd_strategy() {
        let s = StrategyPluginStrategy::new();
        let created = s
            .prepare_for_create(&json!({"metadata": {"name": "w"}, "spec": {"sha256": sha()}, "status": {"replicas": []}}))
            .unwrap();
        assert_eq!(created["metadata"]["generation"], 1);
        assert!(created.get("status").is_none());
        let entry = PluginStatus {
            state: PluginState::Active,
            observed_generation: 1,
            ..PluginStatus::new("a")
        };
        let stored = with_replica_status(&created, &entry).unwrap();
        assert!(with_replica_status(&stored, &entry).is_none(), "unchanged");
        assert_eq!(summary(&stored), "Active");
        // A spec change bumps the generation and keeps the status.
        let mut new = stored.clone();
        new["spec"]["sha256"] = json!("cd".repeat(32));
        new["status"] = json!({"replicas": []});
        let updated = s.prepare_for_update(&new, &stored).unwrap();
        assert_eq!(updated["metadata"]["generation"], 2);
        assert_eq!(updated["status"]["replicas"], stored["status"]["replicas"]);
        assert_eq!(summary(&updated), "Progressing");
        // Ready at generation 1; at 2, not until the replicas report it.
        let status = |o: &Value, i: usize| {
            let c = &o["status"]["conditions"][i];
            (
                c["type"].clone(),
                c["status"].clone(),
                c["observedGeneration"].clone(),
            )
        };
        assert_eq!(
            status(&stored, 0),
            (json!("Ready"), json!("True"), json!(1))
        );
        assert_eq!(
            status(&updated, 0),
            (json!("Ready"), json!("False"), json!(2))
        );
        assert_eq!(
            status(&updated, 1),
            (json!("Progressing"), json!("True"), json!(2))
        );
        // A status update keeps everything but the status (labels too, as kube's status
        // strategy); a metadata-only update keeps the generation.
        let mut labelled = updated.clone();
        labelled["metadata"]["labels"] = json!({"team": "a"});
        let same = s.prepare_for_update(&labelled, &updated).unwrap();
        assert_eq!(same["metadata"]["generation"], 2);
        let mut st = updated.clone();
        st["metadata"]["labels"] = json!({"sneaky": "x"});
        st["spec"]["sha256"] = json!("ef".repeat(32));
        let st = s.prepare_for_status_update(&st, &updated).unwrap();
        assert_eq!(st["spec"], updated["spec"]);
        assert!(st["metadata"].get("labels").is_none());
        assert_eq!(st["metadata"]["generation"], 2);
        let b = PluginStatus {
            state: PluginState::Failed,
            observed_generation: 2,
            ..PluginStatus::new("b")
        };
        let two = with_replica_status(&updated, &b).unwrap();
        assert_eq!(summary(&two), "Failed");
        let cells = s.printer_cells(&two).unwrap();
        assert_eq!(cells[3], json!("a=Active@1 b=Failed@2"), "{cells:?}");
        assert_eq!(cells[1], json!(format!("sha256:{}", &"cd".repeat(6))));
    }
}

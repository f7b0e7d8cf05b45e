//! `FieldManager` (`k8s.io/apimachinery/pkg/util/managedfields/internal/fieldmanager.go`) with
//! the managers kube chains in `NewDefaultFieldManager`, outermost first:
//!
//! - `versionCheckManager`: an applied object must name the resource's apiVersion and kind;
//! - `lastAppliedUpdater` / `lastAppliedManager`: `kubectl`'s upgrade from client-side apply
//!   (conflicts on fields its `last-applied-configuration` annotation holds unchanged are
//!   forced) and keeping that annotation current for a downgrade;
//! - `skipNonAppliedManager`: objects without managed fields start tracking on create, and an
//!   apply to such an object first gives its fields to `before-first-apply`;
//! - `capManagersManager`: at most 10 update entries, the oldest merged into `ancient-changes`;
//! - `buildManagerInfoManager`: the manager identifier (name, operation, apiVersion,
//!   subresource);
//! - `managedFieldsUpdater`: an update's fields join the manager's earlier ones; the entry's
//!   time is set when its fields changed;
//! - `stripMetaManager`: `apiVersion`, `kind` and system metadata are never owned;
//! - `structuredMergeManager` over [`Updater`].
//!
//! The object's `metadata.managedFields` is decoded at the start and written back at the end.

use super::managed_fields::{
    decode_managed_fields, encode_managed_fields, manager_identifier, Managed, ManagedFieldsEntry,
    VersionedSet, APPLY, UPDATE,
};
use super::path_element::{path_string, PathElement};
use super::schema::Schema;
use super::set::Set;
use super::typed;
use super::updater::{Conflict, UpdateError, Updater};
use crate::status::ApiError;
use crate::strategy::ResourceDescription;
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::meta::accessor;

/// `DefaultMaxUpdateManagers`.
pub const MAX_UPDATE_MANAGERS: usize = 10;
/// The annotation `kubectl apply` (client-side) keeps its configuration in.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// `ValidateAnnotationsSize`'s limit: all annotations of an object, 256 KiB.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
const CURRENT_OPERATION: &str = "current-operation";
const BEFORE_FIRST_APPLY: &str = "before-first-apply";
const ANCIENT_CHANGES: &str = "ancient-changes";

/// The field manager of one resource: its schema, apiVersion and kind, and the fields each
/// endpoint resets (for a resource with a status subresource the main endpoint never owns
/// `status` and `/status` never owns `spec`, as the strategies' `GetResetFields` say).
pub struct FieldManager {
    schema: Schema,
    api_version: String,
    kind: String,
    reset_main: Option<Set>,
    reset_status: Option<Set>,
}

fn field(name: &str) -> Vec<PathElement> {
    vec![PathElement::Field(name.into())]
}

/// `stripMetaManager`'s set: never owned by anyone.
static STRIP_SET: std::sync::LazyLock<Set> = std::sync::LazyLock::new(strip_set);

fn strip_set() -> Set {
    let mut s = Set::new();
    for f in ["apiVersion", "kind", "metadata"] {
        s.insert(&field(f));
    }
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[
            PathElement::Field("metadata".into()),
            PathElement::Field(f.into()),
        ]);
    }
    s
}

impl FieldManager {
    /// The schema fields are merged by (a MutatingAdmissionPolicy's apply configurations
    /// merge by it too).
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The field manager of a served resource.
    pub fn new(d: &ResourceDescription) -> FieldManager {
        let api_version = if d.group.is_empty() {
            d.version.clone()
        } else {
            format!("{}/{}", d.group, d.version)
        };
        let reset = |f: &str| {
            let mut s = Set::new();
            s.insert(&field(f));
            s
        };
        FieldManager {
            schema: Schema::for_resource(&d.openapi_schema),
            api_version,
            kind: d.kind.clone(),
            reset_main: d.has_status().then(|| reset("status")),
            reset_status: d.has_status().then(|| reset("spec")),
        }
    }

    fn updater(&self, subresource: &str) -> Updater<'_> {
        Updater {
            schema: &self.schema,
            ignored: if subresource.is_empty() {
                self.reset_main.as_ref()
            } else {
                self.reset_status.as_ref()
            },
        }
    }

    fn identifier(&self, manager: &str, operation: &str, subresource: &str) -> String {
        manager_identifier(&ManagedFieldsEntry {
            manager: if manager.is_empty() {
                "unknown".into()
            } else {
                manager.into()
            },
            operation: operation.into(),
            api_version: self.api_version.clone(),
            subresource: subresource.into(),
            ..Default::default()
        })
    }

    /// `UpdateNoErrors`: the managed fields of a non-apply write by `manager` (`fieldManager`,
    /// else the User-Agent prefix) from `live` (`Null` or `{}` on create) to `new`, written
    /// into `new`. When they cannot be computed (an object the schema cannot type), `new`
    /// keeps the live object's managed fields, as kube does. [`FieldManager::prepare_update`]
    /// then [`FieldManager::finish_update`].
    pub fn update(&self, live: &Value, mut new: Value, manager: &str, subresource: &str) -> Value {
        let managed = self.prepare_update(live, &mut new, subresource);
        self.finish_update(live, new, managed, manager, subresource)
    }

    /// The first half of [`FieldManager::update`], for the request's object before admission
    /// and the strategy (kube's order): `decodeLiveOrNew` picks the entries the write starts
    /// from — the request's when it sends valid ones, none when it sends `[]` or `[{}]`, else
    /// the live object's (always for a subresource) — and the request's entries stay on the
    /// object only when they are the ones picked, so validation sees what kube's sees.
    pub fn prepare_update(&self, live: &Value, new: &mut Value, subresource: &str) -> Managed {
        let decode_live = || decode_object(live).unwrap_or_default();
        if !subresource.is_empty() {
            set_managed_fields(new, None);
            return decode_live();
        }
        match accessor(new).get("managedFields") {
            Some(Value::Array(a))
                if a.is_empty()
                    || (a.len() == 1 && a[0].as_object().is_some_and(|o| o.is_empty())) =>
            {
                set_managed_fields(new, None);
                return Managed::default();
            }
            _ => {}
        }
        match decode_object(new) {
            Ok(m) if !m.fields.is_empty() => m,
            _ => {
                set_managed_fields(new, None);
                decode_live()
            }
        }
    }

    /// The second half of [`FieldManager::update`], on the object as it will be written
    /// (after the strategy): `managed` (from [`FieldManager::prepare_update`]) updated by the
    /// write and encoded into `new`.
    pub fn finish_update(
        &self,
        live: &Value,
        mut new: Value,
        mut managed: Managed,
        manager: &str,
        subresource: &str,
    ) -> Value {
        let empty = json!({});
        let live = if live.is_object() { live } else { &empty };
        set_managed_fields(&mut new, None);
        // skipNonAppliedManager: objects that exist untracked stay untracked until an apply.
        let uid = accessor(live).uid();
        if managed.fields.is_empty() && !uid.is_empty() {
            return new;
        }
        let id = self.identifier(manager, UPDATE, subresource);
        match self.track_update(live, &new, &mut managed, &id, subresource) {
            Ok(()) => encode_into(&mut new, &managed),
            Err(_) => set_managed_fields(&mut new, accessor(live).get("managedFields").cloned()),
        }
        new
    }

    /// `capManagersManager.Update` → `buildManagerInfoManager` (done by the caller) →
    /// `managedFieldsUpdater.Update` → `stripMetaManager.Update` → `Updater.Update`.
    fn track_update(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        id: &str,
        subresource: &str,
    ) -> Result<(), UpdateError> {
        self.updater(subresource).update(
            live,
            new,
            &self.api_version,
            &mut managed.fields,
            CURRENT_OPERATION,
        )?;
        strip(managed, CURRENT_OPERATION);
        if let Some(vs) = managed.fields.remove(CURRENT_OPERATION) {
            let merged = match managed.fields.get(id) {
                Some(previous) => VersionedSet {
                    set: vs.set.union(&previous.set),
                    ..vs
                },
                None => vs,
            };
            managed.fields.insert(id.to_string(), merged);
            managed.times.insert(
                id.to_string(),
                Some(wasm_apiserver_apimachinery::time::now()),
            );
        }
        cap_update_managers(managed, MAX_UPDATE_MANAGERS);
        Ok(())
    }

    /// `FieldManager.Apply`: `applied` (the request's configuration) applied by `manager` to
    /// `live` (`Null` when the object does not exist). Returns the new object with its managed
    /// fields. Errors: 400 for a configuration of another apiVersion or kind, one carrying
    /// `metadata.managedFields`, or one the schema cannot type (kube answers the last with a
    /// 500); 409 `Conflict` listing each conflicting field and its manager unless `force`.
    pub fn apply(
        &self,
        live: &Value,
        applied: &Value,
        manager: &str,
        force: bool,
        subresource: &str,
    ) -> Result<Value, ApiError> {
        let empty = json!({});
        let live = if live.is_object() { live } else { &empty };
        // versionCheckManager.
        let av = applied
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = applied.get("kind").and_then(Value::as_str).unwrap_or("");
        if av != self.api_version || kind != self.kind {
            let (group, version) = av.rsplit_once('/').unwrap_or(("", av));
            return Err(ApiError::bad_request(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )));
        }
        if accessor(applied)
            .get("managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        // A stored object's entries were valid when written; unreadable ones start over.
        let managed = || decode_object(live).unwrap_or_default();
        let result = self.apply_tracked(live, applied, managed(), manager, force, subresource);
        let mut object = match result {
            // lastAppliedManager: kubectl's first server-side apply after client-side ones.
            Err(UpdateError::Conflicts(conflicts)) if manager == "kubectl" => {
                match self.allowed_from_last_applied(live) {
                    Some(allowed) => {
                        let remaining: Vec<Conflict> = conflicts
                            .iter()
                            .filter(|c| !allowed.has(&c.path))
                            .cloned()
                            .collect();
                        if remaining.is_empty() {
                            // The rare retry decodes the entries again rather than every
                            // apply keeping a copy.
                            self.apply_tracked(live, applied, managed(), manager, true, subresource)
                        } else {
                            Err(UpdateError::Conflicts(remaining))
                        }
                    }
                    None => Err(UpdateError::Conflicts(conflicts)),
                }
            }
            other => other,
        }
        .map_err(|e| self.apply_error(e, applied))?;
        // lastAppliedUpdater: keep kubectl's annotation in step for a later client-side apply.
        if manager == "kubectl" && has_last_applied(&object) {
            let mut config = applied.clone();
            if let Some(a) = config
                .pointer_mut("/metadata/annotations")
                .and_then(Value::as_object_mut)
            {
                a.remove(LAST_APPLIED_ANNOTATION);
            }
            set_last_applied(&mut object, go_json(&config));
        }
        Ok(object)
    }

    /// `skipNonAppliedManager.Apply` → `buildManagerInfoManager` → `managedFieldsUpdater` →
    /// `stripMetaManager` → `structuredMergeManager.Apply`.
    fn apply_tracked(
        &self,
        live: &Value,
        applied: &Value,
        mut managed: Managed,
        manager: &str,
        force: bool,
        subresource: &str,
    ) -> Result<Value, UpdateError> {
        if managed.fields.is_empty() {
            let id = self.identifier(BEFORE_FIRST_APPLY, UPDATE, subresource);
            self.track_update(&json!({}), live, &mut managed, &id, subresource)?;
        }
        let id = self.identifier(manager, APPLY, subresource);
        let new = self.updater(subresource).apply(
            live,
            applied,
            &self.api_version,
            &mut managed.fields,
            &id,
            force,
        )?;
        strip(&mut managed, &id);
        let mut object = match new {
            Some(new) => {
                managed
                    .times
                    .insert(id.clone(), Some(wasm_apiserver_apimachinery::time::now()));
                new
            }
            None => live.clone(),
        };
        set_managed_fields(&mut object, None);
        encode_into(&mut object, &managed);
        Ok(object)
    }

    /// `allowedConflictsFromLastApplied`: the fields of the `last-applied-configuration`
    /// annotation whose live values still equal it; `None` without a usable annotation.
    fn allowed_from_last_applied(&self, live: &Value) -> Option<Set> {
        let text =
            Some(accessor(live).annotation(LAST_APPLIED_ANNOTATION)).filter(|s| !s.is_empty())?;
        let last: Value = serde_json::from_str(text).ok()?;
        if last.get("apiVersion").and_then(Value::as_str) != Some(&self.api_version) {
            return None;
        }
        let set = typed::to_field_set(&self.schema, &last).ok()?;
        let c = typed::compare(&self.schema, &last, live).ok()?;
        Some(
            set.difference(&c.modified)
                .difference(&c.added)
                .difference(&c.removed),
        )
    }

    /// `NewConflictError` for conflicts; for an object the schema cannot type, a 400 naming
    /// the configuration (`failed to create typed patch object`) or, when the configuration
    /// types, the stored object (`failed to create typed live object` — kube answers that one
    /// 500; it is the stored object's list items that cannot be named, e.g. after a plugin
    /// changed its list keys).
    fn apply_error(&self, e: UpdateError, applied: &Value) -> ApiError {
        match e {
            UpdateError::Conflicts(conflicts) => conflict_error(&conflicts),
            UpdateError::Invalid(msg) => {
                let (ns, name) = (accessor(applied).namespace(), accessor(applied).name());
                let (group, version) = self
                    .api_version
                    .rsplit_once('/')
                    .unwrap_or(("", &self.api_version));
                // `ObjectToTyped(patchObj)` without `AllowDuplicates`: names and repeats.
                let config_types = typed::merge(&self.schema, &json!({}), applied).is_ok();
                let which = if config_types { "live" } else { "patch" };
                ApiError::bad_request(format!(
                    "failed to create typed {which} object ({ns}/{name}; {group}/{version}, Kind={}): {msg}",
                    self.kind
                ))
            }
        }
    }
}

/// `NewConflictError` (`internal/conflict.go`): one cause per field, and kube's message.
pub fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes = conflicts
        .iter()
        .map(|c| {
            json!({
                "type": "FieldManagerConflict",
                "message": format!("conflict with {}", print_manager(&c.manager)),
                "field": path_string(&c.path),
            })
        })
        .collect();
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print_manager(&conflicts[0].manager),
            path_string(&conflicts[0].path)
        )
    } else {
        // Grouped by manager identifier in sorted order, paths in the order given.
        let mut by_manager: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for c in conflicts {
            by_manager
                .entry(&c.manager)
                .or_default()
                .push(path_string(&c.path));
        }
        let mut lines = Vec::new();
        for (manager, paths) in by_manager {
            lines.push(format!("conflicts with {}:", print_manager(manager)));
            lines.extend(paths.into_iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::apply_conflict(causes, message)
}

/// `printManager`: `"name"`, `with subresource "status"`, and `using v1` for update entries.
fn print_manager(identifier: &str) -> String {
    let Ok(e) = serde_json::from_str::<ManagedFieldsEntry>(identifier) else {
        return format!("{identifier:?}");
    };
    let mut s = format!("{:?}", e.manager);
    if !e.subresource.is_empty() {
        s = format!("{s} with subresource {:?}", e.subresource);
    }
    if e.operation == UPDATE {
        s = match &e.time {
            None => format!("{s} using {}", e.api_version),
            Some(t) => format!("{s} using {} at {t}", e.api_version),
        };
    }
    s
}

fn strip(managed: &mut Managed, id: &str) {
    if let Some(vs) = managed.fields.get_mut(id) {
        vs.set = vs.set.difference(&STRIP_SET);
        if vs.set.is_empty() {
            managed.fields.remove(id);
        }
    }
}

/// `capUpdateManagers`: while there are more than `max` update entries, the oldest (by time,
/// then identifier) are merged into one `ancient-changes` entry per apiVersion.
fn cap_update_managers(managed: &mut Managed, max: usize) {
    let mut updaters: Vec<String> = managed
        .fields
        .iter()
        .filter(|(_, vs)| !vs.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= max {
        return;
    }
    let seconds = |id: &String| {
        managed
            .times
            .get(id)
            .cloned()
            .flatten()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.timestamp())
            .unwrap_or(0)
    };
    updaters.sort_by(|a, b| seconds(a).cmp(&seconds(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: std::collections::HashMap<String, String> = Default::default();
    let mut length = updaters.len();
    for id in updaters {
        if length <= max {
            break;
        }
        let Some(vs) = managed.fields.get(&id).cloned() else {
            continue;
        };
        let time = managed.times.get(&id).cloned().flatten();
        let bucket = manager_identifier(&ManagedFieldsEntry {
            manager: ANCIENT_CHANGES.into(),
            operation: UPDATE.into(),
            api_version: vs.api_version.clone(),
            ..Default::default()
        });
        match first_of_version.get(&vs.api_version) {
            Some(first) => {
                if !managed.fields.contains_key(&bucket) {
                    if let Some(s) = managed.fields.remove(first) {
                        managed.fields.insert(bucket.clone(), s);
                    }
                }
                let union = managed.fields[&bucket].set.union(&vs.set);
                managed
                    .fields
                    .insert(bucket.clone(), VersionedSet { set: union, ..vs });
                managed.fields.remove(&id);
                length -= 1;
                managed.times.insert(bucket, time);
            }
            None => {
                first_of_version.insert(vs.api_version.clone(), id.clone());
            }
        }
    }
    managed
        .times
        .retain(|id, _| managed.fields.contains_key(id));
}

fn decode_object(obj: &Value) -> Result<Managed, String> {
    match accessor(obj).get("managedFields") {
        None | Some(Value::Null) => Ok(Managed::default()),
        Some(v) => {
            let entries: Vec<ManagedFieldsEntry> =
                serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
            decode_managed_fields(&entries)
        }
    }
}

fn set_managed_fields(obj: &mut Value, v: Option<Value>) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match v {
        Some(v) if !v.is_null() => {
            meta.insert("managedFields".into(), v);
        }
        _ => {
            meta.remove("managedFields");
        }
    }
}

/// `EncodeObjectManagedFields`: the entries in kube's order; none → the field is absent.
fn encode_into(obj: &mut Value, managed: &Managed) {
    let entries = encode_managed_fields(managed);
    let v = if entries.is_empty() {
        None
    } else {
        serde_json::to_value(entries).ok()
    };
    set_managed_fields(obj, v);
}

/// JSON as Go's `runtime.Encode` writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped, a
/// trailing newline.
fn go_json(v: &Value) -> String {
    let mut out = String::new();
    for c in v.to_string().chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// `IgnoreManagedFieldsTimestampsTransformer` (`endpoints/handlers/fieldmanager/equality.go`,
/// run by `Store.Update`): when an update would change nothing but the times of its
/// `managedFields` entries — the strategy undid what the write changed, or the change was to
/// a canonical form — the old times are kept, so the write is a no-op and no watch event goes
/// out.
pub fn ignore_managed_fields_timestamps(new: &mut Value, old: &Value) {
    let entries = |v: &Value| {
        accessor(v)
            .get("managedFields")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (old_entries, new_entries) = (entries(old), entries(new));
    if old_entries.len() != new_entries.len() || new_entries.is_empty() {
        return;
    }
    if old_entries
        .iter()
        .zip(&new_entries)
        .all(|(a, b)| a.get("time") == b.get("time"))
    {
        return;
    }
    let without_time = |e: &Value| {
        let mut e = e.clone();
        if let Some(m) = e.as_object_mut() {
            m.remove("time");
        }
        e
    };
    if !old_entries
        .iter()
        .zip(&new_entries)
        .all(|(a, b)| without_time(a) == without_time(b))
    {
        return;
    }
    if !equal_ignoring_managed_fields(old, new) {
        return;
    }
    if let Some(m) = new.pointer_mut("/metadata").and_then(Value::as_object_mut) {
        m.insert("managedFields".into(), Value::Array(old_entries));
    }
}

/// `equalIgnoringValueAtPath(a, b, ["metadata", "managedFields"])` with kube's strict
/// equality (an integer and a float differ, as `DeepEqualWithNilDifferentFromEmpty`).
fn equal_ignoring_managed_fields(a: &Value, b: &Value) -> bool {
    let (Some(am), Some(bm)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    if am.len() != bm.len() {
        return false;
    }
    am.iter().all(|(k, av)| {
        let Some(bv) = bm.get(k) else { return false };
        if k != "metadata" {
            return av == bv;
        }
        match (av.as_object(), bv.as_object()) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| k == "managedFields" || y.get(k) == Some(v))
            }
            _ => av == bv,
        }
    })
}

fn has_last_applied(obj: &Value) -> bool {
    !accessor(obj).annotation(LAST_APPLIED_ANNOTATION).is_empty()
}

/// `SetLastApplied`: the annotation is dropped instead when annotations would exceed their
/// size limit.
fn set_last_applied(obj: &mut Value, value: String) {
    let Some(annotations) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    annotations.insert(LAST_APPLIED_ANNOTATION.into(), Value::String(value));
    let total: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widgets() -> FieldManager {
        let d: ResourceDescription = serde_json::from_value(json!({
            "group": "example.dev", "version": "v1", "kind": "Widget", "plural": "widgets",
            "singular": "widget", "listKind": "WidgetList", "namespaced": true,
            "shortNames": [], "categories": [], "subresources": ["status"], "printerColumns": [],
            "selectableFields": [], "example": null,
            "openapiSchema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "string"}, "replicas": {"type": "integer"}}},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}
        }))
        .unwrap();
        FieldManager::new(&d)
    }

    #[test]
    fn create_is_owned_by_its_manager() {
        let fm = widgets();
        let obj = json!({"apiVersion": "example.dev/v1", "kind": "Widget",
            "metadata": {"name": "p", "namespace": "default", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"size": "large", "replicas": 5}, "status": {"phase": "Pending"}});
        let out = fm.update(&Value::Null, obj, "creator", "");
        let entries = out["metadata"]["managedFields"]
            .as_array()
            .expect("managed fields");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0]["manager"], "creator");
        assert_eq!(entries[0]["operation"], "Update");
        assert_eq!(entries[0]["apiVersion"], "example.dev/v1");
        assert_eq!(
            entries[0]["fieldsV1"],
            json!({"f:spec": {".": {}, "f:replicas": {}, "f:size": {}}})
        );
    }

    fn p(fields: &[&str]) -> Vec<PathElement> {
        fields
            .iter()
            .map(|f| PathElement::Field(f.to_string()))
            .collect()
    }

    #[test]
    fn conflict_errors_are_kubes() {
        // conflict.go TestNewConflictError.
        let foo = r#"{"manager":"foo","operation":"Update","apiVersion":"v1","time":"2001-02-03T04:05:06Z"}"#;
        let e = conflict_error(&[Conflict {
            manager: foo.into(),
            path: p(&["spec", "replicas"]),
        }]);
        assert_eq!((e.code, e.reason), (409, "Conflict"));
        assert_eq!(
            e.message,
            r#"Apply failed with 1 conflict: conflict with "foo" using v1 at 2001-02-03T04:05:06Z: .spec.replicas"#
        );
        assert_eq!(
            e.details,
            Some(json!({"causes": [{"type": "FieldManagerConflict",
                "message": "conflict with \"foo\" using v1 at 2001-02-03T04:05:06Z", "field": ".spec.replicas"}]}))
        );
        let e = conflict_error(&[
            Conflict {
                manager: foo.into(),
                path: p(&["spec", "replicas"]),
            },
            Conflict {
                manager: r#"{"manager":"bar","operation":"Apply"}"#.into(),
                path: p(&["metadata", "labels", "app"]),
            },
        ]);
        assert_eq!(
            e.message,
            "Apply failed with 2 conflicts: conflicts with \"bar\":\n- .metadata.labels.app\nconflicts with \"foo\" using v1 at 2001-02-03T04:05:06Z:\n- .spec.replicas"
        );
        assert_eq!(
            e.details.unwrap()["causes"][1]["message"],
            "conflict with \"bar\""
        );
        let scale = r#"{"manager":"foo","operation":"Update","subresource":"scale","apiVersion":"v1","time":"2001-02-03T04:05:06Z"}"#;
        let e = conflict_error(&[Conflict {
            manager: scale.into(),
            path: p(&["spec", "replicas"]),
        }]);
        assert_eq!(
            e.message,
            r#"Apply failed with 1 conflict: conflict with "foo" with subresource "scale" using v1 at 2001-02-03T04:05:06Z: .spec.replicas"#
        );
    }

    fn entries(list: &[(&str, &str, u32, &[&str])]) -> Managed {
        let e: Vec<ManagedFieldsEntry> = list
            .iter()
            .map(|(manager, version, secs, fields)| {
                let mut set = Set::new();
                for f in *fields {
                    set.insert(&p(&[f]));
                }
                ManagedFieldsEntry {
                    manager: manager.to_string(),
                    operation: UPDATE.into(),
                    api_version: version.to_string(),
                    time: Some(format!("1970-01-01T00:00:{secs:02}Z")),
                    fields_type: "FieldsV1".into(),
                    fields_v1: serde_json::from_str(&set.to_fields_v1()).ok(),
                    subresource: String::new(),
                }
            })
            .collect();
        decode_managed_fields(&e).unwrap()
    }

    #[test]
    fn update_managers_are_capped() {
        // capmanagers_test.go TestCapUpdateManagers (max 3).
        for (input, expected) in [
            (
                entries(&[
                    ("update-manager1", "v1", 1, &["a"]),
                    ("update-manager2", "v1", 2, &["b"]),
                    ("update-manager3", "v1", 3, &["c"]),
                    ("update-manager4", "v1", 4, &["d"]),
                ]),
                entries(&[
                    ("ancient-changes", "v1", 2, &["a", "b"]),
                    ("update-manager3", "v1", 3, &["c"]),
                    ("update-manager4", "v1", 4, &["d"]),
                ]),
            ),
            (
                entries(&[
                    ("update-manager1", "v1", 1, &["a"]),
                    ("update-manager2", "v2", 2, &["b"]),
                    ("update-manager3", "v1", 3, &["c"]),
                    ("update-manager4", "v1", 4, &["d"]),
                    ("update-manager5", "v1", 5, &["e"]),
                ]),
                entries(&[
                    ("update-manager2", "v2", 2, &["b"]),
                    ("ancient-changes", "v1", 4, &["a", "c", "d"]),
                    ("update-manager5", "v1", 5, &["e"]),
                ]),
            ),
            (
                entries(&[
                    ("ancient-changes", "v1", 5, &["a", "c", "d", "e"]),
                    ("update-manager6", "v3", 6, &["f"]),
                    ("ancient-changes", "v2", 7, &["b", "g"]),
                    ("update-manager8", "v3", 8, &["h"]),
                ]),
                entries(&[
                    ("ancient-changes", "v1", 5, &["a", "c", "d", "e"]),
                    ("ancient-changes", "v2", 7, &["b", "g"]),
                    ("ancient-changes", "v3", 8, &["f", "h"]),
                ]),
            ),
        ] {
            let mut managed = input;
            cap_update_managers(&mut managed, 3);
            assert_eq!(managed, expected);
        }
    }

    #[test]
    fn first_apply_gives_existing_fields_to_before_first_apply() {
        // skipnonapplied.go: an object written before tracking (no managedFields, a uid) is
        // not tracked by updates; an apply first records its fields.
        let fm = widgets();
        let live = json!({"apiVersion": "example.dev/v1", "kind": "Widget",
            "metadata": {"name": "p", "uid": "u"}, "spec": {"size": "large", "replicas": 5}});
        let mut changed = live.clone();
        changed["spec"]["replicas"] = json!(6);
        let out = fm.update(&live, changed, "ctl", "");
        assert!(out["metadata"].get("managedFields").is_none(), "{out}");
        let applied = json!({"apiVersion": "example.dev/v1", "kind": "Widget",
            "metadata": {"name": "p"}, "spec": {"size": "small"}});
        let err = fm.apply(&live, &applied, "app", false, "").unwrap_err();
        assert_eq!(
            err.message,
            r#"Apply failed with 1 conflict: conflict with "before-first-apply" using example.dev/v1: .spec.size"#
        );
        let out = fm.apply(&live, &applied, "app", true, "").unwrap();
        let entries = out["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(entries.len(), 2, "{entries:#?}");
        assert_eq!(entries[0]["manager"], "app");
        assert_eq!(entries[1]["manager"], "before-first-apply");
        assert_eq!(
            entries[1]["fieldsV1"],
            json!({"f:spec": {".": {}, "f:replicas": {}}})
        );
    }

    #[test]
    fn kubectl_takes_over_client_side_apply() {
        // lastappliedmanager_test.go TestApplyUsingLastAppliedAnnotation, in small: the
        // fields client-side apply recorded, unchanged since, are taken without a conflict;
        // one changed by someone else since still conflicts.
        let fm = widgets();
        let last = r#"{"apiVersion":"example.dev/v1","kind":"Widget","metadata":{"name":"p"},"spec":{"size":"large","replicas":5}}"#;
        let created = fm.update(
            &Value::Null,
            json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                "metadata": {"name": "p", "annotations": {LAST_APPLIED_ANNOTATION: last}},
                "spec": {"size": "large", "replicas": 5}}),
            "kubectl-client-side-apply",
            "",
        );
        let applied = json!({"apiVersion": "example.dev/v1", "kind": "Widget",
            "metadata": {"name": "p"}, "spec": {"size": "large", "replicas": 7}});
        let out = fm.apply(&created, &applied, "kubectl", false, "").unwrap();
        assert_eq!(out["spec"]["replicas"], 7);
        // The annotation follows the new configuration (lastAppliedUpdater).
        let annotation = out["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
            .as_str()
            .unwrap();
        assert_eq!(serde_json::from_str::<Value>(annotation).unwrap(), applied);
        // Another manager's apply gets no such pass.
        assert!(fm.apply(&created, &applied, "other", false, "").is_err());
        // A field changed since the annotation was written still conflicts.
        let mut drifted = created.clone();
        drifted["spec"]["replicas"] = json!(6);
        let drifted = fm.update(&created, drifted, "scaler", "");
        let err = fm
            .apply(&drifted, &applied, "kubectl", false, "")
            .unwrap_err();
        assert!(
            err.message.contains(r#"conflict with "scaler""#),
            "{}",
            err.message
        );
    }

    #[test]
    fn only_new_times_are_no_change() {
        // equality.go IgnoreManagedFieldsTimestampsTransformer: equal objects whose entries
        // differ only in time keep the old times; any other difference keeps the new ones.
        let entry = |t: &str| {
            json!({"manager": "m", "operation": "Apply", "apiVersion": "v1",
            "time": t, "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}})
        };
        let old = json!({"metadata": {"name": "x", "managedFields": [entry("2026-01-01T00:00:00Z")]},
            "data": {"a": "1"}});
        let mut new = old.clone();
        new["metadata"]["managedFields"] = json!([entry("2026-01-01T00:00:05Z")]);
        ignore_managed_fields_timestamps(&mut new, &old);
        assert_eq!(new, old);
        let mut changed = new.clone();
        changed["metadata"]["managedFields"] = json!([entry("2026-01-01T00:00:05Z")]);
        changed["data"]["a"] = json!("2");
        ignore_managed_fields_timestamps(&mut changed, &old);
        assert_eq!(
            changed["metadata"]["managedFields"][0]["time"],
            "2026-01-01T00:00:05Z"
        );
    }
}

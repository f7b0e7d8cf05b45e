//! The string-level hooks behind [`crate::export_strategy!`]: JSON text in, JSON text out, with
//! the SDK's generic behaviour around the plugin's typed hooks. Public so that the same code
//! path can be called natively (tests, the host's native-vs-wasm benchmark).

use crate::bindings::wasm_apiserver::strategy::types as wit;
use crate::field::{ErrorList, ErrorType, FieldError};
use crate::{Attributes, ResourceDescription, Strategy};
use serde_json::Value;
use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Why a mutating hook refused an object (the WIT `hook-error`).
#[derive(Clone, Debug, PartialEq)]
pub enum HookError {
    /// The object could not be read as this kind: 400 `BadRequest`.
    BadRequest(String),
    /// Field errors: 422 `Invalid`.
    Invalid(ErrorList),
}

type HookResult<T> = Result<T, HookError>;

/// What the glue needs from `describe()` on every call, computed once per strategy type:
/// `describe()` may build a large schema, far too costly to rebuild per hook call.
struct Meta {
    has_status: bool,
    selectable_fields: Vec<String>,
}

fn meta<S: Strategy + 'static>() -> Arc<Meta> {
    static CACHE: OnceLock<Mutex<BTreeMap<TypeId, Arc<Meta>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(m) = cache.lock().unwrap().get(&TypeId::of::<S>()) {
        return m.clone();
    }
    let d = S::describe();
    let m = Arc::new(Meta {
        has_status: d.has_status(),
        selectable_fields: d.selectable_fields,
    });
    cache.lock().unwrap().insert(TypeId::of::<S>(), m.clone());
    m
}

/// The selectable fields of `S` (from a cached `describe()`), for [`Strategy::get_attrs`].
pub fn selectable_fields<S: Strategy + 'static>() -> Vec<String> {
    meta::<S>().selectable_fields.clone()
}

fn parse_value(obj: &str) -> HookResult<Value> {
    crate::log::install_panic_hook();
    match serde_json::from_str::<Value>(obj) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(HookError::BadRequest(
            "the object is not a JSON object".into(),
        )),
        Err(e) => Err(HookError::BadRequest(format!("malformed JSON: {e}"))),
    }
}

fn typed<S: Strategy + 'static>(v: Value) -> HookResult<S::Object> {
    serde_json::from_value(v)
        .map_err(|e| HookError::BadRequest(format!("unable to decode the object: {e}")))
}

fn untyped<S: Strategy + 'static>(obj: &S::Object) -> HookResult<Value> {
    serde_json::to_value(obj).map_err(|e| HookError::BadRequest(format!("unable to encode: {e}")))
}

fn to_text(v: &Value) -> String {
    v.to_string()
}

/// Parse for a read-only hook straight into the typed object (no intermediate `Value`); a
/// decode failure becomes an internal field error.
fn read<S: Strategy + 'static>(obj: &str) -> Result<S::Object, ErrorList> {
    crate::log::install_panic_hook();
    serde_json::from_str::<S::Object>(obj).map_err(|e| {
        vec![FieldError {
            error_type: ErrorType::Internal,
            field: String::new(),
            bad_value: None,
            detail: format!("unable to decode the object: {e}"),
        }]
    })
}

/// The plugin's description.
pub fn describe<S: Strategy + 'static>() -> ResourceDescription {
    crate::log::install_panic_hook();
    S::describe()
}

/// `prepare-for-create`: generic part (generation = 1, drop status with a status subresource),
/// then the typed hook.
pub fn prepare_for_create<S: Strategy + 'static>(obj: &str) -> HookResult<String> {
    let mut v = parse_value(obj)?;
    if meta::<S>().has_status {
        v.as_object_mut().map(|m| m.remove("status"));
    }
    if S::TRACKS_GENERATION {
        set_generation(&mut v, 1);
    }
    let mut o = typed::<S>(v)?;
    S::prepare_for_create(&mut o);
    Ok(to_text(&untyped::<S>(&o)?))
}

/// `validate`.
pub fn validate<S: Strategy + 'static>(obj: &str) -> ErrorList {
    match read::<S>(obj) {
        Ok(o) => S::validate(&o),
        Err(e) => e,
    }
}

/// `warnings-on-create`.
pub fn warnings_on_create<S: Strategy + 'static>(obj: &str) -> Vec<String> {
    read::<S>(obj)
        .map(|o| S::warnings_on_create(&o))
        .unwrap_or_default()
}

/// `canonicalize`.
pub fn canonicalize<S: Strategy + 'static>(obj: &str) -> HookResult<String> {
    crate::log::install_panic_hook();
    let mut o: S::Object = serde_json::from_str(obj)
        .map_err(|e| HookError::BadRequest(format!("unable to decode the object: {e}")))?;
    S::canonicalize(&mut o);
    serde_json::to_string(&o).map_err(|e| HookError::BadRequest(format!("unable to encode: {e}")))
}

/// `prepare-for-update`: restore `status` from `old` (status subresource), run the typed hook,
/// then bump `generation` if anything outside metadata/status changed.
pub fn prepare_for_update<S: Strategy + 'static>(new: &str, old: &str) -> HookResult<String> {
    let mut n = parse_value(new)?;
    let o = parse_value(old)?;
    if meta::<S>().has_status {
        copy_key(&o, &mut n, "status");
    }
    let old_typed = typed::<S>(o.clone())?;
    let mut new_typed = typed::<S>(n)?;
    S::prepare_for_update(&mut new_typed, &old_typed);
    let mut n = untyped::<S>(&new_typed)?;
    if S::TRACKS_GENERATION && spec_changed(&n, &untyped::<S>(&old_typed)?) {
        let g = o
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        set_generation(&mut n, g + 1);
    }
    Ok(to_text(&n))
}

/// `validate-update`.
pub fn validate_update<S: Strategy + 'static>(new: &str, old: &str) -> ErrorList {
    match (read::<S>(new), read::<S>(old)) {
        (Ok(n), Ok(o)) => S::validate_update(&n, &o),
        (Err(e), _) | (_, Err(e)) => e,
    }
}

/// `warnings-on-update`.
pub fn warnings_on_update<S: Strategy + 'static>(new: &str, old: &str) -> Vec<String> {
    match (read::<S>(new), read::<S>(old)) {
        (Ok(n), Ok(o)) => S::warnings_on_update(&n, &o),
        _ => Vec::new(),
    }
}

/// `prepare-for-status-update`: the stored object with the request's `status` and
/// `metadata.managedFields`, then the typed hook.
pub fn prepare_for_status_update<S: Strategy + 'static>(
    new: &str,
    old: &str,
) -> HookResult<String> {
    let n = parse_value(new)?;
    let o = parse_value(old)?;
    let mut merged = o.clone();
    match n.get("status") {
        Some(s) => {
            merged["status"] = s.clone();
        }
        None => {
            merged.as_object_mut().map(|m| m.remove("status"));
        }
    }
    if let Some(mf) = n.pointer("/metadata/managedFields") {
        merged["metadata"]["managedFields"] = mf.clone();
    }
    let old_typed = typed::<S>(o)?;
    let mut new_typed = typed::<S>(merged)?;
    S::prepare_for_status_update(&mut new_typed, &old_typed);
    Ok(to_text(&untyped::<S>(&new_typed)?))
}

/// `validate-status-update`.
pub fn validate_status_update<S: Strategy + 'static>(new: &str, old: &str) -> ErrorList {
    match (read::<S>(new), read::<S>(old)) {
        (Ok(n), Ok(o)) => S::validate_status_update(&n, &o),
        (Err(e), _) | (_, Err(e)) => e,
    }
}

/// `warnings-on-status-update`.
pub fn warnings_on_status_update<S: Strategy + 'static>(new: &str, old: &str) -> Vec<String> {
    match (read::<S>(new), read::<S>(old)) {
        (Ok(n), Ok(o)) => S::warnings_on_status_update(&n, &o),
        _ => Vec::new(),
    }
}

/// `check-graceful-delete`. An undecodable object is deleted at once.
pub fn check_graceful_delete<S: Strategy + 'static>(
    obj: &str,
    requested: Option<i64>,
) -> Option<i64> {
    read::<S>(obj)
        .ok()
        .and_then(|o| S::check_graceful_delete(&o, requested))
}

/// `validate-delete`.
pub fn validate_delete<S: Strategy + 'static>(old: &str) -> ErrorList {
    match read::<S>(old) {
        Ok(o) => S::validate_delete(&o),
        Err(e) => e,
    }
}

/// `printer-cells`: JSON text per computed cell.
pub fn printer_cells<S: Strategy + 'static>(obj: &str) -> Vec<String> {
    read::<S>(obj)
        .map(|o| S::printer_cells(&o).iter().map(Value::to_string).collect())
        .unwrap_or_default()
}

/// `get-attrs`.
pub fn get_attrs<S: Strategy + 'static>(obj: &str) -> HookResult<Attributes> {
    Ok(S::get_attrs(&parse_value(obj)?))
}

/// The default `GetAttrs`: labels, and each selectable field read by its dotted path.
pub fn default_attrs(obj: &Value, selectable: &[String]) -> Attributes {
    let labels = obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let fields = selectable
        .iter()
        .map(|path| {
            let ptr = format!("/{}", path.replace('.', "/"));
            let value = match obj.pointer(&ptr) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (path.clone(), value)
        })
        .collect();
    Attributes { labels, fields }
}

fn set_generation(v: &mut Value, g: i64) {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("generation".into(), Value::from(g));
    }
}

fn copy_key(from: &Value, to: &mut Value, key: &str) {
    if let Some(m) = to.as_object_mut() {
        match from.get(key) {
            Some(x) => {
                m.insert(key.into(), x.clone());
            }
            None => {
                m.remove(key);
            }
        }
    }
}

/// Whether anything outside `metadata` and `status` differs (the CRD strategy's rule).
fn spec_changed(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut c = v.clone();
        if let Some(m) = c.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        c
    };
    strip(new) != strip(old)
}

/// Convert field errors to their WIT form.
pub fn into_wit(errs: ErrorList) -> Vec<wit::FieldError> {
    errs.into_iter().map(Into::into).collect()
}

impl From<ErrorType> for wit::ErrorType {
    fn from(t: ErrorType) -> Self {
        match t {
            ErrorType::Required => wit::ErrorType::Required,
            ErrorType::Invalid => wit::ErrorType::Invalid,
            ErrorType::Duplicate => wit::ErrorType::Duplicate,
            ErrorType::NotSupported => wit::ErrorType::NotSupported,
            ErrorType::Forbidden => wit::ErrorType::Forbidden,
            ErrorType::TooLong => wit::ErrorType::TooLong,
            ErrorType::TooMany => wit::ErrorType::TooMany,
            ErrorType::Internal => wit::ErrorType::Internal,
            ErrorType::TypeInvalid => wit::ErrorType::TypeInvalid,
            ErrorType::NotFound => wit::ErrorType::NotFound,
        }
    }
}

impl From<FieldError> for wit::FieldError {
    fn from(e: FieldError) -> Self {
        wit::FieldError {
            type_: e.error_type.into(),
            field: e.field,
            bad_value: e.bad_value.map(|v| v.to_string()),
            detail: e.detail,
        }
    }
}

impl From<HookError> for wit::HookError {
    fn from(e: HookError) -> Self {
        match e {
            HookError::BadRequest(m) => wit::HookError::BadRequest(m),
            HookError::Invalid(errs) => wit::HookError::Invalid(into_wit(errs)),
        }
    }
}

impl From<Attributes> for wit::Attributes {
    fn from(a: Attributes) -> Self {
        wit::Attributes {
            labels: a.labels,
            fields: a.fields,
        }
    }
}

impl From<ResourceDescription> for wit::ResourceDescription {
    fn from(d: ResourceDescription) -> Self {
        wit::ResourceDescription {
            group: d.group,
            version: d.version,
            kind: d.kind,
            list_kind: d.list_kind,
            plural: d.plural,
            singular: d.singular,
            short_names: d.short_names,
            categories: d.categories,
            namespaced: d.namespaced,
            subresources: d.subresources,
            printer_columns: d
                .printer_columns
                .into_iter()
                .map(|c| wit::PrinterColumn {
                    name: c.name,
                    type_: c.type_,
                    format: c.format,
                    description: c.description,
                    priority: c.priority,
                    json_path: c.json_path,
                })
                .collect(),
            selectable_fields: d.selectable_fields,
            openapi_schema: d.openapi_schema.to_string(),
            example: d.example.map(|e| e.to_string()),
        }
    }
}

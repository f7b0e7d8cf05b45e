//! The string-level hooks behind [`crate::export_strategy!`]: JSON text in, JSON text out, with
//! the SDK's generic behaviour around the plugin's typed hooks. Public so that the same code
//! path can be called natively (tests, the host's native-vs-wasm benchmark).

use crate::bindings::wasm_apiserver::strategy::types as wit;
use crate::create_filter;
use crate::field::{ErrorList, ErrorType, FieldError};
use crate::{Attributes, ResourceDescription, Strategy};
use serde::Deserialize;
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

pub(crate) type HookResult<T> = Result<T, HookError>;

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

pub(crate) fn parse_value(obj: &str) -> HookResult<Value> {
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

/// [`typed`] from a borrowed `Value` (no clone of the whole tree).
fn typed_ref<S: Strategy + 'static>(v: &Value) -> HookResult<S::Object> {
    S::Object::deserialize(v)
        .map_err(|e| HookError::BadRequest(format!("unable to decode the object: {e}")))
}

fn untyped<S: Strategy + 'static>(obj: &S::Object) -> HookResult<Value> {
    serde_json::to_value(obj).map_err(|e| HookError::BadRequest(format!("unable to encode: {e}")))
}

/// `serde_json::to_string` (not `Display`, about three times slower).
pub(crate) fn to_text(v: &Value) -> String {
    serde_json::to_string(v).expect("a Value always serializes")
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

/// Encode the typed object straight to JSON text (no intermediate `Value`). `input_len`, the
/// length of the text the object was decoded from, sizes the buffer: growing it from
/// `serde_json`'s default 128 bytes costs several reallocations and copies per call.
fn encode<S: Strategy + 'static>(o: &S::Object, input_len: usize) -> HookResult<String> {
    let mut buf = Vec::with_capacity(input_len + input_len / 2 + 256);
    serde_json::to_writer(&mut buf, o)
        .map_err(|e| HookError::BadRequest(format!("unable to encode: {e}")))?;
    // SAFETY: serde_json writes only valid UTF-8 (its own `to_string` relies on the same).
    Ok(unsafe { String::from_utf8_unchecked(buf) })
}

/// Decode a new object for prepare-for-create with the SDK's generic create behaviour applied:
/// the top-level `status` dropped (status subresource) and `metadata.generation` set to 1
/// ([`Strategy::TRACKS_GENERATION`]). The fast path does this while decoding the text straight
/// into `S::Object` ([`create_filter`]); any failure there falls back to the reference path —
/// parse into a `Value`, edit it, decode it — so results and error messages are those of the
/// reference path.
fn decode_for_create<S: Strategy + 'static>(obj: &str) -> HookResult<S::Object> {
    crate::log::install_panic_hook();
    let m = meta::<S>();
    let filter = create_filter::Filter {
        drop_status: m.has_status,
        set_generation: S::TRACKS_GENERATION,
    };
    match create_filter::decode::<S::Object>(obj, filter) {
        Ok(o) => Ok(o),
        Err(_) => decode_for_create_reference::<S::Object>(obj, filter),
    }
}

/// The reference decode for prepare-for-create: parse into a `Value`, edit it, decode that.
fn decode_for_create_reference<T: serde::de::DeserializeOwned>(
    obj: &str,
    filter: create_filter::Filter,
) -> HookResult<T> {
    let mut v = parse_value(obj)?;
    if filter.drop_status {
        v.as_object_mut().map(|m| m.remove("status"));
    }
    if filter.set_generation {
        set_generation(&mut v, 1);
    }
    serde_json::from_value(v)
        .map_err(|e| HookError::BadRequest(format!("unable to decode the object: {e}")))
}

/// The plugin's description.
pub fn describe<S: Strategy + 'static>() -> ResourceDescription {
    crate::log::install_panic_hook();
    S::describe()
}

/// `prepare-for-create`: generic part (generation = 1, drop status with a status subresource),
/// then the typed hook. Returns the object as JSON text.
///
/// Errors: [`HookError::BadRequest`] when the text is not one JSON object
/// (`malformed JSON: …`, `the object is not a JSON object`) or does not decode as
/// `S::Object` (`unable to decode the object: …`).
pub fn prepare_for_create<S: Strategy + 'static>(obj: &str) -> HookResult<String> {
    let mut o = decode_for_create::<S>(obj)?;
    S::prepare_for_create(&mut o);
    encode::<S>(&o, obj.len())
}

/// What [`create_sequence`] produced (the WIT `create-outcome`).
#[derive(Clone, Debug, PartialEq)]
pub struct CreateOutcome {
    /// The object as JSON text: canonicalized when `errors` is empty, otherwise as
    /// prepare-for-create left it.
    pub object: String,
    /// Validation errors; when not empty, warnings-on-create and canonicalize did not run.
    pub errors: ErrorList,
    /// Warnings for a valid object.
    pub warnings: Vec<String>,
}

/// `create-sequence`: [`prepare_for_create`] → [`validate`] → (only if valid)
/// [`warnings_on_create`] → [`canonicalize`] on one decoded object — one decode, one encode —
/// the order of `rest.BeforeCreate` (k8s.io/apiserver/pkg/registry/rest/create.go) without the
/// host's ObjectMeta validation, which the host runs on the returned object.
///
/// Gives the same object, errors and warnings as the four string-level hooks called in turn
/// (the typed object is not re-encoded between hooks). Errors: those of [`prepare_for_create`];
/// [`HookError::BadRequest`] `unable to encode: …` when the object does not serialize.
pub fn create_sequence<S: Strategy + 'static>(obj: &str) -> HookResult<CreateOutcome> {
    let mut o = decode_for_create::<S>(obj)?;
    S::prepare_for_create(&mut o);
    let errors = S::validate(&o);
    if !errors.is_empty() {
        return Ok(CreateOutcome {
            object: encode::<S>(&o, obj.len())?,
            errors,
            warnings: Vec::new(),
        });
    }
    let warnings = S::warnings_on_create(&o);
    S::canonicalize(&mut o);
    Ok(CreateOutcome {
        object: encode::<S>(&o, obj.len())?,
        errors,
        warnings,
    })
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
    encode::<S>(&o, obj.len())
}

/// `prepare-for-update`: restore `status` from `old` (status subresource), run the typed hook,
/// then bump `generation` if anything outside metadata/status changed.
pub fn prepare_for_update<S: Strategy + 'static>(new: &str, old: &str) -> HookResult<String> {
    let (n, _, _) = prepared_for_update::<S>(new, old)?;
    Ok(to_text(&n))
}

/// What [`prepare_for_update`] and [`update_sequence`] share: `new` prepared (status, the
/// typed hook, generation), with the parsed and the typed `old`.
fn prepared_for_update<S: Strategy + 'static>(
    new: &str,
    old: &str,
) -> HookResult<(Value, Value, S::Object)> {
    let mut n = parse_value(new)?;
    let o = parse_value(old)?;
    if meta::<S>().has_status {
        copy_key(&o, &mut n, "status");
    }
    let old_typed = typed_ref::<S>(&o)?;
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
    Ok((n, o, old_typed))
}

/// What [`update_sequence`] produced.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateOutcome {
    /// The object as JSON text: canonicalized when `errors` is empty, else as prepared.
    pub object: String,
    /// `validate_update`'s errors.
    pub errors: ErrorList,
    /// `warnings_on_update`'s warnings (empty when `errors` is not).
    pub warnings: Vec<String>,
}

/// `update-sequence`: [`prepare_for_update`] → the host's restore
/// ([`wasm_apiserver_apimachinery::meta::restore_from_old`]) → `validate_update` → (if valid)
/// `warnings_on_update` → `canonicalize`, on one decoded pair: the order of `rest.BeforeUpdate`
/// (k8s.io/apiserver/pkg/registry/rest/update.go) without the host's ObjectMeta validation.
/// Gives what the string-level hooks called in turn give, with the host restoring between the
/// first two ([`testing::update`](crate::testing::update) checks it). Errors: those of
/// [`prepare_for_update`].
pub fn update_sequence<S: Strategy + 'static>(new: &str, old: &str) -> HookResult<UpdateOutcome> {
    let (mut n, o, old_typed) = prepared_for_update::<S>(new, old)?;
    wasm_apiserver_apimachinery::meta::restore_from_old(&mut n, &o);
    let mut new_typed = typed::<S>(n)?;
    let errors = S::validate_update(&new_typed, &old_typed);
    if !errors.is_empty() {
        return Ok(UpdateOutcome {
            object: encode::<S>(&new_typed, new.len())?,
            errors,
            warnings: Vec::new(),
        });
    }
    let warnings = S::warnings_on_update(&new_typed, &old_typed);
    S::canonicalize(&mut new_typed);
    Ok(UpdateOutcome {
        object: encode::<S>(&new_typed, new.len())?,
        errors,
        warnings,
    })
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

/// The default `GetAttrs`: labels, and each selectable field read by its dotted path
/// ([`wasm_apiserver_apimachinery::fields::object_attrs`], the reading the host's selectors
/// use too).
pub fn default_attrs(obj: &Value, selectable: &[String]) -> Attributes {
    let (labels, mut fields) = wasm_apiserver_apimachinery::fields::object_attrs(obj, selectable);
    Attributes {
        labels: labels.into_iter().collect(),
        fields: selectable
            .iter()
            .map(|path| (path.clone(), fields.remove(path).unwrap_or_default()))
            .collect(),
    }
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
    match (new.as_object(), old.as_object()) {
        (Some(n), Some(o)) => {
            // Compared in place (maps iterate in key order): no copy of either object.
            fn rest(m: &serde_json::Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
                m.iter().filter(|(k, _)| *k != "metadata" && *k != "status")
            }
            !rest(n).eq(rest(o))
        }
        _ => new != old,
    }
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

impl From<CreateOutcome> for wit::CreateOutcome {
    fn from(o: CreateOutcome) -> Self {
        wit::CreateOutcome {
            object: o.object,
            errors: into_wit(o.errors),
            warnings: o.warnings,
        }
    }
}

impl From<UpdateOutcome> for wit::UpdateOutcome {
    fn from(o: UpdateOutcome) -> Self {
        wit::UpdateOutcome {
            object: o.object,
            errors: into_wit(o.errors),
            warnings: o.warnings,
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

fn wit_columns(columns: Vec<crate::PrinterColumn>) -> Vec<wit::PrinterColumn> {
    columns
        .into_iter()
        .map(|c| wit::PrinterColumn {
            name: c.name,
            type_: c.type_,
            format: c.format,
            description: c.description,
            priority: c.priority,
            json_path: c.json_path,
        })
        .collect()
}

/// The WIT record: `versions` as given, or — when empty — the one storage version made of
/// `version`, `openapi_schema`, `printer_columns` and `selectable_fields`.
impl From<ResourceDescription> for wit::ResourceDescription {
    fn from(d: ResourceDescription) -> Self {
        let versions = if d.versions.is_empty() {
            vec![wit::ServedVersion {
                name: d.version,
                served: true,
                storage: true,
                deprecated: false,
                deprecation_warning: None,
                openapi_schema: d.openapi_schema.to_string(),
                printer_columns: wit_columns(d.printer_columns),
                selectable_fields: d.selectable_fields,
            }]
        } else {
            d.versions
                .into_iter()
                .map(|v| wit::ServedVersion {
                    name: v.name,
                    served: v.served,
                    storage: v.storage,
                    deprecated: v.deprecated,
                    deprecation_warning: v.deprecation_warning,
                    openapi_schema: v.openapi_schema.to_string(),
                    printer_columns: wit_columns(v.printer_columns),
                    selectable_fields: v.selectable_fields,
                })
                .collect()
        };
        wit::ResourceDescription {
            group: d.group,
            versions,
            kind: d.kind,
            list_kind: d.list_kind,
            plural: d.plural,
            singular: d.singular,
            short_names: d.short_names,
            categories: d.categories,
            namespaced: d.namespaced,
            subresources: d.subresources,
            return_deleted_object: d.return_deleted_object,
            example: d.example.map(|e| e.to_string()),
        }
    }
}

/// `convert`: the object as it is when it already has `desired_api_version`, otherwise
/// [`Strategy::convert`] on the parsed object; the result must carry `desired_api_version`.
pub fn convert<S: Strategy + 'static>(obj: &str, desired_api_version: &str) -> HookResult<String> {
    let v = parse_value(obj)?;
    if v.get("apiVersion").and_then(Value::as_str) == Some(desired_api_version) {
        return Ok(obj.to_string());
    }
    let out = S::convert(v, desired_api_version)?;
    Ok(to_text(&out))
}

#[cfg(test)]
mod tests {
    use super::create_filter::{decode, Filter};
    use super::decode_for_create_reference;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Derived {
        kind: String,
        metadata: ObjectMeta,
        #[serde(default)]
        spec: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<Value>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct OptionalMeta {
        metadata: Option<ObjectMeta>,
        status: Option<Value>,
    }

    /// The fast decode either succeeds with the reference's object or fails (and the caller
    /// then takes the reference path); it must succeed on ordinary objects.
    fn same<T>(text: &str, must_be_fast: bool)
    where
        T: serde::de::DeserializeOwned + Serialize + std::fmt::Debug,
    {
        for (drop_status, set_generation) in
            [(true, true), (true, false), (false, true), (false, false)]
        {
            let f = Filter {
                drop_status,
                set_generation,
            };
            let fast = decode::<T>(text, f);
            let reference = decode_for_create_reference::<T>(text, f);
            match (&fast, &reference) {
                (Ok(a), Ok(b)) => assert_eq!(
                    serde_json::to_value(a).unwrap(),
                    serde_json::to_value(b).unwrap(),
                    "{text} {drop_status} {set_generation}"
                ),
                (Ok(a), Err(e)) => panic!("fast path accepted {text} as {a:?}, reference: {e:?}"),
                (Err(e), _) if must_be_fast && reference.is_ok() => {
                    panic!("fast path refused {text}: {e}")
                }
                (Err(_), _) => {}
            }
        }
    }

    #[test]
    fn fast_create_decode_matches_the_value_edit() {
        let ordinary = [
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"d"},"spec":{"containers":[]},"status":{"phase":"x"}}"#,
            r#"{"kind":"Pod","metadata":{"generation":7,"name":"a"},"status":{"phase":"x"},"spec":{"containers":[{"name":"c","status":1}]}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","generation":7,"labels":{"status":"x"}}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a\u0062","generation":7},"st\u0061tus":{"phase":"x"},"spec":{}}"#,
            r#"{"kind":"Pod","metadata":{}}"#,
            r#"{"kind":"Pod","spec":{"containers":[]}}"#,
            r#" {"kind":"Pod","metadata":{"name":"a"}} "#,
        ];
        for text in ordinary {
            same::<Value>(text, true);
            same::<Pod>(text, true);
            same::<Derived>(text, text.contains("metadata"));
            same::<OptionalMeta>(text, true);
        }
        let odd = [
            r#"{"kind":"Pod","metadata":null,"status":null}"#,
            r#"{"kind":"Pod","metadata":{"generation":"x"}}"#,
            r#"{"kind":"Pod","metadata":{"generation":null}}"#,
            r#"{"kind":"Pod","metadata":{"generation":1,"generation":2}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a"},"metadata":{"name":"b"}}"#,
            r#"{"kind":"Pod","status":1,"status":2}"#,
            r#"{"kind":"Pod","metadata":"x"}"#,
            r#"{"kind":"Pod","metadata":[1]}"#,
            r#"{"kind":"Pod","spec":{"containers":"no"}}"#,
            r#"[1,2]"#,
            r#""text""#,
            r#"{"kind":"Pod"} trailing"#,
            r#"{"kind":"Pod""#,
            "",
        ];
        for text in odd {
            same::<Value>(text, false);
            same::<Pod>(text, false);
            same::<Derived>(text, false);
            same::<OptionalMeta>(text, false);
        }
    }
}

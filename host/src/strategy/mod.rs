//! The host-side `Strategy`: what kube-apiserver's registry Store calls on a resource's strategy
//! (`k8s.io/apiserver/pkg/registry/rest/{create,update,delete}.go`, the status strategy,
//! `GetAttrs`, the `TableConvertor`'s computed cells), and the types its hooks use.
//!
//! The one implementation is [`crate::plugin::WasmStrategy`] (a wasm component behind it); the
//! trait keeps the registry independent of wasmtime and testable with a native strategy.
//! [`sequence`] runs hooks in the order the registry Store calls them.

pub mod attached;
pub mod request_version;
pub mod sequence;
pub mod webhook_converter;

use serde_json::Value;

pub use wasm_apiserver_apimachinery::{
    Attributes, ErrorType, FieldError, PrinterColumn, ResourceDescription,
};

/// What the create hooks produced ([`Strategy::create_sequence`]), before the host's ObjectMeta
/// validation.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateOutcome {
    /// After `Canonicalize` when `errors` is empty; otherwise after `PrepareForCreate`.
    pub object: Value,
    /// `Validate`'s errors; when not empty, `WarningsOnCreate` and `Canonicalize` did not run.
    pub errors: Vec<FieldError>,
    /// `WarningsOnCreate`'s warnings (empty when `errors` is not).
    pub warnings: Vec<String>,
}

/// What the update hooks produced ([`Strategy::update_sequence`]), before the host's ObjectMeta
/// update validation.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateOutcome {
    /// After `Canonicalize` when `errors` is empty; otherwise after `PrepareForUpdate` and the
    /// restore.
    pub object: Value,
    /// `ValidateUpdate`'s errors; when not empty, `WarningsOnUpdate` and `Canonicalize` did not
    /// run.
    pub errors: Vec<FieldError>,
    /// `WarningsOnUpdate`'s warnings (empty when `errors` is not).
    pub warnings: Vec<String>,
}

/// [`Strategy::update_sequence`] hook by hook: `PrepareForUpdate` → `restore` →
/// `ValidateUpdate` → (only when valid) `WarningsOnUpdate` → `Canonicalize`.
pub fn update_in_steps(
    s: &(impl Strategy + ?Sized),
    new: &Value,
    old: &Value,
    restore: &dyn Fn(&mut Value),
) -> StrategyResult<UpdateOutcome> {
    let mut prepared = s.prepare_for_update(new, old)?;
    restore(&mut prepared);
    let errors = s.validate_update(&prepared, old)?;
    if !errors.is_empty() {
        return Ok(UpdateOutcome {
            object: prepared,
            errors,
            warnings: Vec::new(),
        });
    }
    let warnings = s.warnings_on_update(&prepared, old)?;
    let object = s.canonicalize(&prepared)?;
    Ok(UpdateOutcome {
        object,
        errors,
        warnings,
    })
}

/// `to` with `from`'s `status` (none when `from` has none): the status split of kube's
/// strategies with a status subresource (apiextensions-apiserver/pkg/registry/customresource/
/// `strategy.go`, `status_strategy.go`), used both ways — an update keeps the stored status, a
/// status update takes the request's. Shared by the host-side strategies (StrategyPlugins,
/// CustomResourceDefinitions, admission policies).
pub fn with_status_of(to: &mut Value, from: &Value) {
    match from.get("status") {
        Some(s) => to["status"] = s.clone(),
        None => {
            if let Some(m) = to.as_object_mut() {
                m.remove("status");
            }
        }
    }
}

/// Why a hook refused an object: the strategy's own answer, not a fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Rejection {
    /// The object could not be read as this kind: 400 `BadRequest`.
    #[error("{0}")]
    BadRequest(String),
    /// Field errors: 422 `Invalid`.
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", "))]
    Invalid(Vec<FieldError>),
}

/// A plugin that failed, as opposed to one that answered "no": answered 500 `InternalError`
/// naming the plugin (or 504 `Timeout` for a deadline), and the server keeps serving.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PluginFault {
    /// The guest trapped (panic, unreachable, …). `message` carries the panic text when the
    /// guest logged one.
    #[error("strategy plugin {plugin:?} failed in {hook}: {message}")]
    Trap {
        /// Plugin name.
        plugin: String,
        /// Hook name, e.g. `prepare-for-create`.
        hook: &'static str,
        /// What happened.
        message: String,
    },
    /// The call ran past its deadline and was interrupted.
    #[error("strategy plugin {plugin:?} exceeded its deadline of {deadline_ms} ms in {hook}")]
    Timeout {
        /// Plugin name.
        plugin: String,
        /// Hook name.
        hook: &'static str,
        /// The configured deadline, milliseconds.
        deadline_ms: u64,
        /// Bytes of JSON the call was given.
        input_bytes: usize,
    },
    /// The guest tried to grow its memory past the cap.
    #[error(
        "strategy plugin {plugin:?} exceeded its memory limit of {limit_bytes} bytes in {hook}"
    )]
    MemoryExceeded {
        /// Plugin name.
        plugin: String,
        /// Hook name.
        hook: &'static str,
        /// The configured cap, bytes.
        limit_bytes: usize,
        /// Bytes of JSON the call was given.
        input_bytes: usize,
    },
    /// The call needed memory while all plugin instances together held their cap: the
    /// server is busy with large objects, not the plugin at fault (429, retried).
    #[error("strategy plugin {plugin:?} could not get memory in {hook}: plugin memory is at its process-wide cap")]
    Overloaded {
        /// Plugin name.
        plugin: String,
        /// Hook name.
        hook: &'static str,
    },
    /// A CRD's conversion webhook failed or answered what cannot be used
    /// ([`webhook_converter`]); `message` is kube's text.
    #[error("{message}")]
    ConversionWebhook {
        /// The CustomResourceDefinition's name.
        crd: String,
        /// What happened, e.g. `conversion webhook for example.com/v1, Kind=Widget failed: …`.
        message: String,
    },
    /// The guest returned something the contract forbids (not a JSON object, a changed
    /// name/namespace/kind, …).
    #[error("strategy plugin {plugin:?} returned an invalid result from {hook}: {reason}")]
    BadOutput {
        /// Plugin name.
        plugin: String,
        /// Hook name.
        hook: &'static str,
        /// What was wrong.
        reason: String,
    },
}

/// The error of a strategy hook.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StrategyError {
    /// The strategy refused the object.
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// The plugin failed.
    #[error(transparent)]
    Fault(#[from] PluginFault),
}

/// Result of a strategy hook.
pub type StrategyResult<T> = Result<T, StrategyError>;

/// A resource's strategy, as the registry Store sees it. Objects are JSON values carrying
/// `apiVersion`, `kind` and `metadata`. Mutating hooks take the object and return the new one;
/// the implementation guarantees the returned object keeps `apiVersion`, `kind`,
/// `metadata.name` and `metadata.namespace` (else [`PluginFault::BadOutput`]).
///
/// Methods follow `rest.RESTCreateStrategy`, `rest.RESTUpdateStrategy`,
/// `rest.RESTGracefulDeleteStrategy` and the status strategy; see `wit/0.2.0/strategy.wit` for when
/// each is called.
pub trait Strategy: Send + Sync {
    /// The plugin's name (its file stem), used in errors, logs and metrics.
    fn name(&self) -> &str;
    /// The resource served.
    fn description(&self) -> &ResourceDescription;
    /// `AllowCreateOnUpdate`.
    fn allow_create_on_update(&self) -> bool;
    /// `AllowUnconditionalUpdate`.
    fn allow_unconditional_update(&self) -> bool;
    /// `PrepareForCreate`.
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value>;
    /// `Validate`.
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>>;
    /// `WarningsOnCreate`.
    fn warnings_on_create(&self, obj: &Value) -> StrategyResult<Vec<String>>;
    /// `Canonicalize`.
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value>;
    /// `PrepareForCreate` → `Validate` → (only when valid) `WarningsOnCreate` → `Canonicalize`:
    /// the hooks of `rest.BeforeCreate` (k8s.io/apiserver/pkg/registry/rest/create.go) in one
    /// call, without the host's ObjectMeta validation ([`sequence::create`] adds it). Errors:
    /// those of the four hooks (a rejection by prepare, a plugin fault); validation errors are
    /// returned in [`CreateOutcome::errors`], not as an error.
    ///
    /// The default calls the four hooks in turn; [`crate::plugin::WasmStrategy`] makes one
    /// call (`create-sequence` in `wit/0.2.0/strategy.wit`) with the same result.
    fn create_sequence(&self, obj: &Value) -> StrategyResult<CreateOutcome> {
        let prepared = self.prepare_for_create(obj)?;
        let errors = self.validate(&prepared)?;
        if !errors.is_empty() {
            return Ok(CreateOutcome {
                object: prepared,
                errors,
                warnings: Vec::new(),
            });
        }
        let warnings = self.warnings_on_create(&prepared)?;
        let object = self.canonicalize(&prepared)?;
        Ok(CreateOutcome {
            object,
            errors,
            warnings,
        })
    }
    /// `PrepareForUpdate`.
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value>;
    /// `ValidateUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>>;
    /// `WarningsOnUpdate`.
    fn warnings_on_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>>;
    /// `PrepareForUpdate` → `restore` (the host's copy of uid, creationTimestamp and the
    /// deletion fields from `old`, `rest.BeforeUpdate` in
    /// k8s.io/apiserver/pkg/registry/rest/update.go) → `ValidateUpdate` → (only when valid)
    /// `WarningsOnUpdate` → `Canonicalize`, without the host's ObjectMeta validation
    /// ([`sequence::update`] adds it). Errors: as [`Strategy::create_sequence`]'s.
    ///
    /// The default is [`update_in_steps`]; [`crate::plugin::WasmStrategy`] makes one call
    /// (`update-sequence` in `wit/0.3.0/strategy.wit`, where the plugin restores) for a 0.3
    /// component, and [`sequence::update`] checks the restore happened.
    fn update_sequence(
        &self,
        new: &Value,
        old: &Value,
        restore: &dyn Fn(&mut Value),
    ) -> StrategyResult<UpdateOutcome> {
        update_in_steps(self, new, old, restore)
    }
    /// The status strategy's `PrepareForUpdate`.
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value>;
    /// The status strategy's `ValidateUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>>;
    /// The status strategy's `WarningsOnUpdate`.
    fn warnings_on_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>>;
    /// `CheckGracefulDelete`: `None` = delete now, `Some(seconds)` = graceful.
    fn check_graceful_delete(
        &self,
        obj: &Value,
        requested: Option<i64>,
    ) -> StrategyResult<Option<i64>>;
    /// Delete validation against the stored object.
    fn validate_delete(&self, old: &Value) -> StrategyResult<Vec<FieldError>>;
    /// Computed printer cells, in the order of the columns with an empty JSONPath.
    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>>;
    /// `GetAttrs`.
    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes>;
    /// Whether stored objects are read through [`Strategy::read_stored`] before they are
    /// answered (a CRD's strategy: its current schema prunes and defaults them). Default: no.
    fn reads_stored(&self) -> bool {
        false
    }

    /// A stored object as it is to be answered (apiextensions-apiserver prunes and defaults
    /// every custom resource it decodes from storage, so a schema change applies to stored
    /// objects on read). Called only when [`Strategy::reads_stored`], on stored objects in the
    /// storage version and on objects just converted to another version (kube prunes by the
    /// target version's schema after a conversion). Errors: the plugin's fault or refusal
    /// ([`PluginFault`]). Default: the object as stored.
    fn read_stored(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    /// Convert `obj` to `desired_api_version` (`group/version`, `v1` in the core group): the
    /// conversion kube-apiserver runs between a request's version and the storage version
    /// (`convert` in `wit/0.2.0/strategy.wit`). An object already in that version is returned
    /// as it is without a call. Errors: the plugin refused it (a [`Rejection`] from the
    /// default, which converts nothing; a plugin's refusal is a [`PluginFault`], as the object
    /// is already stored), failed, or returned something that is not the object in that
    /// version ([`PluginFault`]).
    ///
    /// The default serves one version: it converts only to the object's own.
    fn convert(&self, obj: &Value, desired_api_version: &str) -> StrategyResult<Value> {
        if obj.get("apiVersion").and_then(Value::as_str) == Some(desired_api_version) {
            return Ok(obj.clone());
        }
        Err(StrategyError::Rejected(Rejection::BadRequest(format!(
            "{} serves one version and cannot convert to {desired_api_version}",
            self.name()
        ))))
    }
    /// [`Strategy::convert`] of each of `objs`, in order: what a list in another version
    /// converts (kube's converters take the whole list; a CRD's webhook is sent it in one
    /// review). Errors: the first conversion's. The default converts one by one.
    fn convert_list(
        &self,
        objs: &[&Value],
        desired_api_version: &str,
    ) -> StrategyResult<Vec<Value>> {
        objs.iter()
            .map(|o| self.convert(o, desired_api_version))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_error_messages_match_kubernetes() {
        let e = FieldError {
            error_type: ErrorType::Invalid,
            field: "spec.size".into(),
            bad_value: Some(json!("huge")),
            detail: "must be small".into(),
        };
        assert_eq!(
            e.to_string(),
            "spec.size: Invalid value: \"huge\": must be small"
        );
        let e = FieldError {
            error_type: ErrorType::Required,
            field: "spec.containers".into(),
            bad_value: None,
            detail: String::new(),
        };
        assert_eq!(e.to_string(), "spec.containers: Required value");
        let e = FieldError {
            error_type: ErrorType::NotSupported,
            field: "spec.restartPolicy".into(),
            bad_value: Some(json!("Sometimes")),
            detail: "supported values: \"Always\", \"Never\"".into(),
        };
        assert_eq!(
            e.to_string(),
            "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\""
        );
    }
}

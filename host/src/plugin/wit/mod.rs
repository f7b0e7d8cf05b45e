//! The WIT contract versions this host serves, one module each (`v0_1.rs` for `wit/0.1.0/`,
//! `v0_2.rs` for `wit/0.2.0/`, `v0_3.rs` for `wit/0.3.0/` and its configured world). A component is linked against the bindings of the version it
//! exports; [`Pre`] and [`Instance`] carry which, and [`Guest`] is the one view of an
//! instance's exports in the host's types, whatever its version. A new contract version adds a
//! module, a variant here and an implementation of [`Guest`]; released versions stay as they
//! are, and the host adapts each to the one [`Strategy`](crate::strategy::Strategy) trait.

pub mod admission_v0_1;
pub mod v0_1;
pub mod v0_2;
pub mod v0_3;

use super::host_state::HostState;
use crate::strategy::{Attributes, FieldError, Rejection, ResourceDescription};
use wasmtime::Store;

/// The versions of `wasm-apiserver:strategy` this host implements, oldest first.
pub const VERSIONS: [&str; 3] = [v0_1::VERSION, v0_2::VERSION, v0_3::VERSION];

/// A component linked and ready to instantiate, by contract version.
pub enum Pre {
    /// `wasm-apiserver:strategy@0.1.x`.
    V0_1(v0_1::StrategyPluginPre<HostState>),
    /// `wasm-apiserver:strategy@0.2.x`.
    V0_2(v0_2::StrategyPluginPre<HostState>),
    /// `wasm-apiserver:strategy@0.3.x`, world `strategy-plugin`.
    V0_3(v0_3::StrategyPluginPre<HostState>),
    /// `wasm-apiserver:strategy@0.3.x`, world `configured-strategy-plugin`.
    V0_3Configured(v0_3::ConfiguredStrategyPluginPre<HostState>),
    /// `wasm-apiserver:admission@0.1.x`, world `admission-plugin`.
    Admission(admission_v0_1::AdmissionPluginPre<HostState>),
}

impl Pre {
    /// The engine the component was compiled by.
    pub fn engine(&self) -> &wasmtime::Engine {
        match self {
            Pre::V0_1(p) => p.engine(),
            Pre::V0_2(p) => p.engine(),
            Pre::V0_3(p) => p.engine(),
            Pre::V0_3Configured(p) => p.engine(),
            Pre::Admission(p) => p.engine(),
        }
    }

    /// A new instance in `store`. Errors: instantiation failed (a start function trapped, …).
    pub fn instantiate(&self, store: &mut Store<HostState>) -> wasmtime::Result<Instance> {
        Ok(match self {
            Pre::V0_1(p) => Instance::V0_1(p.instantiate(store)?),
            Pre::V0_2(p) => Instance::V0_2(p.instantiate(store)?),
            Pre::V0_3(p) => Instance::V0_3(p.instantiate(store)?),
            Pre::V0_3Configured(p) => Instance::V0_3Configured(p.instantiate(store)?),
            Pre::Admission(p) => Instance::Admission(p.instantiate(store)?),
        })
    }
}

/// An instantiated component's exports, by contract version.
pub enum Instance {
    /// `wasm-apiserver:strategy@0.1.x`.
    V0_1(v0_1::StrategyPlugin),
    /// `wasm-apiserver:strategy@0.2.x`.
    V0_2(v0_2::StrategyPlugin),
    /// `wasm-apiserver:strategy@0.3.x`, world `strategy-plugin`.
    V0_3(v0_3::StrategyPlugin),
    /// `wasm-apiserver:strategy@0.3.x`, world `configured-strategy-plugin`.
    V0_3Configured(v0_3::ConfiguredStrategyPlugin),
    /// `wasm-apiserver:admission@0.1.x`, world `admission-plugin`.
    Admission(admission_v0_1::AdmissionPlugin),
}

impl Instance {
    /// The strategy export, in the host's types; `None` for a configured component, whose
    /// hooks are reached through a handle ([`Instance::configured`]), and for an admission
    /// policy ([`Instance::admission`]).
    pub fn guest(&self) -> Option<&dyn Guest> {
        match self {
            Instance::V0_1(i) => Some(i.wasm_apiserver_strategy_strategy()),
            Instance::V0_2(i) => Some(i.wasm_apiserver_strategy_strategy()),
            Instance::V0_3(i) => Some(i.wasm_apiserver_strategy_strategy()),
            Instance::V0_3Configured(_) | Instance::Admission(_) => None,
        }
    }

    /// The `admission` export of an admission policy; `None` otherwise.
    pub fn admission(&self) -> Option<&admission_v0_1::Guest> {
        match self {
            Instance::Admission(i) => Some(i.wasm_apiserver_admission_admission()),
            _ => None,
        }
    }

    /// The `configured-strategy` functions of a configured component; `None` otherwise.
    pub fn configured(&self) -> Option<v0_3::GuestConfiguredStrategy<'_>> {
        match self {
            Instance::V0_3Configured(i) => {
                Some(i.wasm_apiserver_strategy_configured().configured_strategy())
            }
            _ => None,
        }
    }
}

/// What `create-sequence` returned, before the host parses the object.
pub struct RawCreateOutcome {
    /// The object as JSON text.
    pub object: String,
    /// Validation errors.
    pub errors: Vec<FieldError>,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// What `update-sequence` returned, before the host parses the object.
pub struct RawUpdateOutcome {
    /// The object as JSON text.
    pub object: String,
    /// Validation errors.
    pub errors: Vec<FieldError>,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// The outer `Result` is the call (a trap, a timeout); the inner one the hook's own answer.
pub type Call<T> = wasmtime::Result<T>;

/// The strategy interface of an instance, in the host's types (every WIT version's records and
/// variants converted). Objects are JSON text; see `wit/0.2.0/strategy.wit` for each hook.
pub trait Guest {
    /// `describe`, converted; `Err` lists what is wrong with the record.
    fn describe(&self, s: &mut Store<HostState>) -> Call<Result<ResourceDescription, Vec<String>>>;
    /// `allow-create-on-update`.
    fn allow_create_on_update(&self, s: &mut Store<HostState>) -> Call<bool>;
    /// `allow-unconditional-update`.
    fn allow_unconditional_update(&self, s: &mut Store<HostState>) -> Call<bool>;
    /// `prepare-for-create`.
    fn prepare_for_create(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
    ) -> Call<Result<String, Rejection>>;
    /// `validate`.
    fn validate(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<FieldError>>;
    /// `warnings-on-create`.
    fn warnings_on_create(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<String>>;
    /// `canonicalize`.
    fn canonicalize(&self, s: &mut Store<HostState>, obj: &str) -> Call<Result<String, Rejection>>;
    /// `create-sequence`.
    fn create_sequence(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
    ) -> Call<Result<RawCreateOutcome, Rejection>>;
    /// `prepare-for-update`.
    fn prepare_for_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Result<String, Rejection>>;
    /// `validate-update`.
    fn validate_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<FieldError>>;
    /// `warnings-on-update`.
    fn warnings_on_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<String>>;
    /// `read` of a configured strategy (0.3); `None` when the component has none.
    fn read(
        &self,
        _s: &mut Store<HostState>,
        _obj: &str,
    ) -> Call<Option<Result<String, Rejection>>> {
        Ok(None)
    }
    /// `update-sequence` (0.3); `None` for a version without it, whose caller runs the steps.
    fn update_sequence(
        &self,
        _s: &mut Store<HostState>,
        _new: &str,
        _old: &str,
    ) -> Call<Option<Result<RawUpdateOutcome, Rejection>>> {
        Ok(None)
    }
    /// `prepare-for-status-update`.
    fn prepare_for_status_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Result<String, Rejection>>;
    /// `validate-status-update`.
    fn validate_status_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<FieldError>>;
    /// `warnings-on-status-update`.
    fn warnings_on_status_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<String>>;
    /// `check-graceful-delete`.
    fn check_graceful_delete(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
        requested: Option<i64>,
    ) -> Call<Option<i64>>;
    /// `validate-delete`.
    fn validate_delete(&self, s: &mut Store<HostState>, old: &str) -> Call<Vec<FieldError>>;
    /// `printer-cells`.
    fn printer_cells(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<String>>;
    /// `get-attrs`.
    fn get_attrs(&self, s: &mut Store<HostState>, obj: &str)
        -> Call<Result<Attributes, Rejection>>;
    /// `convert` (0.2); a 0.1 component serves one version and has none.
    fn convert(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
        desired_api_version: &str,
    ) -> Call<Result<String, Rejection>>;
}

/// What every version's module shares — the `host` import (`log`), the conversions of
/// `hook-error`, `field-error` and `printer-column`, and the [`Guest`] methods of the hooks
/// whose signatures did not change: expanded inside each version's module, where `host`,
/// `types` and the generated `Guest` are that version's.
macro_rules! shared_hooks {
    () => {
        impl host::Host for HostState {
            fn log(&mut self, level: host::LogLevel, message: String) {
                use host::LogLevel;
                let level = match level {
                    LogLevel::Trace => tracing::Level::TRACE,
                    LogLevel::Debug => tracing::Level::DEBUG,
                    LogLevel::Info => tracing::Level::INFO,
                    LogLevel::Warn => tracing::Level::WARN,
                    LogLevel::Error => tracing::Level::ERROR,
                };
                self.log(level, message);
            }
        }

        impl types::Host for HostState {}

        /// `hook-error` → [`Rejection`].
        pub fn rejection(e: types::HookError) -> crate::strategy::Rejection {
            use crate::strategy::Rejection;
            match e {
                types::HookError::BadRequest(m) => Rejection::BadRequest(m),
                types::HookError::Invalid(errs) => {
                    Rejection::Invalid(errs.into_iter().map(field_error).collect())
                }
            }
        }

        /// `field-error`s → [`FieldError`](crate::strategy::FieldError)s.
        pub fn field_errors(errs: Vec<types::FieldError>) -> Vec<crate::strategy::FieldError> {
            errs.into_iter().map(field_error).collect()
        }

        /// One `field-error`.
        pub fn field_error(e: types::FieldError) -> crate::strategy::FieldError {
            use crate::strategy::ErrorType;
            crate::strategy::FieldError {
                error_type: match e.type_ {
                    types::ErrorType::Required => ErrorType::Required,
                    types::ErrorType::Invalid => ErrorType::Invalid,
                    types::ErrorType::Duplicate => ErrorType::Duplicate,
                    types::ErrorType::NotSupported => ErrorType::NotSupported,
                    types::ErrorType::Forbidden => ErrorType::Forbidden,
                    types::ErrorType::TooLong => ErrorType::TooLong,
                    types::ErrorType::TooMany => ErrorType::TooMany,
                    types::ErrorType::Internal => ErrorType::Internal,
                    types::ErrorType::TypeInvalid => ErrorType::TypeInvalid,
                    types::ErrorType::NotFound => ErrorType::NotFound,
                },
                field: e.field,
                // A bad value that is not JSON is kept as a string rather than dropped.
                bad_value: e
                    .bad_value
                    .map(|v| serde_json::from_str(&v).unwrap_or(serde_json::Value::String(v))),
                detail: e.detail,
            }
        }

        // 0.3 converts its records through 0.2's and does not use it.
        #[allow(dead_code)]
        fn printer_column(c: types::PrinterColumn) -> crate::strategy::PrinterColumn {
            crate::strategy::PrinterColumn {
                name: c.name,
                type_: c.type_,
                format: c.format,
                description: c.description,
                priority: c.priority,
                json_path: c.json_path,
            }
        }

        /// The hooks both versions export alike (`describe` through the module's own
        /// `description`).
        macro_rules! shared_guest_methods {
            () => {
                fn describe(
                    &self,
                    s: &mut Store<HostState>,
                ) -> Call<Result<ResourceDescription, Vec<String>>> {
                    Ok(description(self.call_describe(s)?))
                }
                fn allow_create_on_update(&self, s: &mut Store<HostState>) -> Call<bool> {
                    self.call_allow_create_on_update(s)
                }
                fn allow_unconditional_update(&self, s: &mut Store<HostState>) -> Call<bool> {
                    self.call_allow_unconditional_update(s)
                }
                fn prepare_for_create(
                    &self,
                    s: &mut Store<HostState>,
                    obj: &str,
                ) -> Call<Result<String, Rejection>> {
                    Ok(self.call_prepare_for_create(s, obj)?.map_err(rejection))
                }
                fn validate(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<FieldError>> {
                    Ok(field_errors(self.call_validate(s, obj)?))
                }
                fn warnings_on_create(
                    &self,
                    s: &mut Store<HostState>,
                    obj: &str,
                ) -> Call<Vec<String>> {
                    self.call_warnings_on_create(s, obj)
                }
                fn canonicalize(
                    &self,
                    s: &mut Store<HostState>,
                    obj: &str,
                ) -> Call<Result<String, Rejection>> {
                    Ok(self.call_canonicalize(s, obj)?.map_err(rejection))
                }
                fn create_sequence(
                    &self,
                    s: &mut Store<HostState>,
                    obj: &str,
                ) -> Call<Result<RawCreateOutcome, Rejection>> {
                    Ok(self
                        .call_create_sequence(s, obj)?
                        .map(|o| RawCreateOutcome {
                            object: o.object,
                            errors: field_errors(o.errors),
                            warnings: o.warnings,
                        })
                        .map_err(rejection))
                }
                fn prepare_for_update(
                    &self,
                    s: &mut Store<HostState>,
                    new: &str,
                    old: &str,
                ) -> Call<Result<String, Rejection>> {
                    Ok(self
                        .call_prepare_for_update(s, new, old)?
                        .map_err(rejection))
                }
                fn validate_update(
                    &self,
                    s: &mut Store<HostState>,
                    new: &str,
                    old: &str,
                ) -> Call<Vec<FieldError>> {
                    Ok(field_errors(self.call_validate_update(s, new, old)?))
                }
                fn warnings_on_update(
                    &self,
                    s: &mut Store<HostState>,
                    new: &str,
                    old: &str,
                ) -> Call<Vec<String>> {
                    self.call_warnings_on_update(s, new, old)
                }
                fn prepare_for_status_update(
                    &self,
                    s: &mut Store<HostState>,
                    new: &str,
                    old: &str,
                ) -> Call<Result<String, Rejection>> {
                    Ok(self
                        .call_prepare_for_status_update(s, new, old)?
                        .map_err(rejection))
                }
                fn validate_status_update(
                    &self,
                    s: &mut Store<HostState>,
                    new: &str,
                    old: &str,
                ) -> Call<Vec<FieldError>> {
                    Ok(field_errors(self.call_validate_status_update(s, new, old)?))
                }
                fn warnings_on_status_update(
                    &self,
                    s: &mut Store<HostState>,
                    new: &str,
                    old: &str,
                ) -> Call<Vec<String>> {
                    self.call_warnings_on_status_update(s, new, old)
                }
                fn check_graceful_delete(
                    &self,
                    s: &mut Store<HostState>,
                    obj: &str,
                    requested: Option<i64>,
                ) -> Call<Option<i64>> {
                    self.call_check_graceful_delete(s, obj, requested)
                }
                fn validate_delete(
                    &self,
                    s: &mut Store<HostState>,
                    old: &str,
                ) -> Call<Vec<FieldError>> {
                    Ok(field_errors(self.call_validate_delete(s, old)?))
                }
                fn printer_cells(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<String>> {
                    self.call_printer_cells(s, obj)
                }
                fn get_attrs(
                    &self,
                    s: &mut Store<HostState>,
                    obj: &str,
                ) -> Call<Result<Attributes, Rejection>> {
                    Ok(self
                        .call_get_attrs(s, obj)?
                        .map(|a| Attributes {
                            labels: a.labels,
                            fields: a.fields,
                        })
                        .map_err(rejection))
                }
            };
        }
    };
}
pub(crate) use shared_hooks;

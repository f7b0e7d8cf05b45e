//! Configured strategies: one component serving many resources (world
//! `configured-strategy-plugin` of `wit/0.3.0/strategy.wit`). Implement [`ConfiguredStrategy`]
//! for a type built from a configuration (the standard CustomResourceDefinition plugin builds
//! one from each CRD), and export it with [`export_configured_strategy!`](crate::export_configured_strategy).
//!
//! Unlike [`Strategy`](crate::Strategy), hooks take `&self` and untyped JSON values, and the SDK
//! adds no generic behaviour (status split, generation): the configuration decides it. What the
//! SDK does: parse and encode the JSON text, derive `create-sequence` and `update-sequence` from
//! the hooks (the update one with the host's restore between prepare and validate), and answer
//! `convert` to the object's own version without a call.

use crate::field::ErrorList;
use crate::glue::{parse_value, to_text, CreateOutcome, HookError, HookResult, UpdateOutcome};
use crate::{Attributes, ResourceDescription};
use serde_json::Value;

/// A strategy built from a configuration. Every hook must be a pure function of the
/// configuration and its arguments; `Err` from a mutating hook is the WIT `hook-error`.
pub trait ConfiguredStrategy: Sized + 'static {
    /// Build the strategy from `config` (JSON text for the CRD plugin). Called once per
    /// instance and configuration; do the expensive work (schemas, rule compilation) here.
    /// Errors: why the configuration cannot be served.
    fn configure(config: &str) -> Result<Self, String>;

    /// The resource served. Must always return the same value.
    fn describe(&self) -> ResourceDescription;

    /// A stored object as it is answered (the WIT `read`): the CRD plugin prunes and defaults
    /// by the current schema. Default: unchanged.
    fn read(&self, _obj: &mut Value) -> HookResult<()> {
        Ok(())
    }
    /// `PrepareForCreate`.
    fn prepare_for_create(&self, _obj: &mut Value) -> HookResult<()> {
        Ok(())
    }
    /// `Validate` on create.
    fn validate(&self, _obj: &Value) -> ErrorList {
        Vec::new()
    }
    /// `WarningsOnCreate`.
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }
    /// `Canonicalize`; must not change `metadata`.
    fn canonicalize(&self, _obj: &mut Value) -> HookResult<()> {
        Ok(())
    }
    /// `AllowCreateOnUpdate`. Default false.
    fn allow_create_on_update(&self) -> bool {
        false
    }
    /// `AllowUnconditionalUpdate`. Default true.
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    /// `PrepareForUpdate`.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) -> HookResult<()> {
        Ok(())
    }
    /// `ValidateUpdate`.
    fn validate_update(&self, _new: &Value, _old: &Value) -> ErrorList {
        Vec::new()
    }
    /// `WarningsOnUpdate`.
    fn warnings_on_update(&self, _new: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }
    /// The status strategy's `PrepareForUpdate`.
    fn prepare_for_status_update(&self, _new: &mut Value, _old: &Value) -> HookResult<()> {
        Ok(())
    }
    /// The status strategy's `ValidateUpdate`.
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> ErrorList {
        Vec::new()
    }
    /// The status strategy's `WarningsOnUpdate`.
    fn warnings_on_status_update(&self, _new: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }
    /// `CheckGracefulDelete`: `None` deletes at once.
    fn check_graceful_delete(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }
    /// Validation of a delete against the stored object.
    fn validate_delete(&self, _old: &Value) -> ErrorList {
        Vec::new()
    }
    /// Cells of the printer columns with an empty JSONPath, in column order.
    fn printer_cells(&self, _obj: &Value) -> Vec<Value> {
        Vec::new()
    }
    /// `GetAttrs`: labels and the selectable fields of the object's version.
    fn get_attrs(&self, obj: &Value) -> Attributes;
    /// Convert to `desired_api_version`; called only when the object is in another version.
    fn convert(&self, obj: Value, desired_api_version: &str) -> HookResult<Value>;
}

fn mutate(obj: &str, f: impl FnOnce(&mut Value) -> HookResult<()>) -> HookResult<String> {
    let mut v = parse_value(obj)?;
    f(&mut v)?;
    Ok(to_text(&v))
}

fn read(obj: &str) -> Result<Value, ErrorList> {
    parse_value(obj).map_err(|e| match e {
        HookError::Invalid(errs) => errs,
        HookError::BadRequest(m) => vec![crate::FieldError {
            error_type: crate::ErrorType::Internal,
            field: String::new(),
            bad_value: None,
            detail: m,
        }],
    })
}

/// The string-level hooks of a [`ConfiguredStrategy`]: what
/// [`export_configured_strategy!`](crate::export_configured_strategy) exports, callable natively
/// for tests.
pub struct Glue<S>(pub S);

impl<S: ConfiguredStrategy> Glue<S> {
    /// `read`.
    pub fn read(&self, obj: &str) -> HookResult<String> {
        mutate(obj, |v| self.0.read(v))
    }
    /// `prepare-for-create`.
    pub fn prepare_for_create(&self, obj: &str) -> HookResult<String> {
        mutate(obj, |v| self.0.prepare_for_create(v))
    }
    /// `validate`.
    pub fn validate(&self, obj: &str) -> ErrorList {
        read(obj).map_or_else(|e| e, |v| self.0.validate(&v))
    }
    /// `warnings-on-create`.
    pub fn warnings_on_create(&self, obj: &str) -> Vec<String> {
        read(obj).map_or_else(|_| Vec::new(), |v| self.0.warnings_on_create(&v))
    }
    /// `canonicalize`.
    pub fn canonicalize(&self, obj: &str) -> HookResult<String> {
        mutate(obj, |v| self.0.canonicalize(v))
    }
    /// `create-sequence`: the four create hooks on one parsed object.
    pub fn create_sequence(&self, obj: &str) -> HookResult<CreateOutcome> {
        let mut v = parse_value(obj)?;
        self.0.prepare_for_create(&mut v)?;
        let errors = self.0.validate(&v);
        if !errors.is_empty() {
            return Ok(CreateOutcome {
                object: to_text(&v),
                errors,
                warnings: Vec::new(),
            });
        }
        let warnings = self.0.warnings_on_create(&v);
        self.0.canonicalize(&mut v)?;
        Ok(CreateOutcome {
            object: to_text(&v),
            errors,
            warnings,
        })
    }
    /// `prepare-for-update`.
    pub fn prepare_for_update(&self, new: &str, old: &str) -> HookResult<String> {
        let o = parse_value(old)?;
        mutate(new, |v| self.0.prepare_for_update(v, &o))
    }
    /// `validate-update`.
    pub fn validate_update(&self, new: &str, old: &str) -> ErrorList {
        match (read(new), read(old)) {
            (Ok(n), Ok(o)) => self.0.validate_update(&n, &o),
            (Err(e), _) | (_, Err(e)) => e,
        }
    }
    /// `warnings-on-update`.
    pub fn warnings_on_update(&self, new: &str, old: &str) -> Vec<String> {
        match (read(new), read(old)) {
            (Ok(n), Ok(o)) => self.0.warnings_on_update(&n, &o),
            _ => Vec::new(),
        }
    }
    /// `update-sequence`: prepare → the host's restore
    /// ([`wasm_apiserver_apimachinery::meta::restore_from_old`]) → validate → warnings →
    /// canonicalize on one parsed pair.
    pub fn update_sequence(&self, new: &str, old: &str) -> HookResult<UpdateOutcome> {
        let mut n = parse_value(new)?;
        let o = parse_value(old)?;
        self.0.prepare_for_update(&mut n, &o)?;
        wasm_apiserver_apimachinery::meta::restore_from_old(&mut n, &o);
        let errors = self.0.validate_update(&n, &o);
        if !errors.is_empty() {
            return Ok(UpdateOutcome {
                object: to_text(&n),
                errors,
                warnings: Vec::new(),
            });
        }
        let warnings = self.0.warnings_on_update(&n, &o);
        self.0.canonicalize(&mut n)?;
        Ok(UpdateOutcome {
            object: to_text(&n),
            errors,
            warnings,
        })
    }
    /// `prepare-for-status-update`.
    pub fn prepare_for_status_update(&self, new: &str, old: &str) -> HookResult<String> {
        let o = parse_value(old)?;
        mutate(new, |v| self.0.prepare_for_status_update(v, &o))
    }
    /// `validate-status-update`.
    pub fn validate_status_update(&self, new: &str, old: &str) -> ErrorList {
        match (read(new), read(old)) {
            (Ok(n), Ok(o)) => self.0.validate_status_update(&n, &o),
            (Err(e), _) | (_, Err(e)) => e,
        }
    }
    /// `warnings-on-status-update`.
    pub fn warnings_on_status_update(&self, new: &str, old: &str) -> Vec<String> {
        match (read(new), read(old)) {
            (Ok(n), Ok(o)) => self.0.warnings_on_status_update(&n, &o),
            _ => Vec::new(),
        }
    }
    /// `check-graceful-delete`; an unreadable object is deleted at once.
    pub fn check_graceful_delete(&self, obj: &str, requested: Option<i64>) -> Option<i64> {
        read(obj)
            .ok()
            .and_then(|v| self.0.check_graceful_delete(&v, requested))
    }
    /// `validate-delete`.
    pub fn validate_delete(&self, old: &str) -> ErrorList {
        read(old).map_or_else(|e| e, |v| self.0.validate_delete(&v))
    }
    /// `printer-cells`: JSON text per cell.
    pub fn printer_cells(&self, obj: &str) -> Vec<String> {
        read(obj)
            .map(|v| self.0.printer_cells(&v).iter().map(to_text).collect())
            .unwrap_or_default()
    }
    /// `get-attrs`.
    pub fn get_attrs(&self, obj: &str) -> HookResult<Attributes> {
        Ok(self.0.get_attrs(&parse_value(obj)?))
    }
    /// `convert`: the object as it is when already in `desired_api_version`.
    pub fn convert(&self, obj: &str, desired_api_version: &str) -> HookResult<String> {
        let v = parse_value(obj)?;
        if v.get("apiVersion").and_then(Value::as_str) == Some(desired_api_version) {
            return Ok(obj.to_string());
        }
        Ok(to_text(&self.0.convert(v, desired_api_version)?))
    }
}

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "configured-strategy-plugin",
        path: "../../wit/0.3.0",
        pub_export_macro: true,
        export_macro_name: "__export_configured_bindings",
        default_bindings_module: "wasm_apiserver_sdk::configured::bindings",
        with: {
            "wasm-apiserver:strategy/types@0.3.0": crate::bindings::wasm_apiserver::strategy::types,
            "wasm-apiserver:strategy/host@0.3.0": crate::bindings::wasm_apiserver::strategy::host,
        },
    });
}

/// Export a [`ConfiguredStrategy`] as this component's `configured` interface (the
/// `configured-strategy-plugin` world), with the `talc` allocator as
/// [`export_strategy!`](crate::export_strategy) installs it. Expands to nothing on non-wasm
/// targets.
#[macro_export]
macro_rules! export_configured_strategy {
    ($ty:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static __WASM_APISERVER_ALLOC: $crate::__talc::wasm::WasmDynamicTalc =
            $crate::__talc::wasm::new_wasm_dynamic_allocator();

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::bindings::wasm_apiserver::strategy::types as __t;
            use $crate::configured::bindings::exports::wasm_apiserver::strategy::configured as __c;
            use $crate::configured::Glue;
            struct __WasmApiserverExport;
            // A type of the plugin's crate: the generated trait is the SDK's.
            struct __Handle(Glue<$ty>);
            impl __c::Guest for __WasmApiserverExport {
                type ConfiguredStrategy = __Handle;
            }
            impl __c::GuestConfiguredStrategy for __Handle {
                fn configure(config: String) -> Result<__c::ConfiguredStrategy, String> {
                    $crate::log::install_panic_hook();
                    <$ty as $crate::configured::ConfiguredStrategy>::configure(&config)
                        .map(|s| __c::ConfiguredStrategy::new(__Handle(Glue(s))))
                }
                fn describe(&self) -> __t::ResourceDescription {
                    $crate::configured::ConfiguredStrategy::describe(&self.0 .0).into()
                }
                fn read(&self, obj: String) -> Result<String, __t::HookError> {
                    self.0.read(&obj).map_err(Into::into)
                }
                fn prepare_for_create(&self, obj: String) -> Result<String, __t::HookError> {
                    self.0.prepare_for_create(&obj).map_err(Into::into)
                }
                fn validate(&self, obj: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit(self.0.validate(&obj))
                }
                fn warnings_on_create(&self, obj: String) -> Vec<String> {
                    self.0.warnings_on_create(&obj)
                }
                fn canonicalize(&self, obj: String) -> Result<String, __t::HookError> {
                    self.0.canonicalize(&obj).map_err(Into::into)
                }
                fn create_sequence(
                    &self,
                    obj: String,
                ) -> Result<__t::CreateOutcome, __t::HookError> {
                    self.0
                        .create_sequence(&obj)
                        .map(Into::into)
                        .map_err(Into::into)
                }
                fn allow_create_on_update(&self) -> bool {
                    $crate::configured::ConfiguredStrategy::allow_create_on_update(&self.0 .0)
                }
                fn allow_unconditional_update(&self) -> bool {
                    $crate::configured::ConfiguredStrategy::allow_unconditional_update(&self.0 .0)
                }
                fn prepare_for_update(
                    &self,
                    new: String,
                    old: String,
                ) -> Result<String, __t::HookError> {
                    self.0.prepare_for_update(&new, &old).map_err(Into::into)
                }
                fn validate_update(&self, new: String, old: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit(self.0.validate_update(&new, &old))
                }
                fn warnings_on_update(&self, new: String, old: String) -> Vec<String> {
                    self.0.warnings_on_update(&new, &old)
                }
                fn update_sequence(
                    &self,
                    new: String,
                    old: String,
                ) -> Result<__t::UpdateOutcome, __t::HookError> {
                    self.0
                        .update_sequence(&new, &old)
                        .map(Into::into)
                        .map_err(Into::into)
                }
                fn prepare_for_status_update(
                    &self,
                    new: String,
                    old: String,
                ) -> Result<String, __t::HookError> {
                    self.0
                        .prepare_for_status_update(&new, &old)
                        .map_err(Into::into)
                }
                fn validate_status_update(&self, new: String, old: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit(self.0.validate_status_update(&new, &old))
                }
                fn warnings_on_status_update(&self, new: String, old: String) -> Vec<String> {
                    self.0.warnings_on_status_update(&new, &old)
                }
                fn check_graceful_delete(
                    &self,
                    obj: String,
                    requested: Option<i64>,
                ) -> Option<i64> {
                    self.0.check_graceful_delete(&obj, requested)
                }
                fn validate_delete(&self, old: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit(self.0.validate_delete(&old))
                }
                fn printer_cells(&self, obj: String) -> Vec<String> {
                    self.0.printer_cells(&obj)
                }
                fn get_attrs(&self, obj: String) -> Result<__t::Attributes, __t::HookError> {
                    self.0.get_attrs(&obj).map(Into::into).map_err(Into::into)
                }
                fn convert(
                    &self,
                    obj: String,
                    desired_api_version: String,
                ) -> Result<String, __t::HookError> {
                    self.0
                        .convert(&obj, &desired_api_version)
                        .map_err(Into::into)
                }
            }
            $crate::configured::bindings::__export_configured_bindings!(
                __WasmApiserverExport with_types_in $crate::configured::bindings
            );
        };
    };
}

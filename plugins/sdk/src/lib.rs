//! # wasm-apiserver-sdk: write a strategy plugin in ~30 lines
//!
//! A strategy plugin is a WebAssembly component (built with
//! `cargo build --release --target wasm32-wasip2`) that exports the WIT interface in
//! `wit/0.3.0/strategy.wit`. This crate hides the bindings: implement [`Strategy`] for a unit struct,
//! call [`export_strategy!`], and every hook you do not write gets kube-apiserver's default.
//!
//! ```ignore
//! use wasm_apiserver_sdk::prelude::*;
//!
//! pub struct Widgets;
//! impl Strategy for Widgets {
//!     type Object = serde_json::Value;
//!     fn describe() -> ResourceDescription { ResourceDescription::new("example.dev", "v1", "Widget", "widgets") }
//!     fn validate(obj: &Self::Object) -> ErrorList { Vec::new() }
//! }
//! export_strategy!(Widgets);
//! ```
//!
//! What the SDK does around your typed hooks (the generic behaviour of kube-apiserver's
//! custom-resource strategy, `apiextensions-apiserver/pkg/registry/customresource/strategy.go`):
//! - create: `metadata.generation = 1` (if [`Strategy::TRACKS_GENERATION`]) and, when the
//!   resource has a `status` subresource, the client's `status` is dropped;
//! - update: with a `status` subresource, `status` is copied from the stored object; after your
//!   hook, `generation` is bumped when anything outside `metadata` and `status` changed;
//! - status update: the stored object is kept, with only `status` (and `managedFields`) taken
//!   from the request.
//!
//! On create the host makes one call, `create-sequence`, and the SDK runs
//! `prepare_for_create` → `validate` → (if valid) `warnings_on_create` → `canonicalize` on one
//! decoded object ([`glue::create_sequence`]); the result is the same as calling the hooks in
//! turn, which [`testing::create`] checks.
//!
//! Test a plugin natively with `cargo test` through [`testing`], which runs the hooks in the
//! order the host does.

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub use talc as __talc;
pub mod admission;
pub mod configured;
mod create_filter;
pub mod glue;
pub mod log;
pub mod testing;
pub use wasm_apiserver_apimachinery::{duration, field, fields, labels, quantity, validation};

pub use k8s_openapi;
pub use serde_json;

pub use field::{ErrorList, ErrorType, FieldError, Path};
pub use wasm_apiserver_apimachinery::{
    Attributes, GroupResource, PrinterColumn, ResourceDescription, VersionDescription,
};

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "strategy-plugin",
        path: "../../wit/0.3.0",
        pub_export_macro: true,
        export_macro_name: "__export_strategy_bindings",
        default_bindings_module: "wasm_apiserver_sdk::bindings",
    });
}

/// Everything a plugin usually needs in one `use`.
pub mod prelude {
    pub use crate::field::{self, ErrorList, FieldError, Path};
    pub use crate::validation;
    pub use crate::{export_strategy, Attributes, PrinterColumn, ResourceDescription, Strategy};
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::{json, Value};
}

/// A resource's strategy: the kube-apiserver strategy interfaces as static methods on a type.
///
/// Every method but [`Strategy::describe`] has a default; the defaults are kube-apiserver's
/// (no-op hooks, no warnings, no graceful deletion, unconditional updates allowed as for custom
/// resources). Hooks must be pure functions of their arguments (see the WIT docs).
pub trait Strategy: 'static {
    /// The typed object: a `k8s-openapi` type (`Pod`, `ConfigMap`), a struct of your own, or
    /// `serde_json::Value`. Fields unknown to the type are dropped on the way through.
    type Object: serde::Serialize + serde::de::DeserializeOwned;

    /// Whether `metadata.generation` is kept by the SDK (set to 1 on create, bumped on spec
    /// change). kube-apiserver does this for pods and custom resources, not for configmaps.
    const TRACKS_GENERATION: bool = true;

    /// The resource served. Must always return the same value.
    fn describe() -> ResourceDescription;

    /// `PrepareForCreate`.
    fn prepare_for_create(_obj: &mut Self::Object) {}

    /// `Validate` on create.
    fn validate(_obj: &Self::Object) -> ErrorList {
        Vec::new()
    }

    /// `WarningsOnCreate`.
    fn warnings_on_create(_obj: &Self::Object) -> Vec<String> {
        Vec::new()
    }

    /// `Canonicalize`. Must not change `metadata`: the host validates ObjectMeta on the object
    /// the create sequence returns, i.e. after this hook.
    fn canonicalize(_obj: &mut Self::Object) {}

    /// `AllowCreateOnUpdate`. Default false.
    fn allow_create_on_update() -> bool {
        false
    }

    /// `AllowUnconditionalUpdate`. Default true (as for custom resources and most core types).
    fn allow_unconditional_update() -> bool {
        true
    }

    /// `PrepareForUpdate` (after the SDK restored `status` from `old` for a resource with a
    /// status subresource).
    fn prepare_for_update(_new: &mut Self::Object, _old: &Self::Object) {}

    /// `ValidateUpdate`.
    fn validate_update(_new: &Self::Object, _old: &Self::Object) -> ErrorList {
        Vec::new()
    }

    /// `WarningsOnUpdate`.
    fn warnings_on_update(_new: &Self::Object, _old: &Self::Object) -> Vec<String> {
        Vec::new()
    }

    /// The status strategy's `PrepareForUpdate` (after the SDK kept everything but `status`
    /// from `old`).
    fn prepare_for_status_update(_new: &mut Self::Object, _old: &Self::Object) {}

    /// The status strategy's `ValidateUpdate`.
    fn validate_status_update(_new: &Self::Object, _old: &Self::Object) -> ErrorList {
        Vec::new()
    }

    /// The status strategy's `WarningsOnUpdate`.
    fn warnings_on_status_update(_new: &Self::Object, _old: &Self::Object) -> Vec<String> {
        Vec::new()
    }

    /// `CheckGracefulDelete`: `None` deletes at once; `Some(seconds)` deletes gracefully.
    fn check_graceful_delete(_obj: &Self::Object, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Validation of a delete against the stored object; errors refuse the delete (422).
    fn validate_delete(_old: &Self::Object) -> ErrorList {
        Vec::new()
    }

    /// Cells for the printer columns with an empty `json_path`, in column order (computed
    /// columns such as a pod's READY `1/2`). Default: none.
    fn printer_cells(_obj: &Self::Object) -> Vec<serde_json::Value> {
        Vec::new()
    }

    /// Convert an object of this resource to `desired_api_version` (`group/version`), for a
    /// resource served in several versions (`ResourceDescription::versions`): the CRD
    /// conversion webhook's job. Called only when the object is in another version. Keep
    /// `metadata` but labels and annotations as they are (the host restores the rest), and make
    /// A → B → A give back the original (carry what a version cannot hold in annotations).
    /// The default serves one version and refuses.
    fn convert(
        obj: serde_json::Value,
        desired_api_version: &str,
    ) -> Result<serde_json::Value, glue::HookError>
    where
        Self: Sized,
    {
        let from = obj
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        Err(glue::HookError::BadRequest(format!(
            "cannot convert from {from} to {desired_api_version}: this plugin serves one version"
        )))
    }

    /// `GetAttrs`. The default reads `metadata.labels` and each of `describe()`'s selectable
    /// fields from the object's JSON (missing fields read as `""`).
    fn get_attrs(obj: &serde_json::Value) -> Attributes
    where
        Self: Sized,
    {
        glue::default_attrs(obj, &glue::selectable_fields::<Self>())
    }
}

/// Export a [`Strategy`] implementation as this component's `strategy` interface.
///
/// Also installs the `talc` allocator (`talc::wasm::new_wasm_dynamic_allocator`, on
/// `memory.grow`) as the component's global allocator instead of the default `dlmalloc`: a
/// hook decodes a whole object into many small allocations and drops them at the end of the
/// call, so allocation speed is a large part of a hook's cost in wasm (BENCHMARKS.md, "Strategy
/// hooks"). A plugin using this macro must not declare its own. Expands to nothing on non-wasm targets, so the same
/// crate builds natively for `cargo test`.
#[macro_export]
macro_rules! export_strategy {
    ($ty:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static __WASM_APISERVER_ALLOC: $crate::__talc::wasm::WasmDynamicTalc =
            $crate::__talc::wasm::new_wasm_dynamic_allocator();

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::bindings::exports::wasm_apiserver::strategy::strategy as __s;
            use $crate::bindings::wasm_apiserver::strategy::types as __t;
            struct __WasmApiserverExport;
            impl __s::Guest for __WasmApiserverExport {
                fn describe() -> __t::ResourceDescription {
                    $crate::glue::describe::<$ty>().into()
                }
                fn prepare_for_create(obj: String) -> Result<String, __t::HookError> {
                    $crate::glue::prepare_for_create::<$ty>(&obj).map_err(Into::into)
                }
                fn validate(obj: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit($crate::glue::validate::<$ty>(&obj))
                }
                fn warnings_on_create(obj: String) -> Vec<String> {
                    $crate::glue::warnings_on_create::<$ty>(&obj)
                }
                fn canonicalize(obj: String) -> Result<String, __t::HookError> {
                    $crate::glue::canonicalize::<$ty>(&obj).map_err(Into::into)
                }
                fn create_sequence(obj: String) -> Result<__t::CreateOutcome, __t::HookError> {
                    $crate::glue::create_sequence::<$ty>(&obj)
                        .map(Into::into)
                        .map_err(Into::into)
                }
                fn allow_create_on_update() -> bool {
                    <$ty as $crate::Strategy>::allow_create_on_update()
                }
                fn allow_unconditional_update() -> bool {
                    <$ty as $crate::Strategy>::allow_unconditional_update()
                }
                fn prepare_for_update(new: String, old: String) -> Result<String, __t::HookError> {
                    $crate::glue::prepare_for_update::<$ty>(&new, &old).map_err(Into::into)
                }
                fn validate_update(new: String, old: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit($crate::glue::validate_update::<$ty>(&new, &old))
                }
                fn warnings_on_update(new: String, old: String) -> Vec<String> {
                    $crate::glue::warnings_on_update::<$ty>(&new, &old)
                }
                fn update_sequence(
                    new: String,
                    old: String,
                ) -> Result<__t::UpdateOutcome, __t::HookError> {
                    $crate::glue::update_sequence::<$ty>(&new, &old)
                        .map(Into::into)
                        .map_err(Into::into)
                }
                fn prepare_for_status_update(
                    new: String,
                    old: String,
                ) -> Result<String, __t::HookError> {
                    $crate::glue::prepare_for_status_update::<$ty>(&new, &old).map_err(Into::into)
                }
                fn validate_status_update(new: String, old: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit($crate::glue::validate_status_update::<$ty>(&new, &old))
                }
                fn warnings_on_status_update(new: String, old: String) -> Vec<String> {
                    $crate::glue::warnings_on_status_update::<$ty>(&new, &old)
                }
                fn check_graceful_delete(obj: String, requested: Option<i64>) -> Option<i64> {
                    $crate::glue::check_graceful_delete::<$ty>(&obj, requested)
                }
                fn validate_delete(old: String) -> Vec<__t::FieldError> {
                    $crate::glue::into_wit($crate::glue::validate_delete::<$ty>(&old))
                }
                fn printer_cells(obj: String) -> Vec<String> {
                    $crate::glue::printer_cells::<$ty>(&obj)
                }
                fn get_attrs(obj: String) -> Result<__t::Attributes, __t::HookError> {
                    $crate::glue::get_attrs::<$ty>(&obj)
                        .map(Into::into)
                        .map_err(Into::into)
                }
                fn convert(
                    obj: String,
                    desired_api_version: String,
                ) -> Result<String, __t::HookError> {
                    $crate::glue::convert::<$ty>(&obj, &desired_api_version).map_err(Into::into)
                }
            }
            $crate::bindings::__export_strategy_bindings!(
                __WasmApiserverExport with_types_in $crate::bindings
            );
        };
    };
}

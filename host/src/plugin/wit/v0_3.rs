//! The host side of `wasm-apiserver:strategy@0.3.0` (`wit/0.3.0/strategy.wit`): the bindings of
//! its two worlds — `strategy-plugin` (one resource per component, as 0.2, plus the fused
//! `update-sequence`) and `configured-strategy-plugin` (one component, many resources: a
//! `configured-strategy` handle per configuration, [`ConfiguredGuest`]) — and their
//! conversions to the host's [`Strategy`](crate::strategy::Strategy) types.

use super::{v0_2, Call, RawCreateOutcome, RawUpdateOutcome};
use crate::plugin::host_state::HostState;
use crate::strategy::{Attributes, FieldError, Rejection, ResourceDescription};
use wasmtime::component::ResourceAny;
use wasmtime::Store;

mod generated {
    wasmtime::component::bindgen!({
        world: "strategy-plugin",
        path: "../wit/0.3.0",
    });
}

/// The configured world shares `types` and `host` with the plain one.
mod generated_configured {
    wasmtime::component::bindgen!({
        world: "configured-strategy-plugin",
        path: "../wit/0.3.0",
        with: {
            "wasm-apiserver:strategy/types@0.3.0": super::generated::wasm_apiserver::strategy::types,
            "wasm-apiserver:strategy/host@0.3.0": super::generated::wasm_apiserver::strategy::host,
        },
    });
}

pub use generated::exports::wasm_apiserver::strategy::strategy::Guest;
pub use generated::wasm_apiserver::strategy::{host, types};
pub use generated::{StrategyPlugin, StrategyPluginPre};
pub use generated_configured::exports::wasm_apiserver::strategy::configured::GuestConfiguredStrategy;
pub use generated_configured::{ConfiguredStrategyPlugin, ConfiguredStrategyPluginPre};

/// The version of the contract this module implements.
pub const VERSION: &str = "0.3.0";

/// Convert the WIT record: the record is 0.2's, field for field, and so are its rules
/// ([`v0_2::description`]).
pub fn description(d: types::ResourceDescription) -> Result<ResourceDescription, Vec<String>> {
    let column = |c: types::PrinterColumn| v0_2::types::PrinterColumn {
        name: c.name,
        type_: c.type_,
        format: c.format,
        description: c.description,
        priority: c.priority,
        json_path: c.json_path,
    };
    v0_2::description(v0_2::types::ResourceDescription {
        group: d.group,
        versions: d
            .versions
            .into_iter()
            .map(|v| v0_2::types::ServedVersion {
                name: v.name,
                served: v.served,
                storage: v.storage,
                deprecated: v.deprecated,
                deprecation_warning: v.deprecation_warning,
                openapi_schema: v.openapi_schema,
                printer_columns: v.printer_columns.into_iter().map(column).collect(),
                selectable_fields: v.selectable_fields,
            })
            .collect(),
        kind: d.kind,
        list_kind: d.list_kind,
        plural: d.plural,
        singular: d.singular,
        short_names: d.short_names,
        categories: d.categories,
        namespaced: d.namespaced,
        subresources: d.subresources,
        return_deleted_object: d.return_deleted_object,
        example: d.example,
    })
}

super::shared_hooks!();

fn update_outcome(o: types::UpdateOutcome) -> RawUpdateOutcome {
    RawUpdateOutcome {
        object: o.object,
        errors: field_errors(o.errors),
        warnings: o.warnings,
    }
}

impl super::Guest for Guest {
    fn convert(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
        desired_api_version: &str,
    ) -> Call<Result<String, Rejection>> {
        Ok(self
            .call_convert(s, obj, desired_api_version)?
            .map_err(rejection))
    }

    fn update_sequence(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Option<Result<RawUpdateOutcome, Rejection>>> {
        Ok(Some(
            self.call_update_sequence(s, new, old)?
                .map(update_outcome)
                .map_err(rejection),
        ))
    }

    shared_guest_methods!();
}

/// `configure`: a new handle for `config`, or the component's reason for refusing it.
pub fn configure(
    api: &GuestConfiguredStrategy<'_>,
    s: &mut Store<HostState>,
    config: &str,
) -> Call<Result<ResourceAny, String>> {
    api.call_configure(s, config)
}

/// The hooks of one `configured-strategy` handle, as the host's [`super::Guest`].
pub struct ConfiguredGuest<'a> {
    /// The instance's `configured-strategy` functions.
    pub api: GuestConfiguredStrategy<'a>,
    /// The handle built by [`configure`] in the same store.
    pub handle: ResourceAny,
}

impl super::Guest for ConfiguredGuest<'_> {
    fn describe(&self, s: &mut Store<HostState>) -> Call<Result<ResourceDescription, Vec<String>>> {
        Ok(description(self.api.call_describe(s, self.handle)?))
    }
    fn allow_create_on_update(&self, s: &mut Store<HostState>) -> Call<bool> {
        self.api.call_allow_create_on_update(s, self.handle)
    }
    fn read(&self, s: &mut Store<HostState>, obj: &str) -> Call<Option<Result<String, Rejection>>> {
        Ok(Some(
            self.api.call_read(s, self.handle, obj)?.map_err(rejection),
        ))
    }
    fn allow_unconditional_update(&self, s: &mut Store<HostState>) -> Call<bool> {
        self.api.call_allow_unconditional_update(s, self.handle)
    }
    fn prepare_for_create(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
    ) -> Call<Result<String, Rejection>> {
        Ok(self
            .api
            .call_prepare_for_create(s, self.handle, obj)?
            .map_err(rejection))
    }
    fn validate(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<FieldError>> {
        Ok(field_errors(self.api.call_validate(s, self.handle, obj)?))
    }
    fn warnings_on_create(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<String>> {
        self.api.call_warnings_on_create(s, self.handle, obj)
    }
    fn canonicalize(&self, s: &mut Store<HostState>, obj: &str) -> Call<Result<String, Rejection>> {
        Ok(self
            .api
            .call_canonicalize(s, self.handle, obj)?
            .map_err(rejection))
    }
    fn create_sequence(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
    ) -> Call<Result<RawCreateOutcome, Rejection>> {
        Ok(self
            .api
            .call_create_sequence(s, self.handle, obj)?
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
            .api
            .call_prepare_for_update(s, self.handle, new, old)?
            .map_err(rejection))
    }
    fn validate_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<FieldError>> {
        Ok(field_errors(self.api.call_validate_update(
            s,
            self.handle,
            new,
            old,
        )?))
    }
    fn warnings_on_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<String>> {
        self.api.call_warnings_on_update(s, self.handle, new, old)
    }
    fn update_sequence(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Option<Result<RawUpdateOutcome, Rejection>>> {
        Ok(Some(
            self.api
                .call_update_sequence(s, self.handle, new, old)?
                .map(update_outcome)
                .map_err(rejection),
        ))
    }
    fn prepare_for_status_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Result<String, Rejection>> {
        Ok(self
            .api
            .call_prepare_for_status_update(s, self.handle, new, old)?
            .map_err(rejection))
    }
    fn validate_status_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<FieldError>> {
        Ok(field_errors(self.api.call_validate_status_update(
            s,
            self.handle,
            new,
            old,
        )?))
    }
    fn warnings_on_status_update(
        &self,
        s: &mut Store<HostState>,
        new: &str,
        old: &str,
    ) -> Call<Vec<String>> {
        self.api
            .call_warnings_on_status_update(s, self.handle, new, old)
    }
    fn check_graceful_delete(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
        requested: Option<i64>,
    ) -> Call<Option<i64>> {
        self.api
            .call_check_graceful_delete(s, self.handle, obj, requested)
    }
    fn validate_delete(&self, s: &mut Store<HostState>, old: &str) -> Call<Vec<FieldError>> {
        Ok(field_errors(self.api.call_validate_delete(
            s,
            self.handle,
            old,
        )?))
    }
    fn printer_cells(&self, s: &mut Store<HostState>, obj: &str) -> Call<Vec<String>> {
        self.api.call_printer_cells(s, self.handle, obj)
    }
    fn get_attrs(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
    ) -> Call<Result<Attributes, Rejection>> {
        Ok(self
            .api
            .call_get_attrs(s, self.handle, obj)?
            .map(|a| Attributes {
                labels: a.labels,
                fields: a.fields,
            })
            .map_err(rejection))
    }
    fn convert(
        &self,
        s: &mut Store<HostState>,
        obj: &str,
        desired_api_version: &str,
    ) -> Call<Result<String, Rejection>> {
        Ok(self
            .api
            .call_convert(s, self.handle, obj, desired_api_version)?
            .map_err(rejection))
    }
}

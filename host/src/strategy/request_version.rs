//! The hooks of a write in a version other than the storage version, run in that version:
//! apiextensions-apiserver builds one `customResourceStrategy` per served version of a CRD,
//! each with that version's structural schema, CEL rules and status/scale subresources
//! (`apiextensions-apiserver/pkg/apiserver/customresource_handler.go`, `crdInfo.storages`),
//! and a write is decoded, defaulted, pruned and validated in the version it was sent in; the
//! conversion to the storage version happens when it is encoded for etcd.
//!
//! The host's Store hands every hook objects in the storage version (the strategy contract,
//! `wit/0.3.0/strategy.wit`). [`RequestVersionStrategy`] keeps that contract on both sides:
//! it takes the Store's storage-version objects to the request's version through the
//! resource's own conversion (the storage strategy's `convert`: a CRD's `None`, its webhook),
//! runs the hooks of a strategy configured for that version, and takes what they return back
//! to the storage version. Everything else (reads of stored objects, conversion, printer
//! cells, field selection, deletion) is the storage strategy's.
//!
//! Used only where the request version's rules differ from the storage version's (a CRD
//! version with its own schema or subresources); its cost is two conversions per write
//! (three with an update's old object), as the request's object was already converted once.

use std::sync::Arc;

use serde_json::Value;

use super::{
    Attributes, CreateOutcome, FieldError, ResourceDescription, Strategy, StrategyResult,
    UpdateOutcome,
};

/// A storage strategy whose write hooks run in another version; see the module documentation.
pub struct RequestVersionStrategy {
    storage: Arc<dyn Strategy>,
    hooks: Arc<dyn Strategy>,
    api_version: String,
    storage_api_version: String,
}

impl RequestVersionStrategy {
    /// Writes in `api_version` (`<group>/<version>`) run `hooks` (a strategy whose objects are
    /// in that version); everything else is `storage`'s.
    pub fn new(
        storage: Arc<dyn Strategy>,
        hooks: Arc<dyn Strategy>,
        api_version: String,
    ) -> RequestVersionStrategy {
        RequestVersionStrategy {
            storage_api_version: storage.description().api_version(),
            storage,
            hooks,
            api_version,
        }
    }

    /// A storage-version object in the request's version. `read`: as a stored object is
    /// answered in it (kube prunes by the target version's schema after a conversion), for an
    /// update's old object, which the Store read from storage.
    fn to_request(&self, obj: &Value, read: bool) -> StrategyResult<Value> {
        let converted = self.storage.convert(obj, &self.api_version)?;
        if read && self.storage.reads_stored() {
            return self.storage.read_stored(&converted);
        }
        Ok(converted)
    }

    /// What the hooks returned, in the storage version, pruned by its schema as kube's
    /// `schemaCoercingConverter` prunes what it converts
    /// (apiextensions-apiserver/pkg/apiserver/customresource_handler.go): a field only the
    /// request's version holds is not stored.
    fn to_storage(&self, obj: &Value) -> StrategyResult<Value> {
        let converted = self.storage.convert(obj, &self.storage_api_version)?;
        if self.storage.reads_stored() {
            return self.storage.read_stored(&converted);
        }
        Ok(converted)
    }
}

impl Strategy for RequestVersionStrategy {
    fn name(&self) -> &str {
        self.storage.name()
    }
    fn description(&self) -> &ResourceDescription {
        self.storage.description()
    }
    fn allow_create_on_update(&self) -> bool {
        self.storage.allow_create_on_update()
    }
    fn allow_unconditional_update(&self) -> bool {
        self.storage.allow_unconditional_update()
    }
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let prepared = self
            .hooks
            .prepare_for_create(&self.to_request(obj, false)?)?;
        self.to_storage(&prepared)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        self.hooks.validate(&self.to_request(obj, false)?)
    }
    fn warnings_on_create(&self, obj: &Value) -> StrategyResult<Vec<String>> {
        self.hooks.warnings_on_create(&self.to_request(obj, false)?)
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        let done = self.hooks.canonicalize(&self.to_request(obj, false)?)?;
        self.to_storage(&done)
    }
    /// One conversion in, the hooks' one call, one conversion out (none when invalid: the
    /// object is not stored).
    fn create_sequence(&self, obj: &Value) -> StrategyResult<CreateOutcome> {
        let mut out = self.hooks.create_sequence(&self.to_request(obj, false)?)?;
        if out.errors.is_empty() {
            out.object = self.to_storage(&out.object)?;
        }
        Ok(out)
    }
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let prepared = self
            .hooks
            .prepare_for_update(&self.to_request(new, false)?, &self.to_request(old, true)?)?;
        self.to_storage(&prepared)
    }
    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        self.hooks
            .validate_update(&self.to_request(new, false)?, &self.to_request(old, true)?)
    }
    fn warnings_on_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        self.hooks
            .warnings_on_update(&self.to_request(new, false)?, &self.to_request(old, true)?)
    }
    /// As [`RequestVersionStrategy::create_sequence`]; `restore` copies metadata only, which
    /// every version holds alike.
    fn update_sequence(
        &self,
        new: &Value,
        old: &Value,
        restore: &dyn Fn(&mut Value),
    ) -> StrategyResult<UpdateOutcome> {
        let (new, old) = (self.to_request(new, false)?, self.to_request(old, true)?);
        let mut out = self.hooks.update_sequence(&new, &old, restore)?;
        if out.errors.is_empty() {
            out.object = self.to_storage(&out.object)?;
        }
        Ok(out)
    }
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let prepared = self.hooks.prepare_for_status_update(
            &self.to_request(new, false)?,
            &self.to_request(old, true)?,
        )?;
        self.to_storage(&prepared)
    }
    fn validate_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        self.hooks
            .validate_status_update(&self.to_request(new, false)?, &self.to_request(old, true)?)
    }
    fn warnings_on_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        self.hooks
            .warnings_on_status_update(&self.to_request(new, false)?, &self.to_request(old, true)?)
    }
    fn check_graceful_delete(
        &self,
        obj: &Value,
        requested: Option<i64>,
    ) -> StrategyResult<Option<i64>> {
        self.storage.check_graceful_delete(obj, requested)
    }
    fn validate_delete(&self, old: &Value) -> StrategyResult<Vec<FieldError>> {
        self.storage.validate_delete(old)
    }
    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>> {
        self.storage.printer_cells(obj)
    }
    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes> {
        self.storage.get_attrs(obj)
    }
    fn reads_stored(&self) -> bool {
        self.storage.reads_stored()
    }
    fn read_stored(&self, obj: &Value) -> StrategyResult<Value> {
        self.storage.read_stored(obj)
    }
    fn convert(&self, obj: &Value, desired_api_version: &str) -> StrategyResult<Value> {
        self.storage.convert(obj, desired_api_version)
    }
    fn convert_list(
        &self,
        objs: &[&Value],
        desired_api_version: &str,
    ) -> StrategyResult<Vec<Value>> {
        self.storage.convert_list(objs, desired_api_version)
    }
}

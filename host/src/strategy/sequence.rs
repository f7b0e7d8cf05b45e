//! The order in which the registry Store calls a strategy's hooks, as one function per
//! operation, so the server and `wasm-apiserver plugin test` run the exact same sequence.
//!
//! Create follows `rest.BeforeCreate` (k8s.io/apiserver/pkg/registry/rest/create.go):
//! PrepareForCreate → Validate → WarningsOnCreate → Canonicalize. Update follows
//! `rest.BeforeUpdate` (rest/update.go): PrepareForUpdate → ValidateUpdate → WarningsOnUpdate →
//! Canonicalize. The status subresource uses the status strategy in the same places.
//! Host-side metadata handling (system fields, ObjectMeta validation) wraps these in the Store.

use super::{FieldError, Rejection, Strategy, StrategyError, StrategyResult};
use serde_json::Value;

/// What a successful sequence produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The object to write.
    pub object: Value,
    /// Warnings for `Warning: 299` headers.
    pub warnings: Vec<String>,
}

fn check(errs: Vec<FieldError>) -> StrategyResult<()> {
    if errs.is_empty() {
        Ok(())
    } else {
        Err(StrategyError::Rejected(Rejection::Invalid(errs)))
    }
}

/// PrepareForCreate → Validate → WarningsOnCreate → Canonicalize.
/// Errors: [`Rejection::Invalid`] with the validation errors, or a plugin fault.
pub fn create(s: &dyn Strategy, obj: &Value) -> StrategyResult<Outcome> {
    let prepared = s.prepare_for_create(obj)?;
    check(s.validate(&prepared)?)?;
    let warnings = s.warnings_on_create(&prepared)?;
    let object = s.canonicalize(&prepared)?;
    Ok(Outcome { object, warnings })
}

/// PrepareForUpdate → ValidateUpdate → WarningsOnUpdate → Canonicalize.
pub fn update(s: &dyn Strategy, new: &Value, old: &Value) -> StrategyResult<Outcome> {
    let prepared = s.prepare_for_update(new, old)?;
    check(s.validate_update(&prepared, old)?)?;
    let warnings = s.warnings_on_update(&prepared, old)?;
    let object = s.canonicalize(&prepared)?;
    Ok(Outcome { object, warnings })
}

/// The status strategy: PrepareForUpdate → ValidateUpdate → WarningsOnUpdate → Canonicalize.
pub fn update_status(s: &dyn Strategy, new: &Value, old: &Value) -> StrategyResult<Outcome> {
    let prepared = s.prepare_for_status_update(new, old)?;
    check(s.validate_status_update(&prepared, old)?)?;
    let warnings = s.warnings_on_status_update(&prepared, old)?;
    let object = s.canonicalize(&prepared)?;
    Ok(Outcome { object, warnings })
}

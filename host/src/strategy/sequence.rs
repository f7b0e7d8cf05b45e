//! The order in which the registry Store calls a strategy's hooks, as one function per
//! operation, so the server and `wasm-apiserver plugin test` run the exact same sequence.
//!
//! Create follows `rest.BeforeCreate` (k8s.io/apiserver/pkg/registry/rest/create.go):
//! PrepareForCreate → Validate → WarningsOnCreate → Canonicalize. Update follows
//! `rest.BeforeUpdate` (rest/update.go): PrepareForUpdate → ValidateUpdate → WarningsOnUpdate →
//! Canonicalize. The status subresource uses the status strategy in the same places.
//! Host-side metadata handling (system fields, ObjectMeta validation) wraps these in the Store.
//!
//! [`create`] makes one strategy call ([`Strategy::create_sequence`]: one wasm crossing for a
//! plugin) and runs the ObjectMeta validation on the object it returns; [`create_in_steps`] is
//! the same sequence hook by hook, the reference the fused call is tested against.

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

/// Host-side metadata validation run between the strategy's validation and its warnings
/// (`ValidateObjectMetaAccessor` in `rest.BeforeCreate`); [`no_meta_validation`] skips it.
pub type MetaValidation<'a> = &'a dyn Fn(&Value) -> Vec<FieldError>;

/// A [`MetaValidation`] that finds nothing.
pub fn no_meta_validation(_: &Value) -> Vec<FieldError> {
    Vec::new()
}

/// PrepareForCreate → Validate → (only if valid) `meta` → WarningsOnCreate → Canonicalize.
/// Errors: [`Rejection::Invalid`] with the validation errors (the strategy's, else `meta`'s),
/// [`Rejection::BadRequest`] from PrepareForCreate, or a plugin fault.
///
/// One [`Strategy::create_sequence`] call runs the four hooks; `meta` then runs on the object
/// it returns instead of on the prepared one. That is equivalent because Canonicalize must not
/// change metadata (`wit/0.2.0/strategy.wit`), so both objects have the same metadata. When `meta`
/// finds errors this falls back to [`create_in_steps`], which reproduces the exact order of
/// `rest.BeforeCreate` (meta on the prepared object, WarningsOnCreate and Canonicalize not run),
/// so every 422 from `meta` is the hook-by-hook answer. Only a plugin breaking the rule — a
/// Canonicalize that turns invalid metadata into valid metadata — could get a different result.
pub fn create(s: &dyn Strategy, obj: &Value, meta: MetaValidation) -> StrategyResult<Outcome> {
    let out = s.create_sequence(obj)?;
    check(out.errors)?;
    if !meta(&out.object).is_empty() {
        return create_in_steps(s, obj, meta);
    }
    Ok(Outcome {
        object: out.object,
        warnings: out.warnings,
    })
}

/// [`create`] hook by hook — PrepareForCreate, Validate, `meta`, WarningsOnCreate and
/// Canonicalize as separate strategy calls, in the order of `rest.BeforeCreate`
/// (k8s.io/apiserver/pkg/registry/rest/create.go). Same errors as [`create`].
pub fn create_in_steps(
    s: &dyn Strategy,
    obj: &Value,
    meta: MetaValidation,
) -> StrategyResult<Outcome> {
    let prepared = s.prepare_for_create(obj)?;
    check(s.validate(&prepared)?)?;
    check(meta(&prepared))?;
    let warnings = s.warnings_on_create(&prepared)?;
    let object = s.canonicalize(&prepared)?;
    Ok(Outcome { object, warnings })
}

/// PrepareForUpdate → `restore` (the host copies uid, creationTimestamp and the deletion
/// fields back from `old`) → `meta` + ValidateUpdate (errors appended) → WarningsOnUpdate →
/// Canonicalize.
pub fn update(
    s: &dyn Strategy,
    new: &Value,
    old: &Value,
    restore: &dyn Fn(&mut Value),
    meta: MetaValidation,
) -> StrategyResult<Outcome> {
    let mut prepared = s.prepare_for_update(new, old)?;
    restore(&mut prepared);
    let mut errs = meta(&prepared);
    errs.extend(s.validate_update(&prepared, old)?);
    check(errs)?;
    let warnings = s.warnings_on_update(&prepared, old)?;
    let object = s.canonicalize(&prepared)?;
    Ok(Outcome { object, warnings })
}

/// The status strategy, in the places of [`update`].
pub fn update_status(
    s: &dyn Strategy,
    new: &Value,
    old: &Value,
    restore: &dyn Fn(&mut Value),
    meta: MetaValidation,
) -> StrategyResult<Outcome> {
    let mut prepared = s.prepare_for_status_update(new, old)?;
    restore(&mut prepared);
    let mut errs = meta(&prepared);
    errs.extend(s.validate_status_update(&prepared, old)?);
    check(errs)?;
    let warnings = s.warnings_on_status_update(&prepared, old)?;
    let object = s.canonicalize(&prepared)?;
    Ok(Outcome { object, warnings })
}

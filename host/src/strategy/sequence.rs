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
///
/// One [`Strategy::update_sequence`] call runs the hooks and the restore; `meta` then runs on
/// the object it returns. When that object's metadata is not what `restore` makes of it (a
/// plugin that did not restore), or `meta` finds errors, this falls back to
/// [`update_in_steps`], the exact order of `rest.BeforeUpdate`
/// (k8s.io/apiserver/pkg/registry/rest/update.go), as [`create`] does.
pub fn update(
    s: &dyn Strategy,
    new: &Value,
    old: &Value,
    restore: &dyn Fn(&mut Value),
    meta: MetaValidation,
) -> StrategyResult<Outcome> {
    let out = s.update_sequence(new, old, restore)?;
    let mut probe = serde_json::json!({ "metadata": out.object.get("metadata").cloned() });
    restore(&mut probe);
    if probe.get("metadata") != out.object.get("metadata") || !meta(&out.object).is_empty() {
        return update_in_steps(s, new, old, restore, meta);
    }
    check(out.errors)?;
    Ok(Outcome {
        object: out.object,
        warnings: out.warnings,
    })
}

/// [`update`] hook by hook, in the order of `rest.BeforeUpdate`. Same errors as [`update`].
pub fn update_in_steps(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::{Attributes, ResourceDescription, UpdateOutcome};
    use serde_json::json;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A strategy whose fused update may skip the restore (as a plugin breaking the contract
    /// would), counting the separate hook calls.
    struct Fused {
        restores: bool,
        steps: AtomicU32,
        d: ResourceDescription,
    }

    impl Strategy for Fused {
        fn name(&self) -> &str {
            "fused"
        }
        fn description(&self) -> &ResourceDescription {
            &self.d
        }
        fn allow_create_on_update(&self) -> bool {
            false
        }
        fn allow_unconditional_update(&self) -> bool {
            true
        }
        fn prepare_for_create(&self, o: &Value) -> StrategyResult<Value> {
            Ok(o.clone())
        }
        fn validate(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(Vec::new())
        }
        fn canonicalize(&self, o: &Value) -> StrategyResult<Value> {
            Ok(o.clone())
        }
        fn prepare_for_update(&self, n: &Value, _: &Value) -> StrategyResult<Value> {
            self.steps.fetch_add(1, Ordering::Relaxed);
            Ok(n.clone())
        }
        fn validate_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(vec!["from the steps".into()])
        }
        fn update_sequence(
            &self,
            new: &Value,
            old: &Value,
            restore: &dyn Fn(&mut Value),
        ) -> StrategyResult<UpdateOutcome> {
            let mut object = new.clone();
            if self.restores {
                wasm_apiserver_apimachinery::meta::restore_from_old(&mut object, old);
            }
            let _ = restore;
            Ok(UpdateOutcome {
                object,
                errors: Vec::new(),
                warnings: vec!["fused".into()],
            })
        }
        fn prepare_for_status_update(&self, n: &Value, _: &Value) -> StrategyResult<Value> {
            Ok(n.clone())
        }
        fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
            Ok(Vec::new())
        }
        fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
            Ok(None)
        }
        fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
            Ok(Vec::new())
        }
        fn printer_cells(&self, _: &Value) -> StrategyResult<Vec<Value>> {
            Ok(Vec::new())
        }
        fn get_attrs(&self, _: &Value) -> StrategyResult<Attributes> {
            Ok(Attributes::default())
        }
    }

    #[test]
    fn a_fused_update_is_used_only_when_it_restored_and_metadata_is_valid() {
        let old = json!({"metadata": {"name": "a", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"}});
        let new = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
        let restore = |o: &mut Value| wasm_apiserver_apimachinery::meta::restore_from_old(o, &old);
        let strategy = |restores| Fused {
            restores,
            steps: AtomicU32::new(0),
            d: ResourceDescription::new("example.com", "v1", "A", "as"),
        };

        let s = strategy(true);
        let out = update(&s, &new, &old, &restore, &no_meta_validation).unwrap();
        assert_eq!(
            (out.warnings, s.steps.load(Ordering::Relaxed)),
            (vec!["fused".to_string()], 0)
        );
        assert_eq!(out.object["metadata"]["uid"], "u1");

        // Not restored: the steps answer, restored by the host.
        let s = strategy(false);
        let out = update(&s, &new, &old, &restore, &no_meta_validation).unwrap();
        assert_eq!(
            (out.warnings, s.steps.load(Ordering::Relaxed)),
            (vec!["from the steps".to_string()], 1)
        );
        assert_eq!(out.object["metadata"]["uid"], "u1");

        // Metadata the host refuses: the steps, so the 422 is theirs.
        let s = strategy(true);
        let refuse = |_: &Value| {
            vec![FieldError {
                error_type: crate::strategy::ErrorType::Invalid,
                field: "metadata.name".into(),
                bad_value: None,
                detail: "no".into(),
            }]
        };
        assert!(update(&s, &new, &old, &restore, &refuse).is_err());
        assert_eq!(s.steps.load(Ordering::Relaxed), 1);
    }
}

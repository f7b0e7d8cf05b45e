//! Native unit-testing of a plugin with `cargo test`: run a whole create or update through the
//! same string-level hooks the component exports, in the host's order (prepare → validate →
//! warnings → canonicalize). Host-side steps (system metadata, ObjectMeta validation, storage)
//! are not run here; `wasm-apiserver plugin test` runs the real component through the host's
//! runtime for that.

use crate::field::ErrorList;
use crate::glue::{self, HookError};
use crate::Strategy;
use serde_json::Value;

/// What a create or update produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The object after the last mutating hook that ran.
    pub object: Value,
    /// Field errors (empty when valid). When not empty, warnings and canonicalize did not run.
    pub errors: ErrorList,
    /// Warnings.
    pub warnings: Vec<String>,
}

fn finish<S: Strategy + 'static>(
    prepared: Result<String, HookError>,
    validate: impl FnOnce(&str) -> ErrorList,
    warnings: impl FnOnce(&str) -> Vec<String>,
    input: &Value,
) -> Outcome {
    let prepared = match prepared {
        Ok(p) => p,
        Err(HookError::Invalid(errors)) => {
            return Outcome {
                object: input.clone(),
                errors,
                warnings: Vec::new(),
            }
        }
        Err(HookError::BadRequest(m)) => panic!("bad request: {m}"),
    };
    let errors = validate(&prepared);
    let object: Value = serde_json::from_str(&prepared).expect("prepare returned JSON");
    if !errors.is_empty() {
        return Outcome {
            object,
            errors,
            warnings: Vec::new(),
        };
    }
    let warnings = warnings(&prepared);
    let object = match glue::canonicalize::<S>(&prepared) {
        Ok(c) => serde_json::from_str(&c).expect("canonicalize returned JSON"),
        Err(HookError::Invalid(errors)) => {
            return Outcome {
                object,
                errors,
                warnings,
            }
        }
        Err(HookError::BadRequest(m)) => panic!("bad request: {m}"),
    };
    Outcome {
        object,
        errors: Vec::new(),
        warnings,
    }
}

/// Run prepare-for-create → validate → warnings-on-create → canonicalize.
pub fn create<S: Strategy + 'static>(obj: Value) -> Outcome {
    let text = obj.to_string();
    finish::<S>(
        glue::prepare_for_create::<S>(&text),
        |p| glue::validate::<S>(p),
        |p| glue::warnings_on_create::<S>(p),
        &obj,
    )
}

/// Run prepare-for-update → validate-update → warnings-on-update → canonicalize.
pub fn update<S: Strategy + 'static>(new: Value, old: Value) -> Outcome {
    let (n, o) = (new.to_string(), old.to_string());
    finish::<S>(
        glue::prepare_for_update::<S>(&n, &o),
        |p| glue::validate_update::<S>(p, &o),
        |p| glue::warnings_on_update::<S>(p, &o),
        &new,
    )
}

/// Run the status strategy: prepare → validate → warnings → canonicalize.
pub fn update_status<S: Strategy + 'static>(new: Value, old: Value) -> Outcome {
    let (n, o) = (new.to_string(), old.to_string());
    finish::<S>(
        glue::prepare_for_status_update::<S>(&n, &o),
        |p| glue::validate_status_update::<S>(p, &o),
        |p| glue::warnings_on_status_update::<S>(p, &o),
        &new,
    )
}

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

/// Run prepare-for-create → validate → warnings-on-create → canonicalize, hook by hook, and
/// check that the one-call `create-sequence` (what the server calls) gives the same outcome:
/// panics naming both when they differ.
pub fn create<S: Strategy + 'static>(obj: Value) -> Outcome {
    let text = obj.to_string();
    let steps = finish::<S>(
        glue::prepare_for_create::<S>(&text),
        |p| glue::validate::<S>(p),
        |p| glue::warnings_on_create::<S>(p),
        &obj,
    );
    if let Ok(fused) = glue::create_sequence::<S>(&text) {
        let fused = Outcome {
            object: serde_json::from_str(&fused.object).expect("create-sequence returned JSON"),
            errors: fused.errors,
            warnings: fused.warnings,
        };
        assert_eq!(
            fused, steps,
            "create-sequence (left) differs from the four hooks (right)"
        );
    }
    steps
}

/// Run prepare-for-update → (the host's restore of uid, creationTimestamp and the deletion
/// fields) → validate-update → warnings-on-update → canonicalize, hook by hook, and check that
/// the one-call `update-sequence` gives the same outcome: panics naming both when they differ.
pub fn update<S: Strategy + 'static>(new: Value, old: Value) -> Outcome {
    let (n, o) = (new.to_string(), old.to_string());
    let prepared = glue::prepare_for_update::<S>(&n, &o).map(|p| {
        let mut v: Value = serde_json::from_str(&p).expect("prepare returned JSON");
        wasm_apiserver_apimachinery::meta::restore_from_old(&mut v, &old);
        v.to_string()
    });
    let steps = finish::<S>(
        prepared,
        |p| glue::validate_update::<S>(p, &o),
        |p| glue::warnings_on_update::<S>(p, &o),
        &new,
    );
    if let Ok(fused) = glue::update_sequence::<S>(&n, &o) {
        let fused = Outcome {
            object: serde_json::from_str(&fused.object).expect("update-sequence returned JSON"),
            errors: fused.errors,
            warnings: fused.warnings,
        };
        assert_eq!(
            fused, steps,
            "update-sequence (left) differs from the hooks (right)"
        );
    }
    steps
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

/// Run every fixture case (`*.json`) of `dir` natively — the same files
/// `wasm-apiserver plugin test FILE.wasm DIR` runs against the component — and panic with the
/// case's name and what differs on the first mismatch. The format is the host's
/// (`host/src/plugin/fixtures.rs`): `operation` (`create`, `update`, `update-status`,
/// `delete`, `convert`), `object`, `old`, `requestedGracePeriodSeconds`,
/// `desiredApiVersion` (convert: also converted back, which must give `object` again), and
/// `expect` with `object` (a
/// subset), `errors` (`type`, `field`, optional `detail`, in order; omitted = none), `warnings`,
/// `badRequest` and `gracePeriodSeconds`. Returns the number of cases run (panics on none).
pub fn run_fixtures<S: Strategy + 'static>(dir: &str) -> usize {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("fixture directory {dir}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures in {dir}");
    for p in &paths {
        let name = p.display().to_string();
        let case: Value = serde_json::from_str(&std::fs::read_to_string(p).expect("readable"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        run_fixture::<S>(&case, &name);
    }
    paths.len()
}

fn run_fixture<S: Strategy + 'static>(case: &Value, name: &str) {
    let expect = &case["expect"];
    let obj = case["object"].clone();
    let old = case["old"].clone();
    if case["operation"] == "delete" {
        let requested = case["requestedGracePeriodSeconds"].as_i64();
        let grace = glue::check_graceful_delete::<S>(&obj.to_string(), requested);
        if let Some(want) = expect.get("gracePeriodSeconds") {
            assert_eq!(
                serde_json::json!(grace),
                *want,
                "{name}: gracePeriodSeconds"
            );
        }
        return;
    }
    if case["operation"] == "convert" {
        let to = case["desiredApiVersion"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: a convert case needs desiredApiVersion"));
        let from = obj["apiVersion"].as_str().unwrap_or_default();
        let out = glue::convert::<S>(&obj.to_string(), to)
            .unwrap_or_else(|e| panic!("{name}: convert to {to}: {e:?}"));
        let out: Value = serde_json::from_str(&out).expect("convert returns JSON");
        let back = glue::convert::<S>(&out.to_string(), from)
            .unwrap_or_else(|e| panic!("{name}: convert back to {from}: {e:?}"));
        let back: Value = serde_json::from_str(&back).expect("convert returns JSON");
        assert_eq!(
            back, obj,
            "{name}: converting back to {from} changed the object"
        );
        if let Some(o) = expect.get("object") {
            assert!(is_subset(o, &out), "{name}: {o} is not within {out}");
        }
        return;
    }
    if let Some(want) = expect.get("badRequest").and_then(Value::as_str) {
        let text = obj.to_string();
        let got = match case["operation"].as_str() {
            Some("create") => glue::prepare_for_create::<S>(&text).err(),
            Some("update") => glue::prepare_for_update::<S>(&text, &old.to_string()).err(),
            _ => glue::prepare_for_status_update::<S>(&text, &old.to_string()).err(),
        };
        match got {
            Some(HookError::BadRequest(m)) if m.contains(want) => return,
            other => panic!("{name}: expected a bad request containing {want:?}, got {other:?}"),
        }
    }
    let out = match case["operation"].as_str() {
        Some("create") => create::<S>(obj),
        Some("update") => update::<S>(obj, old),
        Some("update-status") => update_status::<S>(obj, old),
        other => panic!("{name}: unknown operation {other:?}"),
    };
    let want: Vec<Value> = expect["errors"].as_array().cloned().unwrap_or_default();
    let got: Vec<Value> = out
        .errors
        .iter()
        .zip(want.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(e, w)| {
            let mut v =
                serde_json::json!({"type": format!("{:?}", e.error_type), "field": e.field});
            if w.is_some_and(|w| w.get("detail").is_some()) {
                v["detail"] = serde_json::json!(e.detail);
            }
            v
        })
        .collect();
    assert_eq!(got, want, "{name}: field errors {:?}", out.errors);
    if let Some(w) = expect.get("warnings") {
        assert_eq!(serde_json::json!(out.warnings), *w, "{name}: warnings");
    }
    if let Some(o) = expect.get("object") {
        assert!(
            is_subset(o, &out.object),
            "{name}: {o} is not within {}",
            out.object
        );
    }
}

/// Whether every key of `want` is in `got` with an equal value (arrays element by element).
fn is_subset(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|gv| is_subset(v, gv))),
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(a, b)| is_subset(a, b))
        }
        _ => want == got,
    }
}

//! `wasm-apiserver plugin test FILE.wasm DIR`: run a plugin over fixture cases and compare with
//! the expected results, through the same runtime and hook order the server uses
//! ([`crate::strategy::sequence`]; a create is the one `create-sequence` call the server makes).
//!
//! A case is one JSON file in DIR (sorted by name):
//! ```json
//! {"operation": "create" | "update" | "update-status" | "delete" | "convert",
//!  "object": {...},                  // the request object (new object for updates)
//!  "old": {...},                     // the stored object: update, update-status
//!  "requestedGracePeriodSeconds": 5, // delete only, optional
//!  "desiredApiVersion": "g/v1",      // convert only: the version to convert to
//!  "expect": {
//!    "object": {...},                // a subset the resulting object must contain
//!    "errors": [{"type": "Required", "field": "spec.containers", "detail": "optional"}],
//!    "warnings": ["..."],
//!    "badRequest": "substring of the 400 message",
//!    "gracePeriodSeconds": 30        // delete: null = immediate
//!  }}
//! ```
//! Omitted `errors` means no errors are expected; omitted `warnings` is not checked. A
//! `convert` case also converts its result back to the object's version and expects the
//! object unchanged: kube requires conversions to round-trip. A
//! mismatch is shown as a unified diff of expected against actual (actual projected onto the
//! keys the expectation names).

use crate::strategy::{sequence, ErrorType, Rejection, Strategy, StrategyError};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// One fixture case as written on disk.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Case {
    /// `create`, `update`, `update-status` or `delete`.
    pub operation: String,
    /// Request object (create, update, delete: the stored object).
    pub object: Value,
    /// Stored object for updates.
    #[serde(default)]
    pub old: Option<Value>,
    /// Delete: the client's gracePeriodSeconds.
    #[serde(default)]
    pub requested_grace_period_seconds: Option<i64>,
    /// Convert: the `apiVersion` to convert to.
    #[serde(default)]
    pub desired_api_version: Option<String>,
    /// What must come out.
    #[serde(default)]
    pub expect: Expect,
}

/// The expectation of a [`Case`].
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expect {
    /// Subset of the resulting object.
    #[serde(default)]
    pub object: Option<Value>,
    /// Expected field errors, in order.
    #[serde(default)]
    pub errors: Option<Vec<ExpectedError>>,
    /// Expected warnings.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
    /// Substring of an expected 400 message.
    #[serde(default)]
    pub bad_request: Option<String>,
    /// Delete: expected grace period (`null` = immediate). Absent = not checked.
    #[serde(default, deserialize_with = "some_value")]
    pub grace_period_seconds: Option<Value>,
}

fn some_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// One expected field error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedError {
    /// `Required`, `Invalid`, …
    #[serde(rename = "type")]
    pub error_type: ErrorType,
    /// Field path.
    pub field: String,
    /// Detail; checked only when given.
    #[serde(default)]
    pub detail: Option<String>,
}

/// The verdict on one case.
#[derive(Debug)]
pub struct CaseResult {
    /// File name.
    pub name: String,
    /// Whether every expectation held.
    pub passed: bool,
    /// Empty on success; a readable diff or error otherwise.
    pub report: String,
}

/// Run every `*.json` case in `dir`. Errors: the directory cannot be read.
pub fn run_dir(s: &dyn Strategy, dir: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("cannot read fixture directory {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files.iter().map(|f| run_file(s, f)).collect())
}

fn run_file(s: &dyn Strategy, file: &Path) -> CaseResult {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let case = std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Case>(&t).map_err(|e| format!("bad fixture: {e}")));
    match case {
        Ok(case) => run_case(s, &name, &case),
        Err(report) => CaseResult {
            name,
            passed: false,
            report,
        },
    }
}

/// Run one case.
pub fn run_case(s: &dyn Strategy, name: &str, case: &Case) -> CaseResult {
    let fail = |report: String| CaseResult {
        name: name.to_string(),
        passed: false,
        report,
    };
    let old = || case.old.clone().unwrap_or(Value::Null);
    let result = match case.operation.as_str() {
        "create" => sequence::create(s, &case.object, &sequence::no_meta_validation),
        "update" => sequence::update(
            s,
            &case.object,
            &old(),
            &|_| {},
            &sequence::no_meta_validation,
        ),
        "update-status" => sequence::update_status(
            s,
            &case.object,
            &old(),
            &|_| {},
            &sequence::no_meta_validation,
        ),
        "delete" => {
            return match s.check_graceful_delete(&case.object, case.requested_grace_period_seconds)
            {
                Err(e) => fail(e.to_string()),
                Ok(grace) => match &case.expect.grace_period_seconds {
                    Some(want) if *want != json!(grace) => fail(diff(want, &json!(grace))),
                    _ => CaseResult {
                        name: name.into(),
                        passed: true,
                        report: String::new(),
                    },
                },
            }
        }
        "convert" => {
            let Some(to) = &case.desired_api_version else {
                return fail("a convert case needs desiredApiVersion".into());
            };
            let from = case
                .object
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            match s.convert(&case.object, to) {
                Ok(out) => match s.convert(&out, from) {
                    // Round trip: A → B → A gives A back.
                    Ok(back) if back != case.object => {
                        return fail(format!(
                            "converting the result back to {from} changed the object:\n{}",
                            diff(&case.object, &back)
                        ))
                    }
                    Ok(_) => Ok(sequence::Outcome {
                        object: out,
                        warnings: Vec::new(),
                    }),
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            }
        }
        other => {
            return fail(format!(
                "unknown operation {other:?} (create, update, update-status, delete, convert)"
            ))
        }
    };
    let (object, errors, warnings) = match result {
        Ok(out) => (Some(out.object), Vec::new(), out.warnings),
        Err(StrategyError::Rejected(Rejection::Invalid(errs))) => (None, errs, Vec::new()),
        Err(StrategyError::Rejected(Rejection::BadRequest(m))) => {
            return match &case.expect.bad_request {
                Some(want) if m.contains(want.as_str()) => CaseResult {
                    name: name.into(),
                    passed: true,
                    report: String::new(),
                },
                _ => fail(format!("400 BadRequest: {m}")),
            };
        }
        Err(StrategyError::Fault(f)) => return fail(f.to_string()),
    };
    let mut expected = Map::new();
    let mut actual = Map::new();
    if let Some(want) = &case.expect.bad_request {
        expected.insert("badRequest".into(), json!(want));
        actual.insert("badRequest".into(), Value::Null);
    }
    let want_errors = case.expect.errors.as_deref().unwrap_or(&[]);
    expected.insert(
        "errors".into(),
        Value::Array(
            want_errors
                .iter()
                .map(|e| {
                    let mut m = json!({"type": e.error_type, "field": e.field});
                    if let Some(d) = &e.detail {
                        m["detail"] = json!(d);
                    }
                    m
                })
                .collect(),
        ),
    );
    actual.insert(
        "errors".into(),
        Value::Array(
            errors
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let mut m = json!({"type": e.error_type, "field": e.field});
                    if want_errors.get(i).is_some_and(|w| w.detail.is_some()) {
                        m["detail"] = json!(e.detail);
                    }
                    m
                })
                .collect(),
        ),
    );
    if let Some(w) = &case.expect.warnings {
        expected.insert("warnings".into(), json!(w));
        actual.insert("warnings".into(), json!(warnings));
    }
    if let Some(want) = &case.expect.object {
        expected.insert("object".into(), want.clone());
        actual.insert(
            "object".into(),
            object.as_ref().map_or(Value::Null, |o| project(o, want)),
        );
    }
    let (expected, actual) = (Value::Object(expected), Value::Object(actual));
    if expected == actual {
        CaseResult {
            name: name.into(),
            passed: true,
            report: String::new(),
        }
    } else {
        fail(diff(&expected, &actual))
    }
}

/// `actual` restricted to the keys `shape` names (recursively; arrays element by element).
fn project(actual: &Value, shape: &Value) -> Value {
    match (actual, shape) {
        (Value::Object(a), Value::Object(s)) => Value::Object(
            s.iter()
                .filter_map(|(k, sv)| a.get(k).map(|av| (k.clone(), project(av, sv))))
                .collect(),
        ),
        (Value::Array(a), Value::Array(s)) if a.len() == s.len() => {
            Value::Array(a.iter().zip(s).map(|(av, sv)| project(av, sv)).collect())
        }
        _ => actual.clone(),
    }
}

fn diff(expected: &Value, actual: &Value) -> String {
    let e = serde_json::to_string_pretty(expected).unwrap_or_default() + "\n";
    let a = serde_json::to_string_pretty(actual).unwrap_or_default() + "\n";
    similar::TextDiff::from_lines(&e, &a)
        .unified_diff()
        .header("expected", "actual")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_keeps_only_named_keys() {
        let actual = json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [{"x": 1, "y": 2}]});
        let shape = json!({"b": {"c": 0}, "l": [{"x": 0}]});
        assert_eq!(
            project(&actual, &shape),
            json!({"b": {"c": 2}, "l": [{"x": 1}]})
        );
    }

    #[test]
    fn diff_is_unified() {
        let d = diff(&json!({"a": 1}), &json!({"a": 2}));
        assert!(
            d.contains("-  \"a\": 1") && d.contains("+  \"a\": 2"),
            "{d}"
        );
    }
}

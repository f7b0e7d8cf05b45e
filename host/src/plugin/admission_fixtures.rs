//! `wasm-apiserver plugin test POLICY.wasm DIR` for an admission policy component: run the
//! policy over fixture cases offline, through the same runtime and call the server makes
//! (`validate` or `mutate` with kube's `AdmissionRequest`, the settings, context reads), and
//! compare with the expected answer.
//!
//! A case is one JSON file in DIR (sorted by name):
//! ```json
//! {"operation": "CREATE" | "UPDATE" | "DELETE",
//!  "resource": {"group": "", "version": "v1", "resource": "pods"}, // default: from `object`
//!  "object": {...},                 // the new object (absent for DELETE)
//!  "oldObject": {...},              // UPDATE, DELETE
//!  "subResource": "",               // optional
//!  "userInfo": {"username": "…"},   // optional
//!  "dryRun": false,                 // optional
//!  "settings": {...},               // the AdmissionPlugin's spec.settings (default {})
//!  "context": {"configmaps": [{...}], "deployments.apps": [{...}]}, // what reads see
//!  "expect": {
//!    "allowed": true,
//!    "message": "substring of the denial's message",
//!    "code": 403,                   // the denial's code as the server answers it
//!    "warnings": ["..."],
//!    "auditAnnotations": {"key": "value"},
//!    "object": {...}                // a subset the mutated object must contain
//!  }}
//! ```
//! `context` is keyed by `resource` or `resource.group`; a read of a resource the policy does
//! not declare is refused as the server refuses it, and a list honours its namespace and label
//! selector. The request's `kind`, `namespace` and `name` come from `object` (else
//! `oldObject`); the `resource` defaults to the kind lower-cased with an `s`. Omitted
//! expectations are not checked; `allowed` is true when omitted.

use super::admission_plugin::WasmAdmissionPlugin;
use super::context_reads::{ContextReads, GroupVersionResource, ReadError};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasm_apiserver_apimachinery::labels::LabelSelector;

/// One fixture case as written on disk.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdmissionCase {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    #[serde(default)]
    pub resource: Option<Value>,
    #[serde(default)]
    pub object: Option<Value>,
    #[serde(default)]
    pub old_object: Option<Value>,
    #[serde(default)]
    pub sub_resource: String,
    #[serde(default)]
    pub user_info: Option<Value>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub settings: Option<Value>,
    /// Objects by `resource[.group]`.
    #[serde(default)]
    pub context: BTreeMap<String, Vec<Value>>,
    #[serde(default)]
    pub expect: AdmissionExpect,
}

/// The expectation of an [`AdmissionCase`].
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdmissionExpect {
    #[serde(default)]
    pub allowed: Option<bool>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub code: Option<u16>,
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
    #[serde(default)]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub object: Option<Value>,
}

/// The outcome of one case.
#[derive(Debug)]
pub struct AdmissionCaseResult {
    pub name: String,
    pub passed: bool,
    /// What differed (empty when passed).
    pub report: String,
}

/// The fixture objects a case's reads see, refused outside the policy's declared reads.
struct FixtureReads {
    declared: Vec<GroupVersionResource>,
    objects: BTreeMap<String, Vec<Value>>,
}

impl FixtureReads {
    fn objects(&self, gvr: &GroupVersionResource) -> Result<&[Value], ReadError> {
        if !self
            .declared
            .iter()
            .any(|d| d.group == gvr.group && d.resource == gvr.resource)
        {
            return Err(ReadError::Forbidden(format!(
                "the policy does not declare reading {gvr}"
            )));
        }
        let key = match gvr.group.as_str() {
            "" => gvr.resource.clone(),
            g => format!("{}.{g}", gvr.resource),
        };
        Ok(self.objects.get(&key).map(Vec::as_slice).unwrap_or(&[]))
    }
}

fn meta<'a>(o: &'a Value, key: &str) -> &'a str {
    o["metadata"][key].as_str().unwrap_or("")
}

impl ContextReads for FixtureReads {
    fn get(
        &self,
        gvr: &GroupVersionResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<String>, ReadError> {
        Ok(self
            .objects(gvr)?
            .iter()
            .find(|o| meta(o, "namespace") == namespace && meta(o, "name") == name)
            .map(Value::to_string))
    }

    fn list(
        &self,
        gvr: &GroupVersionResource,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<String>, ReadError> {
        let selector = LabelSelector::parse(label_selector)
            .map_err(|e| ReadError::Invalid(format!("label selector {label_selector:?}: {e:?}")))?;
        Ok(self
            .objects(gvr)?
            .iter()
            .filter(|o| namespace.is_empty() || meta(o, "namespace") == namespace)
            .filter(|o| {
                let labels: BTreeMap<String, String> = o["metadata"]["labels"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                            .collect()
                    })
                    .unwrap_or_default();
                selector.matches(&labels)
            })
            .map(Value::to_string)
            .collect())
    }
}

/// kube's `AdmissionRequest` for `case`.
fn request(case: &AdmissionCase) -> Value {
    let obj = case
        .object
        .as_ref()
        .or(case.old_object.as_ref())
        .cloned()
        .unwrap_or(Value::Null);
    let api_version = obj["apiVersion"].as_str().unwrap_or("v1");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = obj["kind"].as_str().unwrap_or("");
    let resource = case.resource.clone().unwrap_or_else(|| {
        json!({"group": group, "version": version, "resource": format!("{}s", kind.to_lowercase())})
    });
    let kind = json!({"group": resource["group"], "version": resource["version"], "kind": kind});
    json!({
        "uid": "fixture", "kind": kind, "resource": resource,
        "subResource": case.sub_resource, "requestKind": kind, "requestResource": resource,
        "requestSubResource": case.sub_resource,
        "name": meta(&obj, "name"), "namespace": meta(&obj, "namespace"),
        "operation": case.operation,
        "userInfo": case.user_info.clone().unwrap_or_else(|| json!({"username": "fixture"})),
        "object": case.object, "oldObject": case.old_object,
        "dryRun": case.dry_run, "options": null,
    })
}

/// Whether `actual` contains `expected` (objects by key, everything else equal).
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| contains(av, v))),
        _ => actual == expected,
    }
}

/// Run one case.
pub fn run_case(
    policy: &WasmAdmissionPlugin,
    name: &str,
    case: &AdmissionCase,
) -> AdmissionCaseResult {
    let reads = Arc::new(FixtureReads {
        declared: policy.description().context_reads.clone(),
        objects: case.context.clone(),
    });
    let settings = case
        .settings
        .clone()
        .unwrap_or_else(|| json!({}))
        .to_string();
    let mutating = policy.description().mutating;
    let mut problems = Vec::new();
    match policy.validate_settings(&settings) {
        Ok(Ok(())) => {}
        Ok(Err(m)) => problems.push(format!("the policy refuses the settings: {m}")),
        Err(e) => problems.push(format!("validate-settings failed: {e}")),
    }
    if problems.is_empty() {
        match policy.admit(mutating, &request(case).to_string(), &settings, reads) {
            Err(e) => problems.push(format!("the call failed: {e}")),
            Ok(r) => {
                let e = &case.expect;
                let allowed = e.allowed.unwrap_or(true);
                if r.allowed != allowed {
                    problems.push(format!(
                        "allowed: expected {allowed}, got {} ({:?})",
                        r.allowed, r.denial
                    ));
                }
                let (code, message) = match &r.denial {
                    Some(d) => (d.code, d.message.clone()),
                    None => (0, String::new()),
                };
                if let Some(m) = &e.message {
                    if !message.contains(m.as_str()) {
                        problems.push(format!(
                            "message: expected it to contain {m:?}, got {message:?}"
                        ));
                    }
                }
                // As the server answers it: 0 is 403, a code below 400 is 400.
                let answered = match code {
                    0 => 403,
                    c if c < 400 => 400,
                    c => c,
                };
                if let Some(c) = e.code {
                    if !r.allowed && answered != c {
                        problems.push(format!("code: expected {c}, got {answered}"));
                    }
                }
                if let Some(w) = &e.warnings {
                    if &r.warnings != w {
                        problems.push(format!("warnings: expected {w:?}, got {:?}", r.warnings));
                    }
                }
                if let Some(a) = &e.audit_annotations {
                    let got: BTreeMap<String, String> =
                        r.audit_annotations.iter().cloned().collect();
                    if &got != a {
                        problems.push(format!("auditAnnotations: expected {a:?}, got {got:?}"));
                    }
                }
                if let Some(o) = &e.object {
                    let mutated = r
                        .mutated_object
                        .as_deref()
                        .and_then(|m| serde_json::from_str::<Value>(m).ok())
                        .or_else(|| case.object.clone())
                        .unwrap_or(Value::Null);
                    if !contains(&mutated, o) {
                        problems.push(format!(
                            "object: expected it to contain\n{}\ngot\n{}",
                            serde_json::to_string_pretty(o).unwrap_or_default(),
                            serde_json::to_string_pretty(&mutated).unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    AdmissionCaseResult {
        name: name.to_string(),
        passed: problems.is_empty(),
        report: problems.join("\n"),
    }
}

/// Run every `*.json` case in `dir`, sorted by name. Errors: `dir` cannot be read; a file
/// that does not parse is a failed case.
pub fn run_dir(
    policy: &WasmAdmissionPlugin,
    dir: &Path,
) -> anyhow::Result<Vec<AdmissionCaseResult>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files
        .iter()
        .map(|f| {
            let name = f
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let case = std::fs::read_to_string(f)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<AdmissionCase>(&t).map_err(|e| e.to_string()));
            match case {
                Ok(c) => run_case(policy, &name, &c),
                Err(e) => AdmissionCaseResult {
                    name,
                    passed: false,
                    report: format!("cannot read the case: {e}"),
                },
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_reads_are_built_from_the_case() {
        let case: AdmissionCase = serde_json::from_value(json!({"operation": "CREATE",
            "object": {"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": "d", "namespace": "ns"}},
            "context": {"configmaps": [
                {"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}}},
                {"metadata": {"name": "b", "namespace": "other"}}]}}))
        .unwrap();
        let r = request(&case);
        assert_eq!(
            r["resource"],
            json!({"group": "apps", "version": "v1", "resource": "deployments"})
        );
        assert_eq!(
            (r["name"].as_str(), r["namespace"].as_str()),
            (Some("d"), Some("ns"))
        );
        let reads = FixtureReads {
            declared: vec![GroupVersionResource {
                group: String::new(),
                version: String::new(),
                resource: "configmaps".into(),
            }],
            objects: case.context.clone(),
        };
        let cm = GroupVersionResource {
            group: String::new(),
            version: "v1".into(),
            resource: "configmaps".into(),
        };
        assert!(reads.get(&cm, "ns", "a").unwrap().is_some());
        assert!(reads.get(&cm, "ns", "b").unwrap().is_none());
        assert_eq!(reads.list(&cm, "", "").unwrap().len(), 2);
        assert_eq!(reads.list(&cm, "", "x=1").unwrap().len(), 1);
        let secrets = GroupVersionResource {
            resource: "secrets".into(),
            ..cm
        };
        assert!(matches!(
            reads.get(&secrets, "ns", "a"),
            Err(ReadError::Forbidden(_))
        ));
        assert!(contains(
            &json!({"a": {"b": 1, "c": 2}}),
            &json!({"a": {"b": 1}})
        ));
        assert!(!contains(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})));
    }
}

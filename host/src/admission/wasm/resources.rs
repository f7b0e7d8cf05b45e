//! `admissionplugins.wasm-apiserver.dev/v1`: the cluster-scoped `AdmissionPlugin` resource —
//! a wasm admission policy (`wit/admission/0.1.0/admission.wit`) enforced by every replica —
//! and its host-side strategy. The spec follows Kubewarden's `ClusterAdmissionPolicy`
//! (`kubewarden-controller` `api/policies/v1/policy_types.go`: `module`, `settings`, `mode`,
//! `rules`, `failurePolicy`, selectors, `contextAwareResources`) with the component named by
//! sha256 as a `StrategyPlugin`'s is; the status split, `generation` and the per-replica status
//! are the `StrategyPlugin`'s.
//!
//! ```yaml
//! apiVersion: wasm-apiserver.dev/v1
//! kind: AdmissionPlugin
//! metadata: {name: configmap-references}
//! spec:
//!   sha256: 5f0c…              # uploaded to strategyplugincomponents/<sha256>
//!   settings: {exemptNamespaces: [kube-system]}
//!   mode: Enforce              # Enforce (default) | Warn | Audit
//!   failurePolicy: Fail        # Fail (default) | Ignore
//!   rules: [...]               # optional: replaces the component's own rules
//!   namespaceSelector: {...}   # optional metav1.LabelSelector
//!   objectSelector: {...}
//!   contextReads:              # what the component may read, granted by the object's author
//!   - {group: "", resource: configmaps}
//! status:
//!   replicas: [{server: …, state: Active, observedGeneration: 1, sha256: …, witVersion: 0.1.0}]
//! ```

use crate::strategy::{
    with_status_of, Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy,
    StrategyResult,
};
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::labels::LabelSelector;
use wasm_apiserver_apimachinery::meta::{accessor, accessor_mut};
use wasm_apiserver_storage::blob_store::is_sha256;

/// The group of the host's own resources.
pub const GROUP: &str = "wasm-apiserver.dev";
/// The plural of the resource.
pub const PLURAL: &str = "admissionplugins";

/// What a policy's denial does (`spec.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The request is refused.
    Enforce,
    /// The request is admitted with a `Warning` header naming the denial.
    Warn,
    /// The request is admitted; the denial is an entry of the request's audit annotation
    /// `admission.wasm-apiserver.dev/validation_failure` (nothing when it is not audited).
    Audit,
}

/// A resource the object's author lets the policy read (`spec.contextReads[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextRead {
    /// API group (`""` for core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
}

/// `spec`, parsed.
#[derive(Clone, Debug)]
pub struct PluginSpec {
    /// The component's sha256.
    pub sha256: String,
    /// `settings` as JSON text (`{}` when absent).
    pub settings: String,
    /// `mode`.
    pub mode: Mode,
    /// `failurePolicy: Ignore`.
    pub ignore_failures: bool,
    /// `rules` when given (else the component's).
    pub rules: Option<Value>,
    /// `namespaceSelector`, `objectSelector` (`metav1.LabelSelector` objects) when given.
    pub namespace_selector: Option<Value>,
    pub object_selector: Option<Value>,
    /// `contextReads`.
    pub context_reads: Vec<ContextRead>,
}

const OPERATIONS: [&str; 5] = ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"];
const FIELDS: [&str; 8] = [
    "sha256",
    "settings",
    "mode",
    "failurePolicy",
    "rules",
    "namespaceSelector",
    "objectSelector",
    "contextReads",
];

fn one_of(errs: &mut Vec<FieldError>, at: &Path, v: Option<&Value>, allowed: &[&str]) {
    if let Some(v) = v {
        if !v.as_str().is_some_and(|s| allowed.contains(&s)) {
            errs.push(field::not_supported(at, v, allowed));
        }
    }
}

fn strings(errs: &mut Vec<FieldError>, at: &Path, v: &Value, required: bool) -> Vec<String> {
    match v.as_array() {
        Some(a) if a.iter().all(Value::is_string) => {
            if required && a.is_empty() {
                errs.push(field::required(at, ""));
            }
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        }
        None if v.is_null() && required => {
            errs.push(field::required(at, ""));
            Vec::new()
        }
        _ => {
            errs.push(field::type_invalid(at, v, "must be a list of strings"));
            Vec::new()
        }
    }
}

/// Parse and check `obj`'s spec: the spec, or kube-style field errors.
pub fn parse_spec(obj: &Value) -> Result<PluginSpec, Vec<FieldError>> {
    let path = Path::new("spec");
    let mut errs = Vec::new();
    let Some(s) = obj.get("spec").and_then(Value::as_object) else {
        return Err(vec![field::required(&path, "")]);
    };
    for k in s.keys() {
        if !FIELDS.contains(&k.as_str()) {
            errs.push(field::forbidden(&path.child(k), "unknown field"));
        }
    }
    let sha256 = match s.get("sha256") {
        None => {
            errs.push(field::required(
                &path.child("sha256"),
                "the sha256 of a component uploaded to strategyplugincomponents/<sha256>",
            ));
            String::new()
        }
        Some(v) => match v.as_str().filter(|s| is_sha256(s)) {
            Some(s) => s.to_string(),
            None => {
                errs.push(field::invalid(
                    &path.child("sha256"),
                    v,
                    "must be 64 lowercase hexadecimal characters",
                ));
                String::new()
            }
        },
    };
    let settings = match s.get("settings") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(v) => {
            errs.push(field::type_invalid(
                &path.child("settings"),
                v,
                "must be an object",
            ));
            String::new()
        }
    };
    one_of(
        &mut errs,
        &path.child("mode"),
        s.get("mode"),
        &["Enforce", "Warn", "Audit"],
    );
    one_of(
        &mut errs,
        &path.child("failurePolicy"),
        s.get("failurePolicy"),
        &["Fail", "Ignore"],
    );
    let mode = match s.get("mode").and_then(Value::as_str) {
        Some("Warn") => Mode::Warn,
        Some("Audit") => Mode::Audit,
        _ => Mode::Enforce,
    };
    if let Some(rules) = s.get("rules") {
        let at = path.child("rules");
        match rules.as_array() {
            None => errs.push(field::type_invalid(&at, rules, "must be a list of rules")),
            Some(list) => {
                for (i, r) in list.iter().enumerate() {
                    let at = at.index(i);
                    let ops = strings(&mut errs, &at.child("operations"), &r["operations"], true);
                    for op in ops.iter().filter(|o| !OPERATIONS.contains(&o.as_str())) {
                        errs.push(field::not_supported(
                            &at.child("operations"),
                            json!(op),
                            &OPERATIONS,
                        ));
                    }
                    strings(&mut errs, &at.child("apiGroups"), &r["apiGroups"], true);
                    strings(&mut errs, &at.child("apiVersions"), &r["apiVersions"], true);
                    strings(&mut errs, &at.child("resources"), &r["resources"], true);
                    one_of(
                        &mut errs,
                        &at.child("scope"),
                        r.get("scope"),
                        &["*", "Cluster", "Namespaced"],
                    );
                }
            }
        }
    }
    for key in ["namespaceSelector", "objectSelector"] {
        if let Some(sel) = s.get(key) {
            if !sel.is_object() || LabelSelector::from_metav1(sel).is_none() {
                errs.push(field::invalid(
                    &path.child(key),
                    sel,
                    "must be a valid label selector",
                ));
            }
        }
    }
    let mut context_reads = Vec::new();
    if let Some(reads) = s.get("contextReads") {
        let at = path.child("contextReads");
        match reads.as_array() {
            None => errs.push(field::type_invalid(&at, reads, "must be a list")),
            Some(list) => {
                for (i, r) in list.iter().enumerate() {
                    let group = r["group"].as_str().unwrap_or_default();
                    match r["resource"].as_str() {
                        Some(res) if !res.is_empty() && !res.contains(['/', '*']) => context_reads
                            .push(ContextRead {
                                group: group.to_string(),
                                resource: res.to_string(),
                            }),
                        _ => errs.push(field::required(
                            &at.index(i).child("resource"),
                            "one plural resource name",
                        )),
                    }
                }
            }
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(PluginSpec {
        sha256,
        settings,
        mode,
        ignore_failures: s.get("failurePolicy").and_then(Value::as_str) == Some("Ignore"),
        rules: s.get("rules").cloned(),
        namespace_selector: s.get("namespaceSelector").cloned(),
        object_selector: s.get("objectSelector").cloned(),
        context_reads,
    })
}

/// The host-side strategy of `admissionplugins`: spec written by users, `status` by the
/// servers through the status subresource.
pub struct AdmissionPluginStrategy {
    description: ResourceDescription,
}

impl Default for AdmissionPluginStrategy {
    fn default() -> Self {
        let mut d = ResourceDescription::new(GROUP, "v1", "AdmissionPlugin", PLURAL);
        d.namespaced = false;
        d.short_names = vec!["ap".into()];
        d.subresources = vec!["status".into()];
        let col = |name: &str, ty: &str, path: &str| PrinterColumn::new(name, ty, path);
        d.printer_columns = vec![
            PrinterColumn::name(),
            col("Mode", "string", ".spec.mode"),
            col("Failure-Policy", "string", ".spec.failurePolicy"),
            col("Generation", "integer", ".metadata.generation"),
            col("Age", "date", ".metadata.creationTimestamp"),
        ];
        d.openapi_schema = json!({"type": "object",
            "description": "A wasm admission policy (wit/admission/) enforced by every replica.",
            "x-kubernetes-preserve-unknown-fields": true});
        AdmissionPluginStrategy { description: d }
    }
}

/// `mode: Enforce`, `failurePolicy: Fail`, `settings: {}` when absent.
fn set_defaults(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("mode").or_insert_with(|| json!("Enforce"));
        spec.entry("failurePolicy").or_insert_with(|| json!("Fail"));
        spec.entry("settings").or_insert_with(|| json!({}));
    }
}

fn errors(obj: &Value) -> Vec<FieldError> {
    parse_spec(obj).err().unwrap_or_default()
}

impl Strategy for AdmissionPluginStrategy {
    fn name(&self) -> &str {
        "wasm-apiserver"
    }
    fn description(&self) -> &ResourceDescription {
        &self.description
    }
    fn allow_create_on_update(&self) -> bool {
        false
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let mut obj = obj.clone();
        if let Some(m) = obj.as_object_mut() {
            m.remove("status");
        }
        set_defaults(&mut obj);
        accessor_mut(&mut obj).set("generation", 1);
        Ok(obj)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(errors(obj))
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut new = new.clone();
        with_status_of(&mut new, old);
        set_defaults(&mut new);
        let generation = accessor(old).generation().unwrap_or(1);
        let changed = new.get("spec") != old.get("spec");
        accessor_mut(&mut new).set("generation", generation + i64::from(changed));
        // A new generation is not Ready until the replicas report it.
        if changed {
            crate::reload::with_conditions(&mut new);
        }
        Ok(new)
    }
    fn validate_update(&self, new: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(errors(new))
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut out = old.clone();
        with_status_of(&mut out, new);
        Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_errors_name_the_field() {
        let obj = json!({"spec": {"sha256": "x", "mode": "Block", "rules": [{"operations": ["MAKE"],
            "apiGroups": [""], "apiVersions": ["v1"], "resources": []}], "bogus": 1,
            "contextReads": [{"resource": "*"}]}});
        let errs: Vec<String> = parse_spec(&obj)
            .unwrap_err()
            .iter()
            .map(|e| e.to_string())
            .collect();
        let all = errs.join("\n");
        for want in [
            "spec.bogus: Forbidden",
            "spec.sha256: Invalid value",
            "spec.mode: Unsupported value: \"Block\"",
            "spec.rules[0].operations: Unsupported value: \"MAKE\"",
            "spec.rules[0].resources: Required value",
            "spec.contextReads[0].resource: Required value",
        ] {
            assert!(all.contains(want), "{want} not in\n{all}");
        }
        let ok = json!({"spec": {"sha256": "a".repeat(64), "mode": "Warn",
            "contextReads": [{"group": "", "resource": "configmaps"}]}});
        let spec = parse_spec(&ok).unwrap();
        assert_eq!(spec.mode, Mode::Warn);
        assert_eq!(spec.settings, "{}");
        assert_eq!(spec.context_reads[0].resource, "configmaps");
    }
}

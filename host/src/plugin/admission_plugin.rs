//! [`WasmAdmissionPlugin`]: a loaded admission policy component (world `admission-plugin` of
//! `wit/admission/0.1.0/admission.wit`) and its calls — `validate-settings`, `validate`,
//! `mutate` — on the same warm instances, deadline and memory cap as a strategy's hooks
//! ([`WasmStrategy::call_instance`]). During `validate` and `mutate` the policy's context reads
//! are answered by the caller's [`ContextReads`]; at any other time they are refused.

use super::context_reads::ContextReads;
use super::load::{LoadError, LoadErrorKind, ADMISSION_PACKAGE};
use super::runtime::PluginRuntime;
use super::wasm_strategy::WasmStrategy;
use super::wit::admission_v0_1::{description, response, AdmissionResponse, PolicyDescription};
use super::wit::Pre;
use crate::strategy::PluginFault;
use std::sync::Arc;

/// A loaded admission policy version. Cheap to clone. Calls block the calling thread for at
/// most the call deadline: run them off the async workers.
#[derive(Clone, Debug)]
pub struct WasmAdmissionPlugin {
    component: WasmStrategy,
    description: Arc<PolicyDescription>,
}

/// The operations a rule may name (`admissionregistration.k8s.io/v1` `OperationType`).
const OPERATIONS: [&str; 5] = ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"];

/// What is wrong with a policy's self-description: empty lists in a rule, unknown
/// operations or scopes, reads without a resource.
pub fn validate_description(d: &PolicyDescription) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, r) in d.rules.iter().enumerate() {
        for (field, list) in [
            ("operations", &r.operations),
            ("apiGroups", &r.api_groups),
            ("apiVersions", &r.api_versions),
            ("resources", &r.resources),
        ] {
            if list.is_empty() {
                problems.push(format!("rules[{i}].{field}: must not be empty"));
            }
        }
        for op in &r.operations {
            if !OPERATIONS.contains(&op.as_str()) {
                problems.push(format!(
                    "rules[{i}].operations: unsupported value {op:?}: supported values: {}",
                    OPERATIONS.map(|o| format!("{o:?}")).join(", ")
                ));
            }
        }
        if !["*", "Cluster", "Namespaced"].contains(&r.scope.as_str()) {
            problems.push(format!(
                "rules[{i}].scope: unsupported value {:?}: supported values: \"*\", \"Cluster\", \"Namespaced\"",
                r.scope
            ));
        }
    }
    for (i, g) in d.context_reads.iter().enumerate() {
        if g.resource.is_empty() || g.resource.contains('/') || g.resource == "*" {
            problems.push(format!(
                "context-reads[{i}].resource: must name one resource, not {:?}",
                g.resource
            ));
        }
    }
    problems
}

impl PluginRuntime {
    /// Compile (or fetch from cache), check and describe an admission policy. Blocking: call
    /// it off the async workers. Errors: every [`LoadErrorKind`]; a strategy is
    /// [`LoadErrorKind::WrongWorld`], an invalid self-description
    /// [`LoadErrorKind::Describe`].
    pub fn load_admission(
        &self,
        name: &str,
        bytes: &[u8],
    ) -> Result<WasmAdmissionPlugin, LoadError> {
        let fail = |reason| LoadError {
            plugin: name.to_string(),
            reason,
        };
        let component = self.link(name, bytes)?;
        if !matches!(*component.inner.pre, Pre::Admission(_)) {
            return Err(fail(LoadErrorKind::WrongWorld(format!(
                "does not export {ADMISSION_PACKAGE}/admission: it is a strategy (a \
                 StrategyPlugin object serves it), not an admission policy"
            ))));
        }
        let d = component
            .call_instance("describe", |i, _, s| {
                i.admission()
                    .expect("an admission instance")
                    .call_describe(s)
            })
            .map_err(|e| fail(LoadErrorKind::Instantiate(e.to_string())))?;
        let d = description(d);
        let problems = validate_description(&d);
        if !problems.is_empty() {
            return Err(fail(LoadErrorKind::Describe(problems)));
        }
        Ok(WasmAdmissionPlugin {
            component,
            description: Arc::new(d),
        })
    }
}

impl WasmAdmissionPlugin {
    /// The component's name.
    pub fn name(&self) -> &str {
        &self.component.inner.name
    }

    /// sha256 of the component file, hex.
    pub fn sha256(&self) -> &str {
        self.component.sha256()
    }

    /// The admission contract version the component was built against.
    pub fn wit_version(&self) -> &str {
        self.component.wit_version()
    }

    /// What the policy said it is at load.
    pub fn description(&self) -> &PolicyDescription {
        &self.description
    }

    /// `validate-settings`: `Ok(Err(message))` when the policy refuses `settings` (JSON
    /// text). Errors: the call failed.
    pub fn validate_settings(&self, settings: &str) -> Result<Result<(), String>, PluginFault> {
        self.component
            .call_instance("validate-settings", |i, _, s| {
                i.admission()
                    .expect("an admission instance")
                    .call_validate_settings(s, settings)
            })
    }

    /// `validate` (or `mutate` when `mutating`) on `request` (kube's `AdmissionRequest`, JSON
    /// text) with `settings`, its context reads answered by `reads`. Errors: the call failed
    /// (a trap, the deadline, the memory cap).
    pub fn admit(
        &self,
        mutating: bool,
        request: &str,
        settings: &str,
        reads: Arc<dyn ContextReads>,
    ) -> Result<AdmissionResponse, PluginFault> {
        let hook = if mutating { "mutate" } else { "validate" };
        self.component
            .call_instance(hook, |i, _, s| {
                s.data_mut().context = Some(reads);
                let guest = i.admission().expect("an admission instance");
                let out = if mutating {
                    guest.call_mutate(&mut *s, request, settings)
                } else {
                    guest.call_validate(&mut *s, request, settings)
                };
                s.data_mut().context = None;
                out
            })
            .map(response)
    }
}

/// Whether `bytes` are an admission policy component: they name the export
/// `wasm-apiserver:admission/admission@…` (a strategy component never does).
pub fn is_admission(bytes: &[u8]) -> bool {
    const EXPORT: &[u8] = b"wasm-apiserver:admission/admission@";
    bytes.windows(EXPORT.len()).any(|w| w == EXPORT)
}

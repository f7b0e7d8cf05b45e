//! The host side of `wasm-apiserver:admission@0.1.0` (`wit/admission/0.1.0/admission.wit`):
//! the bindings of the `admission-plugin` world, its `host` imports (`log`, and the context
//! reads `get-object`/`list-objects`, answered by the [`ContextReads`] of the current call),
//! and its records in the host's types.

use crate::plugin::context_reads::{GroupVersionResource, ReadError};
use crate::plugin::host_state::HostState;

mod generated {
    wasmtime::component::bindgen!({
        world: "admission-plugin",
        path: "../wit/admission/0.1.0",
    });
}

pub use generated::exports::wasm_apiserver::admission::admission::Guest;
pub use generated::wasm_apiserver::admission::{host, types};
pub use generated::{AdmissionPlugin, AdmissionPluginPre};

/// The version of the contract this module implements.
pub const VERSION: &str = "0.1.0";
/// The package this module implements.
pub const PACKAGE: &str = "wasm-apiserver:admission";

fn gvr(g: types::GroupVersionResource) -> GroupVersionResource {
    GroupVersionResource {
        group: g.group,
        version: g.version,
        resource: g.resource,
    }
}

fn read_error(e: ReadError) -> types::ReadError {
    match e {
        ReadError::Forbidden(m) => types::ReadError::Forbidden(m),
        ReadError::Invalid(m) => types::ReadError::Invalid(m),
        ReadError::Unavailable(m) => types::ReadError::Unavailable(m),
    }
}

/// The call has no reader (a settings check, a load-time call): reads are refused.
fn no_reader() -> ReadError {
    ReadError::Unavailable("context reads are served only while a request is admitted".into())
}

impl host::Host for HostState {
    fn log(&mut self, level: host::LogLevel, message: String) {
        use host::LogLevel;
        let level = match level {
            LogLevel::Trace => tracing::Level::TRACE,
            LogLevel::Debug => tracing::Level::DEBUG,
            LogLevel::Info => tracing::Level::INFO,
            LogLevel::Warn => tracing::Level::WARN,
            LogLevel::Error => tracing::Level::ERROR,
        };
        self.log(level, message);
    }

    fn get_object(
        &mut self,
        g: types::GroupVersionResource,
        namespace: String,
        name: String,
    ) -> Result<Option<String>, types::ReadError> {
        let reader = self
            .context
            .clone()
            .ok_or_else(|| read_error(no_reader()))?;
        reader.get(&gvr(g), &namespace, &name).map_err(read_error)
    }

    fn list_objects(
        &mut self,
        g: types::GroupVersionResource,
        namespace: String,
        label_selector: String,
    ) -> Result<Vec<String>, types::ReadError> {
        let reader = self
            .context
            .clone()
            .ok_or_else(|| read_error(no_reader()))?;
        reader
            .list(&gvr(g), &namespace, &label_selector)
            .map_err(read_error)
    }
}

impl types::Host for HostState {}

/// One match rule (`rule`), as `admissionregistration.k8s.io/v1` `RuleWithOperations`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub operations: Vec<String>,
    /// API groups or `*`.
    pub api_groups: Vec<String>,
    /// Versions or `*`.
    pub api_versions: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*`, `*/status`).
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*`.
    pub scope: String,
}

/// What a policy is (`policy-description`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyDescription {
    /// Runs in the mutating stage (and may return a mutated object).
    pub mutating: bool,
    /// The requests it wants by default.
    pub rules: Vec<Rule>,
    /// What it may read.
    pub context_reads: Vec<GroupVersionResource>,
}

/// `describe`, converted.
pub fn description(d: types::PolicyDescription) -> PolicyDescription {
    PolicyDescription {
        mutating: d.mutating,
        rules: d
            .rules
            .into_iter()
            .map(|r| Rule {
                operations: r.operations,
                api_groups: r.api_groups,
                api_versions: r.api_versions,
                resources: r.resources,
                scope: r.scope,
            })
            .collect(),
        context_reads: d.context_reads.into_iter().map(gvr).collect(),
    }
}

/// A refusal (`denial`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// HTTP code; 0 means 403.
    pub code: u16,
    /// `metav1.StatusReason`, may be empty.
    pub reason: String,
    /// What the client sees.
    pub message: String,
}

/// The answer to one request (`admission-response`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionResponse {
    /// Whether the request may go on.
    pub allowed: bool,
    /// Why not.
    pub denial: Option<Denial>,
    /// `Warning` headers.
    pub warnings: Vec<String>,
    /// Audit annotations (keys not yet prefixed).
    pub audit_annotations: Vec<(String, String)>,
    /// A mutating policy's object, JSON text.
    pub mutated_object: Option<String>,
}

/// `admission-response`, converted.
pub fn response(r: types::AdmissionResponse) -> AdmissionResponse {
    AdmissionResponse {
        allowed: r.allowed,
        denial: r.denial.map(|d| Denial {
            code: d.code,
            reason: d.reason,
            message: d.message,
        }),
        warnings: r.warnings,
        audit_annotations: r.audit_annotations,
        mutated_object: r.mutated_object,
    }
}

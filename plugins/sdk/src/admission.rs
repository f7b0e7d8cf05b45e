//! Admission policies: a component that admits requests to any resource it matches (world
//! `admission-plugin` of `wit/admission/0.1.0/admission.wit`), as a validating or mutating
//! webhook does, but in-process. Implement [`AdmissionPolicy`] for a unit struct and export it
//! with [`export_admission_policy!`](crate::export_admission_policy):
//!
//! ```ignore
//! use wasm_apiserver_sdk::admission::*;
//!
//! pub struct NoLatest;
//! impl AdmissionPolicy for NoLatest {
//!     fn describe() -> PolicyDescription {
//!         PolicyDescription::validating(vec![Rule::new(&["CREATE", "UPDATE"], "", "pods")])
//!     }
//!     fn validate(request: &AdmissionRequest, _settings: &Value) -> AdmissionResponse {
//!         AdmissionResponse::allow()
//!     }
//! }
//! wasm_apiserver_sdk::export_admission_policy!(NoLatest);
//! ```
//!
//! A policy reads other objects through [`get_object`] and [`list_objects`], answered by the
//! host from its watch cache, for the resources it lists in
//! [`PolicyDescription::context_reads`] only. Natively (in `cargo test`) they read what
//! [`testing::with_objects`] holds. Log with [`log`] (not [`crate::log`], which is a
//! strategy's import).

use serde::{Deserialize, Serialize};
pub use serde_json::{json, Value};

/// A resource (`group-version-resource`); an empty version is the one the host stores it in
/// (its storage version).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupVersionResource {
    /// API group (`""` for the core group).
    pub group: String,
    /// Version, `""` for the storage version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl GroupVersionResource {
    /// `group`, `version`, `resource`.
    pub fn new(group: &str, version: &str, resource: &str) -> Self {
        GroupVersionResource {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }
}

/// One match rule, as `admissionregistration.k8s.io/v1` `RuleWithOperations`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub operations: Vec<String>,
    /// API groups (`""` for core) or `*`.
    pub api_groups: Vec<String>,
    /// Versions or `*`.
    pub api_versions: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*`).
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*`.
    pub scope: String,
}

impl Rule {
    /// `operations` on `resource` of `group`, every version, any scope.
    pub fn new(operations: &[&str], group: &str, resource: &str) -> Rule {
        Rule {
            operations: operations.iter().map(|s| s.to_string()).collect(),
            api_groups: vec![group.into()],
            api_versions: vec!["*".into()],
            resources: vec![resource.into()],
            scope: "*".into(),
        }
    }
}

/// What the policy is; read once at load.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyDescription {
    /// Runs in the mutating stage and may return a mutated object.
    pub mutating: bool,
    /// The requests it wants by default.
    pub rules: Vec<Rule>,
    /// What it may read through [`get_object`] and [`list_objects`].
    pub context_reads: Vec<GroupVersionResource>,
}

impl PolicyDescription {
    /// A validating policy of `rules`, reading nothing.
    pub fn validating(rules: Vec<Rule>) -> Self {
        PolicyDescription {
            mutating: false,
            rules,
            context_reads: Vec::new(),
        }
    }

    /// A mutating policy of `rules`, reading nothing.
    pub fn mutating(rules: Vec<Rule>) -> Self {
        PolicyDescription {
            mutating: true,
            rules,
            context_reads: Vec::new(),
        }
    }

    /// Declare that the policy reads `resource` of `group` (in its storage version).
    pub fn reads(mut self, group: &str, resource: &str) -> Self {
        self.context_reads
            .push(GroupVersionResource::new(group, "", resource));
        self
    }
}

/// kube's `AdmissionRequest` (`k8s.io/api/admission/v1`), the fields a policy reads most;
/// the rest are in `extra`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// The request's uid.
    #[serde(default)]
    pub uid: String,
    /// `{group, version, kind}` of the object.
    #[serde(default)]
    pub kind: Value,
    /// `{group, version, resource}`.
    #[serde(default)]
    pub resource: Value,
    /// `""` or `status`, ….
    #[serde(default)]
    pub sub_resource: String,
    /// The object's name (empty for a create with `generateName`).
    #[serde(default)]
    pub name: String,
    /// Namespace (empty for cluster-scoped resources).
    #[serde(default)]
    pub namespace: String,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    #[serde(default)]
    pub operation: String,
    /// `{username, uid, groups, extra}`.
    #[serde(default)]
    pub user_info: Value,
    /// The object as it will be written (`null` for a delete).
    #[serde(default)]
    pub object: Value,
    /// The current object of an update or delete (`null` otherwise).
    #[serde(default)]
    pub old_object: Value,
    /// `dryRun`.
    #[serde(default)]
    pub dry_run: bool,
    /// Everything else (`options`, `requestKind`, …).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// A refusal, as the `metav1.Status` of a webhook's response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// HTTP code; 0 means 403.
    pub code: u16,
    /// `metav1.StatusReason` (`Forbidden`, `Invalid`, …); may be empty.
    pub reason: String,
    /// What the client sees.
    pub message: String,
}

/// The answer to one request, as `AdmissionResponse`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdmissionResponse {
    /// Whether the request may go on.
    pub allowed: bool,
    /// Why not.
    pub denial: Option<Denial>,
    /// `Warning` headers for the client.
    pub warnings: Vec<String>,
    /// Audit annotations (the host prefixes the keys with the policy's name).
    pub audit_annotations: Vec<(String, String)>,
    /// A mutating policy's object.
    pub mutated_object: Option<Value>,
}

impl AdmissionResponse {
    /// Allowed, nothing else.
    pub fn allow() -> Self {
        AdmissionResponse {
            allowed: true,
            ..Default::default()
        }
    }

    /// Refused with `message` (403 Forbidden, as a webhook's denial without a code).
    pub fn deny(message: impl Into<String>) -> Self {
        AdmissionResponse {
            allowed: false,
            denial: Some(Denial {
                code: 0,
                reason: String::new(),
                message: message.into(),
            }),
            ..Default::default()
        }
    }

    /// Allowed, storing `object` instead (a mutating policy).
    pub fn mutate(object: Value) -> Self {
        AdmissionResponse {
            allowed: true,
            mutated_object: Some(object),
            ..Default::default()
        }
    }

    /// Add a `Warning` header.
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }
}

/// Why a context read failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The resource is not among the policy's `context_reads`.
    Forbidden(String),
    /// Not served, or a bad selector.
    Invalid(String),
    /// The host's cache is not ready.
    Unavailable(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Forbidden(m) | ReadError::Invalid(m) | ReadError::Unavailable(m) => {
                f.write_str(m)
            }
        }
    }
}

/// An admission policy. Every function is a pure function of its arguments and of what the
/// context reads return; the host may call it more than once per request.
pub trait AdmissionPolicy: 'static {
    /// What the policy is. Must always return the same value.
    fn describe() -> PolicyDescription;

    /// Check a policy object's settings; `Err` is the object's status (`Failed`, the
    /// message), and the last good version keeps enforcing.
    fn validate_settings(_settings: &Value) -> Result<(), String> {
        Ok(())
    }

    /// A validating policy's verdict.
    fn validate(_request: &AdmissionRequest, _settings: &Value) -> AdmissionResponse {
        AdmissionResponse::allow()
    }

    /// A mutating policy's verdict and mutation.
    fn mutate(_request: &AdmissionRequest, _settings: &Value) -> AdmissionResponse {
        AdmissionResponse::allow()
    }
}

/// One object of a declared resource from the host's watch cache; `None` when it does not
/// exist. `namespace` is empty for cluster-scoped resources.
pub fn get_object(
    gvr: &GroupVersionResource,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, ReadError> {
    #[cfg(target_arch = "wasm32")]
    {
        let text =
            bindings::wasm_apiserver::admission::host::get_object(&to_wit(gvr), namespace, name)
                .map_err(from_wit)?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }
    #[cfg(not(target_arch = "wasm32"))]
    testing::get(gvr, namespace, name)
}

/// The objects of a declared resource in `namespace` (all when empty) matching
/// `label_selector` (kube's syntax; empty selects all), from the host's watch cache.
pub fn list_objects(
    gvr: &GroupVersionResource,
    namespace: &str,
    label_selector: &str,
) -> Result<Vec<Value>, ReadError> {
    #[cfg(target_arch = "wasm32")]
    {
        let texts = bindings::wasm_apiserver::admission::host::list_objects(
            &to_wit(gvr),
            namespace,
            label_selector,
        )
        .map_err(from_wit)?;
        Ok(texts
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect())
    }
    #[cfg(not(target_arch = "wasm32"))]
    testing::list(gvr, namespace, label_selector)
}

/// Emit one log line through the host (tagged with the policy's name); stderr natively.
pub fn log(message: &str) {
    #[cfg(target_arch = "wasm32")]
    bindings::wasm_apiserver::admission::host::log(
        bindings::wasm_apiserver::admission::host::LogLevel::Info,
        message,
    );
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[Info] {message}");
}

/// Native stand-ins for the host's context reads, for `cargo test`.
pub mod testing {
    use super::{GroupVersionResource, ReadError, Value};
    use std::cell::RefCell;

    thread_local! {
        static OBJECTS: RefCell<Vec<(String, Value)>> = const { RefCell::new(Vec::new()) };
    }

    /// Run `f` with `objects` (each `(resource, object)`, e.g. `("configmaps", cm)`) as what
    /// the context reads of this thread see.
    pub fn with_objects<R>(objects: Vec<(&str, Value)>, f: impl FnOnce() -> R) -> R {
        OBJECTS.with(|o| {
            *o.borrow_mut() = objects
                .into_iter()
                .map(|(r, v)| (r.to_string(), v))
                .collect()
        });
        let out = f();
        OBJECTS.with(|o| o.borrow_mut().clear());
        out
    }

    fn meta<'a>(o: &'a Value, field: &str) -> &'a str {
        o["metadata"][field].as_str().unwrap_or_default()
    }

    pub(super) fn get(
        gvr: &GroupVersionResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ReadError> {
        Ok(OBJECTS.with(|o| {
            o.borrow()
                .iter()
                .find(|(r, v)| {
                    *r == gvr.resource
                        && meta(v, "namespace") == namespace
                        && meta(v, "name") == name
                })
                .map(|(_, v)| v.clone())
        }))
    }

    pub(super) fn list(
        gvr: &GroupVersionResource,
        namespace: &str,
        _label_selector: &str,
    ) -> Result<Vec<Value>, ReadError> {
        Ok(OBJECTS.with(|o| {
            o.borrow()
                .iter()
                .filter(|(r, v)| {
                    *r == gvr.resource
                        && (namespace.is_empty() || meta(v, "namespace") == namespace)
                })
                .map(|(_, v)| v.clone())
                .collect()
        }))
    }
}

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "admission-plugin",
        path: "../../wit/admission/0.1.0",
        pub_export_macro: true,
        export_macro_name: "__export_admission_bindings",
        default_bindings_module: "wasm_apiserver_sdk::admission::bindings",
    });
}

#[cfg(target_arch = "wasm32")]
fn to_wit(
    g: &GroupVersionResource,
) -> bindings::wasm_apiserver::admission::types::GroupVersionResource {
    bindings::wasm_apiserver::admission::types::GroupVersionResource {
        group: g.group.clone(),
        version: g.version.clone(),
        resource: g.resource.clone(),
    }
}

#[cfg(target_arch = "wasm32")]
fn from_wit(e: bindings::wasm_apiserver::admission::types::ReadError) -> ReadError {
    use bindings::wasm_apiserver::admission::types::ReadError as W;
    match e {
        W::Forbidden(m) => ReadError::Forbidden(m),
        W::Invalid(m) => ReadError::Invalid(m),
        W::Unavailable(m) => ReadError::Unavailable(m),
    }
}

/// The glue the export macro calls: JSON text in, the WIT records out.
#[doc(hidden)]
pub mod glue {
    use super::bindings::wasm_apiserver::admission::types as t;
    use super::*;

    fn settings(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or(Value::Object(Default::default()))
    }

    /// `describe`.
    pub fn describe<P: AdmissionPolicy>() -> t::PolicyDescription {
        let d = P::describe();
        t::PolicyDescription {
            mutating: d.mutating,
            rules: d
                .rules
                .into_iter()
                .map(|r| t::Rule {
                    operations: r.operations,
                    api_groups: r.api_groups,
                    api_versions: r.api_versions,
                    resources: r.resources,
                    scope: r.scope,
                })
                .collect(),
            context_reads: d
                .context_reads
                .into_iter()
                .map(|g| t::GroupVersionResource {
                    group: g.group,
                    version: g.version,
                    resource: g.resource,
                })
                .collect(),
        }
    }

    /// `validate-settings`.
    pub fn validate_settings<P: AdmissionPolicy>(text: &str) -> Result<(), String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("settings are not JSON: {e}"))?;
        P::validate_settings(&v)
    }

    fn answer(r: AdmissionResponse) -> t::AdmissionResponse {
        t::AdmissionResponse {
            allowed: r.allowed,
            denial: r.denial.map(|d| t::Denial {
                code: d.code,
                reason: d.reason,
                message: d.message,
            }),
            warnings: r.warnings,
            audit_annotations: r.audit_annotations,
            mutated_object: r.mutated_object.map(|o| o.to_string()),
        }
    }

    /// `validate` (or `mutate`).
    pub fn admit<P: AdmissionPolicy>(
        mutating: bool,
        request: &str,
        settings_text: &str,
    ) -> t::AdmissionResponse {
        let request: AdmissionRequest = match serde_json::from_str(request) {
            Ok(r) => r,
            Err(e) => {
                return answer(AdmissionResponse {
                    allowed: false,
                    denial: Some(Denial {
                        code: 400,
                        reason: "BadRequest".into(),
                        message: format!("the policy cannot decode the request: {e}"),
                    }),
                    ..Default::default()
                })
            }
        };
        let s = settings(settings_text);
        answer(if mutating {
            P::mutate(&request, &s)
        } else {
            P::validate(&request, &s)
        })
    }

    /// Route panics to the host log (the admission world's `log`), once.
    pub fn install_panic_hook() {
        #[cfg(target_arch = "wasm32")]
        {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                std::panic::set_hook(Box::new(|info| {
                    super::bindings::wasm_apiserver::admission::host::log(
                        super::bindings::wasm_apiserver::admission::host::LogLevel::Error,
                        &format!("panic: {info}"),
                    );
                }))
            });
        }
    }
}

/// Export an [`AdmissionPolicy`] as this component's `admission` interface, with the `talc`
/// allocator as [`export_strategy!`](crate::export_strategy) installs it. Expands to nothing on
/// non-wasm targets.
#[macro_export]
macro_rules! export_admission_policy {
    ($ty:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static __WASM_APISERVER_ALLOC: $crate::__talc::wasm::WasmDynamicTalc =
            $crate::__talc::wasm::new_wasm_dynamic_allocator();

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::admission::bindings::exports::wasm_apiserver::admission::admission as __a;
            use $crate::admission::bindings::wasm_apiserver::admission::types as __t;
            struct __WasmApiserverExport;
            impl __a::Guest for __WasmApiserverExport {
                fn describe() -> __t::PolicyDescription {
                    $crate::admission::glue::install_panic_hook();
                    $crate::admission::glue::describe::<$ty>()
                }
                fn validate_settings(settings: String) -> Result<(), String> {
                    $crate::admission::glue::install_panic_hook();
                    $crate::admission::glue::validate_settings::<$ty>(&settings)
                }
                fn validate(request: String, settings: String) -> __t::AdmissionResponse {
                    $crate::admission::glue::install_panic_hook();
                    $crate::admission::glue::admit::<$ty>(false, &request, &settings)
                }
                fn mutate(request: String, settings: String) -> __t::AdmissionResponse {
                    $crate::admission::glue::install_panic_hook();
                    $crate::admission::glue::admit::<$ty>(true, &request, &settings)
                }
            }
            $crate::admission::bindings::__export_admission_bindings!(
                __WasmApiserverExport with_types_in $crate::admission::bindings
            );
        };
    };
}

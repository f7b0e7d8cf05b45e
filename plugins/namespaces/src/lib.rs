//! `namespaces` (core/v1 `Namespace`, cluster-scoped): the standard strategy plugin, a port of
//! kube-apiserver's
//! - `pkg/registry/core/namespace/strategy.go` (`PrepareForCreate`: status `Active` and the
//!   `kubernetes` finalizer; `PrepareForUpdate`: keep `spec.finalizers` and `status`;
//!   `Canonicalize`: the `kubernetes.io/metadata.name` label; the status strategy; `GetAttrs`);
//! - `pkg/apis/core/v1/defaults.go` (`SetDefaults_Namespace`: the same label,
//!   `SetDefaults_NamespaceStatus`: phase `Active`);
//! - `pkg/apis/core/validation/validation.go` (`ValidateNamespace`,
//!   `ValidateNamespaceStatusUpdate`; `ValidateNamespaceUpdate` is only
//!   `ValidateObjectMetaUpdate`, which the host does);
//! - `pkg/printers/internalversion/printers.go` (`printNamespace`: NAME, STATUS, AGE).
//!
//! The `finalize` subresource (`ValidateNamespaceFinalizeUpdate`) is not served: this version of
//! the contract knows only `status`.

use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{Namespace, NamespaceSpec, NamespaceStatus};
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::NameRule;

/// `core.FinalizerKubernetes`: the finalizer the namespace controller removes once the
/// namespace's content is gone.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// `v1.LabelMetadataName`: the label kube-apiserver sets on every namespace to its name.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// `core.NamespaceActive`.
pub const PHASE_ACTIVE: &str = "Active";
/// `core.NamespaceTerminating`.
pub const PHASE_TERMINATING: &str = "Terminating";

/// `standardFinalizers` (pkg/apis/core/helper/helpers.go): the finalizer names that need no
/// `/`-qualified prefix.
const STANDARD_FINALIZERS: [&str; 3] = [FINALIZER_KUBERNETES, "orphan", "foregroundDeletion"];

/// The strategy of `namespaces` (and its status strategy).
pub struct Namespaces;

impl Strategy for Namespaces {
    type Object = Namespace;

    /// Namespaces have no `metadata.generation` in kube-apiserver.
    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            short_names: vec!["ns".into()],
            namespaced: false,
            subresources: vec!["status".into()],
            printer_columns: vec![
                PrinterColumn::name(),
                PrinterColumn::new("Status", "string", ".status.phase")
                    .describe("The status of the namespace"),
                PrinterColumn::age().describe(CREATION_TIMESTAMP_DESCRIPTION),
            ],
            // `NamespaceToSelectableFields`: `status.phase`, and `name` ("a bug, but we need to
            // support it for backward compatibility"); see `get_attrs`.
            selectable_fields: vec!["status.phase".into(), "name".into()],
            openapi_schema: schema(),
            example: Some(json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "example"}
            })),
            ..ResourceDescription::new("", "v1", "Namespace", "namespaces")
        }
    }

    /// `namespaceStrategy.PrepareForCreate`: status is `{phase: Active}` (the SDK has dropped the
    /// client's status), and `spec.finalizers` gets `kubernetes` appended when missing. Also
    /// `SetDefaults_Namespace`'s name label (the host has already generated the name).
    fn prepare_for_create(ns: &mut Namespace) {
        ns.status = Some(NamespaceStatus {
            phase: Some(PHASE_ACTIVE.into()),
            ..Default::default()
        });
        let finalizers = ns
            .spec
            .get_or_insert_with(NamespaceSpec::default)
            .finalizers
            .get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == FINALIZER_KUBERNETES) {
            finalizers.push(FINALIZER_KUBERNETES.into());
        }
        set_name_label(ns);
    }

    /// `namespaceStrategy.Validate` → `ValidateNamespace`.
    fn validate(ns: &Namespace) -> ErrorList {
        validate_namespace(ns)
    }

    /// `namespaceStrategy.Canonicalize`: `kubernetes.io/metadata.name=<name>`, on create,
    /// update and status update.
    fn canonicalize(ns: &mut Namespace) {
        set_name_label(ns);
    }

    /// `namespaceStrategy.AllowCreateOnUpdate`: false.
    fn allow_create_on_update() -> bool {
        false
    }

    /// `namespaceStrategy.AllowUnconditionalUpdate`: true.
    fn allow_unconditional_update() -> bool {
        true
    }

    /// `namespaceStrategy.PrepareForUpdate`: `spec.finalizers` and `status` stay the stored ones
    /// (finalizers change only through `/finalize`, status through `/status`). Also
    /// `SetDefaults_Namespace`'s name label.
    fn prepare_for_update(new: &mut Namespace, old: &Namespace) {
        let old_finalizers = old.spec.as_ref().and_then(|s| s.finalizers.clone());
        match (&mut new.spec, old_finalizers) {
            (Some(spec), f) => spec.finalizers = f,
            (None, Some(f)) => {
                new.spec = Some(NamespaceSpec {
                    finalizers: Some(f),
                })
            }
            (None, None) => {}
        }
        new.status = old.status.clone();
        set_name_label(new);
    }

    /// `namespaceStrategy.ValidateUpdate` → `ValidateNamespace(new)` (plus
    /// `ValidateNamespaceUpdate`, which is `ValidateObjectMetaUpdate`: the host's).
    fn validate_update(new: &Namespace, _old: &Namespace) -> ErrorList {
        validate_namespace(new)
    }

    /// `namespaceStatusStrategy.PrepareForUpdate`: the spec stays the stored one (the SDK has
    /// already kept everything but `status` from `old`). An empty phase is defaulted to
    /// `Active`, as `SetDefaults_NamespaceStatus` does when the request is decoded.
    fn prepare_for_status_update(new: &mut Namespace, old: &Namespace) {
        new.spec = old.spec.clone();
        let status = new.status.get_or_insert_with(NamespaceStatus::default);
        if status.phase.as_deref().unwrap_or_default().is_empty() {
            status.phase = Some(PHASE_ACTIVE.into());
        }
    }

    /// `namespaceStatusStrategy.ValidateUpdate` → `ValidateNamespaceStatusUpdate`.
    fn validate_status_update(new: &Namespace, _old: &Namespace) -> ErrorList {
        validate_namespace_status_update(new)
    }

    /// `GetAttrs` / `NamespaceToSelectableFields`: the labels, `status.phase`, and the legacy
    /// `name` field (= `metadata.name`).
    fn get_attrs(obj: &Value) -> Attributes {
        let mut attrs = wasm_apiserver_sdk::glue::default_attrs(obj, &["status.phase".to_string()]);
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        attrs.fields.push(("name".into(), name.into()));
        attrs
    }
}

export_strategy!(Namespaces);

/// `SetDefaults_Namespace` (pkg/apis/core/v1/defaults.go) and `Canonicalize`
/// (pkg/registry/core/namespace/strategy.go): `labels[kubernetes.io/metadata.name] = name`,
/// overriding whatever the client put there. Nothing is done for a nameless object.
fn set_name_label(ns: &mut Namespace) {
    let Some(name) = ns.metadata.name.clone().filter(|n| !n.is_empty()) else {
        return;
    };
    ns.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(LABEL_METADATA_NAME.into(), name);
}

/// `ValidateNamespace` (pkg/apis/core/validation/validation.go): the name is a DNS-1123 label
/// (`ValidateNamespaceName = NameIsDNSLabel`), and each of `spec.finalizers` is a valid
/// finalizer name (`validateFinalizerName`, reported at `spec.finalizers` as kube-apiserver
/// does, without an index).
pub fn validate_namespace(ns: &Namespace) -> ErrorList {
    let mut errs = validation::validate_name(
        ns.metadata.name.as_deref().unwrap_or_default(),
        NameRule::Dns1123Label,
        &Path::new("metadata").child("name"),
    );
    let path = Path::new("spec").child("finalizers");
    for f in ns.spec.iter().flat_map(|s| s.finalizers.iter().flatten()) {
        errs.extend(validate_finalizer_name(f, &path));
    }
    errs
}

/// `validateFinalizerName` (pkg/apis/core/validation/validation.go): apimachinery's
/// `ValidateFinalizerName` (a qualified name) and `validateKubeFinalizerName` (a name without a
/// `/` must be a standard finalizer name).
pub fn validate_finalizer_name(name: &str, path: &Path) -> ErrorList {
    let mut errs: ErrorList = validation::is_qualified_name(name)
        .into_iter()
        .map(|msg| field::invalid(path, name, msg))
        .collect();
    if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
        errs.push(field::invalid(
            path,
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    errs
}

/// `ValidateNamespaceStatusUpdate` (pkg/apis/core/validation/validation.go): without a
/// `deletionTimestamp` the phase must be `Active`, with one it must be `Terminating`. The path
/// is `status.Phase`, capitalised as kube-apiserver prints it. (`ValidateObjectMetaUpdate` is
/// the host's.)
pub fn validate_namespace_status_update(ns: &Namespace) -> ErrorList {
    let phase = ns
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default();
    let path = Path::new("status").child("Phase");
    if ns.metadata.deletion_timestamp.is_none() {
        if phase != PHASE_ACTIVE {
            return vec![field::invalid(
                &path,
                phase,
                "may only be 'Active' if `deletionTimestamp` is empty",
            )];
        }
    } else if phase != PHASE_TERMINATING {
        return vec![field::invalid(
            &path,
            phase,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )];
    }
    Vec::new()
}

/// `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`, shortened.
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the \
     server time when this object was created.";

/// The OpenAPI v3 schema of `io.k8s.api.core.v1.Namespace` (descriptions from
/// staging/src/k8s.io/api/core/v1/types.go).
fn schema() -> Value {
    json!({
        "type": "object",
        "description": "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
        "properties": {
            "apiVersion": {
                "type": "string",
                "description": "APIVersion defines the versioned schema of this representation of an object."
            },
            "kind": {
                "type": "string",
                "description": "Kind is a string value representing the REST resource this object represents."
            },
            "metadata": {
                "type": "object",
                "description": "Standard object's metadata."
            },
            "spec": {
                "type": "object",
                "description": "Spec defines the behavior of the Namespace.",
                "properties": {
                    "finalizers": {
                        "type": "array",
                        "description": "Finalizers is an opaque list of values that must be empty to permanently remove object from storage.",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "atomic"
                    }
                }
            },
            "status": {
                "type": "object",
                "description": "Status describes the current status of a Namespace.",
                "properties": {
                    "phase": {
                        "type": "string",
                        "description": "Phase is the current lifecycle phase of the namespace.",
                        "enum": [PHASE_ACTIVE, PHASE_TERMINATING]
                    },
                    "conditions": {
                        "type": "array",
                        "description": "Represents the latest available observations of a namespace's current state.",
                        "items": {
                            "type": "object",
                            "description": "NamespaceCondition contains details about state of namespace.",
                            "required": ["type", "status"],
                            "properties": {
                                "type": {"type": "string", "description": "Type of namespace controller condition."},
                                "status": {"type": "string", "description": "Status of the condition, one of True, False, Unknown."},
                                "lastTransitionTime": {"type": "string", "format": "date-time", "description": "Last time the condition transitioned from one status to another."},
                                "reason": {"type": "string", "description": "Unique, one-word, CamelCase reason for the condition's last transition."},
                                "message": {"type": "string", "description": "Human-readable message indicating details about last transition."}
                            }
                        },
                        "x-kubernetes-list-map-keys": ["type"],
                        "x-kubernetes-list-type": "map"
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::testing::{self, Outcome};
    use wasm_apiserver_sdk::ErrorType;

    fn ns(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    }

    fn kinds(out: &Outcome) -> Vec<(ErrorType, String)> {
        out.errors
            .iter()
            .map(|e| (e.error_type, e.field.clone()))
            .collect()
    }

    fn stored(name: &str) -> Value {
        let out = testing::create::<Namespaces>(ns(name));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        out.object
    }

    #[test]
    fn describe_matches_kube_apiserver() {
        let d = Namespaces::describe();
        assert_eq!((d.group.as_str(), d.version.as_str()), ("", "v1"));
        assert_eq!(
            (d.kind.as_str(), d.plural.as_str()),
            ("Namespace", "namespaces")
        );
        assert_eq!(d.list_kind, "NamespaceList");
        assert_eq!(d.singular, "namespace");
        assert_eq!(d.short_names, vec!["ns"]);
        assert!(!d.namespaced);
        assert_eq!(d.subresources, vec!["status"]);
        let cols: Vec<(&str, &str)> = d
            .printer_columns
            .iter()
            .map(|c| (c.name.as_str(), c.json_path.as_str()))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Name", "@name"),
                ("Status", ".status.phase"),
                ("Age", "@age")
            ]
        );
        assert!(!Namespaces::allow_create_on_update());
        assert!(Namespaces::allow_unconditional_update());
    }

    #[test]
    fn example_is_valid() {
        let out = testing::create::<Namespaces>(Namespaces::describe().example.unwrap());
        assert!(out.errors.is_empty(), "{:?}", out.errors);
    }

    #[test]
    fn create_sets_active_kubernetes_finalizer_and_name_label() {
        let mut v = ns("team-a");
        v["status"] = json!({"phase": "Terminating"});
        v["metadata"]["labels"] = json!({"kubernetes.io/metadata.name": "other", "app": "x"});
        let out = testing::create::<Namespaces>(v);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert!(out.warnings.is_empty());
        assert_eq!(out.object["status"], json!({"phase": "Active"}));
        assert_eq!(out.object["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(
            out.object["metadata"]["labels"],
            json!({"kubernetes.io/metadata.name": "team-a", "app": "x"})
        );
        assert!(out.object["metadata"].get("generation").is_none());
    }

    #[test]
    fn create_appends_kubernetes_finalizer_once() {
        let mut v = ns("a");
        v["spec"] = json!({"finalizers": ["example.com/cleanup"]});
        let out = testing::create::<Namespaces>(v);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(
            out.object["spec"]["finalizers"],
            json!(["example.com/cleanup", "kubernetes"])
        );
        let mut v = ns("a");
        v["spec"] = json!({"finalizers": ["kubernetes", "example.com/cleanup"]});
        let out = testing::create::<Namespaces>(v);
        assert_eq!(
            out.object["spec"]["finalizers"],
            json!(["kubernetes", "example.com/cleanup"])
        );
    }

    #[test]
    fn name_must_be_a_dns_label() {
        for bad in ["a.b", "Team", "-a", &"x".repeat(64)] {
            let out = testing::create::<Namespaces>(ns(bad));
            assert_eq!(
                kinds(&out),
                vec![(ErrorType::Invalid, "metadata.name".to_string())],
                "{bad}"
            );
        }
        assert!(testing::create::<Namespaces>(ns(&"x".repeat(63)))
            .errors
            .is_empty());
    }

    #[test]
    fn finalizers_must_be_standard_or_qualified() {
        let mut v = ns("a");
        v["spec"] = json!({"finalizers": ["orphan", "example.com/x", "custom", "bad/Na me"]});
        let out = testing::create::<Namespaces>(v);
        let errs = kinds(&out);
        assert!(!errs.is_empty());
        assert!(
            errs.iter()
                .all(|e| *e == (ErrorType::Invalid, "spec.finalizers".to_string())),
            "{errs:?}"
        );
        let bad: Vec<&Value> = out
            .errors
            .iter()
            .filter_map(|e| e.bad_value.as_ref())
            .collect();
        assert!(bad.contains(&&json!("custom")));
        assert!(bad.contains(&&json!("bad/Na me")));
        assert!(!bad.contains(&&json!("orphan")));
        assert!(!bad.contains(&&json!("example.com/x")));
        let e = out
            .errors
            .iter()
            .find(|e| e.bad_value == Some(json!("custom")))
            .unwrap();
        assert_eq!(
            e.detail,
            "name is neither a standard finalizer name nor is it fully qualified"
        );
    }

    #[test]
    fn update_keeps_finalizers_and_status() {
        let old = stored("a");
        let mut new = old.clone();
        new["spec"] = json!({"finalizers": []});
        new["status"] = json!({"phase": "Terminating"});
        new["metadata"]["labels"] = json!({"team": "x"});
        let out = testing::update::<Namespaces>(new, old);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(out.object["status"]["phase"], "Active");
        assert_eq!(
            out.object["metadata"]["labels"],
            json!({"team": "x", "kubernetes.io/metadata.name": "a"})
        );
        // A request without a spec gets the stored finalizers back too.
        let old = stored("a");
        let mut new = old.clone();
        new.as_object_mut().unwrap().remove("spec");
        let out = testing::update::<Namespaces>(new, old);
        assert_eq!(out.object["spec"]["finalizers"], json!(["kubernetes"]));
    }

    #[test]
    fn update_validates_the_new_object() {
        let mut old = stored("a");
        old["spec"] = json!({"finalizers": ["custom"]});
        // The stored finalizers are kept, and still validated as ValidateNamespace does.
        let out = testing::update::<Namespaces>(old.clone(), old);
        assert_eq!(
            kinds(&out),
            vec![(ErrorType::Invalid, "spec.finalizers".to_string())]
        );
    }

    #[test]
    fn status_update_takes_only_status() {
        let old = stored("a");
        let mut new = old.clone();
        new["spec"] = json!({"finalizers": []});
        new["metadata"]["labels"] = json!({"team": "x"});
        new["status"] = json!({"phase": "Active", "conditions": [
            {"type": "NamespaceDeletionDiscoveryFailure", "status": "False"}]});
        let out = testing::update_status::<Namespaces>(new, old);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(
            out.object["metadata"]["labels"],
            json!({"kubernetes.io/metadata.name": "a"})
        );
        assert_eq!(out.object["status"]["conditions"][0]["status"], "False");
    }

    #[test]
    fn status_phase_follows_deletion_timestamp() {
        let old = stored("a");
        // No deletionTimestamp: only Active.
        for bad in ["Terminating", "Sleeping"] {
            let mut new = old.clone();
            new["status"] = json!({"phase": bad});
            let out = testing::update_status::<Namespaces>(new, old.clone());
            assert_eq!(
                kinds(&out),
                vec![(ErrorType::Invalid, "status.Phase".to_string())]
            );
            assert_eq!(
                out.errors[0].detail,
                "may only be 'Active' if `deletionTimestamp` is empty"
            );
        }
        // An empty phase is defaulted to Active.
        let mut new = old.clone();
        new["status"] = json!({});
        let out = testing::update_status::<Namespaces>(new, old.clone());
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["status"]["phase"], "Active");
        // Being deleted: only Terminating.
        let mut deleting = old.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        let mut new = deleting.clone();
        new["status"] = json!({"phase": "Active"});
        let out = testing::update_status::<Namespaces>(new, deleting.clone());
        assert_eq!(
            kinds(&out),
            vec![(ErrorType::Invalid, "status.Phase".to_string())]
        );
        let mut new = deleting.clone();
        new["status"] = json!({"phase": "Terminating"});
        let out = testing::update_status::<Namespaces>(new, deleting);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["status"]["phase"], "Terminating");
    }

    #[test]
    fn attrs_have_phase_and_legacy_name() {
        let obj = stored("a");
        let a = wasm_apiserver_sdk::glue::get_attrs::<Namespaces>(&obj.to_string()).unwrap();
        assert_eq!(
            a.labels,
            vec![(LABEL_METADATA_NAME.to_string(), "a".to_string())]
        );
        assert_eq!(
            a.fields,
            vec![
                ("status.phase".to_string(), "Active".to_string()),
                ("name".to_string(), "a".to_string())
            ]
        );
    }

    #[test]
    fn fixtures() {
        wasm_apiserver_sdk::testing::run_fixtures::<Namespaces>(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures"
        ));
    }
}

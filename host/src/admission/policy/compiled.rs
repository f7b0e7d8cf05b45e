//! A ValidatingAdmissionPolicy and its bindings compiled once, when they are written or seen:
//! the expressions (`matchConditions`, `variables`, `validations` with their
//! `messageExpression`s) type-checked with the CEL crate against kube's admission variables
//! (`object`, `oldObject`, `request`, `params`, `namespaceObject`, `variables`,
//! `authorizer`), the match rules parsed. Write-time validation ([`validate_policy`],
//! [`validate_binding`]) reports the same compile errors as field errors with kube's texts
//! (`k8s.io/kubernetes/pkg/apis/admissionregistration/validation/validation.go`); a policy
//! that still fails to compile (a later CEL library, a stored object) is a configuration
//! error decided by its `failurePolicy` when a request matches it, as kube's validator does.

use super::matching::MatchResources;
use super::params::{ParamKind, ParamRef};
use serde_json::Value;
use std::sync::Arc;
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::labels::LabelSelector;
use wasm_apiserver_apimachinery::FieldError;
use wasm_apiserver_cel::environment::{admission, expect_output};
use wasm_apiserver_cel::{Expression, Type};

/// The `reason`s a validation may give (validation.go `supportedValidationReason`) and the
/// code each answers with (dispatcher.go `reasonToCode`).
pub const REASONS: [(&str, u16); 4] = [
    ("Unauthorized", 401),
    ("Forbidden", 403),
    ("Invalid", 422),
    ("RequestEntityTooLarge", 413),
];

/// One `validations` entry.
pub struct Validation {
    /// The expression's text (for the `failed expression: …` message).
    pub source: String,
    pub expression: Expression,
    pub message: Option<String>,
    pub message_expression: Option<Expression>,
    /// `Invalid` when not given.
    pub reason: &'static str,
}

/// A compiled ValidatingAdmissionPolicy.
pub struct CompiledPolicy {
    pub name: String,
    /// `failurePolicy: Ignore` (the default is `Fail`).
    pub ignore_failures: bool,
    pub match_constraints: MatchResources,
    pub match_conditions: Vec<(String, Expression)>,
    pub variables: Vec<(String, Expression)>,
    pub validations: Vec<Validation>,
    /// Why the policy cannot be evaluated (the first compile error), decided by
    /// `failurePolicy` for every request it matches.
    pub error: Option<String>,
    /// `spec.paramKind`.
    pub param_kind: Option<ParamKind>,
    /// `spec.auditAnnotations`: each key with its `valueExpression` (a string or null).
    pub audit_annotations: Vec<(String, String, Expression)>,
}

impl CompiledPolicy {
    /// The most one evaluation can cost, in CEL cost units: the static estimates' maxima of
    /// every expression summed (`u64::MAX` when one has none).
    pub fn estimated_max_cost(&self) -> u64 {
        self.expressions().fold(0u64, |sum, e| {
            sum.saturating_add(e.estimated_cost().map_or(u64::MAX, |c| c.max))
        })
    }

    /// How many expressions one evaluation may run.
    pub fn expression_count(&self) -> usize {
        self.expressions().count()
    }

    fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.match_conditions
            .iter()
            .chain(&self.variables)
            .map(|(_, e)| e)
            .chain(
                self.validations
                    .iter()
                    .flat_map(|v| std::iter::once(&v.expression).chain(&v.message_expression)),
            )
            .chain(self.audit_annotations.iter().map(|(_, _, e)| e))
    }
}

/// A compiled ValidatingAdmissionPolicyBinding (or MutatingAdmissionPolicyBinding: no
/// actions).
pub struct CompiledBinding {
    pub name: String,
    pub policy_name: String,
    pub match_resources: MatchResources,
    /// `Deny`, `Warn`, `Audit`.
    pub deny: bool,
    pub warn: bool,
    pub audit: bool,
    /// Why the binding cannot be used (its match resources do not parse).
    pub error: Option<String>,
    /// `spec.paramRef`.
    pub param_ref: Option<ParamRef>,
    /// `spec.validationActions` as written (for the `Audit` annotation).
    pub actions: Vec<String>,
}

/// `spec.paramKind`, when set.
pub(super) fn param_kind(spec: &Value) -> Option<ParamKind> {
    let k = spec.get("paramKind").filter(|k| k.is_object())?;
    Some(ParamKind {
        api_version: str_at(k, "apiVersion").to_string(),
        kind: str_at(k, "kind").to_string(),
    })
}

/// `spec.paramRef`, when set.
pub(super) fn param_ref(spec: &Value) -> Option<ParamRef> {
    let r = spec.get("paramRef").filter(|r| r.is_object())?;
    Some(ParamRef {
        name: str_at(r, "name").to_string(),
        namespace: str_at(r, "namespace").to_string(),
        selector: r.get("selector").filter(|s| s.is_object()).cloned(),
        deny_not_found: str_at(r, "parameterNotFoundAction") == "Deny",
    })
}

/// validation.go `validateAuditAnnotation`: each key unique and, prefixed with the policy's
/// name, a qualified name; a value expression (its compilation is `compile_policy`'s).
fn validate_audit_annotations(obj: &Value, spec: &Value, root: &Path, errs: &mut Vec<FieldError>) {
    let name = wasm_apiserver_apimachinery::meta::accessor(obj).name();
    let mut keys: Vec<&str> = Vec::new();
    for (i, a) in spec["auditAnnotations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = root.child("auditAnnotations").index(i);
        let key = str_at(a, "key");
        if key.is_empty() {
            errs.push(field::required(&p.child("key"), ""));
        } else if keys.contains(&key) {
            errs.push(field::duplicate(&p.child("key"), key));
        } else if !name.is_empty() {
            let full = format!("{name}/{key}");
            for msg in wasm_apiserver_apimachinery::validation::is_qualified_name(&full) {
                errs.push(field::invalid(&p.child("key"), &full, msg));
            }
        }
        keys.push(key);
        let value = str_at(a, "valueExpression").trim();
        if value.is_empty() {
            errs.push(field::required(
                &p.child("valueExpression"),
                "valueExpression is not specified",
            ));
        } else if value.len() > 5 * 1024 {
            errs.push(field::too_long(
                &p.child("valueExpression"),
                "<value omitted>",
                5 * 1024,
            ));
        }
    }
}

/// validation.go `validateParamKind`.
pub(super) fn validate_param_kind(spec: &Value, root: &Path, errs: &mut Vec<FieldError>) {
    let Some(k) = spec.get("paramKind").filter(|k| !k.is_null()) else {
        return;
    };
    let p = root.child("paramKind");
    let api_version = str_at(k, "apiVersion");
    if api_version.is_empty() {
        errs.push(field::required(&p.child("apiVersion"), ""));
    } else {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        if !group.is_empty() {
            let e = wasm_apiserver_apimachinery::validation::is_dns1123_subdomain(group);
            if !e.is_empty() {
                errs.push(field::invalid(&p.child("apiVersion"), group, e.join(",")));
            }
        }
        if version.is_empty() {
            errs.push(field::invalid(
                &p.child("apiVersion"),
                api_version,
                "version must be specified",
            ));
        } else {
            let e = wasm_apiserver_apimachinery::validation::is_dns1035_label(version);
            if !e.is_empty() {
                errs.push(field::invalid(&p.child("apiVersion"), version, e.join(",")));
            }
        }
    }
    let kind = str_at(k, "kind");
    if kind.is_empty() {
        errs.push(field::required(&p.child("kind"), ""));
    } else if !wasm_apiserver_apimachinery::validation::is_dns1035_label(&kind.to_lowercase())
        .is_empty()
    {
        errs.push(field::invalid(
            &p.child("kind"),
            kind,
            "kind must be valid when converted to lowercase",
        ));
    }
}

/// validation.go `validateParamRef`.
pub(super) fn validate_param_ref(spec: &Value, root: &Path, errs: &mut Vec<FieldError>) {
    let Some(r) = spec.get("paramRef").filter(|r| !r.is_null()) else {
        return;
    };
    let p = root.child("paramRef");
    let name = str_at(r, "name");
    let selector = r.get("selector").filter(|s| !s.is_null());
    if !name.is_empty() {
        for bad in [".", ".."] {
            if name == bad {
                errs.push(field::invalid(
                    &p.child("name"),
                    name,
                    format!("may not be '{bad}'"),
                ));
            }
        }
        for c in ["/", "%"] {
            if name.contains(c) {
                errs.push(field::invalid(
                    &p.child("name"),
                    name,
                    format!("may not contain '{c}'"),
                ));
            }
        }
        if selector.is_some() {
            errs.push(field::forbidden(
                &p.child("name"),
                "name and selector are mutually exclusive",
            ));
        }
    }
    let namespace = str_at(r, "namespace");
    if !namespace.is_empty() {
        let e = wasm_apiserver_apimachinery::validation::is_dns1123_label(namespace);
        if !e.is_empty() {
            errs.push(field::invalid(
                &p.child("namespace"),
                namespace,
                e.join(","),
            ));
        }
    }
    match str_at(r, "parameterNotFoundAction") {
        "" => errs.push(field::required(&p.child("parameterNotFoundAction"), "")),
        "Deny" | "Allow" => {}
        other => errs.push(field::not_supported(
            &p.child("parameterNotFoundAction"),
            other,
            &["Deny", "Allow"],
        )),
    }
    if let Some(s) = selector {
        if !s.is_object() || LabelSelector::from_metav1(s).is_none() {
            errs.push(field::invalid(
                &p.child("selector"),
                s,
                "must be a valid label selector",
            ));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(field::required(
            &p,
            "one of name or selector must be specified",
        ));
    }
}

pub(crate) fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn compile_errors(path: &Path, source: &str, e: impl std::fmt::Display) -> FieldError {
    field::invalid(path, source, format!("compilation failed: {e}"))
}

/// A bool expression with `vars` declared, or `None` and its error in `errs`.
pub(crate) fn compile_bool(
    path: &Path,
    source: &str,
    vars: &[(&str, Type)],
    errs: &mut Vec<FieldError>,
) -> Option<Expression> {
    let checked = Expression::compile_checked(source, &admission(vars)).and_then(|e| {
        expect_output(&e, &Type::Bool, "cel expression must evaluate to a bool").map(|_| e)
    });
    checked
        .map_err(|e| errs.push(compile_errors(path, source, e)))
        .ok()
}

/// The variables' names and types as an environment declares them
/// ([`wasm_apiserver_cel::environment::admission`]).
pub(super) fn declared(types: &[(String, Type)]) -> Vec<(&str, Type)> {
    types.iter().map(|(n, t)| (n.as_str(), t.clone())).collect()
}

/// What both kinds of policy compile alike: `matchConstraints`, `matchConditions` (each a
/// bool) and `variables` (typed in order, each usable by the later ones).
pub(super) struct Common {
    pub match_constraints: MatchResources,
    pub match_conditions: Vec<(String, Expression)>,
    pub variables: Vec<(String, Expression)>,
    /// The variables' names and types, as later expressions declare them.
    pub types: Vec<(String, Type)>,
}

/// Compile what both kinds of policy share ([`Common`]). Errors go to `errs`.
pub(super) fn compile_common(spec: &Value, root: &Path, errs: &mut Vec<FieldError>) -> Common {
    let match_constraints =
        MatchResources::parse(spec.get("matchConstraints")).unwrap_or_else(|e| {
            errs.push(field::invalid(&root.child("matchConstraints"), "", e));
            MatchResources::default()
        });
    let mut match_conditions = Vec::new();
    for (i, c) in spec["matchConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = root.child("matchConditions").index(i).child("expression");
        let source = str_at(c, "expression");
        if let Some(e) = compile_bool(&p, source, &[], errs) {
            match_conditions.push((str_at(c, "name").to_string(), e));
        }
    }
    let mut variables: Vec<(String, Expression)> = Vec::new();
    let mut types: Vec<(String, Type)> = Vec::new();
    for (i, v) in spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = root.child("variables").index(i).child("expression");
        let source = str_at(v, "expression");
        match Expression::compile_checked(source, &admission(&declared(&types))) {
            Ok(e) => {
                let t = e.checked().map(|c| c.output.clone()).unwrap_or(Type::Dyn);
                types.push((str_at(v, "name").to_string(), t));
                variables.push((str_at(v, "name").to_string(), e));
            }
            Err(e) => errs.push(compile_errors(&p, source, e)),
        }
    }
    Common {
        match_constraints,
        match_conditions,
        variables,
        types,
    }
}

/// What validation.go checks alike for both kinds of policy: a `failurePolicy` of `Fail` or
/// `Ignore`; `matchConstraints` with `resourceRules`, each naming operations, groups,
/// versions and resources; named variables and match conditions; `paramKind`.
pub(super) fn validate_policy_common(spec: &Value, root: &Path, errs: &mut Vec<FieldError>) {
    match spec.get("failurePolicy").and_then(Value::as_str) {
        None | Some("Fail") | Some("Ignore") => {}
        Some(other) => errs.push(field::not_supported(
            &root.child("failurePolicy"),
            other,
            &["Fail", "Ignore"],
        )),
    }
    let mc = root.child("matchConstraints");
    match spec.get("matchConstraints").filter(|m| m.is_object()) {
        None => errs.push(field::required(&mc, "")),
        Some(m) => match m.get("resourceRules").and_then(Value::as_array) {
            None => errs.push(field::required(&mc.child("resourceRules"), "")),
            Some(rules) if rules.is_empty() => {
                errs.push(field::required(&mc.child("resourceRules"), ""))
            }
            Some(rules) => {
                for (i, r) in rules.iter().enumerate() {
                    let p = mc.child("resourceRules").index(i);
                    for key in ["operations", "apiGroups", "apiVersions", "resources"] {
                        if r[key].as_array().is_none_or(Vec::is_empty) {
                            errs.push(field::required(&p.child(key), ""));
                        }
                    }
                }
            }
        },
    }
    for (key, what) in [("variables", "name"), ("matchConditions", "name")] {
        for (i, v) in spec[key].as_array().into_iter().flatten().enumerate() {
            if str_at(v, what).is_empty() {
                errs.push(field::required(&root.child(key).index(i).child(what), ""));
            }
        }
    }
    validate_param_kind(spec, root, errs);
}

/// Compile the policy `obj` (its `spec`). The errors are those [`validate_policy`] reports.
pub fn compile_policy(obj: &Value) -> (CompiledPolicy, Vec<FieldError>) {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let root = Path::new("spec");
    let mut errs = Vec::new();
    let Common {
        match_constraints,
        match_conditions,
        variables,
        types,
    } = compile_common(spec, &root, &mut errs);
    let declared = declared(&types);
    let mut validations = Vec::new();
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = root.child("validations").index(i);
        let source = str_at(v, "expression");
        let expression = compile_bool(&p.child("expression"), source, &declared, &mut errs);
        let message_expression = match v.get("messageExpression").and_then(Value::as_str) {
            None | Some("") => None,
            Some(m) => {
                let path = p.child("messageExpression");
                let checked = Expression::compile_checked(m, &admission(&declared)).and_then(|e| {
                    expect_output(&e, &Type::STRING, "must evaluate to string").map(|_| e)
                });
                match checked {
                    Ok(e) => Some(e),
                    Err(e) => {
                        errs.push(compile_errors(&path, m, e));
                        None
                    }
                }
            }
        };
        let reason = match v.get("reason").and_then(Value::as_str) {
            None => "Invalid",
            Some(r) => match REASONS.iter().find(|(n, _)| *n == r) {
                Some((n, _)) => n,
                None => {
                    let supported: Vec<&str> = REASONS.iter().map(|(n, _)| *n).collect();
                    errs.push(field::not_supported(&p.child("reason"), r, &supported));
                    "Invalid"
                }
            },
        };
        if let Some(expression) = expression {
            validations.push(Validation {
                source: source.to_string(),
                expression,
                message: v.get("message").and_then(Value::as_str).map(str::to_string),
                message_expression,
                reason,
            });
        }
    }
    let mut audit_annotations = Vec::new();
    for (i, a) in spec["auditAnnotations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = root
            .child("auditAnnotations")
            .index(i)
            .child("valueExpression");
        let source = str_at(a, "valueExpression");
        if source.trim().is_empty() {
            continue; // validate_policy's
        }
        let compiled = Expression::compile_checked(source, &admission(&declared)).and_then(|e| {
            match e.checked().map(|c| &c.output) {
                None | Some(Type::String(_)) | Some(Type::Null) | Some(Type::Dyn) => Ok(e),
                Some(other) => Err(wasm_apiserver_cel::CompileError(format!(
                    "must evaluate to one of [string null_type], got {other}"
                ))),
            }
        });
        match compiled {
            Ok(e) => audit_annotations.push((str_at(a, "key").to_string(), source.to_string(), e)),
            Err(e) => errs.push(compile_errors(&p, source, e)),
        }
    }
    let error = errs.first().map(|e| e.to_string());
    let policy = CompiledPolicy {
        name: wasm_apiserver_apimachinery::meta::accessor(obj)
            .name()
            .to_string(),
        ignore_failures: str_at(spec, "failurePolicy") == "Ignore",
        match_constraints,
        match_conditions,
        variables,
        validations,
        error,
        param_kind: param_kind(spec),
        audit_annotations,
    };
    (policy, errs)
}

/// validation.go `ValidateValidatingAdmissionPolicy`, the rules this server enforces: a
/// `failurePolicy` of `Fail` or `Ignore`; `matchConstraints` with `resourceRules`, each
/// naming operations, groups, versions and resources; at least one validation (audit
/// annotations are not served yet); every expression compiling to its type; supported
/// `reason`s; named variables and match conditions.
pub fn validate_policy(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let root = Path::new("spec");
    let mut errs = Vec::new();
    validate_policy_common(spec, &root, &mut errs);
    if spec["validations"].as_array().is_none_or(Vec::is_empty)
        && spec["auditAnnotations"]
            .as_array()
            .is_none_or(Vec::is_empty)
    {
        errs.push(field::required(
            &root.child("validations"),
            "validations or auditAnnotations must contain at least one item",
        ));
    }
    validate_audit_annotations(obj, spec, &root, &mut errs);
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if str_at(v, "expression").is_empty() {
            errs.push(field::required(
                &root.child("validations").index(i).child("expression"),
                "",
            ));
        }
    }
    let (_, compile) = compile_policy(obj);
    errs.extend(compile);
    errs
}

/// Compile the binding `obj`.
pub fn compile_binding(obj: &Value) -> CompiledBinding {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let actions: Vec<&str> = spec["validationActions"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let (match_resources, error) = match MatchResources::parse(spec.get("matchResources")) {
        Ok(m) => (m, None),
        Err(e) => (MatchResources::default(), Some(e)),
    };
    CompiledBinding {
        name: wasm_apiserver_apimachinery::meta::accessor(obj)
            .name()
            .to_string(),
        policy_name: str_at(spec, "policyName").to_string(),
        match_resources,
        deny: actions.contains(&"Deny"),
        warn: actions.contains(&"Warn"),
        audit: actions.contains(&"Audit"),
        error,
        param_ref: param_ref(spec),
        actions: actions.iter().map(|a| a.to_string()).collect(),
    }
}

/// validation.go `ValidateValidatingAdmissionPolicyBinding`: `policyName` required;
/// `validationActions` required, unique, among `Deny`, `Warn`, `Audit`, and not both `Deny`
/// and `Warn`; `paramRef` as `validateParamRef`.
pub fn validate_binding(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let root = Path::new("spec");
    let mut errs = Vec::new();
    if str_at(spec, "policyName").is_empty() {
        errs.push(field::required(&root.child("policyName"), ""));
    }
    let p = root.child("validationActions");
    let actions = spec["validationActions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if actions.is_empty() {
        errs.push(field::required(
            &p,
            "at least one validation action is required",
        ));
    }
    let mut seen = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let a = a.as_str().unwrap_or("");
        if seen.contains(&a) {
            errs.push(field::duplicate(&p.index(i), a));
        } else if !["Deny", "Warn", "Audit"].contains(&a) {
            errs.push(field::not_supported(
                &p.index(i),
                a,
                &["Audit", "Deny", "Warn"],
            ));
        }
        seen.push(a);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(field::invalid(
            &p,
            &actions,
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    validate_param_ref(spec, &root, &mut errs);
    if let Err(e) = MatchResources::parse(spec.get("matchResources")) {
        errs.push(field::invalid(&root.child("matchResources"), "", e));
    }
    errs
}

/// A policy compiled, shared.
pub type SharedPolicy = Arc<CompiledPolicy>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(spec: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": spec})
    }

    #[test]
    fn policies_and_bindings_are_validated_with_kube_s_texts() {
        let errs = |v: Vec<FieldError>| v.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        assert_eq!(
            errs(validate_policy(&policy(json!({"failurePolicy": "Maybe"})))),
            [
                "spec.failurePolicy: Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\"",
                "spec.matchConstraints: Required value",
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
            ]
        );
        let rules = json!({"resourceRules": [{"operations": ["*"], "apiGroups": ["*"],
            "apiVersions": ["*"], "resources": ["*"]}]});
        let got = errs(validate_policy(&policy(json!({"matchConstraints": rules,
            "validations": [{"expression": "object.x", "reason": "Teapot"},
                            {"expression": "true", "messageExpression": "1"}]}))));
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("spec.validations[0].expression: Invalid value: \"object.x\": compilation failed: cel expression must evaluate to a bool"), "{got:?}");
        assert!(
            got[1].starts_with("spec.validations[0].reason: Unsupported value: \"Teapot\""),
            "{got:?}"
        );
        assert!(got[2].starts_with("spec.validations[1].messageExpression: Invalid value: \"1\": compilation failed: must evaluate to string"), "{got:?}");
        // Variables are typed in order and usable by later expressions.
        let ok = policy(json!({"matchConstraints": rules, "variables": [
            {"name": "n", "expression": "size(object.metadata.name)"},
            {"name": "long", "expression": "variables.n > 3"}],
            "validations": [{"expression": "!variables.long"}]}));
        assert_eq!(errs(validate_policy(&ok)), Vec::<String>::new());
        let (compiled, _) = compile_policy(&ok);
        assert_eq!(
            (compiled.variables.len(), compiled.validations.len()),
            (2, 1)
        );

        // auditAnnotations alone suffice; keys unique and qualified with the policy's name;
        // a value expression is a string or null.
        let got = errs(validate_policy(&policy(json!({"matchConstraints": rules,
            "auditAnnotations": [{"key": "k", "valueExpression": "'v'"},
                                 {"key": "k", "valueExpression": "'w'"},
                                 {"key": "bad key", "valueExpression": "1"}]}))));
        assert!(
            got[0].starts_with("spec.auditAnnotations[1].key: Duplicate value: \"k\""),
            "{got:?}"
        );
        assert!(
            got[1].starts_with("spec.auditAnnotations[2].key: Invalid value: \"p/bad key\""),
            "{got:?}"
        );
        assert!(
            got.last()
                .unwrap()
                .contains("must evaluate to one of [string null_type], got int"),
            "{got:?}"
        );

        let binding = |spec: Value| json!({"metadata": {"name": "b"}, "spec": spec});
        assert_eq!(
            errs(validate_binding(&binding(json!({"validationActions": ["Deny", "Warn", "Deny", "Log"]})))),
            [
                "spec.policyName: Required value",
                "spec.validationActions[2]: Duplicate value: \"Deny\"",
                "spec.validationActions[3]: Unsupported value: \"Log\": supported values: \"Audit\", \"Deny\", \"Warn\"",
                "spec.validationActions: Invalid value: [\"Deny\",\"Warn\",\"Deny\",\"Log\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
            ]
        );
    }
}

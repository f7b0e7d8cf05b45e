//! A MutatingAdmissionPolicy compiled once, when it is written or seen (kube's
//! `mutating/compilation.go`): its `matchConditions` and `variables` as a validating policy's,
//! each mutation's expression checked with the mutation object types
//! ([`wasm_apiserver_cel::mutation`]) — an `ApplyConfiguration` gives an `Object`, a
//! `JSONPatch` a list of `JSONPatch`. Write-time validation ([`validate_mutating_policy`],
//! [`validate_mutating_binding`]) follows kube's
//! (`k8s.io/kubernetes/pkg/apis/admissionregistration/validation/validation.go`
//! `validateMutatingAdmissionPolicySpec`, `validateMutation`,
//! `validateMutatingAdmissionPolicyBindingSpec`).

use super::super::compiled::{
    compile_common, compile_errors, param_kind, str_at, validate_param_ref, validate_policy_common,
    Common,
};
use super::super::matching::MatchResources;
use super::super::params::ParamKind;
use serde_json::Value;
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::FieldError;
use wasm_apiserver_cel::environment::admission;
use wasm_apiserver_cel::mutation::{JSON_PATCH, OBJECT};
use wasm_apiserver_cel::{CompileError, Expression, Type};

/// How a mutation changes the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    ApplyConfiguration,
    JsonPatch,
}

/// One `mutations` entry.
pub struct Mutation {
    pub patch_type: PatchType,
    /// The expression's text.
    pub source: String,
    pub expression: Expression,
}

/// A compiled MutatingAdmissionPolicy.
pub struct CompiledMutatingPolicy {
    pub name: String,
    /// `failurePolicy: Ignore` (the default is `Fail`).
    pub ignore_failures: bool,
    pub match_constraints: MatchResources,
    pub match_conditions: Vec<(String, Expression)>,
    pub variables: Vec<(String, Expression)>,
    pub mutations: Vec<Mutation>,
    /// Why the policy cannot be evaluated (the first compile error), decided by
    /// `failurePolicy` for every request it matches.
    pub error: Option<String>,
    /// `spec.paramKind`.
    pub param_kind: Option<ParamKind>,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke_if_needed: bool,
}

/// The expression of mutation `m`, and its patch type (`None`: not one of the two).
fn expression_of(m: &Value) -> Option<(PatchType, &str)> {
    match str_at(m, "patchType") {
        "ApplyConfiguration" => Some((
            PatchType::ApplyConfiguration,
            str_at(&m["applyConfiguration"], "expression"),
        )),
        "JSONPatch" => Some((PatchType::JsonPatch, str_at(&m["jsonPatch"], "expression"))),
        _ => None,
    }
}

/// Whether the checked output `t` is exactly what a mutation of `patch_type` must give (kube's
/// `compile.go` compares with `IsExactType`): an `Object`, or a list of `JSONPatch`.
fn output_ok(patch_type: PatchType, t: &Type) -> bool {
    match (patch_type, t) {
        (PatchType::ApplyConfiguration, Type::Opaque(n)) => *n == OBJECT,
        (PatchType::JsonPatch, Type::List(item, _)) => {
            matches!(&**item, Type::Opaque(n) if *n == JSON_PATCH)
        }
        _ => false,
    }
}

/// Compile the policy `obj` (its `spec`). The errors are those [`validate_mutating_policy`]
/// reports of its expressions.
pub fn compile_mutating_policy(obj: &Value) -> (CompiledMutatingPolicy, Vec<FieldError>) {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let root = Path::new("spec");
    let mut errs = Vec::new();
    let Common {
        match_constraints,
        match_conditions,
        variables,
        types,
    } = compile_common(spec, &root, &mut errs);
    let declared = super::super::compiled::declared(&types);
    let mut mutations = Vec::new();
    for (i, m) in spec["mutations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some((patch_type, source)) = expression_of(m) else {
            continue; // validate_mutating_policy's
        };
        if source.trim().is_empty() {
            continue;
        }
        let (child, want) = match patch_type {
            PatchType::ApplyConfiguration => ("applyConfiguration", "Object"),
            PatchType::JsonPatch => ("jsonPatch", "list(JSONPatch)"),
        };
        let p = root
            .child("mutations")
            .index(i)
            .child(child)
            .child("expression");
        let compiled = Expression::compile_mutation(source, &admission(&declared)).and_then(|e| {
            match e.checked().map(|c| &c.output) {
                Some(t) if !output_ok(patch_type, t) => {
                    Err(CompileError(format!("must evaluate to {want} but got {t}")))
                }
                _ => Ok(e),
            }
        });
        match compiled {
            Ok(expression) => mutations.push(Mutation {
                patch_type,
                source: source.to_string(),
                expression,
            }),
            Err(e) => errs.push(compile_errors(&p, source, e)),
        }
    }
    let policy = CompiledMutatingPolicy {
        name: wasm_apiserver_apimachinery::meta::accessor(obj)
            .name()
            .to_string(),
        ignore_failures: str_at(spec, "failurePolicy") == "Ignore",
        match_constraints,
        match_conditions,
        variables,
        mutations,
        error: errs.first().map(|e| e.to_string()),
        param_kind: param_kind(spec),
        reinvoke_if_needed: str_at(spec, "reinvocationPolicy") == "IfNeeded",
    };
    (policy, errs)
}

/// validation.go `validateMutatingAdmissionPolicySpec`, the rules this server enforces: those
/// of both kinds of policy, at least one mutation, each with a supported `patchType` and the
/// matching `applyConfiguration` or `jsonPatch` (not the other) with an expression that
/// compiles to its type, rules without `DELETE`, and a `reinvocationPolicy` (required).
pub fn validate_mutating_policy(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let root = Path::new("spec");
    let mut errs = Vec::new();
    validate_policy_common(spec, &root, &mut errs);
    let mutations = spec["mutations"].as_array().cloned().unwrap_or_default();
    if mutations.is_empty() {
        errs.push(field::required(
            &root.child("mutations"),
            "mutations must contain at least one item",
        ));
    }
    for (i, m) in mutations.iter().enumerate() {
        let p = root.child("mutations").index(i);
        let (own, other) = match str_at(m, "patchType") {
            "ApplyConfiguration" => ("applyConfiguration", "jsonPatch"),
            "JSONPatch" => ("jsonPatch", "applyConfiguration"),
            "" => {
                errs.push(field::required(&p.child("patchType"), ""));
                continue;
            }
            t => {
                errs.push(field::not_supported(
                    &p.child("patchType"),
                    t,
                    &["ApplyConfiguration", "JSONPatch"],
                ));
                continue;
            }
        };
        let patch_type = str_at(m, "patchType");
        if m.get(own).is_none_or(Value::is_null) {
            errs.push(field::required(
                &p.child(own),
                format!("must be specified when patchType is {patch_type}"),
            ));
        } else if str_at(&m[own], "expression").trim().is_empty() {
            errs.push(field::required(&p.child(own).child("expression"), ""));
        }
        if m.get(other).is_some_and(|v| !v.is_null()) {
            errs.push(field::invalid(
                &p.child(other),
                format!("{{{other}}}"),
                format!("must not be specified when patchType is {patch_type}"),
            ));
        }
    }
    // `supportedMutatingOperations`: a mutating policy has nothing to mutate on a delete.
    validate_mutating_operations(
        spec.get("matchConstraints"),
        &root.child("matchConstraints"),
        &mut errs,
    );
    match spec.get("reinvocationPolicy").and_then(Value::as_str) {
        None | Some("") => errs.push(field::required(&root.child("reinvocationPolicy"), "")),
        Some("Never") | Some("IfNeeded") => {}
        Some(other) => errs.push(field::not_supported(
            &root.child("reinvocationPolicy"),
            other,
            &["IfNeeded", "Never"],
        )),
    }
    let (_, compile) = compile_mutating_policy(obj);
    errs.extend(compile);
    errs
}

/// validation.go `supportedMutatingOperations`: each rule's operations among `*`, `CONNECT`,
/// `CREATE`, `UPDATE`.
fn validate_mutating_operations(m: Option<&Value>, root: &Path, errs: &mut Vec<FieldError>) {
    let Some(m) = m else { return };
    for rules in ["resourceRules", "excludeResourceRules"] {
        for (i, r) in m[rules].as_array().into_iter().flatten().enumerate() {
            for (j, op) in r["operations"].as_array().into_iter().flatten().enumerate() {
                let op = op.as_str().unwrap_or("");
                if !["*", "CONNECT", "CREATE", "UPDATE"].contains(&op) {
                    errs.push(field::not_supported(
                        &root.child(rules).index(i).child("operations").index(j),
                        op,
                        &["*", "CONNECT", "CREATE", "UPDATE"],
                    ));
                }
            }
        }
    }
}

/// validation.go `validateMutatingAdmissionPolicyBindingSpec`: `policyName` required and a
/// DNS subdomain; `paramRef` as a validating binding's; `matchResources` that parse.
pub fn validate_mutating_binding(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let root = Path::new("spec");
    let mut errs = Vec::new();
    let name = str_at(spec, "policyName");
    if name.is_empty() {
        errs.push(field::required(&root.child("policyName"), ""));
    } else {
        for msg in wasm_apiserver_apimachinery::validation::is_dns1123_subdomain(name) {
            errs.push(field::invalid(&root.child("policyName"), name, msg));
        }
    }
    validate_param_ref(spec, &root, &mut errs);
    validate_mutating_operations(
        spec.get("matchResources"),
        &root.child("matchResources"),
        &mut errs,
    );
    if let Err(e) = MatchResources::parse(spec.get("matchResources")) {
        errs.push(field::invalid(&root.child("matchResources"), "", e));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mutating_policies_are_validated_with_kube_s_texts() {
        let errs = |v: Vec<FieldError>| v.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        let rules = json!({"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
            "apiVersions": ["v1"], "resources": ["configmaps"]}]});
        let policy = |mutations: Value| {
            json!({"metadata": {"name": "p"},
                   "spec": {"matchConstraints": rules, "mutations": mutations,
                            "reinvocationPolicy": "Never"}})
        };
        assert_eq!(
            errs(validate_mutating_policy(&json!({"spec": {"reinvocationPolicy": "Always"}}))),
            [
                "spec.matchConstraints: Required value",
                "spec.mutations: Required value: mutations must contain at least one item",
                "spec.reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\"",
            ]
        );
        assert!(errs(validate_mutating_policy(&json!({"spec": {}})))
            .contains(&"spec.reinvocationPolicy: Required value".to_string()));
        let got = errs(validate_mutating_policy(&policy(json!([
            {"patchType": "Merge"},
            {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "1"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "Object{}"}},
        ]))));
        assert_eq!(got[0], "spec.mutations[0].patchType: Unsupported value: \"Merge\": supported values: \"ApplyConfiguration\", \"JSONPatch\"");
        assert_eq!(got[1], "spec.mutations[1].jsonPatch: Required value: must be specified when patchType is JSONPatch");
        assert_eq!(got[2], "spec.mutations[1].applyConfiguration: Invalid value: \"{applyConfiguration}\": must not be specified when patchType is JSONPatch");
        assert!(got[3].starts_with("spec.mutations[2].applyConfiguration.expression: Invalid value: \"1\": compilation failed: must evaluate to Object but got int"), "{got:?}");
        assert!(
            got[4].contains("must evaluate to list(JSONPatch) but got Object"),
            "{got:?}"
        );
        assert_eq!(got.len(), 5, "{got:?}");
        let ok = policy(json!([
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: 'add', path: '/data', value: {'k': 'v'}}]"}}]));
        assert_eq!(errs(validate_mutating_policy(&ok)), Vec::<String>::new());
        assert_eq!(compile_mutating_policy(&ok).0.mutations.len(), 2);
    }
}

//! Type checking of a ValidatingAdmissionPolicy against the schemas of the kinds it matches:
//! kube's `TypeChecker` (`k8s.io/apiserver/pkg/admission/plugin/policy/validating/
//! typechecking.go`), whose warnings the status controller writes into
//! `status.typeChecking.expressionWarnings` (`pkg/controller/validatingadmissionpolicystatus`).
//!
//! - The kinds checked ([`types_to_check`]): every group × version × resource of
//!   `matchConstraints.resourceRules` — a rule with a wildcard group or version is skipped
//!   whole, a wildcard resource or a subresource is skipped —, resolved to kinds through the
//!   served resources, sorted by group, version, kind, at most [`MAX_TYPES_TO_CHECK`].
//! - A kind without a known schema is not checked. A schema that declares no `properties`
//!   types the object as `dyn`, as kube's untyped schema does (a plugin that publishes
//!   `{"type": "object"}` says nothing about its fields; kube would type it as an object
//!   without any, and warn on every field). The object's `metadata` is kube's ObjectMeta, as
//!   the published OpenAPI has it.
//! - For each kind: `object` and `oldObject` have its schema's type, `params` the param kind's
//!   (`dyn` when unknown), the variables the types they compile to (`dyn` for one that does
//!   not compile: kube reports no error of a variable here); each `validations[i].expression`
//!   and `messageExpression` is compiled, its errors kept. The output type is not checked
//!   (kube's `ReturnTypes` is `any` here: the write-time validation did that).
//! - A warning per expression: `<group>/<version>, Kind=<kind>: <cel-go
//!   issues>\n` for each kind that failed, joined by `\n`; `fieldRef`
//!   `spec.validations[i].expression` or `.messageExpression`.

use super::compiled::{declared, str_at};
use crate::registry::ResourceMap;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use wasm_apiserver_cel::environment::admission;
use wasm_apiserver_cel::schema::schema_type;
use wasm_apiserver_cel::{Expression, Type};

/// At most this many kinds are checked per policy (`maxTypesToCheck`).
pub const MAX_TYPES_TO_CHECK: usize = 10;

/// A group, version and kind (`schema.GroupVersionKind`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl std::fmt::Display for Gvk {
    /// `GroupVersionKind.String()`: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// Where kinds and their schemas come from: kube's RESTMapper and `SchemaResolver`.
pub trait SchemaResolver {
    /// The kind served at `group`/`version`/`resource`, if any (`RESTMapper.KindsFor`).
    fn kind_for(&self, group: &str, version: &str, resource: &str) -> Option<String>;
    /// The OpenAPI v3 schema of a kind's objects, if known (`ResolveSchema`).
    fn schema(&self, gvk: &Gvk) -> Option<Value>;
}

/// The served resources: a kind's schema is its plugin's (or CRD's) for that version, with
/// kube's ObjectMeta as `metadata` when it declares `properties`.
impl SchemaResolver for ResourceMap {
    fn kind_for(&self, group: &str, version: &str, resource: &str) -> Option<String> {
        self.get(group, version, resource)
            .map(|s| s.description.kind.clone())
    }

    fn schema(&self, gvk: &Gvk) -> Option<Value> {
        let store = self.iter_served().find(|s| {
            let d = &s.description;
            d.group == gvk.group && d.version == gvk.version && d.kind == gvk.kind
        })?;
        let mut schema = store.description.openapi_schema.clone();
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert(
                "metadata".into(),
                crate::registry::openapi::object_meta_schema(),
            );
        }
        Some(schema)
    }
}

/// The kinds `policy` is checked against (`typesToCheck`), sorted.
pub fn types_to_check(policy: &Value, resolver: &dyn SchemaResolver) -> Vec<Gvk> {
    let mut gvks = BTreeSet::new();
    let rules = policy["spec"]["matchConstraints"]["resourceRules"].as_array();
    for rule in rules.into_iter().flatten() {
        let list = |k: &str| -> Vec<&str> {
            let mut v: Vec<&str> = rule[k]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            v.sort();
            v
        };
        let (groups, versions) = (list("apiGroups"), list("apiVersions"));
        if groups.iter().chain(&versions).any(|g| g.contains('*')) {
            continue;
        }
        let resources: Vec<&str> = list("resources")
            .into_iter()
            .filter(|r| !r.contains(['*', '/']))
            .collect();
        let mut count = 0;
        for g in &groups {
            for v in &versions {
                for r in &resources {
                    if let Some(kind) = resolver.kind_for(g, v, r) {
                        gvks.insert(Gvk {
                            group: g.to_string(),
                            version: v.to_string(),
                            kind,
                        });
                        count += 1;
                        // kube counts per rule and stops the whole collection there.
                        if count == MAX_TYPES_TO_CHECK {
                            return gvks.into_iter().collect();
                        }
                    }
                }
            }
        }
    }
    gvks.into_iter().collect()
}

/// The type of a kind's objects, `dyn` when its schema declares no `properties` or exposes
/// nothing to CEL.
fn declared_type(schema: &Value, gvk: &Gvk) -> Type {
    if schema.get("properties").is_none() {
        return Type::Dyn;
    }
    schema_type(schema, &gvk.kind, true).unwrap_or(Type::Dyn)
}

/// `policy`'s type-checking warnings (`TypeChecker.Check`): `[{fieldRef, warning}]`, empty
/// when every expression checks against every kind with a schema.
pub fn check(policy: &Value, resolver: &dyn SchemaResolver) -> Vec<Value> {
    let spec = &policy["spec"];
    let kinds: Vec<(Gvk, Type)> = types_to_check(policy, resolver)
        .into_iter()
        .filter_map(|gvk| {
            let t = declared_type(&resolver.schema(&gvk)?, &gvk);
            Some((gvk, t))
        })
        .collect();
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = spec.get("paramKind").and_then(|p| {
        let (group, version) = match str_at(p, "apiVersion").split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), str_at(p, "apiVersion").to_string()),
        };
        let gvk = Gvk {
            group,
            version,
            kind: str_at(p, "kind").to_string(),
        };
        resolver.schema(&gvk).map(|s| declared_type(&s, &gvk))
    });
    let params = params.unwrap_or(Type::Dyn);
    // Per kind: the variables' types, then every expression's errors.
    let environments: Vec<(&Gvk, wasm_apiserver_cel::Variables)> = kinds
        .iter()
        .map(|(gvk, object)| {
            let typed = |vars: &[(&str, Type)]| {
                admission(vars)
                    .with("object", object.clone())
                    .with("oldObject", object.clone())
                    .with("params", params.clone())
            };
            let mut types: Vec<(String, Type)> = Vec::new();
            for v in spec["variables"].as_array().into_iter().flatten() {
                let t =
                    Expression::compile_checked(str_at(v, "expression"), &typed(&declared(&types)))
                        .ok()
                        .and_then(|e| e.checked().map(|c| c.output.clone()))
                        .unwrap_or(Type::Dyn);
                types.push((str_at(v, "name").to_string(), t));
            }
            (gvk, typed(&declared(&types)))
        })
        .collect();
    let mut warnings = Vec::new();
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for field in ["expression", "messageExpression"] {
            let source = str_at(v, field);
            if source.is_empty() {
                continue;
            }
            let results: Vec<String> = environments
                .iter()
                .filter_map(|(gvk, vars)| {
                    Expression::compile_checked(source, vars)
                        .err()
                        .map(|e| format!("{gvk}: {e}\n"))
                })
                .collect();
            if !results.is_empty() {
                warnings.push(json!({
                    "fieldRef": format!("spec.validations[{i}].{field}"),
                    "warning": results.join("\n"),
                }));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    //! kube's `TestTypeCheck` cases (`typechecking_test.go`), on a resolver that knows
    //! `apps/v1` deployments and `v1` pods and answers one schema for every kind.
    use super::*;

    struct Fake(Option<Value>);

    impl SchemaResolver for Fake {
        fn kind_for(&self, group: &str, version: &str, resource: &str) -> Option<String> {
            match (group, version, resource) {
                ("apps", "v1", "deployments") => Some("Deployment".into()),
                ("", "v1", "pods") => Some("Pod".into()),
                _ => None,
            }
        }
        fn schema(&self, _: &Gvk) -> Option<Value> {
            self.0.clone()
        }
    }

    fn policy(spec: Value) -> Value {
        let mut spec = spec;
        spec["matchConstraints"] = json!({"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"],
            "operations": ["CREATE"]}]});
        json!({"spec": spec})
    }

    fn validations(exprs: &[&str]) -> Value {
        let v: Vec<Value> = exprs.iter().map(|e| json!({"expression": e})).collect();
        json!({"validations": v})
    }

    fn props(p: Value) -> Option<Value> {
        Some(json!({"type": "object", "properties": p}))
    }

    fn refs(w: &[Value]) -> Vec<&str> {
        w.iter().map(|w| w["fieldRef"].as_str().unwrap()).collect()
    }

    #[test]
    fn kinds_are_collected_as_kube_collects_them() {
        let fake = Fake(None);
        let p = |rules: Value| json!({"spec": {"matchConstraints": {"resourceRules": rules}}});
        let kinds = |rules: Value| -> Vec<String> {
            types_to_check(&p(rules), &fake)
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(
            kinds(json!([{"apiGroups": ["apps", ""], "apiVersions": ["v1"],
                          "resources": ["deployments", "pods", "pods/status", "*", "nope"]}])),
            ["/v1, Kind=Pod", "apps/v1, Kind=Deployment"]
        );
        // A wildcard group or version gives the rule up.
        assert!(
            kinds(json!([{"apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["pods"]}]))
                .is_empty()
        );
        assert!(
            kinds(json!([{"apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"]}]))
                .is_empty()
        );
        assert!(types_to_check(&json!({}), &fake).is_empty());
    }

    #[test]
    fn warnings_follow_kube_s_type_check_cases() {
        let foo_string = || props(json!({"foo": {"type": "string"}}));
        let foo_int = || props(json!({"foo": {"type": "integer", "format": "int64"}}));
        let deployment = || policy(validations(&["object.foo == 'bar'"]));
        // empty, unresolved schema, passed check
        assert!(check(&json!({}), &Fake(foo_string())).is_empty());
        assert!(check(&deployment(), &Fake(None)).is_empty());
        assert!(check(&deployment(), &Fake(foo_string())).is_empty());
        // undefined field
        let w = check(
            &deployment(),
            &Fake(props(json!({"bar": {"type": "string"}}))),
        );
        assert_eq!(refs(&w), ["spec.validations[0].expression"]);
        let text = w[0]["warning"].as_str().unwrap();
        assert!(
            text.starts_with("apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'foo'\n | object.foo == 'bar'\n | ......^"),
            "{text}"
        );
        assert!(text.ends_with('\n'), "{text:?}");
        // field type mismatch
        let w = check(&deployment(), &Fake(foo_int()));
        assert!(w[0]["warning"]
            .as_str()
            .unwrap()
            .contains("found no matching overload"));
        // params
        let mut params = policy(validations(&["object.foo == params.bar"]));
        params["spec"]["paramKind"] =
            json!({"apiVersion": "v1", "kind": "DeploymentReplicasPolicy"});
        let w = check(&params, &Fake(foo_string()));
        assert_eq!(refs(&w), ["spec.validations[0].expression"]);
        assert!(w[0]["warning"]
            .as_str()
            .unwrap()
            .contains("undefined field 'bar'"));
        // params with an untyped schema; a schema without type
        let mut untyped = policy(validations(&["params != null"]));
        untyped["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "Config"});
        assert!(check(&untyped, &Fake(Some(json!({})))).is_empty());
        assert!(check(&deployment(), &Fake(Some(json!({})))).is_empty());
        // A schema without properties (a plugin's `{"type": "object"}`): `object` is dyn,
        // what does not involve it is still checked.
        let object = || Fake(Some(json!({"type": "object"})));
        assert!(check(&deployment(), &object()).is_empty());
        let w = check(&policy(validations(&["authorizer.allowed()"])), &object());
        assert_eq!(refs(&w), ["spec.validations[0].expression"]);
        // multiple expressions; message expressions
        let multi = policy(validations(&["object.foo == 'bar'", "object.bar == 'foo'"]));
        assert_eq!(
            refs(&check(&multi, &Fake(foo_string()))),
            ["spec.validations[1].expression"]
        );
        let mut message = deployment();
        message["spec"]["validations"][0]["messageExpression"] = json!("object.foo + 114514");
        assert_eq!(
            refs(&check(&message, &Fake(foo_string()))),
            ["spec.validations[0].messageExpression"]
        );
        // authorizer
        let ok = policy(validations(&[
            "authorizer.group('').resource('endpoints').check('create').allowed()",
        ]));
        assert!(check(&ok, &Fake(foo_string())).is_empty());
        let bad = policy(validations(&["authorizer.allowed()"]));
        let w = check(&bad, &Fake(foo_string()));
        assert!(w[0]["warning"].as_str().unwrap().contains(
            "found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer"
        ));
        // additionalProperties: true
        let reproducer = policy(validations(&["has(object.spec.text)"]));
        let schema = props(json!({
            "spec": {"type": "object", "properties": {"text": {"type": "string"}}},
            "status": {"type": "object", "properties": {
                "problematicProperty": {"type": "object", "additionalProperties": true}}}
        }));
        assert!(check(&reproducer, &Fake(schema)).is_empty());
        // variables: valid, a missing field, a wrong type, an error in a variable
        let vars = |var: &str, expr: &str| {
            let mut p = policy(validations(&[expr]));
            p["spec"]["variables"] = json!([{"name": "v", "expression": var}]);
            p
        };
        assert!(check(&vars("true", "variables.v"), &Fake(foo_int())).is_empty());
        let w = check(&vars("true", "variables.nonExisting"), &Fake(foo_int()));
        assert!(w[0]["warning"]
            .as_str()
            .unwrap()
            .contains("undefined field 'nonExisting'"));
        let w = check(
            &vars("'something'", "variables.v == object.foo"),
            &Fake(foo_int()),
        );
        assert!(w[0]["warning"]
            .as_str()
            .unwrap()
            .contains("found no matching overload for '_==_' applied to '(string, int)"));
        assert!(check(
            &vars("object.foo == 'str'", "variables.v == object.foo"),
            &Fake(foo_int())
        )
        .is_empty());
    }
}

//! `x-kubernetes-validations`: a custom resource's CEL rules, compiled once per schema and
//! evaluated on every write (`apiextensions-apiserver/pkg/apiserver/schema/cel/
//! compilation.go`, `validation.go`), with the CEL crate.
//!
//! - Each rule sees `self`, typed by its schema node; a rule naming `oldSelf` is a transition
//!   rule, evaluated only on an update where the old value can be found (object properties,
//!   map values, and `x-kubernetes-list-type: map` items by their keys).
//! - A rule that gives `false` fails with `failed rule: <rule>`, its `message`, or its
//!   `messageExpression`'s string (the message when that fails or is empty), as a field error
//!   at the node (plus the rule's `fieldPath`) of the `reason`'s type: `Invalid value:
//!   "object": …` by default, `Forbidden`, `Required`, `Duplicate`.
//! - An evaluation error is kube's: `<error> evaluating rule: <rule>`, or a call that
//!   exceeds the cost limit (the cost spent named, [`wasm_apiserver_cel::budget`]).
//! - Ratcheting (kube's `CRDValidationRatcheting`): a rule at a value equal to its old value
//!   is not evaluated, so an unchanged field written before a rule existed stays writable.
//! - One object's rules share kube's per-object cost budget.
//!
//! - `optionalOldSelf`: `oldSelf` is an optional (`optional.none()` on a create or where no
//!   old value corresponds), and the rule runs in both cases.

use crate::structural::Structural;
use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, FieldError, Path};
use wasm_apiserver_cel::budget::{Budget, BudgetError};
use wasm_apiserver_cel::environment::{crd_rule, expect_output};
use wasm_apiserver_cel::schema::schema_type;
use wasm_apiserver_cel::static_cost::kube_limit_warning;
use wasm_apiserver_cel::{Expression, Type, Value};

/// One compiled rule.
struct Rule {
    rule: String,
    expression: Expression,
    message: Option<String>,
    message_expression: Option<Expression>,
    reason: Option<String>,
    field_path: Option<String>,
    transition: bool,
    /// `optionalOldSelf`: `oldSelf` is `optional_type(T)`, and the rule runs on a create too.
    optional_old_self: bool,
}

/// A schema node's rules and its children's, in the schema's shape.
#[derive(Default)]
pub struct Rules {
    rules: Vec<Rule>,
    properties: Vec<(String, Rules)>,
    items: Option<Box<Rules>>,
    additional_properties: Option<Box<Rules>>,
}

/// What compiling a schema's rules found wrong or worth a warning, by the rule's place:
/// `properties[spec].x-kubernetes-validations[0].rule` under the schema's root.
#[derive(Debug, Default)]
pub struct CompileReport {
    pub errors: ErrorList,
    pub warnings: Vec<String>,
}

impl Rules {
    /// Compile every rule of `schema` (a custom resource's root, as written: each rule's
    /// `self` is typed from its node's whole subtree). Rules that do not compile are left out
    /// and reported, with cel-go's text, as kube reports them when the
    /// CustomResourceDefinition is written.
    pub fn compile(schema: &Json) -> (Rules, CompileReport) {
        let mut report = CompileReport::default();
        let rules = compile_node(schema, &Path::new(""), true, &mut report);
        (rules, report)
    }

    /// Whether there is no rule at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.iter().all(|(_, r)| r.is_empty())
            && self.items.as_ref().is_none_or(|r| r.is_empty())
            && self
                .additional_properties
                .as_ref()
                .is_none_or(|r| r.is_empty())
    }

    /// Evaluate the rules over `obj` (and `old`, on an update), within one object's budget.
    pub fn validate(&self, schema: &Structural, obj: &Json, old: Option<&Json>) -> ErrorList {
        let mut errors = Vec::new();
        let mut budget = Budget::default();
        validate_node(
            self,
            schema,
            obj,
            old,
            &Path::new(""),
            &mut budget,
            &mut errors,
        );
        errors
    }
}

fn compile_node(s: &Json, path: &Path, root: bool, report: &mut CompileReport) -> Rules {
    let mut out = Rules::default();
    let validations = s.get("x-kubernetes-validations").and_then(Json::as_array);
    if let Some(validations) = validations.filter(|v| !v.is_empty()) {
        let embedded_flag = s
            .get("x-kubernetes-embedded-resource")
            .and_then(Json::as_bool);
        let embedded = root || embedded_flag == Some(true);
        let self_type = schema_type(s, "selfType", embedded).unwrap_or(Type::Dyn);
        for (i, v) in validations.iter().enumerate() {
            let at = path.child("x-kubernetes-validations").index(i);
            if let Some(rule) = compile_rule(v, &self_type, &at, report) {
                out.rules.push(rule);
            }
        }
    }
    let props = s.get("properties").and_then(Json::as_object);
    for (name, prop) in props.into_iter().flatten() {
        let child = compile_node(prop, &path.child("properties").key(name), false, report);
        if !child.is_empty() {
            out.properties.push((name.clone(), child));
        }
    }
    // Children as `Structural::from_json` reads them: objects only.
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        let child = compile_node(items, &path.child("items"), false, report);
        out.items = (!child.is_empty()).then(|| Box::new(child));
    }
    if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object()) {
        let child = compile_node(ap, &path.child("additionalProperties"), false, report);
        out.additional_properties = (!child.is_empty()).then(|| Box::new(child));
    }
    out
}

fn compile_rule(v: &Json, self_type: &Type, at: &Path, report: &mut CompileReport) -> Option<Rule> {
    let text = |k: &str| v.get(k).and_then(Json::as_str).map(str::to_string);
    let rule = text("rule").unwrap_or_default();
    let transition = {
        let probe = Expression::compile(&rule).ok()?;
        probe.references("oldSelf")
    };
    let optional_old_self = v.get("optionalOldSelf").and_then(Json::as_bool) == Some(true);
    let failed = |report: &mut CompileReport, path: &Path, msg: String| {
        report.errors.push(field::invalid(path, &rule, msg));
    };
    if optional_old_self && !transition {
        let msg = "may not be set if rule does not use oldSelf".to_string();
        report
            .errors
            .push(field::invalid(&at.child("optionalOldSelf"), true, msg));
        return None;
    }
    let vars = if optional_old_self {
        crd_rule(self_type.clone(), false).with("oldSelf", Type::optional(self_type.clone()))
    } else {
        crd_rule(self_type.clone(), transition)
    };
    let expression = match Expression::compile_checked(&rule, &vars) {
        Ok(e) => e,
        Err(e) => {
            failed(
                report,
                &at.child("rule"),
                format!("compilation failed: {e}"),
            );
            return None;
        }
    };
    if let Err(e) = expect_output(
        &expression,
        &Type::Bool,
        "cel expression must evaluate to a bool",
    ) {
        failed(report, &at.child("rule"), e.0);
        return None;
    }
    if let Some(w) = expression
        .estimated_cost()
        .and_then(|c| kube_limit_warning(c.max))
    {
        report.warnings.push(format!("{}: {w}", at.child("rule")));
    }
    let message_expression = match text("messageExpression") {
        Some(src) => match Expression::compile_checked(&src, &vars) {
            Ok(e) if e.checked().is_some_and(|c| c.output == Type::STRING) => Some(e),
            Ok(_) => {
                let msg = "must evaluate to a string".to_string();
                report
                    .errors
                    .push(field::invalid(&at.child("messageExpression"), &src, msg));
                return None;
            }
            Err(e) => {
                let msg = format!("messageExpression compilation failed: {e}");
                report
                    .errors
                    .push(field::invalid(&at.child("messageExpression"), &src, msg));
                return None;
            }
        },
        None => None,
    };
    Some(Rule {
        rule,
        expression,
        message: text("message").filter(|m| !m.trim().is_empty()),
        message_expression,
        reason: text("reason"),
        field_path: text("fieldPath"),
        transition,
        optional_old_self,
    })
}

/// kube's `ruleErrorString`: the message, else the rule.
fn rule_name(r: &Rule) -> &str {
    r.message.as_deref().unwrap_or(&r.rule).trim()
}

fn validate_node(
    rules: &Rules,
    s: &Structural,
    obj: &Json,
    old: Option<&Json>,
    path: &Path,
    budget: &mut Budget,
    errors: &mut ErrorList,
) {
    // Ratcheting: a value that did not change is not validated again.
    if old == Some(obj) {
        return;
    }
    for r in &rules.rules {
        if r.transition && !r.optional_old_self && old.is_none() {
            continue;
        }
        let mut vars: Vec<(&str, &Json)> = vec![("self", obj)];
        let mut optionals: Vec<(&str, Option<&Json>)> = Vec::new();
        match (r.transition, r.optional_old_self, old) {
            (true, true, old) => optionals.push(("oldSelf", old)),
            (true, false, Some(old)) => vars.push(("oldSelf", old)),
            _ => {}
        }
        let evaluated = budget.evaluate(
            &r.expression,
            &r.rule,
            r.message.as_deref(),
            &vars,
            &optionals,
        );
        match evaluated {
            Ok(out) if out.value == Value::Bool(true) => {}
            Ok(_) => errors.push(rule_failure(r, s, path, &vars, &optionals, budget)),
            Err(BudgetError::Failed(e)) => {
                let detail = if e.message.starts_with("no such overload")
                    || e.message.contains("No such overload")
                {
                    format!(
                        "'{}': call arguments did not match a supported operator, function or \
                         macro signature for rule: {}",
                        e.message,
                        rule_name(r)
                    )
                } else {
                    format!("{} evaluating rule: {}", e.message, rule_name(r))
                };
                errors.push(field::invalid(path, &s.type_, detail));
            }
            Err(e @ BudgetError::CallCostExceeded { .. }) => {
                errors.push(field::invalid(path, &s.type_, e.to_string()));
            }
            Err(e @ BudgetError::BudgetExhausted { .. }) => {
                errors.push(field::invalid(path, &s.type_, e.to_string()));
                return;
            }
        }
    }
    match obj {
        Json::Object(fields) => {
            for (k, v) in fields {
                let old_v = old.and_then(|o| o.get(k));
                if let Some((_, child)) = rules.properties.iter().find(|(n, _)| n == k) {
                    if let Some(prop) = s.properties.get(k) {
                        validate_node(child, prop, v, old_v, &path.child(k), budget, errors);
                    }
                } else if let (Some(child), Some(ap)) = (
                    &rules.additional_properties,
                    s.additional_properties.as_ref().and_then(|a| a.schema()),
                ) {
                    validate_node(child, ap, v, old_v, &path.key(k), budget, errors);
                }
            }
        }
        Json::Array(items) => {
            let (Some(child), Some(item_schema)) = (&rules.items, s.items.as_deref()) else {
                return;
            };
            for (i, v) in items.iter().enumerate() {
                let old_v = correlated_item(s, v, old);
                validate_node(child, item_schema, v, old_v, &path.index(i), budget, errors);
            }
        }
        _ => {}
    }
}

/// The old item a list item corresponds to: in a `map` list, the one with the same keys.
pub(crate) fn correlated_item<'a>(
    s: &Structural,
    item: &Json,
    old: Option<&'a Json>,
) -> Option<&'a Json> {
    if s.list_type.as_deref() != Some("map") || s.list_map_keys.is_empty() {
        return None;
    }
    old?.as_array()?
        .iter()
        .find(|o| s.list_map_keys.iter().all(|k| o.get(k) == item.get(k)))
}

/// The error of a rule that gave `false`.
fn rule_failure(
    r: &Rule,
    s: &Structural,
    path: &Path,
    vars: &[(&str, &Json)],
    optionals: &[(&str, Option<&Json>)],
    budget: &mut Budget,
) -> FieldError {
    let mut at = path.clone();
    if let Some(fp) = r.field_path.as_deref() {
        at = append_field_path(&at, fp);
    }
    let default = match &r.message {
        Some(m) => m.trim().to_string(),
        None => format!("failed rule: {}", r.rule.trim()),
    };
    let detail = r
        .message_expression
        .as_ref()
        .and_then(|m| {
            budget
                .evaluate(m, &r.rule, r.message.as_deref(), vars, optionals)
                .ok()
        })
        .and_then(|out| match out.value {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            _ => None,
        })
        .filter(|m| {
            m.len() <= wasm_apiserver_cel::limits::MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES
        })
        .unwrap_or(default);
    match r.reason.as_deref() {
        Some("FieldValueForbidden") => field::forbidden(&at, detail),
        Some("FieldValueRequired") => field::required(&at, detail),
        Some("FieldValueDuplicate") => field::duplicate(&at, &s.type_),
        _ => field::invalid(&at, &s.type_, detail),
    }
}

/// `path` followed by a rule's `fieldPath` (`.spec.ports[0]`, `.labels['a.b']`).
fn append_field_path(path: &Path, field_path: &str) -> Path {
    let mut out = path.clone();
    let mut rest = field_path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            out = out.child(&r[..end]);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").unwrap_or(r.len());
            out = out.key(&r[..end]);
            rest = r.get(end + 2..).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').unwrap_or(r.len());
            match r[..end].parse::<usize>() {
                Ok(i) => out = out.index(i),
                Err(_) => out = out.key(&r[..end]),
            }
            rest = r.get(end + 1..).unwrap_or("");
        } else {
            out = out.child(rest);
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Json {
        json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.minReplicas <= self.replicas", "message": "replicas must be at least minReplicas"},
                {"rule": "self.replicas <= 10", "messageExpression": "'replicas ' + string(self.replicas) + ' is over 10'"},
                {"rule": "self.mode == oldSelf.mode", "message": "mode is immutable", "reason": "FieldValueForbidden", "fieldPath": ".mode"},
                {"rule": "!has(self.legacy)", "reason": "FieldValueRequired"}
            ],
            "properties": {
                "replicas": {"type": "integer"},
                "minReplicas": {"type": "integer"},
                "mode": {"type": "string"},
                "legacy": {"type": "string"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object",
                            "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "port is immutable"}],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}}}})
    }

    fn messages(errors: ErrorList) -> Vec<String> {
        errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    /// Cases after `schema/cel/validation_test.go`, rewritten.
    #[test]
    fn rules_fail_with_kube_s_errors() {
        let json = schema();
        let (rules, report) = Rules::compile(&json);
        let s = Structural::from_json(&json);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        let obj = json!({"spec": {"replicas": 12, "minReplicas": 20, "mode": "b", "legacy": "x",
                                  "ports": [{"name": "http", "port": 81}, {"name": "new", "port": 1}]}});
        let old = json!({"spec": {"replicas": 1, "minReplicas": 1, "mode": "a",
                                  "ports": [{"name": "http", "port": 80}]}});
        assert_eq!(
            messages(rules.validate(&s, &obj, Some(&old))),
            [
                "spec: Invalid value: \"object\": replicas must be at least minReplicas",
                "spec: Invalid value: \"object\": replicas 12 is over 10",
                "spec.mode: Forbidden: mode is immutable",
                "spec: Required value: failed rule: !has(self.legacy)",
                "spec.ports[0]: Invalid value: \"object\": port is immutable",
            ]
        );
        // On create, transition rules do not run.
        let fresh = json!({"spec": {"replicas": 2, "minReplicas": 1, "mode": "a",
                                    "ports": [{"name": "http", "port": 81}]}});
        assert_eq!(
            messages(rules.validate(&s, &fresh, None)),
            Vec::<String>::new()
        );
        // Ratcheting: an unchanged `spec` that breaks a rule is not refused again.
        let bad = json!({"spec": {"replicas": 12, "minReplicas": 1, "mode": "a"}});
        assert_eq!(
            messages(rules.validate(&s, &bad, Some(&bad))),
            Vec::<String>::new()
        );
    }

    #[test]
    fn rules_that_do_not_compile_are_reported_where_they_are() {
        let json = json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"n": {"type": "integer"},
              "names": {"type": "array", "items": {"type": "string"}}},
            "x-kubernetes-validations": [
                {"rule": "self.n + 'x' == 1"},
                {"rule": "self.n"},
                {"rule": "self.names.all(a, self.names.all(b, a.matches(b)))"}]}}});
        let (rules, report) = Rules::compile(&json);
        let errors = messages(report.errors);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].starts_with("properties[spec].x-kubernetes-validations[0].rule: Invalid value: \"self.n + 'x' == 1\": compilation failed: ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(int, string)'"), "{}", errors[0]);
        assert!(
            errors[1].ends_with("cel expression must evaluate to a bool"),
            "{}",
            errors[1]
        );
        // kube would refuse the third for its estimated cost: here it is kept, with a warning.
        assert_eq!(report.warnings.len(), 1);
        assert!(report.warnings[0]
            .contains("estimated rule cost exceeds budget by factor of more than 100x"));
        assert!(!rules.is_empty());
    }

    #[test]
    fn optional_old_self_runs_on_create_too() {
        let json = json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"mode": {"type": "string"}},
            "x-kubernetes-validations": [
                {"rule": "oldSelf.hasValue() ? self.mode == oldSelf.value().mode : self.mode == 'a'",
                 "optionalOldSelf": true, "message": "starts at a, then fixed"},
                {"rule": "true", "optionalOldSelf": true}]}}});
        let (rules, report) = Rules::compile(&json);
        let s = Structural::from_json(&json);
        let errors = messages(report.errors);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("properties[spec].x-kubernetes-validations[1].optionalOldSelf: Invalid value: true: may not be set if rule does not use oldSelf"), "{errors:?}");
        let (a, b) = (
            json!({"spec": {"mode": "a"}}),
            json!({"spec": {"mode": "b"}}),
        );
        assert!(rules.validate(&s, &a, None).is_empty());
        assert_eq!(
            messages(rules.validate(&s, &b, None)),
            ["spec: Invalid value: \"object\": starts at a, then fixed"]
        );
        assert_eq!(messages(rules.validate(&s, &b, Some(&a))).len(), 1);
        assert!(rules.validate(&s, &b, Some(&b)).is_empty());
    }

    #[test]
    fn field_paths_append_as_kube_reads_them() {
        let p = append_field_path(&Path::new("spec"), ".ports[0].name");
        assert_eq!(p.as_str(), "spec.ports[0].name");
        let p = append_field_path(&Path::new("spec"), ".labels['a.b']");
        assert_eq!(p.as_str(), "spec.labels[a.b]");
    }
}

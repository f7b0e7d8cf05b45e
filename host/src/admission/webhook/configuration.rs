//! A `ValidatingWebhookConfiguration` or `MutatingWebhookConfiguration`
//! (`admissionregistration.k8s.io/v1`) compiled once, when it is written or seen: each webhook's
//! match rules parsed, its `matchConditions` type-checked, its HTTPS client built
//! ([`WebhookClient`]). Write-time validation ([`validate_configuration`]) and the defaults
//! ([`set_defaults`]) are kube's (`k8s.io/kubernetes/pkg/apis/admissionregistration/validation/
//! validation.go` `ValidateValidatingWebhookConfiguration`, `pkg/apis/admissionregistration/v1/
//! defaults.go`), but for `clientConfig.service`: this server has no Services, so a webhook is
//! reached by `url` only and a `service` is refused with a message saying so; and
//! `matchConditions` are compiled in the admission policies' CEL environment (kube's webhook
//! environment lacks `params`, `namespaceObject` and `variables`, which a condition here may
//! name: the first two are `null`, the last empty).

use crate::admission::policy::compiled::{compile_bool, str_at};
use crate::admission::policy::matching::MatchResources;
use crate::webhook::client::WebhookClient;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::labels::LabelSelector;
use wasm_apiserver_apimachinery::validation::{is_dns1123_subdomain, is_qualified_name};
use wasm_apiserver_apimachinery::FieldError;
use wasm_apiserver_cel::Expression;

/// The AdmissionReview versions a webhook may accept (`AcceptedAdmissionReviewVersions`).
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The most `matchConditions` a webhook may have (validation.go).
const MAX_MATCH_CONDITIONS: usize = 64;

/// One webhook of a configuration.
pub struct CompiledWebhook {
    /// `name` (a fully qualified name, unique in its configuration).
    pub name: String,
    /// The configuration's `metadata.name`.
    pub configuration: String,
    /// Its client, or why there is none (a configuration error decided by `failurePolicy`).
    pub client: Result<Arc<WebhookClient>, String>,
    /// `rules`, `namespaceSelector`, `objectSelector` and `matchPolicy`, or why they do not
    /// parse; an empty `rules` matches nothing.
    pub match_resources: Result<MatchResources, String>,
    /// Whether it has any rule.
    pub has_rules: bool,
    /// The rules alone (when a selector does not parse, a request the rules match fails).
    pub rules_only: MatchResources,
    /// `matchConditions` (name, expression), or the first compile error.
    pub match_conditions: Result<Vec<(String, Expression)>, String>,
    /// `failurePolicy: Fail` (the default).
    pub fail: bool,
    /// `sideEffects` is `None` or `NoneOnDryRun`: it may be called for a dry run.
    pub dry_run_safe: bool,
    /// `timeoutSeconds` (10 by default).
    pub timeout: Duration,
    /// The first AdmissionReview version it accepts that this server speaks.
    pub review_version: Option<&'static str>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke: bool,
}

/// A configuration's webhooks, in order.
pub struct CompiledWebhookConfiguration {
    pub name: String,
    pub webhooks: Vec<Arc<CompiledWebhook>>,
}

/// `SetDefaults_ValidatingWebhook` / `SetDefaults_MutatingWebhook` for each of `obj`'s webhooks:
/// `failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors, `timeoutSeconds: 10`, each
/// rule's `scope: "*"`, and for a mutating webhook `reinvocationPolicy: Never`.
pub fn set_defaults(obj: &mut Value, mutating: bool) {
    for w in obj
        .get_mut("webhooks")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(w) = w.as_object_mut() else { continue };
        let mut defaults = vec![
            ("failurePolicy", json!("Fail")),
            ("matchPolicy", json!("Equivalent")),
            ("namespaceSelector", json!({})),
            ("objectSelector", json!({})),
            ("timeoutSeconds", json!(10)),
        ];
        if mutating {
            defaults.push(("reinvocationPolicy", json!("Never")));
        }
        for (k, v) in defaults {
            if w.get(k).is_none_or(Value::is_null) {
                w.insert(k.into(), v);
            }
        }
        for r in w
            .get_mut("rules")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(r) = r.as_object_mut() {
                r.entry("scope").or_insert_with(|| json!("*"));
            }
        }
    }
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `validateRuleWithOperations`: operations, groups, versions and resources required, `*`
/// alone, kube's operations and scopes.
fn validate_rule(r: &Value, p: &Path, errs: &mut Vec<FieldError>) {
    let ops = strings(&r["operations"]);
    if ops.is_empty() {
        errs.push(field::required(&p.child("operations"), ""));
    }
    if ops.len() > 1 && ops.contains(&"*") {
        errs.push(field::invalid(
            &p.child("operations"),
            &r["operations"],
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in ops.iter().enumerate() {
        if !["*", "CREATE", "UPDATE", "DELETE", "CONNECT"].contains(op) {
            errs.push(field::not_supported(
                &p.child("operations").index(i),
                op,
                &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
            ));
        }
    }
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let items = strings(&r[key]);
        if items.is_empty() {
            errs.push(field::required(&p.child(key), ""));
        }
        if items.len() > 1 && items.contains(&"*") {
            errs.push(field::invalid(
                &p.child(key),
                &r[key],
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if key == "apiVersions" {
            for (i, v) in items.iter().enumerate() {
                if v.is_empty() {
                    errs.push(field::required(&p.child(key).index(i), ""));
                }
            }
        }
    }
    let resources = strings(&r["resources"]);
    if resources.is_empty() {
        errs.push(field::required(&p.child("resources"), ""));
    }
    for (i, res) in resources.iter().enumerate() {
        if res.is_empty() {
            errs.push(field::required(&p.child("resources").index(i), ""));
        }
    }
    match r.get("scope").and_then(Value::as_str) {
        None | Some("*") | Some("Cluster") | Some("Namespaced") => {}
        Some(other) => errs.push(field::not_supported(
            &p.child("scope"),
            other,
            &["*", "Cluster", "Namespaced"],
        )),
    }
}

/// `ValidateWebhookURL` (`k8s.io/apiserver/pkg/util/webhook/validation.go`) for a webhook that
/// must be called over HTTPS.
fn validate_url(url: &str, p: &Path, errs: &mut Vec<FieldError>) {
    const FORM: &str = "; desired format: https://host[/path]";
    let u = match reqwest::Url::parse(url) {
        Ok(u) => u,
        Err(e) => {
            errs.push(field::required(
                p,
                format!("url must be a valid URL: {e}{FORM}"),
            ));
            return;
        }
    };
    if u.scheme() != "https" {
        errs.push(field::invalid(
            p,
            u.scheme(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if u.host_str().is_none_or(str::is_empty) {
        errs.push(field::invalid(
            p,
            "",
            format!("host must be specified{FORM}"),
        ));
    }
    if !u.username().is_empty() || u.password().is_some() {
        errs.push(field::invalid(
            p,
            "<omitted>",
            "user information is not permitted in the URL",
        ));
    }
    if let Some(f) = u.fragment().filter(|f| !f.is_empty()) {
        errs.push(field::invalid(
            p,
            f,
            "fragments are not permitted in the URL",
        ));
    }
    if let Some(q) = u.query().filter(|q| !q.is_empty()) {
        errs.push(field::invalid(
            p,
            q,
            "query parameters are not permitted in the URL",
        ));
    }
}

/// `validateValidatingWebhookConfiguration` / `validateMutatingWebhookConfiguration`: the
/// field errors of `obj`.
pub fn validate_configuration(obj: &Value, mutating: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, w) in obj["webhooks"].as_array().into_iter().flatten().enumerate() {
        let p = Path::new("webhooks").index(i);
        // `IsFullyQualifiedName`: a DNS-1123 subdomain of at least three segments.
        let name = str_at(w, "name");
        let subdomain = is_dns1123_subdomain(name);
        if name.is_empty() {
            errs.push(field::required(&p.child("name"), ""));
        } else if !subdomain.is_empty() {
            errs.push(field::invalid(&p.child("name"), name, subdomain.join(",")));
        } else if name.split('.').count() < 3 {
            errs.push(field::invalid(
                &p.child("name"),
                name,
                "should be a domain with at least three segments separated by dots",
            ));
        } else if !names.insert(name) {
            errs.push(field::duplicate(&p.child("name"), name));
        }
        for (j, r) in w["rules"].as_array().into_iter().flatten().enumerate() {
            validate_rule(r, &p.child("rules").index(j), &mut errs);
        }
        match w.get("failurePolicy").and_then(Value::as_str) {
            None | Some("Fail") | Some("Ignore") => {}
            Some(o) => errs.push(field::not_supported(
                &p.child("failurePolicy"),
                o,
                &["Fail", "Ignore"],
            )),
        }
        match w.get("matchPolicy").and_then(Value::as_str) {
            None | Some("Exact") | Some("Equivalent") => {}
            Some(o) => errs.push(field::not_supported(
                &p.child("matchPolicy"),
                o,
                &["Equivalent", "Exact"],
            )),
        }
        match w.get("sideEffects").and_then(Value::as_str) {
            Some("None") | Some("NoneOnDryRun") => {}
            None => errs.push(field::required(
                &p.child("sideEffects"),
                "must specify one of None, NoneOnDryRun",
            )),
            Some(o) => errs.push(field::not_supported(
                &p.child("sideEffects"),
                o,
                &["None", "NoneOnDryRun"],
            )),
        }
        if let Some(t) = w.get("timeoutSeconds").filter(|t| !t.is_null()) {
            if !t.as_i64().is_some_and(|t| (1..=30).contains(&t)) {
                errs.push(field::invalid(
                    &p.child("timeoutSeconds"),
                    t,
                    "the timeout value must be between 1 and 30 seconds",
                ));
            }
        }
        for key in ["namespaceSelector", "objectSelector"] {
            if let Some(s) = w.get(key).filter(|s| !s.is_null()) {
                if LabelSelector::from_metav1(s).is_none() {
                    errs.push(field::invalid(
                        &p.child(key),
                        s,
                        "not a valid label selector",
                    ));
                }
            }
        }
        let versions = strings(&w["admissionReviewVersions"]);
        let vp = p.child("admissionReviewVersions");
        if versions.is_empty() {
            errs.push(field::required(&vp, "must specify one of v1, v1beta1"));
        } else if !versions.iter().any(|v| REVIEW_VERSIONS.contains(v)) {
            errs.push(field::invalid(
                &vp,
                &w["admissionReviewVersions"],
                "must include at least one of v1, v1beta1",
            ));
        }
        let cc = &w["clientConfig"];
        let cp = p.child("clientConfig");
        match (
            cc.get("url").and_then(Value::as_str),
            cc.get("service").filter(|s| !s.is_null()),
        ) {
            (Some(_), Some(_)) | (None, None) => errs.push(field::required(
                &cp,
                "exactly one of url or service is required",
            )),
            (None, Some(_)) => errs.push(field::forbidden(
                &cp.child("service"),
                "this server has no Services: reach the webhook by clientConfig.url",
            )),
            (Some(url), None) => validate_url(url, &cp.child("url"), &mut errs),
        }
        // (An empty bundle means the system's roots: nothing to check.)
        if let Some(ca) = cc
            .get("caBundle")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
        {
            // (`ValidateCABundle`: the TLS configuration the bundle makes.)
            if let Err(e) = crate::webhook::client::client_config(ca) {
                errs.push(field::invalid(&cp.child("caBundle"), "<omitted>", e));
            }
        }
        if mutating {
            match w.get("reinvocationPolicy").and_then(Value::as_str) {
                None | Some("Never") | Some("IfNeeded") => {}
                Some(o) => errs.push(field::not_supported(
                    &p.child("reinvocationPolicy"),
                    o,
                    &["IfNeeded", "Never"],
                )),
            }
        }
        let conditions = w["matchConditions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if conditions.len() > MAX_MATCH_CONDITIONS {
            errs.push(field::too_many(
                &p.child("matchConditions"),
                conditions.len(),
                MAX_MATCH_CONDITIONS,
            ));
        }
        let mut condition_names = BTreeSet::new();
        for (j, c) in conditions.iter().enumerate() {
            let cp = p.child("matchConditions").index(j);
            let n = str_at(c, "name");
            let qualified = is_qualified_name(n);
            if n.is_empty() {
                errs.push(field::required(&cp.child("name"), ""));
            } else if !qualified.is_empty() {
                errs.push(field::invalid(&cp.child("name"), n, qualified.join(",")));
            } else if !condition_names.insert(n) {
                errs.push(field::duplicate(&cp.child("name"), n));
            }
            let source = str_at(c, "expression");
            if source.is_empty() {
                errs.push(field::required(&cp.child("expression"), ""));
            } else {
                compile_bool(&cp.child("expression"), source, &[], &mut errs);
            }
        }
    }
    errs
}

/// `obj`'s webhooks compiled. What does not compile is kept as the webhook's error: validation
/// refuses it on write, but an object stored before (or by another server) still reaches here.
pub fn compile_configuration(obj: &Value, mutating: bool) -> CompiledWebhookConfiguration {
    let configuration = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let webhooks = obj["webhooks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            let cc = &w["clientConfig"];
            let client = match cc.get("url").and_then(Value::as_str) {
                Some(url) => WebhookClient::new(url, str_at(cc, "caBundle")).map(Arc::new),
                None => {
                    Err("the webhook has no clientConfig.url (this server has no Services)".into())
                }
            };
            let rules = w.get("rules").cloned().unwrap_or(Value::Null);
            let has_rules = rules.as_array().is_some_and(|r| !r.is_empty());
            let rules_only = MatchResources::parse(Some(&json!({
                "resourceRules": rules, "matchPolicy": w.get("matchPolicy")})))
            .unwrap_or_default();
            let match_resources = MatchResources::parse(Some(&json!({
                "resourceRules": rules,
                "namespaceSelector": w.get("namespaceSelector"),
                "objectSelector": w.get("objectSelector"),
                "matchPolicy": w.get("matchPolicy"),
            })));
            let mut errs = Vec::new();
            let conditions: Vec<(String, Expression)> = w["matchConditions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| {
                    let p = Path::new("matchConditions");
                    let e = compile_bool(&p, str_at(c, "expression"), &[], &mut errs)?;
                    Some((str_at(c, "name").to_string(), e))
                })
                .collect();
            let match_conditions = match errs.first() {
                Some(e) => Err(e.to_string()),
                None => Ok(conditions),
            };
            let review_version = strings(&w["admissionReviewVersions"])
                .into_iter()
                .find_map(|v| REVIEW_VERSIONS.iter().find(|r| **r == v).copied());
            Arc::new(CompiledWebhook {
                name: str_at(w, "name").to_string(),
                configuration: configuration.clone(),
                client,
                match_resources,
                has_rules,
                rules_only,
                match_conditions,
                fail: str_at(w, "failurePolicy") != "Ignore",
                dry_run_safe: matches!(str_at(w, "sideEffects"), "None" | "NoneOnDryRun"),
                timeout: Duration::from_secs(
                    w["timeoutSeconds"].as_u64().unwrap_or(10).clamp(1, 30),
                ),
                review_version,
                reinvoke: mutating && str_at(w, "reinvocationPolicy") == "IfNeeded",
            })
        })
        .collect();
    CompiledWebhookConfiguration {
        name: configuration,
        webhooks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn webhook(extra: Value) -> Value {
        let mut w = json!({"name": "check.example.com", "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://127.0.0.1:8443/validate"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}]});
        for (k, v) in extra.as_object().unwrap() {
            w[k] = v.clone();
        }
        json!({"metadata": {"name": "c"}, "webhooks": [w]})
    }

    fn messages(obj: &Value, mutating: bool) -> Vec<String> {
        validate_configuration(obj, mutating)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn validation_says_what_kube_says() {
        assert!(messages(&webhook(json!({})), false).is_empty());
        let m = messages(&webhook(json!({"name": "short.name"})), false);
        assert!(
            m[0].contains("should be a domain with at least three segments separated by dots"),
            "{m:?}"
        );
        let m = messages(&webhook(json!({"sideEffects": null})), false);
        assert!(
            m[0].contains(
                "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"
            ),
            "{m:?}"
        );
        let m = messages(&webhook(json!({"sideEffects": "Some"})), false);
        assert!(m[0].contains("Unsupported value: \"Some\""), "{m:?}");
        let m = messages(&webhook(json!({"timeoutSeconds": 31})), false);
        assert!(
            m[0].contains("the timeout value must be between 1 and 30 seconds"),
            "{m:?}"
        );
        let m = messages(&webhook(json!({"admissionReviewVersions": ["v2"]})), false);
        assert!(
            m[0].contains("must include at least one of v1, v1beta1"),
            "{m:?}"
        );
        let m = messages(
            &webhook(json!({"clientConfig": {"url": "http://example.com/x"}})),
            false,
        );
        assert!(
            m[0].contains("'https' is the only allowed URL scheme"),
            "{m:?}"
        );
        let m = messages(
            &webhook(json!({"clientConfig": {"url": "https://example.com/x?a=b"}})),
            false,
        );
        assert!(
            m[0].contains("query parameters are not permitted in the URL"),
            "{m:?}"
        );
        let m = messages(
            &webhook(json!({"clientConfig": {"service": {"namespace": "a", "name": "b"}}})),
            false,
        );
        assert!(
            m[0].contains(
                "webhooks[0].clientConfig.service: Forbidden: this server has no Services"
            ),
            "{m:?}"
        );
        let m = messages(&webhook(json!({"clientConfig": {}})), false);
        assert!(
            m[0].contains("exactly one of url or service is required"),
            "{m:?}"
        );
        let m = messages(&webhook(json!({"reinvocationPolicy": "Always"})), true);
        assert!(
            m[0].contains("webhooks[0].reinvocationPolicy: Unsupported value"),
            "{m:?}"
        );
        let m = messages(
            &webhook(json!({"matchConditions": [{"name": "a", "expression": "1"}]})),
            false,
        );
        assert!(
            m[0].contains("webhooks[0].matchConditions[0].expression"),
            "{m:?}"
        );
        let m = messages(
            &webhook(
                json!({"rules": [{"operations": ["*", "CREATE"], "apiGroups": [],
            "apiVersions": ["v1"], "resources": ["pods"]}]}),
            ),
            false,
        );
        assert!(
            m.iter()
                .any(|m| m.contains("if '*' is present, must not specify other operations")),
            "{m:?}"
        );
        assert!(
            m.iter()
                .any(|m| m.contains("webhooks[0].rules[0].apiGroups: Required value")),
            "{m:?}"
        );
        let mut two = webhook(json!({}));
        let w = two["webhooks"][0].clone();
        two["webhooks"].as_array_mut().unwrap().push(w);
        let m = messages(&two, false);
        assert!(m[0].contains("webhooks[1].name: Duplicate value"), "{m:?}");
    }

    #[test]
    fn defaults_are_kube_s() {
        let mut obj = webhook(json!({}));
        set_defaults(&mut obj, true);
        let w = &obj["webhooks"][0];
        assert_eq!(
            (
                &w["failurePolicy"],
                &w["matchPolicy"],
                &w["timeoutSeconds"],
                &w["reinvocationPolicy"]
            ),
            (
                &json!("Fail"),
                &json!("Equivalent"),
                &json!(10),
                &json!("Never")
            )
        );
        assert_eq!(w["rules"][0]["scope"], json!("*"));
        let c = compile_configuration(&obj, true);
        let w = &c.webhooks[0];
        assert!(w.fail && w.dry_run_safe && !w.reinvoke && w.has_rules);
        assert_eq!(w.review_version, Some("v1"));
        assert!(w.client.is_ok());
    }
}

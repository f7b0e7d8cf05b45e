//! The `--authentication-config` file (`AuthenticationConfiguration`, `apiserver.config.k8s.io`
//! `v1`, `v1beta1`, `v1alpha1`) decoded and validated as kube validates it
//! (`pkg/apis/apiserver/validation/validation.go` `ValidateAuthenticationConfiguration`: the
//! issuer URLs, discovery URLs, audiences and their match policy, the certificate authority,
//! claim mappings, claim and user validation rules compiled in CEL), every field error in
//! kube's `path: message` form, into the issuers the [`super::jwt`] authenticators serve.

use base64::Engine;
use serde_json::Value;
use std::time::Duration;
use wasm_apiserver_cel::{environment, Expression, Type};

/// A mapping from claims to one user field: a claim (with a prefix), a CEL expression, or
/// nothing.
pub(super) enum Mapping {
    None,
    Claim { claim: String, prefix: String },
    Expression { source: String, e: Box<Expression> },
}

/// A `claimValidationRules` entry.
pub(super) enum ClaimRule {
    Required {
        claim: String,
        value: String,
    },
    Expression {
        source: String,
        e: Box<Expression>,
        message: String,
    },
}

/// Field errors of a configuration, kube's `path: message` each.
fn errors_text(errs: &[String]) -> String {
    errs.join(", ")
}

fn string_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Compile a claims expression (kube's `compileClaimsCELExpression`).
fn claims_expression(source: &str, path: &str, errs: &mut Vec<String>) -> Option<Expression> {
    match Expression::compile_checked(source, &environment::claims()) {
        Ok(e) => Some(e),
        Err(e) => {
            errs.push(format!(
                "{path}: Invalid value: {source:?}: compilation failed: {}",
                e.0
            ));
            None
        }
    }
}

/// `validatePrefixClaimOrExpression`.
fn mapping(m: &Value, path: &str, required: bool, errs: &mut Vec<String>) -> Mapping {
    let (claim, expression) = (string_at(m, "claim"), string_at(m, "expression"));
    let prefix = m.get("prefix").and_then(Value::as_str);
    match (claim.is_empty(), expression.is_empty()) {
        (false, false) => {
            errs.push(format!(
                "{path}: Invalid value: \"\": claim and expression can't both be set"
            ));
            Mapping::None
        }
        (true, true) => {
            if required {
                errs.push(format!(
                    "{path}: Required value: claim or expression is required"
                ));
            }
            Mapping::None
        }
        (true, false) => {
            if let Some(p) = prefix {
                errs.push(format!(
                    "{path}.prefix: Invalid value: {p:?}: may not be specified when expression is set"
                ));
            }
            match claims_expression(expression, &format!("{path}.expression"), errs) {
                Some(e) => Mapping::Expression {
                    source: expression.into(),
                    e: Box::new(e),
                },
                None => Mapping::None,
            }
        }
        (false, true) => match prefix {
            Some(p) => Mapping::Claim {
                claim: claim.into(),
                prefix: p.into(),
            },
            None => {
                errs.push(format!("{path}.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"));
                Mapping::None
            }
        },
    }
}

/// The issuer URL's checks (`validateURL`).
fn check_url(url: &str, path: &str, errs: &mut Vec<String>) {
    match reqwest::Url::parse(url) {
        Err(e) => errs.push(format!("{path}: Invalid value: {url:?}: {e}")),
        Ok(u) => {
            if u.scheme() != "https" {
                errs.push(format!(
                    "{path}: Invalid value: {url:?}: URL scheme must be https"
                ));
            }
            if !u.username().is_empty() || u.password().is_some() {
                errs.push(format!(
                    "{path}: Invalid value: {url:?}: URL must not contain a username or password"
                ));
            }
            if u.query().is_some() {
                errs.push(format!(
                    "{path}: Invalid value: {url:?}: URL must not contain a query"
                ));
            }
            if u.fragment().is_some() {
                errs.push(format!(
                    "{path}: Invalid value: {url:?}: URL must not contain a fragment"
                ));
            }
        }
    }
}

/// One `jwt` entry, validated: what its authenticator needs.
pub(super) struct Issuer {
    pub(super) url: String,
    pub(super) discovery_url: String,
    pub(super) audiences: Vec<String>,
    pub(super) client: reqwest::Client,
    pub(super) username: Mapping,
    pub(super) groups: Mapping,
    pub(super) uid: Mapping,
    pub(super) extra: Vec<(String, String, Expression)>,
    pub(super) claim_rules: Vec<ClaimRule>,
    pub(super) user_rules: Vec<(String, Expression, String)>,
}

/// The issuers of a decoded configuration, none of them one of `disallowed`. Errors: not
/// an `AuthenticationConfiguration`, or kube's field errors, all of them.
pub(super) fn issuers(config: &Value, disallowed: &[String]) -> anyhow::Result<Vec<Issuer>> {
    let api_version = string_at(config, "apiVersion");
    if !matches!(
        api_version,
        "apiserver.config.k8s.io/v1"
            | "apiserver.config.k8s.io/v1beta1"
            | "apiserver.config.k8s.io/v1alpha1"
    ) || string_at(config, "kind") != "AuthenticationConfiguration"
    {
        anyhow::bail!(
            "expected kind AuthenticationConfiguration of apiserver.config.k8s.io/v1, v1beta1 or v1alpha1, got {:?} {api_version:?}",
            string_at(config, "kind")
        );
    }
    let mut errs = Vec::new();
    let mut list = Vec::new();
    let mut seen = (Vec::<String>::new(), Vec::<String>::new());
    let entries = config
        .get("jwt")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, a) in entries.iter().enumerate() {
        let path = format!("jwt[{i}]");
        let issuer = &a["issuer"];
        let url = string_at(issuer, "url");
        if url.is_empty() {
            errs.push(format!("{path}.issuer.url: Required value"));
        } else {
            check_url(url, &format!("{path}.issuer.url"), &mut errs);
            if disallowed.iter().any(|d| d == url) {
                let mut list = disallowed.to_vec();
                list.sort();
                errs.push(format!("{path}.issuer.url: Invalid value: {url:?}: URL must not overlap with disallowed issuers: [{}]", list.join(" ")));
            }
            if seen.0.iter().any(|u| u == url) {
                errs.push(format!("{path}.issuer.url: Duplicate value: {url:?}"));
            }
            seen.0.push(url.to_string());
        }
        let discovery = string_at(issuer, "discoveryURL");
        if !discovery.is_empty() {
            check_url(discovery, &format!("{path}.issuer.discoveryURL"), &mut errs);
            if discovery.trim_end_matches('/') == url.trim_end_matches('/') {
                errs.push(format!("{path}.issuer.discoveryURL: Invalid value: {discovery:?}: discoveryURL must be different from URL"));
            }
            if seen.1.iter().any(|u| u == discovery) {
                errs.push(format!(
                    "{path}.issuer.discoveryURL: Duplicate value: {discovery:?}"
                ));
            }
            seen.1.push(discovery.to_string());
        }
        let audiences: Vec<String> = issuer
            .get("audiences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if audiences.is_empty() {
            errs.push(format!(
                "{path}.issuer.audiences: Required value: at least one {path}.issuer.audiences is required"
            ));
        }
        let policy = string_at(issuer, "audienceMatchPolicy");
        if audiences.len() > 1 && policy != "MatchAny" {
            errs.push(format!("{path}.issuer.audienceMatchPolicy: Invalid value: {policy:?}: audienceMatchPolicy must be MatchAny for multiple audiences"));
        } else if audiences.len() == 1 && !policy.is_empty() && policy != "MatchAny" {
            errs.push(format!("{path}.issuer.audienceMatchPolicy: Invalid value: {policy:?}: audienceMatchPolicy must be empty or MatchAny for single audience"));
        }
        let ca = string_at(issuer, "certificateAuthority");
        let tls = crate::webhook::client::client_config(
            &base64::engine::general_purpose::STANDARD.encode(ca),
        );
        let client = match tls.and_then(|tls| {
            reqwest::Client::builder()
                .use_preconfigured_tls(tls)
                .timeout(Duration::from_secs(30))
                .build()
                .map_err(|e| e.to_string())
        }) {
            Ok(c) => Some(c),
            Err(e) => {
                errs.push(format!(
                    "{path}.issuer.certificateAuthority: Invalid value: \"<omitted>\": {e}"
                ));
                None
            }
        };

        let mut claim_rules = Vec::new();
        let rules = a
            .get("claimValidationRules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (j, r) in rules.iter().enumerate() {
            let rpath = format!("{path}.claimValidationRules[{j}]");
            let (claim, expression) = (string_at(r, "claim"), string_at(r, "expression"));
            match (claim.is_empty(), expression.is_empty()) {
                (false, false) => errs.push(format!(
                    "{rpath}: Invalid value: {claim:?}: claim and expression can't both be set"
                )),
                (true, true) => errs.push(format!(
                    "{rpath}: Required value: claim or expression is required"
                )),
                (false, true) => claim_rules.push(ClaimRule::Required {
                    claim: claim.into(),
                    value: string_at(r, "requiredValue").into(),
                }),
                (true, false) => {
                    if let Some(e) =
                        claims_expression(expression, &format!("{rpath}.expression"), &mut errs)
                    {
                        if let Err(m) =
                            environment::expect_output(&e, &Type::Bool, "must evaluate to bool")
                        {
                            errs.push(format!(
                                "{rpath}.expression: Invalid value: {expression:?}: {}",
                                m.0
                            ));
                        }
                        claim_rules.push(ClaimRule::Expression {
                            source: expression.into(),
                            e: Box::new(e),
                            message: string_at(r, "message").into(),
                        });
                    }
                }
            }
        }
        let m = &a["claimMappings"];
        let mpath = format!("{path}.claimMappings");
        let username = mapping(
            &m["username"],
            &format!("{mpath}.username"),
            true,
            &mut errs,
        );
        let groups = mapping(&m["groups"], &format!("{mpath}.groups"), false, &mut errs);
        let uid = {
            let u = &m["uid"];
            if !string_at(u, "claim").is_empty() && !string_at(u, "expression").is_empty() {
                errs.push(format!(
                    "{mpath}.uid: Invalid value: \"\": claim and expression can't both be set"
                ));
                Mapping::None
            } else if !string_at(u, "expression").is_empty() {
                let source = string_at(u, "expression");
                match claims_expression(source, &format!("{mpath}.uid.expression"), &mut errs) {
                    Some(e) => Mapping::Expression {
                        source: source.into(),
                        e: Box::new(e),
                    },
                    None => Mapping::None,
                }
            } else if !string_at(u, "claim").is_empty() {
                Mapping::Claim {
                    claim: string_at(u, "claim").into(),
                    prefix: String::new(),
                }
            } else {
                Mapping::None
            }
        };
        let mut extra = Vec::new();
        for (j, x) in m
            .get("extra")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let xpath = format!("{mpath}.extra[{j}]");
            let key = string_at(x, "key");
            if key.is_empty() {
                errs.push(format!("{xpath}.key: Required value"));
                continue;
            }
            if key != key.to_lowercase() {
                errs.push(format!(
                    "{xpath}.key: Invalid value: {key:?}: must be lowercase"
                ));
            }
            let domain = key.split('/').next().unwrap_or("");
            if ["kubernetes.io", "k8s.io"]
                .iter()
                .any(|d| domain == *d || domain.ends_with(&format!(".{d}")))
            {
                errs.push(format!("{xpath}.key: Invalid value: {key:?}: k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"));
            }
            let value = string_at(x, "valueExpression");
            if value.is_empty() {
                errs.push(format!("{xpath}.valueExpression: Required value"));
                continue;
            }
            if let Some(e) =
                claims_expression(value, &format!("{xpath}.valueExpression"), &mut errs)
            {
                extra.push((key.to_string(), value.to_string(), e));
            }
        }
        let uses = |name: &str| {
            let in_mapping = |mm: &Mapping| matches!(mm, Mapping::Expression { source, .. } if source.contains(name));
            in_mapping(&username)
                || extra.iter().any(|(_, s, _)| s.contains(name))
                || claim_rules.iter().any(
                    |r| matches!(r, ClaimRule::Expression { source, .. } if source.contains(name)),
                )
        };
        if matches!(&username, Mapping::Expression { source, .. } if source.contains("claims.email"))
            && !uses("claims.email_verified")
        {
            errs.push(format!("{mpath}.username.expression: Invalid value: {:?}: claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression", string_at(&m["username"], "expression")));
        }
        let mut user_rules = Vec::new();
        for (j, r) in a
            .get("userValidationRules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let rpath = format!("{path}.userValidationRules[{j}]");
            let source = string_at(r, "expression");
            if source.is_empty() {
                errs.push(format!(
                    "{rpath}.expression: Required value: expression is required"
                ));
                continue;
            }
            match Expression::compile_checked(source, &environment::user()) {
                Ok(e) => user_rules.push((source.to_string(), e, string_at(r, "message").into())),
                Err(e) => errs.push(format!(
                    "{rpath}.expression: Invalid value: {source:?}: compilation failed: {}",
                    e.0
                )),
            }
        }
        if let Some(client) = client {
            let discovery_url = if discovery.is_empty() {
                format!(
                    "{}/.well-known/openid-configuration",
                    url.trim_end_matches('/')
                )
            } else {
                discovery.to_string()
            };
            list.push(Issuer {
                url: url.to_string(),
                discovery_url,
                audiences,
                client,
                username,
                groups,
                uid,
                extra,
                claim_rules,
                user_rules,
            });
        }
    }
    if !errs.is_empty() {
        anyhow::bail!("{}", errors_text(&errs));
    }
    Ok(list)
}

//! The audit policy (`audit.k8s.io/v1` `Policy`, `k8s.io/apiserver/pkg/apis/audit/v1/types.go`):
//! rules evaluated in order, the first that matches a request gives its level (`None` when none
//! does), and the stages to omit (the policy's and the rule's). Rule matching is
//! `k8s.io/apiserver/pkg/audit/policy/checker.go` `ruleMatches`; validation is
//! `k8s.io/apiserver/pkg/apis/audit/validation/validation.go` `ValidatePolicy`.

use super::event::{Level, Stage};
use crate::authorization::Attributes;
use serde::Deserialize;
use std::path::Path;

/// One `GroupResources` of a rule.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupResources {
    /// API group (`""` core).
    #[serde(default)]
    pub group: String,
    /// Resources (`pods`, `pods/status`, `*`, `*/status`, `pods/*`); empty = all of the group.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Object names; empty = all.
    #[serde(default)]
    pub resource_names: Vec<String>,
}

/// One rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRule {
    /// The level of matching requests.
    pub level: String,
    /// User names; empty = any.
    #[serde(default)]
    pub users: Vec<String>,
    /// Groups (any of the user's); empty = any.
    #[serde(default)]
    pub user_groups: Vec<String>,
    /// Verbs; empty = any.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Resources; empty = any (resource requests only, when given).
    #[serde(default)]
    pub resources: Vec<GroupResources>,
    /// Namespaces (`""` = cluster scope); empty = any.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Non-resource URL paths (`/healthz*`).
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
    /// Stages not to record for this rule.
    #[serde(default)]
    pub omit_stages: Vec<String>,
    /// Accepted for compatibility; managed fields are not recorded apart.
    #[serde(default)]
    pub omit_managed_fields: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PolicyDocument {
    api_version: String,
    kind: String,
    #[serde(default)]
    metadata: serde_json::Value,
    #[serde(default)]
    rules: Vec<PolicyRule>,
    #[serde(default)]
    omit_stages: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    omit_managed_fields: Option<bool>,
}

/// A validated policy.
#[derive(Clone, Debug)]
pub struct Policy {
    rules: Vec<(Level, Vec<Stage>, PolicyRule)>,
    omit_stages: Vec<Stage>,
}

fn stages(list: &[String], path: &str) -> Result<Vec<Stage>, String> {
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            s.parse().map_err(|_| {
                format!("{path}[{i}]: Unsupported value: {s:?}: supported values: \"RequestReceived\", \"ResponseStarted\", \"ResponseComplete\", \"Panic\"")
            })
        })
        .collect()
}

impl Policy {
    /// Read and validate `--audit-policy-file` (YAML or JSON). Errors name the file and the
    /// offending rule field (`rules[2].level: Unsupported value: …`).
    pub fn load(path: &Path) -> anyhow::Result<Policy> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("audit policy file '{}': {e}", path.display()))?;
        Policy::parse(&text)
            .map_err(|e| anyhow::anyhow!("audit policy file '{}': {e}", path.display()))
    }

    /// Parse and validate a policy document.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let doc: PolicyDocument = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
        let _ = doc.metadata;
        if doc.api_version != "audit.k8s.io/v1" || doc.kind != "Policy" {
            return Err(format!(
                "expected apiVersion audit.k8s.io/v1 and kind Policy, got {:?} {:?}",
                doc.api_version, doc.kind
            ));
        }
        let omit_stages = stages(&doc.omit_stages, "omitStages")?;
        let mut rules = Vec::new();
        for (i, rule) in doc.rules.into_iter().enumerate() {
            let level: Level = rule.level.parse().map_err(|_| {
                format!("rules[{i}].level: Unsupported value: {:?}: supported values: \"None\", \"Metadata\", \"Request\", \"RequestResponse\"", rule.level)
            })?;
            let rule_stages = stages(&rule.omit_stages, &format!("rules[{i}].omitStages"))?;
            if !rule.non_resource_urls.is_empty()
                && (!rule.resources.is_empty() || !rule.namespaces.is_empty())
            {
                return Err(format!(
                    "rules[{i}].nonResourceURLs: Invalid value: {:?}: rules cannot apply to both regular resources and non-resource URLs",
                    rule.non_resource_urls
                ));
            }
            for (j, url) in rule.non_resource_urls.iter().enumerate() {
                let star = url.find('*');
                if !url.starts_with('/') && url != "*" || star.is_some_and(|p| p != url.len() - 1) {
                    return Err(format!(
                        "rules[{i}].nonResourceURLs[{j}]: Invalid value: {url:?}: non-resource URL rules must begin with '/' and may only end with '*'"
                    ));
                }
            }
            for (j, gr) in rule.resources.iter().enumerate() {
                if !gr.resource_names.is_empty() && gr.resources.is_empty() {
                    return Err(format!(
                        "rules[{i}].resources[{j}].resourceNames: Invalid value: {:?}: using resourceNames requires at least one resource",
                        gr.resource_names
                    ));
                }
            }
            rules.push((level, rule_stages, rule));
        }
        Ok(Policy { rules, omit_stages })
    }

    /// The level of a request and the stages to omit for it.
    ///
    /// Credentials stay out of the log unless asked for by name: a request for one of
    /// [`CREDENTIAL_RESOURCES`] whose rule gives `Request` or `RequestResponse` without naming
    /// that resource itself (a rule for `*`, `*/token`, a whole group or every request) is
    /// recorded at `Metadata`. kube-apiserver records what the rule says; its documented
    /// policies (`cluster/gce/gci/configure-helper.sh`, the audit docs' example) add a
    /// `Metadata` rule for `secrets` and `tokenreviews` by hand, which this makes the default.
    pub fn evaluate(&self, attrs: &Attributes) -> (Level, Vec<Stage>) {
        for (level, rule_stages, rule) in &self.rules {
            if rule_matches(rule, attrs) {
                let mut omit = self.omit_stages.clone();
                omit.extend(rule_stages.iter().copied());
                let mut level = *level;
                if level > Level::Metadata && is_credential(attrs) && !names_resource(rule, attrs) {
                    level = Level::Metadata;
                }
                return (level, omit);
            }
        }
        (Level::None, self.omit_stages.clone())
    }
}

/// `(group, resource, subresource)` whose bodies carry credentials: Secrets, the TokenRequest
/// subresource (its answer is a token) and TokenReviews (the request is a token).
pub const CREDENTIAL_RESOURCES: [(&str, &str, &str); 3] = [
    ("", "secrets", ""),
    ("", "serviceaccounts", "token"),
    ("authentication.k8s.io", "tokenreviews", ""),
];

fn is_credential(a: &Attributes) -> bool {
    a.resource_request
        && CREDENTIAL_RESOURCES
            .iter()
            .any(|(g, r, sub)| *g == a.api_group && *r == a.resource && *sub == a.subresource)
}

/// Whether `rule` lists the request's resource (and subresource) by name in its group.
fn names_resource(rule: &PolicyRule, a: &Attributes) -> bool {
    let combined = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    rule.resources
        .iter()
        .any(|gr| gr.group == a.api_group && gr.resources.contains(&combined))
}

fn rule_matches(r: &PolicyRule, a: &Attributes) -> bool {
    if !r.users.is_empty() && !r.users.contains(&a.user.name) {
        return false;
    }
    if !r.user_groups.is_empty() && !a.user.groups.iter().any(|g| r.user_groups.contains(g)) {
        return false;
    }
    if !r.verbs.is_empty() && !r.verbs.contains(&a.verb) {
        return false;
    }
    if !r.namespaces.is_empty() || !r.resources.is_empty() {
        return a.resource_request && resource_matches(r, a);
    }
    if !r.non_resource_urls.is_empty() {
        return !a.resource_request
            && r.non_resource_urls.iter().any(|u| {
                u == "*"
                    || u == &a.path
                    || (u.ends_with('*') && a.path.starts_with(u.trim_end_matches('*')))
            });
    }
    true
}

fn resource_matches(r: &PolicyRule, a: &Attributes) -> bool {
    if !r.namespaces.is_empty() && !r.namespaces.contains(&a.namespace) {
        return false;
    }
    if r.resources.is_empty() {
        return true;
    }
    let combined = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    r.resources.iter().any(|gr| {
        gr.group == a.api_group
            && (gr.resources.is_empty()
                || gr.resources.iter().any(|res| {
                    (gr.resource_names.is_empty() || gr.resource_names.contains(&a.name))
                        && (res == &combined
                            || res == "*"
                            || (!a.subresource.is_empty()
                                && res.strip_prefix("*/") == Some(a.subresource.as_str()))
                            || res.strip_suffix("/*") == Some(a.resource.as_str()))
                }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::UserInfo;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: None
  users: ["system:anonymous"]
- level: Metadata
  omitStages: [ResponseStarted]
"#;

    fn attrs(verb: &str, resource: &str, path: &str, user: &str) -> Attributes {
        Attributes {
            user: UserInfo {
                name: user.into(),
                ..Default::default()
            },
            verb: verb.into(),
            resource_request: !resource.is_empty(),
            resource: resource.into(),
            namespace: "default".into(),
            path: path.into(),
            ..Default::default()
        }
    }

    #[test]
    fn first_matching_rule_decides() {
        let p = Policy::parse(POLICY).unwrap();
        assert_eq!(
            p.evaluate(&attrs("get", "", "/healthz", "jane")).0,
            Level::None
        );
        let (level, omit) = p.evaluate(&attrs("create", "configmaps", "", "jane"));
        assert_eq!(level, Level::RequestResponse);
        assert_eq!(omit, [Stage::RequestReceived]);
        assert_eq!(
            p.evaluate(&attrs("list", "pods", "", "system:anonymous")).0,
            Level::None
        );
        let (level, omit) = p.evaluate(&attrs("list", "pods", "", "jane"));
        assert_eq!(level, Level::Metadata);
        assert_eq!(omit, [Stage::RequestReceived, Stage::ResponseStarted]);
    }

    #[test]
    fn credentials_need_a_rule_naming_them_for_their_bodies() {
        let p = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources:\n  - group: \"\"\n    resources: [\"secrets\"]\n  namespaces: [\"audited\"]\n- level: RequestResponse\n",
        )
        .unwrap();
        let mut a = attrs("get", "secrets", "", "jane");
        // Caught by the catch-all rule: Metadata only.
        assert_eq!(p.evaluate(&a).0, Level::Metadata);
        // Named by the first rule: what it says.
        a.namespace = "audited".into();
        assert_eq!(p.evaluate(&a).0, Level::RequestResponse);
        // The TokenRequest subresource and TokenReviews likewise; other resources unchanged.
        let mut token = attrs("create", "serviceaccounts", "", "jane");
        token.subresource = "token".into();
        assert_eq!(p.evaluate(&token).0, Level::Metadata);
        token.subresource = String::new();
        assert_eq!(p.evaluate(&token).0, Level::RequestResponse);
        let mut review = attrs("create", "tokenreviews", "", "jane");
        review.api_group = "authentication.k8s.io".into();
        assert_eq!(p.evaluate(&review).0, Level::Metadata);
        assert_eq!(
            p.evaluate(&attrs("get", "configmaps", "", "jane")).0,
            Level::RequestResponse
        );
    }

    #[test]
    fn invalid_policies_name_the_rule() {
        let e = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n- level: Everything\n",
        )
        .unwrap_err();
        assert!(
            e.starts_with("rules[1].level: Unsupported value: \"Everything\""),
            "{e}"
        );
        let e = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n",
        )
        .unwrap_err();
        assert!(
            e.starts_with("rules[0].nonResourceURLs: Invalid value"),
            "{e}"
        );
        assert!(Policy::parse("apiVersion: v1\nkind: Policy\n").is_err());
        let e = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  verbz: [get]\n",
        )
        .unwrap_err();
        assert!(e.contains("verbz"), "{e}");
    }
}

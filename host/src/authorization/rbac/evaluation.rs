//! Rule and subject matching, ported from `pkg/apis/rbac/v1/evaluation_helpers.go`
//! (`VerbMatches`, `APIGroupMatches`, `ResourceMatches`, `ResourceNameMatches`,
//! `NonResourceURLMatches`), `plugin/pkg/auth/authorizer/rbac/rbac.go` `RuleAllows`, and
//! `pkg/registry/rbac/validation/rule.go` `appliesToUser`.

use super::types::{PolicyRule, Subject};
use crate::authentication::UserInfo;
use crate::authorization::Attributes;

const ALL: &str = "*";

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups.iter().any(|g| g == ALL || g == group)
}

fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        r == ALL
            || r == combined
            // `*/status` matches the status subresource of every resource.
            || (!subresource.is_empty()
                && r.len() == subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(subresource))
    })
}

fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().any(|u| {
        u == ALL || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
    })
}

/// Whether `rule` allows the request `attrs` (`RuleAllows`).
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    rule_allows_combined(attrs, &combined_resource(attrs), rule)
}

/// `resource` or `resource/subresource`, as rules name it.
pub fn combined_resource(attrs: &Attributes) -> std::borrow::Cow<'_, str> {
    if attrs.subresource.is_empty() {
        std::borrow::Cow::Borrowed(&attrs.resource)
    } else {
        std::borrow::Cow::Owned(format!("{}/{}", attrs.resource, attrs.subresource))
    }
}

/// [`rule_allows`] with the combined resource computed once per request.
pub fn rule_allows_combined(attrs: &Attributes, combined: &str, rule: &PolicyRule) -> bool {
    if attrs.resource_request {
        verb_matches(rule, &attrs.verb)
            && api_group_matches(rule, &attrs.api_group)
            && resource_matches(rule, combined, &attrs.subresource)
            && resource_name_matches(rule, &attrs.name)
    } else {
        verb_matches(rule, &attrs.verb) && non_resource_url_matches(rule, &attrs.path)
    }
}

/// Whether `subject` is `user`; `namespace` defaults a service account's namespace (the
/// binding's own) (`appliesToUser`).
pub fn applies_to_user(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => user.name == subject.name,
        "Group" => user.in_group(&subject.name),
        "ServiceAccount" => {
            let ns = if subject.namespace.is_empty() {
                namespace
            } else {
                &subject.namespace
            };
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{}", subject.name)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        PolicyRule {
            verbs: s(verbs),
            api_groups: s(groups),
            resources: s(resources),
            resource_names: s(names),
            non_resource_urls: vec![],
        }
    }

    fn attrs(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn resource_rules() {
        let r = rule(&["get", "list"], &[""], &["pods"], &[]);
        assert!(rule_allows(&attrs("get", "", "pods", "", "a"), &r));
        assert!(!rule_allows(&attrs("create", "", "pods", "", ""), &r));
        assert!(!rule_allows(&attrs("get", "apps", "pods", "", "a"), &r));
        // A subresource needs its own grant …
        assert!(!rule_allows(&attrs("get", "", "pods", "status", "a"), &r));
        // … given by name or by `*/status`.
        let st = rule(&["get"], &["*"], &["*/status"], &[]);
        assert!(rule_allows(&attrs("get", "", "pods", "status", "a"), &st));
        assert!(!rule_allows(&attrs("get", "", "pods", "", "a"), &st));
        let named = rule(&["*"], &["example.dev"], &["widgets"], &["w1"]);
        assert!(rule_allows(
            &attrs("delete", "example.dev", "widgets", "", "w1"),
            &named
        ));
        assert!(!rule_allows(
            &attrs("delete", "example.dev", "widgets", "", "w2"),
            &named
        ));
    }

    #[test]
    fn non_resource_rules() {
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into(), "/apis/*".into()],
            ..Default::default()
        };
        let at = |path: &str| Attributes {
            verb: "get".into(),
            path: path.into(),
            ..Default::default()
        };
        assert!(rule_allows(&at("/healthz"), &r));
        assert!(rule_allows(&at("/apis/example.dev/v1"), &r));
        assert!(!rule_allows(&at("/version"), &r));
    }

    #[test]
    fn subjects() {
        let jane = UserInfo {
            name: "jane".into(),
            groups: vec!["dev".into()],
            ..Default::default()
        };
        let subject = |kind: &str, name: &str, ns: &str| Subject {
            kind: kind.into(),
            name: name.into(),
            namespace: ns.into(),
            ..Default::default()
        };
        assert!(applies_to_user(&jane, &subject("User", "jane", ""), ""));
        assert!(applies_to_user(&jane, &subject("Group", "dev", ""), ""));
        assert!(!applies_to_user(&jane, &subject("Group", "jane", ""), ""));
        let sa = UserInfo {
            name: "system:serviceaccount:ns1:robot".into(),
            ..Default::default()
        };
        assert!(applies_to_user(
            &sa,
            &subject("ServiceAccount", "robot", ""),
            "ns1"
        ));
        assert!(!applies_to_user(
            &sa,
            &subject("ServiceAccount", "robot", ""),
            ""
        ));
        assert!(applies_to_user(
            &sa,
            &subject("ServiceAccount", "robot", "ns1"),
            "x"
        ));
    }
}

//! Escalation prevention (`pkg/registry/rbac/validation/policy_comparator.go` `Covers`,
//! `BreakdownRule`, `ruleCovers`; `rule.go` `ConfirmNoEscalation`; `pkg/registry/rbac/
//! escalation_check.go`): a user may only write a role, or bind one, whose rules they already
//! hold — unless they may `escalate` (roles) or `bind` (bindings), or are in `system:masters`.

use super::policy::Policy;
use super::types::PolicyRule;
use crate::authentication::UserInfo;

fn has(set: &[String], e: &str) -> bool {
    set.iter().any(|s| s == e)
}

fn has_all(set: &[String], contains: &[String]) -> bool {
    contains.iter().all(|c| has(set, c))
}

fn resource_covers_all(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// `ruleCovers`: whether `owner` grants all of the (broken-down) `sub`.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = sub.non_resource_urls.iter().all(|p| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| non_resource_url_covers(o, p))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// The most atomic rules one check looks at; past it the write needs `escalate` / `bind`.
/// (kube materializes the product without a bound; a 3 MiB role could ask for ~10⁸.)
pub const MAX_ATOMIC_RULES: usize = 200_000;

/// The uncovered atomic rules reported at most.
const MAX_MISSING: usize = 100;

/// `Covers`: whether `owner` grants everything in `servant`, and (up to a hundred of) the
/// atomic rules it does not. Each servant rule is broken down lazily (`BreakdownRule`), so
/// nothing larger than one atomic rule is built; more than [`MAX_ATOMIC_RULES`] counts as
/// not covered.
pub fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let size: usize = servant
        .iter()
        .map(|r| {
            let resource = r
                .api_groups
                .len()
                .saturating_mul(r.resources.len())
                .saturating_mul(r.verbs.len())
                .saturating_mul(r.resource_names.len().max(1));
            resource.saturating_add(r.non_resource_urls.len().saturating_mul(r.verbs.len()))
        })
        .fold(0usize, usize::saturating_add);
    if size > MAX_ATOMIC_RULES {
        return (false, Vec::new());
    }
    let mut missing = Vec::new();
    let mut ok = true;
    let mut check = |sub: PolicyRule| {
        if !owner.iter().any(|o| rule_covers(o, &sub)) {
            ok = false;
            if missing.len() < MAX_MISSING {
                missing.push(sub);
            }
        }
    };
    let one = |s: &String| vec![s.clone()];
    for rule in servant {
        for g in &rule.api_groups {
            for r in &rule.resources {
                for v in &rule.verbs {
                    if rule.resource_names.is_empty() {
                        check(PolicyRule {
                            verbs: one(v),
                            api_groups: one(g),
                            resources: one(r),
                            ..Default::default()
                        });
                    }
                    for n in &rule.resource_names {
                        check(PolicyRule {
                            verbs: one(v),
                            api_groups: one(g),
                            resources: one(r),
                            resource_names: one(n),
                            ..Default::default()
                        });
                    }
                }
            }
        }
        for u in &rule.non_resource_urls {
            for v in &rule.verbs {
                check(PolicyRule {
                    verbs: one(v),
                    non_resource_urls: one(u),
                    ..Default::default()
                });
            }
        }
    }
    (ok, missing)
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn go_quoted(v: &[String]) -> String {
    let parts: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", parts.join(" "))
}

/// `rbacv1helpers.CompactString`: `{APIGroups:["apps"], Resources:["deployments"],
/// Verbs:["get"]}`.
pub fn compact_string(r: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (name, v) in [
        ("APIGroups", &r.api_groups),
        ("Resources", &r.resources),
        ("NonResourceURLs", &r.non_resource_urls),
        ("ResourceNames", &r.resource_names),
        ("Verbs", &r.verbs),
    ] {
        if !v.is_empty() {
            parts.push(format!("{name}:{}", go_quoted(v)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// `CompactRules`: broken-down resource rules without names that differ only in their verb
/// become one rule with all the verbs (in first-seen order). At most a hundred rules come in.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    for r in rules {
        let simple = r.resource_names.is_empty() && r.non_resource_urls.is_empty();
        if simple {
            if let Some(existing) = out.iter_mut().find(|o| {
                o.resource_names.is_empty()
                    && o.non_resource_urls.is_empty()
                    && o.api_groups == r.api_groups
                    && o.resources == r.resources
            }) {
                for v in r.verbs {
                    if !has(&existing.verbs, &v) {
                        existing.verbs.push(v);
                    }
                }
                continue;
            }
        }
        out.push(r);
    }
    out
}

/// `ConfirmNoEscalation`: `Ok` when `user` holds every rule in `rules` in `namespace` (their
/// cluster-wide rules and, with a namespace, that namespace's). Errors: kube's message listing
/// the missing rules, for a 403.
pub fn confirm_no_escalation(
    policy: &Policy,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = policy.rules_for(user, namespace);
    let (ok, missing) = covers(&owner, rules);
    if ok {
        return Ok(());
    }
    if missing.is_empty() {
        return Err(format!(
            "user {:?} (groups={}) is attempting to grant RBAC permissions that are too many to check (more than {MAX_ATOMIC_RULES} verb, group, resource and name combinations); this needs the escalate or bind verb",
            user.name,
            go_quoted(&user.groups)
        ));
    }
    let mut descriptions: Vec<String> = compact(missing).iter().map(compact_string).collect();
    descriptions.sort();
    descriptions.dedup();
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        go_quoted(&user.groups),
        descriptions.join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(", ")));
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        PolicyRule {
            verbs: s(verbs),
            api_groups: s(groups),
            resources: s(resources),
            ..Default::default()
        }
    }

    #[test]
    fn covers_as_kube_does() {
        let owner = [
            rule(&["get", "list"], &[""], &["pods", "*/status"]),
            rule(&["*"], &["example.dev"], &["*"]),
        ];
        assert!(covers(&owner, &[rule(&["get"], &[""], &["pods"])]).0);
        assert!(covers(&owner, &[rule(&["list"], &[""], &["configmaps/status"])]).0);
        assert!(covers(&owner, &[rule(&["delete"], &["example.dev"], &["widgets"])]).0);
        let (ok, missing) = covers(&owner, &[rule(&["get", "create"], &[""], &["pods"])]);
        assert!(!ok);
        assert_eq!(missing, [rule(&["create"], &[""], &["pods"])]);
        assert_eq!(
            compact_string(&missing[0]),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["create"]}"#
        );
    }

    #[test]
    fn huge_rules_are_refused_without_being_built() {
        let many = |n: usize| (0..n).map(|i| format!("x{i}")).collect::<Vec<_>>();
        let rule = PolicyRule {
            verbs: many(1000),
            api_groups: many(200),
            resources: many(1000),
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let (ok, missing) = covers(&[], &[rule]);
        assert!(!ok && missing.is_empty());
        assert!(t.elapsed() < std::time::Duration::from_millis(100));
    }

    #[test]
    fn missing_rules_are_compacted_in_the_message() {
        let policy = Policy::default();
        let user = UserInfo {
            name: "jane".into(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            ..Default::default()
        };
        let err = confirm_no_escalation(
            &policy,
            &user,
            "dev",
            &[rule(&["get", "list"], &[""], &["pods"])],
        )
        .unwrap_err();
        assert_eq!(
            err,
            "user \"jane\" (groups=[\"dev\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"list\"]}"
        );
    }
}

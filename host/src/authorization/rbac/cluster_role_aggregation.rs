//! ClusterRole aggregation (`pkg/controller/clusterroleaggregation/
//! clusterroleaggregation_controller.go`): a ClusterRole with an `aggregationRule` holds the
//! rules of every other ClusterRole its `clusterRoleSelectors` match, in name order, each rule
//! once. [`aggregate`] computes the rules every aggregated role should hold (to a fixed point,
//! since aggregated roles may select each other, as `admin` selects `edit`); the policy
//! watcher writes the roles whose stored rules differ, through the registry, as the controller
//! does — so `kubectl get clusterrole edit -o yaml` shows the aggregated rules.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_apimachinery::labels::LabelSelector;

fn selector(s: &Value) -> Option<LabelSelector> {
    LabelSelector::from_metav1(s)
}

fn labels(role: &Value) -> BTreeMap<String, String> {
    wasm_apiserver_apimachinery::meta::accessor(role)
        .labels()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn name(role: &Value) -> &str {
    wasm_apiserver_apimachinery::meta::accessor(role).name()
}

/// The rules each aggregated ClusterRole should hold, by name, given every ClusterRole.
/// Only roles whose stored `rules` differ are returned.
pub fn aggregate<'a>(roles: impl IntoIterator<Item = &'a Arc<Value>>) -> BTreeMap<String, Value> {
    let mut rules: BTreeMap<String, Value> = BTreeMap::new();
    let mut all: Vec<&Value> = roles.into_iter().map(|r| r.as_ref()).collect();
    all.sort_by(|a, b| name(a).cmp(name(b)));
    for r in &all {
        rules.insert(name(r).to_string(), r["rules"].clone());
    }
    let aggregated: Vec<(&str, Vec<LabelSelector>)> = all
        .iter()
        .filter(|r| r["aggregationRule"].is_object())
        .map(|r| {
            let selectors = r["aggregationRule"]["clusterRoleSelectors"]
                .as_array()
                .map(|a| a.iter().filter_map(selector).collect())
                .unwrap_or_default();
            (name(r), selectors)
        })
        .collect();
    // Aggregated roles may select aggregated roles; a few passes reach the fixed point (the
    // controller converges through its own watch events instead).
    for _ in 0..8 {
        let mut changed = false;
        for (target, selectors) in &aggregated {
            let mut out: Vec<Value> = Vec::new();
            for r in &all {
                if name(r) == *target || !selectors.iter().any(|s| s.matches(&labels(r))) {
                    continue;
                }
                for rule in rules[name(r)].as_array().into_iter().flatten() {
                    if !out.contains(rule) {
                        out.push(rule.clone());
                    }
                }
            }
            let out = Value::Array(out);
            if rules[*target] != out {
                rules.insert(target.to_string(), out);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    all.iter()
        .filter(|r| r["aggregationRule"].is_object() && rules[name(r)] != r["rules"])
        .map(|r| (name(r).to_string(), rules[name(r)].clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn role(name: &str, labels: Value, rules: Value, agg: Option<&str>) -> Arc<Value> {
        let mut r = json!({"metadata": {"name": name, "labels": labels}, "rules": rules});
        if let Some(label) = agg {
            r["aggregationRule"] =
                json!({"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]});
        }
        Arc::new(r)
    }

    #[test]
    fn aggregated_roles_collect_and_chain() {
        let get = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let put = json!({"verbs": ["update"], "apiGroups": [""], "resources": ["pods"]});
        let roles = [
            role(
                "view",
                json!({"agg-edit": "true"}),
                json!(null),
                Some("agg-view"),
            ),
            role("edit", json!({}), json!([]), Some("agg-edit")),
            role(
                "r-view",
                json!({"agg-view": "true"}),
                json!([get.clone()]),
                None,
            ),
            role(
                "r-edit",
                json!({"agg-edit": "true"}),
                json!([put.clone()]),
                None,
            ),
        ];
        let out = aggregate(&roles);
        assert_eq!(out["view"], json!([get.clone()]));
        // edit selects r-edit and view (whose rules are aggregated first), in name order.
        assert_eq!(out["edit"], json!([put, get]));
        assert!(!out.contains_key("r-view"));
    }
}

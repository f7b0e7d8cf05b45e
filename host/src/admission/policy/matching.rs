//! Which requests a policy or binding applies to: `matchConstraints` / `matchResources`
//! (`admissionregistration.k8s.io/v1` `MatchResources`), as kube's policy matcher decides
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching.go`): the namespace
//! selector (`webhook/predicates/namespace/matcher.go`: cluster-scoped resources other than
//! namespaces always match; a Namespace is matched by its own labels), the object selector
//! (the new or the old object's labels), `excludeResourceRules` first, then `resourceRules`
//! (`webhook/predicates/rules/rules.go`: operation, group, version, resource and subresource
//! with `*`, scope, `resourceNames`). An empty `resourceRules` matches every resource (a
//! binding's `matchResources`; a policy's is required by its validation).
//!
//! `matchPolicy: Equivalent` (the default) also matches the resource's storage version — the
//! version every object admission sees is in — when the request's version does not match
//! (kube tries every equivalent resource and converts the object to the one matched; a
//! resource is served here under one group, so its other versions are its equivalents, and
//! policies see objects in the storage version). `Exact` matches the request's version only.

use crate::admission::interface::Attributes;
use crate::admission::namespace_lifecycle::lookup;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_apiserver_apimachinery::labels::LabelSelector;
use wasm_apiserver_apimachinery::meta::accessor;

/// What matching needs of a request, looked up once per request and member: the object's
/// name, the namespace it is matched in, that namespace's object (from the watch cache, then
/// storage, as `NamespaceLifecycle` reads it) and the labels selectors see.
pub struct RequestFacts {
    /// The name from the URL, else the object's (a create).
    pub name: String,
    /// The request's namespace; a Namespace's own name for a namespace.
    pub namespace: String,
    /// The request's Namespace object (`None` for cluster-scoped resources and namespaces).
    pub namespace_object: Option<Arc<Value>>,
    /// Why the namespace could not be read: a configuration error of the policies whose
    /// namespace selector needs its labels.
    pub namespace_error: Option<String>,
    labels: Option<BTreeMap<String, String>>,
    old_labels: Option<BTreeMap<String, String>>,
    namespace_labels: Option<BTreeMap<String, String>>,
}

/// An object's labels (`None` when there is no object).
pub fn labels(obj: Option<&Value>) -> Option<BTreeMap<String, String>> {
    let obj = obj?;
    Some(
        accessor(obj)
            .labels()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

impl RequestFacts {
    /// Look up what `a` (with `object`, `None` for a delete) is matched by.
    pub async fn of(a: &Attributes<'_>, object: Option<&Value>) -> RequestFacts {
        let d = &a.store.description;
        let name = match a.name {
            "" => object.map(|o| accessor(o).name()).unwrap_or(""),
            n => n,
        };
        let is_namespace = d.group.is_empty() && d.plural == "namespaces";
        let namespace = if is_namespace { name } else { a.namespace };
        let namespaces = a.resources.get("", "v1", "namespaces");
        let looked_up = if is_namespace {
            Ok(None)
        } else {
            lookup(namespaces.as_deref(), a.store, namespace).await
        };
        let (namespace_object, namespace_error) = match looked_up {
            Ok(ns) => (ns, None),
            Err(e) => (None, Some(e.message)),
        };
        let namespace_labels = if is_namespace {
            labels(object.or(a.old_object))
        } else {
            labels(namespace_object.as_deref())
        };
        RequestFacts {
            name: name.to_string(),
            namespace: namespace.to_string(),
            namespace_object,
            namespace_error,
            labels: labels(object),
            old_labels: labels(a.old_object),
            namespace_labels,
        }
    }

    /// The request as [`MatchResources`] matches it, in the request's version.
    pub fn request<'a>(&'a self, a: &'a Attributes<'a>) -> MatchRequest<'a> {
        let d = &a.store.description;
        MatchRequest {
            operation: a.operation.as_str(),
            group: &d.group,
            version: &d.version,
            resource: &d.plural,
            subresource: a.subresource,
            namespace: &self.namespace,
            name: &self.name,
            labels: self.labels.clone(),
            old_labels: self.old_labels.clone(),
            namespace_labels: self.namespace_labels.clone(),
        }
    }
}

/// The version part of a Store's storage `apiVersion` (`v1` of `apps/v1`).
pub fn storage_version<'a>(a: &'a Attributes<'a>) -> &'a str {
    a.store
        .converter
        .storage_api_version
        .rsplit('/')
        .next()
        .unwrap_or("")
}

/// A request as matching sees it.
pub struct MatchRequest<'a> {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: &'a str,
    /// The resource's group, version and plural.
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    /// `""` or e.g. `status`.
    pub subresource: &'a str,
    /// `""` for cluster-scoped resources (a Namespace's own name for a namespace).
    pub namespace: &'a str,
    /// The object's name (`""` for a create with `generateName`).
    pub name: &'a str,
    /// The new object's and the old object's labels (either may be absent).
    pub labels: Option<BTreeMap<String, String>>,
    pub old_labels: Option<BTreeMap<String, String>>,
    /// The labels of the request's namespace (of the Namespace itself for a namespace);
    /// `None` when it is not known.
    pub namespace_labels: Option<BTreeMap<String, String>>,
}

impl MatchRequest<'_> {
    fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.resource == "namespaces"
    }
}

/// One `NamedRuleWithOperations`.
#[derive(Clone, Debug, Default)]
struct Rule {
    operations: Vec<String>,
    api_groups: Vec<String>,
    api_versions: Vec<String>,
    resources: Vec<String>,
    /// `*` (the default), `Cluster` or `Namespaced`.
    scope: String,
    resource_names: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

impl Rule {
    fn parse(v: &Value) -> Rule {
        Rule {
            operations: strings(&v["operations"]),
            api_groups: strings(&v["apiGroups"]),
            api_versions: strings(&v["apiVersions"]),
            resources: strings(&v["resources"]),
            scope: v["scope"].as_str().unwrap_or("*").to_string(),
            resource_names: strings(&v["resourceNames"]),
        }
    }

    /// rules.go `Matcher.Matches`, then the rule's `resourceNames`.
    fn matches(&self, r: &MatchRequest) -> bool {
        let scope = match self.scope.as_str() {
            "*" | "" => true,
            "Namespaced" => !r.is_namespace() && !r.namespace.is_empty(),
            "Cluster" => r.is_namespace() || r.namespace.is_empty(),
            _ => false,
        };
        let operation = self.operations.iter().any(|o| o == "*" || o == r.operation);
        let resource = self.resources.iter().any(|res| {
            let (res, sub) = res.split_once('/').unwrap_or((res, ""));
            (res == "*" || res == r.resource) && (sub == "*" || sub == r.subresource)
        });
        scope
            && operation
            && exact_or_wildcard(&self.api_groups, r.group)
            && exact_or_wildcard(&self.api_versions, r.version)
            && resource
            && (self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == r.name))
    }
}

/// A `MatchResources`, parsed once.
#[derive(Debug, Default)]
pub struct MatchResources {
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
    resource_rules: Vec<Rule>,
    exclude_resource_rules: Vec<Rule>,
    /// `matchPolicy: Exact`.
    exact: bool,
}

impl MatchResources {
    /// `v` is a `MatchResources` object (absent: matches everything). A selector that cannot
    /// be parsed selects nothing, as kube answers its error only for requests it would
    /// otherwise match (`Err` from [`MatchResources::matches`]).
    pub fn parse(v: Option<&Value>) -> Result<MatchResources, String> {
        let Some(v) = v.filter(|v| v.is_object()) else {
            return Ok(MatchResources::default());
        };
        let selector = |key: &str| -> Result<Option<LabelSelector>, String> {
            match v.get(key).filter(|s| s.is_object()) {
                None => Ok(None),
                Some(s) => LabelSelector::from_metav1(s)
                    .map(|s| (!s.is_empty()).then_some(s))
                    .ok_or_else(|| format!("{key}: {s} is not a valid label selector")),
            }
        };
        let rules = |key: &str| -> Vec<Rule> {
            v[key]
                .as_array()
                .map(|a| a.iter().map(Rule::parse).collect())
                .unwrap_or_default()
        };
        Ok(MatchResources {
            namespace_selector: selector("namespaceSelector")?,
            object_selector: selector("objectSelector")?,
            resource_rules: rules("resourceRules"),
            exclude_resource_rules: rules("excludeResourceRules"),
            exact: v.get("matchPolicy").and_then(Value::as_str) == Some("Exact"),
        })
    }

    /// [`MatchResources::matches`] in the request's version, then (unless `matchPolicy:
    /// Exact`) in `storage_version`: the version matched, or `None`.
    pub fn matches_equivalent<'a>(
        &self,
        r: &MatchRequest<'a>,
        storage_version: &'a str,
    ) -> Result<Option<&'a str>, String> {
        if self.matches(r)? {
            return Ok(Some(r.version));
        }
        if self.exact || storage_version == r.version {
            return Ok(None);
        }
        let stored = MatchRequest {
            version: storage_version,
            labels: r.labels.clone(),
            old_labels: r.old_labels.clone(),
            namespace_labels: r.namespace_labels.clone(),
            ..*r
        };
        Ok(self.matches(&stored)?.then_some(storage_version))
    }

    /// matching.go `Matches`: the selectors, the excluded rules, the rules. Errors: the
    /// namespace is not known while the selector needs its labels (kube answers its 404).
    pub fn matches(&self, r: &MatchRequest) -> Result<bool, String> {
        let namespace = match &self.namespace_selector {
            None => Ok(true),
            Some(_) if r.namespace.is_empty() && !r.is_namespace() => Ok(true),
            Some(s) => match &r.namespace_labels {
                Some(labels) => Ok(s.matches(labels)),
                None => Err(format!("namespaces \"{}\" not found", r.namespace)),
            },
        };
        if namespace == Ok(false) {
            return Ok(false);
        }
        if let Some(s) = &self.object_selector {
            let empty = BTreeMap::new();
            let new = r.labels.as_ref().is_some_and(|l| s.matches(l));
            let old = r.old_labels.as_ref().is_some_and(|l| s.matches(l));
            // An absent object matches as an object without labels would.
            let absent = r.labels.is_none() && r.old_labels.is_none() && s.matches(&empty);
            if !(new || old || absent) {
                return Ok(false);
            }
        }
        if self
            .exclude_resource_rules
            .iter()
            .any(|rule| rule.matches(r))
        {
            return Ok(false);
        }
        if !self.resource_rules.is_empty()
            && !self.resource_rules.iter().any(|rule| rule.matches(r))
        {
            return Ok(false);
        }
        namespace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request<'a>(
        operation: &'a str,
        resource: &'a str,
        sub: &'a str,
        ns: &'a str,
    ) -> MatchRequest<'a> {
        MatchRequest {
            operation,
            group: "",
            version: "v1",
            resource,
            subresource: sub,
            namespace: ns,
            name: "n",
            labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            old_labels: None,
            namespace_labels: Some(BTreeMap::from([("env".into(), "prod".into())])),
        }
    }

    #[test]
    fn rules_match_as_kube_s_rule_matcher() {
        let m = |v: Value| MatchResources::parse(Some(&v)).unwrap();
        let rule = |resources: Value, scope: &str| {
            json!({"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                "apiVersions": ["*"], "resources": resources, "scope": scope}]})
        };
        let pods = request("CREATE", "pods", "", "default");
        let status = request("CREATE", "pods", "status", "default");
        assert_eq!(m(rule(json!(["pods"]), "*")).matches(&pods), Ok(true));
        assert_eq!(m(rule(json!(["pods"]), "*")).matches(&status), Ok(false));
        assert_eq!(m(rule(json!(["*"]), "*")).matches(&status), Ok(false));
        assert_eq!(m(rule(json!(["*/status"]), "*")).matches(&status), Ok(true));
        assert_eq!(m(rule(json!(["pods/*"]), "*")).matches(&status), Ok(true));
        assert_eq!(
            m(rule(json!(["pods"]), "Cluster")).matches(&pods),
            Ok(false)
        );
        assert_eq!(
            m(rule(json!(["pods"]), "Namespaced")).matches(&pods),
            Ok(true)
        );
        assert_eq!(
            m(rule(json!(["pods"]), "*")).matches(&request("UPDATE", "pods", "", "default")),
            Ok(false)
        );
        // Excluded first; an empty rule list matches everything (a binding's).
        let mut excluded = rule(json!(["*"]), "*");
        excluded["excludeResourceRules"] = excluded["resourceRules"].clone();
        assert_eq!(m(excluded).matches(&pods), Ok(false));
        assert_eq!(m(json!({})).matches(&pods), Ok(true));
        // Selectors: the namespace's labels, the object's; cluster-scoped objects ignore the
        // namespace selector.
        let ns = |labels: Value| json!({"namespaceSelector": {"matchLabels": labels}});
        assert_eq!(m(ns(json!({"env": "prod"}))).matches(&pods), Ok(true));
        assert_eq!(m(ns(json!({"env": "dev"}))).matches(&pods), Ok(false));
        assert_eq!(
            m(ns(json!({"env": "dev"}))).matches(&request("CREATE", "nodes", "", "")),
            Ok(true)
        );
        let mut unknown = request("CREATE", "pods", "", "gone");
        unknown.namespace_labels = None;
        assert!(m(ns(json!({"env": "prod"}))).matches(&unknown).is_err());
        let obj = |labels: Value| json!({"objectSelector": {"matchLabels": labels}});
        assert_eq!(m(obj(json!({"app": "web"}))).matches(&pods), Ok(true));
        assert_eq!(m(obj(json!({"app": "db"}))).matches(&pods), Ok(false));
    }
}

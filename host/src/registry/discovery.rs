//! Discovery: aggregated discovery v2 (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`, served
//! at `/api` and `/apis` when the client asks for it) and legacy discovery (`APIVersions`,
//! `APIGroupList`, `APIResourceList`), built from the path-to-storage map
//! (`k8s.io/apiserver/pkg/endpoints/discovery`, `discovery/aggregated`).

use super::resource_map::ResourceMap;
use super::store::Store;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The content type kubectl requires for an aggregated answer.
pub const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Verbs of every plugin-backed resource.
pub const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// A resource the host serves itself rather than through a plugin's storage: the reviews
/// (TokenReview among them), which are create-only and store nothing.
pub struct BuiltinResource {
    /// API group.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Plural.
    pub plural: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Namespace-scoped (`LocalSubjectAccessReview`).
    pub namespaced: bool,
}

/// The host's own resources, listed in discovery beside the plugins'.
pub const BUILTIN: &[BuiltinResource] = &[
    BuiltinResource {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
        namespaced: false,
    },
    BuiltinResource {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "tokenreviews",
        kind: "TokenReview",
        namespaced: false,
    },
    BuiltinResource {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "localsubjectaccessreviews",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
    },
    BuiltinResource {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
    },
    BuiltinResource {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
    },
    BuiltinResource {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "subjectaccessreviews",
        kind: "SubjectAccessReview",
        namespaced: false,
    },
];

fn builtin_in<'a>(
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'static BuiltinResource> + 'a {
    BUILTIN
        .iter()
        .filter(move |b| b.group == group && b.version == version)
}

/// Served groups and their versions (the preferred first): the plugins' and the host's own.
pub fn all_groups(map: &ResourceMap) -> BTreeMap<String, Vec<String>> {
    let mut groups = map.groups();
    for b in BUILTIN {
        let vs = groups.entry(b.group.to_string()).or_default();
        if !vs.iter().any(|v| v == b.version) {
            vs.push(b.version.to_string());
        }
    }
    groups
}

/// The versions of `group` served, if any.
pub fn group_versions(map: &ResourceMap, group: &str) -> Option<Vec<String>> {
    all_groups(map).remove(group)
}

/// Whether an `Accept` header asks for aggregated discovery v2.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|a| {
        let a = a.replace(' ', "");
        a.contains("as=APIGroupDiscoveryList")
            && a.contains("g=apidiscovery.k8s.io")
            && a.contains("v=v2")
            && !a.contains("v=v2beta1")
    })
}

fn scope(namespaced: bool) -> &'static str {
    if namespaced {
        "Namespaced"
    } else {
        "Cluster"
    }
}

/// One group's `APIGroupDiscovery` entry: `versions` (the preferred first) with the
/// resources of `stores` (every served version of the group's resources) and the host's own.
pub fn group_discovery(group: &str, versions: &[String], stores: &[&Arc<Store>]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| {
            let mut resources: Vec<Value> = stores
                .iter()
                .filter(|r| &r.description.version == v)
                .map(|r| {
                    let d = &r.description;
                    let kind = json!({"group": d.group, "version": d.version, "kind": d.kind});
                    let mut res = json!({
                        "resource": d.plural, "responseKind": kind, "scope": scope(d.namespaced),
                        "singularResource": d.singular, "verbs": VERBS,
                    });
                    if !d.short_names.is_empty() {
                        res["shortNames"] = json!(d.short_names);
                    }
                    if !d.categories.is_empty() {
                        res["categories"] = json!(d.categories);
                    }
                    let mut subresources = Vec::new();
                    if d.has_status() {
                        subresources.push(json!({"subresource": "status", "responseKind": kind,
                                                 "verbs": ["get", "patch", "update"]}));
                    }
                    if r.scale_paths().is_some() {
                        subresources.push(json!({"subresource": "scale", "verbs": ["get", "patch", "update"],
                                                 "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}}));
                    }
                    if !subresources.is_empty() {
                        res["subresources"] = json!(subresources);
                    }
                    res
                })
                .collect();
            resources.extend(builtin_in(group, v).map(|b| {
                json!({"resource": b.plural, "scope": scope(b.namespaced), "singularResource": "",
                       "responseKind": {"group": b.group, "version": b.version, "kind": b.kind},
                       "verbs": ["create"]})
            }));
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions})
}

/// Aggregated discovery (`APIGroupDiscoveryList`) of the serialized group entries `items`
/// ([`group_discovery`]): `/api` gets the core group's, `/apis` every other group's.
pub fn aggregated<'a>(items: impl Iterator<Item = &'a [u8]>) -> bytes::Bytes {
    let mut out = br#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":["#.to_vec();
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item);
    }
    out.extend_from_slice(b"]}");
    out.into()
}

/// Legacy `/api`: `APIVersions`.
pub fn api_versions(server_address: &str) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
           "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]})
}

/// Legacy `/apis`: `APIGroupList`.
pub fn api_group_list(map: &ResourceMap) -> Value {
    let groups: Vec<Value> = all_groups(map)
        .iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| api_group(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// Legacy `/apis/<group>`: `APIGroup`.
pub fn api_group(group: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vs,
           "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

/// Legacy `/api/v1` or `/apis/<group>/<version>`: `APIResourceList`; `None` when nothing is
/// served there.
pub fn api_resource_list(map: &ResourceMap, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for r in map.iter_served() {
        let d = &r.description;
        if d.group != group || d.version != version {
            continue;
        }
        let mut res = json!({"name": d.plural, "singularName": d.singular, "namespaced": d.namespaced,
                             "kind": d.kind, "verbs": VERBS});
        if !d.short_names.is_empty() {
            res["shortNames"] = json!(d.short_names);
        }
        if !d.categories.is_empty() {
            res["categories"] = json!(d.categories);
        }
        resources.push(res);
        if d.has_status() {
            resources.push(json!({"name": format!("{}/status", d.plural), "singularName": "",
                                  "namespaced": d.namespaced, "kind": d.kind, "verbs": ["get", "patch", "update"]}));
        }
        if r.scale_paths().is_some() {
            resources.push(json!({"name": format!("{}/scale", d.plural), "singularName": "",
                                  "namespaced": d.namespaced, "group": "autoscaling", "version": "v1",
                                  "kind": "Scale", "verbs": ["get", "patch", "update"]}));
        }
    }
    resources.extend(builtin_in(group, version).map(|b| {
        json!({"name": b.plural, "singularName": "", "namespaced": b.namespaced, "kind": b.kind,
               "verbs": ["create"]})
    }));
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_accept_header_selects_aggregated() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert!(wants_aggregated(kubectl));
        assert!(!wants_aggregated("application/json, */*"));
    }
}

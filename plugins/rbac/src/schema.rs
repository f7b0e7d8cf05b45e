//! OpenAPI v3 schemas of the RBAC kinds (descriptions from
//! `staging/src/k8s.io/api/rbac/v1/types.go`, shortened), for `kubectl explain` and
//! server-side apply's list semantics (every list atomic, as kube declares them).

use wasm_apiserver_sdk::prelude::*;

fn strings(description: &str) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "string"},
           "x-kubernetes-list-type": "atomic"})
}

fn common(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object", "description": "Standard object's metadata."}
        }
    })
}

/// Role (`cluster` false) or ClusterRole.
pub fn role(cluster: bool) -> Value {
    let mut s = common(if cluster {
        "ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding."
    } else {
        "Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding."
    });
    s["properties"]["rules"] = json!({
        "type": "array",
        "description": "Rules holds all the PolicyRules for this role",
        "x-kubernetes-list-type": "atomic",
        "items": {
            "type": "object",
            "description": "PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.",
            "required": ["verbs"],
            "properties": {
                "verbs": strings("Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs."),
                "apiGroups": strings("APIGroups is the name of the APIGroup that contains the resources. \"\" represents the core API group and \"*\" represents all API groups."),
                "resources": strings("Resources is a list of resources this rule applies to. '*' represents all resources."),
                "resourceNames": strings("ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed."),
                "nonResourceURLs": strings("NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path. Rules can either apply to API resources or non-resource URL paths, but not both.")
            }
        }
    });
    if cluster {
        s["properties"]["aggregationRule"] = json!({
            "type": "object",
            "description": "AggregationRule is an optional field that describes how to build the Rules for this ClusterRole. Stored and validated; this server does not aggregate.",
            "properties": {"clusterRoleSelectors": {
                "type": "array", "x-kubernetes-list-type": "atomic",
                "description": "ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules.",
                "items": {"type": "object", "x-kubernetes-map-type": "atomic"}
            }}
        });
    }
    s
}

/// RoleBinding (`cluster` false) or ClusterRoleBinding.
pub fn binding(cluster: bool) -> Value {
    let mut s = common(if cluster {
        "ClusterRoleBinding references a ClusterRole, but not contain it.  It can reference a ClusterRole in the global namespace, and adds who information via Subject."
    } else {
        "RoleBinding references a role, but does not contain it.  It can reference a Role in the same namespace or a ClusterRole in the global namespace."
    });
    s["required"] = json!(["roleRef"]);
    s["properties"]["subjects"] = json!({
        "type": "array",
        "description": "Subjects holds references to the objects the role applies to.",
        "x-kubernetes-list-type": "atomic",
        "items": {
            "type": "object",
            "required": ["kind", "name"],
            "x-kubernetes-map-type": "atomic",
            "properties": {
                "kind": {"type": "string", "description": "Kind of object being referenced: \"User\", \"Group\", or \"ServiceAccount\"."},
                "apiGroup": {"type": "string", "description": "APIGroup holds the API group of the referenced subject. Defaults to \"\" for ServiceAccount subjects and \"rbac.authorization.k8s.io\" for User and Group subjects."},
                "name": {"type": "string", "description": "Name of the object being referenced."},
                "namespace": {"type": "string", "description": "Namespace of the referenced object."}
            }
        }
    });
    s["properties"]["roleRef"] = json!({
        "type": "object",
        "description": "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. This field is immutable.",
        "required": ["apiGroup", "kind", "name"],
        "x-kubernetes-map-type": "atomic",
        "properties": {
            "apiGroup": {"type": "string", "description": "APIGroup is the group for the resource being referenced"},
            "kind": {"type": "string", "description": "Kind is the type of resource being referenced"},
            "name": {"type": "string", "description": "Name is the name of resource being referenced"}
        }
    });
    s
}

//! The default roles and bindings (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`
//! `ClusterRoles`, `ClusterRoleBindings`), as `rbac.authorization.k8s.io/v1` objects labelled
//! `kubernetes.io/bootstrapping: rbac-defaults` and annotated
//! `rbac.authorization.kubernetes.io/autoupdate: "true"`, as kube writes them.
//!
//! - `cluster-admin`: everything; bound to `system:masters`.
//! - `system:discovery`: discovery, OpenAPI, health and version; bound to
//!   `system:authenticated`.
//! - `system:basic-user`: the self reviews (`SelfSubjectReview`, `SelfSubjectAccessReview`,
//!   `SelfSubjectRulesReview`); bound to `system:authenticated`.
//! - `system:public-info-viewer`: health and version; bound to `system:authenticated` and
//!   `system:unauthenticated`.
//! - `system:service-account-issuer-discovery`: the issuer's OpenID documents; bound to
//!   `system:serviceaccounts`.
//! - `admin`, `edit`, `view`: the user-facing roles, aggregated (`aggregationRule` selecting
//!   `rbac.authorization.k8s.io/aggregate-to-{admin,edit,view}: "true"`) from
//!   `system:aggregate-to-admin`, `-edit`, `-view`, which carry kube 1.32's rules; `edit` is
//!   labelled to aggregate into `admin`, `view` into both. A ClusterRole of your own with such
//!   a label extends them (e.g. widgets into `edit`), as with CRDs on kube.

use serde_json::{json, Value};

const READ: [&str; 3] = ["get", "list", "watch"];
const WRITE: [&str; 5] = ["create", "delete", "deletecollection", "patch", "update"];
const READ_WRITE: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": groups, "resources": resources})
}

fn url_rule(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"verbs": verbs, "nonResourceURLs": urls})
}

fn metadata(name: &str, extra_labels: &[(&str, &str)]) -> Value {
    let mut labels = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    for (k, v) in extra_labels {
        labels[*k] = json!(v);
    }
    json!({"name": name, "labels": labels,
           "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}})
}

fn cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": metadata(name, labels), "rules": rules})
}

fn cluster_role_binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g}))
        .collect();
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": metadata(name, &[]), "subjects": subjects,
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}})
}

/// What `view` adds (`system:aggregate-to-view`): reading the non-escalating resources (no
/// secrets).
fn view_rules() -> Vec<Value> {
    vec![
        rule(
            &READ,
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
        ),
        rule(
            &READ,
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
        ),
        rule(&READ, &[""], &["namespaces"]),
        rule(&READ, &["discovery.k8s.io"], &["endpointslices"]),
        rule(
            &READ,
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
        ),
        rule(
            &READ,
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        rule(
            &READ,
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
        ),
        rule(
            &READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            &READ,
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
        ),
    ]
}

/// What `edit` adds to `view` (`system:aggregate-to-edit`): writing them, and secrets.
fn edit_rules() -> Vec<Value> {
    vec![
        rule(&["impersonate"], &[""], &["serviceaccounts"]),
        rule(
            &WRITE,
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
            ],
        ),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(
            &WRITE,
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
        ),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(
            &WRITE,
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        rule(&WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        rule(&WRITE, &["batch"], &["cronjobs", "jobs"]),
        rule(&WRITE, &["policy"], &["poddisruptionbudgets"]),
        rule(
            &WRITE,
            &["networking.k8s.io"],
            &["ingresses", "networkpolicies"],
        ),
        rule(&WRITE, &["coordination.k8s.io"], &["leases"]),
        rule(
            &READ,
            &[""],
            &[
                "secrets",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "services/proxy",
            ],
        ),
    ]
}

/// What `admin` adds to `edit` (`system:aggregate-to-admin`): roles and bindings in the
/// namespace, local access reviews.
fn admin_rules() -> Vec<Value> {
    vec![
        rule(
            &["create"],
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews"],
        ),
        rule(
            &READ_WRITE,
            &["rbac.authorization.k8s.io"],
            &["rolebindings", "roles"],
        ),
    ]
}

fn aggregated(name: &str, labels: &[(&str, &str)], selects: &str) -> Value {
    let mut role = cluster_role(name, labels, vec![]);
    role["aggregationRule"] = json!({"clusterRoleSelectors": [
        {"matchLabels": {format!("rbac.authorization.k8s.io/aggregate-to-{selects}"): "true"}}
    ]});
    role
}

/// The default ClusterRoles.
pub fn cluster_roles() -> Vec<Value> {
    let public_urls = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    vec![
        cluster_role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], &["*"], &["*"]), url_rule(&["*"], &["*"])],
        ),
        cluster_role(
            "system:discovery",
            &[],
            vec![url_rule(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(
                    &["create"],
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        cluster_role(
            "system:public-info-viewer",
            &[],
            vec![url_rule(&["get"], &public_urls)],
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            &[],
            vec![url_rule(
                &["get"],
                &[
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
            )],
        ),
        aggregated("admin", &[], "admin"),
        aggregated(
            "edit",
            &[("rbac.authorization.k8s.io/aggregate-to-admin", "true")],
            "edit",
        ),
        aggregated(
            "view",
            &[
                ("rbac.authorization.k8s.io/aggregate-to-admin", "true"),
                ("rbac.authorization.k8s.io/aggregate-to-edit", "true"),
            ],
            "view",
        ),
        cluster_role(
            "system:aggregate-to-admin",
            &[("rbac.authorization.k8s.io/aggregate-to-admin", "true")],
            admin_rules(),
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &[("rbac.authorization.k8s.io/aggregate-to-edit", "true")],
            edit_rules(),
        ),
        cluster_role(
            "system:aggregate-to-view",
            &[("rbac.authorization.k8s.io/aggregate-to-view", "true")],
            view_rules(),
        ),
    ]
}

/// The default ClusterRoleBindings.
pub fn cluster_role_bindings() -> Vec<Value> {
    vec![
        cluster_role_binding("cluster-admin", "cluster-admin", &["system:masters"]),
        cluster_role_binding(
            "system:discovery",
            "system:discovery",
            &["system:authenticated"],
        ),
        cluster_role_binding(
            "system:basic-user",
            "system:basic-user",
            &["system:authenticated"],
        ),
        cluster_role_binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
        cluster_role_binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            &["system:serviceaccounts"],
        ),
    ]
}

/// The bootstrap policy alone, aggregated, as the authorizer reads it.
pub fn policy() -> super::Policy {
    let mut roles: Vec<std::sync::Arc<Value>> = cluster_roles()
        .into_iter()
        .map(std::sync::Arc::new)
        .collect();
    let rules = super::cluster_role_aggregation::aggregate(&roles);
    for r in roles.iter_mut() {
        if let Some(new) = rules.get(wasm_apiserver_apimachinery::meta::accessor(r).name()) {
            std::sync::Arc::make_mut(r)["rules"] = new.clone();
        }
    }
    let bindings = cluster_role_bindings();
    super::Policy::from_objects(roles.iter().map(|r| r.as_ref()), [], &bindings, [])
}

//! MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding (issue 33, second slice),
//! through kubectl as a cluster admin applies them: an `ApplyConfiguration` that defaults a
//! label from the namespace's (merged, the object's other labels kept), a `JSONPatch` with
//! `jsonpatch.escapeKey`, the mutating stage running before the validating policies (a
//! ValidatingAdmissionPolicy requiring the label admits), updates mutated too,
//! `reinvocationPolicy: IfNeeded` (a policy run again after a later one changed the object),
//! `failurePolicy` Fail and Ignore on a patch that does not apply, the `authorizer` variable
//! (RBAC), kube's metrics, and kube's validation of the objects. ConfigMaps in namespaces, on both stores.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::Value;

const POLICIES: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: a-copy-tier}
spec:
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"tier-copy":
          has(object.metadata.labels) && 'tier' in object.metadata.labels ? object.metadata.labels["tier"] : "none"}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: b-team-label}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  variables:
  - {name: team, expression: "namespaceObject.metadata.labels['team']"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"team": string(variables.team), "tier": "standard"}}}
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{annotations: {
          "requester-may-delete-namespaces":
            string(authorizer.group("").resource("namespaces").check("delete").allowed()),
          "robot-may-delete-namespaces":
            string(authorizer.serviceAccount("team-a", "robot").group("").resource("namespaces").check("delete").allowed())}}}
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{annotations: {
          "requester-may-create-this": string(authorizer.requestResource.check("create").allowed())}}}
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        has(object.metadata.annotations) && "example.com/mutated-by" in object.metadata.annotations ? [] :
        [JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/mutated-by"),
                   value: "b-team-label"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: a-copy-tier}
spec:
  policyName: a-copy-tier
  matchResources:
    namespaceSelector: {matchExpressions: [{key: team, operator: Exists}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: b-team-label}
spec:
  policyName: b-team-label
  matchResources:
    namespaceSelector: {matchExpressions: [{key: team, operator: Exists}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: needs-team}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
    namespaceSelector: {matchExpressions: [{key: team, operator: Exists}]}
  validations:
  - {expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: "a team label is required"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: needs-team}
spec: {policyName: needs-team, validationActions: [Deny]}
"#;

fn get(s: &TestServer, ns: &str, name: &str) -> Value {
    serde_json::from_str(&s.ok(&[
        "get",
        "configmap",
        name,
        "-n",
        ns,
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap()
}

fn broken(failure_policy: &str) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {{name: broken}}
spec:
  failurePolicy: {failure_policy}
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}
    namespaceSelector: {{matchLabels: {{fragile: "yes"}}}}
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{{op: "remove", path: "/data/missing"}}]'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {{name: broken}}
spec: {{policyName: broken}}
"#
    )
}

#[test]
fn mutating_admission_policies_mutate_as_kube_mutates_embedded() {
    mutate_as_kube(Backend::Embedded);
}

#[test]
fn mutating_admission_policies_mutate_as_kube_mutates_etcd() {
    mutate_as_kube(Backend::Etcd);
}

fn mutate_as_kube(backend: Backend) {
    let s = TestServer::start_with(
        backend,
        &[
            "namespaces",
            "configmaps",
            "clusterroles",
            "clusterrolebindings",
        ],
        &["--authorization-mode=RBAC"],
    );
    for (ns, labels) in [("team-a", "{team: a}"), ("fragile", "{fragile: \"yes\"}")] {
        let f = s.file(
            &format!("{ns}.yaml"),
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {labels}}}\n"
            ),
        );
        s.ok(&["create", "-f", f.to_str().unwrap()]);
    }
    let policies = s.file("policies.yaml", POLICIES);
    s.ok(&["apply", "-f", policies.to_str().unwrap()]);
    let listed = s.ok(&[
        "get",
        "mutatingadmissionpolicies,mutatingadmissionpolicybindings",
    ]);
    assert!(listed.contains("b-team-label"), "{listed}");

    // Created mutated: the label from the namespace merged with the object's own, the
    // annotation added by JSON patch, and the validating policy admits what the mutating one
    // completed. `a-copy-tier` ran first (by name) and found no tier; once `b-team-label` set
    // one it ran again (IfNeeded).
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "team-a",
        "--from-literal=k=v",
    ]);
    let cm = get(&s, "team-a", "settings");
    let labels = &cm["metadata"]["labels"];
    assert_eq!(labels["team"], "a", "{cm}");
    assert_eq!(labels["tier"], "standard", "{cm}");
    assert_eq!(labels["tier-copy"], "standard", "reinvoked: {cm}");
    assert_eq!(
        cm["metadata"]["annotations"]["example.com/mutated-by"], "b-team-label",
        "{cm}"
    );
    assert_eq!(cm["data"]["k"], "v");
    // `authorizer`: the requester (a cluster admin) may, a service account with no role may not.
    let annotations = &cm["metadata"]["annotations"];
    assert_eq!(
        annotations["requester-may-delete-namespaces"], "true",
        "{cm}"
    );
    assert_eq!(annotations["robot-may-delete-namespaces"], "false", "{cm}");
    // `authorizer.requestResource`: the request's own resource.
    assert_eq!(annotations["requester-may-create-this"], "true", "{cm}");
    // No field manager of its own: the mutation is not a managedFields entry.
    let managers: Vec<&str> = cm["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(managers, ["kubectl-create"], "{cm}");

    // kube's metrics: each mutation counted per policy and binding.
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    assert!(
        metrics.lines().any(|l| l.starts_with(
            r#"apiserver_mutating_admission_policy_check_total{error_type="no_error",policy="b-team-label",policy_binding="b-team-label"}"#
        )),
        "{metrics}"
    );
    // Updates are mutated too: a label the user removes comes back.
    s.ok(&["label", "configmap", "settings", "-n", "team-a", "team-"]);
    assert_eq!(
        get(&s, "team-a", "settings")["metadata"]["labels"]["team"],
        "a"
    );
    // Outside the binding's namespaces nothing changes.
    s.ok(&["create", "configmap", "plain", "-n", "fragile"]);
    assert!(get(&s, "fragile", "plain")["metadata"]
        .get("labels")
        .is_none());

    // failurePolicy: Fail refuses with kube's text; Ignore skips the mutation.
    let f = s.file("broken.yaml", &broken("Fail"));
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let err = s.fails(&["create", "configmap", "one", "-n", "fragile", "-v=6"]);
    assert!(err.contains("403 Forbidden"), "{err}");
    assert!(
        err.contains("policy 'broken' with binding 'broken' denied request: JSON Patch: "),
        "{err}"
    );
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    assert!(
        metrics.lines().any(|l| l.starts_with(
            r#"apiserver_mutating_admission_policy_check_total{error_type="invalid_error",policy="broken",policy_binding="broken"} "#
        )),
        "{metrics}"
    );
    let f = s.file("broken.yaml", &broken("Ignore"));
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    s.ok(&["create", "configmap", "one", "-n", "fragile"]);

    // kube's validation of the objects.
    let bad = s.file(
        "bad.yaml",
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: bad}
spec:
  reinvocationPolicy: Sometimes
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "'an object'"}
"#,
    );
    let err = s.fails(&["apply", "-f", bad.to_str().unwrap()]);
    assert!(
        err.contains(r#"spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never""#),
        "{err}"
    );
    assert!(
        err.contains("spec.mutations[0].applyConfiguration.expression: Invalid value: \"'an object'\": compilation failed: must evaluate to Object but got string"),
        "{err}"
    );

    // Deleting the policy stops the mutation (the validating policy then refuses).
    s.ok(&["delete", "mutatingadmissionpolicy", "b-team-label"]);
    s.eventually(std::time::Duration::from_secs(5), "the policy gone", || {
        let (ok, _, err) = s.kubectl(&["create", "configmap", "bare", "-n", "team-a"]);
        !ok && err.contains("a team label is required")
    });
    // The example policy (`examples/policies/default-team-label.yaml`) completes it again.
    let example = common::server::repo_path("examples/policies/default-team-label.yaml");
    s.ok(&["apply", "-f", example.to_str().unwrap()]);
    s.ok(&["create", "configmap", "bare", "-n", "team-a"]);
    assert_eq!(get(&s, "team-a", "bare")["metadata"]["labels"]["team"], "a");
}

/// The official Python client (`tests/python/admission_policies.py`): policies and bindings
/// created with typed models, a mutated ConfigMap and a refusal read back as kube's.
#[test]
fn the_python_client_creates_policies_and_sees_their_mutations() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    s.create_default_namespace();
    common::run_python_client("admission_policies.py", &s.url);
}

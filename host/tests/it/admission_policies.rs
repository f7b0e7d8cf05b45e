//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (issue 33, first slice),
//! through kubectl as a cluster admin applies them: kube's validation of both objects (CEL
//! compile errors, Deny with Warn refused), enforcement with kube's texts and codes — `reason`
//! and its code, `message`, `messageExpression`, `failed expression: …` —, `matchConditions`,
//! `variables`, the binding's namespace selector, `Warn` as a `Warning` header,
//! `failurePolicy` Ignore and Fail on a run-time error, and a deleted binding no longer
//! enforced. ConfigMaps in namespaces, on the embedded store.

use crate::common;

use common::server::{Backend, TestServer};
use std::time::Duration;

const POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: cm-limits}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  matchConditions:
  - {name: not-exempt, expression: "!has(object.metadata.annotations) || !('exempt' in object.metadata.annotations)"}
  variables:
  - {name: keys, expression: "has(object.data) ? object.data.size() : 0"}
  validations:
  - {expression: "variables.keys <= 2", message: "at most two keys"}
  - expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)"
    messageExpression: "'label forbidden on ' + object.metadata.name"
    reason: Forbidden
  - {expression: "!has(object.data) || !('secret' in object.data)"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: cm-limits-deny}
spec:
  policyName: cm-limits
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {enforce: "yes"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: cm-limits-warn}
spec:
  policyName: cm-limits
  validationActions: [Warn]
  matchResources:
    namespaceSelector: {matchLabels: {warn: "yes"}}
"#;

fn configmap(s: &TestServer, ns: &str, name: &str, keys: usize, meta: &str) -> String {
    let data: Vec<String> = (0..keys).map(|i| format!("k{i}: v")).collect();
    let f = s.file(
        &format!("{ns}-{name}.yaml"),
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}{meta}}}\ndata: {{{}}}\n",
            data.join(", ")
        ),
    );
    f.to_str().unwrap().to_string()
}

#[test]
fn validating_admission_policies_are_enforced_as_kube_enforces_them() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    for (ns, labels) in [
        ("strict", "{enforce: \"yes\"}"),
        ("lax", "{}"),
        ("soft", "{warn: \"yes\"}"),
    ] {
        let f = s.file(
            &format!("{ns}.yaml"),
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {labels}}}\n"
            ),
        );
        s.ok(&["create", "-f", f.to_str().unwrap()]);
    }
    let policy = s.file("policy.yaml", POLICY);
    s.ok(&["apply", "-f", policy.to_str().unwrap()]);
    let listed = s.ok(&[
        "get",
        "validatingadmissionpolicies,validatingadmissionpolicybindings",
    ]);
    assert!(listed.contains("cm-limits-warn"), "{listed}");

    // Enforced at once, with kube's message, reason and code.
    let (ok, _, err) = s.kubectl(&["create", "-f", &configmap(&s, "strict", "three", 3, "")]);
    assert!(!ok);
    assert!(
        // kubectl's rendering of kube's 422 (the message is `configmaps "three" is forbidden:
        // …`, its one cause has no field), as kube's documentation shows it.
        err.contains(r#"The configmaps "three" is invalid: : ValidatingAdmissionPolicy 'cm-limits' with binding 'cm-limits-deny' denied request: at most two keys"#),
        "{err}"
    );
    let raw = s.kubectl(&[
        "create",
        "-f",
        &configmap(&s, "strict", "three", 3, ""),
        "-v=6",
    ]);
    assert!(raw.2.contains("422 Unprocessable Entity"), "{}", raw.2);
    let err = s.fails(&[
        "create",
        "-f",
        &configmap(&s, "strict", "bad", 1, ", labels: {forbidden: x}"),
        "-v=6",
    ]);
    assert!(err.contains("403 Forbidden"), "{err}");
    assert!(
        err.contains("denied request: label forbidden on bad"),
        "{err}"
    );
    let sec = s.file(
        "sec.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sec, namespace: strict}\ndata: {secret: x}\n",
    );
    let err = s.fails(&["create", "-f", sec.to_str().unwrap()]);
    assert!(
        err.contains(
            "denied request: failed expression: !has(object.data) || !('secret' in object.data)"
        ),
        "{err}"
    );
    // matchConditions false: not evaluated; another namespace: not bound.
    s.ok(&[
        "create",
        "-f",
        &configmap(
            &s,
            "strict",
            "exempted",
            3,
            ", annotations: {exempt: \"1\"}",
        ),
    ]);
    s.ok(&["create", "-f", &configmap(&s, "lax", "three", 3, "")]);
    // kube's metrics: a denial per action of the binding.
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    assert!(
        metrics.lines().any(|l| l.starts_with(
            r#"apiserver_validating_admission_policy_check_total{enforcement_action="deny",error_type="no_error",policy="cm-limits",policy_binding="cm-limits-deny"} "#
        )),
        "{metrics}"
    );
    // Warn: created, with kube's warning.
    let (ok, _, err) = s.kubectl(&["create", "-f", &configmap(&s, "soft", "three", 3, "")]);
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'cm-limits' with binding 'cm-limits-warn': at most two keys"),
        "{err}"
    );
    // Updates are checked too.
    let err = s.fails(&[
        "patch",
        "configmap",
        "exempted",
        "-n",
        "strict",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/annotations"}]"#,
    ]);
    assert!(err.contains("at most two keys"), "{err}");

    // kube's validation of the objects.
    let bad = s.file(
        "bad.yaml",
        &POLICY
            .split("---")
            .next()
            .unwrap()
            .replace("name: cm-limits", "name: broken")
            .replace("variables.keys <= 2", "variables.keys <="),
    );
    let err = s.fails(&["apply", "-f", bad.to_str().unwrap()]);
    assert!(
        err.contains("spec.validations[0].expression: Invalid value: \"variables.keys <=\": compilation failed: ERROR: <input>:1:"),
        "{err}"
    );
    let both = s.file(
        "both.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: both}\nspec: {policyName: cm-limits, validationActions: [Deny, Warn]}\n",
    );
    let err = s.fails(&["apply", "-f", both.to_str().unwrap()]);
    assert!(err.contains("must not contain both Deny and Warn"), "{err}");

    // failurePolicy on a run-time error: Ignore admits, Fail denies with the error.
    let fragile = |policy: &str| {
        format!(
            r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: fragile}}
spec:
  failurePolicy: {policy}
  matchConstraints:
    resourceRules:
    - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}
    namespaceSelector: {{matchLabels: {{warn: "yes"}}}}
  validations:
  - {{expression: "object.data.missing == 'x'"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: fragile}}
spec: {{policyName: fragile, validationActions: [Deny]}}
"#
        )
    };
    let f = s.file("fragile.yaml", &fragile("Ignore"));
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    s.ok(&["create", "-f", &configmap(&s, "soft", "one", 1, "")]);
    let f = s.file("fragile.yaml", &fragile("Fail"));
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let err = s.fails(&["create", "-f", &configmap(&s, "soft", "two", 1, "")]);
    assert!(
        err.contains("ValidatingAdmissionPolicy 'fragile' with binding 'fragile' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing"),
        "{err}"
    );

    // A deleted binding is no longer enforced.
    s.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "cm-limits-deny",
    ]);
    s.eventually(Duration::from_secs(5), "the binding gone", || {
        s.kubectl(&["create", "-f", &configmap(&s, "strict", "four", 3, "")])
            .0
    });
}

const PARAM_POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-keys}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || object.data.size() <= int(params.data.maxKeys)"
    messageExpression: "'at most ' + params.data.maxKeys + ' keys (' + params.metadata.name + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: by-name}
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef: {name: limits, namespace: policy-params, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {params: by-name}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: by-selector}
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef:
    selector: {matchLabels: {tier: gold}}
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector: {matchLabels: {params: by-selector}}
"#;

/// Params (kube's `paramKind` / `paramRef`): by name in another namespace with
/// `parameterNotFoundAction: Deny`, by selector in the request's namespace with `Allow`, one
/// evaluation per param object, and kube's validation of `paramRef`.
#[test]
fn params_by_name_and_by_selector_as_kube_collects_them() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    for (ns, labels) in [
        ("policy-params", "{}"),
        ("named", "{params: by-name}"),
        ("selected", "{params: by-selector}"),
    ] {
        let f = s.file(
            &format!("{ns}.yaml"),
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {labels}}}\n"
            ),
        );
        s.ok(&["create", "-f", f.to_str().unwrap()]);
    }
    let policy = s.file("params.yaml", PARAM_POLICY);
    s.ok(&["apply", "-f", policy.to_str().unwrap()]);

    // No param yet: Deny refuses, Allow admits.
    let err = s.fails(&["create", "-f", &configmap(&s, "named", "a", 1, "")]);
    assert!(
        err.contains("ValidatingAdmissionPolicy 'max-keys' with binding 'by-name' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"),
        "{err}"
    );
    s.ok(&["create", "-f", &configmap(&s, "selected", "a", 3, "")]);

    // The named param, in its own namespace.
    s.ok(&[
        "create",
        "configmap",
        "limits",
        "-n",
        "policy-params",
        "--from-literal=maxKeys=1",
    ]);
    let err = s.fails(&["create", "-f", &configmap(&s, "named", "b", 2, "")]);
    assert!(
        err.contains("ValidatingAdmissionPolicy 'max-keys' with binding 'by-name' denied request: at most 1 keys (limits)"),
        "{err}"
    );
    s.ok(&["create", "-f", &configmap(&s, "named", "c", 1, "")]);

    // Selected params in the request's namespace: each one is evaluated.
    for (name, max) in [("gold-a", 3), ("gold-b", 2)] {
        let f = s.file(
            &format!("{name}.yaml"),
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: selected, labels: {{tier: gold}}}}\ndata: {{maxKeys: \"{max}\"}}\n"),
        );
        s.ok(&["create", "-f", f.to_str().unwrap()]);
    }
    let err = s.fails(&["create", "-f", &configmap(&s, "selected", "d", 3, "")]);
    assert!(
        err.contains("denied request: at most 2 keys (gold-b)"),
        "{err}"
    );
    s.ok(&["create", "-f", &configmap(&s, "selected", "e", 2, "")]);

    // kube's validation of paramRef.
    let bad = s.file(
        "bad-binding.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: bad}\nspec:\n  policyName: max-keys\n  validationActions: [Deny]\n  paramRef: {name: x, selector: {}}\n",
    );
    let err = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    for want in [
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.parameterNotFoundAction: Required value",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
}

/// The policy library's ValidatingAdmissionPolicies with params, applied from
/// `examples/policies/` as their comments say: `required-labels.yaml` (ConfigMap params found
/// by selector in the request's namespace, one check per param object, none found: allowed)
/// and `replica-limit.yaml`, kube's documented example with a ReplicaLimit param object
/// (`replica-limit-crds.yaml`: both kinds as CustomResourceDefinitions), including its
/// `parameterNotFoundAction: Deny`.
#[test]
fn the_example_policies_with_params_do_what_their_comments_say() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &["namespaces", "configmaps", "pods"],
        &[],
    );
    s.create_default_namespace();
    let example = |f: &str| {
        common::server::repo_path(&format!("examples/policies/{f}"))
            .to_str()
            .unwrap()
            .to_string()
    };

    // Required labels, params by selector.
    s.ok(&["apply", "-f", &example("required-labels.yaml")]);
    s.ok(&["create", "namespace", "shop"]);
    s.ok(&["create", "namespace", "free"]);
    s.ok(&[
        "create",
        "configmap",
        "required-labels",
        "-n",
        "shop",
        "--from-literal=labels=team, owner",
    ]);
    s.ok(&[
        "label",
        "configmap",
        "required-labels",
        "-n",
        "shop",
        "admission.example.com/required-labels=true",
    ]);
    let denied = "ValidatingAdmissionPolicy 'required-labels' with binding 'required-labels' denied request: missing required label(s): team, owner (required by ConfigMap required-labels)";
    s.eventually(Duration::from_secs(5), "the required labels", || {
        let (ok, _, err) = s.kubectl(&["run", "web", "-n", "shop", "--image=nginx:1.27"]);
        !ok && err.contains(denied)
    });
    let err = s.fails(&[
        "run",
        "web",
        "-n",
        "shop",
        "--image=nginx:1.27",
        "-l",
        "team=a",
    ]);
    assert!(
        err.contains("missing required label(s): owner (required by ConfigMap required-labels)"),
        "{err}"
    );
    s.ok(&[
        "run",
        "web",
        "-n",
        "shop",
        "--image=nginx:1.27",
        "-l",
        "team=a,owner=b",
    ]);
    // A second param object is checked on its own; a namespace without one requires nothing.
    s.ok(&[
        "create",
        "configmap",
        "tier",
        "-n",
        "shop",
        "--from-literal=labels=tier",
    ]);
    s.ok(&[
        "label",
        "configmap",
        "tier",
        "-n",
        "shop",
        "admission.example.com/required-labels=true",
    ]);
    s.eventually(Duration::from_secs(5), "the second param object", || {
        let (ok, _, err) = s.kubectl(&[
            "run",
            "api",
            "-n",
            "shop",
            "--image=nginx:1.27",
            "-l",
            "team=a,owner=b",
        ]);
        !ok && err.contains("missing required label(s): tier (required by ConfigMap tier)")
    });
    s.ok(&["run", "web", "-n", "free", "--image=nginx:1.27"]);
    // Its expressions check against the Pod and ConfigMap schemas.
    let status = policy_status(&s, "required-labels");
    assert_eq!(status["typeChecking"], serde_json::json!({}), "{status}");

    // kube's replica limit, a param object by name.
    s.ok(&["apply", "-f", &example("replica-limit-crds.yaml")]);
    s.ok(&[
        "wait",
        "--for",
        "condition=Established",
        "crd/replicalimits.rules.example.com",
        "crd/webapps.apps.example.com",
    ]);
    s.eventually(Duration::from_secs(10), "the example applied", || {
        s.kubectl(&["apply", "-f", &example("replica-limit.yaml")])
            .0
    });
    s.ok(&["label", "namespace", "default", "environment=test"]);
    let status = policy_status(&s, "replicalimit-policy.example.com");
    assert_eq!(status["typeChecking"], serde_json::json!({}), "{status}");
    let webapp = |ns: &str, replicas: u32| {
        s.file(
            &format!("webapp-{ns}-{replicas}.json"),
            &format!(
                r#"{{"apiVersion": "apps.example.com/v1", "kind": "WebApp",
                    "metadata": {{"name": "web", "namespace": "{ns}"}}, "spec": {{"replicas": {replicas}}}}}"#
            ),
        )
        .to_str()
        .unwrap()
        .to_string()
    };
    let too_many = "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3";
    s.eventually(Duration::from_secs(5), "the replica limit", || {
        let (ok, _, err) = s.kubectl(&["apply", "-f", &webapp("default", 5)]);
        !ok && err.contains(too_many)
    });
    s.ok(&["apply", "-f", &webapp("default", 3)]);
    // An unlabelled namespace is not bound.
    s.ok(&["apply", "-f", &webapp("free", 5)]);
    // The limit changes with its param object; without it every write is refused.
    s.ok(&[
        "patch",
        "replicalimit",
        "replica-limit-test.example.com",
        "--type=merge",
        "-p",
        r#"{"maxReplicas": 5}"#,
    ]);
    s.eventually(Duration::from_secs(5), "the new limit", || {
        s.kubectl(&["apply", "-f", &webapp("default", 5)]).0
    });
    s.ok(&["delete", "replicalimit", "replica-limit-test.example.com"]);
    s.eventually(Duration::from_secs(5), "the param object gone", || {
        let (ok, _, err) = s.kubectl(&["apply", "-f", &webapp("default", 1)]);
        !ok && err
            .contains("no params found for policy binding with `Deny` parameterNotFoundAction")
    });
}

/// A ValidatingAdmissionPolicy's `status` once the status controller has seen its generation.
fn policy_status(s: &TestServer, name: &str) -> serde_json::Value {
    let mut status = serde_json::Value::Null;
    s.eventually(Duration::from_secs(5), "the policy's status", || {
        let out = s.ok(&["get", "validatingadmissionpolicy", name, "-o", "json"]);
        let p: serde_json::Value = serde_json::from_str(&out).unwrap();
        status = p["status"].clone();
        status["observedGeneration"] == p["metadata"]["generation"]
    });
    status
}

/// `status.typeChecking` as kube's status controller writes it: each expression checked
/// against the schema of every kind the policy matches (a CustomResourceDefinition's, a
/// plugin's), a warning per expression that does not compile against one, naming the kind;
/// checked again when the policy changes.
#[test]
fn type_checking_warnings_reach_the_policy_status() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    let crds = common::server::repo_path("examples/policies/replica-limit-crds.yaml");
    s.ok(&["apply", "-f", crds.to_str().unwrap()]);
    s.ok(&[
        "wait",
        "--for",
        "condition=Established",
        "crd/webapps.apps.example.com",
    ]);
    let policy = |replicas: &str, message: &str| {
        format!(
            r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: typed}}
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [apps.example.com], apiVersions: [v1], operations: [CREATE], resources: [webapps]}}
    - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps, configmaps/status]}}
    - {{apiGroups: ["*"], apiVersions: [v1], operations: [CREATE], resources: [pods]}}
  validations:
  - expression: "!has(object.spec) || object.spec.{replicas} <= 3"
  - expression: "object.metadata.name != ''"
    messageExpression: "{message}"
"#
        )
    };
    let f = s.file(
        "typed.yaml",
        &policy("replica", "'name: ' + object.metadata.name"),
    );
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let status = policy_status(&s, "typed");
    assert_eq!(status["observedGeneration"], 1);
    let warnings = status["typeChecking"]["expressionWarnings"]
        .as_array()
        .unwrap();
    assert_eq!(warnings.len(), 1, "{status}");
    assert_eq!(warnings[0]["fieldRef"], "spec.validations[0].expression");
    // ConfigMaps have no `spec`; WebApps' has no `replica`. Sorted by group: core first.
    assert_eq!(
        warnings[0]["warning"],
        "/v1, Kind=ConfigMap: ERROR: <input>:1:5: undefined field 'spec'\n | !has(object.spec) || object.spec.replica <= 3\n | ....^\nERROR: <input>:1:28: undefined field 'spec'\n | !has(object.spec) || object.spec.replica <= 3\n | ...........................^\n\napps.example.com/v1, Kind=WebApp: ERROR: <input>:1:33: undefined field 'replica'\n | !has(object.spec) || object.spec.replica <= 3\n | ................................^\n"
    );
    // Fixed, and another mistake: checked again for the new generation.
    let f = s.file(
        "typed.yaml",
        &policy("replicas", "'replicas: ' + object.spec.replicas"),
    );
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let status = policy_status(&s, "typed");
    assert_eq!(status["observedGeneration"], 2);
    let refs: Vec<&str> = status["typeChecking"]["expressionWarnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["fieldRef"].as_str().unwrap())
        .collect();
    assert_eq!(
        refs,
        [
            "spec.validations[0].expression",
            "spec.validations[1].messageExpression"
        ],
        "{status}"
    );
    let text = status["typeChecking"]["expressionWarnings"][1]["warning"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("apps.example.com/v1, Kind=WebApp: ERROR: <input>:1:14: found no matching overload for '_+_' applied to '(string, int)'"),
        "{text}"
    );
}

//! Wasm admission policies (issue 33, `wit/admission/0.1.0/admission.wit`): the example
//! `configmap-references` policy (`examples/policies/`) uploaded with `plugin push
//! --upload-only` and enforced through an `AdmissionPlugin` object applied with kubectl — a
//! component whose context read the object does not grant is refused in its status; once
//! granted, a Pod naming a missing ConfigMap is refused with the policy's message (kube's
//! webhook denial text and code), a ConfigMap created just before is seen (the watch cache is
//! as fresh as this replica's writes), an `optional` reference passes; `mode: Warn` admits
//! with a `Warning`; only an author who may read what a policy grants may create it; the
//! host's own resources are never subject to a policy. A test-only policy
//! (`plugins/misbehaving-policy`) that traps, loops or hoards memory refuses the requests it
//! matches with a 500 under `failurePolicy: Fail`, is skipped under `Ignore`, and never touches
//! a resource it does not match; a denial's code and reason reach the client; a read of an
//! undeclared resource is refused; a policy denying everything cannot deny its own removal;
//! a mutating policy's object is stored, one that renames it fails. Embedded store.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

fn upload(s: &TestServer, name: &str) -> String {
    let file = common::plugin(name);
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "push".as_ref(),
        file.as_os_str(),
        "--kubeconfig".as_ref(),
        s.kubeconfig().as_os_str(),
        "--upload-only".as_ref(),
    ]);
    assert!(ok, "{out}");
    hex::encode(Sha256::digest(std::fs::read(file).unwrap()))
}

fn admission_plugin(s: &TestServer, sha: &str, extra: &str) -> String {
    let f = s.file(
        "admission-plugin.yaml",
        &format!(
            "apiVersion: wasm-apiserver.dev/v1\nkind: AdmissionPlugin\nmetadata: {{name: configmap-references}}\nspec:\n  sha256: {sha}\n{extra}"
        ),
    );
    f.to_str().unwrap().to_string()
}

fn replica(s: &TestServer) -> Value {
    let o: Value = serde_json::from_str(&s.ok(&[
        "get",
        "admissionplugin",
        "configmap-references",
        "-o",
        "json",
    ]))
    .unwrap();
    o["status"]["replicas"][0].clone()
}

fn pod(s: &TestServer, name: &str, config_map: &str, optional: bool) -> String {
    let f = s.file(
        &format!("{name}.yaml"),
        &format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  containers: [{{name: c, image: nginx}}]\n  volumes: [{{name: v, configMap: {{name: {config_map}, optional: {optional}}}}}]\n"
        ),
    );
    f.to_str().unwrap().to_string()
}

#[test]
fn a_wasm_policy_reads_the_cache_and_refuses_what_kube_would_need_a_webhook_for() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &[
            "namespaces",
            "configmaps",
            "pods",
            "clusterroles",
            "clusterrolebindings",
        ],
        &["--authorization-mode=RBAC"],
    );
    s.create_default_namespace();
    let sha = upload(&s, "configmap-references");

    // The component reads ConfigMaps; an object that does not grant it is refused in its
    // status, and enforces nothing.
    s.ok(&["apply", "-f", &admission_plugin(&s, &sha, "")]);
    s.eventually(Duration::from_secs(120), "the refusal", || {
        replica(&s)["state"] == "Failed"
    });
    let r = replica(&s);
    assert!(
        r["lastError"]
            .as_str()
            .unwrap()
            .contains("the component reads configmaps, which spec.contextReads does not grant"),
        "{r}"
    );
    s.ok(&["create", "-f", &pod(&s, "before", "missing", false)]);

    // Granted: enforced before the apply returns.
    let grant = "  contextReads: [{group: \"\", resource: configmaps}]\n  settings: {exemptNamespaces: [kube-system]}\n";
    s.ok(&["apply", "-f", &admission_plugin(&s, &sha, grant)]);
    let r = replica(&s);
    assert_eq!(r["state"], "Active", "{r}");
    assert_eq!(r["observedGeneration"], 2, "{r}");
    assert_eq!(r["witVersion"], "0.1.0", "{r}");
    let err = s.fails(&["create", "-f", &pod(&s, "refused", "settings", false)]);
    assert!(
        err.contains(r#"Error from server (Forbidden): error when creating"#)
            && err.contains(r#"admission plugin "configmap-references" denied the request: the Pod names ConfigMap(s) that do not exist in namespace "default": settings (create them first, or mark the reference optional: true)"#),
        "{err}"
    );
    // A ConfigMap created just before is seen; an optional reference passes.
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "default",
        "--from-literal=k=v",
    ]);
    s.ok(&["create", "-f", &pod(&s, "admitted", "settings", false)]);
    s.ok(&["create", "-f", &pod(&s, "optional", "absent", true)]);
    // Only the policy's resources are affected.
    s.ok(&["create", "configmap", "other", "-n", "default"]);

    // Warn: admitted, with the denial as a warning.
    let warn = format!("{grant}  mode: Warn\n");
    s.ok(&["apply", "-f", &admission_plugin(&s, &sha, &warn)]);
    let (ok, out, errout) = s.kubectl(&["create", "-f", &pod(&s, "warned", "absent", false)]);
    assert!(ok, "{out}{errout}");
    assert!(
        errout.contains(r#"Warning: admission plugin "configmap-references" would deny the request: the Pod names ConfigMap(s)"#),
        "{errout}"
    );

    // Settings the component refuses keep the last good version enforcing.
    let bad = format!("{grant}  settings: {{exemptNamespaces: 7}}\n");
    s.ok(&[
        "apply",
        "-f",
        &admission_plugin(
            &s,
            &sha,
            &bad.replace("  settings: {exemptNamespaces: [kube-system]}\n", ""),
        ),
    ]);
    let r = replica(&s);
    assert_eq!(r["state"], "Failed", "{r}");
    assert!(
        r["lastError"].as_str().unwrap().contains("spec.settings: refused by the component: exemptNamespaces: must be a list of namespace names"),
        "{r}"
    );
    assert!(s
        .kubectl(&["create", "-f", &pod(&s, "still-warned", "absent", false)])
        .2
        .contains("would deny"));

    // An author may grant only what they may read themselves: vera may write
    // AdmissionPlugins, not read Secrets.
    let role = s.file(
        "writer.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: policy-writer}\nrules:\n- apiGroups: [wasm-apiserver.dev]\n  resources: [admissionplugins]\n  verbs: [create, update, get, patch]\n- apiGroups: [admissionregistration.k8s.io]\n  resources: [validatingadmissionpolicies, validatingadmissionpolicybindings]\n  verbs: [create]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: policy-writer}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: policy-writer}\nsubjects:\n- {apiGroup: rbac.authorization.k8s.io, kind: User, name: vera}\n",
    );
    s.ok(&["apply", "-f", role.to_str().unwrap()]);
    let sneaky = s.file(
        "sneaky.yaml",
        &format!("apiVersion: wasm-apiserver.dev/v1\nkind: AdmissionPlugin\nmetadata: {{name: sneaky}}\nspec:\n  sha256: {sha}\n  contextReads: [{{group: \"\", resource: secrets}}]\n"),
    );
    let err = s.fails(&["create", "-f", sneaky.to_str().unwrap(), "--as=vera"]);
    assert!(
        err.contains(r#"The AdmissionPlugin "sneaky" is invalid: spec.contextReads: Forbidden: grants reading secrets, but user "vera" cannot get secrets in every namespace"#),
        "{err}"
    );

    // The same for a ValidatingAdmissionPolicy's params (kube's policy registries' checks).
    let params = s.file(
        "params-policy.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: peek}\nspec:\n  paramKind: {apiVersion: v1, kind: Secret}\n  matchConstraints:\n    resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n  validations: [{expression: \"true\"}]\n",
    );
    let err = s.fails(&["create", "-f", params.to_str().unwrap(), "--as=vera"]);
    assert!(
        err.contains(r#"spec.paramKind: Forbidden: user "vera" must have "get" permission on all objects of the referenced paramKind (kind=Secret, apiVersion=v1)"#),
        "{err}"
    );
    let binding = s.file(
        "params-binding.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: peek}\nspec:\n  policyName: peek\n  validationActions: [Deny]\n  paramRef: {name: token, namespace: kube-system, parameterNotFoundAction: Allow}\n",
    );
    let err = s.fails(&["create", "-f", binding.to_str().unwrap(), "--as=vera"]);
    assert!(
        err.contains(r#"spec.paramRef: Forbidden: user "vera" must have "get" permission on the objects the paramRef refers to"#),
        "{err}"
    );

    // Deleted: no longer enforced.
    s.ok(&["delete", "admissionplugin", "configmap-references"]);
    s.eventually(Duration::from_secs(10), "the policy to go", || {
        s.kubectl(&[
            "create",
            "-f",
            &pod(&s, &format!("after-{}", rand_suffix()), "absent", false),
        ])
        .2
        .is_empty()
    });

    // `plugin push` of a policy component: an AdmissionPlugin granting what it declares.
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "push".as_ref(),
        common::plugin("configmap-references").as_os_str(),
        "--kubeconfig".as_ref(),
        s.kubeconfig().as_os_str(),
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("admissionplugins.wasm-apiserver.dev/configmap-references created (sha256:{sha}, generation 1; grants reading: configmaps)")),
        "{out}"
    );
    // Its status follows the load (under load, a moment after the create returns).
    s.eventually(Duration::from_secs(10), "the pushed policy active", || {
        replica(&s)["state"] == "Active"
    });
    // The same conditions as a StrategyPlugin's, for `kubectl wait` and kstatus.
    s.ok(&[
        "wait",
        "--for=condition=Ready",
        "admissionplugin/configmap-references",
        "--timeout=10s",
    ]);
    let err = s.fails(&["create", "-f", &pod(&s, "pushed", "absent", false)]);
    assert!(err.contains("denied the request"), "{err}");
}

fn rand_suffix() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Apply the AdmissionPlugin `name` over component `sha` with `spec` lines (indented).
fn apply_plugin(s: &TestServer, name: &str, sha: &str, spec: &str) {
    let f = s.file(
        &format!("{name}-plugin.yaml"),
        &format!(
            "apiVersion: wasm-apiserver.dev/v1\nkind: AdmissionPlugin\nmetadata: {{name: {name}}}\nspec:\n  sha256: {sha}\n  contextReads: [{{group: \"\", resource: configmaps}}]\n{spec}"
        ),
    );
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
}

fn create_configmap(s: &TestServer, name: &str) -> (bool, String) {
    let f = s.file(
        &format!("cm-{name}.yaml"),
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\n"
        ),
    );
    let (ok, out, err) = s.kubectl(&["create", "-f", f.to_str().unwrap()]);
    (ok, format!("{out}{err}"))
}

#[test]
fn a_failing_policy_is_decided_by_its_failure_policy_and_touches_only_what_it_matches() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &["namespaces", "configmaps", "leases"],
        &[
            "--plugin-call-timeout-ms=300",
            "--plugin-memory-limit-mib=64",
        ],
    );
    s.create_default_namespace();
    let sha = upload(&s, "misbehaving-policy");
    let mutating = upload(&s, "misbehaving-policy-mutating");
    let lease = s.file(
        "lease.yaml",
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: LEASE, namespace: default}\nspec: {holderIdentity: a}\n",
    );
    let lease = |n: &str| {
        let f = s.file(
            &format!("lease-{n}.yaml"),
            &std::fs::read_to_string(&lease).unwrap().replace("LEASE", n),
        );
        s.ok(&["create", "-f", f.to_str().unwrap()]);
    };

    for (i, action) in ["trap", "loop", "hoard"].iter().enumerate() {
        apply_plugin(
            &s,
            "bad",
            &sha,
            &format!("  settings: {{action: {action}}}\n"),
        );
        let (ok, out) = create_configmap(&s, &format!("{action}-fail"));
        assert!(
            !ok && out
                .contains(r#"Internal error occurred: failed calling admission plugin "bad": "#),
            "{action}: {out}"
        );
        // Unmatched resources never see it.
        lease(&format!("l{i}"));
        apply_plugin(
            &s,
            "bad",
            &sha,
            &format!("  settings: {{action: {action}}}\n  failurePolicy: Ignore\n"),
        );
        let (ok, out) = create_configmap(&s, &format!("{action}-ignored"));
        assert!(ok, "{action}: {out}");
    }

    // A denial's code and reason, as kube answers a webhook's.
    apply_plugin(
        &s,
        "bad",
        &sha,
        "  settings: {action: deny, code: 422, reason: Invalid, message: not today}\n",
    );
    let (ok, out) = create_configmap(&s, "denied");
    assert!(
        // kubectl's text for a 422 `Invalid` without causes, as for a webhook's.
        !ok && out.starts_with("The request is invalid: error when creating")
            && out.contains(r#": admission plugin "bad" denied the request: not today"#),
        "{out}"
    );

    // Context reads: what the policy declared, nothing else.
    apply_plugin(
        &s,
        "bad",
        &sha,
        "  settings: {action: read, resource: configmaps}\n",
    );
    let (_, out) = create_configmap(&s, "read");
    assert!(
        out.contains(r#"denied the request: read 3 configmaps"#),
        "{out}"
    );
    apply_plugin(
        &s,
        "bad",
        &sha,
        "  settings: {action: read, resource: secrets}\n",
    );
    let (_, out) = create_configmap(&s, "read");
    assert!(
        out.contains(r#"denied the request: read refused: admission plugin "bad" did not declare that it reads secrets"#),
        "{out}"
    );

    // No lock-out: a policy denying everything cannot deny its own removal.
    apply_plugin(
        &s,
        "bad",
        &sha,
        "  settings: {action: deny, message: nothing}\n  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*\"]}]\n",
    );
    let (ok, out, err) = s.kubectl(&["create", "namespace", "blocked"]);
    assert!(
        !ok && err.contains(r#"admission plugin "bad" denied the request: nothing"#),
        "{out}{err}"
    );
    s.ok(&["delete", "admissionplugin", "bad"]);
    s.ok(&["create", "namespace", "unblocked"]);

    // Mutating: the object as the policy returns it; changing its identity is a failure. The
    // change runs the mutating stage again: a MutatingAdmissionPolicy with `IfNeeded`, which
    // ran before the wasm policy, sees the team then.
    let policy = s.file("copy-policy.yaml", common::COPY_TEAM_POLICY);
    s.ok(&["apply", "-f", policy.to_str().unwrap()]);
    apply_plugin(
        &s,
        "mut",
        &mutating,
        "  settings: {action: label, labels: {team: platform}}\n",
    );
    assert!(create_configmap(&s, "labelled").0);
    let copy = s.ok(&[
        "get",
        "configmap",
        "labelled",
        "-n",
        "default",
        "-o",
        "jsonpath={.metadata.labels.team-policy-copy}",
    ]);
    assert_eq!(
        copy, "platform",
        "the policy reinvoked after the wasm policy"
    );
    let label = s.ok(&[
        "get",
        "configmap",
        "labelled",
        "-n",
        "default",
        "-o",
        "jsonpath={.metadata.labels.team}",
    ]);
    assert_eq!(label, "platform");
    apply_plugin(&s, "mut", &mutating, "  settings: {action: rename}\n");
    let (ok, out) = create_configmap(&s, "renamed-not");
    assert!(
        !ok && out.contains(r#"failed calling admission plugin "mut": its mutated object changes apiVersion, kind, name or namespace"#),
        "{out}"
    );

    // Settings the component refuses: Failed, the last good version enforcing.
    apply_plugin(
        &s,
        "mut",
        &mutating,
        "  settings: {invalid: true, action: label, labels: {team: x}}\n",
    );
    let o: Value =
        serde_json::from_str(&s.ok(&["get", "admissionplugin", "mut", "-o", "json"])).unwrap();
    assert_eq!(o["status"]["replicas"][0]["state"], "Failed", "{o}");
    assert!(!create_configmap(&s, "renamed-still").0);
}

/// What admission policies add to the audit log: a ValidatingAdmissionPolicy's
/// `auditAnnotations` (as `<policy>/<key>`) and an `Audit` binding's failures
/// (`validation.policy.admission.k8s.io/validation_failure`, kube's JSON), and an
/// AdmissionPlugin's own annotations (`<plugin>/<key>`) and `Audit`-mode denials.
#[test]
fn policies_annotate_the_audit_event_of_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("audit-policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let log = dir.path().join("audit.log");
    let s = TestServer::start_with(
        Backend::Embedded,
        &["namespaces", "configmaps"],
        &[
            "--audit-policy-file",
            policy.to_str().unwrap(),
            "--audit-log-path",
            log.to_str().unwrap(),
        ],
    );
    s.create_default_namespace();
    let vap = s.file(
        "vap.yaml",
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: small}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations:
  - {expression: "!has(object.data) || object.data.size() < 2", message: too many keys}
  auditAnnotations:
  - {key: keys, valueExpression: "has(object.data) ? string(object.data.size()) : ''"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: small-audit}
spec: {policyName: small, validationActions: [Audit]}
"#,
    );
    s.ok(&["apply", "-f", vap.to_str().unwrap()]);
    let sha = upload(&s, "misbehaving-policy");
    apply_plugin(&s, "greeter", &sha, "  settings: {action: warn}\n");
    apply_plugin(
        &s,
        "auditor",
        &sha,
        "  settings: {action: deny, message: would be refused}\n  mode: Audit\n",
    );
    s.ok(&[
        "create",
        "configmap",
        "audited",
        "-n",
        "default",
        "--from-literal=a=1",
        "--from-literal=b=2",
    ]);

    let mut event = Value::Null;
    s.eventually(Duration::from_secs(10), "the create's audit event", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        event = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| {
                e["objectRef"]["resource"] == "configmaps"
                    && e["verb"] == "create"
                    && e["stage"] == "ResponseComplete"
            })
            .unwrap_or(Value::Null);
        !event.is_null()
    });
    let annotations = &event["annotations"];
    assert_eq!(annotations["small/keys"], "2", "{event}");
    let failures: Value = serde_json::from_str(
        annotations["validation.policy.admission.k8s.io/validation_failure"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        failures,
        serde_json::json!([{"message": "too many keys", "policy": "small", "binding": "small-audit",
            "expressionIndex": 0, "validationActions": ["Audit"]}])
    );
    assert_eq!(annotations["greeter/greeting"], "hello", "{event}");
    let denied: Value = serde_json::from_str(
        annotations["admission.wasm-apiserver.dev/validation_failure"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        denied,
        serde_json::json!([{"plugin": "auditor",
            "message": "admission plugin \"auditor\" denied the request: would be refused"}])
    );
}

/// A policy written in Python (`examples/policies/required-labels-python`, the Python SDK's
/// `wasm_apiserver.admission`, built by componentize-py): its settings checked, its denial
/// reading the request's Namespace from the watch cache.
#[test]
fn a_python_policy_is_enforced_like_a_rust_one() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    let ns = s.file(
        "dev.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: dev, labels: {team: platform}}\n",
    );
    s.ok(&["create", "-f", ns.to_str().unwrap()]);
    let sha = upload(&s, "required-labels-python");
    let f = s.file(
        "python-policy.yaml",
        &format!("apiVersion: wasm-apiserver.dev/v1\nkind: AdmissionPlugin\nmetadata: {{name: required-labels}}\nspec:\n  sha256: {sha}\n  contextReads: [{{group: \"\", resource: namespaces}}]\n  settings: {{labels: [team]}}\n"),
    );
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let state = || {
        let o: Value = serde_json::from_str(&s.ok(&[
            "get",
            "admissionplugin",
            "required-labels",
            "-o",
            "json",
        ]))
        .unwrap();
        o["status"]["replicas"][0].clone()
    };
    // A first compile of a ~19 MB component (a debug build of the server takes long).
    s.eventually(Duration::from_secs(300), "the Python policy active", || {
        state()["state"] == "Active"
    });
    let cm = |name: &str, labels: &str| {
        let f = s.file(
            &format!("{name}.yaml"),
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: dev, labels: {{{labels}}}}}\n"),
        );
        s.kubectl(&["create", "-f", f.to_str().unwrap()])
    };
    let (ok, _, err) = cm("plain", "");
    assert!(
        !ok && err.contains(r#"admission plugin "required-labels" denied the request: missing required label(s): team (its namespace has team=platform)"#),
        "{err}"
    );
    let (ok, out, err) = cm("labelled", "team: platform");
    assert!(ok, "{out}{err}");

    let bad = f.with_file_name("python-policy-bad.yaml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(&f)
            .unwrap()
            .replace("{labels: [team]}", "{labels: 3}"),
    )
    .unwrap();
    s.ok(&["apply", "-f", bad.to_str().unwrap()]);
    s.eventually(Duration::from_secs(30), "the refused settings", || {
        state()["lastError"].as_str().is_some_and(|e| {
            e.contains("refused by the component: labels: must be a list of label keys")
        })
    });
}

/// A policy written in JavaScript (`examples/policies/no-latest-js`, the JavaScript SDK's
/// `admission.js`, built by componentize-js): pods with floating image tags refused, its
/// settings' exceptions honoured.
#[test]
fn a_javascript_policy_is_enforced_like_a_rust_one() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "pods"], &[]);
    s.create_default_namespace();
    let sha = upload(&s, "no-latest-js");
    let f = s.file(
        "js-policy.yaml",
        &format!("apiVersion: wasm-apiserver.dev/v1\nkind: AdmissionPlugin\nmetadata: {{name: no-latest}}\nspec:\n  sha256: {sha}\n  settings: {{allowLatest: [busybox]}}\n"),
    );
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    s.eventually(
        Duration::from_secs(300),
        "the JavaScript policy active",
        || {
            let o: Value =
                serde_json::from_str(&s.ok(&["get", "admissionplugin", "no-latest", "-o", "json"]))
                    .unwrap();
            o["status"]["replicas"][0]["state"] == "Active"
        },
    );
    let (ok, _, err) = s.kubectl(&["run", "floating", "--image=nginx"]);
    assert!(
        !ok && err.contains(r#"admission plugin "no-latest" denied the request: images must be pinned to a tag other than latest: floating (nginx)"#),
        "{err}"
    );
    s.ok(&["run", "pinned", "--image=nginx:1.27"]);
    s.ok(&["run", "excepted", "--image=busybox"]);
}

/// A policy component put in the plugin folder is enforced with its own description (no
/// object, no StrategyPlugin record), replaced when the file changes and gone when it is
/// deleted; the plugin manager does not take it for a strategy.
#[test]
fn a_policy_in_the_plugin_folder_is_enforced_until_its_file_is_deleted() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &["namespaces", "configmaps", "pods"],
        &[],
    );
    s.create_default_namespace();
    let folder = s.dir.path().join("plugins.d");
    let file = folder.join("configmap-references.wasm");
    std::fs::copy(
        common::server::repo_path("target/policies/configmap-references.wasm"),
        folder.join("configmap-references.wasm.tmp"),
    )
    .unwrap();
    std::fs::rename(folder.join("configmap-references.wasm.tmp"), &file).unwrap();
    let p = pod(&s, "web", "absent", false);
    let dry = |s: &TestServer| s.kubectl(&["create", "-f", &p, "--dry-run=server"]);
    let mut err = String::new();
    s.eventually(
        Duration::from_secs(20),
        "the folder's policy enforced",
        || {
            let (ok, _, e) = dry(&s);
            err = e;
            !ok
        },
    );
    assert!(
        err.contains("admission plugin \"configmap-references\" denied the request: the Pod names ConfigMap(s) that do not exist in namespace \"default\": absent"),
        "{err}"
    );
    // Not a strategy: no StrategyPlugin record, no load error.
    let plugins = s.ok(&["get", "strategyplugins", "-o", "name"]);
    assert!(!plugins.contains("configmap-references"), "{plugins}");
    let log = s.log();
    assert!(log.contains("admission policy file loaded"), "{log}");
    assert!(
        !log.lines()
            .any(|l| l.contains("ERROR") && l.contains("configmap-references")),
        "{log}"
    );
    // A ConfigMap created just before is seen; then the file is deleted and the policy goes.
    s.ok(&["create", "configmap", "absent", "-n", "default"]);
    let (ok, _, e) = dry(&s);
    assert!(ok, "{e}");
    s.ok(&["delete", "configmap", "absent", "-n", "default"]);
    std::fs::remove_file(&file).unwrap();
    s.eventually(Duration::from_secs(20), "the folder's policy gone", || {
        dry(&s).0
    });
}

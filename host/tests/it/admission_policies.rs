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

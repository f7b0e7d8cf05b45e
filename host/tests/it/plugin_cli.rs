//! `wasm-apiserver plugin check` and `plugin test` as a plugin author runs them.

use crate::common;

fn cli(args: &[&str]) -> (bool, String) {
    common::cli(args)
}

#[test]
fn plugin_check_accepts_every_standard_plugin_and_prints_its_description() {
    for (name, resource) in [
        ("pods", "pods (v1, kind Pod, namespaced)"),
        ("configmaps", "configmaps (v1, kind ConfigMap, namespaced)"),
        (
            "namespaces",
            "namespaces (v1, kind Namespace, cluster-scoped)",
        ),
        (
            "widgets",
            "widgets.example.dev (example.dev/v1, kind Widget, namespaced)",
        ),
    ] {
        let p = common::plugin(name);
        let (ok, out) = cli(&["plugin", "check", p.to_str().unwrap()]);
        assert!(ok, "{name}: {out}");
        assert!(out.contains(resource), "{name}: {out}");
        assert!(out.contains("\"printerColumns\""), "{name}: {out}");
    }
}

#[test]
fn plugin_check_rejects_a_broken_plugin_with_its_reason() {
    let p = common::plugin("misbehaving-wit-next");
    let (ok, out) = cli(&["plugin", "check", p.to_str().unwrap()]);
    assert!(!ok);
    assert!(out.contains("wasm-apiserver:strategy@0.4.0"), "{out}");
}

#[test]
fn plugin_test_passes_the_fixtures_shipped_beside_each_plugin() {
    for &name in common::STANDARD_PLUGINS {
        let p = common::plugin(name);
        let dir = common::fixtures(name);
        let (ok, out) = cli(&["plugin", "test", p.to_str().unwrap(), dir.to_str().unwrap()]);
        assert!(ok, "{name}: {out}");
        assert!(out.contains(" 0 failed"), "{name}: {out}");
        assert!(!out.contains(": 0 passed"), "{name} ran no fixture: {out}");
    }
}

#[test]
fn plugin_test_fails_with_a_readable_diff_when_an_expectation_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wrong.json"),
        r#"{"operation": "create",
            "object": {"apiVersion": "example.dev/v1", "kind": "Widget",
                       "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": "large"}},
            "expect": {"object": {"spec": {"replicas": 4}}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("wrong-error.json"),
        r#"{"operation": "create",
            "object": {"apiVersion": "example.dev/v1", "kind": "Widget",
                       "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": "huge"}},
            "expect": {"errors": [{"type": "Required", "field": "spec.size"}]}}"#,
    )
    .unwrap();
    let p = common::plugin("widgets");
    let (ok, out) = cli(&[
        "plugin",
        "test",
        p.to_str().unwrap(),
        dir.path().to_str().unwrap(),
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains("FAIL wrong.json"), "{out}");
    assert!(
        out.contains("-      \"replicas\": 4") && out.contains("+      \"replicas\": 5"),
        "{out}"
    );
    assert!(out.contains("FAIL wrong-error.json"), "{out}");
    assert!(
        out.contains("\"NotSupported\""),
        "the actual error type is shown: {out}"
    );
    assert!(out.contains("0 passed, 2 failed"), "{out}");
}

/// An admission policy component is tested against its fixtures as the server calls it: the
/// example `configmap-references` policy with its reads answered from each case's `context`;
/// a wrong expectation fails, saying what differed.
#[test]
fn plugin_test_runs_an_admission_policy_over_its_fixtures() {
    let p = common::server::repo_path("target/policies/configmap-references.wasm");
    let dir = common::server::repo_path("examples/policies/configmap-references/fixtures");
    let (ok, out) = cli(&["plugin", "test", p.to_str().unwrap(), dir.to_str().unwrap()]);
    assert!(ok, "{out}");
    assert!(out.contains(": 4 passed, 0 failed"), "{out}");

    let wrong = tempfile::tempdir().unwrap();
    std::fs::write(
        wrong.path().join("wrong.json"),
        r#"{"operation": "CREATE",
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                       "spec": {"volumes": [{"name": "v", "configMap": {"name": "gone"}}], "containers": []}},
            "expect": {"allowed": true}}"#,
    )
    .unwrap();
    let (ok, out) = cli(&[
        "plugin",
        "test",
        p.to_str().unwrap(),
        wrong.path().to_str().unwrap(),
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains("FAIL wrong.json"), "{out}");
    assert!(
        out.contains("allowed: expected true, got false") && out.contains("gone"),
        "{out}"
    );
}

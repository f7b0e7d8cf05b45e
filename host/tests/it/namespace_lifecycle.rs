//! Namespace lifecycle end to end with kubectl, as kube-apiserver with kube-controller-manager
//! gives it: the system namespaces exist from the start; creating into a missing namespace is
//! 404 and into a terminating one 403; `kubectl delete namespace` returns once everything in
//! it — plugin-served widgets included — is gone; a finalizer on its content holds it
//! Terminating with kube's conditions until removed; `default` may not be deleted. On the
//! embedded store and on etcd.

use crate::common;

use common::server::{Backend, TestServer};
use std::time::Duration;

fn lifecycle(backend: Backend) {
    let s = TestServer::start(backend);
    let out = s.ok(&["get", "namespaces", "-o", "name"]);
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(out.contains(&format!("namespace/{ns}")), "{out}");
    }
    let err = s.fails(&["delete", "namespace", "default"]);
    assert!(
        err.contains(r#"namespaces "default" is forbidden: this namespace may not be deleted"#),
        "{err}"
    );
    let err = s.fails(&["create", "configmap", "a", "-n", "missing"]);
    assert!(err.contains(r#"namespaces "missing" not found"#), "{err}");

    // Every write but a delete needs the namespace: server-side apply too (review finding).
    let cm = s.file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: missing}\n",
    );
    let err = s.fails(&["apply", "--server-side", "-f", cm.to_str().unwrap()]);
    assert!(err.contains(r#"namespaces "missing" not found"#), "{err}");
    // Namespaces have no deletecollection: it would skip their lifecycle.
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "-X",
            "DELETE",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
        ])
        .arg(format!("{}/api/v1/namespaces", s.url))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "405");

    // Everything in t goes with it, then t.
    s.ok(&["create", "namespace", "t"]);
    s.ok(&["create", "configmap", "a", "-n", "t"]);
    let widget = common::server::repo_path("examples/manifests/widget.yaml");
    s.ok(&["apply", "-f", widget.to_str().unwrap(), "-n", "t"]);
    s.ok(&["delete", "namespace", "t", "--timeout=60s"]);
    let err = s.fails(&["get", "namespace", "t"]);
    assert!(
        err.contains("NotFound") || err.contains("not found"),
        "{err}"
    );
    let (_, out, _) = s.kubectl(&["get", "widgets,configmaps", "-n", "t", "-o", "name"]);
    assert!(out.trim().is_empty(), "{out}");

    // A finalizer on the content holds the namespace Terminating; creating into it is 403.
    s.ok(&["create", "namespace", "held"]);
    let cm = s.file(
        "held.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: held\n  finalizers: [example.com/hold]\n",
    );
    s.ok(&["apply", "-f", cm.to_str().unwrap()]);
    s.ok(&["delete", "namespace", "held", "--wait=false"]);
    s.eventually(Duration::from_secs(20), "kube's conditions on the namespace", || {
        let out = s.ok(&["get", "namespace", "held", "-o", "json"]);
        out.contains(r#""phase": "Terminating""#)
            && out.contains("Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances")
            && out.contains("Some resources are remaining: configmaps has 1 resource instances")
    });
    let err = s.fails(&["create", "configmap", "late", "-n", "held"]);
    assert!(
        err.contains(r#"configmaps "late" is forbidden: unable to create new content in namespace held because it is being terminated"#),
        "{err}"
    );
    s.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    s.eventually(Duration::from_secs(20), "the namespace gone", || {
        !s.kubectl(&["get", "namespace", "held"]).0
    });
}

#[test]
fn namespace_lifecycle_embedded() {
    lifecycle(Backend::Embedded);
}

#[test]
fn namespace_lifecycle_etcd() {
    lifecycle(Backend::Etcd);
}

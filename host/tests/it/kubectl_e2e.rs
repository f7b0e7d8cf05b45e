//! The unmodified, installed `kubectl` against a real `wasm-apiserver`, on the embedded store
//! and again on a real etcd: every command of the server issue's kubectl list.

use crate::common;

use common::server::{Backend, TestServer};
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

const WIDGET: &str = "apiVersion: example.dev/v1
kind: Widget
metadata:
  name: w1
  labels: {app: demo, tier: web}
spec:
  size: medium
";

const BAD_WIDGET: &str = "apiVersion: example.dev/v1
kind: Widget
metadata:
  name: w2
spec:
  size: huge
  replicas: 9
  maxReplicas: 3
";

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
";

fn create_get_delete(backend: Backend) {
    let s = TestServer::start(backend);
    s.create_default_namespace();

    let out = s.ok(&["api-resources"]);
    for line in [
        "pods",
        "po",
        "configmaps",
        "cm",
        "namespaces",
        "ns",
        "widgets",
        "wd",
        "example.dev/v1",
    ] {
        assert!(out.contains(line), "api-resources lacks {line}:\n{out}");
    }

    let w = s.file("w.yaml", WIDGET);
    assert!(s
        .ok(&["create", "-f", w.to_str().unwrap()])
        .contains("widget.example.dev/w1 created"));
    // Invalid: the plugin's field errors, with their paths, reach the user.
    let bad = s.file("bad.yaml", BAD_WIDGET);
    let err = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    assert!(err.contains("The Widget \"w2\" is invalid"), "{err}");
    assert!(
        err.contains("spec.size: Unsupported value: \"huge\""),
        "{err}"
    );
    assert!(err.contains("spec.replicas: Invalid value: 9"), "{err}");

    // Table columns come from the plugin.
    let out = s.ok(&["get", "widgets"]);
    let header = out.lines().next().unwrap_or_default();
    for col in ["NAME", "SIZE", "REPLICAS", "PHASE", "AGE"] {
        assert!(header.contains(col), "{out}");
    }
    assert!(
        out.contains("w1") && out.contains("medium") && out.contains("Pending"),
        "{out}"
    );
    let wide = s.ok(&["get", "wd", "-o", "wide"]);
    assert!(
        wide.lines().next().unwrap().contains("STORAGE-CLASS"),
        "{wide}"
    );

    let yaml = s.ok(&["get", "wd", "w1", "-o", "yaml"]);
    for needle in [
        "replicas: 3",
        "phase: Pending",
        "uid:",
        "resourceVersion:",
        "creationTimestamp:",
        "generation: 1",
    ] {
        assert!(yaml.contains(needle), "{needle} missing:\n{yaml}");
    }

    let p = s.file("pod.yaml", POD);
    s.ok(&["create", "-f", p.to_str().unwrap()]);
    let pods = s.ok(&["get", "pods"]);
    assert!(pods.lines().next().unwrap().contains("READY"), "{pods}");
    assert!(pods.contains("0/1") && pods.contains("Pending"), "{pods}");
    let q = s.ok(&["get", "pod", "web", "-o", "jsonpath={.status.qosClass}"]);
    assert_eq!(q, "Guaranteed");

    // Selectors, all namespaces, labels, sorting.
    let gen = s.file("gen.yaml", "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  generateName: gen-\n  labels: {app: other}\nspec:\n  size: small\n");
    let created = s.ok(&["create", "-f", gen.to_str().unwrap()]);
    assert!(created.starts_with("widget.example.dev/gen-"), "{created}");
    let out = s.ok(&["get", "wd", "-l", "app=demo", "-o", "name"]);
    assert_eq!(out.trim(), "widget.example.dev/w1");
    let out = s.ok(&["get", "wd", "-l", "app in (other)", "-o", "name"]);
    assert!(out.trim().starts_with("widget.example.dev/gen-"), "{out}");
    let out = s.ok(&[
        "get",
        "wd",
        "--field-selector",
        "metadata.name=w1",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "widget.example.dev/w1");
    let out = s.ok(&[
        "get",
        "wd",
        "--field-selector",
        "spec.size=small",
        "-o",
        "name",
    ]);
    assert!(out.trim().starts_with("widget.example.dev/gen-"), "{out}");
    let err = s.fails(&["get", "wd", "--field-selector", "spec.color=red"]);
    assert!(err.contains("field label not supported"), "{err}");
    let out = s.ok(&["get", "wd", "-A"]);
    assert!(
        out.lines().next().unwrap().starts_with("NAMESPACE"),
        "{out}"
    );
    let out = s.ok(&["get", "wd", "--show-labels"]);
    assert!(out.contains("app=demo,tier=web"), "{out}");
    let out = s.ok(&["get", "wd", "--sort-by", ".spec.replicas", "-o", "name"]);
    let names: Vec<&str> = out.lines().collect();
    assert!(
        names[0].starts_with("widget.example.dev/gen-") && names[1] == "widget.example.dev/w1",
        "{out}"
    );

    // Dry run: nothing stored.
    let w3 = s.file("w3.yaml", &WIDGET.replace("name: w1", "name: w3"));
    s.ok(&["create", "-f", w3.to_str().unwrap(), "--dry-run=server"]);
    s.fails(&["get", "wd", "w3"]);

    // Delete by name and by label.
    assert!(s
        .ok(&["delete", "wd", "w1"])
        .contains("widget.example.dev \"w1\" deleted"));
    s.fails(&["get", "wd", "w1"]);
    s.ok(&["delete", "wd", "-l", "app=other"]);
    let out = s.ok(&["get", "wd", "-o", "name"]);
    assert!(out.trim().is_empty(), "{out}");
    s.ok(&["delete", "pod", "web"]);
}

fn apply_edit_patch(backend: Backend) {
    let s = TestServer::start(backend);
    s.create_default_namespace();
    let w = s.file("w.yaml", WIDGET);
    assert!(s
        .ok(&["apply", "-f", w.to_str().unwrap()])
        .contains("created"));
    let w = s.file("w.yaml", &WIDGET.replace("size: medium", "size: large"));
    assert!(s
        .ok(&["apply", "-f", w.to_str().unwrap()])
        .contains("configured"));
    assert_eq!(
        s.ok(&["get", "wd", "w1", "-o", "jsonpath={.spec.size}"]),
        "large"
    );

    // Client-side apply of a built-in kind sends a strategic merge patch.
    let p = s.file("pod.yaml", POD);
    s.ok(&["apply", "-f", p.to_str().unwrap()]);
    let p = s.file("pod.yaml", &POD.replace("nginx:1.27", "nginx:1.28"));
    assert!(s
        .ok(&["apply", "-f", p.to_str().unwrap()])
        .contains("configured"));
    assert_eq!(
        s.ok(&[
            "get",
            "pod",
            "web",
            "-o",
            "jsonpath={.spec.containers[0].image}"
        ]),
        "nginx:1.28"
    );

    // Server-side apply.
    let ssa = s.file("ssa.yaml", &WIDGET.replace("name: w1", "name: ssa"));
    assert!(s
        .ok(&["apply", "--server-side", "-f", ssa.to_str().unwrap()])
        .contains("serverside-applied"));
    assert_eq!(
        s.ok(&["get", "wd", "ssa", "-o", "jsonpath={.spec.replicas}"]),
        "3"
    );

    // Edit through a non-interactive editor.
    let editor = s.file(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/size: large/size: small/' \"$1\"\n",
    );
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (ok, out, err) = {
        let o = s
            .kubectl_cmd(&["edit", "wd", "w1"])
            .env("KUBE_EDITOR", &editor)
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    assert!(ok && out.contains("edited"), "{out}{err}");
    assert_eq!(
        s.ok(&["get", "wd", "w1", "-o", "jsonpath={.spec.size}"]),
        "small"
    );

    // Label, annotate, patch (merge and JSON).
    s.ok(&["label", "wd", "w1", "release=canary"]);
    s.ok(&["annotate", "wd", "w1", "note=hello"]);
    assert_eq!(
        s.ok(&[
            "get",
            "wd",
            "w1",
            "-o",
            "jsonpath={.metadata.labels.release}"
        ]),
        "canary"
    );
    assert_eq!(
        s.ok(&[
            "get",
            "wd",
            "w1",
            "-o",
            "jsonpath={.metadata.annotations.note}"
        ]),
        "hello"
    );
    s.ok(&[
        "patch",
        "wd",
        "w1",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    s.ok(&[
        "patch",
        "wd",
        "w1",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
    ]);
    assert_eq!(
        s.ok(&[
            "get",
            "wd",
            "w1",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}"
        ]),
        "4 5"
    );
    // A strategic merge patch on a custom kind is refused the way kube-apiserver refuses it.
    let err = s.fails(&["patch", "wd", "w1", "-p", r#"{"spec":{"replicas":1}}"#]);
    assert!(err.contains("application/strategic-merge-patch+json is not supported by example.dev/v1, Kind=Widget"), "{err}");
    // … and accepted on a built-in kind.
    s.ok(&[
        "patch",
        "pod",
        "web",
        "-p",
        r#"{"metadata":{"labels":{"x":"y"}}}"#,
    ]);
    assert_eq!(
        s.ok(&["get", "pod", "web", "-o", "jsonpath={.metadata.labels.x}"]),
        "y"
    );
    // Immutable field: the plugin's rule reaches kubectl.
    let err = s.fails(&[
        "patch",
        "wd",
        "w1",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"storageClass":"fast"}}"#,
    ]);
    assert!(
        err.contains("spec.storageClass") && err.contains("field is immutable"),
        "{err}"
    );
}

fn watch_events(backend: Backend) {
    let s = TestServer::start(backend);
    s.create_default_namespace();
    let mut child = s
        .kubectl_cmd(&[
            "get",
            "wd",
            "-w",
            "--output-watch-events",
            "--request-timeout=0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let w = s.file("w.yaml", WIDGET);
    s.ok(&["create", "-f", w.to_str().unwrap()]);
    s.ok(&[
        "patch",
        "wd",
        "w1",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    s.ok(&["delete", "wd", "w1"]);
    std::thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(events, ["EVENT", "ADDED", "MODIFIED", "DELETED"], "{text}");
    assert!(
        text.lines().nth(2).unwrap().contains(" 2 "),
        "MODIFIED shows the new replicas:\n{text}"
    );
}

fn explain_and_imperative(backend: Backend) {
    let s = TestServer::start(backend);
    let out = s.ok(&["explain", "widgets.spec"]);
    assert!(
        out.contains("KIND:       Widget") && out.contains("replicas"),
        "{out}"
    );
    assert!(
        out.contains("Defaults from size"),
        "descriptions come from the plugin's schema:\n{out}"
    );
    let out = s.ok(&["explain", "pods.spec.containers"]);
    assert!(out.contains("image"), "{out}");
    // Writing a manifest on stdin.
    let mut child = s
        .kubectl_cmd(&["create", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n")
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let out = s.ok(&["get", "ns", "team-a"]);
    assert!(out.contains("Active"), "{out}");
    let fin = s.ok(&["get", "ns", "team-a", "-o", "jsonpath={.spec.finalizers}"]);
    assert!(fin.contains("kubernetes"), "{fin}");

    // Imperative forms: kubectl sends these built-in kinds as protobuf.
    assert!(s
        .ok(&["create", "namespace", "team-b"])
        .contains("namespace/team-b created"));
    let out = s.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "team-b",
        "--from-literal=mode=fast",
        "--from-literal=level=3",
    ]);
    assert!(out.contains("configmap/settings created"), "{out}");
    assert_eq!(
        s.ok(&[
            "get",
            "cm",
            "settings",
            "-n",
            "team-b",
            "-o",
            "jsonpath={.data.mode}"
        ]),
        "fast"
    );
    let out = s.ok(&["get", "cm", "-n", "team-b"]);
    assert!(
        out.lines().next().unwrap().contains("DATA") && out.contains("settings"),
        "{out}"
    );
}

macro_rules! on_both_backends {
    ($($case:ident),*) => {
        mod embedded {
            $(#[test] fn $case() { super::$case(super::Backend::Embedded) })*
        }
        mod etcd {
            $(#[test] fn $case() { super::$case(super::Backend::Etcd) })*
        }
    };
}

on_both_backends!(
    create_get_delete,
    apply_edit_patch,
    watch_events,
    explain_and_imperative
);

//! Released WIT versions stay loadable: components built against `wasm-apiserver:strategy@0.1.0`
//! and `@0.2.0` (the widgets example frozen as it was built then,
//! `tests/data/widgets-wit-0.1.0.wasm` and `…-0.2.0.wasm`) load and pass their release's
//! fixtures, are served beside today's 0.3.0 components by one server, and hot reloads from
//! 0.1 to 0.2 to today's build of the same resource keep the resource's data. (A component of
//! a version the host does not know is refused naming every version: in `plugin_runtime.rs`.)

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

fn frozen_widgets() -> PathBuf {
    common::repo_root().join("host/tests/data/widgets-wit-0.1.0.wasm")
}

fn frozen_widgets_0_2() -> PathBuf {
    common::repo_root().join("host/tests/data/widgets-wit-0.2.0.wasm")
}

#[test]
fn the_frozen_0_1_widgets_load_and_pass_their_fixtures() {
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "check".as_ref(),
        frozen_widgets().as_os_str(),
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("WIT wasm-apiserver:strategy@0.1.0"), "{out}");
    let fixtures = common::repo_root().join("host/tests/data/widgets-wit-0.1.0-fixtures");
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "test".as_ref(),
        frozen_widgets().as_os_str(),
        fixtures.as_os_str(),
    ]);
    assert!(ok && out.contains("8 passed, 0 failed"), "{out}");
    let fixtures = common::repo_root().join("host/tests/data/widgets-wit-0.2.0-fixtures");
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "test".as_ref(),
        frozen_widgets_0_2().as_os_str(),
        fixtures.as_os_str(),
    ]);
    assert!(ok && out.contains(" passed, 0 failed"), "{out}");
    // Today's build of the same example is a 0.3.0 component.
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "check".as_ref(),
        common::plugin("widgets").as_os_str(),
    ]);
    assert!(
        ok && out.contains("WIT wasm-apiserver:strategy@0.3.0"),
        "{out}"
    );
}

const WIDGET: &str =
    "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: medium\n";

#[test]
fn a_0_1_and_a_0_3_components_are_served_side_by_side() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "configmaps"], &[]);
    std::fs::copy(
        frozen_widgets(),
        s.dir.path().join("plugins.d/widgets.wasm"),
    )
    .unwrap();
    s.eventually(Duration::from_secs(60), "widgets served", || {
        s.kubectl(&["get", "widgets"]).0
    });
    s.create_default_namespace();
    let versions = s.ok(&[
        "get",
        "strategyplugins",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}={.status.replicas[0].witVersion}{\"\\n\"}{end}",
    ]);
    assert!(versions.contains("widgets=0.1.0"), "{versions}");
    assert!(versions.contains("configmaps=0.3.0"), "{versions}");
    let w = s.file("w.yaml", WIDGET);
    s.ok(&["create", "-f", w.to_str().unwrap()]);
    s.ok(&["create", "configmap", "c1", "--from-literal=a=b"]);
    let got: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();
    assert_eq!(
        got["spec"]["replicas"], 3,
        "the 0.1 plugin's default: {got}"
    );
    let err = s.fails(&["create", "configmap", "Bad_Name"]);
    assert!(
        err.contains("is invalid"),
        "the 0.3 plugin's validation: {err}"
    );
}

/// Replacing a 0.1 component by the 0.2 build of the same resource, then by today's 0.3 build,
/// is an ordinary hot reload: the objects stay and the new version serves them.
fn hot_reload_from_0_1_to_0_2_to_0_3_keeps_data(backend: Backend) {
    let s = TestServer::start_with(backend, &["namespaces"], &[]);
    let file = s.dir.path().join("plugins.d/widgets.wasm");
    std::fs::copy(frozen_widgets(), &file).unwrap();
    s.eventually(Duration::from_secs(60), "0.1 widgets served", || {
        s.kubectl(&["get", "widgets"]).0
    });
    s.create_default_namespace();
    let w = s.file("w.yaml", WIDGET);
    s.ok(&["create", "-f", w.to_str().unwrap()]);
    let before: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();

    std::fs::write(&file, std::fs::read(frozen_widgets_0_2()).unwrap()).unwrap();
    s.eventually(Duration::from_secs(60), "0.2 widgets active", || {
        s.kubectl(&[
            "get",
            "strategyplugins",
            "widgets",
            "-o",
            "jsonpath={.status.replicas[0].witVersion}",
        ])
        .1 == "0.2.0"
    });
    let after: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();
    assert_eq!(after["metadata"]["uid"], before["metadata"]["uid"]);
    assert_eq!(after["spec"], before["spec"]);
    // The 0.2 build validates and updates the object written under 0.1.
    s.ok(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
    ]);
    let err = s.fails(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":4,"maxReplicas":2}}"#,
    ]);
    assert!(
        err.contains("must be less than or equal to spec.maxReplicas (2)"),
        "{err}"
    );

    // Today's build: updates go through `update-sequence`, with the same answers.
    std::fs::write(&file, std::fs::read(common::plugin("widgets")).unwrap()).unwrap();
    s.eventually(Duration::from_secs(60), "0.3 widgets active", || {
        s.kubectl(&[
            "get",
            "strategyplugins",
            "widgets",
            "-o",
            "jsonpath={.status.replicas[0].witVersion}",
        ])
        .1 == "0.3.0"
    });
    let before: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();
    s.ok(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":5}}"#,
    ]);
    let after: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();
    assert_eq!(after["metadata"]["uid"], before["metadata"]["uid"]);
    assert_eq!(
        after["metadata"]["creationTimestamp"],
        before["metadata"]["creationTimestamp"]
    );
    assert_eq!(after["spec"]["replicas"], 5);
    let err = s.fails(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":4,"maxReplicas":2}}"#,
    ]);
    assert!(
        err.contains("must be less than or equal to spec.maxReplicas (2)"),
        "{err}"
    );
}

#[test]
fn hot_reload_from_0_1_to_0_2_to_0_3_keeps_data_on_the_embedded_store() {
    hot_reload_from_0_1_to_0_2_to_0_3_keeps_data(Backend::Embedded);
}

#[test]
fn hot_reload_from_0_1_to_0_2_to_0_3_keeps_data_on_etcd() {
    hot_reload_from_0_1_to_0_2_to_0_3_keeps_data(Backend::Etcd);
}

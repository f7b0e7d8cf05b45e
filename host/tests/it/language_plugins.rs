//! Strategy plugins written in Python and JavaScript: the widgets rules re-implemented with
//! the Python SDK (`plugins/sdk-python`, built by componentize-py from PyPI) and the
//! JavaScript SDK (`plugins/sdk-js`, built by componentize-js from npm), laid out in
//! `target/lang-plugins/` by `plugins/build-languages.sh`. They pass the Rust widgets'
//! fixtures, serve real kubectl on both stores, and a bug in one is a 500 quoting the
//! language's own traceback; the SDKs' helpers pass their unit tests; `plugin new` projects
//! build with one command and pass their fixtures in each language.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::process::Command;
use wasm_apiserver::plugin::{PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{sequence, StrategyError};

const LANGUAGE_WIDGETS: [&str; 2] = ["widgets-python", "widgets-js"];

#[test]
fn python_and_javascript_widgets_pass_the_rust_widgets_fixtures() {
    let fixtures = common::fixtures("widgets");
    // The cases are the folder's JSON files (`conversion/` holds the v1alpha1 cases, which
    // the Python and JavaScript widgets, serving v1 only, do not take).
    let cases = std::fs::read_dir(&fixtures)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert!(cases >= 8, "{cases} fixtures");
    for name in LANGUAGE_WIDGETS {
        let (ok, out) = common::cli([
            "plugin".as_ref(),
            "test".as_ref(),
            common::plugin(name).as_os_str(),
            fixtures.as_os_str(),
        ]);
        assert!(ok, "{name}:\n{out}");
        assert!(
            out.contains(&format!("{cases} passed, 0 failed")),
            "{name}:\n{out}"
        );
    }
}

/// kubectl against the language's widgets: defaults, the plugin's printer columns, its field
/// errors (422 with paths), the immutable field, status updates refused by phase.
fn widgets_through_kubectl(backend: Backend, plugin: &str) {
    let s = TestServer::start_with(backend, &["namespaces", plugin], &[]);
    s.create_default_namespace();
    let w = s.file(
        "w.yaml",
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: large\n  storageClass: fast\n",
    );
    assert!(s
        .ok(&["create", "-f", w.to_str().unwrap()])
        .contains("widget.example.dev/w1 created"));
    let got: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();
    assert_eq!(got["spec"]["replicas"], 5, "{got}");
    assert_eq!(got["status"]["phase"], "Pending", "{got}");
    assert_eq!(got["metadata"]["generation"], 1, "{got}");

    let table = s.ok(&["get", "widgets", "-o", "wide"]);
    let header = table.lines().next().unwrap_or_default();
    for col in ["NAME", "SIZE", "REPLICAS", "PHASE", "AGE", "STORAGE-CLASS"] {
        assert!(header.contains(col), "{table}");
    }
    assert!(table.contains("large") && table.contains("fast"), "{table}");

    let bad = s.file(
        "bad.yaml",
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: huge\n  replicas: 9\n  maxReplicas: 3\n",
    );
    let err = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    assert!(err.contains("The Widget \"w2\" is invalid"), "{err}");
    assert!(
        err.contains("spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \"large\""),
        "{err}"
    );
    assert!(
        err.contains(
            "spec.replicas: Invalid value: 9: must be less than or equal to spec.maxReplicas (3)"
        ),
        "{err}"
    );

    let err = s.fails(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"storageClass":"slow"}}"#,
    ]);
    assert!(
        err.contains("spec.storageClass: Invalid value: \"slow\": field is immutable"),
        "{err}"
    );
    s.ok(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
    ]);
    let got: Value = serde_json::from_str(&s.ok(&["get", "wd", "w1", "-o", "json"])).unwrap();
    assert_eq!(got["metadata"]["generation"], 2, "{got}");
    let err = s.fails(&[
        "patch",
        "wd",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Exploded"}}"#,
    ]);
    assert!(err.contains("status.phase: Unsupported value"), "{err}");
    s.ok(&["delete", "wd", "w1"]);
}

#[test]
fn python_widgets_serve_kubectl_on_the_embedded_store() {
    widgets_through_kubectl(Backend::Embedded, "widgets-python");
}

#[test]
fn javascript_widgets_serve_kubectl_on_etcd() {
    widgets_through_kubectl(Backend::Etcd, "widgets-js");
}

#[test]
fn a_python_exception_is_a_500_quoting_its_traceback() {
    let rt = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let s = rt.load_file(&common::plugin("widgets-python")).unwrap();
    let obj = json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                     "metadata": {"name": "w", "namespace": "default"},
                     "spec": {"size": "small", "replicas": "many"}});
    match sequence::create(&s, &obj, &sequence::no_meta_validation) {
        Err(StrategyError::Fault(f)) => {
            let msg = f.to_string();
            assert!(msg.contains("\"widgets-python\""), "{msg}");
            assert!(msg.contains("Traceback (most recent call last)"), "{msg}");
            assert!(
                msg.contains("TypeError: '<' not supported between instances of 'str' and 'int'"),
                "{msg}"
            );
        }
        other => panic!("expected a fault, got {other:?}"),
    }
    // The instance was dropped; the next call runs on a fresh one.
    let ok = json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                    "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": "small"}});
    let out = sequence::create(&s, &ok, &sequence::no_meta_validation).unwrap();
    assert_eq!(out.object["spec"]["replicas"], 1);
}

/// The separate hooks (what the host calls when its ObjectMeta validation fails after the
/// one create-sequence call) give what the sequence gives.
#[test]
fn javascript_widgets_answer_hook_by_hook() {
    let rt = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let s = rt.load_file(&common::plugin("widgets-js")).unwrap();
    let text = wasm_apiserver::strategy::Strategy::prepare_for_create(
        &s,
        &json!({"apiVersion": "example.dev/v1", "kind": "Widget",
                "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": "tiny"}}),
    )
    .unwrap();
    assert_eq!(text["status"]["phase"], "Pending");
    let errs = wasm_apiserver::strategy::Strategy::validate(&s, &text).unwrap();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "spec.size");
    assert_eq!(errs[0].bad_value.as_ref(), Some(&json!("tiny")));
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// The number a test runner printed after `marker` (`Ran 10 tests`, `# pass 8`); 0 if none.
fn count_after(out: &str, marker: &str) -> usize {
    out.split(marker)
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn python_sdk_unit_tests_pass() {
    let out = run_ok(
        Command::new("python3")
            .args(["-m", "unittest", "discover", "-s", "tests"])
            .current_dir(common::repo_root().join("plugins/sdk-python")),
        "python3 -m unittest",
    );
    assert!(
        count_after(&out, "Ran ") >= 10 && out.contains("\nOK"),
        "{out}"
    );
}

#[test]
fn javascript_sdk_unit_tests_pass() {
    let out = run_ok(
        Command::new("node")
            .args(["--test", "test/sdk.test.js"])
            .current_dir(common::repo_root().join("plugins/sdk-js")),
        "node --test",
    );
    assert!(
        count_after(&out, "# pass ") >= 8 && out.contains("# fail 0"),
        "{out}"
    );
}

/// `plugin new NAME --lang L` writes a project whose `./build.sh` builds a component (with the
/// language's toolchain from its registry) that passes its own fixtures as written.
fn plugin_new_builds_and_passes_its_fixtures(lang: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "new".as_ref(),
        "gadgets".as_ref(),
        "--lang".as_ref(),
        lang.as_ref(),
        "--group".as_ref(),
        "toys.example.dev".as_ref(),
        "--dir".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert!(ok, "{out}");
    let project = dir.path().join("gadgets");
    for f in ["build.sh", "README.md", "fixtures/create-valid.json"] {
        assert!(project.join(f).exists(), "{lang}: {f} missing");
    }
    let mut build = Command::new("bash");
    build.arg("build.sh").current_dir(&project);
    if lang == "rust" {
        // Shared between runs: the SDK's dependencies are built once per checkout.
        build.env(
            "CARGO_TARGET_DIR",
            common::repo_root().join("target/plugin-new"),
        );
    }
    run_ok(&mut build, &format!("{lang}: ./build.sh"));
    let wasm = project.join("gadgets.wasm");
    let (ok, out) = common::cli(["plugin".as_ref(), "check".as_ref(), wasm.as_os_str()]);
    assert!(ok, "{lang}: {out}");
    assert!(
        out.contains("serves gadgets.toys.example.dev (toys.example.dev/v1, kind Gadget"),
        "{lang}: {out}"
    );
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "test".as_ref(),
        wasm.as_os_str(),
        project.join("fixtures").as_os_str(),
    ]);
    assert!(ok && out.contains("2 passed, 0 failed"), "{lang}: {out}");
    // A second `plugin new` of the same name refuses to overwrite it.
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "new".as_ref(),
        "gadgets".as_ref(),
        "--lang".as_ref(),
        lang.as_ref(),
        "--dir".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert!(!ok && out.contains("already exists"), "{lang}: {out}");
}

#[test]
fn plugin_new_rust_builds_and_passes() {
    plugin_new_builds_and_passes_its_fixtures("rust");
}

#[test]
fn plugin_new_python_builds_and_passes() {
    plugin_new_builds_and_passes_its_fixtures("python");
}

#[test]
fn plugin_new_js_builds_and_passes() {
    plugin_new_builds_and_passes_its_fixtures("js");
}

/// `plugin new --policy`: an admission policy project that builds and passes its fixtures as
/// written, and is an admission component (`plugin test` runs it as one). Python and
/// JavaScript build with the toolchains `plugins/build-languages.sh` installed (the strategy
/// projects' tests above cover installing them from the registries).
fn plugin_new_policy_builds_and_passes(lang: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "new".as_ref(),
        "require-owner".as_ref(),
        "--lang".as_ref(),
        lang.as_ref(),
        "--policy".as_ref(),
        "--dir".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert!(
        ok && out.contains(&format!("{lang} admission policy")),
        "{out}"
    );
    let project = dir.path().join("require-owner");
    let mut build = Command::new("bash");
    build.arg("build.sh").current_dir(&project);
    let tools = common::repo_root().join("target/toolchains");
    match lang {
        "rust" => build.env(
            "CARGO_TARGET_DIR",
            common::repo_root().join("target/plugin-new"),
        ),
        "python" => build.env("COMPONENTIZE_PY", tools.join("python/bin/componentize-py")),
        _ => build.env(
            "COMPONENTIZE_JS",
            tools.join("js/node_modules/.bin/componentize-js"),
        ),
    };
    run_ok(&mut build, &format!("{lang} policy: ./build.sh"));
    let wasm = project.join("require-owner.wasm");
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "test".as_ref(),
        wasm.as_os_str(),
        project.join("fixtures").as_os_str(),
    ]);
    assert!(ok && out.contains(": 2 passed, 0 failed"), "{lang}: {out}");
}

#[test]
fn plugin_new_rust_policy_builds_and_passes() {
    plugin_new_policy_builds_and_passes("rust");
}

#[test]
fn plugin_new_python_policy_builds_and_passes() {
    plugin_new_policy_builds_and_passes("python");
}

#[test]
fn plugin_new_js_policy_builds_and_passes() {
    plugin_new_policy_builds_and_passes("js");
}

//! The README's tour, run as written (issue 35): every `sh` block of its "A five-minute tour
//! with kubectl" section — the kubectl tour, changing a strategy, plugins through the API,
//! admission policies in wasm — in one bash, in order, in a folder laid out as `./run.sh`
//! leaves a checkout (`data/`, `plugins.d/`, `examples/`, `target/`), against a server started
//! with `./run.sh`'s arguments (RBAC, the standard plugins, the CRD plugin configured).
//!
//! Not run: `cargo build …` and `bash plugins/build.sh` lines (test.sh built everything before
//! the tests; cargo cannot run under `cargo test`'s lock), and the "Replicas over one etcd
//! cluster" block (servers on 10.0.0.x; `it::replicas` covers it). Every other command must
//! succeed, except the two the README shows failing, which must fail as it says.

use crate::common;

use common::server::{Backend, TestServer};
use std::path::Path;
use std::process::Command;

/// The section run, and the subsection left out.
const SECTION: &str = "## A five-minute tour with kubectl";
const SKIPPED: &str = "### Replicas over one etcd cluster";

/// Commands the README shows failing, and what their output must contain.
const FAILING: &[(&str, &str)] = &[
    ("widget-invalid.yaml", "Invalid"),
    (
        "kubectl run web",
        "admission plugin \"configmap-references\" denied the request",
    ),
];

/// What some commands must print (how the command ends, then a substring of its output): what the
/// README's comments say they show.
const SHOWS: &[(&str, &[&str])] = &[
    ("auth whoami", &["kubernetes-admin", "system:masters"]),
    ("get clusterroles", &["admin", "edit", "view"]),
    ("api-resources", &["pods", "configmaps", "secrets", "widgets"]),
    ("get namespaces", &["default", "kube-system", "kube-public", "kube-node-lease"]),
    ("get widgets", &["demo", "medium", "Pending"]),
    ("get wd demo -o yaml", &["replicas: 3", "phase: Pending"]),
    ("widget-invalid.yaml", &["spec.size: Unsupported value: \"huge\""]),
    ("12}}'", &["Warning: spec.replicas: 12 replicas is more than 10"]),
    ("get pods -o wide", &["0/1", "Pending"]),
    ("explain widgets.spec", &["replicas"]),
    ("get strategyplugins", &["GENERATION", "Active", "widgets", "pods"]),
    (
        "release/widgets.wasm",
        &["strategyplugins.wasm-apiserver.dev/widgets: the record of a removed plugin-folder file, deleted",
          "strategyplugins.wasm-apiserver.dev/widgets created"],
    ),
    ("push --name widgets widgets-v1.wasm", &["strategyplugins.wasm-apiserver.dev/widgets"]),
    (
        "configmap-references.wasm",
        &["admissionplugins.wasm-apiserver.dev/configmap-references created", "grants reading: configmaps"],
    ),
];

/// The `sh` blocks of [`SECTION`] (without [`SKIPPED`]), as their lines.
fn tour_lines(readme: &str) -> Vec<String> {
    let (mut inside, mut skipped, mut fence) = (false, false, None::<bool>);
    let mut lines = Vec::new();
    for line in readme.lines() {
        if let Some(sh) = fence {
            if line.starts_with("```") {
                fence = None;
            } else if sh && inside && !skipped {
                lines.push(line.to_string());
            }
            continue;
        }
        if line.starts_with("```") {
            fence = Some(line.trim() == "```sh");
        } else if line.starts_with("## ") {
            inside = line == SECTION;
            skipped = false;
        } else if line.starts_with("### ") {
            skipped = line == SKIPPED;
        }
    }
    lines
}

/// The tour as one bash script: each command followed by a marker with its number and exit
/// code (`::rc N CODE`), background commands (`… &`) left as they are, build commands
/// replaced by a note.
fn script(lines: &[String]) -> (String, Vec<String>) {
    let mut out = String::from("trap 'kill $(jobs -p) 2>/dev/null' EXIT\n");
    let mut commands = Vec::new();
    for line in lines {
        let command = line.split(" # ").next().unwrap_or("").trim();
        if command.is_empty() || command.starts_with('#') {
            continue;
        }
        if command.starts_with("cargo ") || command.starts_with("bash plugins/build") {
            out.push_str(&format!("echo 'skipped (test.sh built it): {command}'\n"));
            continue;
        }
        let n = commands.len();
        commands.push(command.to_string());
        out.push_str(&format!("echo '::cmd {n}'\n{line}\n"));
        if !command.ends_with('&') {
            out.push_str(&format!("echo \"::rc {n} $?\"\n"));
        }
    }
    (out, commands)
}

/// `<dir>/target` as `./run.sh` and `plugins/build.sh` leave it, for what the tour reads: the
/// server binary, the widgets component and the example policy.
fn lay_out_target(dir: &Path) {
    let t = dir.join("target");
    std::fs::create_dir_all(t.join("release")).unwrap();
    std::fs::create_dir_all(t.join("wasm32-wasip2/release")).unwrap();
    std::fs::create_dir_all(t.join("policies")).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_wasm-apiserver"),
        t.join("release/wasm-apiserver"),
    )
    .unwrap();
    std::fs::copy(
        common::plugin("widgets"),
        t.join("wasm32-wasip2/release/widgets.wasm"),
    )
    .unwrap();
    std::fs::copy(
        common::plugin("configmap-references"),
        t.join("policies/configmap-references.wasm"),
    )
    .unwrap();
    std::os::unix::fs::symlink(common::repo_root().join("examples"), dir.join("examples")).unwrap();
}

#[test]
fn the_readme_tour_runs_as_written() {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let lines = tour_lines(&readme);
    let (script, commands) = script(&lines);
    assert!(
        commands.len() > 25 && commands.iter().any(|c| c.contains("plugin push")),
        "the tour was not found in the README:\n{script}"
    );

    // `./run.sh`: every standard plugin and widgets in plugins.d, RBAC (the default).
    let plugins = [
        "pods",
        "configmaps",
        "secrets",
        "serviceaccounts",
        "namespaces",
        "leases",
        "events",
        "events-k8s-io",
        "roles",
        "clusterroles",
        "rolebindings",
        "clusterrolebindings",
        "widgets",
    ];
    let s = TestServer::start_with(Backend::Embedded, &plugins, &["--authorization-mode=RBAC"]);
    lay_out_target(s.dir.path());
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{script}"))
        .current_dir(s.dir.path())
        .env_remove("KUBECONFIG")
        .env("HOME", s.dir.path())
        .output()
        .expect("run bash");
    let output = String::from_utf8_lossy(&out.stdout).into_owned();

    // Each command's output, and its exit code.
    for (n, command) in commands.iter().enumerate() {
        if command.ends_with('&') {
            continue;
        }
        let start = output
            .find(&format!("::cmd {n}\n"))
            .unwrap_or_else(|| panic!("`{command}` did not run:\n{output}"));
        let rc_marker = format!("::rc {n} ");
        let end = output[start..]
            .find(&rc_marker)
            .map(|i| start + i)
            .unwrap_or_else(|| panic!("`{command}` did not finish:\n{output}"));
        let said = &output[start..end];
        let rc: i32 = output[end + rc_marker.len()..]
            .lines()
            .next()
            .and_then(|c| c.trim().parse().ok())
            .unwrap();
        for (_, expected) in SHOWS.iter().filter(|(c, _)| command.ends_with(c)) {
            for e in *expected {
                assert!(said.contains(e), "`{command}` should show {e}:\n{said}");
            }
        }
        match FAILING.iter().find(|(c, _)| command.contains(c)) {
            Some((_, expected)) => {
                assert_ne!(rc, 0, "`{command}` should fail:\n{said}");
                assert!(said.contains(expected), "`{command}`: {said}");
            }
            None => assert_eq!(rc, 0, "`{command}` failed:\n{said}\n\nwhole run:\n{output}"),
        }
    }
    for (c, _) in SHOWS {
        assert!(
            commands.iter().any(|command| command.ends_with(c)),
            "the tour has no `{c}` command any more"
        );
    }
    let manifest = std::fs::read_to_string(s.dir.path().join("widgets.yaml")).unwrap();
    assert!(
        manifest.contains("kind: StrategyPlugin") && manifest.contains("name: widgets"),
        "{manifest}"
    );
}

/// `plugin push` onto the name of a file some server's folder serves: one message saying what
/// to do, not a replace refused on `spec.file` with a debug dump of the Status.
#[test]
fn a_push_onto_a_folder_plugin_says_what_to_do() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces", "widgets"], &[]);
    s.eventually(
        std::time::Duration::from_secs(30),
        "the folder's widgets recorded",
        || s.kubectl(&["get", "strategyplugin", "widgets"]).0,
    );
    let file = common::plugin("widgets");
    let (ok, out) = common::cli([
        "plugin".as_ref(),
        "push".as_ref(),
        file.as_os_str(),
        "--server".as_ref(),
        s.url.as_ref(),
    ]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("StrategyPlugin widgets is served from the file widgets.wasm in a server's --plugin-dir")
            && out.contains("remove widgets.wasm from the plugin folder"),
        "{out}"
    );
    assert!(
        !out.contains("ErrorResponse") && !out.contains("immutable"),
        "{out}"
    );
}

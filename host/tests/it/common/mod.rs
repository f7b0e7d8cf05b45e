//! Shared helpers for the host's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The standard plugins (what `run.sh` serves) and the widgets example.
pub const STANDARD_PLUGINS: &[&str] = &[
    "pods",
    "configmaps",
    "secrets",
    "serviceaccounts",
    "namespaces",
    "leases",
    "events",
    "events-k8s-io",
    "widgets",
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
];

/// Run the `wasm-apiserver` binary with `args` (`$KUBECONFIG` unset): (success, stdout and
/// stderr).
pub fn cli<I, S>(args: I) -> (bool, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Run `host/tests/python/<script>` with the official Python client (the venv `setup.sh
/// --test` makes, else `python3`) against `url`, at most 120 s; panics unless it exits 0
/// printing `ok`.
pub fn run_python_client(script: &str, url: &str) {
    run_python_client_with(script, &[url]);
}

/// [`run_python_client`] with these arguments.
pub fn run_python_client_with(script: &str, args: &[&str]) {
    let script = repo_root().join("host/tests/python").join(script);
    let venv = repo_root().join("target/pyenv/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        "python3".into()
    };
    let mut child = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run python");
    // Bounded: a hung client fails the test instead of hanging the suite.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("python client still running after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A built plugin: `target/plugins/<name>.wasm` or `target/test-plugins/<name>.wasm`, as laid out
/// by `plugins/build.sh`, or `target/lang-plugins/<name>.wasm` (Python and JavaScript, by
/// `plugins/build-languages.sh`). Panics with instructions when missing.
pub fn plugin(name: &str) -> PathBuf {
    for dir in [
        "target/plugins",
        "target/test-plugins",
        "target/lang-plugins",
        "target/policies",
    ] {
        let p = repo_root().join(dir).join(format!("{name}.wasm"));
        if p.exists() {
            return p;
        }
    }
    panic!("plugin {name}.wasm not built: run `bash plugins/build.sh` and `bash plugins/build-languages.sh` first (test.sh does)");
}

/// `<dir>/plugins.d` holding the named plugins ([`plugin`]) as `<name>.wasm`: a server's
/// `--plugin-dir`; and, as `./run.sh` lays it out, `configured/customresources.wasm` (a link
/// to the built component: the server loads it only when a CRD is served).
pub fn plugin_dir(dir: &std::path::Path, plugins: &[&str]) -> PathBuf {
    let plugin_dir = dir.join("plugins.d");
    std::fs::create_dir_all(plugin_dir.join("configured")).unwrap();
    for p in plugins {
        std::fs::copy(plugin(p), plugin_dir.join(format!("{p}.wasm"))).unwrap();
    }
    let crd_plugin = repo_root().join("target/plugins/configured/customresources.wasm");
    let _ = std::os::unix::fs::symlink(
        crd_plugin,
        plugin_dir.join("configured/customresources.wasm"),
    );
    plugin_dir
}

/// The fixture directory of a plugin.
pub fn fixtures(name: &str) -> PathBuf {
    let root = repo_root();
    if name == "widgets" {
        root.join("examples/widgets/fixtures")
    } else if name == "events" {
        root.join("plugins/events/fixtures/core")
    } else if name == "events-k8s-io" {
        root.join("plugins/events/fixtures/events")
    } else if [
        "roles",
        "clusterroles",
        "rolebindings",
        "clusterrolebindings",
    ]
    .contains(&name)
    {
        root.join("plugins/rbac/fixtures").join(name)
    } else {
        root.join("plugins").join(name).join("fixtures")
    }
}

/// A MutatingAdmissionPolicy (`reinvocationPolicy: IfNeeded`) that copies a ConfigMap's
/// `team` label to `team-policy-copy` once there is one: run again only if a later member
/// of the mutating stage sets the team.
pub const COPY_TEAM_POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: copy-team}
spec:
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        has(object.metadata.labels) && 'team' in object.metadata.labels
          ? Object{metadata: Object.metadata{labels: {"team-policy-copy": object.metadata.labels["team"]}}}
          : Object{}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: copy-team}
spec:
  policyName: copy-team
"#;

pub mod conversion_webhook;
pub mod http;
pub mod in_process;
pub mod kms_plugin;
pub mod oidc_issuer;
pub mod server;
pub mod wasi_command;

/// A server under test, in this process or as a process: where it listens.
pub trait ServerUrl {
    /// `http://127.0.0.1:<port>`.
    fn url(&self) -> &str;
}

impl ServerUrl for server::TestServer {
    fn url(&self) -> &str {
        &self.url
    }
}

impl ServerUrl for in_process::InProcessServer {
    fn url(&self) -> &str {
        &self.url
    }
}

/// Every key under `prefix` in the etcd at `endpoint` (`""`: every key), with its stored
/// bytes as etcd holds them (what encryption at rest is checked against).
pub fn etcd_range(endpoint: &str, prefix: &str) -> Vec<(String, Vec<u8>)> {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut c = etcd_client::Client::connect([endpoint], None)
            .await
            .unwrap();
        let opts = if prefix.is_empty() {
            etcd_client::GetOptions::new().with_from_key()
        } else {
            etcd_client::GetOptions::new().with_prefix()
        };
        let resp = c.get(prefix, Some(opts)).await.unwrap();
        resp.kvs()
            .iter()
            .map(|kv| (kv.key_str().unwrap().to_string(), kv.value().to_vec()))
            .collect()
    })
}

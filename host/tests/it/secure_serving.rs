//! Secure serving as a user meets it: a fresh start's generated CA, serving certificate and
//! admin kubeconfig, the real kubectl over real TLS (the CA verified), client certificates,
//! static tokens and anonymous requests, RBAC's bootstrap policy answering 403 with kube's
//! message, and the refusal to start on a malformed token file. On the embedded store and on
//! a real etcd.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const TOKENS: &str = "jane-token,jane,u-jane,\"dev,qa\"\nroot-token,root,u-root,system:masters\nvera-token,vera,u-vera\ned-token,ed,u-ed\nimp-token,imp,u-imp\n";

/// The standard plugins, the RBAC ones included.
const PLUGINS: &[&str] = common::STANDARD_PLUGINS;

fn start(backend: Backend, extra: &[&str]) -> TestServer {
    let mut args = vec!["--authorization-mode=RBAC"];
    args.extend_from_slice(extra);
    TestServer::start_with(backend, PLUGINS, &args)
}

fn with_tokens(backend: Backend) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let s = start(backend, &["--token-auth-file", tokens.to_str().unwrap()]);
    (s, dir)
}

/// The admin kubeconfig with its user replaced by `user` (a kubeconfig `user` object).
fn kubeconfig_as(s: &TestServer, name: &str, user: Value) -> PathBuf {
    let admin = std::fs::read_to_string(s.kubeconfig()).unwrap();
    let mut config: Value = serde_yaml_ng::from_str(&admin).unwrap();
    config["users"][0]["user"] = user;
    let path = s.dir.path().join(name);
    std::fs::write(&path, serde_yaml_ng::to_string(&config).unwrap()).unwrap();
    path
}

fn kubectl_with(s: &TestServer, kubeconfig: &PathBuf, args: &[&str]) -> (bool, String) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(s.dir.path().join("kube-cache-other"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run kubectl");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn fresh_start_is_secure(backend: Backend) {
    let (s, _tokens) = with_tokens(backend);
    // The generated kubeconfig: HTTPS, the CA embedded and verified by kubectl, the admin.
    let config = std::fs::read_to_string(s.kubeconfig()).unwrap();
    assert!(config.contains("server: https://127.0.0.1:"), "{config}");
    assert!(config.contains("certificate-authority-data"), "{config}");
    assert!(!config.contains("insecure-skip-tls-verify"), "{config}");
    let who = s.ok(&["auth", "whoami"]);
    assert!(who.contains("kubernetes-admin"), "{who}");
    assert!(who.contains("system:masters"), "{who}");
    // `default` exists from the start (the system namespaces controller).
    let widget = s.file(
        "w.yaml",
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: demo}\nspec: {size: medium}\n",
    );
    s.ok(&["apply", "-f", widget.to_str().unwrap()]);
    assert!(s.ok(&["get", "widgets"]).contains("demo"));
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
    ]);

    // No credentials: anonymous, allowed the public info only. (kubectl prompts for a user
    // name when a kubeconfig user has nothing at all; a bare user name sends only a Basic
    // header, which — as on kube-apiserver — authenticates nothing.)
    let anonymous = kubeconfig_as(&s, "anonymous.kubeconfig", json!({"username": "nobody"}));
    // Discovery is forbidden to anonymous users too, so kubectl cannot map `pods` and says
    // only "Forbidden" (as against kube-apiserver); the raw list shows kube's message.
    let (ok, out) = kubectl_with(&s, &anonymous, &["get", "pods"]);
    assert!(
        !ok && out.contains("Error from server (Forbidden)"),
        "{out}"
    );
    let (ok, out) = kubectl_with(
        &s,
        &anonymous,
        &["get", "--raw", "/api/v1/namespaces/default/pods"],
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default""#),
        "{out}"
    );
    let (ok, out) = kubectl_with(&s, &anonymous, &["get", "--raw", "/healthz"]);
    assert!(ok && out.trim() == "ok", "{out}");
    let (ok, out) = kubectl_with(&s, &anonymous, &["get", "--raw", "/version"]);
    assert!(ok && out.contains("gitVersion"), "{out}");
    // Discovery is for authenticated users only.
    let (ok, out) = kubectl_with(&s, &anonymous, &["get", "--raw", "/apis"]);
    assert!(!ok && out.contains("Forbidden"), "{out}");

    // A token user from the token file: authenticated, in its groups and
    // system:authenticated, allowed discovery and whoami but nothing else yet.
    let jane = kubeconfig_as(&s, "jane.kubeconfig", json!({"token": "jane-token"}));
    let (ok, out) = kubectl_with(&s, &jane, &["auth", "whoami", "-o", "json"]);
    assert!(ok, "{out}");
    let review: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(review["status"]["userInfo"]["username"], "jane");
    assert_eq!(review["status"]["userInfo"]["uid"], "u-jane");
    assert_eq!(
        review["status"]["userInfo"]["groups"],
        json!(["dev", "qa", "system:authenticated"])
    );
    let (ok, out) = kubectl_with(&s, &jane, &["get", "--raw", "/apis"]);
    assert!(ok, "{out}");
    let (ok, out) = kubectl_with(&s, &jane, &["create", "configmap", "x", "-n", "dev"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"User "jane" cannot create resource "configmaps" in API group "" in the namespace "dev""#),
        "{out}"
    );
    let (ok, out) = kubectl_with(&s, &jane, &["get", "widgets", "-A"]);
    assert!(
        !ok && out.contains(
            r#"cannot list resource "widgets" in API group "example.dev" at the cluster scope"#
        ),
        "{out}"
    );
    // A token in system:masters may do everything.
    let root = kubeconfig_as(&s, "root.kubeconfig", json!({"token": "root-token"}));
    let (ok, out) = kubectl_with(&s, &root, &["get", "configmap", "settings", "-o", "name"]);
    assert!(ok && out.contains("configmap/settings"), "{out}");
    // A wrong token is 401, never anonymous.
    let wrong = kubeconfig_as(&s, "wrong.kubeconfig", json!({"token": "nope"}));
    let (ok, out) = kubectl_with(&s, &wrong, &["get", "--raw", "/healthz"]);
    assert!(!ok && out.contains("Unauthorized"), "{out}");
}

/// Run kubectl as a token user; (success, stdout + stderr).
fn kubectl_as(s: &TestServer, user: &str, args: &[&str]) -> (bool, String) {
    let config = kubeconfig_as(
        s,
        &format!("{user}.kubeconfig"),
        json!({"token": format!("{user}-token")}),
    );
    kubectl_with(s, &config, args)
}

/// A raw request on the plain port as token user `user`: "<code> <body>".
fn curl_as(s: &TestServer, user: &str, args: &[&str], path: &str) -> String {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "-w", "%{http_code}", "-o", "-"])
        .args(["-H", &format!("Authorization: Bearer {user}-token")])
        .args(args)
        .arg(format!("{}{path}", s.url))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.split_at(text.len().saturating_sub(3));
    format!("{code} {body}")
}

fn rbac_as_a_team_uses_it(backend: Backend) {
    let (s, _tokens) = with_tokens(backend);
    // The bootstrap policy is stored, with the aggregated roles filled.
    s.eventually(Duration::from_secs(10), "edit aggregated", || {
        let out = s.ok(&["get", "clusterrole", "edit", "-o", "json"]);
        out.contains("\"configmaps\"") && out.contains("\"deployments\"")
    });
    s.ok(&["create", "namespace", "dev"]);
    // Widgets join `edit` as a CRD's role would: a ClusterRole labelled to aggregate.
    let widgets_edit = s.file(
        "widgets-edit.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: widgets-edit\n  labels: {rbac.authorization.k8s.io/aggregate-to-edit: \"true\"}\nrules:\n- apiGroups: [example.dev]\n  resources: [widgets]\n  verbs: [get, list, watch, create, update, patch, delete]\n",
    );
    s.ok(&["apply", "-f", widgets_edit.to_str().unwrap()]);
    s.ok(&[
        "create",
        "rolebinding",
        "vera-view",
        "--clusterrole=view",
        "--user=vera",
        "-n",
        "dev",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "ed-edit",
        "--clusterrole=edit",
        "--user=ed",
        "-n",
        "dev",
    ]);
    s.ok(&["run", "web", "--image=nginx", "-n", "dev"]);

    // view: lists pods, cannot create; can-i agrees.
    s.eventually(Duration::from_secs(10), "vera's binding", || {
        kubectl_as(&s, "vera", &["get", "pods", "-n", "dev"]).0
    });
    let (ok, out) = kubectl_as(&s, "vera", &["create", "configmap", "x", "-n", "dev"]);
    assert!(
        !ok && out.contains(r#"User "vera" cannot create resource "configmaps""#),
        "{out}"
    );
    assert!(
        kubectl_as(&s, "vera", &["auth", "can-i", "list", "pods", "-n", "dev"])
            .1
            .starts_with("yes")
    );
    assert!(kubectl_as(
        &s,
        "vera",
        &["auth", "can-i", "create", "configmaps", "-n", "dev"]
    )
    .1
    .starts_with("no"));
    assert!(kubectl_as(
        &s,
        "vera",
        &["auth", "can-i", "list", "pods", "-n", "default"]
    )
    .1
    .starts_with("no"));
    let (ok, list) = kubectl_as(&s, "vera", &["auth", "can-i", "--list", "-n", "dev"]);
    assert!(ok, "{list}");
    assert!(
        list.lines()
            .any(|l| l.starts_with("pods ") && l.contains("[get list watch]")),
        "{list}"
    );
    assert!(!list.contains("secrets"), "{list}");

    // edit: configmaps and (through the aggregated widgets-edit) widgets, but not roles.
    s.eventually(Duration::from_secs(10), "ed's binding", || {
        kubectl_as(&s, "ed", &["create", "configmap", "settings", "-n", "dev"]).0
    });
    s.eventually(
        Duration::from_secs(10),
        "widgets aggregated into edit",
        || {
            kubectl_as(
                &s,
                "ed",
                &[
                    "auth",
                    "can-i",
                    "create",
                    "widgets.example.dev",
                    "-n",
                    "dev",
                ],
            )
            .1
            .starts_with("yes")
        },
    );
    let widget = s.file(
        "w.yaml",
        "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w1, namespace: dev}\nspec: {size: small}\n",
    );
    let (ok, out) = kubectl_as(&s, "ed", &["apply", "-f", widget.to_str().unwrap()]);
    assert!(ok, "{out}");
    let (ok, out) = kubectl_as(
        &s,
        "ed",
        &[
            "create",
            "role",
            "r",
            "--verb=get",
            "--resource=pods",
            "-n",
            "dev",
        ],
    );
    assert!(
        !ok && out
            .contains(r#"cannot create resource "roles" in API group "rbac.authorization.k8s.io""#),
        "{out}"
    );

    // Escalation: an admin of dev may create roles, but only with rules they hold …
    s.ok(&[
        "create",
        "rolebinding",
        "ed-admin",
        "--clusterrole=admin",
        "--user=ed",
        "-n",
        "dev",
    ]);
    s.eventually(Duration::from_secs(10), "ed's admin binding", || {
        kubectl_as(&s, "ed", &["auth", "can-i", "create", "roles", "-n", "dev"])
            .1
            .starts_with("yes")
    });
    let (ok, out) = kubectl_as(
        &s,
        "ed",
        &[
            "create",
            "role",
            "reader",
            "--verb=get",
            "--resource=pods",
            "-n",
            "dev",
        ],
    );
    assert!(ok, "{out}");
    let (ok, out) = kubectl_as(
        &s,
        "ed",
        &[
            "create",
            "role",
            "nodes",
            "--verb=get",
            "--resource=namespaces/finalize",
            "-n",
            "dev",
        ],
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"is attempting to grant RBAC permissions not currently held"#)
            && out
                .contains(r#"{APIGroups:[""], Resources:["namespaces/finalize"], Verbs:["get"]}"#),
        "{out}"
    );
    // A `null` list in a rule is the rule the plugin stores (`*` on everything here), not a
    // rule the check cannot read (review finding: this once passed as "no rules").
    let sneaky = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"sneaky"},"rules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"resourceNames":null}]}"#;
    let out = curl_as(
        &s,
        "ed",
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-d",
            sneaky,
        ],
        "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles",
    );
    assert!(
        out.starts_with("403")
            && out.contains("attempting to grant RBAC permissions not currently held"),
        "{out}"
    );
    // … and bind only roles whose rules they hold.
    let (ok, out) = kubectl_as(
        &s,
        "ed",
        &[
            "create",
            "rolebinding",
            "vera-admin",
            "--clusterrole=cluster-admin",
            "--user=vera",
            "-n",
            "dev",
        ],
    );
    assert!(
        !ok && out.contains("attempting to grant RBAC permissions not currently held"),
        "{out}"
    );
    // With `escalate` and `bind`, they may.
    let escalator = s.file(
        "escalator.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: escalator}\nrules:\n- apiGroups: [rbac.authorization.k8s.io]\n  resources: [roles, clusterroles]\n  verbs: [escalate, bind]\n",
    );
    s.ok(&["apply", "-f", escalator.to_str().unwrap()]);
    s.ok(&[
        "create",
        "rolebinding",
        "ed-escalate",
        "--clusterrole=escalator",
        "--user=ed",
        "-n",
        "dev",
    ]);
    s.eventually(Duration::from_secs(10), "ed may escalate", || {
        kubectl_as(
            &s,
            "ed",
            &[
                "create",
                "role",
                "nodes",
                "--verb=get",
                "--resource=namespaces/finalize",
                "-n",
                "dev",
            ],
        )
        .0
    });
    let (ok, out) = kubectl_as(
        &s,
        "ed",
        &[
            "create",
            "rolebinding",
            "vera-admin",
            "--clusterrole=cluster-admin",
            "--user=vera",
            "-n",
            "dev",
        ],
    );
    assert!(ok, "{out}");

    // What is authorized is what is served: a repeated fieldSelector cannot narrow the
    // authorization to one name and widen the list (review finding).
    let one = s.file(
        "one-cm.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: one-cm, namespace: default}\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  resourceNames: [settings]\n  verbs: [list, get]\n",
    );
    s.ok(&["apply", "-f", one.to_str().unwrap()]);
    s.ok(&[
        "create",
        "rolebinding",
        "jane-one",
        "--role=one-cm",
        "--user=jane",
        "-n",
        "default",
    ]);
    s.ok(&["create", "configmap", "settings", "-n", "default"]);
    s.ok(&["create", "configmap", "secret-ish", "-n", "default"]);
    let path = "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dsettings";
    s.eventually(Duration::from_secs(10), "jane's one-name grant", || {
        curl_as(&s, "jane", &[], path).starts_with("200")
    });
    let out = curl_as(&s, "jane", &[], &format!("{path}&fieldSelector="));
    assert!(out.starts_with("403"), "{out}");
    let out = curl_as(&s, "jane", &[], "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dsettings&watch=True&timeoutSeconds=1");
    assert!(
        out.starts_with("403") && out.contains("cannot watch"),
        "{out}"
    );

    // Impersonation: allowed to the admin (system:masters) and to a user granted
    // `impersonate`, 403 for anyone else.
    let who = s.ok(&["auth", "whoami", "--as=jane", "--as-group=dev"]);
    assert!(
        who.contains("jane") && who.contains("system:authenticated"),
        "{who}"
    );
    let (ok, out) = kubectl_as(&s, "vera", &["get", "pods", "-n", "dev", "--as=ed"]);
    assert!(!ok && out.contains(r#"users "ed" is forbidden: User "vera" cannot impersonate resource "users" in API group "" at the cluster scope"#), "{out}");
    let impersonator = s.file(
        "impersonator.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: impersonator}\nrules:\n- apiGroups: [\"\"]\n  resources: [users]\n  verbs: [impersonate]\n",
    );
    s.ok(&["apply", "-f", impersonator.to_str().unwrap()]);
    s.ok(&[
        "create",
        "clusterrolebinding",
        "imp",
        "--clusterrole=impersonator",
        "--user=imp",
    ]);
    s.eventually(Duration::from_secs(10), "imp may impersonate", || {
        let (ok, out) = kubectl_as(&s, "imp", &["get", "pods", "-n", "dev", "--as=vera"]);
        ok && out.contains("web")
    });
    // Acting as vera, imp has vera's rights (admin of dev by now), not more.
    let (ok, out) = kubectl_as(
        &s,
        "imp",
        &["create", "configmap", "y", "-n", "default", "--as=vera"],
    );
    assert!(!ok && out.contains(r#"User "vera" cannot create"#), "{out}");
    // Groups need their own grant.
    let (ok, out) = kubectl_as(
        &s,
        "imp",
        &[
            "get",
            "pods",
            "-n",
            "dev",
            "--as=vera",
            "--as-group=system:masters",
        ],
    );
    assert!(
        !ok && out.contains(r#"cannot impersonate resource "groups""#),
        "{out}"
    );
}

#[test]
fn rbac_as_a_team_uses_it_embedded() {
    rbac_as_a_team_uses_it(Backend::Embedded);
}

#[test]
fn rbac_as_a_team_uses_it_etcd() {
    rbac_as_a_team_uses_it(Backend::Etcd);
}

#[test]
fn fresh_start_is_secure_embedded() {
    fresh_start_is_secure(Backend::Embedded);
}

#[test]
fn fresh_start_is_secure_etcd() {
    fresh_start_is_secure(Backend::Etcd);
}

/// A client certificate signed by another CA, as a client would have it.
fn foreign_client_certificate(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "another-ca");
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let mut leaf = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf.distinguished_name
        .push(rcgen::DnType::CommonName, "mallory");
    leaf.distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:masters");
    leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    let (crt, k) = (dir.join("mallory.crt"), dir.join("mallory.key"));
    std::fs::write(&crt, cert.pem()).unwrap();
    std::fs::write(&k, key.serialize_pem()).unwrap();
    (crt, k)
}

#[test]
fn certificates_tokens_and_the_plain_port() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let s = start(
        Backend::Embedded,
        &["--token-auth-file", tokens.to_str().unwrap()],
    );

    // A certificate from another CA claiming system:masters: 401.
    let (crt, key) = foreign_client_certificate(dir.path());
    let mallory = kubeconfig_as(
        &s,
        "mallory.kubeconfig",
        json!({"client-certificate": crt, "client-key": key}),
    );
    let (ok, out) = kubectl_with(&s, &mallory, &["get", "--raw", "/healthz"]);
    assert!(!ok && out.contains("Unauthorized"), "{out}");

    // curl over HTTP/2 and HTTP/1.1 with the generated CA and the admin certificate.
    let pki = s.dir.path().join("data/pki");
    for version in ["--http2", "--http1.1"] {
        let out = Command::new("curl")
            .args([
                "-sS",
                version,
                "-o",
                "/dev/null",
                "-w",
                "%{http_version} %{http_code}",
            ])
            .arg("--cacert")
            .arg(pki.join("ca.crt"))
            .arg("--cert")
            .arg(pki.join("admin.crt"))
            .arg("--key")
            .arg(pki.join("admin.key"))
            .arg(format!("{}/api/v1/namespaces", s.secure_url))
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&out.stdout).to_string();
        let expected = if version == "--http2" {
            "2 200"
        } else {
            "1.1 200"
        };
        assert_eq!(out, expected, "{version}");
    }

    // The plain loopback port goes through the same chain: anonymous is forbidden, a token
    // authenticates, a wrong token is 401.
    let curl = |args: &[&str]| -> String {
        let out = Command::new("curl")
            .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let pods = format!("{}/api/v1/pods", s.url);
    assert_eq!(curl(&[&pods]), "403");
    assert_eq!(
        curl(&["-H", "Authorization: Bearer root-token", &pods]),
        "200"
    );
    assert_eq!(
        curl(&["-H", "Authorization: Bearer jane-token", &pods]),
        "403"
    );
    assert_eq!(curl(&["-H", "Authorization: Bearer wrong", &pods]), "401");
    let healthz = format!("{}/healthz", s.url);
    assert_eq!(curl(&[&healthz]), "200");

    // Figures in /metrics, by bounded user label.
    let metrics = Command::new("curl")
        .args(["-sS", "-H", "Authorization: Bearer root-token"])
        .arg(format!("{}/metrics", s.url))
        .output()
        .unwrap();
    let metrics = String::from_utf8_lossy(&metrics.stdout);
    assert!(
        metrics.contains(r#"authenticated_user_requests{username="other"}"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"authentication_attempts{result="failure"}"#));
    assert!(metrics.contains(r#"apiserver_authorization_decisions_total{decision="denied"}"#));
}

#[test]
fn certificates_are_reused_and_anonymous_can_be_refused() {
    let s = start(Backend::Embedded, &[]);
    let pki = s.dir.path().join("data/pki");
    let ca = std::fs::read(pki.join("ca.crt")).unwrap();
    let admin = std::fs::read(pki.join("admin.crt")).unwrap();
    let data = s.dir.path().join("data");
    let mut s = s;
    Command::new("kill")
        .args(["-9", &s.pid().to_string()])
        .status()
        .unwrap();
    assert!(s.wait_exit(std::time::Duration::from_secs(10)).is_some());
    // A second start on the same data dir keeps its CA and admin certificate, and
    // --anonymous-auth=false makes a request without credentials a 401.
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-apiserver"))
        .args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--port",
            "0",
        ])
        .args(["--anonymous-auth=false", "--plugin-dir"])
        .arg(data.join("no-plugins"))
        .arg("--data-dir")
        .arg(&data)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = out;
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let plain = loop {
        let line = lines.next().expect("a line").unwrap();
        if let Some(u) = line.strip_prefix("wasm-apiserver listening on http://") {
            break format!("http://{u}");
        }
    };
    let code = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"])
        .arg(format!("{plain}/healthz"))
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(String::from_utf8_lossy(&code.stdout), "401");
    assert!(
        std::fs::read(pki.join("ca.crt")).unwrap() == ca,
        "the CA was regenerated"
    );
    assert!(
        std::fs::read(pki.join("admin.crt")).unwrap() == admin,
        "the admin certificate was regenerated"
    );
}

#[test]
fn a_malformed_token_file_refuses_start_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "t1,jane,u1\nt2,joe\n").unwrap();
    let err = common::server::refused_start(
        dir.path(),
        &["--token-auth-file".as_ref(), tokens.as_os_str()],
    );
    assert!(
        err.contains("line 2") && err.contains("at least 3 columns"),
        "{err}"
    );
}

/// `plugin push` through a kubeconfig (kube-rs over TLS, the CA verified): the admin may
/// upload and apply; a user bound to `admin` in a namespace and to the `edit` ClusterRole may
/// not — only cluster-admin's wildcard grants `strategyplugincomponents` and `strategyplugins`
/// of `wasm-apiserver.dev`.
#[test]
fn plugin_push_needs_cluster_admin() {
    let (s, _tokens) = with_tokens(Backend::Embedded);
    s.ok(&[
        "create",
        "clusterrolebinding",
        "jane-edit",
        "--clusterrole=edit",
        "--user=jane",
    ]);
    let file = common::plugin("misbehaving");
    let push = |kubeconfig: &PathBuf| {
        common::cli([
            "plugin".as_ref(),
            "push".as_ref(),
            file.as_os_str(),
            "--kubeconfig".as_ref(),
            kubeconfig.as_os_str(),
        ])
    };
    let jane = kubeconfig_as(&s, "jane.kubeconfig", json!({"token": "jane-token"}));
    let (ok, out) = push(&jane);
    assert!(!ok, "{out}");
    assert!(
        out.contains("forbidden") && out.contains("strategyplugincomponents"),
        "{out}"
    );
    let (ok, out) = kubectl_with(&s, &jane, &["get", "strategyplugins"]);
    assert!(!ok && out.contains("forbidden"), "{out}");
    let (ok, out) = push(&s.kubeconfig());
    assert!(ok, "{out}");
    assert!(out.contains("uploaded") && out.contains("created"), "{out}");
    s.eventually(Duration::from_secs(30), "the pushed plugin serves", || {
        s.kubectl(&["get", "misbehavers", "-A"]).0
    });
}

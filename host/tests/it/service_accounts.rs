//! ServiceAccounts (`core/v1`, the standard plugin `plugins/serviceaccounts`) and the
//! ServiceAccounts controller through kubectl: `create serviceaccount` (a protobuf body), the
//! table, the `default` ServiceAccount of every namespace — the system ones and a new one —
//! re-created when deleted, and none when the controller is off.

use crate::common;

use common::server::{Backend, TestServer};
use std::time::Duration;

const PLUGINS: &[&str] = &["serviceaccounts", "secrets", "namespaces"];

#[test]
fn every_namespace_gets_a_default_service_account() {
    let s = TestServer::start_with(Backend::Embedded, PLUGINS, &[]);
    let has_default = |ns: &str| s.kubectl(&["get", "serviceaccount", "default", "-n", ns]).0;
    s.eventually(Duration::from_secs(20), "default/default", || {
        has_default("default") && has_default("kube-system")
    });
    s.ok(&["create", "namespace", "team"]);
    s.eventually(Duration::from_secs(10), "team/default", || {
        has_default("team")
    });
    // Deleted: back again.
    s.ok(&["delete", "serviceaccount", "default", "-n", "team"]);
    s.eventually(Duration::from_secs(10), "team/default again", || {
        has_default("team")
    });

    // kubectl create serviceaccount sends protobuf; the table is kube's.
    s.ok(&["create", "serviceaccount", "build-bot", "-n", "team"]);
    s.ok(&[
        "patch",
        "sa",
        "build-bot",
        "-n",
        "team",
        "--type=merge",
        "-p",
        r#"{"secrets":[{"name":"t1","namespace":"elsewhere","uid":"x"}]}"#,
    ]);
    let table = s.ok(&["get", "sa", "-n", "team"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "SECRETS", "AGE"], "{table}");
    assert_eq!(rows[1][..2], ["build-bot", "1"], "{table}");
    assert_eq!(rows[2][..2], ["default", "0"], "{table}");
    // cleanSecretReferences: a reference keeps its name only.
    let refs = s.ok(&[
        "get",
        "sa",
        "build-bot",
        "-n",
        "team",
        "-o",
        "jsonpath={.secrets}",
    ]);
    assert_eq!(refs, r#"[{"name":"t1"}]"#);

    // The namespace goes, its ServiceAccounts with it (none re-created while it terminates).
    s.ok(&["delete", "namespace", "team", "--timeout=60s"]);
    let gone = s.kubectl(&["get", "sa", "-n", "team", "-o", "name"]).1;
    assert_eq!(gone.trim(), "");
}

#[test]
fn no_default_service_account_with_the_controller_off() {
    let s = TestServer::start_with(
        Backend::Embedded,
        PLUGINS,
        &["--controllers=*,-serviceaccount-controller"],
    );
    s.ok(&["create", "namespace", "team"]);
    s.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    std::thread::sleep(Duration::from_secs(2));
    let names = s.ok(&["get", "sa", "-n", "team", "-o", "name"]);
    assert_eq!(names.trim(), "serviceaccount/bot");
    // Nor in the system namespaces, which the controller (when on) fills at start (the test
    // above waits for `default/default`).
    let all = s.ok(&["get", "sa", "-A", "-o", "name"]);
    assert_eq!(all.trim(), "serviceaccount/bot", "{all}");
}

/// `kubectl create token` (TokenRequest, a protobuf body) gives a token that authenticates
/// as the ServiceAccount over TLS with RBAC: kube's user and groups, its RoleBinding honoured;
/// a token bound to a Secret dies with it; a deleted and re-created ServiceAccount (same
/// name, new uid) does not revive an old token; kube's 10-minute minimum; the JWKS.
#[test]
fn kubectl_create_token_authenticates_as_the_service_account() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &[
            "serviceaccounts",
            "secrets",
            "namespaces",
            "configmaps",
            "roles",
            "clusterroles",
            "rolebindings",
            "clusterrolebindings",
        ],
        &["--authorization-mode=RBAC"],
    );
    s.ok(&["create", "namespace", "team"]);
    s.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "team",
        "--from-literal=a=b",
    ]);
    let token = s
        .ok(&["create", "token", "bot", "-n", "team"])
        .trim()
        .to_string();
    assert_eq!(token.split('.').count(), 3, "{token}");

    let (ok, who) = s.kubectl_with_token(&token, &["auth", "whoami", "-o", "json"]);
    assert!(ok, "{who}");
    let who: serde_json::Value = serde_json::from_str(&who).unwrap();
    let user = &who["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:team:bot", "{who}");
    assert_eq!(
        user["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:team",
            "system:authenticated"
        ])
    );
    let sa_uid = s.ok(&[
        "get",
        "sa",
        "bot",
        "-n",
        "team",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    assert_eq!(user["uid"], sa_uid.as_str());

    // RBAC: nothing until a RoleBinding names the ServiceAccount.
    let (ok, out) = s.kubectl_with_token(&token, &["get", "configmaps", "-n", "team"]);
    assert!(!ok);
    assert!(
        out.contains(r#"User "system:serviceaccount:team:bot" cannot list resource "configmaps""#),
        "{out}"
    );
    s.ok(&[
        "create",
        "rolebinding",
        "bot-view",
        "--clusterrole=view",
        "--serviceaccount=team:bot",
        "-n",
        "team",
    ]);
    s.eventually(Duration::from_secs(10), "the binding applies", || {
        s.kubectl_with_token(&token, &["get", "configmaps", "-n", "team"])
            .0
    });

    // Bound to a Secret: refused once the Secret is gone.
    s.ok(&[
        "create",
        "secret",
        "generic",
        "anchor",
        "-n",
        "team",
        "--from-literal=a=b",
    ]);
    let bound = s
        .ok(&[
            "create",
            "token",
            "bot",
            "-n",
            "team",
            "--bound-object-kind=Secret",
            "--bound-object-name=anchor",
        ])
        .trim()
        .to_string();
    assert!(
        s.kubectl_with_token(&bound, &["get", "configmaps", "-n", "team"])
            .0
    );
    s.ok(&["delete", "secret", "anchor", "-n", "team"]);
    s.eventually(Duration::from_secs(10), "the bound token refused", || {
        let (ok, out) = s.kubectl_with_token(&bound, &["get", "configmaps", "-n", "team"]);
        !ok && out.contains("Unauthorized")
    });

    // The ServiceAccount deleted and re-created under the same name: the old token stays
    // refused; a new one works.
    s.ok(&["delete", "sa", "bot", "-n", "team"]);
    s.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    s.eventually(Duration::from_secs(10), "the old token refused", || {
        let (ok, out) = s.kubectl_with_token(&token, &["get", "configmaps", "-n", "team"]);
        !ok && out.contains("Unauthorized")
    });
    let fresh = s
        .ok(&["create", "token", "bot", "-n", "team"])
        .trim()
        .to_string();
    assert!(
        s.kubectl_with_token(&fresh, &["get", "configmaps", "-n", "team"])
            .0
    );

    // TokenReview (`kubectl create --raw`): the fresh token authenticates as the account, the
    // old one does not, and another audience is refused.
    let review = |token: &str, audiences: &[&str]| -> serde_json::Value {
        let body = serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token, "audiences": audiences}});
        let f = s.file("review.json", &body.to_string());
        let out = s.ok(&[
            "create",
            "--raw",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            "-f",
            f.to_str().unwrap(),
        ]);
        serde_json::from_str(&out).unwrap()
    };
    let ok = review(&fresh, &[]);
    assert_eq!(ok["status"]["authenticated"], true, "{ok}");
    assert_eq!(
        ok["status"]["user"]["username"],
        "system:serviceaccount:team:bot"
    );
    let stale = review(&token, &[]);
    assert!(
        stale["status"]
            .get("authenticated")
            .is_none_or(|a| a == false),
        "{stale}"
    );
    assert!(
        stale["status"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("does not match claim")),
        "{stale}"
    );
    let vault = review(&fresh, &["vault"]);
    assert!(
        vault["status"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("is invalid for the target audiences")),
        "{vault}"
    );

    // kube's minimum lifetime; the JWKS for outside verifiers.
    let err = s.fails(&["create", "token", "bot", "-n", "team", "--duration=5m"]);
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );
    let jwks: serde_json::Value =
        serde_json::from_str(&s.ok(&["get", "--raw", "/openid/v1/jwks"])).unwrap();
    assert_eq!(jwks["keys"][0]["kty"], "EC");
    assert_eq!(jwks["keys"][0]["alg"], "ES256");
    let (ok, _) = s.kubectl_with_token(&fresh, &["get", "--raw", "/openid/v1/jwks"]);
    assert!(ok, "service accounts may read the JWKS");
}

/// The Python client with a requested token (`tests/python/service_account_token.py`): the
/// TokenRequest API through the client, the token used as a bearer over TLS (the server's CA
/// verified) under RBAC — allowed by a RoleBinding, 403 elsewhere, 401 once the
/// ServiceAccount is re-created.
/// kubeadm's key pair: `--service-account-signing-key-file` a PKCS#1 RSA key and
/// `--service-account-key-file` its PKIX public key (openssl): `kubectl create token` signs
/// RS256 with kube's key id, the token authenticates, and the JWKS and discovery document name
/// the RSA key.
#[test]
fn rsa_service_account_keys_as_kubeadm_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = (dir.path().join("sa.key"), dir.path().join("sa.pub"));
    for args in [
        vec![
            "genrsa",
            "-traditional",
            "-out",
            key.to_str().unwrap(),
            "2048",
        ],
        vec![
            "rsa",
            "-in",
            key.to_str().unwrap(),
            "-pubout",
            "-out",
            public.to_str().unwrap(),
        ],
    ] {
        let out = std::process::Command::new("openssl")
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let s = TestServer::start_with(
        Backend::Embedded,
        &["serviceaccounts", "namespaces"],
        &[
            "--authorization-mode=RBAC",
            "--service-account-signing-key-file",
            key.to_str().unwrap(),
            "--service-account-key-file",
            public.to_str().unwrap(),
        ],
    );
    s.ok(&["create", "serviceaccount", "bot"]);
    let token = s.ok(&["create", "token", "bot"]).trim().to_string();
    let header: serde_json::Value = serde_json::from_slice(
        &base64::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            token.split('.').next().unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], "RS256", "{header}");
    let (ok, who) = s.kubectl_with_token(&token, &["auth", "whoami", "-o", "json"]);
    assert!(
        ok && who.contains("system:serviceaccount:default:bot"),
        "{who}"
    );
    let jwks: serde_json::Value =
        serde_json::from_str(&s.ok(&["get", "--raw", "/openid/v1/jwks"])).unwrap();
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(
        keys.len(),
        1,
        "the signing key and its public file are one key: {jwks}"
    );
    assert_eq!(keys[0]["kty"], "RSA", "{jwks}");
    assert_eq!(keys[0]["kid"], header["kid"], "{jwks}");
    let discovery: serde_json::Value =
        serde_json::from_str(&s.ok(&["get", "--raw", "/.well-known/openid-configuration"]))
            .unwrap();
    assert_eq!(
        discovery["id_token_signing_alg_values_supported"],
        serde_json::json!(["RS256"])
    );
}

#[test]
fn python_client_authenticates_with_a_requested_token() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &[
            "serviceaccounts",
            "secrets",
            "namespaces",
            "roles",
            "clusterroles",
            "rolebindings",
            "clusterrolebindings",
        ],
        &["--authorization-mode=RBAC"],
    );
    common::run_python_client_with(
        "service_account_token.py",
        &[s.kubeconfig().to_str().unwrap()],
    );
}

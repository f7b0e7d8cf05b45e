//! Secrets (`core/v1`, the standard plugin `plugins/secrets`) through real clients: kubectl's
//! `create secret generic|tls|docker-registry` (protobuf bodies), `get -o yaml`, the table, the
//! `type` field selector, `stringData` through `apply`, the type rules, `immutable`, the 1 MiB
//! limit and the TLS warning, on the embedded store and on etcd; the Python client reading
//! and listing Secrets.

use crate::common;

use common::server::{Backend, TestServer};

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn kubectl_secret_flows(backend: Backend) {
    let s = TestServer::start_with(backend, &["secrets", "namespaces"], &[]);
    s.ok(&["create", "namespace", "demo"]);

    // generic: a protobuf body; type defaults to Opaque; values come back base64.
    s.ok(&[
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=user=admin",
        "--from-literal=password=s3cr3t!",
        "-n",
        "demo",
    ]);
    let yaml = s.ok(&["get", "secret", "db", "-n", "demo", "-o", "yaml"]);
    assert!(yaml.contains("  password: czNjcjN0IQ==\n"), "{yaml}");
    assert!(yaml.contains("  user: YWRtaW4=\n"), "{yaml}");
    assert!(yaml.contains("\ntype: Opaque\n"), "{yaml}");
    assert!(!yaml.contains("generation"), "{yaml}");

    // tls: kubectl checks the pair itself, then sends both PEM files.
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["web.example".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let crt_file = s.file("tls.crt", &cert.pem());
    let key_file = s.file("tls.key", &key.serialize_pem());
    s.ok(&[
        "create",
        "secret",
        "tls",
        "web",
        &format!("--cert={}", crt_file.display()),
        &format!("--key={}", key_file.display()),
        "-n",
        "demo",
    ]);
    let crt = s.ok(&[
        "get",
        "secret",
        "web",
        "-n",
        "demo",
        "-o",
        "jsonpath={.type} {.data.tls\\.crt}",
    ]);
    assert_eq!(crt, format!("kubernetes.io/tls {}", b64(&cert.pem())));

    s.ok(&[
        "create",
        "secret",
        "docker-registry",
        "reg",
        "--docker-server=r.example",
        "--docker-username=u",
        "--docker-password=p",
        "-n",
        "demo",
    ]);

    // The table: kube's columns, DATA counts the keys.
    let table = s.ok(&["get", "secrets", "-n", "demo"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "TYPE", "DATA", "AGE"], "{table}");
    assert_eq!(rows[1][..3], ["db", "Opaque", "2"], "{table}");
    assert_eq!(
        rows[2][..3],
        ["reg", "kubernetes.io/dockerconfigjson", "1"],
        "{table}"
    );
    assert_eq!(rows[3][..3], ["web", "kubernetes.io/tls", "2"], "{table}");

    // The field selector `type`.
    let tls = s.ok(&[
        "get",
        "secrets",
        "-n",
        "demo",
        "--field-selector",
        "type=kubernetes.io/tls",
        "-o",
        "name",
    ]);
    assert_eq!(tls.trim(), "secret/web");
    let not_opaque = s.ok(&[
        "get",
        "secrets",
        "-n",
        "demo",
        "--field-selector",
        "type!=Opaque",
        "-o",
        "name",
    ]);
    assert_eq!(not_opaque.trim(), "secret/reg\nsecret/web");

    // stringData through apply: merged into data, never stored, applied again with a change.
    let api = |data: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\n  namespace: demo\nstringData:\n  token: {data}\ndata:\n  region: {}\n",
            b64("eu")
        )
    };
    let f = s.file("api.yaml", &api("abc"));
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let got = s.ok(&["get", "secret", "api", "-n", "demo", "-o", "json"]);
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(
        got["data"],
        serde_json::json!({"token": b64("abc"), "region": b64("eu")})
    );
    assert!(got.get("stringData").is_none(), "{got}");
    let f = s.file("api.yaml", &api("xyz"));
    s.ok(&["apply", "-f", f.to_str().unwrap()]);
    let token = s.ok(&[
        "get",
        "secret",
        "api",
        "-n",
        "demo",
        "-o",
        "jsonpath={.data.token}",
    ]);
    assert_eq!(token, b64("xyz"));

    // type is immutable.
    let err = s.fails(&[
        "patch",
        "secret",
        "web",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"type":"Opaque"}"#,
    ]);
    assert!(
        err.contains(
            r#"Secret "web" is invalid: type: Invalid value: "Opaque": field is immutable"#
        ),
        "{err}"
    );

    // immutable: data frozen, metadata not.
    s.ok(&[
        "patch",
        "secret",
        "db",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"immutable":true}"#,
    ]);
    let err = s.fails(&[
        "patch",
        "secret",
        "db",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"stringData":{"user":"root"}}"#,
    ]);
    assert!(
        err.contains("data: Forbidden: field is immutable when `immutable` is set"),
        "{err}"
    );
    s.ok(&["label", "secret", "db", "-n", "demo", "tier=db"]);

    // The keys each type requires, with kube's paths.
    let bad = s.file(
        "bad.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: half\n  namespace: demo\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: x\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sa\n  namespace: demo\ntype: kubernetes.io/service-account-token\n",
    );
    let err = s.fails(&["apply", "-f", bad.to_str().unwrap()]);
    assert!(err.contains("data[tls.key]: Required value"), "{err}");
    assert!(
        err.contains("metadata.annotations[kubernetes.io/service-account.name]: Required value"),
        "{err}"
    );

    // The TLS warning, with Go's text, for PEM inputs given the wrong way round.
    let switched = s.file(
        "switched.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: switched\n  namespace: demo\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {}\n  tls.key: {}\n",
            b64(&key.serialize_pem()),
            b64(&cert.pem())
        ),
    );
    let (ok, _, stderr) = s.kubectl(&["apply", "-f", switched.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("Warning: tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched"),
        "{stderr}"
    );

    // 1 MiB of values at most.
    let big = s.dir.path().join("big.bin");
    std::fs::write(&big, vec![b'x'; 1024 * 1024 + 1]).unwrap();
    let err = s.fails(&[
        "create",
        "secret",
        "generic",
        "big",
        &format!("--from-file={}", big.display()),
        "-n",
        "demo",
    ]);
    assert!(
        err.contains("data: Too long: must have at most 1048576 bytes"),
        "{err}"
    );
}

#[test]
fn kubectl_secrets_on_the_embedded_store() {
    kubectl_secret_flows(Backend::Embedded);
}

#[test]
fn kubectl_secrets_on_etcd() {
    kubectl_secret_flows(Backend::Etcd);
}

/// The Python client (`tests/python/secrets_client.py`): a Secret created with `string_data`, read
/// back with `data` only, listed by the `type` field selector, replaced and deleted.
#[test]
fn python_client_reads_secrets() {
    let s = TestServer::start_with(Backend::Embedded, &["secrets", "namespaces"], &[]);
    common::run_python_client("secrets_client.py", &s.url);
}

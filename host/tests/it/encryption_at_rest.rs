//! Encryption at rest (`--encryption-provider-config`, `host/src/app/encryption_config.rs`):
//! a fresh data dir generates a key and seals Secrets with it; etcd holds ciphertext only and
//! never the key; a replica given the same file reads what another wrote; a replica whose
//! configuration lacks the key answers kube's 500 for those objects and serves the rest; a
//! key rotated through an automatically reloaded configuration.

use crate::common;

use base64::Engine;
use common::server::{Backend, TestServer};
use std::time::Duration;
use wasm_apiserver_storage::testing::etcd::EtcdServer;

const PLUGINS: &[&str] = &["secrets", "configmaps", "namespaces"];

fn replica(etcd: &str, id: &str, extra: &[&str]) -> TestServer {
    let mut args = vec!["--etcd-servers", etcd, "--server-id", id];
    args.extend_from_slice(extra);
    TestServer::start_with(Backend::Embedded, PLUGINS, &args)
}

/// Every key and value under the root of `etcd`.
fn etcd_dump(endpoint: &str) -> Vec<(String, Vec<u8>)> {
    common::etcd_range(endpoint, "")
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn secrets_are_ciphertext_in_etcd_and_only_replicas_with_the_key_read_them() {
    let etcd = EtcdServer::start();
    let a = replica(&etcd.endpoint, "replica-a", &[]);
    let key_file = a.dir.path().join("data/encryption-config.yaml");
    assert!(
        key_file.exists(),
        "the first start writes the configuration"
    );
    a.ok(&["create", "namespace", "demo"]);
    a.ok(&[
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=password=s3cr3t-value",
        "-n",
        "demo",
    ]);
    a.ok(&[
        "create",
        "configmap",
        "plain",
        "--from-literal=k=visible-value",
        "-n",
        "demo",
    ]);

    // etcd read directly: the Secret is sealed under kube's prefix, the ConfigMap is not.
    let dump = etcd_dump(&etcd.endpoint);
    let value = |k: &str| {
        dump.iter()
            .find(|(key, _)| key == k)
            .unwrap_or_else(|| panic!("{k} not in etcd"))
            .1
            .clone()
    };
    let secret = value("/registry/secrets/demo/db");
    assert!(
        secret.starts_with(b"k8s:enc:secretbox:v1:key-"),
        "{}",
        String::from_utf8_lossy(&secret[..30.min(secret.len())])
    );
    let b64 = base64::engine::general_purpose::STANDARD;
    for plain in [
        &b"s3cr3t-value"[..],
        b64.encode("s3cr3t-value").as_bytes(),
        b"password",
    ] {
        assert!(!contains(&secret, plain), "plaintext in etcd");
    }
    assert!(contains(
        &value("/registry/configmaps/demo/plain"),
        b"visible-value"
    ));

    // The key is in the file and nowhere in etcd (neither its base64 nor its bytes).
    let config = std::fs::read_to_string(&key_file).unwrap();
    let secret_b64 = config
        .lines()
        .find_map(|l| l.trim().strip_prefix("secret: "))
        .expect("a key in the file")
        .to_string();
    let key = b64.decode(&secret_b64).unwrap();
    assert_eq!(key.len(), 32);
    for (k, v) in &dump {
        assert!(
            !contains(v, secret_b64.as_bytes()) && !contains(v, &key),
            "the key is stored at {k}"
        );
    }
    // Printed at start: the file and the fingerprint, never the key (nor logged).
    let log = a.stdout() + &a.log();
    assert!(
        log.contains("encryption at rest: secrets with secretbox/key-")
            && log.contains("generated now"),
        "{log}"
    );
    assert!(!log.contains(&secret_b64), "the key was printed");

    // A replica given the same file reads what the first wrote, and the first reads its writes.
    let b = replica(
        &etcd.endpoint,
        "replica-b",
        &["--encryption-provider-config", key_file.to_str().unwrap()],
    );
    let password = b.ok(&[
        "get",
        "secret",
        "db",
        "-n",
        "demo",
        "-o",
        "jsonpath={.data.password}",
    ]);
    assert_eq!(password, b64.encode("s3cr3t-value"));
    b.ok(&[
        "create",
        "secret",
        "generic",
        "from-b",
        "--from-literal=a=b",
        "-n",
        "demo",
    ]);
    a.ok(&["get", "secret", "from-b", "-n", "demo"]);

    // A replica whose fresh data dir would generate a key of its own: refused, saying why,
    // and the new key forgotten (it would split the Secrets between keys).
    let fresh = tempfile::tempdir().unwrap();
    let err = common::server::refused_start(
        fresh.path(),
        &["--etcd-servers".as_ref(), etcd.endpoint.as_ref()],
    );
    assert!(
        err.contains("the store already holds Secrets encrypted with a key this server does not have (k8s:enc:secretbox:v1:key-"),
        "{err}"
    );
    assert!(!fresh.path().join("data/encryption-config.yaml").exists());

    // A replica given a configuration without the key: kube's 500 for the objects it cannot
    // read, the list fails naming the key, everything else is served. Its watch cache cannot
    // list secrets, so it stays unready and reads go to etcd.
    let foreign = fresh.path().join("foreign.yaml");
    std::fs::write(&foreign, encryption_config(&[("other", 9)])).unwrap();
    let c = replica(
        &etcd.endpoint,
        "replica-c",
        &[
            "--watch-cache=true",
            "--encryption-provider-config",
            foreign.to_str().unwrap(),
        ],
    );
    let err = c.fails(&["get", "secret", "db", "-n", "demo"]);
    assert!(
        err.contains("Internal error occurred: no matching key was found for the provided Secretbox transformer"),
        "{err}"
    );
    let err = c.fails(&["get", "secrets", "-n", "demo"]);
    assert!(
        err.contains("unable to transform key \\\"/registry/secrets/demo/db\\\"")
            || err.contains("unable to transform key \"/registry/secrets/demo/db\""),
        "{err}"
    );
    let cm = c.ok(&[
        "get",
        "configmap",
        "plain",
        "-n",
        "demo",
        "-o",
        "jsonpath={.data.k}",
    ]);
    assert_eq!(cm, "visible-value");
    c.ok(&[
        "create",
        "secret",
        "generic",
        "mine",
        "--from-literal=a=b",
        "-n",
        "demo",
    ]);
    c.ok(&["get", "secret", "mine", "-n", "demo"]);
    assert!(
        c.log().contains("watch cache: list failed"),
        "the cache of secrets could not list"
    );
    // ...which the first replica, without c's key, cannot read.
    let err = a.fails(&["get", "secret", "mine", "-n", "demo"]);
    assert!(err.contains("no matching key was found"), "{err}");
}

/// On the embedded store: the store's files hold no plaintext of a Secret.
#[test]
fn the_embedded_store_holds_no_plaintext_secret() {
    let s = TestServer::start_with(Backend::Embedded, PLUGINS, &[]);
    s.ok(&["create", "namespace", "demo"]);
    s.ok(&[
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=password=s3cr3t-value",
        "-n",
        "demo",
    ]);
    s.ok(&[
        "create",
        "configmap",
        "plain",
        "--from-literal=k=visible-value",
        "-n",
        "demo",
    ]);
    let b64 = base64::engine::general_purpose::STANDARD.encode("s3cr3t-value");
    let mut all = Vec::new();
    for entry in std::fs::read_dir(s.dir.path().join("data/store")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            all.extend(std::fs::read(&p).unwrap());
        }
    }
    assert!(
        contains(&all, b"visible-value"),
        "the check reads the store"
    );
    assert!(!contains(&all, b"s3cr3t-value") && !contains(&all, b64.as_bytes()));
    assert!(contains(&all, b"k8s:enc:secretbox:v1:key-"));
}

/// Replace `path` in one step (a temporary file renamed over it), so the poller never reads a
/// half-written file.
fn write_atomically(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn encryption_config(keys: &[(&str, u8)]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    let keys: Vec<String> = keys
        .iter()
        .map(|(name, byte)| format!("{{name: {name}, secret: {}}}", b64.encode([*byte; 32])))
        .collect();
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - secretbox: {{keys: [{}]}}\n",
        keys.join(", ")
    )
}

/// A key rotation by hand with `--encryption-provider-config-automatic-reload`: the new key
/// added second, then made first (new writes use it, old objects stay readable), every Secret
/// rewritten by an unchanged `kubectl replace` (read with the old key, so stale, so written
/// again), the old key dropped; a file that does not validate leaves the last good one in
/// use. etcd read directly after each step.
#[test]
fn a_reloaded_configuration_rotates_the_key_without_a_restart() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("encryption.yaml");
    std::fs::write(&config, encryption_config(&[("old", 1)])).unwrap();
    let s = replica(
        &etcd.endpoint,
        "replica-a",
        &[
            "--encryption-provider-config",
            config.to_str().unwrap(),
            "--encryption-provider-config-automatic-reload",
        ],
    );
    for i in 0..20 {
        s.ok(&[
            "create",
            "secret",
            "generic",
            &format!("s{i}"),
            &format!("--from-literal=v={i}"),
        ]);
    }
    let prefixes = || -> Vec<String> {
        etcd_dump(&etcd.endpoint)
            .into_iter()
            .filter(|(k, _)| k.starts_with("/registry/secrets/default/"))
            .map(|(_, v)| String::from_utf8_lossy(&v[..26.min(v.len())]).into_owned())
            .collect()
    };
    assert!(prefixes()
        .iter()
        .all(|p| p.starts_with("k8s:enc:secretbox:v1:old:")));

    let reloads = |n: usize| {
        s.eventually(
            Duration::from_secs(10),
            "the configuration reloaded",
            || {
                s.log()
                    .matches("encryption provider config reloaded")
                    .count()
                    >= n
            },
        )
    };
    // The new key first: new writes use it; the old key still reads.
    write_atomically(&config, &encryption_config(&[("new", 2), ("old", 1)]));
    reloads(1);
    s.ok(&["create", "secret", "generic", "fresh", "--from-literal=v=x"]);
    assert_eq!(
        s.ok(&["get", "secret", "s3", "-o", "jsonpath={.data.v}"]),
        base64::engine::general_purpose::STANDARD.encode("3")
    );
    // Every Secret rewritten: unchanged, but read with a key that is not the first.
    let all = s.ok(&["get", "secrets", "-o", "json"]);
    let list = s.file("all.json", &all);
    // `--validate=false`: kubectl validates a `List` client-side against `/openapi/v2`, which
    // this server does not serve (it serves `/openapi/v3`); single objects validate fine.
    s.ok(&["replace", "--validate=false", "-f", list.to_str().unwrap()]);
    let now = prefixes();
    assert_eq!(now.len(), 21);
    assert!(
        now.iter()
            .all(|p| p.starts_with("k8s:enc:secretbox:v1:new:")),
        "{now:?}"
    );
    // The old key dropped: everything still reads.
    write_atomically(&config, &encryption_config(&[("new", 2)]));
    reloads(2);
    let names = s.ok(&["get", "secrets", "-o", "name"]);
    assert_eq!(names.lines().count(), 21, "{names}");
    // A file that does not validate: logged, the last good configuration kept.
    let refused = |s: &TestServer| {
        s.log()
            .matches("encryption provider config not reloaded")
            .count()
    };
    let before = refused(&s);
    write_atomically(
        &config,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: []\n",
    );
    s.eventually(Duration::from_secs(10), "the bad file noticed", || {
        refused(&s) > before
    });
    s.ok(&["create", "secret", "generic", "after", "--from-literal=v=y"]);
    assert!(prefixes()
        .iter()
        .all(|p| p.starts_with("k8s:enc:secretbox:v1:new:")));
}

//! KMS v2 (`--encryption-provider-config` with a `kms` provider, `apiVersion: v2`;
//! `host/storage/src/value/kmsv2/`) against the test plugin (`common/kms_plugin.rs`) on a
//! unix socket:
//! - Secrets are stored as kube's `EncryptedObject` after `k8s:enc:kms:v2:<name>:`, no
//!   plaintext in etcd, the plugin's annotations kept; one `Encrypt` per seed, not per object;
//! - a restarted server (a new seed) reads what the last one wrote, asking the plugin to
//!   decrypt the old seed once;
//! - an unhealthy plugin fails `/readyz` with kube's `kms-providers` check and message;
//! - the plugin's new key id makes a new seed; old objects are stale, and a
//!   StorageVersionMigration re-encrypts them under it.

use crate::common;

use common::http::{client, send};
use common::kms_plugin::KmsPlugin;
use common::server::{Backend, TestServer};
use prost::Message;
use std::time::Duration;
use wasm_apiserver_storage::testing::etcd::EtcdServer;
use wasm_apiserver_storage::value::kmsv2::api::EncryptedObject;

const PREFIX: &str = "k8s:enc:kms:v2:test-kms:";

fn start(etcd: &str, config: &std::path::Path) -> TestServer {
    TestServer::start_with(
        Backend::Embedded,
        &["secrets", "namespaces"],
        &[
            "--etcd-servers",
            etcd,
            "--encryption-provider-config",
            config.to_str().unwrap(),
        ],
    )
}

/// Every Secret in etcd: key and stored bytes.
fn stored(endpoint: &str) -> Vec<(String, Vec<u8>)> {
    common::etcd_range(endpoint, "/registry/secrets/")
}

fn envelope(value: &[u8]) -> EncryptedObject {
    let body = value.strip_prefix(PREFIX.as_bytes()).unwrap_or_else(|| {
        panic!(
            "{:?}",
            String::from_utf8_lossy(&value[..40.min(value.len())])
        )
    });
    EncryptedObject::decode(body).unwrap()
}

fn readyz(s: &TestServer) -> (u16, String) {
    let (code, body) = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(send(client().get(format!("{}/readyz", s.url))));
    (
        code,
        body.as_str()
            .map(String::from)
            .unwrap_or_else(|| body.to_string()),
    )
}

#[test]
fn secrets_are_sealed_through_the_kms_plugin() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().unwrap();
    let plugin = KmsPlugin::start(dir.path());
    let config = dir.path().join("encryption.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - kms: {{apiVersion: v2, name: test-kms, endpoint: '{}', timeout: 2s}}\n  - identity: {{}}\n",
            plugin.endpoint()
        ),
    )
    .unwrap();
    let mut s = start(&etcd.endpoint, &config);
    s.create_default_namespace();
    for i in 0..5 {
        s.ok(&[
            "create",
            "secret",
            "generic",
            &format!("s{i}"),
            &format!("--from-literal=v=kms-value-{i}"),
        ]);
    }
    let first = stored(&etcd.endpoint);
    assert_eq!(first.len(), 5);
    for (_, v) in &first {
        // Neither the value nor its base64 (what a Secret stores).
        assert!(
            !v.windows(12).any(|w| w == b"a21zLXZhbHVl")
                && !v.windows(9).any(|w| w == b"kms-value"),
            "no plaintext"
        );
        let o = envelope(v);
        assert_eq!(o.key_id, "key-1");
        assert_eq!(o.encrypted_dek_source_type, 1, "HKDF seed");
        assert_eq!(o.annotations["kms.example.com"], b"test");
    }
    // One seed for all five: the same encrypted DEK source.
    let source = envelope(&first[0].1).encrypted_dek_source;
    assert!(first
        .iter()
        .all(|(_, v)| envelope(v).encrypted_dek_source == source));
    assert_eq!(readyz(&s).0, 200);

    // A new server process: a new seed; the old one's objects need one Decrypt.
    s.kill();
    let before = plugin.decrypts();
    let s = start(&etcd.endpoint, &config);
    assert_eq!(
        s.ok(&["get", "secret", "s3", "-o", "jsonpath={.data.v}"]),
        "a21zLXZhbHVlLTM="
    );
    s.ok(&["get", "secrets"]);
    assert_eq!(
        plugin.decrypts() - before,
        1,
        "one Decrypt for the old seed, then cached"
    );
    s.ok(&["create", "secret", "generic", "fresh", "--from-literal=v=x"]);
    let fresh = stored(&etcd.endpoint)
        .into_iter()
        .find(|(k, _)| k.ends_with("/fresh"))
        .unwrap();
    assert_ne!(
        envelope(&fresh.1).encrypted_dek_source,
        source,
        "a new seed"
    );

    // Unhealthy: /readyz fails with kube's check and message (once the last good answer,
    // kept 20 s, is old), and recovers.
    plugin.set_healthz("disk full");
    s.eventually(Duration::from_secs(40), "/readyz failing", || {
        let (code, body) = readyz(&s);
        // kube withholds the reason from /readyz and logs it.
        code == 500 && body.contains("[-]kms-providers failed: reason withheld")
    });
    assert!(s.log().contains(
        "kmsv2 Provider test-kms is not healthy, error: got unexpected healthz status: disk full"
    ));
    // Writes go on with the current seed (its window is 3 minutes past the last good probe).
    s.ok(&[
        "create",
        "secret",
        "generic",
        "while-down",
        "--from-literal=v=y",
    ]);
    plugin.set_healthz("ok");
    s.eventually(Duration::from_secs(20), "/readyz healthy", || {
        readyz(&s).0 == 200
    });

    // The plugin rotates its key: the next probe makes a new seed under key-2; a
    // StorageVersionMigration re-encrypts the rest.
    plugin.rotate("key-2");
    s.eventually(Duration::from_secs(40), "a seed under key-2", || {
        readyz(&s);
        s.ok(&[
            "create",
            "secret",
            "generic",
            &format!("probe-{}", uuid::Uuid::new_v4()),
            "--from-literal=v=z",
        ]);
        stored(&etcd.endpoint)
            .iter()
            .any(|(_, v)| envelope(v).key_id == "key-2")
    });
    let svm = s.file(
        "svm.yaml",
        "apiVersion: storagemigration.k8s.io/v1alpha1\nkind: StorageVersionMigration\nmetadata: {name: kms-rotation}\nspec: {resource: {version: v1, resource: secrets}}\n",
    );
    s.ok(&["create", "-f", svm.to_str().unwrap()]);
    s.eventually(Duration::from_secs(30), "the migration", || {
        s.ok(&[
            "get",
            "storageversionmigration",
            "kms-rotation",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Succeeded\")].status}",
        ]) == "True"
    });
    let all = stored(&etcd.endpoint);
    assert!(
        all.iter().all(|(_, v)| envelope(v).key_id == "key-2"),
        "every Secret under key-2"
    );
    assert_eq!(
        s.ok(&["get", "secret", "s0", "-o", "jsonpath={.data.v}"]),
        "a21zLXZhbHVlLTA="
    );
}

//! Key rotation in one call (`wasm-apiserver encryption rotate`,
//! `host/src/app/encryption_rotate.rs`) over the identity leases, the reload check and the
//! storage version migrator:
//! - two replicas over one etcd reading one file, under a steady load of creates and reads
//!   on both: the command adds, switches and drops the key; no request fails, etcd holds the
//!   new key's prefix only, both replicas read every Secret, the migration is `Succeeded`;
//! - a configuration that drops a key a Secret still uses is refused (the reason on the
//!   replica's identity lease and in its log), the Secret stays readable, and the command
//!   refuses to start while the file differs from what the replica loaded; with the file put
//!   back, the command rotates on the embedded store too.

use crate::common;

use base64::Engine;
use common::http::{client, send};
use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver::app::encryption_reload::encryption_prefix;
use wasm_apiserver_storage::testing::etcd::EtcdServer;

const PLUGINS: &[&str] = &["secrets", "configmaps", "namespaces", "leases"];

fn config(keys: &[(&str, u8)]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    let keys: Vec<String> = keys
        .iter()
        .map(|(name, byte)| format!("{{name: {name}, secret: {}}}", b64.encode([*byte; 32])))
        .collect();
    format!(
        "# the test's keys\napiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - secretbox: {{keys: [{}]}}\n  - identity: {{}}\n",
        keys.join(", ")
    )
}

fn reloading(file: &std::path::Path) -> Vec<String> {
    vec![
        "--encryption-provider-config".into(),
        file.to_str().unwrap().into(),
        "--encryption-provider-config-automatic-reload".into(),
    ]
}

fn start(backend: Backend, extra: &[String]) -> TestServer {
    let args: Vec<&str> = extra.iter().map(String::as_str).collect();
    TestServer::start_with(backend, PLUGINS, &args)
}

/// The identity leases of the replicas, as the command reads them.
fn identity_leases(s: &TestServer) -> Vec<Value> {
    let out = s.ok(&[
        "get",
        "leases",
        "-n",
        "kube-system",
        "-l",
        "apiserver.kubernetes.io/identity=kube-apiserver",
        "-o",
        "json",
    ]);
    serde_json::from_str::<Value>(&out).unwrap()["items"]
        .as_array()
        .unwrap()
        .clone()
}

fn rotate(s: &TestServer, file: &std::path::Path) -> (bool, String) {
    common::cli([
        "encryption",
        "rotate",
        "--encryption-provider-config",
        file.to_str().unwrap(),
        "--kubeconfig",
        s.kubeconfig().to_str().unwrap(),
        "--timeout",
        "60s",
    ])
}

/// Create `n` Secrets `s-<i>` in `default` through the plain port, 16 at once.
async fn create_secrets(url: &str, n: usize) {
    use futures::StreamExt;
    let http = client();
    let codes: Vec<u16> = futures::stream::iter(0..n)
        .map(|i| {
            let req = http
                .post(format!("{url}/api/v1/namespaces/default/secrets"))
                .json(&json!({"metadata": {"name": format!("s-{i}")}, "stringData": {"v": format!("value-{i}")}}));
            async move { send(req).await.0 }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(codes.iter().all(|c| *c == 201), "{codes:?}");
}

/// The stored prefix (`k8s:enc:secretbox:v1:<key>:`) of every Secret in etcd.
fn etcd_prefixes(endpoint: &str) -> Vec<String> {
    common::etcd_range(endpoint, "/registry/secrets/")
        .iter()
        .map(|(_, value)| encryption_prefix(value))
        .collect()
}

/// The write key of the file: the first key's name.
fn write_key(file: &std::path::Path) -> String {
    let y: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let keys = y["resources"][0]["providers"][0]["secretbox"]["keys"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(keys.len(), 1, "one key left: {keys:?}");
    keys[0]["name"].as_str().unwrap().to_string()
}

#[test]
fn one_call_rotates_the_key_on_every_replica_under_load() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("encryption.yaml");
    std::fs::write(&file, config(&[("old", 1)])).unwrap();
    let mut extra = reloading(&file);
    extra.extend(["--etcd-servers".to_string(), etcd.endpoint.clone()]);
    let a = start(
        Backend::Embedded,
        &[extra.clone(), vec!["--server-id".into(), "a".into()]].concat(),
    );
    let b = start(
        Backend::Embedded,
        &[extra, vec!["--server-id".into(), "b".into()]].concat(),
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(common::http::default_namespace(&a.url));
    rt.block_on(create_secrets(&a.url, 1100));
    a.eventually(Duration::from_secs(30), "both identity leases", || {
        identity_leases(&a).len() == 2
    });

    // Two clients, for as long as the rotation runs: each creates a Secret on one replica,
    // reads the other client's last one — written on the other replica — and an old one, and
    // lists every 20th round; alternating replicas.
    let stop = Arc::new(AtomicBool::new(false));
    let (done, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let load = {
        let (urls, stop, done, failed) = (
            [a.url.clone(), b.url.clone()],
            stop.clone(),
            done.clone(),
            failed.clone(),
        );
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let http = client();
                let round = |c: usize, i: usize| {
                    let (http, urls, done, failed) = (&http, &urls, &done, &failed);
                    async move {
                        let secrets = |r: usize| format!("{}/api/v1/namespaces/default/secrets", urls[r % 2]);
                        let mut calls = vec![
                            (http.post(secrets(i + c)).json(&json!({"metadata": {"name": format!("load-{c}-{i}")}, "stringData": {"v": "x"}})), 201),
                            (http.get(format!("{}/s-{}", secrets(i), (i * 7 + c) % 1100)), 200),
                        ];
                        if i > 0 {
                            // The other client's previous Secret, from the replica that did not write it.
                            calls.push((http.get(format!("{}/load-{}-{}", secrets(i + c + 1), 1 - c, i - 1)), 200));
                        }
                        if i.is_multiple_of(20) {
                            calls.push((http.get(format!("{}?limit=500", secrets(i))), 200));
                        }
                        for (req, want) in calls {
                            let code = send(req).await.0;
                            done.fetch_add(1, Ordering::Relaxed);
                            if code != want {
                                failed.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                };
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    futures::join!(round(0, i), round(1, i));
                    i += 1;
                }
                2 * i
            })
        })
    };
    let (ok, out) = rotate(&a, &file);
    stop.store(true, Ordering::Relaxed);
    let created = load.join().unwrap();
    assert!(ok, "{out}\n{}", a.log());
    for step in [
        "2 replica(s)",
        "1/4",
        "2/4",
        "rotate-secrets-",
        "Succeeded",
        "3/4",
        "4/4",
    ] {
        assert!(out.contains(step), "{step}: {out}");
    }
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "of {}",
        done.load(Ordering::Relaxed)
    );
    assert!(created > 10, "the load ran: {created}");

    // etcd: the new key only; both replicas read every Secret.
    let key = write_key(&file);
    assert_ne!(key, "old");
    let want = format!("k8s:enc:secretbox:v1:{key}:");
    let prefixes = etcd_prefixes(&etcd.endpoint);
    assert_eq!(prefixes.len(), 1100 + created);
    assert!(
        prefixes.iter().all(|p| *p == want),
        "{:?}",
        prefixes.iter().find(|p| **p != want)
    );
    for s in [&a, &b] {
        let names = s.ok(&["get", "secrets", "-o", "name"]);
        assert_eq!(names.lines().count(), 1100 + created);
        assert_eq!(
            s.ok(&["get", "secret", "s-7", "-o", "jsonpath={.data.v}"]),
            base64::engine::general_purpose::STANDARD.encode("value-7")
        );
    }
    let svm = a.ok(&["get", "storageversionmigrations", "-o", "json"]);
    let svm: Value = serde_json::from_str(&svm).unwrap();
    let conditions = &svm["items"][0]["status"]["conditions"];
    assert!(
        conditions
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Succeeded" && c["status"] == "True"),
        "{svm}"
    );
    assert_eq!(svm["items"][0]["spec"]["resource"]["resource"], "secrets");
}

#[test]
fn a_key_still_in_use_is_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("encryption.yaml");
    std::fs::write(&file, config(&[("old", 1)])).unwrap();
    let s = start(Backend::Embedded, &reloading(&file));
    s.create_default_namespace();
    s.ok(&[
        "create",
        "secret",
        "generic",
        "kept",
        "--from-literal=v=still-here",
    ]);
    s.eventually(Duration::from_secs(30), "the identity lease", || {
        identity_leases(&s).len() == 1
    });
    // kube's transformation metrics: the provider's prefix and the key's, both ways.
    let metrics = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(send(client().get(format!("{}/metrics", s.url))))
        .1;
    let metrics = metrics.as_str().unwrap_or_default();
    for line in [
        r#"apiserver_storage_transformation_operations_total{status="OK",transformation_type="to_storage",transformer_prefix="k8s:enc:secretbox:v1:"}"#,
        r#"apiserver_storage_transformation_operations_total{status="OK",transformation_type="to_storage",transformer_prefix="old:"}"#,
        r#"apiserver_storage_transformation_operations_total{status="OK",transformation_type="from_storage",transformer_prefix="k8s:enc:secretbox:v1:"}"#,
        r#"apiserver_storage_transformation_duration_seconds_bucket{transformation_type="to_storage",transformer_prefix="old:",le="0.000005"}"#,
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }

    let put = |text: &str| {
        std::fs::write(dir.path().join("next.yaml"), text).unwrap();
        std::fs::rename(dir.path().join("next.yaml"), &file).unwrap();
    };
    let reload_error = || -> Option<String> {
        identity_leases(&s)[0]["metadata"]["annotations"]
            ["encryption.wasm-apiserver.dev/reload-error"]
            .as_str()
            .map(String::from)
    };
    // A new key alone while the old one writes: refused before anything is written with it.
    put(&config(&[("new", 2)]));
    s.eventually(Duration::from_secs(15), "the refusal on the lease", || {
        reload_error().is_some_and(|e| {
            e.contains("secrets: the new configuration cannot read what the one in use writes (k8s:enc:secretbox:v1:old:)")
        })
    });
    // Beside the old key, it loads and writes.
    put(&config(&[("new", 2), ("old", 1)]));
    s.eventually(Duration::from_secs(15), "the reload", || {
        reload_error().is_none()
    });
    // The old key dropped while `kept` still uses it: refused, naming it.
    put(&config(&[("new", 2)]));
    s.eventually(Duration::from_secs(15), "the refusal naming the Secret", || {
        reload_error().is_some_and(|e| {
            e.contains("/registry/secrets/default/kept is stored with k8s:enc:secretbox:v1:old:, which the new configuration cannot read")
        })
    });
    assert!(s.log().contains("encryption provider config not reloaded"));
    assert_eq!(
        s.ok(&["get", "secret", "kept", "-o", "jsonpath={.data.v}"]),
        base64::engine::general_purpose::STANDARD.encode("still-here")
    );
    // The command will not start from a file the replica has not loaded.
    let (ok, out) = rotate(&s, &file);
    assert!(
        !ok && out.contains("has loaded another encryption configuration"),
        "{out}"
    );

    // kube's validation of a StorageVersionMigration, through kubectl.
    let bad = s.file(
        "bad-svm.yaml",
        "apiVersion: storagemigration.k8s.io/v1alpha1\nkind: StorageVersionMigration\nmetadata: {name: bad}\nspec: {resource: {resource: secrets}}\n",
    );
    let refused = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    assert!(
        refused.contains("spec.resource.version: Required value: version is required"),
        "{refused}"
    );

    // The file put back as the replica has it: the rotation runs from there.
    let loaded = config(&[("new", 2), ("old", 1)]);
    put(&loaded);
    s.eventually(Duration::from_secs(15), "the refusal cleared", || {
        reload_error().is_none()
    });
    let (ok, out) = rotate(&s, &file);
    assert!(ok, "{out}\n{}", s.log());
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .starts_with("# the test's keys\n"),
        "the leading comment is kept"
    );
    let key = write_key(&file);
    assert_ne!(key, "old");
    assert_eq!(
        s.ok(&["get", "secret", "kept", "-o", "jsonpath={.data.v}"]),
        base64::engine::general_purpose::STANDARD.encode("still-here")
    );
    // The embedded store's files hold the new key's prefix (old revisions keep the old one
    // until compaction, so its absence is not checked here; etcd's is, above).
    let data = std::fs::read_dir(s.dir.path().join("data/store"))
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
        .collect::<Vec<_>>()
        .concat();
    let has = |needle: &[u8]| data.windows(needle.len()).any(|w| w == needle);
    assert!(has(format!("k8s:enc:secretbox:v1:{key}:").as_bytes()));
}

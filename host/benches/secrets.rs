//! What encryption at rest costs (issue 34), on the real server binary (embedded store, plain
//! HTTP on loopback, `--authorization-mode=AlwaysAllow`):
//!
//! 1. The transformers alone (`wasm_apiserver_storage::value`): µs to seal and to open one
//!    Secret as stored (~1.3 KB of JSON), for identity, aesgcm, aescbc, secretbox and KMS
//!    v2's per-write derived key, median of 9 batches of 2,000.
//! 2. Secrets through the server: server CPU (utime + stime) per create of 1,000 Secrets
//!    (1 KiB of data each, 16 in flight), per GET of each, and per LIST of the 1,000 (40
//!    after one to warm up), for a
//!    server storing Secrets as they are (an `identity` configuration), one sealing them
//!    with `aesgcm` and one with `secretbox` (the generated default); three alternated
//!    rounds, fresh servers each round; ratios against identity.
//!
//! 3. Re-encryption after a key rotation: 5,000 Secrets created (16 in flight; the create
//!    rate is the baseline), the configuration reloaded with a new write key (seen in the
//!    transformation metrics), then one `StorageVersionMigration` of `secrets` timed from its
//!    create to `Succeeded` (polled every 20 ms), every Secret checked re-sealed with the new
//!    key (the metrics again): objects rewritten per second, on the embedded store and on etcd.
//!
//! 4. Token authentication: server CPU per GET of one Secret over TLS with RBAC, the admin's
//!    client certificate against a service-account token (ES256 verified, the ServiceAccount
//!    looked up) bound to a Role, and against an OIDC ID token of an `--authentication-config`
//!    issuer on loopback (ES256 verified by its JWKS, one CEL claim validation rule, email and
//!    groups mapped; its group bound to the Role); 5,000 GETs 16 in flight, three alternated
//!    rounds on one server after a warm-up.
//!
//! Run: `cargo bench -p wasm-apiserver --bench secrets` (after `bash plugins/build.sh`).
//! `SECTIONS=1`, `2`, `3` or `4` runs one.

mod common;
#[path = "../tests/it/common/conversion_webhook.rs"]
#[allow(dead_code)]
mod conversion_webhook;
#[path = "../tests/it/common/oidc_issuer.rs"]
mod oidc_issuer;

use common::{measure, proc_cpu_us, Server};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use wasm_apiserver_storage::store::{IdentityTransformer, ValueTransformer};
use wasm_apiserver_storage::value::{
    AesCbcTransformer, AesGcmTransformer, HkdfExtendedNonceGcm, SecretboxTransformer,
};

const N: usize = 1000;
const IN_FLIGHT: usize = 16;
const KEY32: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";

fn secret(i: usize) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": format!("s-{i}"), "namespace": "default"},
           "type": "Opaque",
           "stringData": {"value": "x".repeat(1024)}})
}

fn transformers() {
    let stored = serde_json::to_vec(&secret(1)).unwrap();
    let key = "/registry/secrets/default/s-1";
    println!(
        "1. one Secret ({} bytes) sealed and opened, µs per object (median of 7 × 2,000)",
        stored.len()
    );
    let cases: Vec<(&str, Arc<dyn ValueTransformer>)> = vec![
        ("identity", Arc::new(IdentityTransformer)),
        (
            "aesgcm",
            Arc::new(AesGcmTransformer::new(&[1; 32]).unwrap()),
        ),
        (
            "aescbc",
            Arc::new(AesCbcTransformer::new(&[1; 32]).unwrap()),
        ),
        (
            "secretbox",
            Arc::new(SecretboxTransformer::new(&[1; 32]).unwrap()),
        ),
        // KMS v2's data encryption: a key derived per write from the seed (the envelope adds
        // a protobuf wrapper; the plugin is called once per seed, not per object).
        (
            "kms v2 seed",
            Arc::new(HkdfExtendedNonceGcm::new(&[1; 32]).unwrap()),
        ),
    ];
    for (name, t) in cases {
        let sealed = t.to_storage(stored.clone(), key).unwrap();
        let seal = measure(2000, || {
            std::hint::black_box(t.to_storage(stored.clone(), key).unwrap());
        });
        let open = measure(2000, || {
            std::hint::black_box(t.from_storage(&sealed, key).unwrap());
        });
        // `measure` gives ns per call.
        println!(
            "   {name:<12} seal {:>6.2} µs   open {:>6.2} µs",
            seal / 1000.0,
            open / 1000.0
        );
    }
}

fn config(provider: &str) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - {provider}\n"
    )
}

fn server(provider: &str) -> Server {
    let (dir, plugins) = Server::dir_with_plugins(&["secrets", "namespaces"]);
    let file = dir.path().join("encryption.yaml");
    std::fs::write(&file, config(provider)).unwrap();
    Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--authorization-mode=AlwaysAllow")
            .arg("--encryption-provider-config")
            .arg(&file);
    })
}

/// Server CPU µs per create, per GET, per LIST (of all `N`).
async fn per_operation(http: &reqwest::Client, s: &Server) -> (f64, f64, f64) {
    let url = format!("{}/api/v1/namespaces/default/secrets", s.url);
    let pid = s.child.id();
    // The default namespace may take a moment to be created by the controller.
    for _ in 0..100 {
        let r = http
            .post(&url)
            .json(&secret(usize::MAX))
            .send()
            .await
            .unwrap();
        if r.status() == 201 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let before = proc_cpu_us(pid);
    let codes: Vec<u16> = futures::stream::iter(0..N)
        .map(|i| {
            let req = http.post(&url).json(&secret(i));
            async move { req.send().await.map(|r| r.status().as_u16()).unwrap_or(0) }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    assert!(codes.iter().all(|c| *c == 201), "a create failed");
    let create = (proc_cpu_us(pid) - before) / N as f64;
    let before = proc_cpu_us(pid);
    let codes: Vec<u16> = futures::stream::iter(0..N)
        .map(|i| {
            let req = http.get(format!("{url}/s-{i}"));
            async move { req.send().await.map(|r| r.status().as_u16()).unwrap_or(0) }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    assert!(codes.iter().all(|c| *c == 200), "a get failed");
    let get = (proc_cpu_us(pid) - before) / N as f64;
    // One LIST first: the first of a process pays for its warm-up, not for the transformer.
    http.get(&url).send().await.unwrap().bytes().await.unwrap();
    let before = proc_cpu_us(pid);
    let lists = 40;
    for _ in 0..lists {
        let r = http.get(&url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
    }
    let list = (proc_cpu_us(pid) - before) / lists as f64;
    (create, get, list)
}

async fn through_the_server(http: &reqwest::Client) {
    println!(
        "2. server CPU per Secret create, GET and LIST of {N} (µs; 1 KiB of data each, {IN_FLIGHT} in flight)"
    );
    let providers = [
        ("identity", "identity: {}".to_string()),
        (
            "aesgcm",
            format!("aesgcm: {{keys: [{{name: k1, secret: {KEY32}}}]}}"),
        ),
        (
            "secretbox",
            format!("secretbox: {{keys: [{{name: k1, secret: {KEY32}}}]}}"),
        ),
    ];
    let mut sums = vec![(0.0, 0.0, 0.0); providers.len()];
    for round in 1..=3 {
        for (i, (name, p)) in providers.iter().enumerate() {
            let s = server(p);
            let (c, g, l) = per_operation(http, &s).await;
            println!("   round {round} {name:<10} create {c:>7.0}   get {g:>6.0}   list {l:>8.0}");
            sums[i].0 += c;
            sums[i].1 += g;
            sums[i].2 += l;
        }
    }
    let base = sums[0];
    for (i, (name, _)) in providers.iter().enumerate() {
        let (c, g, l) = sums[i];
        println!(
            "   mean {name:<10} create {:>7.0} ({:.2}×)   get {:>6.0} ({:.2}×)   list {:>8.0} ({:.2}×)",
            c / 3.0,
            c / base.0,
            g / 3.0,
            g / base.1,
            l / 3.0,
            l / base.2
        );
    }
}

const ROTATED: usize = 5000;

fn keys(names: &[(&str, u8)]) -> String {
    use base64::Engine;
    let keys: Vec<String> = names
        .iter()
        .map(|(n, b)| {
            format!(
                "{{name: {n}, secret: {}}}",
                base64::engine::general_purpose::STANDARD.encode([*b; 32])
            )
        })
        .collect();
    config(&format!("secretbox: {{keys: [{}]}}", keys.join(", ")))
}

/// Creates per second and rewrites per second of [`ROTATED`] Secrets on one server.
async fn rotation(http: &reqwest::Client, etcd: Option<&str>, round: usize) -> (f64, f64) {
    let (dir, plugins) = Server::dir_with_plugins(&["secrets", "namespaces"]);
    let file = dir.path().join("encryption.yaml");
    std::fs::write(&file, keys(&[("old", 1)])).unwrap();
    let s = Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--authorization-mode=AlwaysAllow")
            .arg("--encryption-provider-config")
            .arg(&file)
            .arg("--encryption-provider-config-automatic-reload");
        if let Some(e) = etcd {
            // One etcd for every round, each under its own prefix.
            cmd.arg("--etcd-servers")
                .arg(e)
                .arg("--etcd-prefix")
                .arg(format!("/round-{round}"));
        }
    });
    let url = format!("{}/api/v1/namespaces/default/secrets", s.url);
    for _ in 0..100 {
        let r = http.get(&url).send().await.unwrap();
        if r.status() == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let started = std::time::Instant::now();
    let codes: Vec<u16> = futures::stream::iter(0..ROTATED)
        .map(|i| {
            let req = http.post(&url).json(&secret(i));
            async move { req.send().await.map(|r| r.status().as_u16()).unwrap_or(0) }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let creates = ROTATED as f64 / started.elapsed().as_secs_f64();
    assert!(codes.iter().all(|c| *c == 201), "a create failed");
    std::fs::write(&file, keys(&[("new", 2), ("old", 1)])).unwrap();
    // Reloaded (within a second): a Secret created now is sealed with the new key, as the
    // transformation metrics show.
    let sealed_new = || async {
        let text = http
            .get(format!("{}/metrics", s.url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find(|l| {
                l.starts_with("apiserver_storage_transformation_operations_total{")
                    && l.contains(r#"transformation_type="to_storage""#)
                    && l.contains(r#"transformer_prefix="new:""#)
                    && l.contains(r#"status="OK""#)
            })
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or(0.0) as usize
    };
    let mut probe = 0;
    while sealed_new().await == 0 {
        probe += 1;
        let r = http
            .post(&url)
            .json(&secret(ROTATED + probe))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let before = sealed_new().await;
    let svms = format!(
        "{}/apis/storagemigration.k8s.io/v1alpha1/storageversionmigrations",
        s.url
    );
    let started = std::time::Instant::now();
    let r = http
        .post(&svms)
        .json(&json!({"metadata": {"name": "rotate"},
                      "spec": {"resource": {"version": "v1", "resource": "secrets"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    loop {
        let o: serde_json::Value = http
            .get(format!("{svms}/rotate"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let done = |ty: &str| {
            o["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == ty && c["status"] == "True")
        };
        assert!(!done("Failed"), "{o}");
        if done("Succeeded") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    // Every Secret written before the reload was sealed again, with the new key.
    let rewritten = sealed_new().await - before;
    assert!(rewritten >= ROTATED, "{rewritten} of {ROTATED} rewritten");
    (creates, ROTATED as f64 / elapsed.as_secs_f64())
}

async fn rotation_rates(http: &reqwest::Client) {
    println!("3. re-encryption of {ROTATED} Secrets (1 KiB of data each) after a key rotation");
    let etcd = wasm_apiserver_storage::testing::etcd::EtcdServer::start();
    for (store, endpoint) in [("embedded", None), ("etcd", Some(etcd.endpoint.as_str()))] {
        for round in 1..=2 {
            let (c, r) = rotation(http, endpoint, round).await;
            println!(
                "   {store:<8} round {round}: creates {c:>6.0}/s   rewrites {r:>6.0}/s   ({:.2}× the create rate)",
                r / c
            );
        }
    }
}

/// A client of the secure port trusting the server's CA, with the admin's certificate when
/// `admin`.
fn tls_client(s: &Server, admin: bool) -> reqwest::Client {
    let pki = s.dir().join("data/pki");
    let ca = reqwest::Certificate::from_pem(&std::fs::read(pki.join("ca.crt")).unwrap()).unwrap();
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca);
    if admin {
        let pem = [
            std::fs::read(pki.join("admin.crt")).unwrap(),
            std::fs::read(pki.join("admin.key")).unwrap(),
        ]
        .concat();
        b = b.identity(reqwest::Identity::from_pem(&pem).unwrap());
    }
    b.build().unwrap()
}

/// GETs per round of section 4: the process CPU clock ticks every 10 ms, so 5,000 requests
/// resolve 2 µs each.
const TOKEN_N: usize = 5000;

/// Server CPU µs per GET of one Secret over TLS with RBAC, [`TOKEN_N`] requests 16 in flight.
async fn gets(http: &reqwest::Client, s: &Server, bearer: Option<&str>) -> f64 {
    let url = format!("{}/api/v1/namespaces/default/secrets/s", s.secure_url);
    let pid = s.child.id();
    let before = proc_cpu_us(pid);
    let codes: Vec<u16> = futures::stream::iter(0..TOKEN_N)
        .map(|_| {
            let mut req = http.get(&url);
            if let Some(t) = bearer {
                req = req.bearer_auth(t);
            }
            async move {
                // The body is read: a response dropped unread resets its HTTP/2 stream, and
                // h2's client ends its own connection after 1,024 such resets (GOAWAY
                // `too_many_internal_resets`, initiator Library — the client, not the server).
                match req.send().await {
                    Ok(r) => {
                        let code = r.status().as_u16();
                        match r.bytes().await {
                            Ok(_) => code,
                            Err(_) => 0,
                        }
                    }
                    Err(e) => {
                        eprintln!("GET: {e:?}");
                        0
                    }
                }
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    assert!(
        codes.iter().all(|c| *c == 200),
        "a GET failed: {:?}",
        codes.iter().find(|c| **c != 200)
    );
    (proc_cpu_us(pid) - before) / TOKEN_N as f64
}

async fn token_authentication() {
    println!(
        "4. server CPU per GET of a Secret over TLS with RBAC (µs; {TOKEN_N} GETs, {IN_FLIGHT} in flight): the admin's client certificate against a service-account token and an OIDC ID token"
    );
    let (dir, plugins) = Server::dir_with_plugins(&[
        "serviceaccounts",
        "secrets",
        "namespaces",
        "roles",
        "clusterroles",
        "rolebindings",
        "clusterrolebindings",
    ]);
    // An OIDC issuer on loopback and its `--authentication-config`: email under `oidc:`,
    // groups under `oidc:`, one CEL claim validation rule — a typical configuration.
    let (ca, cert, key) = conversion_webhook::certificates("bench-oidc-ca");
    let issuer_key = oidc_issuer::issuer_key("k1");
    let issuer = oidc_issuer::start_issuer(
        &cert,
        &key,
        std::sync::Arc::new(std::sync::Mutex::new(vec![issuer_key.jwk.clone()])),
    );
    let config = dir.path().join("authentication.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: {issuer}\n    audiences: [wasm-apiserver]\n    certificateAuthority: |\n      {}\n  claimMappings:\n    username: {{claim: email, prefix: \"oidc:\"}}\n    groups: {{claim: groups, prefix: \"oidc:\"}}\n  claimValidationRules:\n  - expression: \"claims.hd == 'example.com'\"\n    message: the hosted domain must be example.com\n",
            ca.replace('\n', "\n      ")
        ),
    )
    .unwrap();
    let s = Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--authorization-mode=RBAC")
            .arg("--authentication-config")
            .arg(&config);
    });
    let admin = tls_client(&s, true);
    let api = format!("{}/api/v1/namespaces/default", s.secure_url);
    let rbac = format!(
        "{}/apis/rbac.authorization.k8s.io/v1/namespaces/default",
        s.secure_url
    );
    for (url, body) in [
        (
            format!("{api}/serviceaccounts"),
            json!({"metadata": {"name": "bench"}}),
        ),
        (
            format!("{api}/secrets"),
            json!({"metadata": {"name": "s"}, "stringData": {"v": "x"}}),
        ),
        (
            format!("{rbac}/roles"),
            json!({"metadata": {"name": "read-secrets"},
                   "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}),
        ),
        (
            format!("{rbac}/rolebindings"),
            json!({"metadata": {"name": "bench"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-secrets"},
                   "subjects": [{"kind": "ServiceAccount", "name": "bench", "namespace": "default"},
                                {"kind": "Group", "name": "oidc:readers", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
    ] {
        // The default namespace may take a moment to be created by the controller.
        for attempt in 0.. {
            let r = admin.post(&url).json(&body).send().await.unwrap();
            if r.status() == 201 {
                break;
            }
            assert!(attempt < 100, "{url}: {}", r.status());
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    let token: serde_json::Value = admin
        .post(format!("{api}/serviceaccounts/bench/token"))
        .json(&json!({"spec": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["status"]["token"].as_str().unwrap().to_string();
    let now = chrono::Utc::now().timestamp();
    let id_token = oidc_issuer::sign(
        &issuer_key,
        &json!({"iss": issuer, "aud": "wasm-apiserver", "sub": "u-1", "exp": now + 3600,
                "email": "bench@example.com", "email_verified": true,
                "groups": ["readers"], "hd": "example.com"}),
    );
    let bare = tls_client(&s, false);
    // Warm up every path (connections, caches; the issuer's keys are fetched at start), then
    // three alternated rounds.
    gets(&admin, &s, None).await;
    gets(&bare, &s, Some(&token)).await;
    for attempt in 0.. {
        let r = bare
            .get(format!("{api}/secrets/s"))
            .bearer_auth(&id_token)
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            break;
        }
        assert!(attempt < 200, "the ID token: {}", r.status());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    gets(&bare, &s, Some(&id_token)).await;
    let (mut cert, mut sa, mut oidc) = (0.0, 0.0, 0.0);
    for round in 1..=3 {
        let c = gets(&admin, &s, None).await;
        let t = gets(&bare, &s, Some(&token)).await;
        let o = gets(&bare, &s, Some(&id_token)).await;
        println!(
            "   round {round}: certificate {c:>6.0}   token {t:>6.0} ({:.2}×)   OIDC {o:>6.0} ({:.2}×)",
            t / c,
            o / c
        );
        cert += c;
        sa += t;
        oidc += o;
    }
    println!(
        "   mean: certificate {:>6.0}   token {:>6.0} ({:.2}×, +{:.0} µs)   OIDC {:>6.0} ({:.2}×, +{:.0} µs)",
        cert / 3.0,
        sa / 3.0,
        sa / cert,
        (sa - cert) / 3.0,
        oidc / 3.0,
        oidc / cert,
        (oidc - cert) / 3.0
    );
}

fn main() {
    let sections = std::env::var("SECTIONS").unwrap_or_else(|_| "1,2,3,4".into());
    let run = |s: &str| sections.split(',').any(|x| x.trim() == s);
    if run("1") {
        transformers();
    }
    if run("2") {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(through_the_server(&reqwest::Client::new()));
    }
    if run("3") {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(rotation_rates(&reqwest::Client::new()));
    }
    if run("4") {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(token_authentication());
    }
}

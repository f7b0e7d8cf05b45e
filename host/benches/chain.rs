//! The cost of the secure handler chain (issue: secure serving, "Done when"): per-request
//! latency of creates and gets with authentication (bearer token), RBAC (a user bound to the
//! aggregated `edit` role — not `system:masters`, which skips RBAC) and audit at `Metadata`
//! to a log file, against the same requests with `--authorization-mode=AlwaysAllow` and no
//! audit — same binary, same token, same plain loopback port, measured in the same run,
//! alternating A/B/A/B/A/B so drift hits both. Target: under 10% added latency at 16 in flight.
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench chain`

mod common;

use common::Server;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 16;
const MEASURE: Duration = Duration::from_secs(8);
const WARM_UP: Duration = Duration::from_secs(2);
/// Rounds of baseline then chain (`CHAIN_ROUNDS` overrides): a round's ratio varies by a few
/// percent on a 2-core machine shared with the load generator, the mean of several does not.
const ROUNDS: usize = 3;

fn start(secure_chain: bool) -> Server {
    let (dir, plugins) = Server::dir_with_plugins(&[
        "configmaps",
        "namespaces",
        "roles",
        "clusterroles",
        "rolebindings",
        "clusterrolebindings",
    ]);
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "bench-token,bench,u1\nroot-token,root,u0,system:masters\n",
    )
    .unwrap();
    let policy = dir.path().join("audit.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let audit_log = dir.path().join("audit.log");
    Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--token-auth-file").arg(&tokens).args([
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight=0",
        ]);
        // CHAIN_PARTS=rbac or =audit measures one part of the chain alone (for profiling).
        let parts = std::env::var("CHAIN_PARTS").unwrap_or_else(|_| "all".into());
        if secure_chain {
            if parts == "audit" {
                cmd.arg("--authorization-mode=AlwaysAllow");
            } else {
                cmd.arg("--authorization-mode=RBAC");
            }
            if parts != "rbac" {
                cmd.arg("--audit-policy-file")
                    .arg(&policy)
                    .arg("--audit-log-path")
                    .arg(audit_log);
            }
        } else {
            cmd.arg("--authorization-mode=AlwaysAllow");
        }
    })
}

async fn setup(c: &reqwest::Client, url: &str) {
    let admin = |r: reqwest::RequestBuilder| r.bearer_auth("root-token");
    admin(c.post(format!("{url}/api/v1/namespaces")))
        .json(&json!({"metadata": {"name": "bench"}}))
        .send()
        .await
        .unwrap();
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "bench-edit"},
        "subjects": [{"kind": "User", "name": "bench", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"kind": "ClusterRole", "name": "edit", "apiGroup": "rbac.authorization.k8s.io"}});
    admin(c.post(format!(
        "{url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    )))
    .json(&binding)
    .send()
    .await
    .unwrap();
    // Until the binding (and edit's aggregated rules) reach the authorizer.
    loop {
        let code = c
            .post(format!("{url}/api/v1/namespaces/bench/configmaps"))
            .bearer_auth("bench-token")
            .json(&json!({"metadata": {"name": "target"}, "data": {"k": "x".repeat(1024)}}))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        if code == 201 || code == 409 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Mean latency (µs) and requests per second of `op` at [`IN_FLIGHT`].
async fn measure(c: &reqwest::Client, url: &str, op: &'static str, tag: &str) -> (f64, f64) {
    let seq = Arc::new(AtomicU64::new(0));
    let run = |dur: Duration| {
        let mut tasks = Vec::new();
        for _ in 0..IN_FLIGHT {
            let (c, url, seq, tag) = (c.clone(), url.to_string(), seq.clone(), tag.to_string());
            tasks.push(tokio::spawn(async move {
                let end = Instant::now() + dur;
                let (mut n, mut total) = (0u64, Duration::ZERO);
                while Instant::now() < end {
                    let t = Instant::now();
                    let r = if op == "create" {
                        let i = seq.fetch_add(1, Ordering::Relaxed);
                        c.post(format!("{url}/api/v1/namespaces/bench/configmaps"))
                            .bearer_auth("bench-token")
                            .json(&json!({"metadata": {"name": format!("cm-{tag}-{i}")},
                                          "data": {"k": "x".repeat(1024)}}))
                            .send()
                            .await
                    } else {
                        c.get(format!("{url}/api/v1/namespaces/bench/configmaps/target"))
                            .bearer_auth("bench-token")
                            .send()
                            .await
                    };
                    let r = r.unwrap();
                    assert!(r.status().is_success(), "{}", r.status());
                    let _ = r.bytes().await;
                    total += t.elapsed();
                    n += 1;
                }
                (n, total)
            }));
        }
        tasks
    };
    for t in run(WARM_UP) {
        t.await.unwrap();
    }
    let start = Instant::now();
    let (mut n, mut total) = (0u64, Duration::ZERO);
    for t in run(MEASURE) {
        let (tn, tt) = t.await.unwrap();
        n += tn;
        total += tt;
    }
    let secs = start.elapsed().as_secs_f64();
    (total.as_micros() as f64 / n as f64, n as f64 / secs)
}

#[tokio::main]
async fn main() {
    let c = reqwest::Client::builder()
        .pool_max_idle_per_host(IN_FLIGHT)
        .build()
        .unwrap();
    let mut results: Vec<(&str, &str, f64, f64)> = Vec::new();
    let rounds = std::env::var("CHAIN_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    for round in 0..rounds {
        for (name, secure) in [
            ("AlwaysAllow, no audit", false),
            ("authn + RBAC + audit", true),
        ] {
            let s = start(secure);
            setup(&c, &s.url).await;
            for op in ["create", "get"] {
                let (lat, rps) = measure(&c, &s.url, op, &format!("{round}")).await;
                println!("round {round} {name:>22} {op:>6}: {lat:8.0} µs mean, {rps:7.0} req/s");
                results.push((name, op, lat, rps));
            }
        }
    }
    for op in ["create", "get"] {
        let mean = |name: &str| {
            let v: Vec<f64> = results
                .iter()
                .filter(|r| r.0 == name && r.1 == op)
                .map(|r| r.2)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let (base, chain) = (mean("AlwaysAllow, no audit"), mean("authn + RBAC + audit"));
        println!(
            "{op}: chain {chain:.0} µs / baseline {base:.0} µs = {:.3} ({:+.1}% latency at {IN_FLIGHT} in flight)",
            chain / base,
            (chain / base - 1.0) * 100.0
        );
    }
}

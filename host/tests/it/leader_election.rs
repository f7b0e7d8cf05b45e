//! Leader election of the controllers (kube-controller-manager's `--leader-elect` over a
//! `coordination.k8s.io/v1` Lease): two servers on one etcd, only the lease holder runs the
//! namespace controller and the garbage collector; killing it moves the lease to the other
//! within the lease duration, and the controllers work there. The `leases` plugin serves
//! the Lease like any resource (kubectl sees its HOLDER column).

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::Value;
use std::time::{Duration, Instant};
use wasm_apiserver_storage::testing::etcd::EtcdServer;

const PLUGINS: &[&str] = &["configmaps", "namespaces", "leases", "widgets"];
const LEASE: &str =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/wasm-apiserver-controllers";

fn server(etcd: &EtcdServer) -> TestServer {
    TestServer::start_with(
        Backend::Embedded,
        PLUGINS,
        &[
            "--etcd-servers",
            &etcd.endpoint,
            "--leader-elect-lease-duration=3s",
            "--leader-elect-renew-deadline=2s",
            "--leader-elect-retry-period=250ms",
        ],
    )
}

fn curl(args: &[&str]) -> String {
    let out = std::process::Command::new("curl")
        .args(["-sS"])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lease(s: &TestServer) -> Option<Value> {
    let v: Value = serde_json::from_str(&curl(&[&format!("{}{LEASE}", s.url)])).ok()?;
    (v["kind"] == "Lease").then_some(v)
}

/// `leader_election_master_status` of `s`.
fn leading(s: &TestServer) -> bool {
    curl(&[&format!("{}/metrics", s.url)])
        .lines()
        .any(|l| l.starts_with("leader_election_master_status") && l.ends_with(" 1"))
}

fn eventually(what: &str, limit: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
    start.elapsed()
}

/// A widget owning a ConfigMap, the widget deleted: the ConfigMap goes (someone collects).
fn collected(s: &TestServer, name: &str) {
    let w = s.file(
        &format!("{name}.yaml"),
        &format!("apiVersion: example.dev/v1\nkind: Widget\nmetadata: {{name: {name}}}\nspec: {{size: small}}\n"),
    );
    s.ok(&["apply", "-f", w.to_str().unwrap()]);
    let uid = s.ok(&["get", "widget", name, "-o", "jsonpath={.metadata.uid}"]);
    let cm = s.file(
        &format!("{name}-dep.yaml"),
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-dep\n  ownerReferences:\n  - {{apiVersion: example.dev/v1, kind: Widget, name: {name}, uid: {uid}}}\n"),
    );
    s.ok(&["apply", "-f", cm.to_str().unwrap()]);
    s.ok(&["delete", "widget", name]);
    eventually(
        &format!("{name}-dep collected"),
        Duration::from_secs(10),
        || !s.kubectl(&["get", "configmap", &format!("{name}-dep")]).0,
    );
}

#[test]
fn one_server_runs_the_controllers_and_the_other_takes_over() {
    let etcd = EtcdServer::start();
    let a = server(&etcd);
    eventually("a leads", Duration::from_secs(10), || leading(&a));
    let b = server(&etcd);
    let first = lease(&a).expect("the lease exists");
    let holder = first["spec"]["holderIdentity"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(first["spec"]["leaseDurationSeconds"], 3);
    // b competes for a while and stays a candidate.
    std::thread::sleep(Duration::from_secs(2));
    assert!(leading(&a) && !leading(&b));
    assert_eq!(
        lease(&b).unwrap()["spec"]["holderIdentity"],
        holder.as_str()
    );
    let out = b.ok(&["get", "leases", "-n", "kube-system"]);
    assert!(out.contains("HOLDER") && out.contains(&holder), "{out}");
    collected(&b, "one");

    // The leader goes away without giving the lease up: b takes it once it expires.
    drop(a);
    let took = eventually("b leads", Duration::from_secs(10), || leading(&b));
    // Lease duration (3 s) from b's last sight of a renewal, plus a retry or two.
    assert!(took < Duration::from_secs(5), "took over after {took:?}");
    let second = lease(&b).unwrap();
    assert_ne!(second["spec"]["holderIdentity"], holder.as_str());
    assert_eq!(second["spec"]["leaseTransitions"], 1);
    collected(&b, "two");
}

/// Timing client-go would refuse (a renew deadline past the lease) is refused at start.
#[test]
fn inconsistent_timing_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let err = common::server::refused_start(
        dir.path(),
        &[std::ffi::OsStr::new("--leader-elect-renew-deadline=30s")],
    );
    assert!(
        err.contains(
            "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
        ),
        "{err}"
    );
}

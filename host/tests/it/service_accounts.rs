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
}

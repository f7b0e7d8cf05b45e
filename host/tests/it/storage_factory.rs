//! The StorageFactory as the server uses it: kube-apiserver's key layout under `--etcd-prefix`
//! and `--etcd-servers-overrides` sending one resource to another etcd.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::json;
use wasm_apiserver_storage::backend::{prefix_end, Backend as _};
use wasm_apiserver_storage::etcd3::{Etcd3, Etcd3Config};
use wasm_apiserver_storage::testing::etcd::EtcdServer;

async fn keys(endpoint: &str, prefix: &str) -> Vec<String> {
    let etcd = Etcd3::connect(Etcd3Config::new([endpoint.to_string()]))
        .await
        .unwrap();
    etcd.range(prefix, &prefix_end(prefix), 0, 0)
        .await
        .unwrap()
        .kvs
        .into_iter()
        .map(|kv| kv.key)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_follow_kube_layout_and_overrides_move_a_resource() {
    let other = EtcdServer::start();
    let flag = format!("example.dev/widgets#{}", other.endpoint);
    let s = TestServer::start_with(
        Backend::Etcd,
        &["configmaps", "widgets"],
        &["--etcd-servers-overrides", &flag],
    );
    let c = reqwest::Client::new();
    let r = c
        .post(format!("{}/apis/example.dev/v1/namespaces/default/widgets", s.url))
        .json(&json!({"apiVersion": "example.dev/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "small"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = c
        .post(format!("{}/api/v1/namespaces/default/configmaps", s.url))
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    // Core resources: /registry/<plural>/<ns>/<name>; other groups: /registry/<group>/<plural>/….
    let main = s.etcd_endpoint().unwrap();
    assert_eq!(
        keys(&main, "/registry/configmaps/").await,
        ["/registry/configmaps/default/c"]
    );
    assert!(
        keys(&main, "/registry/example.dev/").await.is_empty(),
        "widgets are overridden"
    );
    assert_eq!(
        keys(&other.endpoint, "/registry/example.dev/widgets/").await,
        ["/registry/example.dev/widgets/default/w"]
    );
    // And the server reads it back from there.
    let r = c
        .get(format!(
            "{}/apis/example.dev/v1/namespaces/default/widgets/w",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

/// An etcd nobody listens on refuses the start with one line naming the endpoint and the
/// cause, not the gRPC client's debug structure (issue 35, a newcomer edge).
#[test]
fn an_unreachable_etcd_is_named_in_one_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{port}");
    let err =
        common::server::refused_start(dir.path(), &["--etcd-servers".as_ref(), endpoint.as_ref()]);
    let line = err
        .lines()
        .find(|l| l.contains("etcd ["))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!("etcd [{endpoint}]: ")) && line.contains("Connection refused"),
        "{line}"
    );
    assert!(!err.contains("tonic::") && !err.contains("Os {"), "{err}");
}

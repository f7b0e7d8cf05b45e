//! kubectl's imperative commands (`create namespace`, `create configmap`, `create secret`)
//! send built-in kinds as `application/vnd.kubernetes.protobuf` and do not retry with JSON:
//! the server decodes those bodies to JSON for the plugins (`host/src/server/protobuf.rs`).

use crate::common;

use common::server::{Backend, TestServer};
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message;
use std::io::{Read, Write};
use std::net::TcpStream;

/// `k8s\0` + `runtime.Unknown` around `object`.
fn envelope(api_version: &str, kind: &str, object: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\x00".to_vec();
    unknown.encode(&mut out).unwrap();
    out
}

/// POST a protobuf body; returns the status code and the response body.
fn post_protobuf(server: &TestServer, path: &str, body: &[u8]) -> (u16, String) {
    let addr = server.url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/vnd.kubernetes.protobuf\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, response)
}

#[test]
fn kubectl_imperative_commands_send_protobuf() {
    let server = TestServer::start(Backend::Embedded);

    server.ok(&["create", "namespace", "demo"]);
    let ns = server.ok(&[
        "get",
        "namespace",
        "demo",
        "-o",
        "jsonpath={.metadata.name} {.status.phase} {.spec.finalizers}",
    ]);
    assert_eq!(ns, "demo Active [\"kubernetes\"]");

    server.ok(&[
        "create",
        "configmap",
        "c1",
        "--from-literal=a=b",
        "-n",
        "demo",
    ]);
    let yaml = server.ok(&["get", "cm", "c1", "-n", "demo", "-o", "yaml"]);
    assert!(yaml.contains("  a: b\n"), "{yaml}");
    assert!(yaml.contains("name: c1\n"), "{yaml}");
    assert!(yaml.contains("namespace: demo\n"), "{yaml}");

    std::fs::write(server.dir.path().join("bin.dat"), [0u8, 1, 0xfe, 0xff]).unwrap();
    server.ok(&[
        "create",
        "configmap",
        "c2",
        "--from-file=bin.dat",
        "--from-literal=k=v",
        "-n",
        "demo",
    ]);
    let c2 = server.ok(&[
        "get",
        "cm",
        "c2",
        "-n",
        "demo",
        "-o",
        "jsonpath={.data.k} {.binaryData.bin\\.dat}",
    ]);
    assert_eq!(c2, "v AAH+/w==");

    server.ok(&["run", "p1", "--image=nginx", "-n", "demo"]);
    let image = server.ok(&[
        "get",
        "pod",
        "p1",
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.containers[0].image} {.metadata.labels.run}",
    ]);
    assert_eq!(image, "nginx p1");

    // Errors on a protobuf request come back as a Status kubectl prints.
    let err = server.fails(&["create", "namespace", "demo"]);
    assert!(err.contains("already exists"), "{err}");

    // A protobuf Pod, as a Go client sends it.
    let pod = core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: Some("p2".into()),
            labels: [("app".to_string(), "web".to_string())]
                .into_iter()
                .collect(),
            ..Default::default()
        }),
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: Some("web".into()),
                image: Some("nginx:1.27".into()),
                ports: vec![core::ContainerPort {
                    container_port: Some(80),
                    ..Default::default()
                }],
                args: vec!["--flag".into()],
                ..Default::default()
            }],
            termination_grace_period_seconds: Some(0),
            ..Default::default()
        }),
        status: None,
    };
    let (code, body) = post_protobuf(
        &server,
        "/api/v1/namespaces/demo/pods",
        &envelope("v1", "Pod", &pod),
    );
    assert_eq!(code, 201, "{body}");
    let p2 = server.ok(&[
        "get",
        "pod",
        "p2",
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.containers[0].ports[0].containerPort} {.spec.containers[0].args} {.spec.terminationGracePeriodSeconds}",
    ]);
    assert_eq!(p2, "80 [\"--flag\"] 0");

    // A kind the decoder does not convert: 415, as before.
    let (code, body) = post_protobuf(
        &server,
        "/apis/example.dev/v1/namespaces/demo/widgets",
        &envelope("example.dev/v1", "Widget", &core::ConfigMap::default()),
    );
    assert_eq!(code, 415, "{body}");
    // Bytes that are not a protobuf envelope: 400.
    let (code, body) = post_protobuf(&server, "/api/v1/namespaces/demo/configmaps", b"{}");
    assert_eq!(code, 400, "{body}");
}

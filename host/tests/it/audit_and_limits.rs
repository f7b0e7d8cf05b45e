//! Auditing and the request limits as an operator meets them: the audit log's events for a
//! create at Metadata and at RequestResponse level (stage, user, verb, objectRef,
//! responseStatus, bodies), rotation at the size limit, an invalid policy refused at start
//! naming the rule; `--max-requests-inflight` answering 429 while watches stay open; a body
//! over the limit refused before it is read. Through the real kubectl over TLS and raw
//! connections on the plain port.

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/version", "/api", "/api/*", "/apis", "/apis/*", "/openapi*"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  resources:
  - group: ""
    resources: ["secrets"]
  namespaces: ["named"]
- level: RequestResponse
  namespaces: ["vault"]
- level: Metadata
  omitStages: [ResponseStarted]
"#;

/// The complete events in the log: every newline-terminated line is one JSON event (a last
/// line without its newline is still being written by the batching writer).
fn events(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    complete
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect()
}

fn audit(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = dir.path().join("audit/audit.log");
    let s = TestServer::start_with(
        backend,
        &["pods", "configmaps", "namespaces", "secrets"],
        &[
            "--authorization-mode=RBAC",
            "--audit-policy-file",
            policy.to_str().unwrap(),
            "--audit-log-path",
            log.to_str().unwrap(),
            "--audit-log-maxsize",
            "1",
            "--audit-log-maxbackup",
            "2",
        ],
    );
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
    ]);
    // Secrets: a rule for a whole namespace records them at Metadata; one naming `secrets`
    // gets what it asks for.
    for ns in ["vault", "named"] {
        s.ok(&["create", "namespace", ns]);
        s.ok(&[
            "create",
            "secret",
            "generic",
            "db",
            "--from-literal=password=s3cr3t-value",
            "-n",
            ns,
        ]);
    }
    s.ok(&["run", "web", "--image=nginx"]);
    let mut all = Vec::new();
    s.eventually(Duration::from_secs(10), "audit events written", || {
        all = events(&log);
        all.iter()
            .any(|e| e["objectRef"]["resource"] == "pods" && e["verb"] == "create")
    });
    // Discovery and health are at level None; RequestReceived is omitted everywhere.
    assert!(
        all.iter().all(|e| e["stage"] != "RequestReceived"),
        "{all:?}"
    );
    assert!(all.iter().all(|e| e["requestURI"] != "/api"), "{all:?}");

    let cm = all
        .iter()
        .find(|e| e["objectRef"]["resource"] == "configmaps" && e["verb"] == "create")
        .expect("the configmap create");
    assert_eq!(cm["kind"], "Event");
    assert_eq!(cm["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(cm["level"], "RequestResponse");
    assert_eq!(cm["stage"], "ResponseComplete");
    assert_eq!(cm["user"]["username"], "kubernetes-admin");
    assert_eq!(cm["objectRef"]["namespace"], "default");
    assert_eq!(cm["objectRef"]["apiVersion"], "v1");
    assert_eq!(cm["responseStatus"]["code"], 201);
    assert!(cm["requestURI"]
        .as_str()
        .unwrap()
        .starts_with("/api/v1/namespaces/default/configmaps"));
    // The protobuf body kubectl sent, as the object it carries, and the stored object.
    assert_eq!(cm["requestObject"]["data"]["mode"], "fast", "{cm}");
    assert_eq!(cm["responseObject"]["metadata"]["name"], "settings", "{cm}");
    assert_eq!(cm["annotations"]["authorization.k8s.io/decision"], "allow");
    assert!(cm["auditID"].as_str().is_some_and(|id| id.len() == 36));
    assert!(cm["sourceIPs"][0] == "127.0.0.1");
    assert!(cm["userAgent"].as_str().unwrap().starts_with("kubectl/"));

    let secret_in = |ns: &str| {
        all.iter()
            .find(|e| {
                e["objectRef"]["resource"] == "secrets"
                    && e["objectRef"]["namespace"] == ns
                    && e["verb"] == "create"
            })
            .expect("the secret create")
    };
    let vault = secret_in("vault");
    assert_eq!(vault["level"], "Metadata", "{vault}");
    assert!(vault.get("requestObject").is_none() && vault.get("responseObject").is_none());
    let named = secret_in("named");
    assert_eq!(named["level"], "Request", "{named}");
    assert!(
        named["requestObject"]["data"]["password"].is_string(),
        "{named}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.matches("czNjcjN0LXZhbHVl").count(),
        1,
        "the secret's value is in the log once, from the rule that names secrets"
    );

    let pod = all
        .iter()
        .find(|e| e["objectRef"]["resource"] == "pods" && e["verb"] == "create")
        .unwrap();
    assert_eq!(pod["level"], "Metadata");
    assert_eq!(pod["responseStatus"]["code"], 201);
    assert!(pod.get("requestObject").is_none() && pod.get("responseObject").is_none());

    // A forbidden request is recorded with its Status.
    let anonymous = s.dir.path().join("anon.kubeconfig");
    let mut config: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(s.kubeconfig()).unwrap()).unwrap();
    config["users"][0]["user"] = serde_json::json!({"username": "nobody"});
    std::fs::write(&anonymous, serde_yaml_ng::to_string(&config).unwrap()).unwrap();
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&anonymous)
        .args(["get", "--raw", "/api/v1/namespaces/default/pods"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    s.eventually(Duration::from_secs(10), "the 403 recorded", || {
        events(&log).iter().any(|e| {
            e["user"]["username"] == "system:anonymous"
                && e["responseStatus"]["code"] == 403
                && e["responseStatus"]["reason"] == "Forbidden"
                && e["annotations"]["authorization.k8s.io/decision"] == "forbid"
        })
    });

    // A watch: ResponseStarted is omitted by its rule, ResponseComplete comes when it ends.
    s.ok(&["get", "pods", "--watch", "--request-timeout=1s"]);
    s.eventually(
        Duration::from_secs(10),
        "the watch's ResponseComplete",
        || {
            events(&log)
                .iter()
                .any(|e| e["verb"] == "watch" && e["stage"] == "ResponseComplete")
        },
    );
    assert!(events(&log).iter().all(|e| e["stage"] != "ResponseStarted"));

    // Rotation at 1 MiB: RequestResponse creates of 200 KB configmaps.
    let big = "x".repeat(200 * 1024);
    for i in 0..8 {
        let f = s.file("big.txt", &big);
        s.ok(&[
            "create",
            "configmap",
            &format!("big-{i}"),
            &format!("--from-file=data={}", f.display()),
        ]);
    }
    s.eventually(Duration::from_secs(10), "a rotated audit log", || {
        log.with_file_name("audit.log.1").exists()
    });
    assert!(std::fs::metadata(&log).unwrap().len() < 2 << 20);

    // Shutdown: a watch open when the server is stopped ends with it, and its
    // ResponseComplete — recorded in the server's last moments — is in the log.
    let mut watch = s
        .kubectl_cmd(&["get", "configmaps", "--watch", "-l", "flush=test"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // (Its ResponseStarted is omitted by the policy: nothing to wait for in the log.)
    std::thread::sleep(Duration::from_secs(2));
    let mut s = s;
    let _ = Command::new("kill")
        .args(["-TERM", &s.pid().to_string()])
        .status();
    s.wait_exit(Duration::from_secs(30))
        .expect("the server stops");
    let _ = watch.kill();
    let _ = watch.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.ends_with('\n'), "the last event is complete");
    assert!(
        events(&log).iter().any(|e| e["verb"] == "watch"
            && e["requestURI"].as_str().unwrap_or("").contains("flush")
            && e["stage"] == "ResponseComplete"),
        "the watch's ResponseComplete at shutdown is not in the log"
    );
}

#[test]
fn audit_embedded() {
    audit(Backend::Embedded);
}

#[test]
fn audit_etcd() {
    audit(Backend::Etcd);
}

#[test]
fn an_invalid_audit_policy_is_refused_at_start_naming_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n- level: Everything\n",
    )
    .unwrap();
    let log = dir.path().join("audit.log");
    let err = common::server::refused_start(
        dir.path(),
        &[
            "--audit-policy-file".as_ref(),
            policy.as_os_str(),
            "--audit-log-path".as_ref(),
            log.as_os_str(),
        ],
    );
    assert!(
        err.contains(r#"rules[1].level: Unsupported value: "Everything""#),
        "{err}"
    );
}

fn host_port(s: &TestServer) -> String {
    s.url.trim_start_matches("http://").to_string()
}

/// Send a request head whose body never comes: the request stays in flight.
fn stalled(s: &TestServer, method: &str, path: &str) -> TcpStream {
    let mut c = TcpStream::connect(host_port(s)).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    .unwrap();
    c
}

fn answer(c: &mut TcpStream) -> String {
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = c.read(&mut buf).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn request(s: &TestServer, method: &str, path: &str) -> String {
    let mut c = TcpStream::connect(host_port(s)).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    answer(&mut c)
}

#[test]
fn in_flight_limits_answer_429_while_watches_stay_open() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &["configmaps", "namespaces"],
        &[
            "--max-requests-inflight=2",
            "--max-mutating-requests-inflight=1",
        ],
    );
    let list = "/api/v1/namespaces/default/configmaps";
    // A watch first: long-running, not counted, and it stays open throughout.
    let mut watch = TcpStream::connect(host_port(&s)).unwrap();
    write!(watch, "GET {list}?watch=true HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    assert!(answer(&mut watch).starts_with("HTTP/1.1 200"));

    let _a = stalled(&s, "GET", list);
    let _b = stalled(&s, "GET", list);
    std::thread::sleep(Duration::from_millis(300));
    let third = request(&s, "GET", list);
    assert!(third.starts_with("HTTP/1.1 429"), "{third}");
    assert!(third.to_lowercase().contains("retry-after: 1"), "{third}");
    assert!(third.contains(r#""reason":"TooManyRequests""#), "{third}");
    // Mutating requests have their own limit.
    let _m = stalled(&s, "POST", list);
    std::thread::sleep(Duration::from_millis(300));
    let post = request(&s, "DELETE", &format!("{list}/x"));
    assert!(post.starts_with("HTTP/1.1 429"), "{post}");
    // More watches still open while the limits are full.
    let mut watch2 = TcpStream::connect(host_port(&s)).unwrap();
    write!(watch2, "GET {list}?watch=true HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    assert!(answer(&mut watch2).starts_with("HTTP/1.1 200"));
    // The first watch is still open: it sees a new object (created once a slot is free).
    drop((_a, _b, _m));
    std::thread::sleep(Duration::from_millis(300));
    let mut c = TcpStream::connect(host_port(&s)).unwrap();
    let body = r#"{"metadata":{"name":"seen"}}"#;
    write!(
        c,
        "POST {list} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    assert!(answer(&mut c).starts_with("HTTP/1.1 201"));
    let event = answer(&mut watch);
    assert!(event.contains("seen"), "{event}");
    let metrics = request(&s, "GET", "/metrics");
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
}

#[test]
fn a_body_over_the_limit_is_refused_before_it_is_read() {
    let s = TestServer::start_with(Backend::Embedded, &["configmaps"], &[]);
    let mut c = TcpStream::connect(host_port(&s)).unwrap();
    // 4 MiB announced, the limit and 1 KiB more sent: the answer comes without the rest (the
    // server read at most the limit, as kube's `limitedReadBody`).
    write!(
        c,
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        4 << 20
    )
    .unwrap();
    c.write_all(&vec![b'x'; (3 << 20) + 1024]).unwrap();
    let a = answer(&mut c);
    assert!(a.starts_with("HTTP/1.1 413"), "{a}");
    assert!(a.contains("RequestEntityTooLarge"), "{a}");
}

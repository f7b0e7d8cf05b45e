//! The official Python client (`kubernetes`, installed by `setup.sh --test`) against the real
//! server: `tests/python/client_answers.py` sends the requests it sends (trailing-slash paths,
//! typed objects without apiVersion/kind, a watch with a timeout) and checks what it decodes.

mod common;

use common::server::{Backend, TestServer};

#[test]
fn python_client_sees_kube_answers() {
    let s = TestServer::start(Backend::Embedded);
    let script = common::repo_root().join("host/tests/python/client_answers.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(&s.url)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
}

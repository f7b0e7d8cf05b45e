//! The official Python client (`kubernetes`, installed by `setup.sh --test` into the venv
//! `target/pyenv`; `python3` when there is none) against the real
//! server: `tests/python/client_answers.py` sends the requests it sends (trailing-slash paths,
//! typed objects without apiVersion/kind, a watch with a timeout, a pod's delete, events through
//! both Event APIs) and checks what it decodes.

mod common;

use common::server::{Backend, TestServer};

#[test]
fn python_client_sees_kube_answers() {
    let s = TestServer::start_with(
        Backend::Embedded,
        &[
            "pods",
            "configmaps",
            "namespaces",
            "widgets",
            "events",
            "events-k8s-io",
        ],
        &[],
    );
    let script = common::repo_root().join("host/tests/python/client_answers.py");
    let venv = common::repo_root().join("target/pyenv/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        "python3".into()
    };
    let mut child = std::process::Command::new(python)
        .arg(script)
        .arg(&s.url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run python");
    // Bounded: a hung client fails the test instead of hanging the suite.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("python client still running after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    // kubectl lists the events the script published, with kube's columns.
    let events = s.ok(&["get", "events", "-n", "py"]);
    assert!(
        events.starts_with("LAST SEEN")
            && events.contains("configmap/c")
            && events.contains("Changed"),
        "{events}"
    );
}

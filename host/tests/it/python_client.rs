//! The official Python client (`kubernetes`, installed by `setup.sh --test` into the venv
//! `target/pyenv`; `python3` when there is none) against the real
//! server: `tests/python/client_answers.py` sends the requests it sends (trailing-slash paths,
//! typed objects without apiVersion/kind, a watch with a timeout, a pod's delete, events through
//! both Event APIs) and checks what it decodes.

use crate::common;

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
    common::run_python_client("client_answers.py", &s.url);
    // kubectl lists the events the script published, with kube's columns.
    let events = s.ok(&["get", "events", "-n", "py"]);
    assert!(
        events.starts_with("LAST SEEN")
            && events.contains("configmap/c")
            && events.contains("Changed"),
        "{events}"
    );
}

/// `ApiextensionsV1Api` and `CustomObjectsApi` (`tests/python/custom_resources.py`): a CRD
/// created with typed models and used at once.
#[test]
fn python_client_creates_and_uses_a_crd() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    common::run_python_client("custom_resources.py", &s.url);
}

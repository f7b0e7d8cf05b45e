//! What the storage benchmarks (`storage.rs`, `cacher.rs`) share: the objects they store.

use serde_json::{json, Value};

/// Encoded size of one benchmark object, bytes.
pub const OBJECT_BYTES: usize = 1024;

/// A pod-like object named `name` whose JSON encoding is [`OBJECT_BYTES`] long.
pub fn pod(namespace: &str, name: &str) -> Value {
    let mut obj = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": "6f1c2a8e-3d4b-4c5a-9e8f-0a1b2c3d4e5f",
            "creationTimestamp": "2025-01-01T00:00:00Z",
            "labels": {"app": "bench", "tier": "web", "pod-template-hash": "5d9c7b8f6d"},
            "annotations": {"bench/pad": ""},
        },
        "spec": {
            "nodeName": "node-1",
            "restartPolicy": "Always",
            "serviceAccountName": "default",
            "containers": [{
                "name": "app",
                "image": "registry.example/bench/app:1.2.3",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "bench"}, {"name": "LEVEL", "value": "info"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                              "limits": {"cpu": "500m", "memory": "256Mi"}},
            }],
        },
        "status": {"phase": "Running", "podIP": "10.0.0.17", "hostIP": "192.168.0.10"},
    });
    let len = serde_json::to_vec(&obj).unwrap().len();
    let pad = OBJECT_BYTES.saturating_sub(len);
    obj["metadata"]["annotations"]["bench/pad"] = Value::String("x".repeat(pad));
    obj
}

/// The name of the `i`th object, `pod-NNNNNNN` (sorts in index order).
pub fn name(i: usize) -> String {
    format!("pod-{i:07}")
}

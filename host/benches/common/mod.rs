//! What several benchmarks share: the ~2 KB two-container pod they measure with, and this
//! process's CPU time. Included with `mod common;` (not a bench target itself).

#![allow(dead_code)]

use serde_json::{json, Value};

/// A ~1.9 KB (2.5 KB once defaulted) pod with two containers, ports, env, resources, a volume
/// mount, a probe, a node selector and a toleration, named `web-7d4b9c8f6d-x2x9k` in
/// `default`.
pub fn pod() -> Value {
    let container = |name: &str, image: &str| {
        json!({
            "name": name, "image": image,
            "command": ["/bin/server", "--config", "/etc/app/config.yaml", "--verbose"],
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                      {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
            "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "REGION", "value": "eu-west-1"},
                    {"name": "FEATURE_FLAGS", "value": "alpha,beta,gamma"}],
            "resources": {"requests": {"cpu": "250m", "memory": "128Mi"},
                          "limits": {"cpu": "500m", "memory": "256Mi"}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}
        })
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "web-7d4b9c8f6d-x2x9k", "namespace": "default",
            "uid": "5f0c3b8e-7a55-4d0c-9d59-3c1c2b6f7e21",
            "creationTimestamp": "2026-11-21T08:00:00Z",
            "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d4b9c8f6d", "team": "platform"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                            "kubectl.kubernetes.io/default-container": "web"}
        },
        "spec": {
            "containers": [container("web", "registry.example.dev/web:1.4.2"),
                           container("sidecar", "registry.example.dev/proxy:2.0.1")],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}]
        }
    })
}

/// This process's user + system CPU time (`getrusage(RUSAGE_SELF)`), µs.
pub fn self_cpu_us() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

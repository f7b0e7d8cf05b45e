//! Strategy hook cost through the wasm runtime against the same Rust logic called natively, in
//! one run (issue: strategy plugins, "Done when").
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench strategy`
//!
//! Both sides include the host's JSON work: the native side serialises the host's
//! `serde_json::Value`, calls the SDK's string-level hook (`wasm_apiserver_sdk::glue`, the code
//! compiled into the component) and parses the result, exactly what `WasmStrategy` does around
//! the component call. The object is a ~2 KB pod.

use serde_json::{json, Value};
use std::hint::black_box;
use std::time::{Duration, Instant};
use wasm_apiserver::plugin::{PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{sequence, Strategy};
use wasm_apiserver_sdk::glue;

type Native = pods::Pods;

fn pod() -> Value {
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

/// Median ns per call over `batches` batches of `n` calls.
fn measure(n: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..n / 10 + 1 {
        f();
    }
    let mut samples: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[samples.len() / 2]
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let wasm = runtime
        .load_file(&root.join("target/plugins/pods.wasm"))
        .expect("run `bash plugins/build.sh` first");
    let obj = pod();
    println!("pod JSON size: {} bytes", obj.to_string().len());

    let prepared = sequence::create(&wasm, &obj, &sequence::no_meta_validation)
        .unwrap()
        .object;
    let mut changed = prepared.clone();
    changed["spec"]["containers"][0]["image"] = json!("registry.example.dev/web:1.4.3");
    const N: u32 = 2000;

    let rows: Vec<(&str, f64, f64)> = vec![
        (
            "prepare-for-create",
            measure(N, || {
                black_box(wasm.prepare_for_create(&obj).unwrap());
            }),
            measure(N, || {
                black_box(parse(
                    &glue::prepare_for_create::<Native>(&obj.to_string()).unwrap(),
                ));
            }),
        ),
        (
            "validate",
            measure(N, || {
                black_box(wasm.validate(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::validate::<Native>(&prepared.to_string()));
            }),
        ),
        (
            "warnings-on-create",
            measure(N, || {
                black_box(wasm.warnings_on_create(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::warnings_on_create::<Native>(&prepared.to_string()));
            }),
        ),
        (
            "canonicalize",
            measure(N, || {
                black_box(wasm.canonicalize(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(parse(
                    &glue::canonicalize::<Native>(&prepared.to_string()).unwrap(),
                ));
            }),
        ),
        (
            "get-attrs",
            measure(N, || {
                black_box(wasm.get_attrs(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::get_attrs::<Native>(&prepared.to_string()).unwrap());
            }),
        ),
        (
            "prepare-for-update",
            measure(N, || {
                black_box(wasm.prepare_for_update(&changed, &prepared).unwrap());
            }),
            measure(N, || {
                let r =
                    glue::prepare_for_update::<Native>(&changed.to_string(), &prepared.to_string());
                black_box(parse(&r.unwrap()));
            }),
        ),
        (
            "validate-update",
            measure(N, || {
                black_box(wasm.validate_update(&changed, &prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::validate_update::<Native>(
                    &changed.to_string(),
                    &prepared.to_string(),
                ));
            }),
        ),
        (
            "whole create sequence",
            measure(N, || {
                black_box(sequence::create(&wasm, &obj, &sequence::no_meta_validation).unwrap());
            }),
            measure(N, || {
                let p = parse(&glue::prepare_for_create::<Native>(&obj.to_string()).unwrap());
                let text = p.to_string();
                assert!(glue::validate::<Native>(&text).is_empty());
                black_box(glue::warnings_on_create::<Native>(&text));
                black_box(parse(&glue::canonicalize::<Native>(&text).unwrap()));
            }),
        ),
    ];
    println!(
        "{:<24} {:>12} {:>12} {:>8}",
        "hook (2 KB pod)", "wasm µs", "native µs", "ratio"
    );
    for (name, w, n) in &rows {
        println!(
            "{name:<24} {:>12.2} {:>12.2} {:>7.2}x",
            w / 1000.0,
            n / 1000.0,
            w / n
        );
    }

    // Deadline enforcement: an infinite loop against a 100 ms deadline.
    let deadline = Duration::from_millis(100);
    let rt = PluginRuntime::new(RuntimeConfig {
        call_deadline: deadline,
        ..RuntimeConfig::default()
    })
    .unwrap();
    let bad = rt
        .load_file(&root.join("target/test-plugins/misbehaving.wasm"))
        .unwrap();
    let looping = json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
        "metadata": {"name": "m", "namespace": "default", "annotations": {"misbehave": "loop"}}});
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        let t = Instant::now();
        assert!(bad.validate(&looping).is_err());
        worst = worst.max(t.elapsed());
    }
    println!(
        "infinite loop, deadline {} ms: stopped after at most {:.1} ms ({:.2}x the deadline, 10 runs)",
        deadline.as_millis(),
        worst.as_secs_f64() * 1000.0,
        worst.as_secs_f64() / deadline.as_secs_f64()
    );
}

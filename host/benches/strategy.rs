//! Strategy hook cost through the wasm runtime against the same Rust logic called natively, in
//! one run (issue: strategy plugins, "Done when").
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench strategy`
//!
//! Both sides include the host's JSON work: the native side serialises the host's
//! `serde_json::Value`, calls the SDK's string-level hook (`wasm_apiserver_sdk::glue`, the code
//! compiled into the component) and parses the result, exactly what `WasmStrategy` does around
//! the component call. The object is a ~2 KB pod.
//!
//! Rows: each hook alone; "create, four hook calls" (`sequence::create_in_steps`, one call per
//! hook, the path before `create-sequence`); "whole create sequence" (`sequence::create`, what
//! the server runs: one `create-sequence` call, natively `glue::create_sequence`). Then the
//! split of the fused create between the host's JSON work and the SDK glue.

mod common;

use common::{measure, pod};
use serde_json::{json, Value};
use std::hint::black_box;

/// The allocator the server binary uses (`host/src/main.rs`), so the host's JSON work costs
/// here what it costs in the server.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::{Duration, Instant};
use wasm_apiserver::plugin::{PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{sequence, Strategy};
use wasm_apiserver_sdk::glue;

type Native = pods::Pods;

/// The host's encoding of an object for a hook (what `WasmStrategy` sends).
fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
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
    let obj_text = text(&obj);
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
                    &glue::prepare_for_create::<Native>(&text(&obj)).unwrap(),
                ));
            }),
        ),
        (
            "validate",
            measure(N, || {
                black_box(wasm.validate(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::validate::<Native>(&text(&prepared)));
            }),
        ),
        (
            "warnings-on-create",
            measure(N, || {
                black_box(wasm.warnings_on_create(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::warnings_on_create::<Native>(&text(&prepared)));
            }),
        ),
        (
            "canonicalize",
            measure(N, || {
                black_box(wasm.canonicalize(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(parse(
                    &glue::canonicalize::<Native>(&text(&prepared)).unwrap(),
                ));
            }),
        ),
        (
            "get-attrs",
            measure(N, || {
                black_box(wasm.get_attrs(&prepared).unwrap());
            }),
            measure(N, || {
                black_box(glue::get_attrs::<Native>(&text(&prepared)).unwrap());
            }),
        ),
        (
            "prepare-for-update",
            measure(N, || {
                black_box(wasm.prepare_for_update(&changed, &prepared).unwrap());
            }),
            measure(N, || {
                let r = glue::prepare_for_update::<Native>(&text(&changed), &text(&prepared));
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
                    &text(&changed),
                    &text(&prepared),
                ));
            }),
        ),
        (
            "create, four hook calls",
            measure(N, || {
                black_box(
                    sequence::create_in_steps(&wasm, &obj, &sequence::no_meta_validation).unwrap(),
                );
            }),
            measure(N, || {
                let p = parse(&glue::prepare_for_create::<Native>(&text(&obj)).unwrap());
                let text = text(&p);
                assert!(glue::validate::<Native>(&text).is_empty());
                black_box(glue::warnings_on_create::<Native>(&text));
                black_box(parse(&glue::canonicalize::<Native>(&text).unwrap()));
            }),
        ),
        (
            "whole create sequence",
            measure(N, || {
                black_box(sequence::create(&wasm, &obj, &sequence::no_meta_validation).unwrap());
            }),
            measure(N, || {
                let out = glue::create_sequence::<Native>(&text(&obj)).unwrap();
                assert!(out.errors.is_empty());
                black_box((parse(&out.object), out.warnings));
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

    // Where the fused create's time goes: the host's JSON work around the call (encode the
    // request `Value`, parse the returned object into a `Value`, drop it), which no plugin change
    // can remove, and the SDK glue natively (decode, the four hooks, encode).
    let out_text = glue::create_sequence::<Native>(&text(&obj)).unwrap().object;
    let host_json = measure(N, || {
        black_box(text(black_box(&obj)));
        black_box(parse(black_box(&out_text)));
    });
    let glue_only = measure(N, || {
        black_box(glue::create_sequence::<Native>(black_box(&obj_text)).unwrap());
    });
    println!(
        "fused create, parts: host JSON (encode + parse + drop) {:.2} µs; SDK glue natively {:.2} µs",
        host_json / 1000.0,
        glue_only / 1000.0
    );

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

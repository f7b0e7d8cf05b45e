//! The plugin runtime against real components: every bad-input case of the plugin issue gives a
//! clear error naming the plugin and the reason, and the process (and the plugin's next call)
//! keeps working.

mod common;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use wasm_apiserver::plugin::{LoadErrorKind, PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{sequence, PluginFault, Strategy, StrategyError};

fn runtime(deadline_ms: u64, memory_mib: usize) -> std::sync::Arc<PluginRuntime> {
    PluginRuntime::new(RuntimeConfig {
        call_deadline: Duration::from_millis(deadline_ms),
        memory_limit: memory_mib << 20,
        cache_dir: None,
    })
    .unwrap()
}

fn misbehaver(mode: &str) -> Value {
    json!({"apiVersion": "test.wasm-apiserver.dev/v1", "kind": "Misbehaver",
           "metadata": {"name": "m", "namespace": "default", "annotations": {"misbehave": mode}}})
}

fn fault(r: Result<impl std::fmt::Debug, StrategyError>) -> PluginFault {
    match r {
        Err(StrategyError::Fault(f)) => f,
        other => panic!("expected a plugin fault, got {other:?}"),
    }
}

#[test]
fn a_file_that_is_not_wasm_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("garbage.wasm");
    std::fs::write(&f, b"#!/bin/sh\necho not wasm\n").unwrap();
    let e = runtime(1000, 64).load_file(&f).unwrap_err();
    assert_eq!(e.plugin, "garbage");
    assert!(matches!(e.reason, LoadErrorKind::NotWasm), "{e}");
    assert!(e.to_string().contains("not a WebAssembly file"), "{e}");
}

#[test]
fn a_core_module_is_refused_with_how_to_build_a_component() {
    let e = runtime(1000, 64)
        .load_bytes("core", b"\0asm\x01\0\0\0")
        .unwrap_err();
    assert!(matches!(e.reason, LoadErrorKind::CoreModule), "{e}");
    assert!(e.to_string().contains("wasm32-wasip2"), "{e}");
}

#[test]
fn a_truncated_component_is_refused() {
    let bytes = std::fs::read(common::plugin("widgets")).unwrap();
    let e = runtime(1000, 64)
        .load_bytes("half", &bytes[..bytes.len() / 2])
        .unwrap_err();
    assert!(matches!(e.reason, LoadErrorKind::Compile(_)), "{e}");
}

#[test]
fn another_wit_version_is_refused_naming_both_versions() {
    let e = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving-wit-next"))
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e.reason, LoadErrorKind::WitVersion { .. }),
        "{msg}"
    );
    assert!(msg.contains("misbehaving-wit-next"), "{msg}");
    assert!(msg.contains("wasm-apiserver:strategy@0.2.0"), "{msg}");
    assert!(msg.contains("wasm-apiserver:strategy@0.1.0"), "{msg}");
}

#[test]
fn an_invalid_self_description_is_refused_with_each_problem() {
    let e = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving-bad-describe"))
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e.reason, LoadErrorKind::Describe(_)), "{msg}");
    for needle in [
        "group \"not a group\"",
        "kind \"lower kind\"",
        "plural \"Bad_Plural!\"",
    ] {
        assert!(msg.contains(needle), "{needle:?} missing from {msg}");
    }
}

#[test]
fn a_trap_is_a_fault_naming_the_plugin_and_the_next_call_works() {
    let s = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    let f = fault(s.prepare_for_create(&misbehaver("trap")));
    let msg = f.to_string();
    assert!(matches!(f, PluginFault::Trap { .. }), "{msg}");
    assert!(
        msg.contains("\"misbehaving\"") && msg.contains("prepare-for-create"),
        "{msg}"
    );
    assert!(
        msg.contains("asked to trap"),
        "the guest's panic text is reported: {msg}"
    );
    // The poisoned instance was dropped: the same thread gets a fresh one.
    let ok = s.prepare_for_create(&misbehaver("none")).unwrap();
    assert_eq!(ok["metadata"]["name"], "m");
}

#[test]
fn an_infinite_loop_is_stopped_by_the_deadline() {
    let s = runtime(200, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    let t = Instant::now();
    let f = fault(s.validate(&misbehaver("loop")));
    let took = t.elapsed();
    assert!(
        matches!(
            f,
            PluginFault::Timeout {
                deadline_ms: 200,
                ..
            }
        ),
        "{f}"
    );
    // Generous bound for a loaded CI machine; BENCHMARKS.md records the measured overshoot.
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    assert!(s.validate(&misbehaver("none")).unwrap().is_empty());
}

#[test]
fn allocating_past_the_cap_is_a_memory_fault() {
    let s = runtime(5000, 32)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    let f = fault(s.prepare_for_create(&misbehaver("alloc")));
    assert!(
        matches!(f, PluginFault::MemoryExceeded { limit_bytes, .. } if limit_bytes == 32 << 20),
        "{f}"
    );
    assert!(f.to_string().contains("memory limit"), "{f}");
    s.prepare_for_create(&misbehaver("none")).unwrap();
}

#[test]
fn malformed_or_identity_changing_output_is_a_fault() {
    let s = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    for (mode, needle) in [
        ("badjson", "not JSON"),
        ("notobject", "not a JSON object"),
        ("rename", "metadata.name"),
        ("rekind", "changed kind"),
    ] {
        let f = fault(s.prepare_for_create(&misbehaver(mode)));
        assert!(matches!(f, PluginFault::BadOutput { .. }), "{mode}: {f}");
        assert!(f.to_string().contains(needle), "{mode}: {f}");
    }
}

#[test]
fn faults_on_other_threads_leave_this_one_serving() {
    let s = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    let s2 = s.clone();
    std::thread::spawn(move || {
        let _ = s2.prepare_for_create(&misbehaver("trap"));
    })
    .join()
    .unwrap();
    s.prepare_for_create(&misbehaver("none")).unwrap();
}

#[test]
fn standard_plugins_load_and_run_their_create_sequence() {
    let rt = runtime(1000, 64);
    for name in ["pods", "configmaps", "namespaces", "widgets"] {
        let s = rt.load_file(&common::plugin(name)).unwrap();
        let d = s.description().clone();
        let example = d.example.clone().expect("standard plugins ship an example");
        let out = sequence::create(&s, &example, &sequence::no_meta_validation).unwrap();
        assert_eq!(out.object["kind"], d.kind.as_str(), "{name}");
    }
}

#[test]
fn precompiled_artifacts_are_cached_on_disk_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = RuntimeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        ..RuntimeConfig::default()
    };
    let first = PluginRuntime::new(cfg.clone()).unwrap();
    let a = first.load_file(&common::plugin("widgets")).unwrap();
    let artifacts: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(artifacts.len(), 1, "one artifact per file hash");
    let second = PluginRuntime::new(cfg).unwrap();
    let b = second.load_file(&common::plugin("widgets")).unwrap();
    assert_eq!(a.sha256(), b.sha256());
    assert_eq!(a.description(), b.description());
}

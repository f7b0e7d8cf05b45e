//! The plugin runtime against real components: every bad-input case of the plugin issue gives a
//! clear error naming the plugin and the reason, and the process (and the plugin's next call)
//! keeps working.

use crate::common;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use wasm_apiserver::plugin::{LoadErrorKind, PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{
    sequence, CreateOutcome, ErrorType, FieldError, PluginFault, Strategy, StrategyError,
    StrategyResult,
};

fn runtime(deadline_ms: u64, memory_mib: usize) -> std::sync::Arc<PluginRuntime> {
    PluginRuntime::new(RuntimeConfig {
        call_deadline: Duration::from_millis(deadline_ms),
        memory_limit: memory_mib << 20,
        ..RuntimeConfig::default()
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
    assert!(
        msg.contains("built against wasm-apiserver:strategy@0.4.0"),
        "{msg}"
    );
    assert!(
        msg.contains("implements wasm-apiserver:strategy@0.1.0, wasm-apiserver:strategy@0.2.0 and wasm-apiserver:strategy@0.3.0"),
        "{msg}"
    );
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
fn the_guest_gets_no_environment_files_network_or_clock() {
    let s = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    let out = s.prepare_for_create(&misbehaver("sandbox")).unwrap();
    let a = &out["metadata"]["annotations"];
    assert_eq!(a["env"], "0", "no environment variables: {a}");
    assert_eq!(a["args"], "0", "no arguments: {a}");
    assert_eq!(a["now"], "0", "the wall clock is stopped at the epoch: {a}");
    assert!(
        a["fs"].as_str().unwrap().starts_with("error"),
        "no preopened directory: {a}"
    );
    assert!(
        a["net"].as_str().unwrap().starts_with("error"),
        "no network: {a}"
    );
}

#[test]
fn a_guest_that_sleeps_fails_at_once_instead_of_holding_the_thread() {
    let s = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    let started = Instant::now();
    let msg = fault(s.prepare_for_create(&misbehaver("sleep"))).to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(msg.contains("may not sleep or wait"), "{msg}");
    s.prepare_for_create(&misbehaver("none")).unwrap();
}

#[test]
fn what_a_failing_guest_wrote_to_stderr_is_in_its_fault() {
    let s = runtime(1000, 64)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    // A call that succeeds after writing to stderr leaves nothing behind for the next one.
    s.prepare_for_create(&misbehaver("sandbox")).unwrap();
    let msg = fault(s.prepare_for_create(&misbehaver("stderr"))).to_string();
    assert!(msg.contains("ValueError: bad widget"), "{msg}");
    assert!(!msg.contains("written to stderr"), "{msg}");
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
fn every_fault_is_caught_in_the_fused_create_sequence_too() {
    let s = runtime(300, 32)
        .load_file(&common::plugin("misbehaving"))
        .unwrap();
    for (mode, needle) in [
        ("trap", "asked to trap"),
        ("loop", "deadline"),
        ("alloc", "memory limit"),
        ("badjson", "not JSON"),
        ("notobject", "not a JSON object"),
        ("rename", "metadata.name"),
        ("rekind", "changed kind"),
    ] {
        let f = fault(s.create_sequence(&misbehaver(mode)));
        let msg = f.to_string();
        assert!(
            msg.contains("\"misbehaving\"") && msg.contains("create-sequence"),
            "{mode}: {msg}"
        );
        assert!(msg.contains(needle), "{mode}: {msg}");
        // What the server calls.
        let f = fault(sequence::create(
            &s,
            &misbehaver(mode),
            &sequence::no_meta_validation,
        ));
        assert!(f.to_string().contains(needle), "{mode}: {f}");
        // The next call gets a working instance.
        let ok = sequence::create(&s, &misbehaver("none"), &sequence::no_meta_validation).unwrap();
        assert_eq!(ok.object["metadata"]["name"], "m");
    }
}

/// The create hooks one call each, as `Strategy::create_sequence`'s default runs them.
fn four_calls(s: &dyn Strategy, obj: &Value) -> StrategyResult<CreateOutcome> {
    let prepared = s.prepare_for_create(obj)?;
    let errors = s.validate(&prepared)?;
    if !errors.is_empty() {
        return Ok(CreateOutcome {
            object: prepared,
            errors,
            warnings: Vec::new(),
        });
    }
    let warnings = s.warnings_on_create(&prepared)?;
    let object = s.canonicalize(&prepared)?;
    Ok(CreateOutcome {
        object,
        errors,
        warnings,
    })
}

fn big_pod(name: &str) -> Value {
    let container = |name: &str, image: &str| {
        json!({
            "name": name, "image": image,
            "command": ["/bin/server", "--config", "/etc/app/config.yaml"],
            "ports": [{"name": "http", "containerPort": 8080}],
            "env": [{"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "resources": {"requests": {"cpu": "250m", "memory": "128Mi"},
                          "limits": {"cpu": "0.5", "memory": "268435456"}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}
        })
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "generation": 9,
                     "creationTimestamp": "2026-11-21T08:00:00Z",
                     "labels": {"app": "web", "tier": "frontend"}},
        "spec": {
            "containers": [container("web", "registry.example.dev/web:1.4.2"),
                           container("sidecar", "proxy")],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}, {"name": "scratch"}],
            "schedulingGates": [{"name": "wait"}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone",
                 "matchLabelKeys": ["tier"]}]}}
        },
        "status": {"phase": "Running", "podIP": "10.0.0.1"}
    })
}

#[test]
fn the_fused_create_sequence_gives_what_the_four_hooks_give() {
    let rt = runtime(1000, 64);
    let pods = rt.load_file(&common::plugin("pods")).unwrap();
    let widgets = rt.load_file(&common::plugin("widgets")).unwrap();
    let widget = |spec: Value| {
        json!({"apiVersion": "example.dev/v1", "kind": "Widget",
               "metadata": {"name": "w", "namespace": "default"}, "spec": spec,
               "status": {"phase": "Ready"}})
    };
    let mut invalid_pod = big_pod("bad");
    invalid_pod["spec"]["restartPolicy"] = json!("Sometimes");
    invalid_pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    invalid_pod["spec"]["containers"][1]["name"] = json!("web");
    let mut no_containers = big_pod("empty");
    no_containers["spec"]["containers"] = json!([]);
    let cases: Vec<(&dyn Strategy, Value, bool)> = vec![
        (&pods, pods.description().example.clone().unwrap(), true),
        (&pods, big_pod("web-7d4b9c8f6d-x2x9k"), true),
        // Valid, with the hostname warning.
        (&pods, big_pod("web.example"), true),
        (&pods, invalid_pod, false),
        (&pods, no_containers, false),
        (
            &widgets,
            widgets.description().example.clone().unwrap(),
            true,
        ),
        (&widgets, widget(json!({"size": "medium"})), true),
        // Valid, with the more-than-10-replicas warning.
        (
            &widgets,
            widget(json!({"size": "large", "replicas": 12})),
            true,
        ),
        (&widgets, widget(json!({"size": "huge"})), false),
        (
            &widgets,
            widget(json!({"size": "small", "replicas": 5, "maxReplicas": 2})),
            false,
        ),
    ];
    for (s, obj, valid) in cases {
        let name = format!("{} {}", s.name(), obj["metadata"]["name"]);
        let fused = s.create_sequence(&obj).unwrap();
        assert_eq!(fused, four_calls(s, &obj).unwrap(), "{name}");
        assert_eq!(fused.errors.is_empty(), valid, "{name}: {:?}", fused.errors);
        if obj["metadata"]["name"] == "web.example" || obj["spec"]["replicas"] == 12 {
            assert!(!fused.warnings.is_empty(), "{name}");
        }
        // The server's sequence against the hook-by-hook one, with and without ObjectMeta
        // errors (which take the fallback).
        let no_meta = &sequence::no_meta_validation;
        assert_eq!(
            sequence::create(s, &obj, no_meta),
            sequence::create_in_steps(s, &obj, no_meta),
            "{name}"
        );
        let bad_meta = |_: &Value| {
            vec![FieldError {
                error_type: ErrorType::Invalid,
                field: "metadata.name".into(),
                bad_value: None,
                detail: "host says no".into(),
            }]
        };
        let r = sequence::create(s, &obj, &bad_meta);
        assert_eq!(r, sequence::create_in_steps(s, &obj, &bad_meta), "{name}");
        assert!(r.is_err(), "{name}");
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

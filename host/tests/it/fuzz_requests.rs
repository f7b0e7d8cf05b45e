//! Property-based fuzzing of what a client controls, with a fixed budget so it runs in CI:
//! request body decoding (JSON, YAML, protobuf) and the three patch types (JSON patch, JSON
//! merge patch, strategic merge patch), through the same functions the server calls. Every
//! case must return (no panic, no stack overflow) and allocate at most a bounded amount —
//! measured by a counting allocator around each case.

use proptest::prelude::*;
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use wasm_apiserver::strategy::ResourceDescription;
use wasm_apiserver_apimachinery::GroupResource;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
}

#[global_allocator]
static A: Counting = Counting;

/// One case at a time, so the peak is the case's own.
static SERIAL: Mutex<()> = Mutex::new(());

/// Bytes a case may allocate beyond what was live when it started: a few times the largest
/// document a request can make (3 MiB body, 3 MiB patched object, 3 MiB of copies).
const BUDGET: usize = 64 << 20;

fn bounded<R>(f: impl FnOnce() -> R) -> R {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let r = f();
    let grew = PEAK.load(Ordering::SeqCst).saturating_sub(base);
    assert!(grew <= BUDGET, "a case allocated {grew} bytes");
    r
}

fn description(group: &str) -> ResourceDescription {
    serde_json::from_value(json!({
        "group": group, "version": "v1", "kind": "Thing", "plural": "things",
        "singular": "thing", "listKind": "ThingList", "namespaced": true,
        "shortNames": [], "categories": [], "subresources": [], "printerColumns": [], "selectableFields": [],
        "openapiSchema": {"properties": {"spec": {"properties": {"items": {
            "type": "array", "x-kubernetes-patch-merge-key": "name",
            "x-kubernetes-patch-strategy": "merge", "items": {"properties": {"name": {}}}}}}}},
        "example": null
    }))
    .expect("a description")
}

/// JSON values of bounded size with a bias to the shapes patches touch.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z$/~0-9]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::hash_map(
                "(\\$patch|\\$retainKeys|name|items|spec|a|b|[a-z]{1,3})",
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn pointer() -> impl Strategy<Value = String> {
    prop::collection::vec("(a|b|spec|items|0|1|-|zz|~1|~0)", 0..6)
        .prop_map(|parts| parts.iter().map(|p| format!("/{p}")).collect())
}

fn json_patch_op() -> impl Strategy<Value = Value> {
    prop_oneof![
        (pointer(), value()).prop_map(|(p, v)| json!({"op": "add", "path": p, "value": v})),
        pointer().prop_map(|p| json!({"op": "remove", "path": p})),
        (pointer(), value()).prop_map(|(p, v)| json!({"op": "replace", "path": p, "value": v})),
        (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "move", "from": f, "path": p})),
        (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "copy", "from": f, "path": p})),
        (pointer(), value()).prop_map(|(p, v)| json!({"op": "test", "path": p, "value": v})),
    ]
}

fn current() -> Value {
    json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t"},
           "spec": {"items": [{"name": "a", "v": 1}], "a": {"b": "x".repeat(1024)}}, "zz": [1]})
}

fn apply(ct: &str, body: &[u8], group: &str) {
    let gr = GroupResource::default();
    let d = description(group);
    let applier = wasm_apiserver::server::handlers::patch::Applier {
        field_manager: std::sync::Arc::new(wasm_apiserver::fieldmanager::FieldManager::new(&d)),
        manager: "fuzz".into(),
        subresource: "",
        force: false,
    };
    if let Ok((f, _)) =
        wasm_apiserver::server::handlers::patch::patcher(&d, &gr, ct, body, &applier)
    {
        let _ = f(&current());
        // Apply again onto what the first apply produced (now with managed fields).
        if let Ok(next) = f(&current()) {
            let _ = f(&next);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn json_patches(ops in prop::collection::vec(json_patch_op(), 0..24)) {
        let body = serde_json::to_vec(&ops).unwrap();
        bounded(|| apply("application/json-patch+json", &body, ""));
    }

    #[test]
    fn merge_and_strategic_patches(patch in value()) {
        let body = serde_json::to_vec(&patch).unwrap();
        bounded(|| {
            apply("application/merge-patch+json", &body, "example.dev");
            apply("application/strategic-merge-patch+json", &body, "");
            apply("application/apply-patch+yaml", &body, "");
            // An applied configuration of the right kind reaches the typed merge.
            if let Value::Object(mut m) = patch.clone() {
                m.insert("apiVersion".into(), json!("v1"));
                m.insert("kind".into(), json!("Thing"));
                let body = serde_json::to_vec(&m).unwrap();
                apply("application/apply-patch+yaml", &body, "");
            }
        });
    }

    #[test]
    fn bodies(bytes in prop::collection::vec(any::<u8>(), 0..512), text in "[\\[\\]{}:,\"a-z0-9 \\n-]{0,256}") {
        bounded(|| {
            let _ = wasm_apiserver::server::negotiation::decode_yaml(&bytes);
            let _ = wasm_apiserver::server::negotiation::decode_yaml(text.as_bytes());
            let _ = serde_json::from_slice::<Value>(text.as_bytes());
            let _ = wasm_apiserver::protobuf::decode(&bytes, "v1", "Pod");
            apply("application/json-patch+json", text.as_bytes(), "");
            apply("application/merge-patch+json", &bytes, "");
        });
    }
}

/// The deterministic worst cases the fuzzer would need luck to find: a copy chain that
/// doubles depth, and one that doubles size.
#[test]
fn doubling_copies_are_bounded() {
    let mut v = json!("x");
    for _ in 0..90 {
        v = json!({"a": v});
    }
    let mut ops = vec![json!({"op": "add", "path": "/zz", "value": v})];
    let mut leaf = "/a".repeat(90);
    for _ in 0..8 {
        ops.push(json!({"op": "copy", "from": "/zz", "path": format!("/zz{leaf}/b")}));
        leaf = format!("{leaf}/b{leaf}");
    }
    bounded(|| {
        apply(
            "application/json-patch+json",
            &serde_json::to_vec(&ops).unwrap(),
            "",
        )
    });
    let mut ops = vec![json!({"op": "add", "path": "/a", "value": {"x0": "y".repeat(1024)}})];
    for i in 0..24 {
        ops.push(json!({"op": "copy", "from": "/a", "path": format!("/a/x{}", i + 1)}));
    }
    bounded(|| {
        apply(
            "application/json-patch+json",
            &serde_json::to_vec(&ops).unwrap(),
            "",
        )
    });
}

/// Bodies nested a million levels deep are refused by the decoders' own bounds, without
/// recursion: JSON and YAML (recursion limit 128) and protobuf (prost's limit of 100).
#[test]
fn deeply_nested_bodies_are_refused() {
    let json = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let yaml = "- ".repeat(100_000) + "x";
    bounded(|| assert!(serde_json::from_str::<Value>(&json).is_err()));
    bounded(|| assert!(wasm_apiserver::server::negotiation::decode_yaml(json.as_bytes()).is_err()));
    bounded(|| assert!(wasm_apiserver::server::negotiation::decode_yaml(yaml.as_bytes()).is_err()));
    bounded(|| apply("application/merge-patch+json", json.as_bytes(), ""));
    bounded(|| apply("application/json-patch+json", json.as_bytes(), ""));
    bounded(|| apply("application/apply-patch+yaml", yaml.as_bytes(), ""));
}

/// The YAML shapes that cost the parser most per byte are refused before it runs: 3 MB of
/// nested flow collections (behind a quote in a plain scalar, too) or of compact block
/// sequences (the latter took the parser 800 MB and minutes).
#[test]
fn hostile_yaml_is_refused_cheaply() {
    for body in [
        "[".repeat(3_000_000),
        format!("a: it's\nb: {}", "[".repeat(2_900_000)),
        "- ".repeat(1_500_000) + "x",
        format!("{}a: 1", " ".repeat(3_000_000)),
    ] {
        let started = std::time::Instant::now();
        bounded(|| {
            assert!(wasm_apiserver::server::negotiation::decode_yaml(body.as_bytes()).is_err())
        });
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}

/// A list in any order, and `managedFields` keys in any order, cost the field manager
/// O(n log n), not O(n²): 200,000 finalizers in reverse order applied, then tracked through
/// an update of an object whose `fieldsV1` names them all (found in review: sorted-vector
/// inserts one path at a time took minutes on such input).
#[test]
fn large_unsorted_lists_stay_linearithmic() {
    use wasm_apiserver::fieldmanager::FieldManager;
    let fm = FieldManager::new(&description(""));
    let n = 200_000;
    let finalizers: Vec<String> = (0..n).rev().map(|i| format!("example.dev/f{i}")).collect();
    let applied = json!({"apiVersion": "v1", "kind": "Thing",
        "metadata": {"name": "t", "finalizers": finalizers}});
    let started = std::time::Instant::now();
    let out = fm.apply(&Value::Null, &applied, "a", false, "").unwrap();
    let fields = &out["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:finalizers"];
    assert_eq!(fields.as_object().unwrap().len(), n);
    // An update from that object: its fieldsV1 keys come in string order, not element order.
    let mut changed = out.clone();
    changed["metadata"]["labels"] = json!({"x": "y"});
    let tracked = fm.update(&out, changed, "b", "");
    assert_eq!(
        tracked["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

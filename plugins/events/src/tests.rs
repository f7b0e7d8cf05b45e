use super::*;
use wasm_apiserver_sdk::testing;

fn errors(out: &testing::Outcome) -> Vec<(String, String)> {
    out.errors
        .iter()
        .map(|e| (format!("{:?}", e.error_type), e.field.clone()))
        .collect()
}

#[test]
fn describe_matches_kube_apiserver() {
    for d in [CoreEvents::describe(), EventsV1::describe()] {
        assert_eq!((d.kind.as_str(), d.plural.as_str()), ("Event", "events"));
        assert!(d.namespaced && d.subresources.is_empty());
        assert_eq!(d.short_names, vec!["ev"]);
        let cols: Vec<(&str, i32)> = d
            .printer_columns
            .iter()
            .map(|c| (c.name.as_str(), c.priority))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1)
            ]
        );
    }
    assert_eq!(CoreEvents::describe().api_version(), "v1");
    assert_eq!(EventsV1::describe().api_version(), "events.k8s.io/v1");
    assert!(CoreEvents::describe()
        .selectable_fields
        .contains(&"involvedObject.name".to_string()));
}

#[test]
fn examples_are_valid() {
    let out = testing::create::<CoreEvents>(CoreEvents::describe().example.unwrap());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let out = testing::create::<EventsV1>(EventsV1::describe().example.unwrap());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
}

#[test]
fn the_v1_api_is_strict_where_core_is_legacy() {
    // client-go's legacy recorder: no eventTime, counts and timestamps — fine through core/v1.
    let legacy = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Started", "message": "x", "type": "Normal", "count": 3,
        "firstTimestamp": "2026-11-25T05:00:00Z", "lastTimestamp": "2026-11-25T05:01:00Z"});
    assert!(testing::create::<CoreEvents>(legacy).errors.is_empty());
    // The same through events.k8s.io/v1: eventTime required, legacy fields unset, a type.
    let v1 = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "regarding": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Started", "note": "x", "type": "Sometimes", "deprecatedCount": 3});
    let out = testing::create::<EventsV1>(v1);
    assert_eq!(
        errors(&out),
        vec![
            ("Required".into(), "eventTime".into()),
            ("Invalid".into(), "type".into()),
            ("Invalid".into(), "count".into()),
        ]
    );
}

#[test]
fn events_with_event_time_name_their_reporter() {
    let e = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "other"},
        "involvedObject": {"kind": "Node", "name": "n1"},
        "eventTime": "2026-11-25T05:00:00.000000Z", "type": "Normal",
        "reason": "R".repeat(129)});
    let out = testing::create::<CoreEvents>(e);
    let fields: Vec<String> = out.errors.iter().map(|e| e.field.clone()).collect();
    assert_eq!(
        fields,
        vec![
            "involvedObject.namespace",
            // Required, then IsQualifiedName's two messages for an empty name.
            "reportingComponent",
            "reportingComponent",
            "reportingComponent",
            "reportingInstance",
            "action",
            "reason",
        ],
        "{:?}",
        out.errors
    );
}

#[test]
fn v1_updates_keep_everything_but_the_series() {
    let old = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "eventTime": "2026-11-25T05:00:00.000000Z", "type": "Normal", "action": "Pull",
        "reason": "Pulled", "note": "a", "reportingController": "kubelet", "reportingInstance": "n1",
        "regarding": {"kind": "Pod", "name": "web", "namespace": "default"}});
    let mut new = old.clone();
    new["series"] = json!({"count": 2, "lastObservedTime": "2026-11-25T05:01:00.000000Z"});
    assert!(testing::update::<EventsV1>(new.clone(), old.clone())
        .errors
        .is_empty());
    new["note"] = json!("b");
    let out = testing::update::<EventsV1>(new, old);
    assert_eq!(errors(&out), vec![("Invalid".into(), "message".into())]);
}

#[test]
fn printer_cells_follow_print_event() {
    let e: CoreEvent = serde_json::from_value(json!({
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{web}"},
        "reason": "Pulled", "message": "  done  ", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-a"},
        "firstTimestamp": "2020-01-01T00:00:00Z"}))
    .unwrap();
    let cells = CoreEvents::printer_cells(&e);
    assert_eq!(
        cells[1..7],
        [
            json!("Normal"),
            json!("Pulled"),
            json!("pod/web"),
            json!("spec.containers{web}"),
            json!("kubelet, node-a"),
            json!("done")
        ]
    );
    // No lastTimestamp: LAST SEEN is FIRST SEEN (timestamps; the host shows ages); no count: 1.
    assert_eq!(cells[0], json!("2020-01-01T00:00:00Z"));
    assert_eq!(cells[0], cells[7]);
    assert_eq!(cells[8], json!(1));
    assert_eq!(cells[9], json!("e1"));
}

#[test]
fn selectable_fields_as_kube_reads_them() {
    let obj = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default", "labels": {"a": "b"}},
        "involvedObject": {"kind": "Pod", "name": "web", "uid": "u1"},
        "reportingComponent": "ctrl", "type": "Warning", "reason": "Failed"});
    let a = CoreEvents::get_attrs(&obj);
    let get = |k: &str| {
        a.fields
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("involvedObject.name"), Some("web"));
    assert_eq!(get("involvedObject.uid"), Some("u1"));
    // No source component: `source` reads the reporting controller.
    assert_eq!(get("source"), Some("ctrl"));
    assert_eq!(get("type"), Some("Warning"));
    assert_eq!(a.labels, vec![("a".to_string(), "b".to_string())]);
    let v1 = EventsV1::get_attrs(&json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "regarding": {"kind": "Pod", "name": "web"}, "reportingController": "ctrl"}));
    assert!(v1.fields.contains(&("regarding.name".into(), "web".into())));
    assert!(v1
        .fields
        .contains(&("reportingController".into(), "ctrl".into())));
}

#[test]
fn fixtures() {
    testing::run_fixtures::<CoreEvents>(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/core"));
    testing::run_fixtures::<EventsV1>(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/events"));
}

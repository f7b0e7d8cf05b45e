//! The OpenAPI v3 schemas of `io.k8s.api.core.v1.Event` and `io.k8s.api.events.v1.Event`
//! (field descriptions shortened from staging/src/k8s.io/api/{core,events}/v1/types.go).

use wasm_apiserver_sdk::prelude::*;

fn object_reference(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "apiVersion": {"type": "string", "description": "API version of the referent."},
            "fieldPath": {"type": "string", "description": "If referring to a piece of an object instead of an entire object, a JSON/Go field access statement."},
            "kind": {"type": "string", "description": "Kind of the referent."},
            "name": {"type": "string", "description": "Name of the referent."},
            "namespace": {"type": "string", "description": "Namespace of the referent."},
            "resourceVersion": {"type": "string", "description": "Specific resourceVersion to which this reference is made, if any."},
            "uid": {"type": "string", "description": "UID of the referent."}
        },
        "x-kubernetes-map-type": "atomic"
    })
}

fn event_source(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "component": {"type": "string", "description": "Component from which the event is generated."},
            "host": {"type": "string", "description": "Node name on which the event is generated."}
        }
    })
}

fn series() -> Value {
    json!({"type": "object", "description": "Data about the Event series this event represents.", "properties": {
        "count": {"type": "integer", "format": "int32", "description": "Number of occurrences in this series up to the last heartbeat time."},
        "lastObservedTime": {"type": "string", "format": "date-time", "description": "Time when last Event from the series was seen before last heartbeat."}}})
}

fn time(description: &str) -> Value {
    json!({"type": "string", "format": "date-time", "description": description})
}

fn count(description: &str) -> Value {
    json!({"type": "integer", "format": "int32", "description": description})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn common() -> serde_json::Map<String, Value> {
    json!({
        "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
        "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
        "metadata": {"type": "object", "description": "Standard object's metadata."},
        "action": {"type": "string", "description": "What action was taken/failed regarding to the regarding object."},
        "eventTime": {"type": "string", "format": "date-time", "description": "Time when this Event was first observed."},
        "reason": {"type": "string", "description": "Why the action was taken, in UpperCamelCase."},
        "related": object_reference("Optional secondary object for more complex actions."),
        "reportingInstance": {"type": "string", "description": "ID of the controller instance, e.g. `kubelet-xyzf`."},
        "type": {"type": "string", "description": "Type of this event (Normal, Warning), new types could be added in the future."}
    })
    .as_object()
    .cloned()
    .unwrap_or_default()
}

/// `io.k8s.api.core.v1.Event`.
pub fn core_event() -> Value {
    let mut p = common();
    for (k, v) in [
        (
            "involvedObject",
            object_reference("The object that this event is about."),
        ),
        (
            "message",
            string("A human-readable description of the status of this operation."),
        ),
        (
            "source",
            event_source("The component reporting this event."),
        ),
        (
            "firstTimestamp",
            time("The time at which the event was first recorded."),
        ),
        (
            "lastTimestamp",
            time("The time at which the most recent occurrence of this event was recorded."),
        ),
        (
            "count",
            count("The number of times this event has occurred."),
        ),
        (
            "reportingComponent",
            string("Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`."),
        ),
        ("series", series()),
    ] {
        p.insert(k.into(), v);
    }
    event(p)
}

/// `io.k8s.api.events.v1.Event`.
pub fn events_v1_event() -> Value {
    const DEPRECATED: &str =
        "The deprecated field assuring backward compatibility with core.v1 Event type.";
    let mut p = common();
    for (k, v) in [
        ("regarding", object_reference("The object this Event is about.")),
        ("note", string("A human-readable description of the status of this operation. Maximal length of the note is 1kB.")),
        ("deprecatedSource", event_source(DEPRECATED)),
        ("deprecatedFirstTimestamp", time(DEPRECATED)),
        ("deprecatedLastTimestamp", time(DEPRECATED)),
        ("deprecatedCount", count(DEPRECATED)),
        ("reportingController", string("The name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.")),
        ("series", series()),
    ] {
        p.insert(k.into(), v);
    }
    event(p)
}

fn event(properties: serde_json::Map<String, Value>) -> Value {
    json!({
        "type": "object",
        "description": "Event is a report of an event somewhere in the cluster.",
        "properties": properties
    })
}

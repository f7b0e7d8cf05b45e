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
            json!({"type": "string", "description": "A human-readable description of the status of this operation."}),
        ),
        (
            "source",
            event_source("The component reporting this event."),
        ),
        (
            "firstTimestamp",
            json!({"type": "string", "format": "date-time", "description": "The time at which the event was first recorded."}),
        ),
        (
            "lastTimestamp",
            json!({"type": "string", "format": "date-time", "description": "The time at which the most recent occurrence of this event was recorded."}),
        ),
        (
            "count",
            json!({"type": "integer", "format": "int32", "description": "The number of times this event has occurred."}),
        ),
        (
            "reportingComponent",
            json!({"type": "string", "description": "Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`."}),
        ),
        (
            "series",
            json!({"type": "object", "description": "Data about the Event series this event represents.", "properties": {
            "count": {"type": "integer", "format": "int32"},
            "lastObservedTime": {"type": "string", "format": "date-time"}}}),
        ),
    ] {
        p.insert(k.into(), v);
    }
    json!({
        "type": "object",
        "description": "Event is a report of an event somewhere in the cluster.",
        "properties": p
    })
}

/// `io.k8s.api.events.v1.Event`.
pub fn events_v1_event() -> Value {
    let mut p = common();
    for (k, v) in [
        (
            "regarding",
            object_reference("The object this Event is about."),
        ),
        (
            "note",
            json!({"type": "string", "description": "A human-readable description of the status of this operation. Maximal length of the note is 1kB."}),
        ),
        (
            "deprecatedSource",
            event_source(
                "The deprecated field assuring backward compatibility with core.v1 Event type.",
            ),
        ),
        (
            "deprecatedFirstTimestamp",
            json!({"type": "string", "format": "date-time", "description": "The deprecated field assuring backward compatibility with core.v1 Event type."}),
        ),
        (
            "deprecatedLastTimestamp",
            json!({"type": "string", "format": "date-time", "description": "The deprecated field assuring backward compatibility with core.v1 Event type."}),
        ),
        (
            "deprecatedCount",
            json!({"type": "integer", "format": "int32", "description": "The deprecated field assuring backward compatibility with core.v1 Event type."}),
        ),
        (
            "reportingController",
            json!({"type": "string", "description": "The name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`."}),
        ),
        (
            "series",
            json!({"type": "object", "description": "Data about the Event series this event represents.", "properties": {
            "count": {"type": "integer", "format": "int32"},
            "lastObservedTime": {"type": "string", "format": "date-time"}}}),
        ),
    ] {
        p.insert(k.into(), v);
    }
    json!({
        "type": "object",
        "description": "Event is a report of an event somewhere in the cluster.",
        "properties": p
    })
}

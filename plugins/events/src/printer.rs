//! `printEvent` (`pkg/printers/internalversion/printers.go`, `eventColumnDefinitions`): the
//! same Table for both APIs, from the internal event. LAST SEEN and FIRST SEEN are `date`
//! columns whose cells are timestamps: the host renders them as ages (kube's are `string`
//! columns of ages computed by the printer; a plugin has no clock).

use crate::internal::InternalEvent;
use wasm_apiserver_sdk::k8s_openapi::jiff::Timestamp;
use wasm_apiserver_sdk::prelude::*;

/// The columns: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; with `-o wide` also SUBOBJECT,
/// SOURCE, FIRST SEEN, COUNT and NAME, in kube's order.
pub fn columns() -> Vec<PrinterColumn> {
    vec![
        PrinterColumn::computed("Last Seen", "date")
            .describe("The time at which the most recent occurrence of this event was recorded."),
        PrinterColumn::computed("Type", "string")
            .describe("Type of this event (Normal, Warning), new types could be added in the future"),
        PrinterColumn::computed("Reason", "string").describe(
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        PrinterColumn::computed("Object", "string").describe("The object that this event is about."),
        PrinterColumn::computed("Subobject", "string").wide().describe(
            "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
        ),
        PrinterColumn::computed("Source", "string")
            .wide()
            .describe("The component reporting this event. Should be a short machine understandable string."),
        PrinterColumn::computed("Message", "string")
            .describe("A human-readable description of the status of this operation."),
        PrinterColumn::computed("First Seen", "date")
            .wide()
            .describe("The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"),
        // printers.go declares "string" and fills an int64: the cell is a JSON integer here.
        PrinterColumn::computed("Count", "integer")
            .wide()
            .describe("The number of times this event has occurred."),
        PrinterColumn::name().wide(),
    ]
}

/// A time for a `date` cell (the host renders it as an age, `<unknown>` when unset, as
/// `translateTimestampSince`).
fn at(t: Option<Timestamp>) -> Value {
    t.map_or(Value::Null, |t| json!(t.to_string()))
}

fn first_non_empty<'a>(a: Option<&'a str>, b: &'a str) -> &'a str {
    a.filter(|x| !x.is_empty()).unwrap_or(b)
}

/// The cells of every column (the host keeps the ones the request shows).
pub fn cells(e: &InternalEvent) -> Vec<Value> {
    let first = match &e.first_timestamp {
        Some(t) => at(Some(t.0)),
        None => at(e.event_time.as_ref().map(|t| t.0)),
    };
    let mut last = match &e.last_timestamp {
        Some(t) => at(Some(t.0)),
        None => first.clone(),
    };
    let mut count = e.count;
    if let Some((series_count, observed)) = &e.series {
        last = at(observed.as_ref().map(|t| t.0));
        count = *series_count;
    } else if count == 0 {
        count = 1;
    }
    let o = &e.involved_object;
    let kind = o.kind.as_deref().unwrap_or("").to_lowercase();
    let target = match o.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    };
    let component = first_non_empty(e.source.component.as_deref(), &e.reporting_controller);
    let instance = first_non_empty(e.source.host.as_deref(), &e.reporting_instance);
    let source = if instance.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        last,
        json!(e.type_),
        json!(e.reason),
        json!(target),
        json!(o.field_path.as_deref().unwrap_or("")),
        json!(source),
        json!(e.message.trim()),
        first,
        json!(count as i64),
        json!(e.name),
    ]
}

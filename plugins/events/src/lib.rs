//! Events: the standard strategy plugins of `core/v1` `Event` and `events.k8s.io/v1` `Event`,
//! ports of kube-apiserver's
//! - `pkg/registry/core/event/strategy.go` (no-op prepare hooks, `AllowCreateOnUpdate` true,
//!   `AllowUnconditionalUpdate` true, no status, no generation; the selectable fields of
//!   `ToSelectableFields`: `involvedObject.*`, `reason`, `reportingComponent`, `source`,
//!   `type`);
//! - `pkg/apis/core/validation/events.go` (`validation.rs`), run on kube's internal event
//!   (`internal.rs`) with the request's API deciding between legacy and strict rules;
//! - `pkg/printers/internalversion/printers.go` (`printEvent`, `printer.rs`).
//!
//! One crate, one component per API: build with feature `core` (`events.wasm`) or
//! `events-k8s-io` (`events-k8s-io.wasm`). kube serves the two APIs from one storage; here
//! each has its own (a resource is served by one plugin under one group), so an event written
//! through one API is not listed through the other. kube also gives events a TTL
//! (`--event-ttl`, 1 h); stored events here stay until deleted (or their namespace goes).

pub mod events_v1;
pub mod internal;
pub mod printer;
pub mod validation;

use events_v1::EventV1;
use internal::InternalEvent;
use validation::{validate_event_create, validate_event_update, RequestVersion};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::Event as CoreEvent;
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::Attributes;

#[cfg(feature = "core")]
wasm_apiserver_sdk::export_strategy!(CoreEvents);
#[cfg(feature = "events-k8s-io")]
wasm_apiserver_sdk::export_strategy!(EventsV1);

/// `ToSelectableFields` of kube's event strategy, from the internal event.
fn selectable(e: &InternalEvent, names: &[&str]) -> Vec<(String, String)> {
    let o = &e.involved_object;
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let source = match e.source.component.as_deref() {
        Some(c) if !c.is_empty() => c.to_string(),
        _ => e.reporting_controller.clone(),
    };
    let values = [
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.uid),
        s(&o.api_version),
        s(&o.resource_version),
        s(&o.field_path),
        e.reason.clone(),
        e.reporting_controller.clone(),
        source,
        e.type_.clone(),
    ];
    names
        .iter()
        .zip(values)
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, v)| (name.to_string(), v))
        .collect()
}

/// The selectable fields of `core/v1` events, in [`selectable`]'s order.
const CORE_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// The selectable fields of `events.k8s.io/v1` events (its field label conversions,
/// `pkg/apis/events/v1/conversion.go`), in [`selectable`]'s order; `source` has no name here.
const EVENTS_V1_FIELDS: &[&str] = &[
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "",
    "type",
];

fn names(fields: &[&str]) -> Vec<String> {
    fields
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| n.to_string())
        .collect()
}

/// What differs between the two Event APIs; the strategy is one ([`EventStrategy`]).
pub trait EventApi: 'static {
    /// The API's object.
    type Object: serde::Serialize + serde::de::DeserializeOwned;
    /// Which rules apply.
    const VERSION: RequestVersion;
    /// Its selectable fields, in [`selectable`]'s order (`""`: none for that value).
    const FIELDS: &'static [&'static str];
    /// Group, version, schema and example.
    fn describe() -> ResourceDescription;
    /// kube's internal event of the object.
    fn internal(obj: &Self::Object) -> InternalEvent;
}

/// The event strategy of API `A`.
pub struct EventStrategy<A>(std::marker::PhantomData<A>);

/// `core/v1` events.
pub type CoreEvents = EventStrategy<Core>;
/// `events.k8s.io/v1` events.
pub type EventsV1 = EventStrategy<V1>;

impl<A: EventApi> Strategy for EventStrategy<A> {
    type Object = A::Object;

    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            short_names: vec!["ev".into()],
            subresources: vec![],
            printer_columns: printer::columns(),
            selectable_fields: names(A::FIELDS),
            ..A::describe()
        }
    }

    fn validate(e: &A::Object) -> ErrorList {
        validate_event_create(&A::internal(e), A::VERSION)
    }

    fn allow_create_on_update() -> bool {
        true
    }

    fn allow_unconditional_update() -> bool {
        true
    }

    fn validate_update(new: &A::Object, old: &A::Object) -> ErrorList {
        validate_event_update(&A::internal(new), &A::internal(old), A::VERSION)
    }

    fn printer_cells(e: &A::Object) -> Vec<Value> {
        printer::cells(&A::internal(e))
    }

    fn get_attrs(obj: &Value) -> Attributes {
        let fields = serde_json::from_value::<A::Object>(obj.clone())
            .map(|e| selectable(&A::internal(&e), A::FIELDS))
            .unwrap_or_default();
        Attributes {
            labels: wasm_apiserver_sdk::glue::default_attrs(obj, &[]).labels,
            fields,
        }
    }
}

/// `core/v1` `Event`.
pub struct Core;

impl EventApi for Core {
    type Object = CoreEvent;
    const VERSION: RequestVersion = RequestVersion::CoreV1;
    const FIELDS: &'static [&'static str] = CORE_FIELDS;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            openapi_schema: schema::core_event(),
            example: Some(json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "web.17f0a1b2c3d4e5f6", "namespace": "default"},
                "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "apiVersion": "v1"},
                "reason": "Scheduled", "message": "Successfully assigned default/web to node-a",
                "source": {"component": "default-scheduler"}, "type": "Normal", "count": 1,
                "firstTimestamp": "2026-11-25T05:00:00Z", "lastTimestamp": "2026-11-25T05:00:00Z"
            })),
            ..ResourceDescription::new("", "v1", "Event", "events")
        }
    }

    fn internal(e: &CoreEvent) -> InternalEvent {
        e.into()
    }
}

/// `events.k8s.io/v1` `Event`.
pub struct V1;

impl EventApi for V1 {
    type Object = EventV1;
    const VERSION: RequestVersion = RequestVersion::EventsV1;
    const FIELDS: &'static [&'static str] = EVENTS_V1_FIELDS;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            openapi_schema: schema::events_v1_event(),
            example: Some(json!({
                "apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": "web.17f0a1b2c3d4e5f6", "namespace": "default"},
                "eventTime": "2026-11-25T05:00:00.000000Z",
                "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "apiVersion": "v1"},
                "reason": "Scheduled", "note": "Successfully assigned default/web to node-a",
                "action": "Binding", "type": "Normal",
                "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-node-a"
            })),
            ..ResourceDescription::new("events.k8s.io", "v1", "Event", "events")
        }
    }

    fn internal(e: &EventV1) -> InternalEvent {
        e.into()
    }
}

pub mod schema;

#[cfg(test)]
mod tests;

//! kube's internal `core.Event` (`pkg/apis/core/types.go`), the one type both APIs convert to
//! before validation and printing (`pkg/apis/events/v1/conversion.go` maps `regarding` →
//! `involvedObject`, `note` → `message`, `deprecated*` → the legacy fields,
//! `reportingController` → `reportingComponent`). Field paths of errors use its names, as
//! kube's do for both APIs.

use crate::events_v1::EventV1;
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{
    Event as CoreEvent, EventSeries, EventSource, ObjectReference,
};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};

/// The fields validation and printing read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InternalEvent {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `involvedObject` (`regarding`).
    pub involved_object: ObjectReference,
    /// `reason`.
    pub reason: String,
    /// `message` (`note`).
    pub message: String,
    /// `source` (`deprecatedSource`).
    pub source: EventSource,
    /// `firstTimestamp` (`deprecatedFirstTimestamp`).
    pub first_timestamp: Option<Time>,
    /// `lastTimestamp` (`deprecatedLastTimestamp`).
    pub last_timestamp: Option<Time>,
    /// `count` (`deprecatedCount`); 0 when unset.
    pub count: i32,
    /// `eventTime`.
    pub event_time: Option<MicroTime>,
    /// `series`: count and lastObservedTime.
    pub series: Option<(i32, Option<MicroTime>)>,
    /// `type`.
    pub type_: String,
    /// `action`.
    pub action: String,
    /// `related`.
    pub related: Option<ObjectReference>,
    /// `reportingComponent` (`reportingController`).
    pub reporting_controller: String,
    /// `reportingInstance`.
    pub reporting_instance: String,
}

fn s(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

impl From<&CoreEvent> for InternalEvent {
    fn from(e: &CoreEvent) -> InternalEvent {
        InternalEvent {
            name: s(&e.metadata.name),
            namespace: s(&e.metadata.namespace),
            involved_object: e.involved_object.clone(),
            reason: s(&e.reason),
            message: s(&e.message),
            source: e.source.clone().unwrap_or_default(),
            first_timestamp: e.first_timestamp.clone(),
            last_timestamp: e.last_timestamp.clone(),
            count: e.count.unwrap_or(0),
            event_time: e.event_time.clone(),
            series: e
                .series
                .as_ref()
                .map(|x: &EventSeries| (x.count.unwrap_or(0), x.last_observed_time.clone())),
            type_: s(&e.type_),
            action: s(&e.action),
            related: e.related.clone(),
            reporting_controller: s(&e.reporting_component),
            reporting_instance: s(&e.reporting_instance),
        }
    }
}

impl From<&EventV1> for InternalEvent {
    fn from(e: &EventV1) -> InternalEvent {
        InternalEvent {
            name: s(&e.metadata.name),
            namespace: s(&e.metadata.namespace),
            involved_object: e.regarding.clone().unwrap_or_default(),
            reason: s(&e.reason),
            message: s(&e.note),
            source: e.deprecated_source.clone().unwrap_or_default(),
            first_timestamp: e.deprecated_first_timestamp.clone(),
            last_timestamp: e.deprecated_last_timestamp.clone(),
            count: e.deprecated_count.unwrap_or(0),
            event_time: e.event_time.clone(),
            series: e
                .series
                .as_ref()
                .map(|x| (x.count.unwrap_or(0), x.last_observed_time.clone())),
            type_: s(&e.type_),
            action: s(&e.action),
            related: e.related.clone(),
            reporting_controller: s(&e.reporting_controller),
            reporting_instance: s(&e.reporting_instance),
        }
    }
}

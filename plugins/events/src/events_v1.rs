//! `events.k8s.io/v1` `Event` (`staging/src/k8s.io/api/events/v1/types.go`) with every field
//! optional: k8s-openapi's type requires `eventTime`, so an event without one would be a
//! decoding error (400) where kube answers 422 `eventTime: Required value`.

use serde::{Deserialize, Serialize};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{EventSource, ObjectReference};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    MicroTime, ObjectMeta, Time,
};

/// `events.k8s.io/v1` `Event`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventV1 {
    /// `apiVersion`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `metadata`.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `action`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// `deprecatedCount`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated_count: Option<i32>,
    /// `deprecatedFirstTimestamp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated_first_timestamp: Option<Time>,
    /// `deprecatedLastTimestamp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated_last_timestamp: Option<Time>,
    /// `deprecatedSource`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated_source: Option<EventSource>,
    /// `eventTime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
    /// `note`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `reason`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `regarding`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regarding: Option<ObjectReference>,
    /// `related`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<ObjectReference>,
    /// `reportingController`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reporting_controller: Option<String>,
    /// `reportingInstance`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reporting_instance: Option<String>,
    /// `series`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<EventSeriesV1>,
    /// `type`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// `events.k8s.io/v1` `EventSeries` (both fields required by the schema, optional here for
/// the same reason).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSeriesV1 {
    /// `count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// `lastObservedTime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_observed_time: Option<MicroTime>,
}

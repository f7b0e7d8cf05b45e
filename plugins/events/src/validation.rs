//! `pkg/apis/core/validation/events.go`: `ValidateEventCreate`, `ValidateEventUpdate` and
//! `legacyValidateEvent`, on kube's internal event ([`InternalEvent`]). Through `core/v1`
//! only the legacy rules apply (kube keeps them for old clients); through
//! `events.k8s.io/v1` the strict ones too. (`ValidateObjectMeta` is the host's.)

use crate::internal::InternalEvent;
use wasm_apiserver_sdk::prelude::*;

/// `ReportingInstanceLengthLimit`.
pub const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
/// `ActionLengthLimit`.
pub const ACTION_LENGTH_LIMIT: usize = 128;
/// `ReasonLengthLimit`.
pub const REASON_LENGTH_LIMIT: usize = 128;
/// `NoteLengthLimit`.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// Which API the request came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestVersion {
    /// `core/v1` (`/api/v1/.../events`).
    CoreV1,
    /// `events.k8s.io/v1`.
    EventsV1,
}

/// `ValidateEventCreate`.
pub fn validate_event_create(e: &InternalEvent, version: RequestVersion) -> ErrorList {
    let mut errs = legacy_validate_event(e, version);
    if version == RequestVersion::CoreV1 {
        return errs;
    }
    errs.extend(validate_v1_event_series(e));
    if e.event_time.is_none() {
        errs.push(field::required(&Path::new("eventTime"), ""));
    }
    if e.type_ != "Normal" && e.type_ != "Warning" {
        errs.push(field::invalid(
            &Path::new("type"),
            "",
            format!("has invalid value: {}", e.type_),
        ));
    }
    if e.first_timestamp.is_some() {
        errs.push(field::invalid(
            &Path::new("firstTimestamp"),
            "",
            "needs to be unset",
        ));
    }
    if e.last_timestamp.is_some() {
        errs.push(field::invalid(
            &Path::new("lastTimestamp"),
            "",
            "needs to be unset",
        ));
    }
    if e.count != 0 {
        errs.push(field::invalid(&Path::new("count"), "", "needs to be unset"));
    }
    let source_set = e.source.component.as_deref().is_some_and(|c| !c.is_empty())
        || e.source.host.as_deref().is_some_and(|h| !h.is_empty());
    if source_set {
        errs.push(field::invalid(
            &Path::new("source"),
            "",
            "needs to be unset",
        ));
    }
    errs
}

/// `ValidateEventUpdate`: the legacy rules on the new event; through `events.k8s.io/v1` the
/// series rules and every field but the series immutable.
pub fn validate_event_update(
    new: &InternalEvent,
    old: &InternalEvent,
    version: RequestVersion,
) -> ErrorList {
    let mut errs = legacy_validate_event(new, version);
    if version == RequestVersion::CoreV1 {
        return errs;
    }
    errs.extend(validate_v1_event_series(new));
    let mut immutable = |name: &str, same: bool, value: Value| {
        if !same {
            errs.push(field::invalid(
                &Path::new(name),
                value,
                "field is immutable",
            ));
        }
    };
    immutable(
        "involvedObject",
        new.involved_object == old.involved_object,
        j(&new.involved_object),
    );
    immutable("reason", new.reason == old.reason, json!(new.reason));
    immutable("message", new.message == old.message, json!(new.message));
    immutable("source", new.source == old.source, j(&new.source));
    immutable(
        "firstTimestamp",
        new.first_timestamp == old.first_timestamp,
        j(&new.first_timestamp),
    );
    immutable(
        "lastTimestamp",
        new.last_timestamp == old.last_timestamp,
        j(&new.last_timestamp),
    );
    immutable("count", new.count == old.count, json!(new.count));
    immutable("type", new.type_ == old.type_, json!(new.type_));
    immutable(
        "eventTime",
        new.event_time == old.event_time,
        j(&new.event_time),
    );
    immutable("action", new.action == old.action, json!(new.action));
    immutable("related", new.related == old.related, j(&new.related));
    immutable(
        "reportingController",
        new.reporting_controller == old.reporting_controller,
        json!(new.reporting_controller),
    );
    immutable(
        "reportingInstance",
        new.reporting_instance == old.reporting_instance,
        json!(new.reporting_instance),
    );
    errs
}

/// A compared field's value for its error.
fn j<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}

fn validate_v1_event_series(e: &InternalEvent) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some((count, last_observed)) = &e.series {
        if *count < 2 {
            errs.push(field::invalid(
                &Path::new("series.count"),
                "",
                "should be at least 2",
            ));
        }
        if last_observed.is_none() {
            errs.push(field::required(&Path::new("series.lastObservedTime"), ""));
        }
    }
    errs
}

/// `legacyValidateEvent`: namespaces agree with the involved object's; events with an
/// `eventTime` name their reporter, action and reason within the length limits; the
/// namespace is a DNS-1123 subdomain.
pub fn legacy_validate_event(e: &InternalEvent, version: RequestVersion) -> ErrorList {
    let mut errs = ErrorList::new();
    let reporting_field = if version == RequestVersion::CoreV1 {
        "reportingComponent"
    } else {
        "reportingController"
    };
    let involved_ns = e.involved_object.namespace.as_deref().unwrap_or("");
    let ns_path = Path::new("involvedObject").child("namespace");
    let mismatch = |errs: &mut ErrorList| {
        errs.push(field::invalid(
            &ns_path,
            involved_ns,
            "does not match event.namespace",
        ))
    };
    if e.event_time.is_none() {
        if involved_ns.is_empty() {
            // event.Namespace must also be empty (or "default", for old clients).
            if !e.namespace.is_empty() && e.namespace != "default" {
                mismatch(&mut errs);
            }
        } else if e.namespace != involved_ns {
            mismatch(&mut errs);
        }
    } else {
        if involved_ns.is_empty() && e.namespace != "default" && e.namespace != "kube-system" {
            mismatch(&mut errs);
        }
        let rc = Path::new(reporting_field);
        if e.reporting_controller.is_empty() {
            errs.push(field::required(&rc, ""));
        }
        for msg in validation::is_qualified_name(&e.reporting_controller) {
            errs.push(field::invalid(&rc, &e.reporting_controller, msg));
        }
        let limits = [
            (
                "reportingInstance",
                &e.reporting_instance,
                REPORTING_INSTANCE_LENGTH_LIMIT,
                true,
            ),
            ("action", &e.action, ACTION_LENGTH_LIMIT, true),
            ("reason", &e.reason, REASON_LENGTH_LIMIT, true),
            ("message", &e.message, NOTE_LENGTH_LIMIT, false),
        ];
        for (name, value, limit, required) in limits {
            if required && value.is_empty() {
                errs.push(field::required(&Path::new(name), ""));
            }
            if value.len() > limit {
                errs.push(field::invalid(
                    &Path::new(name),
                    "",
                    format!("can have at most {limit} characters"),
                ));
            }
        }
    }
    for msg in validation::is_dns1123_subdomain(&e.namespace) {
        errs.push(field::invalid(&Path::new("namespace"), &e.namespace, msg));
    }
    errs
}

//! `metadata.managedFields` decoded into field sets per manager and encoded back
//! (`k8s.io/apimachinery/pkg/util/managedfields/internal/managedfields.go`): entries are
//! validated as kube validates them (operation `Apply` or `Update`, an `apiVersion`,
//! `fieldsType: FieldsV1`, a well-formed `fieldsV1`), keyed by their manager identifier, and
//! written back sorted (apply entries first, then by time, manager, apiVersion, subresource).

use super::set::Set;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `metav1.ManagedFieldsEntry`, with its JSON field names and order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedFieldsEntry {
    /// The manager's name (`fieldManager`, or derived from the User-Agent).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manager: String,
    /// `Apply` or `Update`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operation: String,
    /// The version of the resource the field set is expressed in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// When the entry last changed (RFC 3339, seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// `FieldsV1`, the only format.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fields_type: String,
    /// The field set ([`Set`]'s `FieldsV1` JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields_v1: Option<Value>,
    /// The subresource the writes went through (`status`, `scale`), empty for the object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The operation of apply entries.
pub const APPLY: &str = "Apply";
/// The operation of every other write's entries.
pub const UPDATE: &str = "Update";

/// `fieldpath.VersionedSet`: a manager's fields, the version they are expressed in, and
/// whether they were applied.
#[derive(Clone, Debug, PartialEq)]
pub struct VersionedSet {
    /// The fields.
    pub set: Set,
    /// The resource version (`apps/v1`) the paths refer to.
    pub api_version: String,
    /// Whether this is an `Apply` entry.
    pub applied: bool,
}

/// `ManagedInterface`: every manager's fields and last change time, keyed by manager
/// identifier ([`manager_identifier`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Managed {
    /// Fields per manager identifier.
    pub fields: BTreeMap<String, VersionedSet>,
    /// Time per manager identifier.
    pub times: BTreeMap<String, Option<String>>,
}

/// `BuildManagerIdentifier`: the entry's JSON without `fieldsType`, `fieldsV1`, `time`, and for
/// apply entries without `apiVersion` (one apply identity across versions), e.g.
/// `{"manager":"kubectl","operation":"Update","apiVersion":"v1"}`.
pub fn manager_identifier(entry: &ManagedFieldsEntry) -> String {
    let mut id = entry.clone();
    id.fields_type.clear();
    id.fields_v1 = None;
    id.time = None;
    if id.operation == APPLY {
        id.api_version.clear();
    }
    serde_json::to_string(&id).unwrap_or_default()
}

/// `DecodeManagedFields`. Errors (kube's messages; a request carrying such `managedFields` is
/// answered 400): an operation other than `Apply`/`Update`, an empty `apiVersion`, a missing
/// or other `fieldsType`, a `fieldsV1` that is not a field set.
pub fn decode_managed_fields(entries: &[ManagedFieldsEntry]) -> Result<Managed, String> {
    let mut managed = Managed::default();
    for (i, entry) in entries.iter().enumerate() {
        if entry.operation != APPLY && entry.operation != UPDATE {
            return Err("operation must be `Apply` or `Update`".into());
        }
        if entry.api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match entry.fields_type.as_str() {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ))
            }
        }
        let id = manager_identifier(entry);
        // A missing set is the empty one (`EmptyFields`).
        let set = match &entry.fields_v1 {
            None | Some(Value::Null) => Ok(Set::new()),
            Some(v) => Set::from_fields_v1_value(v),
        }
        .map_err(|e| {
            format!("error decoding versioned set from entry {i}: error decoding set: {e}")
        })?;
        managed.fields.insert(
            id.clone(),
            VersionedSet {
                set,
                api_version: entry.api_version.clone(),
                applied: entry.operation == APPLY,
            },
        );
        managed.times.insert(id, entry.time.clone());
    }
    Ok(managed)
}

/// `encodeManagedFields`: one entry per manager, sorted as kube sorts them
/// ([`sort_managed_fields`]); empty when there are no managers.
pub fn encode_managed_fields(managed: &Managed) -> Vec<ManagedFieldsEntry> {
    let mut out: Vec<ManagedFieldsEntry> = managed
        .fields
        .iter()
        .map(|(id, vs)| {
            let mut e: ManagedFieldsEntry = serde_json::from_str(id).unwrap_or_default();
            e.api_version = vs.api_version.clone();
            if vs.applied {
                e.operation = APPLY.into();
            }
            e.fields_type = "FieldsV1".into();
            e.fields_v1 = serde_json::from_str(&vs.set.to_fields_v1()).ok();
            e.time = managed.times.get(id).cloned().flatten();
            e
        })
        .collect();
    sort_managed_fields(&mut out);
    out
}

/// `sortEncodedManagedFields`: by operation (`Apply` before `Update`), then time in whole
/// seconds (none first), manager, apiVersion, subresource.
pub fn sort_managed_fields(entries: &mut [ManagedFieldsEntry]) {
    let seconds = |t: &Option<String>| {
        t.as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map_or(0, |t| t.timestamp())
    };
    entries.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| seconds(&p.time).cmp(&seconds(&q.time)))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(yaml: &str) -> Vec<ManagedFieldsEntry> {
        serde_yaml_ng::from_str::<Option<Vec<ManagedFieldsEntry>>>(yaml)
            .unwrap()
            .unwrap_or_default()
    }

    /// `TestHasFieldsType`, `TestHasAPIVersion`, `TestHasOperation`.
    #[test]
    fn invalid_entries_are_refused() {
        let ok = "- apiVersion: v1\n  fieldsType: FieldsV1\n  fieldsV1:\n    f:field: {}\n  manager: foo\n  operation: Apply\n";
        assert!(decode_managed_fields(&entries(ok)).is_ok());
        for (bad, want) in [
            (
                ok.replace("FieldsV1\n  fieldsV1", "FieldsV2\n  fieldsV1"),
                "invalid fieldsType \"FieldsV2\" in managed fields entry 0",
            ),
            (
                ok.replace("  fieldsType: FieldsV1\n", ""),
                "missing fieldsType in managed fields entry 0",
            ),
            (
                ok.replace("- apiVersion: v1\n  fieldsType", "- fieldsType"),
                "apiVersion must not be empty",
            ),
            (
                ok.replace("operation: Apply", "operation: Invalid"),
                "operation must be `Apply` or `Update`",
            ),
            (
                ok.replace("  operation: Apply\n", ""),
                "operation must be `Apply` or `Update`",
            ),
        ] {
            assert_eq!(
                decode_managed_fields(&entries(&bad)).unwrap_err(),
                want,
                "{bad}"
            );
        }
        let broken = ok.replace("f:field: {}", "i:field: {}");
        assert!(decode_managed_fields(&entries(&broken)).is_err());
        // An unknown element type is skipped, not refused (newer writers, older readers).
        let future = ok.replace("f:field: {}", "x:field: 1");
        assert!(decode_managed_fields(&entries(&future)).is_ok());
    }

    /// `TestRoundTripManagedFields` (cases of it): decode then encode gives the same entries.
    #[test]
    fn managed_fields_round_trip() {
        for yaml in [
            "null\n",
            "- apiVersion: v1\n  fieldsType: FieldsV1\n  fieldsV1:\n    v:3:\n      f:alsoPi: {}\n    v:3.1415:\n      f:pi: {}\n    v:false:\n      f:notTrue: {}\n  manager: foo\n  operation: Update\n  time: \"2001-02-03T04:05:06Z\"\n- apiVersion: v1beta1\n  fieldsType: FieldsV1\n  fieldsV1:\n    i:5:\n      f:i: {}\n  manager: foo\n  operation: Update\n  time: \"2011-12-13T14:15:16Z\"\n",
            "- apiVersion: v1\n  fieldsType: FieldsV1\n  fieldsV1:\n    f:spec:\n      f:containers:\n        k:{\"name\":\"c\"}:\n          f:image: {}\n          f:name: {}\n  manager: foo\n  operation: Apply\n",
            "- apiVersion: v1\n  fieldsType: FieldsV1\n  fieldsV1:\n    f:apiVersion: {}\n    f:spec:\n      f:template:\n        f:spec:\n          f:containers:\n            k:{\"name\":\"nginx\"}:\n              .: {}\n              f:image: {}\n              f:ports:\n                i:0:\n                  f:containerPort: {}\n  manager: foo\n  operation: Update\n",
            "- apiVersion: v1\n  fieldsType: FieldsV1\n  fieldsV1:\n    f:status: {}\n  manager: foo\n  operation: Update\n  subresource: status\n  time: \"2001-02-03T04:05:06Z\"\n",
        ] {
            let input = entries(yaml);
            let managed = decode_managed_fields(&input).unwrap();
            let output = encode_managed_fields(&managed);
            assert_eq!(
                serde_json::to_value(&output).unwrap(),
                serde_json::to_value(&input).unwrap(),
                "{yaml}"
            );
        }
    }

    /// `TestBuildManagerIdentifier`.
    #[test]
    fn manager_identifiers_are_kubes() {
        for (yaml, want) in [
            ("apiVersion: v1\nfieldsV1:\n  f:apiVersion: {}\nmanager: foo\noperation: Update\ntime: \"2001-02-03T04:05:06Z\"\n", r#"{"manager":"foo","operation":"Update","apiVersion":"v1"}"#),
            ("apiVersion: v1\nfieldsV1:\n  f:apiVersion: {}\nmanager: foo\noperation: Apply\ntime: \"2001-02-03T04:05:06Z\"\n", r#"{"manager":"foo","operation":"Apply"}"#),
            ("apiVersion: v1\nfieldsV1:\n  f:apiVersion: {}\nmanager: foo\noperation: Apply\nsubresource: scale\ntime: \"2001-02-03T04:05:06Z\"\n", r#"{"manager":"foo","operation":"Apply","subresource":"scale"}"#),
        ] {
            let e: ManagedFieldsEntry = serde_yaml_ng::from_str(yaml).unwrap();
            assert_eq!(manager_identifier(&e), want);
        }
    }

    /// `TestSortEncodedManagedFields` ("manager sorted", "apply first", "newest last").
    #[test]
    fn entries_sort_as_kube_sorts_them() {
        let e = |m: &str, op: &str, t: Option<&str>| ManagedFieldsEntry {
            manager: m.into(),
            operation: op.into(),
            time: t.map(str::to_string),
            ..Default::default()
        };
        let (t1, t2, t3) = (
            Some("2001-01-01T01:00:00Z"),
            Some("2002-01-01T01:00:00Z"),
            Some("2003-01-01T01:00:00Z"),
        );
        let mut got = vec![
            e("c", UPDATE, t1),
            e("a", APPLY, None),
            e("g", APPLY, None),
            e("f", UPDATE, t2),
            e("i", APPLY, None),
            e("d", UPDATE, t2),
            e("h", APPLY, None),
            e("e", UPDATE, t3),
            e("b", APPLY, None),
        ];
        sort_managed_fields(&mut got);
        let order: Vec<&str> = got.iter().map(|e| e.manager.as_str()).collect();
        assert_eq!(order, ["a", "b", "g", "h", "i", "c", "d", "f", "e"]);
        let mut got = vec![e("a", UPDATE, t1), e("a", APPLY, None)];
        sort_managed_fields(&mut got);
        assert_eq!(got[0].operation, APPLY);
        // Nanoseconds do not count: equal seconds fall back to the manager's name.
        let mut got = vec![
            e("b", UPDATE, Some("2001-01-01T01:00:00.5Z")),
            e("a", UPDATE, Some("2001-01-01T01:00:00.9Z")),
        ];
        sort_managed_fields(&mut got);
        assert_eq!(got[0].manager, "a");
    }
}

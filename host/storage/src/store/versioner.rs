//! The resourceVersion of stored objects (`k8s.io/apiserver/pkg/storage/etcd3`
//! `APIObjectVersioner`): parsed from clients, stamped on objects read at a revision, and never
//! stored (`PrepareObjectForStorage`: the encoded object leaves out `resourceVersion` and
//! `selfLink`).

use crate::errors::{Result, StorageError};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// `ParseResourceVersion`: `""` and `"0"` are 0. Errors: not a `u64`.
pub fn parse_resource_version(rv: &str) -> Result<u64> {
    if rv.is_empty() {
        return Ok(0);
    }
    rv.parse::<u64>()
        .map_err(|_| StorageError::invalid_resource_version(rv))
}

/// Serializes an object as `serde_json` does, without `metadata.resourceVersion` and
/// `metadata.selfLink`.
pub(crate) struct ForStorage<'a>(pub(crate) &'a Value);

/// Serializes a `metadata` map without `resourceVersion` and `selfLink`.
struct MetadataForStorage<'a>(&'a serde_json::Map<String, Value>);

/// Fields of `metadata` that are never stored.
fn unstored(field: &str) -> bool {
    field == "resourceVersion" || field == "selfLink"
}

impl Serialize for ForStorage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let Value::Object(obj) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(obj.len()))?;
        for (k, v) in obj {
            match v {
                Value::Object(meta) if k == "metadata" => {
                    map.serialize_entry(k, &MetadataForStorage(meta))?
                }
                _ => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

impl Serialize for MetadataForStorage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let len = self.0.keys().filter(|k| !unstored(k)).count();
        let mut map = serializer.serialize_map(Some(len))?;
        for (k, v) in self.0.iter().filter(|(k, _)| !unstored(k)) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The object in `data` (an encoded object read at `key`) with resourceVersion `rev`
/// (etcd3 store.go `decode`). Errors: [`StorageError::CorruptObj`] when `data` is not JSON.
pub(crate) fn parse_object(data: &[u8], key: &str, rev: i64) -> Result<Value> {
    let mut obj: Value = serde_json::from_slice(data).map_err(|e| StorageError::CorruptObj {
        key: key.to_string(),
        detail: e.to_string(),
    })?;
    set_resource_version(&mut obj, rev);
    Ok(obj)
}

pub(crate) fn set_resource_version(obj: &mut Value, rev: i64) {
    if let Some(m) = obj.as_object_mut() {
        // `entry` allocates its key: look `metadata` up first (it is almost always there).
        if !m.contains_key("metadata") {
            m.insert("metadata".into(), Value::Object(Default::default()));
        }
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            if rev > 0 {
                meta.insert("resourceVersion".into(), Value::String(rev.to_string()));
            } else {
                meta.remove("resourceVersion");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resource_versions_parse_like_kubernetes() {
        assert_eq!(parse_resource_version("").unwrap(), 0);
        assert_eq!(parse_resource_version("0").unwrap(), 0);
        assert_eq!(parse_resource_version("42").unwrap(), 42);
        assert!(parse_resource_version("abc").is_err());
        assert!(parse_resource_version("-1").is_err());
        assert!(parse_resource_version("99999999999999999999999").is_err());
    }

    #[test]
    fn objects_are_encoded_for_storage_as_a_stripped_copy_would_be() {
        let cases = [
            json!({"kind": "Pod", "metadata": {"name": "a", "resourceVersion": "5", "selfLink": "/x", "uid": "u"}, "spec": {"b": [1, 2.5, null, true]}}),
            json!({"metadata": {"resourceVersion": "5"}}),
            json!({"metadata": {"selfLink": "/x", "resourceVersion": "5"}, "a": {"resourceVersion": "7"}}),
            json!({"metadata": {}}),
            json!({"metadata": "not an object", "resourceVersion": "1"}),
            json!({"a": "\u{1}\"é"}),
            json!({}),
            json!([1, {"metadata": {"resourceVersion": "1"}}]),
            json!("text"),
            Value::Null,
        ];
        for obj in cases {
            let mut copy = obj.clone();
            if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
                meta.remove("selfLink");
            }
            assert_eq!(
                serde_json::to_vec(&ForStorage(&obj)).unwrap(),
                serde_json::to_vec(&copy).unwrap(),
                "{obj}"
            );
        }
    }
}

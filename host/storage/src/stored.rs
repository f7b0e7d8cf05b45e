//! Objects of a list or a watch event as the storage returned them: the stored bytes and
//! their revision, decoded only when someone needs the object.
//!
//! kube-apiserver's etcd3 `GetList` (k8s.io/apiserver/pkg/storage/etcd3/store.go,
//! `appendListItem`) decodes every object it lists and sets its resourceVersion from the key's
//! `mod_revision`. For an unfiltered list nothing in storage needs the decoded object, so
//! [`crate::store::KvStore`] hands out [`SharedObject::Stored`] instead: the bytes move from the
//! backend's response into the item without a copy, and [`SharedObject::write_json`] writes the
//! response straight from them, adding `metadata.resourceVersion` (stored objects never carry
//! one: `KvStore` strips it before writing, as etcd3's `versioner.PrepareObjectForStorage`
//! does). Watch events of an unfiltered watch are handed out the same way (etcd3
//! watcher.go's `transform` decodes them). The watch cache keeps and hands out the stored
//! objects it was given, shared: every list and every watcher gets the same `Arc`.

use crate::errors::StorageError;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// An object as stored: the bytes (after the value transformer's `from_storage`) of `key`,
/// written at revision `resource_version`. Not validated: a corrupt value is found when the
/// object is decoded ([`StorageError::CorruptObj`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredObject {
    /// The full storage key, e.g. `/registry/pods/default/web` (for error messages).
    pub key: String,
    /// The stored JSON, without `metadata.resourceVersion`.
    pub data: Vec<u8>,
    /// The key's `mod_revision`: the object's resourceVersion.
    pub resource_version: u64,
}

impl StoredObject {
    /// The decoded object with `metadata.resourceVersion` set (a `metadata` map is added when
    /// missing, as etcd3's versioner does). Errors: [`StorageError::CorruptObj`] when the bytes
    /// are not JSON.
    pub fn decode(&self) -> Result<Value, StorageError> {
        crate::store::versioner::parse_object(&self.data, &self.key, self.resource_version as i64)
    }

    /// Appends the object as JSON, with `metadata.resourceVersion`, to `out` — the same
    /// object [`StoredObject::decode`] returns, without building it: the stored members are
    /// copied as they are and `"resourceVersion":"<rv>"` is added as the first member of
    /// `metadata`. Objects the splice cannot handle (escaped keys, a `metadata` that is not an
    /// object or already has a resourceVersion) take the decode path. On error `out` is left
    /// as it was.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), StorageError> {
        let start = out.len();
        if self.splice_into(out).is_none() {
            out.truncate(start);
            let obj = self.decode()?;
            serde_json::to_writer(&mut *out, &obj).map_err(|e| StorageError::CorruptObj {
                key: self.key.clone(),
                detail: e.to_string(),
            })?;
        }
        Ok(())
    }

    /// The fast path of [`StoredObject::write_json`]; `None` = use the decode path.
    fn splice_into(&self, out: &mut Vec<u8>) -> Option<()> {
        let members = serde_json::from_slice::<Members>(&self.data).ok()?.0;
        out.reserve(self.data.len() + 40);
        out.push(b'{');
        let mut saw_metadata = false;
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            // A borrowed key had no escapes, so it is written back as it was read.
            out.push(b'"');
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
            if *k == "metadata" {
                if saw_metadata {
                    return None;
                }
                saw_metadata = true;
                let meta = serde_json::from_str::<Members>(v.get()).ok()?.0;
                if meta.iter().any(|(k, _)| *k == "resourceVersion") {
                    return None;
                }
                self.write_metadata(out, &meta);
            } else {
                out.extend_from_slice(v.get().as_bytes());
            }
        }
        if !saw_metadata {
            if !members.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"metadata\":");
            self.write_metadata(out, &[]);
        }
        out.push(b'}');
        Some(())
    }

    fn write_metadata(&self, out: &mut Vec<u8>, members: &[(&str, &RawValue)]) {
        out.extend_from_slice(b"{\"resourceVersion\":\"");
        out.extend_from_slice(self.resource_version.to_string().as_bytes());
        out.push(b'"');
        for (k, v) in members {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
            out.extend_from_slice(v.get().as_bytes());
        }
        out.push(b'}');
    }
}

/// The members of a JSON object, keys and values borrowed from the input (fails on a key with
/// escapes, which cannot be borrowed, and on anything that is not an object).
struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'a>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// One object of a [`crate::SharedListResult`] or a [`crate::WatchEvent`]: decoded and
/// shared, or as stored.
#[derive(Clone, Debug, PartialEq)]
pub enum SharedObject {
    /// A decoded object with its `metadata.resourceVersion`, shared without copying (objects a
    /// filtered read decoded to evaluate its selector).
    Decoded(Arc<Value>),
    /// The stored bytes, decoded on demand (an unfiltered list or watch read from the
    /// backend).
    Stored(Arc<StoredObject>),
}

impl SharedObject {
    /// The object, decoded if needed. Errors: [`StorageError::CorruptObj`].
    pub fn to_arc(&self) -> Result<Arc<Value>, StorageError> {
        match self {
            SharedObject::Decoded(v) => Ok(v.clone()),
            SharedObject::Stored(s) => s.decode().map(Arc::new),
        }
    }

    /// The object, owned: moved out when this item holds the only reference, else copied
    /// or decoded. Errors: [`StorageError::CorruptObj`].
    pub fn into_value(self) -> Result<Value, StorageError> {
        match self {
            SharedObject::Decoded(v) => Ok(Arc::try_unwrap(v).unwrap_or_else(|v| (*v).clone())),
            SharedObject::Stored(s) => s.decode(),
        }
    }

    /// Appends the object as JSON to `out` (see [`StoredObject::write_json`]).
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), StorageError> {
        match self {
            SharedObject::Decoded(v) => serde_json::to_writer(&mut *out, &**v)
                .map_err(|e| StorageError::Internal(format!("unable to encode an object: {e}"))),
            SharedObject::Stored(s) => s.write_json(out),
        }
    }
}

/// Compares the object (a stored one is decoded; one that does not decode equals nothing).
impl PartialEq<Value> for SharedObject {
    fn eq(&self, other: &Value) -> bool {
        match self {
            SharedObject::Decoded(v) => **v == *other,
            SharedObject::Stored(s) => s.decode().is_ok_and(|v| v == *other),
        }
    }
}

impl From<Arc<Value>> for SharedObject {
    fn from(v: Arc<Value>) -> Self {
        SharedObject::Decoded(v)
    }
}

impl From<Value> for SharedObject {
    fn from(v: Value) -> Self {
        SharedObject::Decoded(Arc::new(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(data: &str, rv: u64) -> StoredObject {
        StoredObject {
            key: "/registry/pods/default/a".into(),
            data: data.as_bytes().to_vec(),
            resource_version: rv,
        }
    }

    /// `write_json` must produce exactly the object `decode` produces, on the fast path and on
    /// every fallback.
    #[test]
    fn write_json_equals_decode() {
        let cases = [
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"i"}]}}"#,
            r#"{"kind":"Pod","metadata":{}}"#,
            r#"{"kind":"Pod"}"#,
            r#"{}"#,
            r#" { "kind" : "Pod" , "metadata" : { "name" : "a" } , "n" : [1, 2.5, null, true] } "#,
            // Fallbacks: an escaped key, a stale resourceVersion, a metadata that is not a map.
            r#"{"ki\u006ed":"Pod","metadata":{"name":"a"}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","resourceVersion":"3"}}"#,
            r#"{"kind":"Pod","metadata":null}"#,
            r#"{"kind":"Pod","metadata":{"name":"a\"b","ann":{"k\\e":"v"}}}"#,
        ];
        for data in cases {
            let s = stored(data, 42);
            let mut out = b"prefix".to_vec();
            s.write_json(&mut out).unwrap();
            assert_eq!(&out[..6], b"prefix");
            let written: Value = serde_json::from_slice(&out[6..])
                .unwrap_or_else(|e| panic!("{data}: invalid output {e}"));
            assert_eq!(written, s.decode().unwrap(), "{data}");
            if !written["metadata"].is_null() {
                assert_eq!(
                    written["metadata"]["resourceVersion"],
                    json!("42"),
                    "{data}"
                );
            }
        }
    }

    /// The fast path copies the stored members as they are (a decode would reorder them).
    #[test]
    fn write_json_splices_without_decoding() {
        let s = stored(
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","uid":"u"},"x":1.50}"#,
            9,
        );
        let mut out = Vec::new();
        s.write_json(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9","name":"a","uid":"u"},"x":1.50}"#
        );
    }

    #[test]
    fn corrupt_objects_are_errors_and_leave_out_unchanged() {
        for data in ["{\"kind\":", "not json", "{\"kind\":\"Pod\"} trailing"] {
            let s = stored(data, 7);
            let mut out = b"x".to_vec();
            let err = s.write_json(&mut out);
            assert!(
                matches!(err, Err(StorageError::CorruptObj { .. })),
                "{data}: {err:?}"
            );
            assert_eq!(out, b"x");
        }
    }
}

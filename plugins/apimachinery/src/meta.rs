//! An object's `metadata` read and written in place: `meta.Accessor`
//! (`k8s.io/apimachinery/pkg/api/meta/meta.go`) over the JSON value the host, the storage and
//! the controllers pass around — one way to read a name, a resourceVersion or the finalizers,
//! instead of a path into the value at each use. Reads never fail: a missing or mistyped field
//! reads as empty (`""`, `None`, no items), as Go's zero values do.

use serde_json::{Map, Value};

/// A read view of `obj.metadata`.
#[derive(Clone, Copy, Debug)]
pub struct Meta<'a> {
    m: Option<&'a Map<String, Value>>,
}

/// The read view of `obj`'s metadata (empty when `obj` has none).
pub fn accessor(obj: &Value) -> Meta<'_> {
    Meta {
        m: obj.get("metadata").and_then(Value::as_object),
    }
}

impl<'a> Meta<'a> {
    /// A string field (`""` when absent or not a string).
    pub fn str(&self, field: &str) -> &'a str {
        self.get(field).and_then(Value::as_str).unwrap_or("")
    }

    /// A field as stored.
    pub fn get(&self, field: &str) -> Option<&'a Value> {
        self.m.and_then(|m| m.get(field))
    }

    /// `metadata.name`.
    pub fn name(&self) -> &'a str {
        self.str("name")
    }

    /// `metadata.generateName`.
    pub fn generate_name(&self) -> &'a str {
        self.str("generateName")
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &'a str {
        self.str("namespace")
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> &'a str {
        self.str("uid")
    }

    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> &'a str {
        self.str("resourceVersion")
    }

    /// `metadata.creationTimestamp`.
    pub fn creation_timestamp(&self) -> &'a str {
        self.str("creationTimestamp")
    }

    /// `metadata.deletionTimestamp` (`""`: not being deleted).
    pub fn deletion_timestamp(&self) -> &'a str {
        self.str("deletionTimestamp")
    }

    /// Whether the object is being deleted (it has a `deletionTimestamp`).
    pub fn is_terminating(&self) -> bool {
        !self.deletion_timestamp().is_empty()
    }

    /// `metadata.deletionGracePeriodSeconds`.
    pub fn deletion_grace_period_seconds(&self) -> Option<i64> {
        self.get("deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
    }

    /// `metadata.generation`.
    pub fn generation(&self) -> Option<i64> {
        self.get("generation").and_then(Value::as_i64)
    }

    /// `metadata.finalizers` (entries that are not strings skipped).
    pub fn finalizers(&self) -> Vec<String> {
        self.items("finalizers")
            .iter()
            .filter_map(|f| f.as_str().map(String::from))
            .collect()
    }

    /// `metadata.ownerReferences`, as stored.
    pub fn owner_references(&self) -> &'a [Value] {
        self.items("ownerReferences")
    }

    /// `metadata.labels` (`None` when absent).
    pub fn labels(&self) -> Option<&'a Map<String, Value>> {
        self.get("labels").and_then(Value::as_object)
    }

    /// `metadata.annotations` (`None` when absent).
    pub fn annotations(&self) -> Option<&'a Map<String, Value>> {
        self.get("annotations").and_then(Value::as_object)
    }

    /// One label's value (`""` when absent).
    pub fn label(&self, key: &str) -> &'a str {
        self.labels()
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// One annotation's value (`""` when absent).
    pub fn annotation(&self, key: &str) -> &'a str {
        self.annotations()
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn items(&self, field: &str) -> &'a [Value] {
        self.get(field)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
}

/// A write view of `obj.metadata`.
#[derive(Debug)]
pub struct MetaMut<'a> {
    m: &'a mut Map<String, Value>,
}

/// The write view of `obj`'s metadata, created (or replaced, when not an object) if needed.
/// Panics if `obj` itself is not a JSON object (the HTTP layer only lets objects through).
pub fn accessor_mut(obj: &mut Value) -> MetaMut<'_> {
    let m = obj
        .as_object_mut()
        .expect("objects are JSON objects")
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    MetaMut {
        m: m.as_object_mut().expect("just made an object"),
    }
}

impl<'a> MetaMut<'a> {
    /// Set `field` to `value`.
    pub fn set(&mut self, field: &str, value: impl Into<Value>) {
        self.m.insert(field.to_string(), value.into());
    }

    /// Remove `field`, returning what it held.
    pub fn remove(&mut self, field: &str) -> Option<Value> {
        self.m.remove(field)
    }

    /// Set `metadata.name`.
    pub fn set_name(&mut self, name: &str) {
        self.set("name", name);
    }

    /// Set `metadata.resourceVersion`.
    pub fn set_resource_version(&mut self, rv: &str) {
        self.set("resourceVersion", rv);
    }

    /// Set `metadata.finalizers`; an empty list removes the field (as kube omits it).
    pub fn set_finalizers(&mut self, finalizers: &[String]) {
        if finalizers.is_empty() {
            self.m.remove("finalizers");
        } else {
            self.set("finalizers", finalizers.to_vec());
        }
    }

    /// The metadata map itself.
    pub fn into_map(self) -> &'a mut Map<String, Value> {
        self.m
    }
}

/// `BeforeUpdate`'s restoration around `PrepareForUpdate`
/// (k8s.io/apiserver/pkg/registry/rest/update.go): uid (if empty), creationTimestamp,
/// deletionTimestamp (if old has one) and deletionGracePeriodSeconds (if new has none) come from
/// `old`. The host runs it between the update hooks; a plugin's `update-sequence` runs it in
/// their place (`wit/0.3.0/strategy.wit`).
pub fn restore_from_old(new: &mut Value, old: &Value) {
    let empty = Map::new();
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let m = accessor_mut(new).into_map();
    if m.get("uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        if let Some(u) = old_meta.get("uid") {
            m.insert("uid".into(), u.clone());
        }
    }
    match old_meta.get("creationTimestamp") {
        Some(t) => {
            m.insert("creationTimestamp".into(), t.clone());
        }
        None => {
            m.remove("creationTimestamp");
        }
    }
    if let Some(t) = old_meta.get("deletionTimestamp") {
        m.insert("deletionTimestamp".into(), t.clone());
    }
    if m.get("deletionGracePeriodSeconds")
        .is_none_or(Value::is_null)
    {
        if let Some(g) = old_meta.get("deletionGracePeriodSeconds") {
            m.insert("deletionGracePeriodSeconds".into(), g.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_are_zero_values_when_absent_or_mistyped() {
        let o = json!({"metadata": {"name": "a", "uid": 7, "finalizers": ["x", 1, "y"],
                                    "generation": 3, "labels": {"k": "v"}}});
        let m = accessor(&o);
        assert_eq!((m.name(), m.uid(), m.namespace()), ("a", "", ""));
        assert_eq!(m.finalizers(), ["x", "y"]);
        assert_eq!(m.generation(), Some(3));
        assert_eq!((m.label("k"), m.label("z")), ("v", ""));
        assert!(!m.is_terminating() && m.owner_references().is_empty());
        let none = json!("not an object");
        assert_eq!(accessor(&none).name(), "");
    }

    #[test]
    fn writes_create_metadata() {
        let mut o = json!({"metadata": "garbage"});
        accessor_mut(&mut o).set_name("b");
        accessor_mut(&mut o).set_finalizers(&["f".into()]);
        assert_eq!(o, json!({"metadata": {"name": "b", "finalizers": ["f"]}}));
        accessor_mut(&mut o).set_finalizers(&[]);
        assert_eq!(accessor_mut(&mut o).remove("name"), Some(json!("b")));
        assert_eq!(o, json!({"metadata": {}}));
    }
}

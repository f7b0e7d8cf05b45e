//! The structure an object's fields are merged and owned by: structured-merge-diff's `schema`
//! (`Atom`: scalar, list with its element relationship, map/struct), built from a plugin's
//! OpenAPI v3 schema the way kube-openapi's `schemaconv` (builtin types) and apiextensions'
//! structural schemas (custom resources) build it:
//!
//! - `x-kubernetes-list-type`: `atomic` (the default), `set` (items named by value), `map`
//!   with `x-kubernetes-list-map-keys` (items named by their key fields; a key field's
//!   `default` stands in when an item omits it, as `getAssociativeKeyDefault` does);
//! - without a list type, `x-kubernetes-patch-strategy: merge` makes the list associative by
//!   `x-kubernetes-patch-merge-key` (a set when there is none), as `schemaconv` does for
//!   builtin types generated from their patch tags;
//! - `x-kubernetes-map-type: atomic` makes an object one leaf; objects are granular otherwise;
//! - an object's fields not in `properties` (and `additionalProperties: true`,
//!   `x-kubernetes-preserve-unknown-fields`, or no structure at all) are *deduced*:
//!   maps granular, lists atomic, as kube does for schemaless custom resources
//!   (`typed.DeducedParseableType`).
//!
//! `metadata` is always kube's `ObjectMeta` (labels and annotations granular maps,
//! `finalizers` a set, `ownerReferences` a map keyed by `uid`), whatever the plugin says.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A node of the schema.
#[derive(Debug)]
pub enum Schema {
    /// A leaf: strings, numbers, booleans, int-or-string.
    Scalar,
    /// A list and how its items are identified.
    List(ListSchema),
    /// An object: declared fields, the type of any other key, and whether it is one leaf.
    Map(MapSchema),
    /// No structure declared (`__untyped_deduced_`): a map is granular with deduced values,
    /// a list atomic, anything else a scalar.
    Deduced,
}

/// How a list's items are identified (`schema.ElementRelationship` with its keys).
#[derive(Debug, Clone, PartialEq)]
pub enum ListType {
    /// Replaced as a whole; owned as one leaf.
    Atomic,
    /// Items are scalars named by their value (`v:`).
    Set,
    /// Items are objects named by these key fields (`k:`), with each key's default.
    Map(Vec<(String, Option<Value>)>),
}

/// A list.
#[derive(Debug)]
pub struct ListSchema {
    /// The items' schema.
    pub items: Arc<Schema>,
    /// How items are identified.
    pub list_type: ListType,
}

/// An object (struct or map).
#[derive(Debug)]
pub struct MapSchema {
    /// Declared fields (`properties`).
    pub fields: HashMap<String, Arc<Schema>>,
    /// The schema of keys not declared (`additionalProperties`; deduced when unstated).
    pub elem: Arc<Schema>,
    /// `x-kubernetes-map-type: atomic`.
    pub atomic: bool,
}

impl MapSchema {
    /// The schema of the value under `key`.
    pub fn child(&self, key: &str) -> &Arc<Schema> {
        self.fields.get(key).unwrap_or(&self.elem)
    }

    /// Whether `key` is a declared field (`Map.FindField`).
    pub fn declares(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }
}

/// The shape a value is handled as at one node (`deduceAtom`): a leaf, or a list or map walked
/// by its items. A value whose JSON type does not match its schema is a leaf.
pub enum Atom<'a> {
    /// Compared, merged and owned as a whole.
    Leaf,
    /// A list walked by the items' names.
    List(&'a ListSchema),
    /// A map walked by its keys.
    Map(MapView<'a>),
}

/// A map node: either declared, or deduced (every key of deduced type).
#[derive(Clone, Copy)]
pub enum MapView<'a> {
    /// A declared object.
    Declared(&'a MapSchema),
    /// A map under a deduced node.
    Deduced,
}

static DEDUCED: std::sync::LazyLock<Arc<Schema>> =
    std::sync::LazyLock::new(|| Arc::new(Schema::Deduced));

/// The deduced schema (`__untyped_deduced_`).
pub fn deduced() -> &'static Arc<Schema> {
    &DEDUCED
}

impl<'a> MapView<'a> {
    /// The schema of the value under `key`.
    pub fn child(self, key: &str) -> &'a Arc<Schema> {
        match self {
            MapView::Declared(m) => m.child(key),
            MapView::Deduced => deduced(),
        }
    }

    /// Whether `key` is a declared field.
    pub fn declares(self, key: &str) -> bool {
        matches!(self, MapView::Declared(m) if m.declares(key))
    }

    /// Whether the map is one leaf.
    pub fn atomic(self) -> bool {
        matches!(self, MapView::Declared(m) if m.atomic)
    }
}

impl Schema {
    /// How `v` is handled at this node (`deduceAtom` + `handleAtom`).
    pub fn atom(&self, v: &Value) -> Atom<'_> {
        match (self, v) {
            (Schema::List(l), Value::Array(_)) => Atom::List(l),
            (Schema::Map(m), Value::Object(_)) => Atom::Map(MapView::Declared(m)),
            (Schema::Deduced, Value::Object(_)) => Atom::Map(MapView::Deduced),
            _ => Atom::Leaf,
        }
    }

    /// The schema of a served resource: the plugin's OpenAPI v3 schema of the kind, with
    /// `metadata` as kube's `ObjectMeta` and `apiVersion`/`kind` scalars.
    pub fn for_resource(openapi: &Value) -> Schema {
        let mut root = match Schema::from_openapi(openapi) {
            Schema::Map(m) => m,
            _ => MapSchema {
                fields: HashMap::new(),
                elem: deduced().clone(),
                atomic: false,
            },
        };
        root.atomic = false;
        root.fields.insert(
            "metadata".into(),
            Arc::new(Schema::from_openapi(&object_meta())),
        );
        for f in ["apiVersion", "kind"] {
            root.fields.insert(f.into(), Arc::new(Schema::Scalar));
        }
        Schema::Map(root)
    }

    /// Convert one OpenAPI v3 schema node (see the module docs for the rules).
    pub fn from_openapi(s: &Value) -> Schema {
        let ext = |k: &str| s.get(k);
        if ext("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return Schema::Scalar;
        }
        let ty = s.get("type").and_then(Value::as_str).unwrap_or("");
        let properties = s.get("properties").and_then(Value::as_object);
        let additional = s.get("additionalProperties");
        if ty == "object" || properties.is_some() || additional.is_some_and(Value::is_object) {
            let fields: HashMap<String, Arc<Schema>> = properties
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| (k.clone(), Arc::new(Schema::from_openapi(v))))
                        .collect()
                })
                .unwrap_or_default();
            let elem = match additional {
                Some(a @ Value::Object(_)) => Arc::new(Schema::from_openapi(a)),
                _ => deduced().clone(),
            };
            let atomic = ext("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
            return Schema::Map(MapSchema {
                fields,
                elem,
                atomic,
            });
        }
        if ty == "array" || s.get("items").is_some() {
            let items = match s.get("items") {
                Some(i @ Value::Object(_)) => Schema::from_openapi(i),
                _ => Schema::Deduced,
            };
            let list_type = list_type(s);
            return Schema::List(ListSchema {
                items: Arc::new(items),
                list_type,
            });
        }
        match ty {
            "string" | "integer" | "number" | "boolean" => Schema::Scalar,
            _ => Schema::Deduced,
        }
    }
}

/// `getListElementRelationship` (kube-openapi `schemaconv`): the list type, else the patch
/// strategy, else atomic.
fn list_type(s: &Value) -> ListType {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => return ListType::Set,
        Some("map") => {
            let names: Vec<String> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|k| k.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            // Without keys, items are named by value (`listItemToPathElement`).
            return keys_with_defaults(s, names).unwrap_or(ListType::Set);
        }
        Some(_) => return ListType::Atomic,
        None => {}
    }
    let merge = s
        .get("x-kubernetes-patch-strategy")
        .and_then(Value::as_str)
        .is_some_and(|p| p.split(',').any(|p| p == "merge"));
    if !merge {
        return ListType::Atomic;
    }
    match s
        .get("x-kubernetes-patch-merge-key")
        .and_then(Value::as_str)
    {
        Some(key) => keys_with_defaults(s, vec![key.to_string()]).unwrap_or(ListType::Atomic),
        None => ListType::Set,
    }
}

/// Key fields with the `default` the item schema gives each.
fn keys_with_defaults(s: &Value, names: Vec<String>) -> Option<ListType> {
    if names.is_empty() {
        return None;
    }
    let props = s.pointer("/items/properties");
    Some(ListType::Map(
        names
            .into_iter()
            .map(|k| {
                let default = props
                    .and_then(|p| p.get(&k))
                    .and_then(|f| f.get("default"))
                    .cloned();
                (k, default)
            })
            .collect(),
    ))
}

/// kube's `ObjectMeta` as field management sees it (`k8s.io/apimachinery/pkg/apis/meta/v1`
/// `types.go` markers: `finalizers` `+listType=set`, `ownerReferences` `+listType=map`
/// `+listMapKey=uid`, `managedFields` atomic).
fn object_meta() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"}, "generateName": {"type": "string"},
            "namespace": {"type": "string"}, "uid": {"type": "string"},
            "resourceVersion": {"type": "string"}, "generation": {"type": "integer"},
            "creationTimestamp": {"type": "string"}, "deletionTimestamp": {"type": "string"},
            "deletionGracePeriodSeconds": {"type": "integer"}, "selfLink": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ownerReferences": {
                "type": "array",
                "items": {"type": "object", "properties": {
                    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                    "name": {"type": "string"}, "uid": {"type": "string"},
                    "controller": {"type": "boolean"}, "blockOwnerDeletion": {"type": "boolean"}}},
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"]
            },
            "managedFields": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "atomic"}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_types_follow_schemaconv() {
        let s = |v: Value| match Schema::from_openapi(&v) {
            Schema::List(l) => l.list_type,
            other => panic!("{other:?}"),
        };
        assert_eq!(s(json!({"type": "array"})), ListType::Atomic);
        assert_eq!(
            s(json!({"type": "array", "x-kubernetes-list-type": "set"})),
            ListType::Set
        );
        assert_eq!(
            s(json!({"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                      "items": {"properties": {"protocol": {"type": "string", "default": "TCP"}}}})),
            ListType::Map(vec![
                ("containerPort".into(), None),
                ("protocol".into(), Some(json!("TCP")))
            ])
        );
        // Builtin types without a list type: the patch strategy decides.
        assert_eq!(
            s(
                json!({"type": "array", "x-kubernetes-patch-strategy": "merge",
                      "x-kubernetes-patch-merge-key": "name"})
            ),
            ListType::Map(vec![("name".into(), None)])
        );
        assert_eq!(
            s(json!({"type": "array", "x-kubernetes-patch-strategy": "merge,retainKeys"})),
            ListType::Set
        );
        // The list type wins over the patch strategy.
        assert_eq!(
            s(json!({"type": "array", "x-kubernetes-list-type": "atomic",
                      "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"})),
            ListType::Atomic
        );
    }

    #[test]
    fn maps_and_metadata() {
        let root = Schema::for_resource(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "data": {"type": "object", "additionalProperties": {"type": "string"}}}}));
        let Schema::Map(m) = &root else { panic!() };
        assert!(matches!(&**m.child("spec"), Schema::Map(s) if s.atomic));
        assert!(matches!(&**m.child("data"), Schema::Map(d) if matches!(&*d.elem, Schema::Scalar)));
        assert!(matches!(&**m.child("other"), Schema::Deduced));
        let Schema::Map(meta) = &**m.child("metadata") else {
            panic!()
        };
        assert!(
            matches!(&**meta.child("finalizers"), Schema::List(l) if l.list_type == ListType::Set)
        );
        assert!(
            matches!(&**meta.child("ownerReferences"), Schema::List(l) if l.list_type == ListType::Map(vec![("uid".into(), None)]))
        );
        // A value whose JSON type does not match is a leaf.
        assert!(matches!(m.child("spec").atom(&json!("x")), Atom::Leaf));
    }
}

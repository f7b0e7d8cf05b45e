//! A structural schema (`apiextensions-apiserver/pkg/apiserver/schema/structural.go`): the
//! parts of a CRD version's `openAPIV3Schema` that shape its data — types, properties, items,
//! `additionalProperties`, `nullable`, `default` and the `x-kubernetes-*` extensions — read
//! from the schema's JSON. A node keeps its own value validations (`maximum`, `enum`, …) in
//! [`Structural::raw`] for schema validation, its children and its junctors parsed beside them.

use serde_json::Value as Json;
use std::collections::BTreeMap;

/// One node of a structural schema.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Structural {
    /// `type`: `object`, `array`, `string`, `integer`, `number`, `boolean`, or `""`.
    pub type_: String,
    pub format: String,
    pub properties: BTreeMap<String, Structural>,
    pub items: Option<Box<Structural>>,
    pub additional_properties: Option<AdditionalProperties>,
    pub nullable: bool,
    pub default: Option<Json>,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`: `atomic` or `granular`.
    pub map_type: Option<String>,
    /// `pattern`, compiled once (`None`: none, or it does not compile — which CRD validation
    /// refuses).
    pub pattern: Option<Pattern>,
    /// `anyOf`, `oneOf`, `allOf` (value validations only, in a structural schema).
    pub any_of: Vec<Structural>,
    pub one_of: Vec<Structural>,
    pub all_of: Vec<Structural>,
    /// `not`.
    pub not: Option<Box<Structural>>,
    /// The node's own keywords as written: without `properties`, `items`,
    /// `additionalProperties` and the junctors, which are parsed above — so a node holds its
    /// own keywords, not a copy of its whole subtree.
    pub raw: Json,
}

/// The keywords a node's parsed children and junctors come from, left out of
/// [`Structural::raw`].
const PARSED_KEYWORDS: [&str; 7] = [
    "properties",
    "items",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
];

/// A compiled `pattern` (Go's RE2 syntax, which the `regex` crate shares); equal by source.
#[derive(Clone, Debug)]
pub struct Pattern(pub regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

/// `additionalProperties`: a schema for every other property, or whether any is allowed.
#[derive(Clone, Debug, PartialEq)]
pub enum AdditionalProperties {
    Allows(bool),
    Schema(Box<Structural>),
}

impl AdditionalProperties {
    /// The schema of the other properties, if one is given.
    pub fn schema(&self) -> Option<&Structural> {
        match self {
            AdditionalProperties::Schema(s) => Some(s),
            AdditionalProperties::Allows(_) => None,
        }
    }
}

impl Structural {
    /// The structural schema of `schema` (a JSON Schema object; anything else reads as an
    /// empty schema).
    pub fn from_json(schema: &Json) -> Structural {
        let str_of = |k: &str| {
            schema
                .get(k)
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string()
        };
        let flag = |k: &str| schema.get(k).and_then(Json::as_bool).unwrap_or(false);
        let properties = schema
            .get("properties")
            .and_then(Json::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(k, v)| (k.clone(), Structural::from_json(v)))
                    .collect()
            })
            .unwrap_or_default();
        let additional_properties = match schema.get("additionalProperties") {
            Some(Json::Bool(b)) => Some(AdditionalProperties::Allows(*b)),
            Some(s @ Json::Object(_)) => Some(AdditionalProperties::Schema(Box::new(
                Structural::from_json(s),
            ))),
            _ => None,
        };
        Structural {
            type_: str_of("type"),
            format: str_of("format"),
            properties,
            items: schema
                .get("items")
                .filter(|i| i.is_object())
                .map(|i| Box::new(Structural::from_json(i))),
            additional_properties,
            nullable: flag("nullable"),
            default: schema.get("default").cloned(),
            preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            list_type: schema
                .get("x-kubernetes-list-type")
                .and_then(Json::as_str)
                .map(str::to_string),
            list_map_keys: schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Json::as_array)
                .map(|keys| {
                    keys.iter()
                        .filter_map(Json::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            map_type: schema
                .get("x-kubernetes-map-type")
                .and_then(Json::as_str)
                .map(str::to_string),
            pattern: schema
                .get("pattern")
                .and_then(Json::as_str)
                .and_then(|p| regex::Regex::new(p).ok())
                .map(Pattern),
            any_of: Structural::list(schema, "anyOf"),
            one_of: Structural::list(schema, "oneOf"),
            all_of: Structural::list(schema, "allOf"),
            not: schema
                .get("not")
                .filter(|n| n.is_object())
                .map(|n| Box::new(Structural::from_json(n))),
            raw: match schema.as_object() {
                Some(o) => Json::Object(
                    o.iter()
                        .filter(|(k, _)| !PARSED_KEYWORDS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                None => Json::Null,
            },
        }
    }

    /// The schemas of the list keyword `key` (`anyOf`, …).
    fn list(schema: &Json, key: &str) -> Vec<Structural> {
        let list = schema.get(key).and_then(Json::as_array);
        list.into_iter()
            .flatten()
            .map(Structural::from_json)
            .collect()
    }

    /// The schema of property `name` of an object: a declared property's, else
    /// `additionalProperties`'.
    pub fn property(&self, name: &str) -> Option<&Structural> {
        self.properties.get(name).or_else(|| {
            self.additional_properties
                .as_ref()
                .and_then(AdditionalProperties::schema)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A node holds its own keywords, not its subtree; children and junctors are parsed.
    #[test]
    fn a_node_keeps_its_own_keywords_and_parses_the_rest() {
        let s = Structural::from_json(&json!({"type": "object", "maxProperties": 3,
            "properties": {"a": {"type": "string", "anyOf": [{"minLength": 1}], "not": {"enum": ["x"]}}}}));
        assert_eq!(s.raw, json!({"type": "object", "maxProperties": 3}));
        let a = &s.properties["a"];
        assert_eq!(a.raw, json!({"type": "string"}));
        assert_eq!(a.any_of[0].raw, json!({"minLength": 1}));
        assert_eq!(a.not.as_ref().unwrap().raw, json!({"enum": ["x"]}));
    }
}

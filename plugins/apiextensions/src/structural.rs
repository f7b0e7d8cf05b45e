//! A structural schema (`apiextensions-apiserver/pkg/apiserver/schema/structural.go`): the
//! parts of a CRD version's `openAPIV3Schema` that shape its data — types, properties, items,
//! `additionalProperties`, `nullable`, `default` and the `x-kubernetes-*` extensions — read
//! from the schema's JSON. The value validations (`pattern`, `maximum`, …) stay in
//! [`Structural::raw`] for schema validation.

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
    /// The schema node as written.
    pub raw: Json,
}

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
            raw: schema.clone(),
        }
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

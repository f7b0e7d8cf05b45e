//! `configmaps` (core/v1 `ConfigMap`, namespaced): the standard strategy plugin, a port of
//! kube-apiserver's
//! - `pkg/registry/core/configmap/strategy.go` (the strategy: no-op `PrepareForCreate` /
//!   `PrepareForUpdate` / `Canonicalize`, `AllowCreateOnUpdate` false,
//!   `AllowUnconditionalUpdate` true, no status subresource, no generation);
//! - `pkg/apis/core/validation/validation.go` (`ValidateConfigMap`, `ValidateConfigMapUpdate`);
//! - `pkg/printers/internalversion/printers.go` (`printConfigMap`: NAME, DATA, AGE).
//!
//! ObjectMeta validation other than the name rule (labels, annotations, namespace, ...) and
//! `ValidateObjectMetaUpdate` are done by the host.

use wasm_apiserver_sdk::k8s_openapi::api::core::v1::ConfigMap;
use wasm_apiserver_sdk::k8s_openapi::ByteString;
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::NameRule;

use std::collections::BTreeMap;

/// `core.MaxSecretSize` (pkg/apis/core/types.go): the most bytes the values of one ConfigMap
/// (`data` and `binaryData` together) may hold, 1 MiB.
pub const MAX_CONFIG_MAP_SIZE: usize = 1024 * 1024;

/// The detail of every `Forbidden` error of `ValidateConfigMapUpdate`.
const IMMUTABLE_DETAIL: &str = "field is immutable when `immutable` is set";

/// The strategy of `configmaps`.
pub struct ConfigMaps;

impl Strategy for ConfigMaps {
    type Object = ConfigMap;

    /// ConfigMaps have no `metadata.generation` in kube-apiserver (the strategy never sets it).
    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            short_names: vec!["cm".into()],
            subresources: vec![],
            printer_columns: vec![
                PrinterColumn::name(),
                // printers.go declares the column as "string" but fills it with an int64; the
                // cell here is a JSON integer, so the column says so.
                PrinterColumn::computed("Data", "integer").describe(DATA_DESCRIPTION),
                PrinterColumn::age().describe(CREATION_TIMESTAMP_DESCRIPTION),
            ],
            openapi_schema: schema(),
            example: Some(json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "example", "namespace": "default"},
                "data": {"game.properties": "lives=3\n", "ui.color": "blue"}
            })),
            ..ResourceDescription::new("", "v1", "ConfigMap", "configmaps")
        }
    }

    /// `strategy.Validate` → `validation.ValidateConfigMap`.
    fn validate(cm: &ConfigMap) -> ErrorList {
        validate_config_map(cm)
    }

    /// `strategy.AllowCreateOnUpdate`: false.
    fn allow_create_on_update() -> bool {
        false
    }

    /// `strategy.AllowUnconditionalUpdate`: true.
    fn allow_unconditional_update() -> bool {
        true
    }

    /// `strategy.ValidateUpdate` → `validation.ValidateConfigMapUpdate`.
    fn validate_update(new: &ConfigMap, old: &ConfigMap) -> ErrorList {
        validate_config_map_update(new, old)
    }

    /// `printConfigMap`: DATA is `len(Data) + len(BinaryData)`.
    fn printer_cells(cm: &ConfigMap) -> Vec<Value> {
        let n = cm.data.as_ref().map_or(0, BTreeMap::len)
            + cm.binary_data.as_ref().map_or(0, BTreeMap::len);
        vec![json!(n)]
    }
}

export_strategy!(ConfigMaps);

/// `ValidateConfigMap` (pkg/apis/core/validation/validation.go): the name is a DNS-1123
/// subdomain (`ValidateConfigMapName = NameIsDNSSubdomain`); every key of `data` and
/// `binaryData` passes `IsConfigMapKey`; no key is in both; the values (not the keys, as in
/// kube-apiserver) add up to at most [`MAX_CONFIG_MAP_SIZE`] bytes.
pub fn validate_config_map(cm: &ConfigMap) -> ErrorList {
    let mut errs = validation::validate_name(
        cm.metadata.name.as_deref().unwrap_or_default(),
        NameRule::Dns1123Subdomain,
        &Path::new("metadata").child("name"),
    );
    let empty_data = BTreeMap::new();
    let empty_binary = BTreeMap::new();
    let data = cm.data.as_ref().unwrap_or(&empty_data);
    let binary_data = cm.binary_data.as_ref().unwrap_or(&empty_binary);

    let mut total_size = 0usize;
    let data_path = Path::new("data");
    for (key, value) in data {
        let key_path = data_path.key(key);
        for msg in validation::is_config_map_key(key) {
            errs.push(field::invalid(&key_path, key, msg));
        }
        // A key may be in one bag only.
        if binary_data.contains_key(key) {
            errs.push(field::invalid(
                &key_path,
                key,
                "duplicate of key present in binaryData",
            ));
        }
        total_size += value.len();
    }
    let binary_path = Path::new("binaryData");
    for (key, value) in binary_data {
        for msg in validation::is_config_map_key(key) {
            errs.push(field::invalid(&binary_path.key(key), key, msg));
        }
        total_size += value.0.len();
    }
    if total_size > MAX_CONFIG_MAP_SIZE {
        // kube-apiserver passes back "" to indicate that the error refers to the whole object.
        errs.push(field::too_long(&Path::default(), "", MAX_CONFIG_MAP_SIZE));
    }
    errs
}

/// `ValidateConfigMapUpdate` (pkg/apis/core/validation/validation.go): once the stored object
/// has `immutable: true`, `immutable` may not be unset and `data` / `binaryData` may not change;
/// then `ValidateConfigMap(new)`. (`ValidateObjectMetaUpdate` is the host's.)
///
/// An absent map and an empty one count as equal: after a storage round trip kube-apiserver
/// cannot tell them apart either.
pub fn validate_config_map_update(new: &ConfigMap, old: &ConfigMap) -> ErrorList {
    let mut errs = ErrorList::new();
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.push(field::forbidden(&Path::new("immutable"), IMMUTABLE_DETAIL));
        }
        if !same_map(&new.data, &old.data) {
            errs.push(field::forbidden(&Path::new("data"), IMMUTABLE_DETAIL));
        }
        if !same_map::<ByteString>(&new.binary_data, &old.binary_data) {
            errs.push(field::forbidden(&Path::new("binaryData"), IMMUTABLE_DETAIL));
        }
    }
    errs.extend(validate_config_map(new));
    errs
}

fn same_map<V: PartialEq>(
    a: &Option<BTreeMap<String, V>>,
    b: &Option<BTreeMap<String, V>>,
) -> bool {
    let empty = BTreeMap::new();
    a.as_ref().unwrap_or(&empty) == b.as_ref().unwrap_or(&empty)
}

/// `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`, shortened.
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the \
     server time when this object was created.";

/// `corev1.ConfigMap{}.SwaggerDoc()["data"]`, the DATA column's description in printers.go.
const DATA_DESCRIPTION: &str = "Data contains the configuration data. Each key must consist of \
     alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the \
     BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData \
     field, this is enforced during validation process.";

/// The OpenAPI v3 schema of `io.k8s.api.core.v1.ConfigMap` (descriptions from
/// staging/src/k8s.io/api/core/v1/types.go).
fn schema() -> Value {
    json!({
        "type": "object",
        "description": "ConfigMap holds configuration data for pods to consume.",
        "properties": {
            "apiVersion": {
                "type": "string",
                "description": "APIVersion defines the versioned schema of this representation of an object."
            },
            "kind": {
                "type": "string",
                "description": "Kind is a string value representing the REST resource this object represents."
            },
            "metadata": {
                "type": "object",
                "description": "Standard object's metadata."
            },
            "data": {
                "type": "object",
                "description": DATA_DESCRIPTION,
                "additionalProperties": {"type": "string"}
            },
            "binaryData": {
                "type": "object",
                "description": "BinaryData contains the binary data. Each key must consist of alphanumeric characters, '-', '_' or '.'. BinaryData can contain byte sequences that are not in the UTF-8 range. The keys stored in BinaryData must not overlap with the ones in the Data field, this is enforced during validation process.",
                "additionalProperties": {"type": "string", "format": "byte"}
            },
            "immutable": {
                "type": "boolean",
                "description": "Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil."
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::testing::{self, Outcome};
    use wasm_apiserver_sdk::ErrorType;

    fn cm(extra: Value) -> Value {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "cfg", "namespace": "default"}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    }

    fn kinds(out: &Outcome) -> Vec<(ErrorType, String)> {
        out.errors
            .iter()
            .map(|e| (e.error_type, e.field.clone()))
            .collect()
    }

    #[test]
    fn describe_matches_kube_apiserver() {
        let d = ConfigMaps::describe();
        assert_eq!((d.group.as_str(), d.version.as_str()), ("", "v1"));
        assert_eq!(
            (d.kind.as_str(), d.plural.as_str()),
            ("ConfigMap", "configmaps")
        );
        assert_eq!(d.list_kind, "ConfigMapList");
        assert_eq!(d.singular, "configmap");
        assert_eq!(d.short_names, vec!["cm"]);
        assert!(d.namespaced);
        assert!(d.subresources.is_empty());
        let cols: Vec<(&str, &str)> = d
            .printer_columns
            .iter()
            .map(|c| (c.name.as_str(), c.json_path.as_str()))
            .collect();
        assert_eq!(cols, vec![("Name", "@name"), ("Data", ""), ("Age", "@age")]);
        assert_eq!(
            d.openapi_schema["properties"]["binaryData"]["additionalProperties"]["format"],
            "byte"
        );
        assert!(!ConfigMaps::allow_create_on_update());
        assert!(ConfigMaps::allow_unconditional_update());
    }

    #[test]
    fn example_is_valid() {
        let out = testing::create::<ConfigMaps>(ConfigMaps::describe().example.unwrap());
        assert!(out.errors.is_empty(), "{:?}", out.errors);
    }

    #[test]
    fn valid_create_keeps_data_and_sets_no_generation() {
        let out = testing::create::<ConfigMaps>(cm(json!({
            "data": {"a.txt": "x", "B_2-c": "y"},
            "binaryData": {"bin": "AAEC"},
            "immutable": true
        })));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert!(out.warnings.is_empty());
        assert_eq!(out.object["data"]["a.txt"], "x");
        assert_eq!(out.object["binaryData"]["bin"], "AAEC");
        assert_eq!(out.object["immutable"], true);
        assert!(out.object["metadata"].get("generation").is_none());
    }

    #[test]
    fn bad_keys_are_invalid() {
        let out = testing::create::<ConfigMaps>(cm(json!({
            "data": {"bad key": "x", "ok": "y"},
            "binaryData": {"a/b": "AA=="}
        })));
        let errs = kinds(&out);
        assert!(
            errs.contains(&(ErrorType::Invalid, "data[bad key]".into())),
            "{errs:?}"
        );
        assert!(
            errs.contains(&(ErrorType::Invalid, "binaryData[a/b]".into())),
            "{errs:?}"
        );
        assert!(errs.iter().all(|(_, f)| f != "data[ok]"));
        let e = out
            .errors
            .iter()
            .find(|e| e.field == "data[bad key]")
            .unwrap();
        assert_eq!(e.bad_value, Some(json!("bad key")));
    }

    #[test]
    fn key_in_both_bags_is_invalid() {
        let out = testing::create::<ConfigMaps>(cm(json!({
            "data": {"k": "x"},
            "binaryData": {"k": "AA=="}
        })));
        assert_eq!(
            kinds(&out),
            vec![(ErrorType::Invalid, "data[k]".to_string())]
        );
        assert_eq!(
            out.errors[0].detail,
            "duplicate of key present in binaryData"
        );
    }

    #[test]
    fn total_size_is_limited_to_one_mebibyte() {
        let half = "x".repeat(MAX_CONFIG_MAP_SIZE / 2);
        // Exactly 1 MiB of values: allowed (keys do not count).
        let out = testing::create::<ConfigMaps>(cm(json!({"data": {"a": half, "b": half}})));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        // One byte more, in binaryData: too long, reported on the whole object.
        let out = testing::create::<ConfigMaps>(cm(json!({
            "data": {"a": half, "b": half},
            "binaryData": {"c": "AA=="}
        })));
        assert_eq!(kinds(&out), vec![(ErrorType::TooLong, String::new())]);
        assert_eq!(out.errors[0].detail, "must have at most 1048576 bytes");
    }

    #[test]
    fn name_must_be_a_dns_subdomain() {
        let mut v = cm(json!({}));
        v["metadata"]["name"] = json!("Bad_Name");
        let out = testing::create::<ConfigMaps>(v);
        assert_eq!(
            kinds(&out),
            vec![(ErrorType::Invalid, "metadata.name".to_string())]
        );
        let mut v = cm(json!({}));
        v["metadata"]["name"] = json!("a.dotted.name");
        assert!(testing::create::<ConfigMaps>(v).errors.is_empty());
    }

    #[test]
    fn mutable_config_map_may_change() {
        let old = cm(json!({"data": {"a": "1"}}));
        let new = cm(json!({"data": {"a": "2"}, "binaryData": {"b": "AA=="}, "immutable": true}));
        let out = testing::update::<ConfigMaps>(new, old);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["data"]["a"], "2");
        assert!(out.object["metadata"].get("generation").is_none());
    }

    #[test]
    fn immutable_data_may_not_change() {
        let old = cm(json!({"data": {"a": "1"}, "binaryData": {"b": "AA=="}, "immutable": true}));
        let new = cm(json!({"data": {"a": "2"}, "binaryData": {"b": "AQ=="}, "immutable": true}));
        let out = testing::update::<ConfigMaps>(new, old);
        assert_eq!(
            kinds(&out),
            vec![
                (ErrorType::Forbidden, "data".to_string()),
                (ErrorType::Forbidden, "binaryData".to_string())
            ]
        );
        assert!(out.errors.iter().all(|e| e.detail == IMMUTABLE_DETAIL));
    }

    #[test]
    fn immutable_may_not_be_unset() {
        let old = cm(json!({"data": {"a": "1"}, "immutable": true}));
        for imm in [json!(false), Value::Null] {
            let mut new = cm(json!({"data": {"a": "1"}}));
            if !imm.is_null() {
                new["immutable"] = imm;
            }
            let out = testing::update::<ConfigMaps>(new, old.clone());
            assert_eq!(
                kinds(&out),
                vec![(ErrorType::Forbidden, "immutable".to_string())]
            );
        }
    }

    #[test]
    fn immutable_config_map_metadata_may_change() {
        let old = cm(json!({"data": {"a": "1"}, "immutable": true}));
        let mut new = old.clone();
        new["metadata"]["labels"] = json!({"app": "x"});
        let out = testing::update::<ConfigMaps>(new, old);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["metadata"]["labels"]["app"], "x");
        // Absent and empty maps are the same data.
        let old = cm(json!({"immutable": true}));
        let new = cm(json!({"data": {}, "immutable": true}));
        assert!(testing::update::<ConfigMaps>(new, old).errors.is_empty());
    }

    #[test]
    fn update_validates_the_new_object() {
        let old = cm(json!({"data": {"a": "1"}}));
        let new = cm(json!({"data": {"a b": "1"}}));
        let out = testing::update::<ConfigMaps>(new, old);
        assert_eq!(
            kinds(&out),
            vec![(ErrorType::Invalid, "data[a b]".to_string())]
        );
    }

    #[test]
    fn data_column_counts_both_bags() {
        let obj = cm(json!({"data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}));
        let cells = wasm_apiserver_sdk::glue::printer_cells::<ConfigMaps>(&obj.to_string());
        assert_eq!(cells, vec!["3".to_string()]);
        let cells =
            wasm_apiserver_sdk::glue::printer_cells::<ConfigMaps>(&cm(json!({})).to_string());
        assert_eq!(cells, vec!["0".to_string()]);
    }

    #[test]
    fn attrs_are_labels_only() {
        let mut obj = cm(json!({}));
        obj["metadata"]["labels"] = json!({"app": "x"});
        let a = wasm_apiserver_sdk::glue::get_attrs::<ConfigMaps>(&obj.to_string()).unwrap();
        assert_eq!(a.labels, vec![("app".to_string(), "x".to_string())]);
        assert!(a.fields.is_empty());
    }

    #[test]
    fn fixtures() {
        wasm_apiserver_sdk::testing::run_fixtures::<ConfigMaps>(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures"
        ));
    }
}

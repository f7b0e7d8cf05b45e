//! Kubernetes validation helpers, ported from `k8s.io/apimachinery/pkg/util/validation`
//! (`validation.go`) and `k8s.io/apimachinery/pkg/api/validation` (`objectmeta.go`,
//! `generic.go`). The `is_*` functions return the list of problems as Kubernetes words them
//! (empty = valid); the `validate_*` functions return [`ErrorList`]s with field paths.
//!
//! The messages are those of Kubernetes 1.33 (apimachinery v0.33, the API version this workspace
//! builds against through `k8s-openapi`'s `v1_33` feature). The regular expressions Kubernetes
//! uses are hand-written here as small byte matchers (no regex dependency, to keep plugins small);
//! the messages still quote the original expressions.
//!
//! - `names.rs`: names, values, ports and IPs (`is_*`) and the message helpers;
//! - `object_meta.rs`: `ObjectMeta` and its parts (`validate_*`);
//! - `label_selector.rs`: `metav1.LabelSelector`.

mod label_selector;
mod names;
mod object_meta;

pub use label_selector::*;
pub use names::*;
pub use object_meta::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::ErrorType;
    use crate::field::{self, ErrorList, Path};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        ManagedFieldsEntry, ObjectMeta, OwnerReference,
    };
    use std::collections::BTreeMap;

    const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn details(errs: &ErrorList) -> Vec<(&str, &str)> {
        errs.iter()
            .map(|e| (e.field.as_str(), e.detail.as_str()))
            .collect()
    }

    fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_string()),
            namespace: namespace.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn dns1123_label() {
        for ok in [
            "a",
            "0",
            "my-name",
            "123-abc",
            "a-b-c",
            "a--b",
            &"a".repeat(63),
        ] {
            assert!(is_dns1123_label(ok).is_empty(), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "my_name", "a.b", "ä", "a b"] {
            assert_eq!(
                is_dns1123_label(bad),
                vec![LABEL_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_dns1123_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
        assert_eq!(
            is_dns1123_label(&format!("-{}", "a".repeat(63))),
            vec![
                "must be no more than 63 characters".to_string(),
                LABEL_MSG.to_string()
            ]
        );
    }

    #[test]
    fn dns1123_subdomain() {
        for ok in [
            "a",
            "example.com",
            "a.b.c",
            "1.2.3",
            "a-b.c-d",
            &"a".repeat(253),
        ] {
            assert!(is_dns1123_subdomain(ok).is_empty(), "{ok}");
        }
        for bad in ["", ".", "a.", ".a", "a..b", "a.-b", "A.b", "a_b", "a/b"] {
            assert_eq!(
                is_dns1123_subdomain(bad),
                vec![SUBDOMAIN_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_dns1123_subdomain(&"a".repeat(254)),
            vec!["must be no more than 253 characters".to_string()]
        );
    }

    #[test]
    fn dns1035_label() {
        for ok in ["a", "my-name", "abc-123", "a1"] {
            assert!(is_dns1035_label(ok).is_empty(), "{ok}");
        }
        for bad in ["", "1a", "123-abc", "-a", "a-", "a.b", "Ab"] {
            assert_eq!(
                is_dns1035_label(bad),
                vec![DNS1035_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_dns1035_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
    }

    #[test]
    fn qualified_names() {
        for ok in [
            "app",
            "App",
            "my.name",
            "123-abc",
            "a_b",
            "example.com/app",
            "kubernetes.io/metadata.name",
            "a/B",
            &"a".repeat(63),
            &format!("{}/{}", "a".repeat(253), "b".repeat(63)),
        ] {
            assert!(is_qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_qualified_name(""),
            vec![
                "name part must be non-empty".to_string(),
                NAME_PART_MSG.to_string()
            ]
        );
        assert_eq!(
            is_qualified_name(&"a".repeat(64)),
            vec!["name part must be no more than 63 characters".to_string()]
        );
        assert_eq!(is_qualified_name("-app"), vec![NAME_PART_MSG.to_string()]);
        assert_eq!(is_qualified_name("app_"), vec![NAME_PART_MSG.to_string()]);
        assert_eq!(
            is_qualified_name("/app"),
            vec!["prefix part must be non-empty".to_string()]
        );
        assert_eq!(
            is_qualified_name("example.com/"),
            vec![
                "name part must be non-empty".to_string(),
                NAME_PART_MSG.to_string()
            ]
        );
        assert_eq!(
            is_qualified_name("Example.com/app"),
            vec![format!("prefix part {SUBDOMAIN_MSG}")]
        );
        assert_eq!(
            is_qualified_name(&format!("{}/app", "a".repeat(254))),
            vec!["prefix part must be no more than 253 characters".to_string()]
        );
        assert_eq!(
            is_qualified_name("a/b/c"),
            vec!["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string()]
        );
    }

    #[test]
    fn label_values() {
        for ok in [
            "",
            "v1",
            "MyValue",
            "my_value",
            "12345",
            "a.b-c_d",
            &"a".repeat(63),
        ] {
            assert!(is_valid_label_value(ok).is_empty(), "{ok:?}");
        }
        for bad in ["-a", "a-", "_a", "a b", "a/b", "ä"] {
            assert_eq!(
                is_valid_label_value(bad),
                vec![LABEL_VALUE_MSG.to_string()],
                "{bad:?}"
            );
        }
        assert_eq!(
            is_valid_label_value(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
    }

    #[test]
    fn config_map_keys() {
        for ok in [
            "key", "key.name", "KEY_NAME", "key-name", ".dotfile", "a..b",
        ] {
            assert!(is_config_map_key(ok).is_empty(), "{ok}");
        }
        assert_eq!(is_config_map_key(""), vec![CONFIG_KEY_MSG.to_string()]);
        assert_eq!(is_config_map_key("a/b"), vec![CONFIG_KEY_MSG.to_string()]);
        assert_eq!(is_config_map_key("."), vec!["must not be '.'".to_string()]);
        assert_eq!(
            is_config_map_key(".."),
            vec!["must not be '..'".to_string()]
        );
        assert_eq!(
            is_config_map_key("..a"),
            vec!["must not start with '..'".to_string()]
        );
        assert_eq!(
            is_config_map_key(&"a".repeat(254)),
            vec!["must be no more than 253 characters".to_string()]
        );
    }

    #[test]
    fn path_segment_names() {
        assert!(is_valid_path_segment_name("Any thing: ok!").is_empty());
        assert!(is_valid_path_segment_name("").is_empty());
        assert_eq!(
            is_valid_path_segment_name("."),
            vec!["may not be '.'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name(".."),
            vec!["may not be '..'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name("a/b"),
            vec!["may not contain '/'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name("a/%b"),
            vec![
                "may not contain '/'".to_string(),
                "may not contain '%'".to_string()
            ]
        );
        assert!(is_valid_path_segment_prefix("..").is_empty());
        assert_eq!(
            is_valid_path_segment_prefix("%"),
            vec!["may not contain '%'".to_string()]
        );
    }

    #[test]
    fn validate_name_uses_the_rule() {
        let p = Path::new("metadata").child("name");
        assert!(validate_name("my.config", NameRule::Dns1123Subdomain, &p).is_empty());
        let errs = validate_name("my.config", NameRule::Dns1123Label, &p);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].error_type, ErrorType::Invalid);
        assert_eq!(errs[0].field, "metadata.name");
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("my.config")));
        assert_eq!(errs[0].detail, LABEL_MSG);
        assert_eq!(
            details(&validate_name("1abc", NameRule::Dns1035Label, &p)),
            vec![("metadata.name", DNS1035_MSG)]
        );
        assert!(validate_name("Weird Name", NameRule::PathSegment, &p).is_empty());
        assert_eq!(
            details(&validate_name("..", NameRule::PathSegment, &p)),
            vec![("metadata.name", "may not be '..'")]
        );
        // An empty name gets the rule's errors, not Required.
        assert_eq!(
            details(&validate_name("", NameRule::Dns1123Subdomain, &p)),
            vec![("metadata.name", SUBDOMAIN_MSG)]
        );
        assert!(validate_name("", NameRule::PathSegment, &p).is_empty());
        // Too long and malformed: two errors.
        assert_eq!(
            validate_name(&format!("{}-", "a".repeat(63)), NameRule::Dns1123Label, &p).len(),
            2
        );
    }

    #[test]
    fn prefix_rules_mask_the_trailing_dash() {
        assert!(NameRule::Dns1123Label.check("web-", true).is_empty());
        assert_eq!(
            NameRule::Dns1123Label.check("web-", false),
            vec![LABEL_MSG.to_string()]
        );
        assert!(NameRule::Dns1035Label.check("a-", true).is_empty());
        assert!(NameRule::Dns1123Subdomain.check("my.app-", true).is_empty());
        assert_eq!(
            NameRule::Dns1123Label.check("-", true),
            vec![LABEL_MSG.to_string()]
        );
        assert!(NameRule::PathSegment.check(".", true).is_empty());
        assert_eq!(
            NameRule::PathSegment.check(".", false),
            vec!["may not be '.'".to_string()]
        );
    }

    #[test]
    fn labels_validation() {
        let p = Path::new("metadata").child("labels");
        let ok = labels(&[
            ("app", "web"),
            ("example.com/app", "v1.2_3"),
            ("App.Kubernetes.io-x", ""),
            (&"k".repeat(63), &"v".repeat(63)),
        ]);
        assert!(validate_labels(&ok, &p).is_empty());

        let errs = validate_labels(&labels(&[("app", &"v".repeat(64))]), &p);
        assert_eq!(
            details(&errs),
            vec![("metadata.labels", "must be no more than 63 characters")]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("v".repeat(64))));

        let errs = validate_labels(&labels(&[(&"k".repeat(64), "v")]), &p);
        assert_eq!(
            details(&errs),
            vec![(
                "metadata.labels",
                "name part must be no more than 63 characters"
            )]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("k".repeat(64))));

        let errs = validate_labels(&labels(&[("/app", "v")]), &p);
        assert_eq!(
            details(&errs),
            vec![("metadata.labels", "prefix part must be non-empty")]
        );

        let errs = validate_labels(&labels(&[("Example.com/app", "v")]), &p);
        assert_eq!(errs.len(), 1);
        assert!(errs[0]
            .detail
            .starts_with("prefix part a lowercase RFC 1123 subdomain"));

        let errs = validate_labels(&labels(&[("bad key", "-bad")]), &p);
        assert_eq!(
            details(&errs),
            vec![
                ("metadata.labels", NAME_PART_MSG),
                ("metadata.labels", LABEL_VALUE_MSG)
            ]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("bad key")));
        assert_eq!(errs[1].bad_value, Some(serde_json::json!("-bad")));
        assert!(errs.iter().all(|e| e.error_type == ErrorType::Invalid));
    }

    #[test]
    fn annotations_validation() {
        let p = Path::new("metadata").child("annotations");
        // Case does not matter for annotation keys; values are free-form.
        let ok = labels(&[("Example.COM/Some-Key", "any value at all: {}"), ("x", "")]);
        assert!(validate_annotations(&ok, &p).is_empty());

        let errs = validate_annotations(&labels(&[("a b", "v")]), &p);
        assert_eq!(
            details(&errs),
            vec![("metadata.annotations", NAME_PART_MSG)]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!("a b")));

        // Exactly at the limit (key + value bytes) is fine; one byte more is TooLong.
        let at_limit = labels(&[("k", &"v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - 1))]);
        assert!(validate_annotations(&at_limit, &p).is_empty());
        let over = labels(&[
            ("k", &"v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT / 2)),
            ("l", &"v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT / 2)),
        ]);
        let errs = validate_annotations(&over, &p);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].error_type, ErrorType::TooLong);
        assert_eq!(errs[0].field, "metadata.annotations");
        assert_eq!(errs[0], field::too_long(&p, "", 262144));
    }

    #[test]
    fn finalizers_validation() {
        let p = Path::new("metadata").child("finalizers");
        let ok = vec![
            "kubernetes".to_string(),
            "example.com/cleanup".to_string(),
            "orphan".to_string(),
        ];
        assert!(validate_finalizers(&ok, &p).is_empty());
        let errs = validate_finalizers(&["bad/one/two".to_string()], &p);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.finalizers");
        let both = vec!["orphan".to_string(), "foregroundDeletion".to_string()];
        assert_eq!(
            details(&validate_finalizers(&both, &p)),
            vec![(
                "metadata.finalizers",
                "finalizer orphan and foregroundDeletion cannot be both set"
            )]
        );
        let errs =
            validate_no_new_finalizers(&["b".into(), "a".into(), "c".into()], &["c".into()], &p);
        assert_eq!(errs[0].error_type, ErrorType::Forbidden);
        assert_eq!(
            errs[0].detail,
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{\"a\", \"b\"}"
        );
        assert!(
            validate_no_new_finalizers(&["c".into()], &["c".into(), "d".into()], &p).is_empty()
        );
    }

    #[test]
    fn owner_references_validation() {
        let p = Path::new("metadata").child("ownerReferences");
        let good = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "rs".into(),
            uid: "123".into(),
            controller: Some(true),
            ..Default::default()
        };
        assert!(validate_owner_references(std::slice::from_ref(&good), &p).is_empty());
        let empty = OwnerReference::default();
        assert_eq!(
            details(&validate_owner_references(&[empty], &p)),
            vec![
                (
                    "metadata.ownerReferences.apiVersion",
                    "version must not be empty"
                ),
                ("metadata.ownerReferences.kind", "must not be empty"),
                ("metadata.ownerReferences.name", "must not be empty"),
                ("metadata.ownerReferences.uid", "must not be empty"),
            ]
        );
        let event = OwnerReference {
            api_version: "v1".into(),
            kind: "Event".into(),
            ..good.clone()
        };
        let errs = validate_owner_references(&[event], &p);
        assert_eq!(
            details(&errs),
            vec![(
                "metadata.ownerReferences",
                "/v1, Kind=Event is disallowed from being an owner"
            )]
        );
        let other = OwnerReference {
            name: "rs2".into(),
            ..good.clone()
        };
        let errs = validate_owner_references(&[good, other], &p);
        assert_eq!(
            details(&errs),
            vec![(
                "metadata.ownerReferences",
                "Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/rs and ReplicaSet/rs2"
            )]
        );
        let too_many_slashes = OwnerReference {
            api_version: "a/b/c".into(),
            kind: "K".into(),
            name: "n".into(),
            uid: "u".into(),
            ..Default::default()
        };
        assert_eq!(
            details(&validate_owner_references(&[too_many_slashes], &p)),
            vec![(
                "metadata.ownerReferences.apiVersion",
                "version must not be empty"
            )]
        );
    }

    #[test]
    fn managed_fields_validation() {
        let p = Path::new("metadata").child("managedFields");
        let good = ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            operation: Some("Apply".into()),
            fields_type: Some("FieldsV1".into()),
            ..Default::default()
        };
        assert!(validate_managed_fields(std::slice::from_ref(&good), &p).is_empty());
        let bad = ManagedFieldsEntry {
            manager: Some(format!("bad\u{7}{}", "m".repeat(130))),
            operation: Some("Patch".into()),
            fields_type: Some("FieldsV2".into()),
            subresource: Some("s".repeat(257)),
            ..Default::default()
        };
        let errs = validate_managed_fields(&[good, bad], &p);
        assert_eq!(
            details(&errs),
            vec![
                (
                    "metadata.managedFields[1].operation",
                    "must be `Apply` or `Update`"
                ),
                ("metadata.managedFields[1].fieldsType", "must be `FieldsV1`"),
                ("metadata.managedFields[1].manager", errs[2].detail.as_str()),
                (
                    "metadata.managedFields[1].manager",
                    "invalid character U+0007 (at position 3)"
                ),
                (
                    "metadata.managedFields[1].subresource",
                    errs[4].detail.as_str()
                ),
            ]
        );
        assert_eq!(errs[2].error_type, ErrorType::TooLong);
        assert_eq!(errs[4].error_type, ErrorType::TooLong);
        assert!(validate_field_manager("kube-controller-manager é 日本", &p).is_empty());
        assert_eq!(validate_field_manager("a\u{200B}", &p).len(), 1);
    }

    #[test]
    fn object_meta_create() {
        let p = Path::new("metadata");
        assert!(validate_object_meta(
            &meta("web", Some("default")),
            true,
            NameRule::Dns1123Subdomain,
            &p
        )
        .is_empty());
        assert!(
            validate_object_meta(&meta("web", None), false, NameRule::Dns1123Label, &p).is_empty()
        );

        // Missing name.
        let errs = validate_object_meta(
            &ObjectMeta::default(),
            false,
            NameRule::Dns1123Subdomain,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![("metadata.name", "name or generateName is required")]
        );
        assert_eq!(errs[0].error_type, ErrorType::Required);

        // generateName alone is accepted (and checked as a prefix).
        let gen = ObjectMeta {
            generate_name: Some("web-".into()),
            ..Default::default()
        };
        assert!(validate_object_meta(&gen, false, NameRule::Dns1123Label, &p).is_empty());
        let bad_gen = ObjectMeta {
            generate_name: Some("Web-".into()),
            ..Default::default()
        };
        assert_eq!(
            details(&validate_object_meta(
                &bad_gen,
                false,
                NameRule::Dns1123Label,
                &p
            )),
            vec![("metadata.generateName", LABEL_MSG)]
        );

        // Bad name.
        let errs = validate_object_meta(&meta("Web", None), false, NameRule::Dns1123Subdomain, &p);
        assert_eq!(details(&errs), vec![("metadata.name", SUBDOMAIN_MSG)]);

        // Namespace required / forbidden / validated as a DNS-1123 label.
        let errs = validate_object_meta(&meta("web", None), true, NameRule::Dns1123Subdomain, &p);
        assert_eq!(details(&errs), vec![("metadata.namespace", "")]);
        assert_eq!(errs[0].error_type, ErrorType::Required);
        let errs = validate_object_meta(
            &meta("web", Some("default")),
            false,
            NameRule::Dns1123Subdomain,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![("metadata.namespace", "not allowed on this type")]
        );
        assert_eq!(errs[0].error_type, ErrorType::Forbidden);
        let errs = validate_object_meta(
            &meta("web", Some("my.ns")),
            true,
            NameRule::Dns1123Subdomain,
            &p,
        );
        assert_eq!(details(&errs), vec![("metadata.namespace", LABEL_MSG)]);

        // Everything else, in Kubernetes' order.
        let m = ObjectMeta {
            generation: Some(-1),
            labels: Some(labels(&[("app", "-x")])),
            annotations: Some(labels(&[("a b", "")])),
            finalizers: Some(vec!["a/b/c".into()]),
            ..meta("web", None)
        };
        let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &p);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "metadata.generation",
                "metadata.labels",
                "metadata.annotations",
                "metadata.finalizers"
            ]
        );
        assert_eq!(errs[0].detail, "must be greater than or equal to 0");
        assert_eq!(errs[0].bad_value, Some(serde_json::json!(-1)));
    }

    #[test]
    fn object_meta_update() {
        let p = Path::new("metadata");
        let t1 = Time("2024-01-01T00:00:00Z".parse().unwrap());
        let t2 = Time("2024-01-02T00:00:00Z".parse().unwrap());
        let old = ObjectMeta {
            uid: Some("u1".into()),
            generation: Some(3),
            creation_timestamp: Some(t1.clone()),
            resource_version: Some("5".into()),
            ..meta("web", Some("default"))
        };
        let same = ObjectMeta {
            generation: Some(4),
            labels: Some(labels(&[("app", "web")])),
            ..old.clone()
        };
        assert!(validate_object_meta_update(&same, &old, &p).is_empty());

        let changed = ObjectMeta {
            name: Some("web2".into()),
            namespace: Some("other".into()),
            uid: Some("u2".into()),
            generation: Some(2),
            creation_timestamp: Some(t2.clone()),
            ..old.clone()
        };
        let errs = validate_object_meta_update(&changed, &old, &p);
        assert_eq!(
            details(&errs),
            vec![
                ("metadata.generation", "must not be decremented"),
                ("metadata.name", "field is immutable"),
                ("metadata.namespace", "field is immutable"),
                ("metadata.uid", "field is immutable"),
                ("metadata.creationTimestamp", "field is immutable"),
            ]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::json!(2)));
        assert_eq!(errs[1].bad_value, Some(serde_json::json!("web2")));
        assert_eq!(
            errs[4].bad_value,
            Some(serde_json::json!("2024-01-02T00:00:00Z"))
        );

        // Deletion fields are immutable; no finalizer may be added once deleting.
        let deleting = ObjectMeta {
            deletion_timestamp: Some(t2.clone()),
            deletion_grace_period_seconds: Some(30),
            finalizers: Some(vec!["a".into()]),
            ..old.clone()
        };
        let errs = validate_object_meta_update(
            &ObjectMeta {
                finalizers: Some(vec!["a".into(), "b".into()]),
                deletion_grace_period_seconds: Some(0),
                ..deleting.clone()
            },
            &deleting,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![
                ("metadata.finalizers", "no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b\"}"),
                ("metadata.deletionGracePeriodSeconds", "field is immutable"),
            ]
        );
        let errs = validate_object_meta_update(
            &ObjectMeta {
                deletion_timestamp: None,
                ..deleting.clone()
            },
            &deleting,
            &p,
        );
        assert_eq!(
            details(&errs),
            vec![("metadata.deletionTimestamp", "field is immutable")]
        );
        assert_eq!(errs[0].bad_value, Some(serde_json::Value::Null));

        // New labels and annotations are validated.
        let bad = ObjectMeta {
            labels: Some(labels(&[("a b", "")])),
            ..old.clone()
        };
        assert_eq!(
            details(&validate_object_meta_update(&bad, &old, &p)),
            vec![("metadata.labels", NAME_PART_MSG)]
        );
    }

    #[test]
    fn immutable_field() {
        let p = Path::new("spec").child("x");
        assert!(validate_immutable_field(&1, &1, &p).is_empty());
        assert_eq!(
            details(&validate_immutable_field(&"a", &"b", &p)),
            vec![("spec.x", "field is immutable")]
        );
    }
}

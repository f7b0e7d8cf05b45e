use super::*;
use wasm_apiserver_sdk::testing::{self, Outcome};
use wasm_apiserver_sdk::ErrorType;

fn secret(extra: Value) -> Value {
    let mut v = json!({"apiVersion": "v1", "kind": "Secret",
                       "metadata": {"name": "s", "namespace": "default"}});
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

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

const CERT: &str = "-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n";
const KEY: &str = "-----BEGIN EC PRIVATE KEY-----\nAAEC\n-----END EC PRIVATE KEY-----\n";

#[test]
fn describe_matches_kube_apiserver() {
    let d = Secrets::describe();
    assert_eq!((d.group.as_str(), d.version.as_str()), ("", "v1"));
    assert_eq!((d.kind.as_str(), d.plural.as_str()), ("Secret", "secrets"));
    assert_eq!(d.list_kind, "SecretList");
    assert!(d.namespaced);
    assert!(d.short_names.is_empty());
    assert!(d.subresources.is_empty());
    assert_eq!(d.selectable_fields, vec!["type"]);
    let cols: Vec<(&str, &str)> = d
        .printer_columns
        .iter()
        .map(|c| (c.name.as_str(), c.json_path.as_str()))
        .collect();
    assert_eq!(
        cols,
        vec![
            ("Name", "@name"),
            ("Type", ".type"),
            ("Data", ""),
            ("Age", "@age")
        ]
    );
    assert!(!Secrets::allow_create_on_update());
    assert!(Secrets::allow_unconditional_update());
}

#[test]
fn example_is_valid_and_merges_string_data() {
    let out = testing::create::<Secrets>(Secrets::describe().example.unwrap());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["data"]["username"], b64("admin"));
    assert_eq!(out.object["data"]["password"], "czNjcjN0");
    assert!(out.object.get("stringData").is_none());
}

#[test]
fn type_defaults_to_opaque_and_no_generation() {
    let out = testing::create::<Secrets>(secret(json!({"data": {"a": "eA=="}})));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["type"], "Opaque");
    assert!(out.object["metadata"].get("generation").is_none());
    let out = testing::create::<Secrets>(secret(json!({"type": ""})));
    assert_eq!(out.object["type"], "Opaque");
}

#[test]
fn string_data_overwrites_data() {
    let out = testing::create::<Secrets>(secret(json!({
        "data": {"a": b64("old"), "b": b64("kept")},
        "stringData": {"a": "new", "c": "added"}
    })));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(
        out.object["data"],
        json!({"a": b64("new"), "b": b64("kept"), "c": b64("added")})
    );
    assert!(out.object.get("stringData").is_none());
    // A bad key in stringData is reported under data, as kube reports it after conversion.
    let out = testing::create::<Secrets>(secret(json!({"stringData": {"bad key": "x"}})));
    assert_eq!(
        kinds(&out),
        vec![(ErrorType::Invalid, "data[bad key]".into())]
    );
}

#[test]
fn size_counts_decoded_values() {
    let half = "x".repeat(MAX_SECRET_SIZE / 2);
    let out = testing::create::<Secrets>(secret(json!({"stringData": {"a": half, "b": half}})));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let out = testing::create::<Secrets>(secret(json!({
        "stringData": {"a": half, "b": half, "c": "y"}
    })));
    assert_eq!(kinds(&out), vec![(ErrorType::TooLong, "data".into())]);
    assert_eq!(out.errors[0].detail, "must have at most 1048576 bytes");
}

#[test]
fn each_type_requires_its_keys() {
    let cases: Vec<(Value, Vec<(ErrorType, &str)>)> = vec![
        (
            json!({"type": TYPE_SERVICE_ACCOUNT_TOKEN}),
            vec![(
                ErrorType::Required,
                "metadata.annotations[kubernetes.io/service-account.name]",
            )],
        ),
        (
            json!({"type": TYPE_DOCKERCFG}),
            vec![(ErrorType::Required, "data[.dockercfg]")],
        ),
        (
            json!({"type": TYPE_DOCKER_CONFIG_JSON}),
            vec![(ErrorType::Required, "data[.dockerconfigjson]")],
        ),
        (
            json!({"type": TYPE_DOCKER_CONFIG_JSON, "stringData": {".dockerconfigjson": "[1]"}}),
            vec![(ErrorType::Invalid, "data[.dockerconfigjson]")],
        ),
        (
            json!({"type": TYPE_BASIC_AUTH}),
            vec![
                (ErrorType::Required, "data[username]"),
                (ErrorType::Required, "data[password]"),
            ],
        ),
        (
            json!({"type": TYPE_BASIC_AUTH, "stringData": {"password": ""}}),
            vec![],
        ),
        (
            json!({"type": TYPE_SSH_AUTH, "stringData": {"ssh-privatekey": ""}}),
            vec![(ErrorType::Required, "data[ssh-privatekey]")],
        ),
        (
            json!({"type": TYPE_TLS, "stringData": {"tls.crt": CERT}}),
            vec![(ErrorType::Required, "data[tls.key]")],
        ),
        (json!({"type": TYPE_BOOTSTRAP_TOKEN}), vec![]),
        (json!({"type": "example.com/own"}), vec![]),
    ];
    for (extra, want) in cases {
        let out = testing::create::<Secrets>(secret(extra.clone()));
        let want: Vec<(ErrorType, String)> =
            want.into_iter().map(|(t, f)| (t, f.to_string())).collect();
        assert_eq!(kinds(&out), want, "{extra}");
    }
    let mut named = secret(json!({"type": TYPE_SERVICE_ACCOUNT_TOKEN}));
    named["metadata"]["annotations"] = json!({SERVICE_ACCOUNT_NAME_KEY: "default"});
    assert!(testing::create::<Secrets>(named).errors.is_empty());
}

#[test]
fn docker_config_errors_redact_the_contents() {
    let out = testing::create::<Secrets>(secret(json!({
        "type": TYPE_DOCKERCFG, "stringData": {".dockercfg": "{\"auths\": "}
    })));
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].bad_value, Some(json!(REDACTED)));
    assert_eq!(out.errors[0].detail, "unexpected end of JSON input");
    let out = testing::create::<Secrets>(secret(json!({
        "type": TYPE_DOCKER_CONFIG_JSON, "stringData": {".dockerconfigjson": "[1]"}
    })));
    assert_eq!(
        out.errors[0].detail,
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
}

#[test]
fn tls_pem_warnings_use_go_texts() {
    let tls = |crt: &str, key: &str| {
        testing::create::<Secrets>(secret(json!({
            "type": TYPE_TLS, "stringData": {"tls.crt": crt, "tls.key": key}
        })))
        .warnings
    };
    assert!(tls(CERT, KEY).is_empty());
    assert_eq!(
        tls(KEY, CERT),
        vec!["tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched"]
    );
    assert_eq!(
        tls("", KEY),
        vec!["tls: failed to find any PEM data in certificate input"]
    );
    assert_eq!(
        tls(CERT, ""),
        vec!["tls: failed to find any PEM data in key input"]
    );
    assert_eq!(
        tls(CERT, CERT),
        vec!["tls: found a certificate rather than a key in the PEM for the private key"]
    );
    let other = "-----BEGIN FOO-----\nAAEC\n-----END FOO-----\n";
    assert_eq!(
        tls(&format!("{other}{other}"), KEY),
        vec!["tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: [FOO FOO]"]
    );
    // Not a TLS Secret: no warning.
    let out = testing::create::<Secrets>(secret(json!({"stringData": {"tls.crt": "x"}})));
    assert!(out.warnings.is_empty());
}

#[test]
fn type_is_immutable() {
    let old = secret(json!({"type": TYPE_BASIC_AUTH, "stringData": {"username": "a"}}));
    let old = testing::create::<Secrets>(old).object;
    let mut new = old.clone();
    new["type"] = json!("Opaque");
    let out = testing::update::<Secrets>(new, old.clone());
    assert_eq!(kinds(&out), vec![(ErrorType::Invalid, "type".into())]);
    assert_eq!(out.errors[0].detail, "field is immutable");
    // A PUT without type is defaulted to Opaque first, as kube decodes it: still a change.
    let mut new = old.clone();
    new.as_object_mut().unwrap().remove("type");
    let out = testing::update::<Secrets>(new, old);
    assert_eq!(kinds(&out), vec![(ErrorType::Invalid, "type".into())]);
}

#[test]
fn immutable_data_may_not_change() {
    let old = secret(json!({"type": "Opaque", "data": {"a": b64("1")}, "immutable": true}));
    let new = secret(json!({"type": "Opaque", "stringData": {"a": "2"}, "immutable": true}));
    let out = testing::update::<Secrets>(new, old.clone());
    assert_eq!(kinds(&out), vec![(ErrorType::Forbidden, "data".into())]);
    assert_eq!(out.errors[0].detail, IMMUTABLE_DETAIL);
    let new = secret(json!({"type": "Opaque", "data": {"a": b64("1")}}));
    let out = testing::update::<Secrets>(new, old.clone());
    assert_eq!(
        kinds(&out),
        vec![(ErrorType::Forbidden, "immutable".into())]
    );
    // Metadata may change.
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"a": "b"});
    assert!(testing::update::<Secrets>(new, old).errors.is_empty());
}

#[test]
fn string_data_on_update_is_merged_over_the_new_data() {
    let old = secret(json!({"type": "Opaque", "data": {"a": b64("1")}}));
    let new = secret(json!({"type": "Opaque", "data": {"a": b64("1")}, "stringData": {"b": "2"}}));
    let out = testing::update::<Secrets>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["data"], json!({"a": b64("1"), "b": b64("2")}));
    assert!(out.object.get("stringData").is_none());
}

#[test]
fn data_column_and_type_field() {
    let obj = secret(json!({"type": TYPE_TLS, "data": {"tls.crt": "", "tls.key": ""}}));
    let cells = wasm_apiserver_sdk::glue::printer_cells::<Secrets>(&obj.to_string());
    assert_eq!(cells, vec!["2".to_string()]);
    let a = wasm_apiserver_sdk::glue::get_attrs::<Secrets>(&obj.to_string()).unwrap();
    assert_eq!(a.fields, vec![("type".to_string(), TYPE_TLS.to_string())]);
}

#[test]
fn fixtures() {
    wasm_apiserver_sdk::testing::run_fixtures::<Secrets>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

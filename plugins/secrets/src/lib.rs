//! `secrets` (core/v1 `Secret`, namespaced): the standard strategy plugin, a port of
//! kube-apiserver's
//! - `pkg/registry/core/secret/strategy.go` (no generation, `AllowCreateOnUpdate` false,
//!   `AllowUnconditionalUpdate` true, `PrepareForUpdate` keeping the old `type` when the new one
//!   is empty, the TLS warning of `warningsForSecret`, the selectable field `type`);
//! - `pkg/apis/core/v1/defaults.go` (`SetDefaults_Secret`: `type` defaults to `Opaque`) and
//!   `pkg/apis/core/v1/conversion.go` (`Convert_v1_Secret_To_core_Secret`: `stringData`
//!   overwrites the same keys of `data` and is not stored). kube does both while decoding the
//!   request; here they are the first step of `PrepareForCreate` / `PrepareForUpdate`, so
//!   admission (which runs before the strategy) still sees `stringData` as the client sent it;
//! - `pkg/apis/core/validation/validation.go` (`ValidateSecret`, `ValidateSecretUpdate`): the
//!   keys of each type, the 1 MiB limit, `immutable` and the immutable `type`;
//! - `pkg/printers/internalversion/printers.go` (`printSecret`: NAME, TYPE, DATA, AGE).
//!
//! ObjectMeta validation other than the name rule, and `ValidateObjectMetaUpdate`, are the host's.

use wasm_apiserver_sdk::k8s_openapi::api::core::v1::Secret;
use wasm_apiserver_sdk::k8s_openapi::ByteString;
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::NameRule;

use std::collections::BTreeMap;

/// `core.MaxSecretSize` (pkg/apis/core/types.go): the most bytes the values of `data` may hold
/// together, 1 MiB.
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;

/// `SecretTypeOpaque`, the default type.
pub const TYPE_OPAQUE: &str = "Opaque";
/// `SecretTypeServiceAccountToken`: needs the annotation [`SERVICE_ACCOUNT_NAME_KEY`].
pub const TYPE_SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
/// `SecretTypeDockercfg`: needs `data[.dockercfg]`, a JSON object.
pub const TYPE_DOCKERCFG: &str = "kubernetes.io/dockercfg";
/// `SecretTypeDockerConfigJSON`: needs `data[.dockerconfigjson]`, a JSON object.
pub const TYPE_DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
/// `SecretTypeBasicAuth`: needs `data[username]` or `data[password]`.
pub const TYPE_BASIC_AUTH: &str = "kubernetes.io/basic-auth";
/// `SecretTypeSSHAuth`: needs a non-empty `data[ssh-privatekey]`.
pub const TYPE_SSH_AUTH: &str = "kubernetes.io/ssh-auth";
/// `SecretTypeTLS`: needs `data[tls.crt]` and `data[tls.key]`.
pub const TYPE_TLS: &str = "kubernetes.io/tls";
/// `SecretTypeBootstrapToken`: no required keys in `ValidateSecret` (the bootstrap-token
/// controllers check their own).
pub const TYPE_BOOTSTRAP_TOKEN: &str = "bootstrap.kubernetes.io/token";

/// `ServiceAccountNameKey`: the annotation naming a token Secret's ServiceAccount.
pub const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";

/// The detail of every `Forbidden` error of `ValidateSecretUpdate`.
const IMMUTABLE_DETAIL: &str = "field is immutable when `immutable` is set";

/// What `ValidateSecret` shows instead of a docker config's contents.
const REDACTED: &str = "<secret contents redacted>";

/// The strategy of `secrets`.
pub struct Secrets;

impl Strategy for Secrets {
    type Object = Secret;

    /// Secrets have no `metadata.generation` in kube-apiserver (the strategy never sets it).
    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            short_names: vec![],
            subresources: vec![],
            printer_columns: vec![
                PrinterColumn::name(),
                PrinterColumn::new("Type", "string", ".type").describe(TYPE_DESCRIPTION),
                // printers.go declares the column as "string" but fills it with an int64; the
                // cell here is a JSON integer, so the column says so (as ConfigMap's DATA).
                PrinterColumn::computed("Data", "integer").describe(DATA_DESCRIPTION),
                PrinterColumn::age().describe(CREATION_TIMESTAMP_DESCRIPTION),
            ],
            selectable_fields: vec!["type".into()],
            openapi_schema: schema(),
            example: Some(json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "example", "namespace": "default"},
                "type": "Opaque",
                "stringData": {"username": "admin"},
                "data": {"password": "czNjcjN0"}
            })),
            ..ResourceDescription::new("", "v1", "Secret", "secrets")
        }
    }

    /// `SetDefaults_Secret` and the `stringData` conversion (see the module docs).
    fn prepare_for_create(secret: &mut Secret) {
        decode_as_kube_does(secret);
    }

    /// `strategy.Validate` → `validation.ValidateSecret`.
    fn validate(secret: &Secret) -> ErrorList {
        validate_secret(secret)
    }

    /// `WarningsOnCreate` → `warningsForSecret`.
    fn warnings_on_create(secret: &Secret) -> Vec<String> {
        warnings_for_secret(secret)
    }

    /// `strategy.AllowCreateOnUpdate`: false.
    fn allow_create_on_update() -> bool {
        false
    }

    /// `strategy.AllowUnconditionalUpdate`: true.
    fn allow_unconditional_update() -> bool {
        true
    }

    /// The decoding steps, then `PrepareForUpdate`: an empty `type` takes the old one. After
    /// defaulting it is never empty, so a PUT without `type` on a `kubernetes.io/tls` Secret
    /// becomes `Opaque` and fails as `type: field is immutable`, as in kube.
    fn prepare_for_update(new: &mut Secret, old: &Secret) {
        decode_as_kube_does(new);
        if new.type_.as_deref().unwrap_or_default().is_empty() {
            new.type_ = old.type_.clone();
        }
    }

    /// `strategy.ValidateUpdate` → `validation.ValidateSecretUpdate`.
    fn validate_update(new: &Secret, old: &Secret) -> ErrorList {
        validate_secret_update(new, old)
    }

    /// `WarningsOnUpdate` → `warningsForSecret(new)`.
    fn warnings_on_update(new: &Secret, _old: &Secret) -> Vec<String> {
        warnings_for_secret(new)
    }

    /// `printSecret`: DATA is `len(Data)`.
    fn printer_cells(secret: &Secret) -> Vec<Value> {
        vec![json!(secret.data.as_ref().map_or(0, BTreeMap::len))]
    }
}

export_strategy!(Secrets);

/// What kube-apiserver does to a v1 Secret while decoding it: `SetDefaults_Secret` (an empty
/// `type` becomes `Opaque`), then `Convert_v1_Secret_To_core_Secret` (each `stringData` entry
/// overwrites the same key of `data`; `stringData` itself is write-only and never stored).
pub fn decode_as_kube_does(secret: &mut Secret) {
    if secret.type_.as_deref().unwrap_or_default().is_empty() {
        secret.type_ = Some(TYPE_OPAQUE.into());
    }
    if let Some(string_data) = secret.string_data.take() {
        if !string_data.is_empty() {
            let data = secret.data.get_or_insert_with(BTreeMap::new);
            for (k, v) in string_data {
                data.insert(k, ByteString(v.into_bytes()));
            }
        }
    }
}

/// `ValidateSecret` (pkg/apis/core/validation/validation.go): the name is a DNS-1123 subdomain
/// (`ValidateSecretName`); each key of `data` passes `IsConfigMapKey`; the values add up to at
/// most [`MAX_SECRET_SIZE`] bytes (`data: Too long`); then the keys the `type` requires.
pub fn validate_secret(secret: &Secret) -> ErrorList {
    let mut errs = validation::validate_name(
        secret.metadata.name.as_deref().unwrap_or_default(),
        NameRule::Dns1123Subdomain,
        &Path::new("metadata").child("name"),
    );
    let empty = BTreeMap::new();
    let data = secret.data.as_ref().unwrap_or(&empty);
    let data_path = Path::new("data");
    let mut total_size = 0usize;
    for (key, value) in data {
        for msg in validation::is_config_map_key(key) {
            errs.push(field::invalid(&data_path.key(key), key, msg));
        }
        total_size += value.0.len();
    }
    if total_size > MAX_SECRET_SIZE {
        errs.push(field::too_long(&data_path, "", MAX_SECRET_SIZE));
    }

    let required = |key: &str| field::required(&data_path.key(key), "");
    match secret.type_.as_deref().unwrap_or_default() {
        TYPE_SERVICE_ACCOUNT_TOKEN => {
            // Only the annotation is required: the uid annotation and `data[token]` may be
            // filled in later by a controller.
            let annotations = secret.metadata.annotations.as_ref();
            let named = annotations
                .and_then(|a| a.get(SERVICE_ACCOUNT_NAME_KEY))
                .is_some_and(|v| !v.is_empty());
            if !named {
                errs.push(field::required(
                    &Path::new("metadata")
                        .child("annotations")
                        .key(SERVICE_ACCOUNT_NAME_KEY),
                    "",
                ));
            }
        }
        TYPE_DOCKERCFG | TYPE_DOCKER_CONFIG_JSON => {
            let key = if secret.type_.as_deref() == Some(TYPE_DOCKERCFG) {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match data.get(key) {
                None => errs.push(required(key)),
                Some(bytes) => {
                    if let Err(msg) = json_object(&bytes.0) {
                        errs.push(field::invalid(&data_path.key(key), REDACTED, msg));
                    }
                }
            }
        }
        // Either may be empty, but one of the two must be there.
        TYPE_BASIC_AUTH if !data.contains_key("username") && !data.contains_key("password") => {
            errs.push(required("username"));
            errs.push(required("password"));
        }
        TYPE_SSH_AUTH if data.get("ssh-privatekey").is_none_or(|v| v.0.is_empty()) => {
            errs.push(required("ssh-privatekey"));
        }
        TYPE_TLS => {
            for key in ["tls.crt", "tls.key"] {
                if !data.contains_key(key) {
                    errs.push(required(key));
                }
            }
        }
        // Opaque, bootstrap tokens and any type of the user's own: no required keys.
        _ => {}
    }
    errs
}

/// Go's `json.Unmarshal(b, &map[string]interface{}{})`: `Ok` when `b` is one JSON object; the
/// error texts Go gives for the common cases (empty or cut-off input, a value that is not an
/// object); serde_json's text for other syntax errors.
fn json_object(b: &[u8]) -> Result<(), String> {
    match serde_json::from_slice::<Value>(b) {
        Ok(Value::Object(_)) | Ok(Value::Null) => Ok(()),
        Ok(v) => {
            let kind = match v {
                Value::Bool(_) => "bool",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                _ => "array",
            };
            Err(format!(
                "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            ))
        }
        Err(e) if e.is_eof() => Err("unexpected end of JSON input".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `ValidateSecretUpdate` (pkg/apis/core/validation/validation.go): `type` is immutable; once
/// the stored Secret is `immutable`, `immutable` stays true and `data` may not change; then
/// `ValidateSecret(new)`. An absent and an empty `data` are the same (a storage round trip
/// cannot tell them apart either).
pub fn validate_secret_update(new: &Secret, old: &Secret) -> ErrorList {
    let mut errs = validation::validate_immutable_field(
        &new.type_.clone().unwrap_or_default(),
        &old.type_.clone().unwrap_or_default(),
        &Path::new("type"),
    );
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.push(field::forbidden(&Path::new("immutable"), IMMUTABLE_DETAIL));
        }
        let empty = BTreeMap::new();
        if new.data.as_ref().unwrap_or(&empty) != old.data.as_ref().unwrap_or(&empty) {
            errs.push(field::forbidden(&Path::new("data"), IMMUTABLE_DETAIL));
        }
    }
    errs.extend(validate_secret(new));
    errs
}

/// `warningsForSecret` (strategy.go): for a `kubernetes.io/tls` Secret, the error of Go's
/// `tls.X509KeyPair(data[tls.crt], data[tls.key])` (crypto/tls/tls.go) as a warning. The PEM
/// checks are ported with Go's texts; parsing the certificate and matching the key to it are
/// not done here (a component has no X.509 or key parser), so a well-formed pair of PEM blocks
/// that do not belong together gets no warning.
pub fn warnings_for_secret(secret: &Secret) -> Vec<String> {
    if secret.type_.as_deref() != Some(TYPE_TLS) {
        return Vec::new();
    }
    let get = |k: &str| {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(k))
            .map_or(&[][..], |v| &v.0[..])
    };
    match x509_key_pair_pem(get("tls.crt"), get("tls.key")) {
        Ok(()) => Vec::new(),
        Err(e) => vec![e],
    }
}

/// The PEM part of Go's `tls.X509KeyPair`: the certificate input holds a `CERTIFICATE` block;
/// the key input holds a block whose type is `PRIVATE KEY` or ends in ` PRIVATE KEY`.
fn x509_key_pair_pem(cert: &[u8], key: &[u8]) -> Result<(), String> {
    // Go's pem.Decode skips what does not parse; a block that does not parse here makes the
    // input read as holding none.
    let tags = |b: &[u8]| -> Vec<String> {
        pem::parse_many(b)
            .map(|v| v.iter().map(|p| p.tag().to_string()).collect())
            .unwrap_or_default()
    };
    let cert_tags = tags(cert);
    if !cert_tags.iter().any(|t| t == "CERTIFICATE") {
        if cert_tags.is_empty() {
            return Err("tls: failed to find any PEM data in certificate input".into());
        }
        if cert_tags.len() == 1 && cert_tags[0].ends_with("PRIVATE KEY") {
            return Err("tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched".into());
        }
        return Err(format!(
            "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: [{}]",
            cert_tags.join(" ")
        ));
    }
    let mut skipped = Vec::new();
    for t in tags(key) {
        if t == "PRIVATE KEY" || t.ends_with(" PRIVATE KEY") {
            return Ok(());
        }
        skipped.push(t);
    }
    if skipped.is_empty() {
        return Err("tls: failed to find any PEM data in key input".into());
    }
    if skipped.len() == 1 && skipped[0] == "CERTIFICATE" {
        return Err(
            "tls: found a certificate rather than a key in the PEM for the private key".into(),
        );
    }
    Err(format!(
        "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: [{}]",
        skipped.join(" ")
    ))
}

/// `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`, shortened.
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the \
     server time when this object was created.";

/// `corev1.Secret{}.SwaggerDoc()["type"]`, the TYPE column's description in printers.go.
const TYPE_DESCRIPTION: &str = "Used to facilitate programmatic handling of secret data. More \
     info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";

/// `corev1.Secret{}.SwaggerDoc()["data"]`, the DATA column's description in printers.go.
const DATA_DESCRIPTION: &str = "Data contains the secret data. Each key must consist of \
     alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a \
     base64 encoded string, representing the arbitrary (possibly non-string) data value here. \
     Described in https://tools.ietf.org/html/rfc4648#section-4";

/// The OpenAPI v3 schema of `io.k8s.api.core.v1.Secret` (descriptions from
/// staging/src/k8s.io/api/core/v1/types.go).
fn schema() -> Value {
    json!({
        "type": "object",
        "description": "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
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
                "additionalProperties": {"type": "string", "format": "byte"}
            },
            "stringData": {
                "type": "object",
                "description": "stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience. All keys and values are merged into the data field on write, overwriting any existing values. The stringData field is never output when reading from the API.",
                "additionalProperties": {"type": "string"}
            },
            "type": {
                "type": "string",
                "description": TYPE_DESCRIPTION
            },
            "immutable": {
                "type": "boolean",
                "description": "Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil."
            }
        }
    })
}

#[cfg(test)]
mod tests;

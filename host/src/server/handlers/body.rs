//! Decoding a request's object (`k8s.io/apiserver/pkg/endpoints/handlers/create.go`,
//! `update.go`, `rest.go`): the body's media type picks the decoder
//! ([`crate::server::negotiation`]), the type meta must be the resource's, and unknown fields
//! are refused, warned about or ignored as `fieldValidation` says.

use super::request::Request;
use crate::limits::{depth, MAX_BODY_BYTES, MAX_DEPTH};
use crate::registry::{RequestScope, Store};
use crate::server::negotiation;
use crate::server::options::WriteOptions;
use crate::status::{ApiError, ApiResult};
use crate::strategy::{ErrorType, FieldError};
use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::{json, Value};

/// Decode, check the type meta and validate the fields of a create or update body (in the
/// request's version; the handler then decodes it to the storage version through the scope).
/// Returns the object and the `fieldValidation=Warn` warnings. Errors: those of
/// [`decode_body`], [`check_kind`] and [`field_validation`].
pub fn decode_object(
    scope: &RequestScope,
    req: &Request<'_>,
    options: &WriteOptions,
) -> ApiResult<(Value, Vec<String>)> {
    let r = &scope.store;
    let mut obj = decode_body(&req.body, req.headers, r)?;
    check_kind(&r.description, &r.gk, &mut obj)?;
    let warnings = field_validation(r, &obj, options.field_validation)?;
    Ok((obj, warnings))
}

/// Decode an object body by its `Content-Type` (`negotiation.NegotiateInputSerializer`):
/// JSON (also when no type is given), YAML, or protobuf (`application/vnd.kubernetes.protobuf`)
/// for the kinds [`crate::protobuf`] converts. Errors: too large (413), a body that does not
/// decode, nests deeper than [`MAX_DEPTH`] or is not an object (400), any other
/// media type or another protobuf kind (415, naming the accepted types).
fn decode_body(body: &Bytes, headers: &HeaderMap, r: &Store) -> ApiResult<Value> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::request_entity_too_large(&format!(
            "limit is {MAX_BODY_BYTES}"
        )));
    }
    let v = match negotiation::request_media_type(headers)?.as_str() {
        negotiation::JSON => serde_json::from_slice::<Value>(body).map_err(|e| {
            ApiError::bad_request(format!("error decoding the request body as JSON: {e}"))
        })?,
        negotiation::YAML => negotiation::decode_yaml(body)?,
        negotiation::PROTOBUF => {
            return crate::protobuf::decode(body, &r.description.api_version(), &r.description.kind)
        }
        _ => {
            return Err(ApiError::unsupported_media_type(negotiation::accepted(
                r.description.group.is_empty(),
            )))
        }
    };
    if depth(&v, MAX_DEPTH) > MAX_DEPTH {
        return Err(ApiError::bad_request(format!(
            "error decoding the request body: nested deeper than the limit of {} levels",
            MAX_DEPTH
        )));
    }
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    Ok(v)
}

/// The object's apiVersion and kind must be the resource's (the decoder's check). A built-in
/// object (core, unqualified or `*.k8s.io` group) without them gets the resource's, as kube's JSON serializer fills a
/// missing kind and group/version from the type it decodes into
/// (`runtime/serializer/json/json.go` `Decode` with the default GroupVersionKind); typed
/// clients (the Python client among them) often leave them out. Custom groups keep kube's
/// unstructured rule: a missing kind is 400.
pub fn check_kind(
    d: &crate::strategy::ResourceDescription,
    gk: &wasm_apiserver_apimachinery::GroupKind,
    obj: &mut Value,
) -> ApiResult<()> {
    // Built-in groups: core, the unqualified ones (`apps`, `batch`) and `*.k8s.io`.
    if !d.group.contains('.') || d.group.ends_with(".k8s.io") {
        if let Some(o) = obj.as_object_mut() {
            if o.get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                o.insert("kind".into(), json!(d.kind));
            }
            if o.get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                o.insert("apiVersion".into(), json!(d.api_version()));
            }
        }
    }
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'Kind' is missing in '{}'",
            truncate(&obj.to_string())
        )));
    }
    if api_version == d.api_version() && kind != d.kind && !d.group.is_empty() {
        // A custom group decodes any kind of its group/version; the custom resource
        // validator then refuses it (apiextensions-apiserver customresource/validator.go
        // `ValidateTypeMeta`): 422 `kind: Invalid value: "X": must be <Kind>`.
        let name = wasm_apiserver_apimachinery::meta::accessor(obj).name();
        return Err(ApiError::invalid(
            gk,
            name,
            &[FieldError {
                error_type: ErrorType::Invalid,
                field: "kind".into(),
                bad_value: Some(json!(kind)),
                detail: format!("must be {}", d.kind),
            }],
        ));
    }
    if api_version != d.api_version() || kind != d.kind {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({}) or the kind in the data ({kind}) does not match the expected kind ({})",
            d.api_version(),
            d.kind
        )));
    }
    Ok(())
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

/// `fieldValidation`: unknown fields against the plugin's schema, as `Strict` (400), `Warn`
/// (warnings) or `Ignore`. Returns the warnings. (`k8s.io/apiserver` `fieldmanager` /
/// `structured-merge-diff` strict decoding; the message matches kube-apiserver's.)
fn field_validation(r: &Store, obj: &Value, mode: &str) -> ApiResult<Vec<String>> {
    if mode == "Ignore" {
        return Ok(Vec::new());
    }
    let mut unknown = Vec::new();
    if let Some(o) = obj.as_object() {
        for (k, v) in o {
            if k == "apiVersion" || k == "kind" || k == "metadata" {
                continue;
            }
            match r
                .description
                .openapi_schema
                .pointer(&format!("/properties/{k}"))
            {
                Some(s) => unknown_fields(v, s, k, &mut unknown),
                None if open_schema(&r.description.openapi_schema) => {}
                None => unknown.push(k.clone()),
            }
        }
    }
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    match mode {
        "Strict" => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            unknown
                .iter()
                .map(|f| format!("unknown field \"{f}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        _ => Ok(unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect()),
    }
}

fn open_schema(s: &Value) -> bool {
    s.get("properties").is_none()
        || s.get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true)
        || s.get("additionalProperties").is_some()
}

fn unknown_fields(v: &Value, schema: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(o) if !open_schema(schema) => {
            // An embedded resource holds its own type and metadata (kube's pruning keeps
            // them: apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go).
            let embedded = schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
            for (k, child) in o {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                match schema.pointer(&format!(
                    "/properties/{}",
                    k.replace('~', "~0").replace('/', "~1")
                )) {
                    Some(s) => unknown_fields(child, s, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}")),
                }
            }
        }
        Value::Object(o) => {
            if let Some(ap) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for (k, child) in o {
                    unknown_fields(child, ap, &format!("{path}.{k}"), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, child) in items.iter().enumerate() {
                    unknown_fields(child, s, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

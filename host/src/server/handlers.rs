//! Resource handlers: decode the request, call one registry operation, encode the answer
//! (`k8s.io/apiserver/pkg/endpoints/handlers/{get,create,update,patch,delete,watch}.go`).
//! Every failure is an [`ApiError`] turned into a `metav1.Status` once, here.

use super::options::{self, WriteOptions};
use super::request_info::{self, RequestInfo};
use super::{table, AppState};
use crate::registry::store::{
    DeleteOptions, DeleteResult, Subresource, UpdatedObject, WriteResult,
};
use crate::registry::Resource;
use crate::status::{ApiError, ApiResult};
use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use wasm_apiserver_storage::selection::default_attrs;
use wasm_apiserver_storage::{
    FieldSelector, LabelSelector, ListOptions, Preconditions, ResourceVersionMatch,
    SelectionPredicate, SharedObject, StorageError, WatchEvent,
};

pub use crate::limits::MAX_BODY_BYTES;

type Query = HashMap<String, String>;

/// How a client wants objects back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Plain JSON objects and lists.
    Json,
    /// `metav1.Table` (`as=Table;g=meta.k8s.io;v=v1`), each row carrying the object as
    /// `includeObject` asks.
    Table(table::IncludeObject),
}

fn output(headers: &HeaderMap, q: &Query) -> ApiResult<Output> {
    let accept = headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let wants_table = accept.split(',').any(|a| {
        let a = a.replace(' ', "");
        a.contains("as=Table")
            && a.contains("g=meta.k8s.io")
            && (a.contains("v=v1;") || a.ends_with("v=v1"))
    });
    Ok(if wants_table {
        Output::Table(table::IncludeObject::from_query(q)?)
    } else {
        Output::Json
    })
}

fn json_response(code: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let mut resp = (code, axum::Json(body)).into_response();
    for w in warnings {
        // `Warning: 299 - "text"` (RFC 7234 §5.5; kube-apiserver's warning header format).
        let text = w.replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{text}\"")) {
            resp.headers_mut().append("Warning", v);
        }
    }
    resp
}

/// A 200 response whose body is JSON text already written (an object or a list from its
/// `SharedObject`s).
fn json_bytes_response(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

fn is_dry_run(q: &Query) -> ApiResult<bool> {
    match q.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::invalid(
            &crate::status::Gr {
                kind: "CreateOptions".into(),
                ..Default::default()
            },
            "",
            &[crate::strategy::FieldError {
                error_type: crate::strategy::ErrorType::NotSupported,
                field: "dryRun".into(),
                bad_value: Some(json!([other])),
                detail: "supported values: \"All\"".into(),
            }],
        )),
    }
}

/// Decode an object body by its `Content-Type` (`negotiation.NegotiateInputSerializer`):
/// JSON (also when no type is given), YAML, or protobuf (`application/vnd.kubernetes.protobuf`)
/// for the kinds [`super::protobuf`] converts. Errors: too large (413), a body that does not
/// decode, nests deeper than [`crate::limits::MAX_DEPTH`] or is not an object (400), any other
/// media type or another protobuf kind (415, naming the accepted types).
fn decode_body(body: &Bytes, headers: &HeaderMap, r: &Resource) -> ApiResult<Value> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::request_entity_too_large(&format!(
            "limit is {MAX_BODY_BYTES}"
        )));
    }
    let v = match super::negotiation::request_media_type(headers)?.as_str() {
        super::negotiation::JSON => serde_json::from_slice::<Value>(body).map_err(|e| {
            ApiError::bad_request(format!("error decoding the request body as JSON: {e}"))
        })?,
        super::negotiation::YAML => super::negotiation::decode_yaml(body)?,
        super::negotiation::PROTOBUF => {
            return super::protobuf::decode(body, &r.description.api_version(), &r.description.kind)
        }
        _ => {
            return Err(ApiError::unsupported_media_type(
                super::negotiation::accepted(r.description.group.is_empty()),
            ))
        }
    };
    if crate::limits::depth(&v, crate::limits::MAX_DEPTH) > crate::limits::MAX_DEPTH {
        return Err(ApiError::bad_request(format!(
            "error decoding the request body: nested deeper than the limit of {} levels",
            crate::limits::MAX_DEPTH
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
fn check_kind(r: &Resource, obj: &mut Value) -> ApiResult<()> {
    let d = &r.description;
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
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(ApiError::invalid(
            &r.gr,
            name,
            &[crate::strategy::FieldError {
                error_type: crate::strategy::ErrorType::Invalid,
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
fn field_validation(
    r: &Resource,
    obj: &Value,
    q: &Query,
    verb: WriteOptions,
) -> ApiResult<Vec<String>> {
    let mode = options::field_validation(q, verb)?;
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
            for (k, child) in o {
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

/// The storage `ListOptions` of a list (`watch` false) or a watch, validated as
/// `ValidateListOptions` does. Errors: 400 for selectors, `limit`, `resourceVersionMatch`
/// values that do not parse; 422 `ListOptions.meta.k8s.io "" is invalid` for forbidden
/// combinations.
fn list_options(r: &Resource, q: &Query, watch: bool) -> ApiResult<ListOptions> {
    let label = LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or(""))
        .map_err(|e| {
            ApiError::bad_request(format!("unable to parse requirement: {e}").replace(
                "unable to parse requirement: unable to parse requirement",
                "unable to parse requirement",
            ))
        })?;
    let field = FieldSelector::parse(q.get("fieldSelector").map(String::as_str).unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    for req in &field.requirements {
        let ok = req.field == "metadata.name"
            || (req.field == "metadata.namespace" && r.description.namespaced)
            || r.description.selectable_fields.contains(&req.field);
        if !ok {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {}",
                req.field
            )));
        }
    }
    let limit = match q.get("limit").map(String::as_str) {
        None | Some("") => 0,
        Some(l) => l
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?
            .max(0),
    };
    let rv = q.get("resourceVersion").cloned().unwrap_or_default();
    let mut send_initial_events = options::query_bool(q, "sendInitialEvents");
    let mut rvm_text = q
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    // `SetListOptionsDefaults` (WatchList on, as in 1.32): a watch from "" or "0" without
    // either option is a watch-list — initial events, then the end bookmark when allowed.
    if watch && send_initial_events.is_none() && rvm_text.is_empty() && (rv.is_empty() || rv == "0")
    {
        send_initial_events = Some(true);
        rvm_text = "NotOlderThan";
    }
    let continue_token = q.get("continue").map(String::as_str).unwrap_or("");
    let errs = if watch {
        watch_options_errors(rvm_text, send_initial_events, continue_token)
    } else {
        list_options_errors(rvm_text, &rv, send_initial_events, continue_token)
    };
    if !errs.is_empty() {
        return Err(ApiError::invalid(
            &crate::status::Gr {
                kind: "ListOptions".into(),
                group: "meta.k8s.io".into(),
                ..Default::default()
            },
            "",
            &errs,
        ));
    }
    let rvm =
        ResourceVersionMatch::parse(rvm_text).map_err(|e| ApiError::from_storage(&e, &r.gr, ""))?;
    Ok(ListOptions {
        resource_version: rv,
        resource_version_match: rvm,
        predicate: SelectionPredicate {
            label,
            field,
            get_attrs: Some(default_attrs(r.description.selectable_fields.clone())),
            limit,
            continue_token: q.get("continue").cloned().unwrap_or_default(),
            allow_watch_bookmarks: options::query_bool(q, "allowWatchBookmarks").unwrap_or(false),
        },
        recursive: true,
        progress_notify: false,
        send_initial_events,
        watch_deadline: None,
    })
}

fn forbidden(field: &str, detail: &str) -> crate::strategy::FieldError {
    crate::strategy::FieldError {
        error_type: crate::strategy::ErrorType::Forbidden,
        field: field.into(),
        bad_value: None,
        detail: detail.into(),
    }
}

fn rvm_not_supported(value: &str, supported: &str) -> crate::strategy::FieldError {
    crate::strategy::FieldError {
        error_type: crate::strategy::ErrorType::NotSupported,
        field: "resourceVersionMatch".into(),
        bad_value: Some(json!(value)),
        detail: format!("supported values: {supported}"),
    }
}

/// `ValidateListOptions` for a list (`meta/internalversion/validation/validation.go`).
fn list_options_errors(
    rvm: &str,
    rv: &str,
    send_initial_events: Option<bool>,
    continue_token: &str,
) -> Vec<crate::strategy::FieldError> {
    let mut errs = Vec::new();
    if send_initial_events.is_some() {
        errs.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    if !rvm.is_empty() {
        if rv.is_empty() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !continue_token.is_empty() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if rvm != "Exact" && rvm != "NotOlderThan" {
            errs.push(rvm_not_supported(rvm, "\"Exact\", \"NotOlderThan\", \"\""));
        }
        if rvm == "Exact" && rv == "0" {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    errs
}

/// `validateWatchOptions` (same file; the WatchList feature is on, as in kube 1.32): with
/// `sendInitialEvents`, `resourceVersionMatch` must be `NotOlderThan`, and it is allowed only
/// then — any `resourceVersion`, `""` included (a consistent read, then the watch: KEP-3157).
fn watch_options_errors(
    rvm: &str,
    send_initial_events: Option<bool>,
    continue_token: &str,
) -> Vec<crate::strategy::FieldError> {
    let mut errs = Vec::new();
    if send_initial_events.is_some() && rvm != "NotOlderThan" {
        errs.push(forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !rvm.is_empty() {
        if send_initial_events.is_none() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if rvm != "NotOlderThan" {
            errs.push(rvm_not_supported(rvm, "\"NotOlderThan\""));
        }
        if !continue_token.is_empty() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    errs
}

/// `metav1.ListMeta` of a list: resourceVersion, and continue / remainingItemCount when set.
pub(super) fn list_meta(list: &wasm_apiserver_storage::SharedListResult) -> Value {
    let mut meta = json!({"resourceVersion": list.resource_version.to_string()});
    if let Some(c) = &list.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    meta
}

/// The JSON of a list response (`{"apiVersion","kind":"<Kind>List","metadata","items"}`),
/// written straight from the list's items: objects read from storage are copied from their
/// stored bytes with their resourceVersion spliced in, cached ones serialized as they are, so
/// no list builds a `Value` per object. Errors: a corrupt stored object answers 500, as
/// kube-apiserver's list does when an object fails to decode.
fn list_body(r: &Resource, list: &wasm_apiserver_storage::SharedListResult) -> ApiResult<Vec<u8>> {
    let head = json!({"apiVersion": r.description.api_version(), "kind": r.description.list_kind,
                      "metadata": list_meta(list)});
    let mut out = serde_json::to_vec(&head).map_err(ApiError::internal)?;
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in list.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        item.write_json(&mut out)
            .map_err(|e| ApiError::from_storage(&e, &r.gr, ""))?;
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}

/// The one entry point for resource paths (`/api/v1/...`, `/apis/<g>/<v>/...`).
pub async fn resource(
    State(state): State<Arc<AppState>>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<Query>,
    body: Body,
) -> Response {
    let path = uri.path().to_string();
    // `limitedReadBody` (handlers/rest.go): read at most the limit, answer 413 as a Status.
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::request_entity_too_large(&format!("limit is {MAX_BODY_BYTES}"))
                .into_response()
        }
    };
    match dispatch(&state, &method, &path, &headers, &q, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn dispatch(
    state: &Arc<AppState>,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    q: &Query,
    body: Bytes,
) -> ApiResult<Response> {
    let snapshot = state.resources();
    let map = &snapshot.resources;
    let Some(info) = request_info::parse(path) else {
        if *method == Method::GET {
            if let Some(resp) = super::legacy_discovery(map, path) {
                return Ok(resp);
            }
        }
        return Err(ApiError::no_route(path));
    };
    let Some(r) = map.get(&info.group, &info.version, &info.resource) else {
        return Err(ApiError::no_route(path));
    };
    let sub = match info.subresource.as_str() {
        "" => Subresource::Main,
        "status" if r.description.has_status() => Subresource::Status,
        _ => return Err(ApiError::no_route(path)),
    };
    if !r.description.namespaced && !info.namespace.is_empty() {
        return Err(ApiError::no_route(path));
    }
    if r.description.namespaced && info.namespace.is_empty() && !info.name.is_empty() {
        return Err(ApiError::no_route(path));
    }
    let watch = info.watch_path || options::query_bool(q, "watch").unwrap_or(false);
    let out = output(headers, q)?;
    if r.read_only && *method != Method::GET {
        return Err(ApiError::method_not_supported(
            &r.gr,
            &method.as_str().to_lowercase(),
        ));
    }
    let RequestInfo {
        namespace: ns,
        name,
        ..
    } = info;
    match *method {
        Method::GET if watch => watch_handler(state, &r, &ns, &name, q, out).await,
        Method::GET if !name.is_empty() => {
            let rv = q.get("resourceVersion").map(String::as_str).unwrap_or("");
            match out {
                Output::Json => {
                    // Written from the stored bytes or the cache's object, without a copy.
                    let obj = r.get_shared(&ns, &name, rv).await?;
                    let mut body = Vec::new();
                    obj.write_json(&mut body)
                        .map_err(|e| ApiError::from_storage(&e, &r.gr, &name))?;
                    Ok(json_bytes_response(body))
                }
                Output::Table(_) => {
                    let obj = r.get(&ns, &name, rv).await?;
                    respond_object(&r, obj, out, StatusCode::OK, &[]).await
                }
            }
        }
        Method::GET => {
            options::timeout_seconds(q)?;
            let opts = list_options(&r, q, false)?;
            let list = r.list(&ns, &opts).await?;
            match out {
                Output::Json => {
                    // Writing 10,000 objects takes milliseconds: off the async workers.
                    let r2 = r.clone();
                    let body = tokio::task::spawn_blocking(move || list_body(&r2, &list))
                        .await
                        .map_err(ApiError::internal)??;
                    Ok(json_bytes_response(body))
                }
                Output::Table(include) => {
                    let t = table::list_table(&r, &list, include).await?;
                    Ok(json_response(StatusCode::OK, &t, &[]))
                }
            }
        }
        Method::POST if name.is_empty() && sub == Subresource::Main => {
            options::field_validation(q, WriteOptions::Create)?;
            let mut obj = decode_body(&body, headers, &r)?;
            check_kind(&r, &mut obj)?;
            let mut warnings = field_validation(&r, &obj, q, WriteOptions::Create)?;
            let res = r.create(&ns, obj, is_dry_run(q)?).await?;
            warnings.extend(res.warnings.iter().cloned());
            respond_write(&r, res, out, &warnings).await
        }
        Method::PUT if !name.is_empty() => {
            options::field_validation(q, WriteOptions::Update)?;
            let mut obj = decode_body(&body, headers, &r)?;
            check_kind(&r, &mut obj)?;
            let mut warnings = field_validation(&r, &obj, q, WriteOptions::Update)?;
            let res = r
                .update(
                    &ns,
                    &name,
                    UpdatedObject::Replace(obj),
                    sub,
                    false,
                    is_dry_run(q)?,
                )
                .await?;
            warnings.extend(res.warnings.iter().cloned());
            respond_write(&r, res, out, &warnings).await
        }
        Method::PATCH if !name.is_empty() => {
            options::field_validation(q, WriteOptions::Patch)?;
            let ct = headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            if body.len() > MAX_BODY_BYTES {
                return Err(ApiError::request_entity_too_large(&format!(
                    "limit is {MAX_BODY_BYTES}"
                )));
            }
            let (patch_fn, force_create) =
                super::patch::patcher(&r.description, &r.gr, &ct, &body, q)?;
            let res = r
                .update(
                    &ns,
                    &name,
                    UpdatedObject::Patch(patch_fn),
                    sub,
                    force_create,
                    is_dry_run(q)?,
                )
                .await?;
            respond_write(&r, res.clone(), out, &res.warnings).await
        }
        Method::DELETE if !name.is_empty() && sub == Subresource::Main => {
            let opts = delete_options(&body, q)?;
            match r.delete(&ns, &name, &opts).await? {
                DeleteResult::Pending(obj) => {
                    respond_object(&r, obj, out, StatusCode::OK, &[]).await
                }
                DeleteResult::Deleted(obj) => {
                    let d = &r.description;
                    Ok(json_response(
                        StatusCode::OK,
                        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                "details": {"name": name, "group": d.group, "kind": d.plural,
                                            "uid": obj.pointer("/metadata/uid").cloned().unwrap_or(Value::Null)}}),
                        &[],
                    ))
                }
            }
        }
        Method::DELETE if name.is_empty() && sub == Subresource::Main => {
            let opts = delete_options(&body, q)?;
            let list_opts = list_options(&r, q, false)?;
            let list = r.list(&ns, &list_opts).await?;
            let mut deleted = Vec::new();
            for item in table::objects(&r, &list)? {
                let n = item
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let item_ns = item
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match r.delete(item_ns, n, &opts).await {
                    Ok(DeleteResult::Deleted(o)) | Ok(DeleteResult::Pending(o)) => deleted.push(o),
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let body = json!({"kind": r.description.list_kind, "apiVersion": r.description.api_version(),
                              "metadata": {"resourceVersion": list.resource_version.to_string()}, "items": deleted});
            Ok(json_response(StatusCode::OK, &body, &[]))
        }
        _ => Err(ApiError::method_not_supported(&r.gr, method.as_str())),
    }
}

fn delete_options(body: &Bytes, q: &Query) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions {
        dry_run: is_dry_run(q)?,
        ..Default::default()
    };
    if !body.is_empty() {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        opts.grace_period_seconds = v.get("gracePeriodSeconds").and_then(Value::as_i64);
        if let Some(p) = v.get("preconditions") {
            opts.preconditions = Preconditions {
                uid: p.get("uid").and_then(Value::as_str).map(String::from),
                resource_version: p
                    .get("resourceVersion")
                    .and_then(Value::as_str)
                    .map(String::from),
            };
        }
        if v.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| x == "All"))
        {
            opts.dry_run = true;
        }
    }
    if let Some(g) = q.get("gracePeriodSeconds") {
        opts.grace_period_seconds = Some(
            g.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds: {g}")))?,
        );
    }
    Ok(opts)
}

async fn respond_object(
    r: &Resource,
    obj: Value,
    out: Output,
    code: StatusCode,
    warnings: &[String],
) -> ApiResult<Response> {
    match out {
        Output::Json => Ok(json_response(code, &obj, warnings)),
        Output::Table(include) => {
            let t = table::object_table(r, &obj, true, include).await?;
            Ok(json_response(code, &t, warnings))
        }
    }
}

async fn respond_write(
    r: &Resource,
    res: WriteResult,
    out: Output,
    warnings: &[String],
) -> ApiResult<Response> {
    let code = if res.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    respond_object(r, res.object, out, code, warnings).await
}

/// `?watch=true`: chunked newline-delimited `{"type":…,"object":…}` events
/// (`handlers/watch.go`). Ends after `timeoutSeconds`, after an ERROR event, or when the
/// storage watch ends.
async fn watch_handler(
    state: &Arc<AppState>,
    r: &Arc<Resource>,
    ns: &str,
    name: &str,
    q: &Query,
    out: Output,
) -> ApiResult<Response> {
    let mut opts = list_options(r, q, true)?;
    if !name.is_empty() {
        // A watch on one object: kube-apiserver turns the name into a field selector.
        opts.predicate.field.requirements.push(
            wasm_apiserver_storage::selection::FieldRequirement {
                field: "metadata.name".into(),
                equals: true,
                value: name.into(),
            },
        );
    }
    let timeout = options::watch_duration(options::timeout_seconds(q)?, state.watch_timeout);
    let deadline = tokio::time::Instant::now() + timeout;
    opts.watch_deadline = Some(deadline);
    let events = r.watch(ns, opts).await?;
    let r = r.clone();
    let state = state.clone();
    let shutdown = state.shutdown.clone();
    let stream =
        futures::stream::unfold((events, true, false), move |(mut events, first, done)| {
            let mut shutdown = shutdown.clone();
            // Table cells come from the plugin version serving now: a reload switches the
            // columns of an open watch (the storage, and so the watch, are unchanged).
            let d = &r.description;
            let r = state
                .resources()
                .resources
                .get(&d.group, &d.version, &d.plural)
                .unwrap_or_else(|| r.clone());
            async move {
                if done {
                    return None;
                }
                if *shutdown.borrow() {
                    return None;
                }
                let ev = tokio::select! {
                    ev = events.recv() => ev?,
                    _ = tokio::time::sleep_until(deadline) => return None,
                    _ = shutdown.changed() => return None,
                };
                let (kind, object) = match ev {
                    WatchEvent::Added(o) => ("ADDED", o),
                    WatchEvent::Modified(o) => ("MODIFIED", o),
                    WatchEvent::Deleted(o) => ("DELETED", o),
                    WatchEvent::Bookmark(o) => ("BOOKMARK", o.into()),
                    WatchEvent::Error(e) => (
                        "ERROR",
                        ApiError::from_storage(&e, &r.gr, "").status().into(),
                    ),
                };
                let is_error = kind == "ERROR";
                let line = if let (Output::Table(include), false, false) =
                    (out, is_error, kind == "BOOKMARK")
                {
                    let row = match object.to_arc() {
                        Ok(obj) => table::object_table(&r, &obj, first, include).await,
                        Err(e) => Err(ApiError::from_storage(&e, &r.gr, "")),
                    };
                    row.map(|t| {
                        (json!({"type": kind, "object": t}).to_string() + "\n").into_bytes()
                    })
                } else {
                    watch_line(kind, &object).map_err(|e| ApiError::from_storage(&e, &r.gr, ""))
                };
                let line = match line {
                    Ok(line) => line,
                    // An object that cannot be written ends the watch with an ERROR event (etcd3
                    // watcher.go sends the decode error and stops).
                    Err(e) => {
                        let line =
                            json!({"type": "ERROR", "object": e.status()}).to_string() + "\n";
                        return Some((
                            Ok::<_, std::io::Error>(Bytes::from(line)),
                            (events, false, true),
                        ));
                    }
                };
                let next_first = first && (is_error || kind == "BOOKMARK");
                Some((Ok(Bytes::from(line)), (events, next_first, is_error)))
            }
        });
    let mut resp = Response::new(Body::from_stream(stream.boxed()));
    resp.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    resp.headers_mut().insert(
        "cache-control",
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(resp)
}

/// One line of a watch response, `{"type":KIND,"object":OBJECT}\n` (`metav1.WatchEvent`
/// framed as kube-apiserver's JSON watch framing: one event per line). A stored object is
/// written from its bytes ([`SharedObject::write_json`]). Errors: the object does not decode.
fn watch_line(kind: &str, object: &SharedObject) -> Result<Vec<u8>, StorageError> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    object.write_json(&mut out)?;
    out.extend_from_slice(b"}\n");
    Ok(out)
}

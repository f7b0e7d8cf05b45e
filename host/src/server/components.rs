//! Uploads of strategy plugin components: `PUT /apis/wasm-apiserver.dev/v1/
//! strategyplugincomponents/<sha256>` with `Content-Type: application/wasm` stores the body
//! content-addressed (streamed, deflate-compressed, in chunks that fit one etcd request; see
//! [`BlobStore`](wasm_apiserver_storage::blob_store::BlobStore)); `GET` of the same path
//! says whether it is stored. A `StrategyPlugin` object then names the component by its
//! sha256, and every replica loads it from storage.
//!
//! Authorized like any request to the cluster-scoped resource `strategyplugincomponents` of
//! `wasm-apiserver.dev` (verbs `update` for PUT, `get`), which only `cluster-admin`'s
//! wildcard rule grants among the bootstrap roles. Answers:
//! - 201 (stored) or 200 (already stored) with a `StrategyPluginComponent` object
//!   (`metadata.name` = sha256, `size`, `storedSize`, `chunks`);
//! - 400 for a name that is not a lowercase hex sha256; 415 for another content type;
//! - 413 `RequestEntityTooLarge` past `--max-plugin-component-bytes` (from `Content-Length`
//!   before reading, else while streaming);
//! - 422 `Invalid` when the bytes are not a WebAssembly component (checked on the first
//!   bytes) or do not hash to the name. A refused upload leaves nothing stored.

use super::state::AppState;
use crate::reload::{COMPONENTS_PLURAL, STATUS_GROUP};
use crate::status::ApiError;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_apiserver_apimachinery::field;
use wasm_apiserver_apimachinery::{GroupKind, GroupResource};
use wasm_apiserver_storage::blob_store::{is_sha256, BlobError, BlobManifest};

/// The media type of an upload.
pub const CONTENT_TYPE: &str = "application/wasm";

fn gk() -> GroupKind {
    GroupKind {
        group: STATUS_GROUP.into(),
        kind: "StrategyPluginComponent".into(),
    }
}

fn gr() -> GroupResource {
    GroupResource {
        group: STATUS_GROUP.into(),
        resource: COMPONENTS_PLURAL.into(),
    }
}

fn object(m: &BlobManifest) -> Value {
    json!({
        "kind": "StrategyPluginComponent",
        "apiVersion": format!("{STATUS_GROUP}/v1"),
        "metadata": {"name": m.sha256},
        "size": m.size,
        "storedSize": m.stored_size,
        "chunks": m.chunks,
        "compression": m.compression,
    })
}

fn bad_name(sha256: &str) -> Option<ApiError> {
    (!is_sha256(sha256)).then(|| {
        ApiError::bad_request(format!(
            "{sha256:?} is not a component name: use the lowercase hex sha256 of its bytes"
        ))
    })
}

/// The most of a refused body read and dropped before answering (16 MiB): a client still
/// sending when the connection closes sees a broken pipe instead of the 413.
const DRAIN_BYTES: usize = 16 << 20;

/// Read and drop what is left of a refused body, up to [`DRAIN_BYTES`].
async fn drain(stream: &mut axum::body::BodyDataStream) {
    use futures::StreamExt;
    let mut n = 0;
    while let Some(Ok(piece)) = stream.next().await {
        n += piece.len();
        if n > DRAIN_BYTES {
            break;
        }
    }
}

/// Any other method: 405 (components are immutable; nothing deletes one through the API).
pub async fn other_method(method: axum::http::Method) -> Response {
    ApiError::method_not_supported(&gr(), method.as_str()).into_response()
}

/// `GET`: the stored component's object, or 404.
pub async fn get_component(
    State(state): State<Arc<AppState>>,
    Path(sha256): Path<String>,
) -> Response {
    if let Some(e) = bad_name(&sha256) {
        return e.into_response();
    }
    match state.components.info(&sha256).await {
        Ok(Some(m)) => Json(object(&m)).into_response(),
        Ok(None) => ApiError::not_found(&gr(), &sha256).into_response(),
        Err(e) => ApiError::from_storage(&e.into(), &gr(), &sha256).into_response(),
    }
}

/// `PUT`: store the body as the component `sha256`.
pub async fn put_component(
    State(state): State<Arc<AppState>>,
    Path(sha256): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(e) = bad_name(&sha256) {
        return e.into_response();
    }
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if content_type.split(';').next().map(str::trim) != Some(CONTENT_TYPE) {
        return ApiError::unsupported_media_type(&[CONTENT_TYPE]).into_response();
    }
    let limit = state.max_component_bytes;
    let too_large =
        || ApiError::request_entity_too_large(&format!("a component is at most {limit} bytes"));
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut stream = body.into_data_stream();
    if declared.is_some_and(|n| n > limit) {
        drain(&mut stream).await;
        return too_large().into_response();
    }
    let check = |head: &[u8]| {
        crate::plugin::load::check_header(head).map_err(|e| {
            format!(
                "not a WebAssembly component: {e}; its first bytes are {}",
                hex::encode(&head[..head.len().min(8)])
            )
        })
    };
    match state
        .components
        .put_stream(&sha256, &mut stream, limit, check)
        .await
    {
        Ok((m, created)) => {
            // "Already stored" answers without reading the body.
            drain(&mut stream).await;
            if created {
                tracing::info!(sha256 = %sha256, size = m.size, stored = m.stored_size, "component uploaded");
            }
            let code = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (code, Json(object(&m))).into_response()
        }
        Err(BlobError::TooLarge(_)) => {
            drain(&mut stream).await;
            too_large().into_response()
        }
        Err(BlobError::HashMismatch { actual, .. }) => ApiError::invalid(
            &gk(),
            &sha256,
            &[field::invalid(
                &field::Path::new("metadata").child("name"),
                &sha256,
                format!("the uploaded bytes have sha256 {actual}"),
            )],
        )
        .into_response(),
        Err(BlobError::Invalid(reason)) => {
            drain(&mut stream).await;
            ApiError::invalid(
                &gk(),
                &sha256,
                &[field::invalid(
                    &field::Path::new("content"),
                    CONTENT_TYPE,
                    reason,
                )],
            )
            .into_response()
        }
        Err(BlobError::Body(e)) => ApiError::bad_request(e).into_response(),
        Err(BlobError::Backend(e)) => {
            ApiError::from_storage(&e.into(), &gr(), &sha256).into_response()
        }
    }
}

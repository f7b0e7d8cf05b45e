//! `?watch=true` and `/watch/` paths (`k8s.io/apiserver/pkg/endpoints/handlers/watch.go`
//! `serveWatch`): chunked, newline-delimited `metav1.WatchEvent`s.

use super::request::Request;
use super::response::{self, Output};
use crate::registry::converter::Sharing;
use crate::registry::{table, RequestScope};
use crate::server::options;
use crate::server::state::AppState;
use crate::status::{ApiError, ApiResult};
use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::response::Response;
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use wasm_apiserver_storage::{SharedObject, StorageError, WatchEvent};

/// `?watch=true`: chunked newline-delimited `{"type":…,"object":…}` events
/// (`handlers/watch.go`). Ends after `timeoutSeconds`, after an ERROR event, or when the
/// storage watch ends.
pub async fn watch(
    state: &Arc<AppState>,
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
) -> ApiResult<Response> {
    let (q, out) = (req.query(), req.output);
    let mut opts = options::list_options(&scope.store, q, true)?.with_name(req.name());
    let timeout = options::watch_duration(options::timeout_seconds(q)?, state.watch_timeout);
    let deadline = tokio::time::Instant::now() + timeout;
    opts.watch_deadline = Some(deadline);
    let events = scope.store.watch(req.namespace(), &opts).await?;
    let scope = scope.clone();
    let state = state.clone();
    let shutdown = state.shutdown.clone();
    let stream =
        futures::stream::unfold((events, true, false), move |(mut events, first, done)| {
            let mut shutdown = shutdown.clone();
            // Table cells come from the plugin version serving now: a reload switches the
            // columns of an open watch (the storage, and so the watch, are unchanged).
            let d = &scope.store.description;
            let scope = state
                .served
                .load()
                .resources
                .scope(&d.group, &d.version, &d.plural)
                .unwrap_or_else(|| scope.clone());
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
                    WatchEvent::Bookmark(mut o) => {
                        // A bookmark names the watched version (kube's are objects of the
                        // request's kind and version).
                        o["apiVersion"] = json!(scope.api_version());
                        ("BOOKMARK", o.into())
                    }
                    WatchEvent::Error(e) => (
                        "ERROR",
                        ApiError::from_storage(&e, scope.resource(), "")
                            .status()
                            .into(),
                    ),
                };
                let is_error = kind == "ERROR";
                // In a version other than the storage version (or an object stored under an
                // earlier one), the object converted once per event and version, shared with
                // this version's other watchers (`crate::registry::converter`).
                let sharing = if kind == "DELETED" {
                    Sharing::Deleted
                } else {
                    Sharing::Stored
                };
                let line = if let (Output::Table(include), false, false) =
                    (out, is_error, kind == "BOOKMARK")
                {
                    let row = match object.to_arc() {
                        Ok(obj) => table::object_table(&scope, &obj, first, include, sharing).await,
                        Err(e) => Err(ApiError::from_storage(&e, scope.resource(), "")),
                    };
                    row.map(|t| {
                        (json!({"type": kind, "object": t}).to_string() + "\n").into_bytes()
                    })
                } else if let (Output::PartialObjectMetadata(v), false) = (out, is_error) {
                    // Bookmarks too: kube's watch encoder transforms every event's object.
                    object
                        .to_arc()
                        .map(|o| {
                            let partial = response::partial_object_metadata(&o, v);
                            (json!({"type": kind, "object": partial}).to_string() + "\n")
                                .into_bytes()
                        })
                        .map_err(|e| ApiError::from_storage(&e, scope.resource(), ""))
                } else if is_error || kind == "BOOKMARK" || !scope.must_encode(&object) {
                    watch_line(kind, &object)
                        .map_err(|e| ApiError::from_storage(&e, scope.resource(), ""))
                } else {
                    match object.to_arc() {
                        Ok(stored) => scope
                            .encode_event(stored, sharing)
                            .await
                            .map(|c| line_of_json(kind, c.json())),
                        Err(e) => Err(ApiError::from_storage(&e, scope.resource(), "")),
                    }
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
/// `{"type":"<kind>","object":<json>}` and a newline.
fn line_of_json(kind: &str, json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(json);
    out.extend_from_slice(b"}\n");
    out
}

fn watch_line(kind: &str, object: &SharedObject) -> Result<Vec<u8>, StorageError> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    object.write_json(&mut out)?;
    out.extend_from_slice(b"}\n");
    Ok(out)
}

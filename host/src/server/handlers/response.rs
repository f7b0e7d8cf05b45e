//! Writing answers (`k8s.io/apiserver/pkg/endpoints/handlers/response.go` and
//! `responsewriters`): JSON objects and lists, `Warning` headers, and the `metav1.Table` form
//! when the client asks for it (`as=Table;g=meta.k8s.io;v=v1`).

use crate::registry::converter::Sharing;
use crate::registry::store::{list_meta, WriteResult};
use crate::registry::table::{self, IncludeObject};
use crate::registry::RequestScope;
use crate::server::options::Query;
use crate::status::{ApiError, ApiResult};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_apiserver_storage::SharedListResult;

/// How a client wants objects back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Plain JSON objects and lists.
    Json,
    /// `metav1.Table` (`as=Table;g=meta.k8s.io;v=v1`), each row carrying the object as
    /// `includeObject` asks.
    Table(IncludeObject),
}

/// The output the `Accept` header asks for: a Table (`as=Table;g=meta.k8s.io;v=v1`, with
/// `includeObject` from the query) or JSON. Errors: an `includeObject` kube does not know.
pub fn output(headers: &HeaderMap, q: &Query) -> ApiResult<Output> {
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
        Output::Table(IncludeObject::from_query(q)?)
    } else {
        Output::Json
    })
}

/// A JSON answer with `code` and one `Warning` header per warning.
pub fn json_response(code: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let mut resp = (code, axum::Json(body)).into_response();
    append_warnings(&mut resp, warnings);
    resp
}

/// Add one `Warning: 299 - "text"` header per warning (RFC 7234 §5.5; kube-apiserver's
/// warning header format). A text that cannot be a header value is left out.
pub fn append_warnings(resp: &mut Response, warnings: &[String]) {
    for w in warnings {
        let text = w.replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{text}\"")) {
            resp.headers_mut().append("Warning", v);
        }
    }
}

/// A 200 response whose body is JSON text already written (an object or a list from its
/// `SharedObject`s).
pub fn json_bytes_response(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// The JSON of a list response (`{"apiVersion","kind":"<Kind>List","metadata","items"}`),
/// written straight from the list's items: objects read from storage are copied from their
/// stored bytes (the backend's or the watch cache's) with their resourceVersion spliced in,
/// decoded ones serialized as they are, so no list builds a `Value` per object — except in a
/// version other than the storage version, where each item is encoded through the scope
/// (blocking). Errors: a corrupt stored object answers 500, as kube-apiserver's list does when
/// an object fails to decode; so does a conversion that fails.
pub fn list_body(scope: &RequestScope, list: &SharedListResult) -> ApiResult<Vec<u8>> {
    let r = &scope.store;
    let head = json!({"apiVersion": r.description.api_version(), "kind": r.description.list_kind,
                      "metadata": list_meta(list)});
    let mut out = serde_json::to_vec(&head).map_err(ApiError::internal)?;
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"items\":[");
    // The items to encode, converted together (one webhook review for a list).
    let stored = list
        .items
        .iter()
        .filter(|item| scope.must_encode(item))
        .map(|item| item.to_arc())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::from_storage(&e, &r.gr, ""))?;
    let mut converted = scope
        .encode_all_json_blocking(&stored, Sharing::Stored)?
        .into_iter();
    for (i, item) in list.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if !scope.must_encode(item) {
            item.write_json(&mut out)
                .map_err(|e| ApiError::from_storage(&e, &r.gr, ""))?;
        } else {
            let c = converted.next().expect("one answer per item to encode");
            out.extend_from_slice(c.json());
        }
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}

/// An object answer: `obj` (in the storage version, as the registry returns it) in the
/// request's version, as JSON or a one-row Table. Errors: the conversion's, the Table's.
pub async fn respond_object(
    scope: &Arc<RequestScope>,
    obj: Value,
    out: Output,
    code: StatusCode,
    warnings: &[String],
) -> ApiResult<Response> {
    match out {
        // A write's answer: its resourceVersion may name other content (a dry run's).
        Output::Json => {
            let obj = scope.encode(Arc::new(obj), Sharing::No).await?;
            Ok(json_response(code, &obj, warnings))
        }
        Output::Table(include) => {
            let t = table::object_table(scope, &obj, true, include, Sharing::No).await?;
            Ok(json_response(code, &t, warnings))
        }
    }
}

/// A write's answer: 201 when it created, else 200, with the object as
/// [`respond_object`] writes it.
pub async fn respond_write(
    scope: &Arc<RequestScope>,
    res: WriteResult,
    out: Output,
    warnings: &[String],
) -> ApiResult<Response> {
    let code = if res.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    respond_object(scope, res.object, out, code, warnings).await
}

//! Writing answers (`k8s.io/apiserver/pkg/endpoints/handlers/response.go` and
//! `responsewriters`): JSON objects and lists, `Warning` headers, and the forms a client may
//! ask for instead: `metav1.Table` (`as=Table;g=meta.k8s.io;v=v1`) and metadata only
//! (`as=PartialObjectMetadata` / `as=PartialObjectMetadataList`, `meta.k8s.io` `v1` or
//! `v1beta1`; client-go's metadata client and informers).

use crate::registry::converter::Sharing;
use crate::registry::store::{list_meta, WriteResult};
use crate::registry::table::{self, IncludeObject};
use crate::registry::RequestScope;
use crate::server::negotiation;
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
    /// An object's metadata only (`as=PartialObjectMetadata`), in this `meta.k8s.io` version;
    /// watch events' objects too. A list asked for so is 406, as kube answers.
    PartialObjectMetadata(&'static str),
    /// A list's items' metadata only (`as=PartialObjectMetadataList`), in this `meta.k8s.io`
    /// version. An object asked for so is 406; a watch writes whole objects (kube's watch
    /// encoder falls back to the object when the conversion fails).
    PartialObjectMetadataList(&'static str),
}

/// The output the `Accept` header asks for ([`negotiation::negotiate_output`]): a Table (with
/// `includeObject` from the query), metadata only, or JSON — also when no clause is
/// acceptable (kube answers 406; clients asking for protobuf or YAML only get JSON here).
/// Errors: an `includeObject` kube does not know.
pub fn output(headers: &HeaderMap, q: &Query) -> ApiResult<Output> {
    let convert = negotiation::negotiate_output(headers).flatten();
    Ok(match convert.map(|c| (c.kind, c.api_version)) {
        None => Output::Json,
        Some(("Table", _)) => Output::Table(IncludeObject::from_query(q)?),
        Some(("PartialObjectMetadataList", v)) => Output::PartialObjectMetadataList(v),
        Some((_, v)) => Output::PartialObjectMetadata(v),
    })
}

/// `asPartialObjectMetadata` (`handlers/response.go`): the object's whole `metadata` under
/// `kind: PartialObjectMetadata` of `api_version`. Metadata is the same in every version of a
/// resource, so the stored object needs no conversion.
pub fn partial_object_metadata(obj: &Value, api_version: &str) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": api_version,
           "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))})
}

/// `asPartialObjectMetadataList`: the list's metadata (resourceVersion, continue,
/// remainingItemCount) and each item as [`partial_object_metadata`]. Errors: an item that does
/// not decode (500, as a list answers).
pub fn partial_object_metadata_list(
    scope: &RequestScope,
    list: &SharedListResult,
    api_version: &str,
) -> ApiResult<Value> {
    let items = list
        .items
        .iter()
        .map(|item| {
            item.to_arc()
                .map(|o| partial_object_metadata(&o, api_version))
                .map_err(|e| ApiError::from_storage(&e, &scope.store.gr, ""))
        })
        .collect::<ApiResult<Vec<_>>>()?;
    Ok(
        json!({"kind": "PartialObjectMetadataList", "apiVersion": api_version,
              "metadata": list_meta(list), "items": items}),
    )
}

/// kube's 406 for metadata of the wrong shape (`asPartialObjectMetadata{,List}`); Go's type
/// names are those of an unstructured object, as a CRD's.
pub fn not_acceptable_shape(list: bool) -> ApiError {
    ApiError::not_acceptable(&if list {
        "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)".to_string()
    } else {
        "you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)".to_string()
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
        Output::PartialObjectMetadata(v) => Ok(json_response(
            code,
            &partial_object_metadata(&obj, v),
            warnings,
        )),
        Output::PartialObjectMetadataList(_) => Err(not_acceptable_shape(false)),
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

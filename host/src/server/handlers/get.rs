//! GET of one object and of a list (`k8s.io/apiserver/pkg/endpoints/handlers/get.go`
//! `GetResource`, `ListResource`).

use super::request::Request;
use super::response::{self, json_bytes_response, json_response, Output};
use crate::registry::converter::Sharing;
use crate::registry::{table, RequestScope};
use crate::server::options;
use crate::status::{ApiError, ApiResult};
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// `GetResource`: JSON is written from the stored bytes or the watch cache's object without a
/// copy (encoded through the scope first in a version other than the storage version); a
/// Table goes through the printer columns.
pub async fn get(scope: &Arc<RequestScope>, req: &Request<'_>) -> ApiResult<Response> {
    let r = &scope.store;
    let (ns, name) = (req.namespace(), req.name());
    let rv = req
        .query()
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    match req.output {
        Output::Json => {
            let obj = r.get_shared(ns, name, rv).await?;
            if scope.must_encode(&obj) {
                let obj = scope.encode_stored(&obj, Sharing::Stored, name).await?;
                return Ok(json_response(StatusCode::OK, &obj, &[]));
            }
            let mut body = Vec::new();
            obj.write_json(&mut body)
                .map_err(|e| ApiError::from_storage(&e, &r.gr, name))?;
            Ok(json_bytes_response(body))
        }
        Output::Table(include) => {
            let obj = r.get(ns, name, rv).await?;
            let t = table::object_table(scope, &obj, true, include, Sharing::Stored).await?;
            Ok(json_response(StatusCode::OK, &t, &[]))
        }
        Output::PartialObjectMetadata(v) => {
            let obj = r.get(ns, name, rv).await?;
            let partial = response::partial_object_metadata(&obj, v);
            Ok(json_response(StatusCode::OK, &partial, &[]))
        }
        Output::PartialObjectMetadataList(_) => Err(response::not_acceptable_shape(false)),
    }
}

/// `ListResource` without `watch`: the query decoded into list options, one registry list,
/// the answer written as a list or a Table.
pub async fn list(scope: &Arc<RequestScope>, req: &Request<'_>) -> ApiResult<Response> {
    let q = req.query();
    options::timeout_seconds(q)?;
    let opts = options::list_options(&scope.store, q, false)?;
    let list = scope.store.list(req.namespace(), &opts).await?;
    match req.output {
        Output::Json => {
            // Writing 10,000 objects takes milliseconds: off the async workers.
            let scope = scope.clone();
            let body = tokio::task::spawn_blocking(move || response::list_body(&scope, &list))
                .await
                .map_err(ApiError::internal)??;
            Ok(json_bytes_response(body))
        }
        Output::Table(include) => {
            let t = table::list_table(scope, &list, include).await?;
            Ok(json_response(StatusCode::OK, &t, &[]))
        }
        Output::PartialObjectMetadataList(v) => {
            let partial = response::partial_object_metadata_list(scope, &list, v)?;
            Ok(json_response(StatusCode::OK, &partial, &[]))
        }
        Output::PartialObjectMetadata(_) => Err(response::not_acceptable_shape(true)),
    }
}

//! GET of one object and of a list (`k8s.io/apiserver/pkg/endpoints/handlers/get.go`
//! `GetResource`, `ListResource`).

use super::response::{self, json_bytes_response, json_response, Output};
use crate::registry::converter::Sharing;
use crate::registry::{table, Store};
use crate::server::options;
use crate::server::options::Query;
use crate::status::{ApiError, ApiResult};
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// `GetResource`: JSON is written from the stored bytes or the watch cache's object without a
/// copy (converted first in a version other than the storage version); a Table goes through
/// the printer columns.
pub async fn get(r: &Store, ns: &str, name: &str, q: &Query, out: Output) -> ApiResult<Response> {
    let rv = q.get("resourceVersion").map(String::as_str).unwrap_or("");
    match out {
        Output::Json => {
            let obj = r.get_shared(ns, name, rv).await?;
            if r.converter.may_convert(&obj) {
                let stored = obj
                    .to_arc()
                    .map_err(|e| ApiError::from_storage(&e, &r.gr, name))?;
                let obj = r
                    .converter
                    .from_storage_async(stored, Sharing::Stored)
                    .await?;
                return Ok(json_response(StatusCode::OK, &obj, &[]));
            }
            let mut body = Vec::new();
            obj.write_json(&mut body)
                .map_err(|e| ApiError::from_storage(&e, &r.gr, name))?;
            Ok(json_bytes_response(body))
        }
        Output::Table(include) => {
            let obj = r.get(ns, name, rv).await?;
            let t = table::object_table(r, &obj, true, include, Sharing::Stored).await?;
            Ok(json_response(StatusCode::OK, &t, &[]))
        }
    }
}

/// `ListResource` without `watch`: the query decoded into list options, one registry list,
/// the answer written as a list or a Table.
pub async fn list(r: &Arc<Store>, ns: &str, q: &Query, out: Output) -> ApiResult<Response> {
    options::timeout_seconds(q)?;
    let opts = options::list_options(r, q, false)?;
    let list = r.list(ns, &opts).await?;
    match out {
        Output::Json => {
            // Writing 10,000 objects takes milliseconds: off the async workers.
            let r = r.clone();
            let body = tokio::task::spawn_blocking(move || response::list_body(&r, &list))
                .await
                .map_err(ApiError::internal)??;
            Ok(json_bytes_response(body))
        }
        Output::Table(include) => {
            let t = table::list_table(r, &list, include).await?;
            Ok(json_response(StatusCode::OK, &t, &[]))
        }
    }
}

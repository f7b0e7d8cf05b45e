//! POST of a new object (`k8s.io/apiserver/pkg/endpoints/handlers/create.go`
//! `createHandler`): decode, one registry create, 201 with the stored object.

use super::body::decode_object;
use super::response::{respond_write, Output};
use super::user_agent;
use crate::registry::{CreateOptions, Store, WriteAdmission};
use crate::server::options::Query;
use crate::server::options::{self, WriteOptions};
use crate::status::ApiResult;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::Response;
use std::sync::Arc;

/// `createHandler`; the object's managed fields name the request's manager (`fieldManager` or
/// the User-Agent prefix); the Store runs `admission` around the strategy. Errors: the
/// body's ([`decode_object`]), `dryRun`'s, admission's and the registry's.
pub async fn create(
    r: &Store,
    ns: &str,
    body: &Bytes,
    headers: &HeaderMap,
    q: &Query,
    out: Output,
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let manager = options::field_manager(q, user_agent(headers), WriteOptions::Create, false)?;
    let (mut obj, mut warnings) = decode_object(r, body, headers, q, WriteOptions::Create)?;
    // `EnsureObjectNamespaceMatchesRequestNamespace` comes before admission, as in createHandler.
    crate::registry::meta::ensure_namespace(&mut obj, r.description.namespaced, ns)
        .map_err(crate::status::ApiError::bad_request)?;
    // Every hook sees the storage version.
    let obj = r.converter.to_storage_async(obj).await?;
    let opts = CreateOptions {
        dry_run: options::is_dry_run(q)?,
        field_manager: Some(&manager),
        admission,
    };
    let res = r.create(ns, obj, &opts).await?;
    warnings.extend(res.warnings.iter().cloned());
    respond_write(r, res, out, &warnings).await
}

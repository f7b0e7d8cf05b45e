//! POST of a new object (`k8s.io/apiserver/pkg/endpoints/handlers/create.go`
//! `createHandler`): decode, one registry create, 201 with the stored object.

use super::body::decode_object;
use super::escalation::WriteCheck;
use super::response::{respond_write, Output};
use super::user_agent;
use crate::registry::Store;
use crate::server::options::Query;
use crate::server::options::{self, WriteOptions};
use crate::status::ApiResult;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::Response;

/// `createHandler`; the object's managed fields name the request's manager (`fieldManager` or
/// the User-Agent prefix); `NamespaceLifecycle` admission (given the namespaces' Store) and `check`
/// run on the decoded object before it is written. Errors: the
/// body's ([`decode_object`]), the check's, `dryRun`'s and the registry's.
#[allow(clippy::too_many_arguments)]
pub async fn create(
    r: &Store,
    ns: &str,
    body: &Bytes,
    headers: &HeaderMap,
    q: &Query,
    out: Output,
    check: Option<WriteCheck>,
    namespaces: Option<&Store>,
) -> ApiResult<Response> {
    let manager = options::field_manager(q, user_agent(headers), WriteOptions::Create, false)?;
    let (mut obj, mut warnings) = decode_object(r, body, headers, q, WriteOptions::Create)?;
    // `EnsureObjectNamespaceMatchesRequestNamespace` comes before admission, as in createHandler.
    crate::registry::meta::ensure_namespace(&mut obj, r.description.namespaced, ns)
        .map_err(crate::status::ApiError::bad_request)?;
    // Every hook sees the storage version.
    let obj = r.converter.to_storage_async(obj).await?;
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    crate::admission::namespace_lifecycle::admit_create(namespaces, r, ns, name).await?;
    if let Some(check) = check {
        check(&obj, None)?;
    }
    let res = r
        .create(ns, obj, options::is_dry_run(q)?, Some(&manager))
        .await?;
    warnings.extend(res.warnings.iter().cloned());
    respond_write(r, res, out, &warnings).await
}

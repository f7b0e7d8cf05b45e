//! PUT of an object or its status (`k8s.io/apiserver/pkg/endpoints/handlers/update.go`
//! `UpdateResource`): decode, one registry update, 200 (or 201 when it created).

use super::body::decode_object;
use super::escalation::WriteCheck;
use super::response::{respond_write, Output};
use super::user_agent;
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::Store;
use crate::server::options::Query;
use crate::server::options::{self, WriteOptions};
use crate::status::ApiResult;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::Response;

/// `UpdateResource`; `check` runs on the new object before it is written. Errors: the body's
/// ([`decode_object`]), the check's, `dryRun`'s and the registry's.
#[allow(clippy::too_many_arguments)]
pub async fn update(
    r: &Store,
    ns: &str,
    name: &str,
    sub: Subresource,
    body: &Bytes,
    headers: &HeaderMap,
    q: &Query,
    out: Output,
    check: Option<WriteCheck>,
) -> ApiResult<Response> {
    let manager = options::field_manager(q, user_agent(headers), WriteOptions::Update, false)?;
    let (obj, mut warnings) = decode_object(r, body, headers, q, WriteOptions::Update)?;
    // kube checks inside the update, against the current object; the body is the new object
    // here, so the check runs before, without the current one.
    if let Some(check) = check {
        check(&obj, None)?;
    }
    // Every hook sees the storage version.
    let obj = r.converter.to_storage_async(obj).await?;
    let res = r
        .update(
            ns,
            name,
            UpdatedObject::Replace(obj),
            sub,
            false,
            options::is_dry_run(q)?,
            Some(&manager),
        )
        .await?;
    warnings.extend(res.warnings.iter().cloned());
    respond_write(r, res, out, &warnings).await
}

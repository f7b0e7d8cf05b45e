//! PUT of an object or its status (`k8s.io/apiserver/pkg/endpoints/handlers/update.go`
//! `UpdateResource`): decode, one registry update, 200 (or 201 when it created).

use super::body::decode_object;
use super::response::{respond_write, Output};
use super::user_agent;
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{Store, UpdateOptions, WriteAdmission};
use crate::server::options::Query;
use crate::server::options::{self, WriteOptions};
use crate::status::ApiResult;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::Response;
use std::sync::Arc;

/// `UpdateResource`; the Store runs `admission` inside the update, with the current object.
/// Errors: the body's ([`decode_object`]), `dryRun`'s, admission's and the registry's.
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
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let manager = options::field_manager(q, user_agent(headers), WriteOptions::Update, false)?;
    let (obj, mut warnings) = decode_object(r, body, headers, q, WriteOptions::Update)?;
    // Every hook sees the storage version.
    let obj = r.converter.to_storage_async(obj).await?;
    let opts = UpdateOptions {
        subresource: sub,
        force_allow_create: false,
        dry_run: options::is_dry_run(q)?,
        field_manager: Some(&manager),
        admission,
    };
    let res = r
        .update(ns, name, UpdatedObject::Replace(obj), &opts)
        .await?;
    warnings.extend(res.warnings.iter().cloned());
    respond_write(r, res, out, &warnings).await
}

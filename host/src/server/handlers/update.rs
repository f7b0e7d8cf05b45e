//! PUT of an object or its status (`k8s.io/apiserver/pkg/endpoints/handlers/update.go`
//! `UpdateResource`): decode, one registry update, 200 (or 201 when it created).

use super::body::decode_object;
use super::request::Request;
use super::response::respond_write;
use crate::registry::store::UpdatedObject;
use crate::registry::{RequestScope, UpdateOptions, WriteAdmission};
use crate::server::options::{OptionsKind, WriteOptions};
use crate::status::ApiResult;
use axum::response::Response;
use std::sync::Arc;

/// `UpdateResource`; the Store runs `admission` inside the update, with the current object.
/// Errors: the options' ([`WriteOptions::decode`]), the body's ([`decode_object`]),
/// admission's and the registry's.
pub async fn update(
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let options = WriteOptions::decode(req.query(), req.user_agent(), OptionsKind::Update, false)?;
    let (obj, mut warnings) = decode_object(scope, req, &options)?;
    // Every hook sees the storage version.
    let obj = scope.decode(obj).await?;
    let opts = UpdateOptions {
        subresource: req.subresource,
        force_allow_create: false,
        dry_run: options.dry_run,
        field_manager: Some(&options.field_manager),
        admission: admission.clone(),
    };
    let res = scope
        .store
        .update(
            req.namespace(),
            req.name(),
            UpdatedObject::Replace(obj),
            &opts,
        )
        .await?;
    warnings.extend(res.warnings.iter().cloned());
    warnings.extend(admission.iter().flat_map(|a| a.warnings()));
    respond_write(scope, res, req.output, &warnings).await
}

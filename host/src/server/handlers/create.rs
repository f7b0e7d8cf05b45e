//! POST of a new object (`k8s.io/apiserver/pkg/endpoints/handlers/create.go`
//! `createHandler`): decode, one registry create, 201 with the stored object.

use super::body::decode_object;
use super::request::Request;
use super::response::respond_write;
use crate::registry::{CreateOptions, RequestScope, WriteAdmission};
use crate::server::options::{OptionsKind, WriteOptions};
use crate::status::ApiResult;
use axum::response::Response;
use std::sync::Arc;

/// `createHandler`: the options decoded and validated first, then the body; the object's
/// managed fields name the request's manager (`fieldManager` or the User-Agent prefix); the
/// Store runs `admission` around the strategy. Errors: the options' ([`WriteOptions::decode`]),
/// the body's ([`decode_object`]), admission's and the registry's.
pub async fn create(
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
    admission: Option<Arc<dyn WriteAdmission>>,
) -> ApiResult<Response> {
    let options = WriteOptions::decode(req.query(), req.user_agent(), OptionsKind::Create, false)?;
    let (mut obj, mut warnings) = decode_object(scope, req, &options)?;
    // `EnsureObjectNamespaceMatchesRequestNamespace` comes before admission, as in createHandler.
    let namespaced = scope.store.description.namespaced;
    crate::registry::meta::ensure_namespace(&mut obj, namespaced, req.namespace())
        .map_err(crate::status::ApiError::bad_request)?;
    // Every hook sees the storage version.
    let obj = scope.decode(obj).await?;
    let opts = CreateOptions {
        dry_run: options.dry_run,
        field_manager: Some(&options.field_manager),
        admission: admission.clone(),
    };
    let res = scope.store.create(req.namespace(), obj, &opts).await?;
    warnings.extend(res.warnings.iter().cloned());
    warnings.extend(admission.iter().flat_map(|a| a.warnings()));
    respond_write(scope, res, req.output, &warnings).await
}

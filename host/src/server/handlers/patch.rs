//! PATCH (`k8s.io/apiserver/pkg/endpoints/handlers/patch.go`): JSON patch (RFC 6902) and JSON
//! merge patch (RFC 7386) through the `json-patch` crate; strategic merge patch for the core
//! group, driven by the `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy` markers
//! of the plugin's schema (`k8s.io/apimachinery/pkg/util/strategicpatch`); and
//! `application/apply-patch+yaml` (server-side apply) through the resource's field manager
//! (`crate::fieldmanager`), which also records every other patch's manager. Strategic merge
//! patch is served for Kubernetes' built-in API groups ([`BUILT_IN_GROUPS`]: kubectl sends it
//! for the kinds it knows); other groups answer 415, as kube-apiserver does for custom
//! resources.

use super::request::Request;

/// kube-apiserver's built-in API groups (1.32, `pkg/controlplane/instance.go` and the
/// aggregated `apiextensions`/`apiregistration`): their kinds take strategic merge patches.
pub const BUILT_IN_GROUPS: [&str; 24] = [
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];
use crate::limits::{self, Exceeded};
use crate::registry::RequestScope;
use crate::server::options::{OptionsKind, WriteOptions};
use crate::status::{ApiError, ApiResult};
use crate::strategy::ResourceDescription;
use json_patch::PatchOperation;
use serde_json::Value;
use std::sync::Arc;
use wasm_apiserver_apimachinery::meta::accessor;
use wasm_apiserver_apimachinery::GroupResource;

pub use crate::registry::store::PatchFn;

/// `PatchResource`: the options decoded and validated first, the patch type from the
/// `Content-Type` ([`patcher`]), one registry update that applies it to the current object in
/// the request's version (the scope decodes the result to the storage version; admission then
/// runs in the Store on the patched and the current object). Errors: the options'
/// ([`WriteOptions::decode`]), a body over [`limits::MAX_BODY_BYTES`] (413), the patcher's, the
/// registry's.
pub async fn patch(
    scope: &Arc<RequestScope>,
    req: &Request<'_>,
    admission: Option<Arc<dyn crate::registry::WriteAdmission>>,
) -> ApiResult<axum::response::Response> {
    let ct = req.content_type();
    let apply = ct.starts_with("application/apply-patch+");
    let options = WriteOptions::decode(req.query(), req.user_agent(), OptionsKind::Patch, apply)?;
    if req.body.len() > limits::MAX_BODY_BYTES {
        return Err(ApiError::request_entity_too_large(&format!(
            "limit is {}",
            limits::MAX_BODY_BYTES
        )));
    }
    let r = &scope.store;
    let (patch_fn, force_create) = patcher(
        &r.description,
        &r.gr,
        &ct,
        &req.body,
        &Applier {
            field_manager: scope.field_manager.clone(),
            manager: options.field_manager.clone(),
            subresource: req.subresource.name(),
            force: options.force,
        },
    )?;
    // The patch applies to the object in the request's version, whose type meta it may not
    // change (the decoder's check, as on a create or update); the hooks then see the result
    // in the storage version.
    let (d, gk) = (r.description.clone(), r.gk.clone());
    let patch_fn = scope.decode_patch(patch_fn, move |patched| {
        super::body::check_kind(&d, &gk, patched)
    });
    let patch_fn = uid_on_create_is_conflict(patch_fn, &r.gr, req.name());
    let opts = crate::registry::UpdateOptions {
        subresource: req.subresource,
        force_allow_create: force_create,
        dry_run: options.dry_run,
        // Apply records its manager in the patch; other patches when written.
        field_manager: (!apply).then_some(options.field_manager.as_str()),
        admission: admission.clone(),
    };
    let res = r
        .update(
            req.namespace(),
            req.name(),
            crate::registry::store::UpdatedObject::Patch(patch_fn),
            &opts,
        )
        .await?;
    let mut warnings = res.warnings.clone();
    warnings.extend(admission.iter().flat_map(|a| a.warnings()));
    super::response::respond_write(scope, res, req.output, &warnings).await
}

/// patch.go `applyPatch`: a patch that would create an object naming a uid is a conflict
/// (only apply creates).
fn uid_on_create_is_conflict(inner: PatchFn, gr: &GroupResource, name: &str) -> PatchFn {
    let (gr, name) = (gr.clone(), name.to_string());
    Arc::new(move |current: &Value| {
        let new = inner(current)?;
        let uid = accessor(&new).uid();
        if current.is_null() && !uid.is_empty() {
            return Err(ApiError::conflict(
                &gr,
                &name,
                &format!("uid mismatch: the provided object specified uid {uid}, and no existing object was found"),
            ));
        }
        Ok(new)
    })
}

fn invalid_patch(msg: impl std::fmt::Display) -> ApiError {
    ApiError {
        code: 422,
        reason: "Invalid",
        message: msg.to_string(),
        details: None,
        metadata: serde_json::json!({}),
    }
}

/// Who applies a server-side apply patch: the resource's field manager, the request's manager,
/// the subresource (`""` or `status`) and whether conflicts are forced.
pub struct Applier {
    /// The field manager of the request's version.
    pub field_manager: Arc<crate::fieldmanager::FieldManager>,
    /// `fieldManager` (validated, non-empty for apply).
    pub manager: String,
    /// The subresource written through.
    pub subresource: &'static str,
    /// `force=true`: take conflicting fields from their managers.
    pub force: bool,
}

/// Build the patch function for a content type. Returns it and whether the patch may create
/// the object (server-side apply). Errors: 415 for unsupported types, 400 for a body that does
/// not parse.
pub fn patcher(
    d: &ResourceDescription,
    gr: &GroupResource,
    content_type: &str,
    body: &[u8],
    applier: &Applier,
) -> ApiResult<(PatchFn, bool)> {
    let gr = gr.clone();
    let not_found = move |name: &str| ApiError::not_found(&gr, name);
    match content_type {
        "application/json-patch+json" => {
            let patch: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if patch.0.len() > limits::MAX_JSON_PATCH_OPERATIONS {
                return Err(ApiError::request_entity_too_large(&format!(
                    "The allowed maximum operations in a JSON patch is {}, got {}",
                    limits::MAX_JSON_PATCH_OPERATIONS,
                    patch.0.len()
                )));
            }
            Ok((
                bounded(move |cur: &Value| {
                    if cur.is_null() {
                        return Err(not_found(""));
                    }
                    apply_json_patch(cur, &patch.0)
                }),
                false,
            ))
        }
        "application/merge-patch+json" => {
            let patch = parse_object(body)?;
            Ok((
                bounded(move |cur: &Value| {
                    if cur.is_null() {
                        return Err(not_found(""));
                    }
                    let mut doc = cur.clone();
                    json_patch::merge(&mut doc, &patch);
                    Ok(doc)
                }),
                false,
            ))
        }
        "application/strategic-merge-patch+json" => {
            if !BUILT_IN_GROUPS.contains(&d.group.as_str()) {
                return Err(ApiError::unsupported_patch_type(
                    content_type,
                    &format!("{}/{}, Kind={}", d.group, d.version, d.kind),
                ));
            }
            let patch = parse_object(body)?;
            let schema = d.openapi_schema.clone();
            Ok((
                bounded(move |cur: &Value| {
                    if cur.is_null() {
                        return Err(not_found(""));
                    }
                    wasm_apiserver_apimachinery::strategic_merge_patch::strategic_merge(
                        cur, &patch, &schema,
                    )
                    .map_err(invalid_patch)
                }),
                false,
            ))
        }
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
            // JSON (kubectl sends it) or YAML, as kube's apply decodes either.
            let applied = match parse_object(body) {
                Ok(v) => v,
                Err(_) => {
                    let v = crate::server::negotiation::decode_yaml(body)?;
                    if !v.is_object() {
                        return Err(ApiError::bad_request(
                            "the applied configuration must be an object",
                        ));
                    }
                    v
                }
            };
            let force = applier.force;
            let fm = applier.field_manager.clone();
            let (manager, subresource) = (applier.manager.clone(), applier.subresource);
            // `applyPatcher`: the field manager merges the configuration into the current
            // object (an empty one when it does not exist) by the schema and its ownership.
            Ok((
                bounded(move |cur: &Value| fm.apply(cur, &applied, &manager, force, subresource)),
                true,
            ))
        }
        // Built-in resources: go-restful refuses a type the route does not consume before
        // kube's handler runs (`jsr311.go`, answered by `serviceErrorHandler`); custom
        // resources: kube's patch handler names the patch types it accepts.
        _ if d.group.is_empty() => {
            Err(ApiError::unsupported_media_type(&[]).with_message("415: Unsupported Media Type"))
        }
        _ => Err(ApiError::unsupported_media_type(&[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ])),
    }
}

/// Wrap a patch function so that the object it produces is checked against the bounds of
/// [`crate::limits`]: deeper than [`limits::MAX_DEPTH`] → 422, JSON longer than
/// [`limits::MAX_OBJECT_BYTES`] → 413 (kube-apiserver refuses an object over its request limit
/// with `Request entity too large: limit is 3145728`).
fn bounded(f: impl Fn(&Value) -> ApiResult<Value> + Send + Sync + 'static) -> PatchFn {
    Arc::new(move |cur: &Value| {
        let doc = f(cur)?;
        match limits::check_object(&doc) {
            Ok(()) => Ok(doc),
            Err(Exceeded::Depth) => Err(too_deep()),
            Err(Exceeded::Size(limit)) => Err(ApiError::request_entity_too_large(&format!(
                "the patched object is larger than the limit of {limit} bytes"
            ))),
        }
    })
}

fn too_deep() -> ApiError {
    invalid_patch(limits::too_deep_message())
}

/// RFC 6902 JSON patch with kube-apiserver's guards ([`limits::apply_json_patch`]). Errors:
/// 422 `Invalid` naming the operation, as kube answers a failed patch application.
pub fn apply_json_patch(cur: &Value, ops: &[PatchOperation]) -> ApiResult<Value> {
    limits::apply_json_patch(cur, ops).map_err(|e| invalid_patch(e.message))
}

fn parse_object(body: &[u8]) -> ApiResult<Value> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::bad_request("the patch must be a JSON object"));
    }
    Ok(v)
}

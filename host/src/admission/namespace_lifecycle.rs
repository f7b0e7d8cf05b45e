//! `NamespaceLifecycle` (`plugin/pkg/admission/namespace/lifecycle/admission.go`): a namespaced
//! object may only be created in a namespace that exists (else 404 `namespaces "x" not found`)
//! and is not terminating (else 403 `unable to create new content in namespace x because it is
//! being terminated`, cause `NamespaceTerminating`); `default`, `kube-system` and
//! `kube-public` may not be deleted. The namespace is read from the watch cache, then — when
//! the cache does not have it — from storage, as kube falls back to a live lookup. When no
//! plugin serves namespaces there is nothing to check.

use crate::registry::Store;
use crate::status::{ApiError, ApiResult};
use serde_json::json;
use wasm_apiserver_apimachinery::GroupResource;

/// Namespaces that may not be deleted (`immortalNamespaces`).
pub const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

fn namespaces_gr() -> GroupResource {
    GroupResource {
        group: String::new(),
        resource: "namespaces".into(),
    }
}

/// Admit the create of `name` (may be empty with `generateName`) of `store`'s resource in
/// namespace `ns`, given the namespaces' Store. Errors: 404 or 403 as above.
pub async fn admit_create(
    namespaces: Option<&Store>,
    store: &Store,
    ns: &str,
    name: &str,
) -> ApiResult<()> {
    let Some(namespace) = lookup(namespaces, store, ns).await? else {
        return Ok(());
    };
    if namespace.pointer("/status/phase").and_then(|p| p.as_str()) != Some("Terminating") {
        return Ok(());
    }
    let mut e = ApiError::forbidden(
        &store.gr,
        name,
        &format!("unable to create new content in namespace {ns} because it is being terminated"),
    );
    if let Some(d) = e.details.as_mut() {
        d["causes"] = json!([{"reason": "NamespaceTerminating",
                              "message": format!("namespace {ns} is being terminated"),
                              "field": "metadata.namespace"}]);
    }
    Err(e)
}

/// The namespace a write of `store`'s resource in `ns` goes to; `None` when nothing is to be
/// checked (no namespaces served, a cluster-scoped resource). Errors: 404 when it is missing.
async fn lookup(
    namespaces: Option<&Store>,
    store: &Store,
    ns: &str,
) -> ApiResult<Option<std::sync::Arc<serde_json::Value>>> {
    let Some(namespaces) = namespaces else {
        return Ok(None);
    };
    if !store.description.namespaced || ns.is_empty() {
        return Ok(None);
    }
    let shared = match namespaces.get_shared("", ns, "0").await {
        Ok(n) => n,
        Err(e) if e.code == 404 => match namespaces.get_shared("", ns, "").await {
            Ok(n) => n,
            Err(e) if e.code == 404 => return Err(ApiError::not_found(&namespaces_gr(), ns)),
            Err(e) => return Err(e),
        },
        Err(e) => return Err(e),
    };
    shared.to_arc().map(Some).map_err(ApiError::internal)
}

/// Admit an update or patch (which may create: create-on-update, server-side apply) in `ns`.
/// Errors: 404 when the namespace is missing, as kube answers every write but a delete.
pub async fn admit_update(namespaces: Option<&Store>, store: &Store, ns: &str) -> ApiResult<()> {
    lookup(namespaces, store, ns).await.map(|_| ())
}

/// Admit the delete of namespace `name`. Errors: 403 `this namespace may not be deleted`.
pub fn admit_namespace_delete(name: &str) -> ApiResult<()> {
    if IMMORTAL.contains(&name) {
        return Err(ApiError::forbidden(
            &namespaces_gr(),
            name,
            "this namespace may not be deleted",
        ));
    }
    Ok(())
}

/// A delete as every caller makes it (the DELETE handler, the garbage collector): a namespace
/// through `NamespaceLifecycle` and its own deletion (Terminating first), anything else
/// through `Store.delete`. Errors: 403 for an immortal namespace, the store's errors.
pub async fn delete(
    r: &Store,
    ns: &str,
    name: &str,
    opts: &crate::registry::store::DeleteOptions,
) -> ApiResult<crate::registry::store::DeleteResult> {
    if r.is_namespaces() {
        admit_namespace_delete(name)?;
        crate::registry::namespace_rest::delete_namespace(r, name, opts).await
    } else {
        r.delete(ns, name, opts).await
    }
}

//! `NamespaceLifecycle` (`plugin/pkg/admission/namespace/lifecycle/admission.go`), a mutating
//! member (kube's `Admit`) handling create, update and delete: a namespaced object may only be
//! written in a namespace that exists (else 404 `namespaces "x" not found`), and created only
//! in one that is not terminating (else 403 `unable to create new content in namespace x
//! because it is being terminated`, cause `NamespaceTerminating`); `default`, `kube-system`
//! and `kube-public` may not be deleted (403). The namespace is read from the watch cache,
//! then — when the cache does not have it — from storage, as kube falls back to a live
//! lookup. When no plugin serves namespaces there is nothing to check.

use super::interface::{Admission, AdmissionFuture, Attributes, Operation};
use crate::registry::Store;
use crate::status::{ApiError, ApiResult};
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::GroupResource;

/// Namespaces that may not be deleted (`immortalNamespaces`).
pub const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

fn namespaces_gr() -> GroupResource {
    GroupResource {
        group: String::new(),
        resource: "namespaces".into(),
    }
}

/// The member.
pub struct NamespaceLifecycle;

impl Admission for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn handles(&self, operation: Operation) -> bool {
        matches!(
            operation,
            Operation::Create | Operation::Update | Operation::Delete
        )
    }

    fn admit<'a>(
        &'a self,
        a: &'a Attributes<'a>,
        object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move {
            let store = a.store;
            if a.operation == Operation::Delete {
                // Deleting a namespace never waits for its namespace: only the immortal rule.
                if store.is_namespaces() && IMMORTAL.contains(&a.name) {
                    return Err(ApiError::forbidden(
                        &namespaces_gr(),
                        a.name,
                        "this namespace may not be deleted",
                    ));
                }
                return Ok(());
            }
            let namespaces = a.resources.get("", "v1", "namespaces");
            let Some(namespace) = lookup(namespaces.as_deref(), store, a.namespace).await? else {
                return Ok(());
            };
            let terminating =
                namespace.pointer("/status/phase").and_then(|p| p.as_str()) == Some("Terminating");
            if a.operation != Operation::Create || !terminating {
                return Ok(());
            }
            let name = object
                .as_deref()
                .map(|o| wasm_apiserver_apimachinery::meta::accessor(o).name())
                .filter(|n| !n.is_empty())
                .unwrap_or(a.name);
            let ns = a.namespace;
            let mut e = ApiError::forbidden(
                &store.gr,
                name,
                &format!(
                    "unable to create new content in namespace {ns} because it is being terminated"
                ),
            );
            if let Some(d) = e.details.as_mut() {
                d["causes"] = json!([{"reason": "NamespaceTerminating",
                                      "message": format!("namespace {ns} is being terminated"),
                                      "field": "metadata.namespace"}]);
            }
            Err(e)
        })
    }
}

/// The namespace a write of `store`'s resource in `ns` goes to; `None` when nothing is to be
/// checked (no namespaces served, a cluster-scoped resource). Errors: 404 when it is missing.
pub(crate) async fn lookup(
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

//! A policy binding's params: kube's `CollectParams`
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go`). A policy
//! with `paramKind` and a binding with `paramRef` are evaluated once per param object — the
//! one named, or every one the selector picks — in `paramRef.namespace`, else the request's
//! namespace for a namespaced kind; none found is decided by `parameterNotFoundAction`
//! (`Deny`: a configuration error, `Allow`: nothing to evaluate). Params are read from the
//! watch cache at this replica's newest write to their resource, and a name not found there
//! is read again from storage, as kube falls back from its informer to a direct read
//! (`getParamDirectly`) for a param created just before.

use crate::admission::wasm::context::fresh_resource_version;
use crate::registry::{ListOptions, ResourceMap, Store};
use serde_json::Value;
use std::sync::Arc;
use wasm_apiserver_apimachinery::labels::LabelSelector;

/// `spec.paramKind` of a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamKind {
    /// `apiVersion`, e.g. `v1` or `rules.example.com/v1`.
    pub api_version: String,
    /// `kind`, e.g. `ConfigMap`.
    pub kind: String,
}

impl ParamKind {
    /// Go's `%v` of `*ParamKind`, as kube's messages print it.
    fn go_string(&self) -> String {
        format!(
            "&ParamKind{{APIVersion:{},Kind:{},}}",
            self.api_version, self.kind
        )
    }
}

/// `spec.paramRef` of a binding.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamRef {
    /// `name` (`""` when a selector is used).
    pub name: String,
    /// `namespace` (`""`: the request's, for a namespaced kind).
    pub namespace: String,
    /// `selector`, a `metav1.LabelSelector` object.
    pub selector: Option<Value>,
    /// `parameterNotFoundAction: Deny`.
    pub deny_not_found: bool,
}

/// What a binding is evaluated with.
pub enum Params {
    /// No `paramKind`, or no `paramRef`: once, with `params` null.
    Unset,
    /// Once per object (none: nothing is evaluated).
    Objects(Vec<Arc<Value>>),
}

/// The Store serving `kind` in its version.
fn param_store(resources: &ResourceMap, kind: &ParamKind) -> Option<Arc<Store>> {
    let (group, version) = match kind.api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", kind.api_version.as_str()),
    };
    let plural = resources
        .iter()
        .find(|s| s.description.group == group && s.description.kind == kind.kind)?
        .description
        .plural
        .clone();
    resources.get(group, version, &plural)
}

/// `CollectParams`: the params of one binding of a policy for a request in `namespace`.
/// Errors: kube's configuration errors (decided by the policy's `failurePolicy`).
pub async fn collect(
    kind: Option<&ParamKind>,
    param_ref: Option<&ParamRef>,
    namespace: &str,
    resources: &ResourceMap,
) -> Result<Params, String> {
    let (Some(kind), Some(r)) = (kind, param_ref) else {
        return Ok(Params::Unset);
    };
    let store = param_store(resources, kind)
        .ok_or_else(|| format!("paramKind kind `{}` not known", kind.go_string()))?;
    let namespaced = store.description.namespaced;
    let ns = if !namespaced {
        if !r.namespace.is_empty() {
            return Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
            );
        }
        ""
    } else if !r.namespace.is_empty() {
        r.namespace.as_str()
    } else if !namespace.is_empty() {
        namespace
    } else {
        return Err(
            "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                .into(),
        );
    };
    let storage_objects = if !r.name.is_empty() {
        let mut got = store
            .get(ns, &r.name, &fresh_resource_version(&store))
            .await;
        if got.as_ref().is_err_and(|e| e.code == 404) {
            got = store.get(ns, &r.name, "").await;
        }
        match got {
            Ok(o) => vec![Arc::new(o)],
            Err(e) if e.code == 404 => Vec::new(),
            Err(e) => return Err(e.message),
        }
    } else {
        let selector = match &r.selector {
            Some(s) => LabelSelector::from_metav1(s)
                .ok_or_else(|| format!("paramRef.selector: {s} is not a valid label selector"))?,
            None => return Err("one of name or selector must be provided".into()),
        };
        let opts = ListOptions {
            label_selector: selector,
            resource_version: fresh_resource_version(&store),
            resource_version_match: wasm_apiserver_storage::ResourceVersionMatch::NotOlderThan,
            ..Default::default()
        };
        let list = store.list(ns, &opts).await.map_err(|e| e.message)?;
        store.decode_items(&list).map_err(|e| e.message)?
    };
    if storage_objects.is_empty() && r.deny_not_found {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    let mut objects = Vec::with_capacity(storage_objects.len());
    for o in storage_objects {
        let converted = store
            .converter
            .from_storage_async(o, crate::registry::converter::Sharing::Stored)
            .await
            .map_err(|e| e.message)?;
        objects.push(converted);
    }
    Ok(Params::Objects(objects))
}

//! The `PolicyAuthorization` member: what kube-apiserver checks in the registries of its
//! admission policies, here for every policy kind this server serves, so that no one reads
//! through a policy what they may not read themselves:
//!
//! - a Validating or MutatingAdmissionPolicy with `paramKind`: its author may `get` every
//!   object of that kind (`pkg/registry/admissionregistration/validatingadmissionpolicy/authz.go`,
//!   `mutatingadmissionpolicy/authz.go`);
//! - a Validating or MutatingAdmissionPolicyBinding with `paramRef`: its author may `get` (by name) or
//!   `list` (by selector) the policy's param kind in `paramRef.namespace` (every resource
//!   when the policy or its kind is not known: `…binding/authz.go`);
//! - an `AdmissionPlugin`: its author may `get` and `list` every resource its `contextReads`
//!   grant, in every namespace.
//!
//! kube makes these checks in the registry, where they cannot be turned off; this member
//! cannot be disabled either (`Plugins::disable` refuses it). Refusals are 422 field errors
//! (`Forbidden`), as kube's strategies answer them.

use super::interface::{Admission, AdmissionFuture, Attributes, Operation};
use super::policy::source::PolicySource;
use super::wasm::context::group_resource;
use super::wasm::resources::parse_spec;
use crate::authorization::{Attributes as AuthorizationAttributes, Authorizer, Decision};
use crate::registry::ResourceMap;
use crate::status::{ApiError, ApiResult};
use serde_json::Value;
use std::sync::Arc;
use wasm_apiserver_apimachinery::field::{self, Path};
use wasm_apiserver_apimachinery::meta::accessor;

/// The member.
pub struct PolicyAuthorization {
    /// Asked for each check.
    pub authorizer: Authorizer,
    /// The policies (a binding's checks need its policy's `paramKind`).
    pub policies: Arc<PolicySource>,
}

/// `(group, resource)` of `apiVersion`'s `kind`, when served.
fn resolve(resources: &ResourceMap, api_version: &str, kind: &str) -> Option<(String, String)> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    resources
        .iter()
        .find(|s| s.description.group == group && s.description.kind == kind)
        .map(|s| (group.to_string(), s.description.plural.clone()))
}

impl PolicyAuthorization {
    fn allowed(
        &self,
        a: &Attributes<'_>,
        verb: &str,
        group: &str,
        resource: &str,
        ns: &str,
        name: &str,
    ) -> bool {
        let attrs = AuthorizationAttributes {
            user: a.user.clone(),
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Default::default()
        };
        self.authorizer.authorize(&attrs).0 == Decision::Allow
    }

    fn check(&self, a: &Attributes<'_>, obj: &Value) -> ApiResult<()> {
        let d = &a.store.description;
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let refuse = |path: Path, message: String| {
            Err(ApiError::invalid(
                &a.store.gk,
                accessor(obj).name(),
                &[field::forbidden(&path, message)],
            ))
        };
        let user = &a.user.name;
        match (d.group.as_str(), d.plural.as_str()) {
            (
                "admissionregistration.k8s.io",
                "validatingadmissionpolicies" | "mutatingadmissionpolicies",
            ) => {
                let Some(k) = spec.get("paramKind").filter(|k| k.is_object()) else {
                    return Ok(());
                };
                let (api_version, kind) = (
                    k["apiVersion"].as_str().unwrap_or(""),
                    k["kind"].as_str().unwrap_or(""),
                );
                let (group, resource) = resolve(a.resources, api_version, kind)
                    .unwrap_or_else(|| ("*".into(), "*".into()));
                if !self.allowed(a, "get", &group, &resource, "", "") {
                    return refuse(
                        Path::new("spec").child("paramKind"),
                        format!("user {user:?} must have \"get\" permission on all objects of the referenced paramKind (kind={kind}, apiVersion={api_version})"),
                    );
                }
            }
            (
                "admissionregistration.k8s.io",
                plural @ ("validatingadmissionpolicybindings" | "mutatingadmissionpolicybindings"),
            ) => {
                let Some(r) = spec.get("paramRef").filter(|r| r.is_object()) else {
                    return Ok(());
                };
                let set = self.policies.current();
                let policy_name = spec["policyName"].as_str().unwrap_or("");
                let policy = if plural == "validatingadmissionpolicybindings" {
                    set.policies
                        .get(policy_name)
                        .and_then(|(_, p)| p.param_kind.clone())
                } else {
                    set.mutating_policies
                        .get(policy_name)
                        .and_then(|(_, p)| p.param_kind.clone())
                };
                let (group, resource) = policy
                    .as_ref()
                    .and_then(|k| resolve(a.resources, &k.api_version, &k.kind))
                    .unwrap_or_else(|| ("*".into(), "*".into()));
                let name = r["name"].as_str().unwrap_or("");
                let verb = if name.is_empty() { "list" } else { "get" };
                let ns = r["namespace"].as_str().unwrap_or("");
                if !self.allowed(a, verb, &group, &resource, ns, name) {
                    return refuse(
                        Path::new("spec").child("paramRef"),
                        format!("user {user:?} must have \"{verb}\" permission on the objects the paramRef refers to ({})", group_resource(&group, &resource)),
                    );
                }
            }
            ("wasm-apiserver.dev", "admissionplugins") => {
                let Ok(spec) = parse_spec(obj) else {
                    return Ok(()); // the strategy's validation answers
                };
                for read in &spec.context_reads {
                    for verb in ["get", "list"] {
                        if !self.allowed(a, verb, &read.group, &read.resource, "", "") {
                            let what = group_resource(&read.group, &read.resource);
                            return refuse(
                                Path::new("spec").child("contextReads"),
                                format!("grants reading {what}, but user {user:?} cannot {verb} {what} in every namespace"),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl Admission for PolicyAuthorization {
    fn name(&self) -> &'static str {
        "PolicyAuthorization"
    }

    fn handles(&self, operation: Operation) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move {
            match object {
                Some(obj) if attributes.subresource.is_empty() => self.check(attributes, obj),
                _ => Ok(()),
            }
        })
    }
}

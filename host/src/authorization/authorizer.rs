//! What an authorizer decides on (`k8s.io/apiserver/pkg/authorization/authorizer/interfaces.go`
//! `AttributesRecord`, `Decision`) and the chain kube-apiserver builds from
//! `--authorization-mode` (`pkg/kubeapiserver/authorizer/config.go`): members of
//! `system:masters` are allowed first (`authorizerfactory.NewPrivilegedGroups`), then each mode
//! in order; the first `Allow` or `Deny` decides, and no opinion from anyone is a denial.

use super::rbac::RbacAuthorizer;
use crate::authentication::user::{UserInfo, SYSTEM_PRIVILEGED_GROUP};
use crate::status::ApiError;
use std::sync::Arc;
use wasm_apiserver_apimachinery::GroupResource;

/// One request, as authorizers see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// `impersonate`, `bind`, `escalate`; the lower-cased HTTP method for non-resource paths.
    pub verb: String,
    /// Whether the path is an API resource (else a non-resource URL such as `/healthz`).
    pub resource_request: bool,
    /// Namespace (`""` for cluster scope).
    pub namespace: String,
    /// API group (`""` for core).
    pub api_group: String,
    /// API version.
    pub api_version: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource (`status`), or `""`.
    pub subresource: String,
    /// Object name, or `""`.
    pub name: String,
    /// The URL path (non-resource requests).
    pub path: String,
}

/// An authorizer's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed; no later authorizer is asked.
    Allow,
    /// Denied; no later authorizer is asked.
    Deny,
    /// This authorizer has no opinion; the next one decides.
    NoOpinion,
}

/// One `--authorization-mode` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthorizationMode {
    /// Role-based access control from the stored roles and bindings.
    Rbac,
    /// Every request allowed (development only).
    AlwaysAllow,
    /// Every request denied.
    AlwaysDeny,
}

impl std::str::FromStr for AuthorizationMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "RBAC" => Ok(AuthorizationMode::Rbac),
            "AlwaysAllow" => Ok(AuthorizationMode::AlwaysAllow),
            "AlwaysDeny" => Ok(AuthorizationMode::AlwaysDeny),
            other => Err(format!(
                "authorization-mode {other:?} is not supported: use RBAC, AlwaysAllow or AlwaysDeny"
            )),
        }
    }
}

/// The authorizer chain.
#[derive(Clone)]
pub struct Authorizer {
    modes: Vec<AuthorizationMode>,
    rbac: Arc<RbacAuthorizer>,
}

impl Authorizer {
    /// The chain for `modes`, in order; `rbac` serves the RBAC mode (and the access reviews'
    /// rule listing).
    pub fn new(modes: Vec<AuthorizationMode>, rbac: Arc<RbacAuthorizer>) -> Authorizer {
        Authorizer { modes, rbac }
    }

    /// The RBAC authorizer behind the chain.
    pub fn rbac(&self) -> &Arc<RbacAuthorizer> {
        &self.rbac
    }

    /// The configured modes.
    pub fn modes(&self) -> &[AuthorizationMode] {
        &self.modes
    }

    /// Decide on `attrs`: (decision, reason). The reason is what kube appends to a 403's
    /// message (empty when there is nothing to add).
    pub fn authorize(&self, attrs: &Attributes) -> (Decision, String) {
        if attrs.user.in_group(SYSTEM_PRIVILEGED_GROUP) {
            return (Decision::Allow, String::new());
        }
        let mut reasons = Vec::new();
        for mode in &self.modes {
            let (decision, reason) = match mode {
                AuthorizationMode::AlwaysAllow => (Decision::Allow, String::new()),
                AuthorizationMode::AlwaysDeny => {
                    (Decision::Deny, "Everything is forbidden.".to_string())
                }
                AuthorizationMode::Rbac => self.rbac.authorize(attrs),
            };
            if decision != Decision::NoOpinion {
                return (decision, reason);
            }
            if !reason.is_empty() {
                reasons.push(reason);
            }
        }
        (Decision::NoOpinion, reasons.join("\n"))
    }
}

/// The 403 for a request the authorizer did not allow: kube's message, then `: <reason>` when
/// the authorizer gave one (`responsewriters.Forbidden`).
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let mut message = forbidden_message(attrs);
    if !reason.is_empty() {
        message = format!("{message}: {reason}");
    }
    let gr = GroupResource {
        group: attrs.api_group.clone(),
        resource: attrs.resource.clone(),
    };
    ApiError::forbidden(&gr, &attrs.name, &message)
}

/// The message of a 403 (`k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`
/// `forbiddenMessage`), e.g. `User "jane" cannot create resource "pods" in API group "" in
/// the namespace "dev"`.
pub fn forbidden_message(attrs: &Attributes) -> String {
    let user = &attrs.user.name;
    let verb = &attrs.verb;
    if !attrs.resource_request {
        return format!("User {user:?} cannot {verb} path {:?}", attrs.path);
    }
    let mut resource = attrs.resource.clone();
    if !attrs.subresource.is_empty() {
        resource = format!("{resource}/{}", attrs.subresource);
    }
    let group = &attrs.api_group;
    if attrs.namespace.is_empty() {
        format!("User {user:?} cannot {verb} resource {resource:?} in API group {group:?} at the cluster scope")
    } else {
        format!(
            "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} in the namespace {:?}",
            attrs.namespace
        )
    }
}

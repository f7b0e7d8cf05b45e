//! The RBAC escalation checks on writes of roles and bindings, as an admission member
//! (`pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/
//! storage.go`, `pkg/registry/rbac/escalation_check.go`): members of `system:masters` write
//! freely; otherwise writing a Role or ClusterRole needs the `escalate` verb on it or holding
//! every rule it grants (a ClusterRole with an `aggregationRule` counts as granting
//! everything), and writing a binding needs the `bind` verb on the role it references or
//! holding that role's rules. An update that only changes what the garbage collector changes
//! (owner references, finalizers, managed fields) is never checked. kube runs these in the
//! RBAC REST storage, before the generic Store and its strategy: here they are the mutating
//! stage (which they never use to mutate), so they too come before the strategy.

use super::interface::{Admission, AdmissionFuture, Attributes, Operation};
use crate::authentication::user::SYSTEM_PRIVILEGED_GROUP;
use crate::authentication::UserInfo;
use crate::authorization::rbac::escalation::confirm_no_escalation;
use crate::authorization::rbac::{PolicyRule, RoleRef};
use crate::authorization::{Attributes as AuthorizationAttributes, Authorizer, Decision};
use crate::status::{ApiError, ApiResult};
use serde_json::Value;
use wasm_apiserver_apimachinery::GroupResource;

const GROUP: &str = "rbac.authorization.k8s.io";

/// The member: checks writes of the four RBAC resources with the server's authorizer.
pub struct RbacEscalation {
    /// Asked for `escalate` and `bind`; its RBAC policy gives the writer's own rules.
    pub authorizer: Authorizer,
}

impl Admission for RbacEscalation {
    fn name(&self) -> &'static str {
        "RBACEscalation"
    }

    fn handles(&self, operation: Operation) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
    }

    fn admit<'a>(
        &'a self,
        a: &'a Attributes<'a>,
        object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        let result = match object {
            Some(new) => self.check(a, new),
            None => Ok(()),
        };
        Box::pin(async move { result })
    }
}

impl RbacEscalation {
    fn check(&self, a: &Attributes<'_>, new: &Value) -> ApiResult<()> {
        let gr = &a.store.gr;
        if gr.group != GROUP || a.user.in_group(SYSTEM_PRIVILEGED_GROUP) {
            return Ok(());
        }
        let role = match gr.resource.as_str() {
            "roles" | "clusterroles" => true,
            "rolebindings" | "clusterrolebindings" => false,
            _ => return Ok(()),
        };
        if a.old_object
            .is_some_and(|old| !old.is_null() && only_gc_fields_changed(new, old))
        {
            return Ok(());
        }
        // kube authorizes `escalate` with the request's name (`""` for a create).
        if role {
            check_role(&self.authorizer, a.user, gr, a.namespace, a.name, new)
        } else {
            check_binding(&self.authorizer, a.user, gr, a.namespace, new)
        }
    }
}

fn allowed(
    authorizer: &Authorizer,
    user: &UserInfo,
    verb: &str,
    resource: &str,
    ns: &str,
    name: &str,
) -> bool {
    let attrs = AuthorizationAttributes {
        user: user.clone(),
        verb: verb.into(),
        resource_request: true,
        namespace: ns.into(),
        api_group: GROUP.into(),
        api_version: "v1".into(),
        resource: resource.into(),
        name: name.into(),
        ..Default::default()
    };
    authorizer.authorize(&attrs).0 == Decision::Allow
}

fn name_of(obj: &Value) -> &str {
    wasm_apiserver_apimachinery::meta::accessor(obj).name()
}

fn check_role(
    authorizer: &Authorizer,
    user: &UserInfo,
    gr: &GroupResource,
    ns: &str,
    url_name: &str,
    new: &Value,
) -> ApiResult<()> {
    let name = name_of(new);
    if allowed(authorizer, user, "escalate", &gr.resource, ns, url_name) {
        return Ok(());
    }
    // A body whose rules do not read as rules is refused, never checked as "no rules".
    let mut rules: Vec<PolicyRule> = match &new["rules"] {
        Value::Null => Vec::new(),
        v => serde_json::from_value(v.clone())
            .map_err(|e| ApiError::bad_request(format!("rules: {e}")))?,
    };
    if !new["aggregationRule"].is_null() {
        // `hasAggregationRule`: an aggregated role can come to hold anything.
        // `fullAuthority` (clusterrole/policybased/storage.go): every resource and URL.
        rules.push(PolicyRule {
            verbs: vec!["*".into()],
            api_groups: vec!["*".into()],
            resources: vec!["*".into()],
            ..Default::default()
        });
        rules.push(PolicyRule {
            verbs: vec!["*".into()],
            non_resource_urls: vec!["*".into()],
            ..Default::default()
        });
    }
    let policy = authorizer.rbac().policy();
    confirm_no_escalation(&policy, user, ns, &rules)
        .map_err(|msg| ApiError::forbidden(gr, name, &msg))
}

fn check_binding(
    authorizer: &Authorizer,
    user: &UserInfo,
    gr: &GroupResource,
    ns: &str,
    new: &Value,
) -> ApiResult<()> {
    let name = name_of(new);
    let mut role_ref: RoleRef = serde_json::from_value(new["roleRef"].clone())
        .map_err(|e| ApiError::bad_request(format!("roleRef: {e}")))?;
    if role_ref.api_group.is_empty() {
        role_ref.api_group = GROUP.into();
    }
    let resource = if role_ref.kind == "Role" {
        "roles"
    } else {
        "clusterroles"
    };
    if allowed(authorizer, user, "bind", resource, ns, &role_ref.name) {
        return Ok(());
    }
    let policy = authorizer.rbac().policy();
    let rules = policy.role_reference_rules(&role_ref, ns).map_err(|_| {
        let singular = if role_ref.kind == "Role" {
            "role"
        } else {
            "clusterrole"
        };
        ApiError::not_found(
            &GroupResource {
                group: GROUP.into(),
                resource: singular.into(),
            },
            &role_ref.name,
        )
    })?;
    confirm_no_escalation(&policy, user, ns, rules)
        .map_err(|msg| ApiError::forbidden(gr, name, &msg))
}

/// `IsOnlyMutatingGCFields`: `new` equals `old` with `new`'s owner references, finalizers and
/// managed fields.
fn only_gc_fields_changed(new: &Value, old: &Value) -> bool {
    let mut copied = old.clone();
    if let Some(m) = copied["metadata"].as_object_mut() {
        for f in ["ownerReferences", "finalizers", "managedFields"] {
            match new["metadata"].get(f) {
                Some(v) => {
                    m.insert(f.into(), v.clone());
                }
                None => {
                    m.remove(f);
                }
            }
        }
    }
    copied == *new
}

//! The admission members a server runs, by name, in order (`k8s.io/apiserver/pkg/admission/
//! plugins.go` `Plugins` and kube-apiserver's `AllOrderedPlugins`): each is made by a factory
//! from what members may need ([`Initializer`], kube's `initializer.Wants*`). Adding a member
//! is its own file plus one [`Plugins::register`] — at start for the standard members, or by
//! whoever builds a server (a test, an embedding program) — never a handler change.

use super::chain::Chain;
use super::interface::Admission;
use super::namespace_lifecycle::NamespaceLifecycle;
use super::policy::dispatcher::ValidatingAdmissionPolicy;
use super::policy::mutating::dispatcher::MutatingAdmissionPolicy;
use super::policy::source::PolicySource;
use super::policy_authorization::PolicyAuthorization;
use super::rbac_escalation::RbacEscalation;
use super::wasm::dispatcher::WasmAdmissionPolicy;
use super::wasm::source::WasmPolicySource;
use super::webhook::dispatcher::{MutatingAdmissionWebhook, ValidatingAdmissionWebhook};
use crate::authorization::Authorizer;
use std::sync::Arc;

/// What a member's factory may use.
#[derive(Clone)]
pub struct Initializer {
    /// The server's authorizer (`WantsAuthorizer`).
    pub authorizer: Authorizer,
    /// The admission policies to enforce (kube's policy source).
    pub policies: Arc<PolicySource>,
    /// The wasm admission policies to run.
    pub wasm_policies: Arc<WasmPolicySource>,
}

/// Members that cannot be disabled: kube makes their checks in its registries.
const REQUIRED: [&str; 2] = ["RBACEscalation", "PolicyAuthorization"];

/// Makes a member.
pub type Factory = Arc<dyn Fn(&Initializer) -> Arc<dyn Admission> + Send + Sync>;

/// The registered members, in the order they run.
#[derive(Clone, Default)]
pub struct Plugins {
    factories: Vec<(String, Factory)>,
}

impl Plugins {
    /// The standard members: `NamespaceLifecycle`, the RBAC escalation checks, the policy
    /// authorization checks, `MutatingAdmissionPolicy`, `MutatingAdmissionWebhook`,
    /// `ValidatingAdmissionPolicy`, `ValidatingAdmissionWebhook` (kube-apiserver's
    /// `AllOrderedPlugins` order), then `WasmAdmissionPolicy` (its mutating stage runs before
    /// every member's validating one in any case).
    pub fn standard() -> Plugins {
        let mut p = Plugins::default();
        p.register(
            "NamespaceLifecycle",
            Arc::new(|_| Arc::new(NamespaceLifecycle)),
        );
        p.register(
            "RBACEscalation",
            Arc::new(|i: &Initializer| {
                Arc::new(RbacEscalation {
                    authorizer: i.authorizer.clone(),
                })
            }),
        );
        p.register(
            "PolicyAuthorization",
            Arc::new(|i: &Initializer| {
                Arc::new(PolicyAuthorization {
                    authorizer: i.authorizer.clone(),
                    policies: i.policies.clone(),
                })
            }),
        );
        p.register(
            "MutatingAdmissionPolicy",
            Arc::new(|i: &Initializer| {
                Arc::new(MutatingAdmissionPolicy {
                    source: i.policies.clone(),
                    authorizer: i.authorizer.clone(),
                })
            }),
        );
        p.register(
            "MutatingAdmissionWebhook",
            Arc::new(|i: &Initializer| {
                Arc::new(MutatingAdmissionWebhook {
                    source: i.policies.clone(),
                    authorizer: i.authorizer.clone(),
                })
            }),
        );
        p.register(
            "ValidatingAdmissionPolicy",
            Arc::new(|i: &Initializer| {
                Arc::new(ValidatingAdmissionPolicy {
                    source: i.policies.clone(),
                    authorizer: i.authorizer.clone(),
                })
            }),
        );
        p.register(
            "ValidatingAdmissionWebhook",
            Arc::new(|i: &Initializer| {
                Arc::new(ValidatingAdmissionWebhook {
                    source: i.policies.clone(),
                    authorizer: i.authorizer.clone(),
                })
            }),
        );
        p.register(
            "WasmAdmissionPolicy",
            Arc::new(|i: &Initializer| {
                Arc::new(WasmAdmissionPolicy {
                    source: i.wasm_policies.clone(),
                })
            }),
        );
        p
    }

    /// Add a member after those registered, replacing one of the same name in its place.
    pub fn register(&mut self, name: &str, factory: Factory) {
        match self.factories.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = factory,
            None => self.factories.push((name.to_string(), factory)),
        }
    }

    /// Remove the members named in `names` (`--disable-admission-plugins`). Errors: a name
    /// not registered, in kube's words (`k8s.io/apiserver/pkg/server/options/admission.go`
    /// `Validate`).
    pub fn disable(&mut self, names: &[String]) -> Result<(), String> {
        for n in names.iter().filter(|n| !n.is_empty()) {
            if !self.factories.iter().any(|(name, _)| name == n) {
                return Err(format!("disable-admission-plugins plugin {n:?} is unknown"));
            }
            if REQUIRED.contains(&n.as_str()) {
                return Err(format!(
                    "disable-admission-plugins plugin {n:?} cannot be disabled: it makes an authorization check kube-apiserver makes in its registry"
                ));
            }
        }
        self.factories.retain(|(name, _)| !names.contains(name));
        Ok(())
    }

    /// The registered names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.factories.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The chain of every registered member, made once.
    pub fn chain(&self, initializer: &Initializer) -> Chain {
        Chain::new(self.factories.iter().map(|(_, f)| f(initializer)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_members_are_removed_and_unknown_names_refused() {
        let mut p = Plugins::standard();
        p.disable(&[
            "MutatingAdmissionPolicy".into(),
            "MutatingAdmissionWebhook".into(),
            "ValidatingAdmissionPolicy".into(),
            "ValidatingAdmissionWebhook".into(),
            "WasmAdmissionPolicy".into(),
        ])
        .unwrap();
        assert_eq!(
            p.names(),
            [
                "NamespaceLifecycle",
                "RBACEscalation",
                "PolicyAuthorization"
            ]
        );
        assert!(p.disable(&["PolicyAuthorization".into()]).is_err());
        assert_eq!(
            p.disable(&["AlwaysPullImages".into()]),
            Err("disable-admission-plugins plugin \"AlwaysPullImages\" is unknown".into())
        );
    }
}

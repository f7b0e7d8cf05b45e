//! The RBAC authorizer (`plugin/pkg/auth/authorizer/rbac/rbac.go` `RBACAuthorizer.Authorize`):
//! allowed when any rule the user holds in the request's namespace allows it, else no opinion
//! — with `RBAC: <errors>` as the reason when a binding named a missing role.

use super::evaluation::{combined_resource, rule_allows_combined};
use super::policy::Policy;
use crate::authorization::{Attributes, Decision};
use arc_swap::ArcSwap;
use std::sync::Arc;

/// The authorizer over the current [`Policy`].
#[derive(Default)]
pub struct RbacAuthorizer {
    policy: ArcSwap<Policy>,
}

impl RbacAuthorizer {
    /// An authorizer over `policy`.
    pub fn new(policy: Policy) -> RbacAuthorizer {
        RbacAuthorizer {
            policy: ArcSwap::from_pointee(policy),
        }
    }

    /// Replace the policy (after a role or binding changed).
    pub fn set_policy(&self, policy: Policy) {
        self.policy.store(Arc::new(policy));
    }

    /// The current policy.
    pub fn policy(&self) -> Arc<Policy> {
        self.policy.load_full()
    }

    /// Decide on `attrs`: `Allow`, or `NoOpinion` with a reason.
    pub fn authorize(&self, attrs: &Attributes) -> (Decision, String) {
        let policy = self.policy.load();
        let mut allowed = false;
        let combined = combined_resource(attrs);
        let errors = policy.visit_rules_for(&attrs.user, &attrs.namespace, |rule| {
            allowed = rule_allows_combined(attrs, &combined, rule);
            !allowed
        });
        if allowed {
            return (Decision::Allow, String::new());
        }
        let reason = match errors.len() {
            0 => String::new(),
            1 => format!("RBAC: {}", errors[0]),
            _ => format!("RBAC: [{}]", errors.join(", ")),
        };
        (Decision::NoOpinion, reason)
    }
}

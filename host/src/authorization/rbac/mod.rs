//! Role-based access control (`plugin/pkg/auth/authorizer/rbac`, `pkg/registry/rbac`).
//!
//! - `types.rs`: `rbac.authorization.k8s.io/v1` rules, subjects and role references.
//! - `evaluation.rs`: does a rule allow a request (`pkg/apis/rbac/v1/evaluation_helpers.go`),
//!   does a binding apply to a user (`pkg/registry/rbac/validation/rule.go`).
//! - `policy.rs`: the roles and bindings the authorizer reads, in memory, and the rules a user
//!   holds (`DefaultRuleResolver.VisitRulesFor`).
//! - `rbac_authorizer.rs`: the authorizer (`rbac.go` `RBACAuthorizer.Authorize`).
//! - `bootstrap_policy.rs`: the default roles and bindings (`bootstrappolicy/policy.go`).
//! - `cluster_role_aggregation.rs`: the rules of aggregated ClusterRoles.
//! - `escalation.rs`: `Covers` and `ConfirmNoEscalation` (writing roles and bindings).
//! - `policy_watcher.rs`: keeps the policy equal to the stored roles and bindings, read
//!   through the watch cache, and creates the missing bootstrap objects.

pub mod bootstrap_policy;
pub mod cluster_role_aggregation;
pub mod escalation;
pub mod evaluation;
pub mod policy;
pub mod policy_watcher;
pub mod rbac_authorizer;
pub mod types;

pub use policy::Policy;
pub use rbac_authorizer::RbacAuthorizer;
pub use types::{PolicyRule, RoleRef, Subject};

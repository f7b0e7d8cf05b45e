//! `rbac.authorization.k8s.io/v1`: the standard strategy plugins of the four RBAC resources,
//! ports of kube-apiserver's
//! - `pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/strategy.go` (no-op
//!   `PrepareForCreate`/`PrepareForUpdate`/`Canonicalize`, `AllowCreateOnUpdate` true,
//!   `AllowUnconditionalUpdate` true, no status, no generation);
//! - `pkg/apis/rbac/validation/validation.go` (`validation.rs`);
//! - `pkg/apis/rbac/v1/defaults.go` (role references and subjects default their API group;
//!   run in the prepare hooks, where kube's decoding would have run them);
//! - `pkg/printers/internalversion/printers.go` (`printRole`, `printRoleBinding`, …).
//!
//! One crate, one component per resource: build with the feature named after the resource
//! (`roles`, `clusterroles`, `rolebindings`, `clusterrolebindings`). ClusterRole
//! `aggregationRule`s are validated and stored; nothing aggregates them (kube's ClusterRole
//! aggregation controller is not run), so an aggregated role holds the rules written into it.
//!
//! The escalation checks of kube's RBAC REST storage (`escalate`, `bind`) and the authorizer
//! are the host's: they need the requester and every role, which a strategy does not see.

pub mod bindings;
pub mod roles;
pub mod schema;
pub mod validation;

pub use bindings::{ClusterRoleBindings, RoleBindings};
pub use roles::{ClusterRoles, Roles};

#[cfg(feature = "roles")]
wasm_apiserver_sdk::export_strategy!(Roles);
#[cfg(feature = "clusterroles")]
wasm_apiserver_sdk::export_strategy!(ClusterRoles);
#[cfg(feature = "rolebindings")]
wasm_apiserver_sdk::export_strategy!(RoleBindings);
#[cfg(feature = "clusterrolebindings")]
wasm_apiserver_sdk::export_strategy!(ClusterRoleBindings);

/// The API group.
pub const GROUP: &str = "rbac.authorization.k8s.io";

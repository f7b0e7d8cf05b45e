//! Admission (`k8s.io/apiserver/pkg/admission`, `plugin/pkg/admission`): checks and changes
//! between authorization and storage that no strategy can make, because they look at other
//! objects or at who asks. A chain of members built once at start, bound to each write request
//! and run by the registry Store at kube's points (create, update inside its retry loop,
//! delete): the mutating stage before the strategy, the validating stage after it.
//!
//! - `interface.rs`: `Admission` (a member), `Attributes`, `Operation`;
//! - `chain.rs`: the chain, and its binding to one request (the registry's `WriteAdmission`);
//! - `reinvocation.rs`: the mutating stage's second run, when a member asks for it;
//! - `plugins.rs`: the members by name, in order, and their factories;
//! - `exempt.rs`: the resources no policy applies to (no lock-out);
//! - `policy_authorization.rs` (`PolicyAuthorization`): a policy's author may read what it
//!   reads (params, context reads), as kube's policy registries check;
//! - the members, one file each: `namespace_lifecycle.rs` (`NamespaceLifecycle`),
//!   `rbac_escalation.rs` (the RBAC escalation checks), and `policy/` (`ValidatingAdmissionPolicy`:
//!   the policy and binding resources, compiled with the CEL crate, enforced by the member), and
//!   `wasm/` (`WasmAdmissionPolicy`: the `AdmissionPlugin` resource, its components loaded by
//!   the plugin runtime, run by the member with context reads from the watch cache).

pub mod chain;
pub mod exempt;
pub mod interface;
pub mod namespace_lifecycle;
pub mod plugins;
pub mod policy;
pub mod policy_authorization;
pub mod rbac_escalation;
pub mod reinvocation;
pub mod wasm;
pub mod webhook;

pub use chain::{AdmissionRequest, Chain};
pub use interface::{Admission, AdmissionFuture, Attributes, AuditSink, Operation};
pub use plugins::{Initializer, Plugins};

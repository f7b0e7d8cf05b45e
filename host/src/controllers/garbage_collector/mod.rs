//! The garbage collector (`pkg/controller/garbagecollector` of kube-controller-manager): the
//! dependency graph of every served resource, built from watches of the watch cache (one
//! monitor per resource, `graph_builder.go`), and a work queue of the objects to look at
//! (`garbagecollector.go`):
//!
//! - **background**: an object whose owners are all gone (absent, or another object under
//!   the owner's name — uid mismatch) is deleted; one that still has a live owner has its
//!   dangling references removed instead (`attemptToDeleteItem`);
//! - **foreground**: an owner deleted with `propagationPolicy=Foreground` carries the
//!   `foregroundDeletion` finalizer; its dependents are deleted (themselves in the foreground
//!   when they have dependents), and the finalizer is removed once no dependent with
//!   `blockOwnerDeletion` is left (`processDeletingDependentsItem`);
//! - **orphan**: an owner deleted with `propagationPolicy=Orphan` carries the `orphan`
//!   finalizer; its references are removed from every dependent, then the finalizer
//!   (`orphanDependents`).
//!
//! Owners are resolved by group and kind among the served resources, looked up in the
//! dependent's namespace when namespaced. A cluster-scoped dependent naming a namespaced owner,
//! or an owner of a kind nobody serves, is never resolved, so never collected (as kube,
//! where such references are unresolvable). Writes go through the registry (hooks, finalizers
//! and preconditions apply); every delete is preconditioned on the uid the decision was made
//! on.
//!
//! - `garbagecollector.rs`: the collector, its work queue and decisions;
//! - `graph.rs`: the dependency graph; `graph_builder.rs`: the monitors and the graph's
//!   changes; `operations.rs`: its deletes and metadata updates.

mod garbagecollector;
mod graph;
mod graph_builder;
mod operations;

pub use garbagecollector::{start, GarbageCollector, GARBAGE_COLLECTOR_USER, RETRY, WORKERS};

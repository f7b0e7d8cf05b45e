//! Pod validation, ported from pkg/apis/core/validation/validation.go: `ValidatePodCreate`,
//! `ValidatePodUpdate`, `ValidatePodStatusUpdate` and what they call (`ValidatePodSpec`,
//! `validateContainers`, `validateInitContainers`, `validateContainerCommon`,
//! `ValidateResourceRequirements`, `validateContainerPorts`, `ValidateVolumes`,
//! `ValidateVolumeMounts`, `ValidateTolerations`, probes and lifecycle handlers, …), with the
//! `PodValidationOptions` kube-apiserver 1.33 uses for pods.
//!
//! Field paths, error types and details are Kubernetes'. Maps are walked in key order (Go walks
//! them in random order). Not ported (documented gaps): per-volume-source checks, security
//! contexts, affinity, topology spread constraints, OS-specific rules, host aliases, seccomp and
//! AppArmor annotation consistency, per-entry DNS search validation, ephemeral containers beyond
//! "cannot be set on create", and the gated-pod relaxations of `ValidatePodUpdate`.
//!
//! Split by the sections of `validation.go`: `pod.rs` (entry points), `spec.rs`, `volumes.rs`,
//! `containers.rs`, `resources.rs`, `probes.rs`, and `common.rs` (what they share).

mod common;
mod containers;
mod pod;
mod probes;
mod resources;
mod spec;
mod volumes;

pub use pod::{validate_pod_create, validate_pod_status_update, validate_pod_update};
pub use probes::dns_label_problems;
pub use spec::validate_pod_spec;

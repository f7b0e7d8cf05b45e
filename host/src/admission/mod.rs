//! Admission (`k8s.io/apiserver/pkg/admission`, `plugin/pkg/admission`): checks between
//! authorization and storage that no strategy can make, because they look at other objects.
//!
//! - `namespace_lifecycle.rs`: `NamespaceLifecycle`.

pub mod namespace_lifecycle;

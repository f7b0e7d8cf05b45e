//! `MutatingAdmissionPolicy` and its binding (`admissionregistration.k8s.io/v1`, kube's
//! `k8s.io/apiserver/pkg/admission/plugin/policy/mutating`): compiled ([`compiled`]), their
//! mutations applied ([`patch`]) by the `MutatingAdmissionPolicy` member in the mutating
//! stage ([`dispatcher`]). Their resources, source, matching and params are the validating
//! policy's (`super::{resources, source, matching, invocations, params}`).

pub mod compiled;
pub mod dispatcher;
pub mod patch;

//! Admission policies (`admissionregistration.k8s.io/v1`): `ValidatingAdmissionPolicy`,
//! `MutatingAdmissionPolicy` and their bindings, served by host-side strategies
//! ([`resources`]), compiled once per object version ([`compiled`], [`mutating::compiled`],
//! with the CEL crate), kept current by a list and watch and by each write ([`source`]),
//! matched as kube matches them ([`matching`], [`invocations`]), given their params
//! ([`params`]) and enforced by the `ValidatingAdmissionPolicy` member of the admission chain
//! ([`dispatcher`]) and the `MutatingAdmissionPolicy` member ([`mutating::dispatcher`]); a
//! validating policy's expressions are type-checked against the kinds it matches
//! ([`type_checking`], for its status).

pub mod authorizer;
pub mod compiled;
pub mod dispatcher;
pub mod invocations;
pub mod matching;
pub mod metrics;
pub mod mutating;
pub mod params;
pub mod resources;
pub mod source;
pub mod type_checking;

//! Admission policies: `ValidatingAdmissionPolicy` and `ValidatingAdmissionPolicyBinding`
//! (`admissionregistration.k8s.io/v1`), served by host-side strategies ([`resources`]),
//! compiled once per object version ([`compiled`], with the CEL crate), kept current by a
//! list and watch and by each write ([`source`]), matched as kube matches them
//! ([`matching`]), given their params ([`params`]) and enforced by the
//! `ValidatingAdmissionPolicy` member of the admission chain ([`dispatcher`]).

pub mod compiled;
pub mod dispatcher;
pub mod matching;
pub mod params;
pub mod resources;
pub mod source;

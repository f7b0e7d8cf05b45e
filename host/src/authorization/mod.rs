//! Authorization (`k8s.io/apiserver/pkg/authorization`): may this user do this?
//!
//! - `authorizer.rs`: [`Attributes`] (`authorizer.AttributesRecord`), [`Decision`], and the
//!   union kube-apiserver builds (`pkg/kubeapiserver/authorizer/config.go`): `system:masters`
//!   first, then `--authorization-mode` in order.
//! - `rbac/`: the RBAC authorizer (`plugin/pkg/auth/authorizer/rbac`), its rule evaluation
//!   (`pkg/apis/rbac/v1/evaluation_helpers.go`), the policy it reads and the bootstrap
//!   policy (`bootstrappolicy/policy.go`).
//!
//! - `access_review.rs`: `SelfSubjectAccessReview`, `SubjectAccessReview`,
//!   `LocalSubjectAccessReview`, `SelfSubjectRulesReview`.
//!
//! The filter that runs it for every request is [`crate::server::filters::authorization`].

pub mod access_review;
pub mod authorizer;
pub mod rbac;

pub use authorizer::{Attributes, AuthorizationMode, Authorizer, Decision};

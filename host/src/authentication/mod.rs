//! Authentication (`k8s.io/apiserver/pkg/authentication`): who a request comes from.
//!
//! - `user.rs`: [`UserInfo`] and the well-known users and groups (`authentication/user`).
//! - `x509.rs`: client certificates verified against `--client-ca-file`
//!   (`authentication/request/x509`).
//! - `token_file.rs`: static bearer tokens from `--token-auth-file`
//!   (`authentication/token/tokenfile`).
//! - `authenticator.rs`: the request authenticator kube-apiserver builds
//!   (`pkg/kubeapiserver/authenticator/config.go`): x509, then bearer token, authenticated
//!   users in `system:authenticated`, anonymous last.
//! - `self_subject_review.rs`: `authentication.k8s.io/v1` `SelfSubjectReview`.
//! - `service_account.rs`: bound service-account tokens, signed and verified
//!   (`pkg/serviceaccount`).
//!
//! The filter that runs it for every request is [`crate::server::filters::authentication`].

pub mod authenticator;
pub mod jwt;
pub mod jwt_config;
pub mod self_subject_review;
pub mod service_account;
pub mod service_account_keys;
pub mod token_file;
pub mod user;
pub mod x509;

pub use authenticator::{AuthenticationError, Authenticator};
pub use service_account::ServiceAccountTokens;
pub use token_file::TokenFile;
pub use user::UserInfo;
pub use x509::X509Authenticator;

//! Auditing (`k8s.io/apiserver/pkg/audit`): which requests are recorded at what level, the
//! `audit.k8s.io/v1` `Event`s, and the log they go to.
//!
//! - `policy.rs`: the `Policy` of `--audit-policy-file`, validated at start
//!   (`pkg/apis/audit/validation`), and its rule evaluation (`audit/policy/checker.go`).
//! - `event.rs`: building an `Event` (`audit/request.go`).
//! - `log_backend.rs`: JSON lines in `--audit-log-path`, rotated by size
//!   (`plugin/pkg/audit/log`, lumberjack in kube; the `file-rotate` crate here), written by a
//!   thread of its own so a slow or failing disk never blocks a request.
//!
//! The filter that records every request is [`crate::server::filters::audit`].

pub mod event;
pub mod log_backend;
pub mod policy;

pub use event::{Level, Stage};
pub use log_backend::{LogBackend, LogOptions};
pub use policy::Policy;

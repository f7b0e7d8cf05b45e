//! The filters around every request (`k8s.io/apiserver/pkg/endpoints/filters`,
//! `pkg/server/filters`), one file each, each owning its state; [`chain`] puts them in kube's
//! order (`DefaultBuildHandlerChain`). No filter imports another: what one leaves for a later
//! one travels in the request's extensions ([`crate::server::context`]).

pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod chain;
pub mod impersonation;
pub mod max_in_flight;
pub mod request_info;
pub mod request_metrics;
pub mod retry_after;
pub mod timeout;
pub mod wait_group;

pub use chain::HandlerChain;

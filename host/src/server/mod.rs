//! The HTTP layer (`k8s.io/apiserver/pkg/endpoints` and `pkg/server`): routing declared in one
//! place, the filters around every request, and the handlers. It reads the served
//! [`Snapshot`](crate::registry::Snapshot) and never changes it.
//!
//! - `request_info.rs`: resource paths → group/version/namespace/resource/name/subresource.
//! - `handlers/`: one file per verb family over the registry `Store`.
//! - `options.rs`: query options; `negotiation.rs`: media types of bodies.
//! - `discovery.rs`, `openapi.rs`: serving the snapshot's documents.
//! - `state.rs`: what every handler shares; `routes.rs`: the router and the non-resource
//!   paths (`/version`, `/healthz`, `/livez`, `/readyz`, `/metrics`).
//! - `request_metrics.rs`: `apiserver_request_*` around every request; `timeout.rs`:
//!   `--request-timeout`; `serving.rs`: the accept loop and connection limits; `tls.rs`: the
//!   rustls configuration of the secure port.
//! - `authentication.rs`, `authorization.rs`: the filters that authenticate and authorize
//!   every request ([`crate::authentication`], [`crate::authorization`]); `impersonation.rs`:
//!   `Impersonate-*` headers; `audit.rs`: audit events around every request;
//!   `max_in_flight.rs`: the in-flight limits (429); `reviews.rs`: the
//!   self, subject and rules reviews; `components.rs`: uploads of strategy plugin
//!   components.
//!
//! Files here import each other, never this module (it only declares and re-exports).

pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod components;
pub mod discovery;
pub mod handlers;
pub mod impersonation;
pub mod max_in_flight;
pub mod negotiation;
pub mod openapi;
pub mod options;
pub mod request_info;
pub mod request_metrics;
pub mod reviews;
pub mod routes;
pub mod serving;
pub mod state;
pub mod timeout;
pub mod tls;

pub use routes::router;
pub use state::AppState;

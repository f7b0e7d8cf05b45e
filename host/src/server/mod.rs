//! The HTTP layer (`k8s.io/apiserver/pkg/endpoints` and `pkg/server`): routing declared in one
//! place, the filters around every request, and the handlers. It reads the served
//! [`Snapshot`](crate::registry::Snapshot) and never changes it.
//!
//! - `request_info.rs`: a request's `RequestInfo` (verb, group/version/namespace/resource/
//!   name/subresource, long-running, the query), read once; `context.rs`: what a request
//!   carries through the filters (its `RequestInfo`, user, warnings and audit annotations).
//! - `filters/`: the filters around every request, one file each, in kube's order
//!   (`filters/chain.rs`): request info, request metrics (`apiserver_request_*`), timeout
//!   (`--request-timeout`), authentication (401), audit, impersonation (`Impersonate-*`),
//!   max-in-flight (429), authorization (403).
//! - `handlers/`: one file per verb family over the registry `Store`.
//! - `options.rs`: query options; `negotiation.rs`: media types of bodies.
//! - `discovery.rs`, `openapi.rs`: serving the snapshot's documents.
//! - `state.rs`: what every handler shares; `routes.rs`: the router and the non-resource
//!   paths (`/version`, `/healthz`, `/livez`, `/readyz`, `/metrics`).
//! - `serving.rs`: the accept loop and connection limits; `tls.rs`: the rustls configuration
//!   of the secure port; `reviews.rs`: the self, subject and rules reviews; `components.rs`:
//!   uploads of strategy plugin components; `token_request.rs`: TokenRequest
//!   (`serviceaccounts/token`) and the service-account issuer's discovery documents.
//!
//! Files here import each other, never this module (it only declares and re-exports).

pub mod components;
pub mod connection_limit;
pub mod context;
pub mod discovery;
pub mod filters;
pub mod handlers;
pub mod holding_body;
pub mod negotiation;
pub mod openapi;
pub mod options;
pub mod request_info;
pub mod reviews;
pub mod routes;
pub mod serving;
pub mod state;
pub mod tls;
pub mod token_request;

pub use routes::router;
pub use state::AppState;

//! Calls to webhooks the API objects name by URL (`k8s.io/apiserver/pkg/util/webhook`): one
//! HTTPS client per webhook, shared by CRD conversion webhooks (`strategy/webhook_converter.rs`)
//! and admission webhooks (`admission/webhook/`).
//!
//! Files here import each other, never this module (it only declares).

pub mod client;

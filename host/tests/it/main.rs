//! The host's integration tests, in one binary (as rust-analyzer's `tests/it`): each linked
//! test binary carries wasmtime, so one binary links it once. A module per suite; what they
//! share is in `common/`. `cargo test --release -p wasm-apiserver --test it <module>::` runs
//! one suite.

mod common;

mod admission;
mod admission_policies;
mod admission_webhooks;
mod architecture;
mod attached_plugins;
mod audit_and_limits;
mod cel_in_component;
mod client_answers;
mod configured_strategy;
mod conversion;
mod conversion_webhook;
mod custom_resources;
mod ecosystem_crds;
mod encryption_at_rest;
mod encryption_kms;
mod encryption_rotation;
mod fuzz_requests;
mod garbage_collection;
mod graceful_termination;
mod hardening;
mod hot_reload;
mod http_api;
mod kube_rs;
mod kubectl_e2e;
mod kubectl_protobuf;
mod language_plugins;
mod leader_election;
mod metadata_only;
mod metrics_health;
mod mutating_admission_policies;
mod namespace_lifecycle;
mod oidc;
mod plugin_cli;
mod plugin_runtime;
mod python_client;
mod readme_tour;
mod replicas;
mod secrets;
mod secure_serving;
mod server_side_apply;
mod service_accounts;
mod storage_factory;
mod wasm_admission_policies;
mod wit_versions;

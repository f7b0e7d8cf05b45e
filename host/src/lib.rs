//! wasm-apiserver: a Kubernetes-style API server whose per-resource strategies are WebAssembly
//! components. See `ARCHITECTURE.md` at the repository root for the code map.

pub mod admission;
pub mod app;
pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod cli;
pub mod controllers;
pub mod fieldmanager;
pub mod limits;
pub mod metrics;
pub mod plugin;
pub mod protobuf;
pub mod registry;
pub mod reload;
pub mod server;
pub mod status;
pub mod strategy;
pub mod webhook;

//! The plugin runtime: loads strategy components with wasmtime and runs their hooks.
//!
//! - One [`wasmtime::Engine`] per process ([`PluginRuntime`]) with epoch interruption; a ticker
//!   thread advances the epoch every [`EPOCH_TICK`], so a call's deadline is enforced within
//!   one tick.
//! - Compile once per file hash: an in-memory map sha256 → `Component`, and an on-disk cache of
//!   precompiled artifacts (`<cache-dir>/<sha256>-<engine compat hash>.cwasm`) that only this
//!   process writes.
//! - At load: header check (WebAssembly? component, not core module?), WIT version check from the
//!   export name, import check (only `wasm-apiserver:strategy/*` and WASI, the latter
//!   deny-by-default (`sandbox.rs`): no files, network or environment, fixed clocks, seeded
//!   random, stderr kept for error messages), `InstancePre`, then
//!   `describe` read once and validated, then a smoke run on the plugin's example.
//! - Calls: a warm instance per (thread, loaded plugin) reused across calls, dropped after any
//!   trap (a trapped instance is poisoned), after [`MAX_CALLS_PER_INSTANCE`] calls, or when the
//!   plugin version is dropped. Each call gets the deadline and the memory cap of
//!   [`RuntimeConfig`].
//!
//! - `runtime.rs`: the engine, compile caches and loading; `load.rs`: the checks before
//!   anything runs; `config.rs`: the limits; `host_state.rs`: the memory limiter; `sandbox.rs`: the WASI a guest gets;
//!   `wasm_strategy.rs`: calls; `admission_plugin.rs`: admission policies (`wit/admission/`) and their calls; `wit/`: one module per contract version;
//!   `describe.rs`: the self-description's rules; `fixtures.rs`: `plugin test`.
//!
//! Measurements: BENCHMARKS.md (strategy hooks, hot reload, server memory after start).
//! Files here import each other, never this module (it only declares and re-exports).

pub mod admission_fixtures;
pub mod admission_plugin;
pub mod config;
pub mod context_reads;
pub mod describe;
pub mod fixtures;
pub mod host_state;
pub mod load;
pub mod runtime;
pub mod sandbox;
pub mod wasm_strategy;
pub mod wit;

pub use admission_plugin::WasmAdmissionPlugin;
pub use config::{RuntimeConfig, EPOCH_TICK, MAX_CALLS_PER_INSTANCE, MAX_WARM_MEMORY};
pub use host_state::{plugin_memory_in_use, HostState};
pub use load::{LoadError, LoadErrorKind, WIT_PACKAGE, WIT_VERSION};
pub use runtime::{ConfiguredPlugin, PluginRuntime};
pub use wasm_strategy::WasmStrategy;

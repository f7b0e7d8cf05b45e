//! The WIT contract versions this host serves, one module each (`v0_1.rs` for
//! `wit/0.1.0/`). A component is linked against the bindings of the version it exports;
//! [`Pre`] and [`Instance`] carry which. A new contract version adds a module and a variant
//! here; released versions stay as they are, and the host adapts each to the one
//! [`Strategy`](crate::strategy::Strategy) trait.

pub mod v0_1;

use super::host_state::HostState;

/// A component linked and ready to instantiate, by contract version.
pub enum Pre {
    /// `wasm-apiserver:strategy@0.1.x`.
    V0_1(v0_1::StrategyPluginPre<HostState>),
}

/// An instantiated component's exports, by contract version.
pub enum Instance {
    /// `wasm-apiserver:strategy@0.1.x`.
    V0_1(v0_1::StrategyPlugin),
}

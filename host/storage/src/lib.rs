//! storage.Interface for wasm-apiserver (work in progress).
pub mod errors;

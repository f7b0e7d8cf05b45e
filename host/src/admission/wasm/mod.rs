//! Wasm admission policies (`wit/admission/0.1.0/admission.wit`): the `AdmissionPlugin`
//! resource (`resources.rs`), the policies loaded from it (`source.rs`) and from the plugin
//! folder's policy components (`folder.rs`), their context reads
//! from the watch cache (`context.rs`) and the admission member that runs them
//! (`dispatcher.rs`).
//!
//! Files here import each other, never this module (it only declares).

pub mod context;
pub mod dispatcher;
pub mod folder;
pub mod resources;
pub mod source;

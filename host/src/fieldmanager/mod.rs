//! Field management for server-side apply (`k8s.io/apimachinery/pkg/util/managedfields` over
//! `sigs.k8s.io/structured-merge-diff`): which manager owns which fields of an object, how an
//! applied configuration merges into it, and `metadata.managedFields`.
//!
//! - `path_element`, `set`: structured-merge-diff's field paths and sets, and their
//!   `FieldsV1` wire format;
//! - `schema`: the structure fields are merged by, from the plugin's OpenAPI schema;
//! - `typed`: field sets of objects, comparison, merge and removal by that schema;
//! - `updater`: ownership changes of updates and applies, and conflicts;
//! - `managed_fields`: `metadata.managedFields` decoded and encoded;
//! - `field_manager`: kube's chain of managers around the updater, as the handlers call it;
//! - `from_value`: the leaf fields of an object without a schema.

pub mod field_manager;
pub mod from_value;
pub mod managed_fields;
pub mod path_element;
pub mod schema;
pub mod set;
pub mod typed;
pub mod updater;

pub use field_manager::FieldManager;
pub use path_element::{PathElement, PathElementError};
pub use set::Set;

/// The manager the host's own writers (controllers, bootstrap, plugin records) are recorded
/// under, as kube's are under their component's name (`kube-apiserver`,
/// `kube-controller-manager`).
pub const HOST_MANAGER: &str = "wasm-apiserver";

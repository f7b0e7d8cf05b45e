//! Field management for server-side apply (`k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`
//! over `sigs.k8s.io/structured-merge-diff`): which manager owns which fields of an object.
//!
//! This is being built in slices (issue 18). What exists: the field paths and sets of
//! structured-merge-diff's `fieldpath` package and their `FieldsV1` wire format
//! (`path_element`, `set`), the leaf fields of an object without a schema (`from_value`), and
//! `metadata.managedFields` decoded into sets per manager and encoded back as kube writes it
//! (`managed_fields`).

pub mod from_value;
pub mod managed_fields;
pub mod path_element;
pub mod set;

pub use path_element::{PathElement, PathElementError};
pub use set::Set;

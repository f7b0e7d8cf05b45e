//! # wasm-apiserver-apimachinery
//!
//! The Kubernetes vocabulary both sides of the plugin boundary use, defined once — what
//! `k8s.io/apimachinery` holds for kube-apiserver:
//! - [`field`]: field paths and field errors (`pkg/util/validation/field`);
//! - [`duration`]: `HumanDuration` (`pkg/util/duration`), the ages of Tables;
//! - [`validation`]: DNS-1123/DNS-1035 names, qualified names, label values, annotations,
//!   finalizers, owner references, managed fields and `ObjectMeta` (`pkg/util/validation`,
//!   `pkg/api/validation/objectmeta.go`, `pkg/apis/meta/v1/validation`);
//! - [`quantity`]: `resource.Quantity` parsing, arithmetic and canonical form
//!   (`pkg/api/resource`);
//! - [`labels`] and [`fields`]: label and field selectors with their parsers
//!   (`pkg/labels/selector.go`, `pkg/fields/selector.go`);
//! - [`resource`]: `GroupResource`, the resource description a plugin gives and the printer
//!   columns of its Tables, an object's selectable attributes;
//! - [`meta`]: an object's `metadata` read and written in place (`meta.Accessor`);
//! - [`strategic_merge_patch`]: strategic merge patch by the schema's patch markers
//!   (`pkg/util/strategicpatch`);
//! - [`time`]: `metav1.Time` / `MicroTime` strings (`pkg/apis/meta/v1/time.go`);
//! - [`conditions`]: a status condition's transition time (`pkg/api/meta/conditions.go`).
//!
//! The plugin SDK re-exports it (plugins build it for `wasm32-wasip2`), the storage crate uses
//! its selectors, the host its types. It depends on nothing of either.

pub mod conditions;
pub mod duration;
pub mod field;
pub mod fields;
pub mod labels;
pub mod meta;
pub mod quantity;
pub mod resource;
pub mod strategic_merge_patch;
pub mod time;
pub mod validation;
pub mod version;

pub use field::{ErrorList, ErrorType, FieldError, Path};
pub use resource::{
    Attributes, GroupKind, GroupResource, PrinterColumn, ResourceDescription, VersionDescription,
};

//! # wasm-apiserver-apiextensions
//!
//! What `k8s.io/apiextensions-apiserver` does to a custom resource's data, for the strategy
//! plugin that serves CustomResourceDefinitions (it builds for `wasm32-wasip2`, and runs
//! natively in tests):
//!
//! - [`structural`]: a CRD version's `openAPIV3Schema` as a structural schema
//!   (`pkg/apiserver/schema/structural.go`), and [`structural_validation`] whether it is one
//!   (`pkg/apiserver/schema/validation.go`);
//! - [`pruning`]: dropping the fields a schema does not declare, reporting their paths for
//!   `fieldValidation` (`pkg/apiserver/schema/pruning/algorithm.go`);
//! - [`defaulting`]: a schema's `default`s filled in, and `null`s it does not allow dropped
//!   (`pkg/apiserver/schema/defaulting/algorithm.go`, `prunenulls.go`);
//! - [`validation`]: schema validation with kube-openapi's messages as field errors
//!   (`pkg/apiserver/validation/validation.go`), [`formats`] the string formats it checks;
//! - [`cel_validation`]: `x-kubernetes-validations` rules compiled once per schema and
//!   evaluated per write (`pkg/apiserver/schema/cel`), with the CEL crate;
//! - [`crd_validation`]: a CustomResourceDefinition's own validation
//!   (`pkg/apis/apiextensions/validation/validation.go`), [`schema_validation`] the rules of
//!   each node of its schemas;
//! - [`custom_resource`]: the generic strategy of one CRD version's custom resources
//!   (`pkg/registry/customresource`): decode, prepare, validate; [`scale`] its `scale`
//!   subresource; [`conversion`] between versions (`None`, a webhook's `ConversionReview`).

pub mod cel_validation;
pub mod conversion;
pub mod crd_validation;
pub mod custom_resource;
pub mod defaulting;
pub mod formats;
pub mod listtype;
pub mod pruning;
pub mod scale;
pub mod schema_validation;
pub mod structural;
pub mod structural_validation;
pub mod validation;

//! Admission as the Store runs it, bound to one request: kube's `rest.ValidateObjectFunc`,
//! `rest.ValidateObjectUpdateFunc` and the mutating transformer of `rest.UpdatedObjectInfo`
//! (`k8s.io/apiserver/pkg/registry/rest/{create,update,delete}.go`, built by the handlers of
//! `pkg/endpoints/handlers/{create,update,patch,delete}.go`). The registry knows only this
//! interface; the admission chain (`crate::admission`) implements it, so the Store runs
//! admission at kube's points without depending on what admission holds:
//!
//! - create: [`WriteAdmission::admit`] before `PrepareForCreate`, [`WriteAdmission::validate`]
//!   after the strategy's validation;
//! - update: both inside the update's retry loop, on the updated object and the current one —
//!   with no current object (create-on-update) as a create, as kube's `update.go` decides by
//!   the old object's UID;
//! - delete: [`WriteAdmission::admit_delete`] on the current object, after the preconditions.

use crate::status::ApiResult;
use futures::future::BoxFuture;
use serde_json::Value;

/// Admission of one write request.
pub trait WriteAdmission: Send + Sync + std::fmt::Debug {
    /// The mutating stage: may change `object` (storage version); `old` is the current object
    /// of an update, `None` for a create. Errors: the member's refusal (its Status).
    fn admit<'a>(
        &'a self,
        object: &'a mut Value,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>>;

    /// The validating stage, after the strategy: `object` as it will be written.
    fn validate<'a>(
        &'a self,
        object: &'a Value,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>>;

    /// The `Warning` headers the members added so far, taken (kube's `warning.AddWarning`
    /// from admission). By default none.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Both stages of a delete (`AdmissionToValidateObjectDeleteFunc`): the object being
    /// deleted is the old object, there is no new one.
    fn admit_delete<'a>(&'a self, old: &'a Value) -> BoxFuture<'a, ApiResult<()>>;
}

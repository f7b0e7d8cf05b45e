//! [`AfterWrite`]: what a resource runs after a successful write and before the answer —
//! kube's `AfterCreate` and `AfterUpdate` hooks of the generic registry Store
//! (k8s.io/apiserver/pkg/registry/generic/registry/store.go). The CustomResourceDefinition
//! resource uses it to serve a new or changed CRD before its create or update returns.

use futures::future::BoxFuture;
use serde_json::Value;

/// Runs after a create or update (not a dry run) was stored, with the stored object, before the
/// answer is sent. It cannot fail the write, which is already acknowledged by storage.
pub trait AfterWrite: Send + Sync {
    /// Called once per successful write with the object as stored.
    fn after_write<'a>(&'a self, stored: &'a Value) -> BoxFuture<'a, ()>;
}

//! The one delete entry point every caller uses (the DELETE handler, the garbage collector):
//! a namespace through its own REST storage ([`super::namespace_rest`]: Terminating first,
//! removed once emptied), anything else through [`Store::delete`] — kube installs a
//! namespace-specific `REST` in front of the generic Store
//! (`pkg/registry/core/namespace/storage/storage.go`).

use super::deletion::{DeleteOptions, DeleteResult};
use super::namespace_rest::delete_namespace;
use super::store::Store;
use crate::status::ApiResult;

/// Delete `name` in `ns` of `store`'s resource with `opts` (admission included, when the
/// options carry it). Errors: admission's, the Store's.
pub async fn delete(
    store: &Store,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
) -> ApiResult<DeleteResult> {
    if store.is_namespaces() {
        delete_namespace(store, name, opts).await
    } else {
        store.delete(ns, name, opts).await
    }
}

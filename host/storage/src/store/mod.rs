//! [`KvStore`]: the one implementation of [`Storage`](crate::Storage) over any
//! [`Backend`](crate::backend::Backend), a port of kube-apiserver's etcd3 store
//! (`k8s.io/apiserver/pkg/storage/etcd3/store.go`) and watcher (`etcd3/watcher.go`,
//! `event.go`). Everything that makes clients work — resourceVersion rules, optimistic
//! concurrency with retries, the no-op write rule, paging with pinned revisions and limit
//! doubling, continue tokens, the watch event mapping under a predicate — lives here once, so
//! every backend behaves the same.
//!
//! - `kv_store.rs`: the store and its writes and reads; `list.rs`: `GetList`; `watcher.rs`:
//!   watches; `versioner.rs`: resourceVersions; `value_transformer.rs`: stored bytes.

mod kv_store;
mod list;
mod value_transformer;
pub(crate) mod versioner;
mod watcher;

pub use kv_store::{validate_key, KvStore, StoreConfig};
pub use value_transformer::{IdentityTransformer, ValueTransformer};
pub use versioner::parse_resource_version;
pub use watcher::INITIAL_EVENTS_END_ANNOTATION;

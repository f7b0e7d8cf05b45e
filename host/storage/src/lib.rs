//! # wasm-apiserver-storage
//!
//! `k8s.io/apiserver/pkg/storage` for wasm-apiserver:
//! - [`Storage`] — `storage.Interface`: create, delete, watch, get, get_list,
//!   guaranteed_update, count, with kube-apiserver's resourceVersion, paging and watch rules;
//! - [`backend::Backend`] — etcd's primitives (revisions, `mod_revision` compares, watch with
//!   previous values, compaction), implemented by `etcd3` (etcd-client) and `embedded`
//!   (SQLite);
//! - [`store::KvStore`] — the one implementation of [`Storage`] over any backend, porting
//!   etcd3's `store.go`/`watcher.go` logic;
//! - [`selection`] — `SelectionPredicate`, label and field selectors;
//! - [`continue_token`] — continue tokens encoded as kube-apiserver encodes them.

pub mod backend;
pub mod blob_store;
pub mod cacher;
pub mod continue_token;
pub mod errors;
pub mod factory;
pub mod interfaces;
pub mod selection;
pub mod stored;
pub mod value;

pub use errors::{BackendError, StorageError};
pub use interfaces::{
    GetOptions, ListOptions, ListResult, Preconditions, ResourceVersionMatch, ResponseMeta,
    SharedListResult, Storage, TryUpdate, UpdateOutcome, ValidateDeletion, WatchEvent, WatchStream,
};
pub use selection::{Attrs, FieldSelector, LabelSelector, SelectionPredicate};
pub use stored::{SharedObject, StoredObject};
pub mod embedded;
pub mod etcd3;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;

//! Test support shared by this crate's tests and the host's: a real etcd server
//! ([`etcd::EtcdServer`]), the storage conformance suite ([`conformance`], a port of
//! `k8s.io/apiserver/pkg/storage/testing`) and the `Backend` conformance cases
//! ([`backend_tests`]) every backend runs.

pub mod backend_tests;
pub mod conformance;
pub mod etcd;

use crate::errors::Result;
use crate::interfaces::{GetOptions, ListOptions, ListResult, SharedListResult, Storage};
use crate::stored::SharedObject;
use async_trait::async_trait;
use serde_json::Value;

/// Reads with owned objects, for tests that compare values: [`Storage::get`] and
/// [`Storage::get_list`] converted ([`SharedObject::into_value`],
/// [`SharedListResult::into_owned`]). Same errors, a corrupt stored object included.
#[async_trait]
pub trait OwnedReads {
    /// [`Storage::get`], the object owned.
    async fn get_owned(&self, key: &str, opts: &GetOptions) -> Result<Option<Value>>;
    /// [`Storage::get_list`], the items owned.
    async fn get_list_owned(&self, key: &str, opts: &ListOptions) -> Result<ListResult>;
}

#[async_trait]
impl<S: Storage + ?Sized> OwnedReads for S {
    async fn get_owned(&self, key: &str, opts: &GetOptions) -> Result<Option<Value>> {
        self.get(key, opts)
            .await?
            .map(SharedObject::into_value)
            .transpose()
    }

    async fn get_list_owned(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        self.get_list(key, opts)
            .await
            .and_then(SharedListResult::into_owned)
    }
}

//! Which reads the watch cache serves and which go to the storage
//! (`k8s.io/apiserver/pkg/storage/cacher/delegator.go`, `ShouldDelegateList`), as the table
//! of the module documentation says; writes always go to the storage, with the cached object
//! as their `cached_existing` hint.

use super::cacher::Cacher;
use super::watch_cache::{self, CacheState};
use crate::errors::{Result, StorageError};
use crate::interfaces::{
    GetOptions, ListOptions, Preconditions, ResourceVersionMatch, SharedListResult, Storage,
    TryUpdate, ValidateDeletion, WatchStream,
};
use crate::store::parse_resource_version;
use crate::stored::SharedObject;
use async_trait::async_trait;
use serde_json::Value;
use std::sync::atomic::Ordering;
impl Cacher {
    /// Record the resourceVersion a write answered with.
    fn wrote(&self, out: Result<Value>) -> Result<Value> {
        if let Ok(obj) = &out {
            let rv = watch_cache::rv_of(obj);
            self.shared.newest_write.fetch_max(rv, Ordering::SeqCst);
        }
        out
    }
}

#[async_trait]
impl Storage for Cacher {
    async fn create(&self, key: &str, obj: Value, ttl: u64) -> Result<Value> {
        self.ensure_started();
        self.wrote(self.shared.inner.create(key, obj, ttl).await)
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &mut ValidateDeletion,
        cached_existing: Option<Value>,
    ) -> Result<Value> {
        self.ensure_started();
        let hint = cached_existing.or_else(|| self.shared.cached_object(key));
        // The deleted object carries the delete's revision (`KvStore::delete`).
        self.wrote(
            self.shared
                .inner
                .delete(key, preconditions, validate_deletion, hint)
                .await,
        )
    }

    async fn watch(&self, key: &str, opts: ListOptions) -> Result<WatchStream> {
        self.ensure_started();
        self.watch_from_cache(key, opts).await
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<SharedObject>> {
        self.ensure_started();
        let shared = &self.shared;
        if opts.resource_version.is_empty() {
            shared.delegated();
            return shared.inner.get(key, opts).await;
        }
        let rv = parse_resource_version(&opts.resource_version)?;
        let scope = shared.scope(key, false)?;
        if !shared.wait_fresh(rv, None).await? {
            shared.delegated();
            return shared.inner.get(key, opts).await;
        }
        let found = {
            let st = shared.read();
            if !st.ready {
                None
            } else {
                Some(st.objects.get(&scope.key).map(|e| e.obj.clone()))
            }
        };
        match found {
            None => {
                shared.delegated();
                shared.inner.get(key, opts).await
            }
            Some(obj) => {
                shared.served_from_cache();
                match obj {
                    Some(o) => Ok(Some(o)),
                    None if opts.ignore_not_found => Ok(None),
                    None => Err(StorageError::KeyNotFound { key: scope.key }),
                }
            }
        }
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult> {
        self.ensure_started();
        let shared = &self.shared;
        let pred = &opts.predicate;
        let delegate = || async {
            shared.delegated();
            shared.inner.get_list(key, opts).await
        };
        // ShouldDelegateList.
        if !pred.continue_token.is_empty() {
            return delegate().await;
        }
        let Ok(rv) = parse_resource_version(&opts.resource_version) else {
            return delegate().await;
        };
        let unset = opts.resource_version.is_empty();
        // (minimum resourceVersion, limit, consistent read)
        let (min_rv, limit, consistent) = match opts.resource_version_match {
            ResourceVersionMatch::Exact => return delegate().await,
            ResourceVersionMatch::NotOlderThan if unset => return delegate().await,
            ResourceVersionMatch::NotOlderThan if rv == 0 => (0, 0, false),
            ResourceVersionMatch::NotOlderThan => (rv, pred.limit, false),
            ResourceVersionMatch::Unset if unset && pred.limit > 0 => return delegate().await,
            ResourceVersionMatch::Unset if unset => (0, 0, true),
            ResourceVersionMatch::Unset if rv == 0 => (0, 0, false),
            ResourceVersionMatch::Unset if pred.limit > 0 => return delegate().await,
            ResourceVersionMatch::Unset => (rv, 0, false),
        };
        let scope = shared.scope(key, opts.recursive)?;
        let fresh = if consistent {
            // `ShouldDelegateConsistentRead`: only a storage whose watches report progress on
            // request can tell the cache it is current in time; without that, etcd.
            if !shared.inner.supports_request_watch_progress() {
                return delegate().await;
            }
            match shared.inner.current_resource_version().await {
                Ok(current) => shared.wait_consistent(current).await,
                Err(_) => false,
            }
        } else if min_rv == 0 {
            shared.read().ready
        } else {
            shared.wait_fresh(min_rv, None).await?
        };
        if !fresh {
            return delegate().await;
        }
        let out = {
            let st = shared.read();
            if !st.ready {
                None
            } else if watch_cache::matches_unlocked(pred) {
                Some(Err((
                    st.candidates_shared(&shared.config, &scope, pred),
                    st.rv,
                )))
            } else {
                Some(Ok(st.list(&shared.config, &scope, pred, limit)))
            }
        };
        let out = match out {
            None => None,
            Some(Ok(listed)) => Some(listed),
            // Matched without the lock, off the async workers: it converts.
            Some(Err((candidates, rv))) => {
                let pred = pred.clone();
                Some(
                    tokio::task::spawn_blocking(move || {
                        watch_cache::list_candidates(&candidates, &scope, &pred, limit, rv)
                    })
                    .await
                    .map_err(|e| StorageError::Internal(format!("list: {e}")))?,
                )
            }
        };
        match out {
            None => delegate().await,
            Some(r) => {
                let r = r.map(|(list, items)| SharedListResult {
                    items,
                    resource_version: list.resource_version,
                    continue_token: list.continue_token,
                    remaining_item_count: list.remaining_item_count,
                });
                shared.served_from_cache();
                if CacheState::uses_index(&shared.config, pred) {
                    shared
                        .counters
                        .reads_from_index
                        .fetch_add(1, Ordering::Relaxed);
                }
                r
            }
        }
    }

    async fn guaranteed_update(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: &Preconditions,
        try_update: &mut TryUpdate,
        cached_existing: Option<Value>,
    ) -> Result<Value> {
        self.ensure_started();
        let hint = cached_existing.or_else(|| self.shared.cached_object(key));
        self.wrote(
            self.shared
                .inner
                .guaranteed_update(key, ignore_not_found, preconditions, try_update, hint)
                .await,
        )
    }

    async fn count(&self, key: &str) -> Result<i64> {
        self.shared.inner.count(key).await
    }

    async fn current_resource_version(&self) -> Result<u64> {
        self.shared.inner.current_resource_version().await
    }

    fn compact_revision(&self) -> u64 {
        self.shared.inner.compact_revision()
    }

    fn newest_write(&self) -> u64 {
        self.shared.newest_write.load(Ordering::SeqCst)
    }

    fn supports_request_watch_progress(&self) -> bool {
        self.shared.inner.supports_request_watch_progress()
    }

    async fn request_watch_progress(&self) -> Result<()> {
        self.shared.inner.request_watch_progress().await
    }

    async fn readiness_check(&self) -> Result<()> {
        self.ensure_started();
        if !self.shared.read().ready {
            return Err(StorageError::Unreachable(format!(
                "the watch cache of {} is not ready",
                self.shared.config.resource_prefix
            )));
        }
        self.shared.inner.readiness_check().await
    }
}

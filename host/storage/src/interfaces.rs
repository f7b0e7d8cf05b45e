//! `storage.Interface` (`k8s.io/apiserver/pkg/storage/interfaces.go`): the [`Storage`] trait and
//! its options. Objects are JSON values (`apiVersion`, `kind`, `metadata`, …); the storage
//! layer owns `metadata.resourceVersion` (cleared before encoding, set from the revision on
//! decode, as `APIObjectVersioner` does).

use crate::errors::{Result, StorageError};
use crate::selection::SelectionPredicate;
use crate::stored::SharedObject;
use async_trait::async_trait;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;

/// `storage.Preconditions`: checked against the stored object before a delete or update.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// Required `metadata.uid`.
    pub uid: Option<String>,
    /// Required `metadata.resourceVersion`.
    pub resource_version: Option<String>,
}

impl Preconditions {
    /// `Preconditions.Check` (`k8s.io/apiserver/pkg/storage/interfaces.go`): the object's
    /// uid and resourceVersion must be the ones given. Errors: `InvalidObj` at `key` with
    /// kube-apiserver's "Precondition failed: …" message.
    pub fn check(&self, key: &str, obj: &Value) -> Result<()> {
        let meta = wasm_apiserver_apimachinery::meta::accessor(obj);
        if let Some(uid) = &self.uid {
            let have = meta.uid();
            if uid != have {
                return Err(StorageError::InvalidObj {
                    key: key.to_string(),
                    message: format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"
                    ),
                });
            }
        }
        if let Some(rv) = &self.resource_version {
            let have = meta.resource_version();
            if rv != have {
                return Err(StorageError::InvalidObj {
                    key: key.to_string(),
                    message: format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {have}"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// `storage.GetOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GetOptions {
    /// `""` = latest, `"0"` = any, `N` = not older than N (504 TooLarge if N is in the future).
    pub resource_version: String,
    /// Return `Ok(None)` instead of `KeyNotFound`.
    pub ignore_not_found: bool,
}

/// `metav1.ResourceVersionMatch`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// Not given: the legacy rules (`N` with a limit means Exact).
    #[default]
    Unset,
    /// `NotOlderThan`.
    NotOlderThan,
    /// `Exact`.
    Exact,
}

impl ResourceVersionMatch {
    /// Parse the query parameter; `""` is [`ResourceVersionMatch::Unset`]. Errors: any other
    /// value (422 at the HTTP edge).
    pub fn parse(s: &str) -> Result<ResourceVersionMatch> {
        match s {
            "" => Ok(ResourceVersionMatch::Unset),
            "NotOlderThan" => Ok(ResourceVersionMatch::NotOlderThan),
            "Exact" => Ok(ResourceVersionMatch::Exact),
            other => Err(crate::StorageError::Invalid {
                field: "resourceVersionMatch".into(),
                value: other.into(),
                detail: "supported values: \"Exact\", \"NotOlderThan\"".into(),
            }),
        }
    }
}

/// `storage.ListOptions` (for `get_list` and `watch`).
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// `""`, `"0"` or a revision (the rules of `k8s.io/apiserver/pkg/storage/interfaces.go`
    /// `ListOptions.ResourceVersion`).
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: ResourceVersionMatch,
    /// Label/field filter, limit and continue.
    pub predicate: SelectionPredicate,
    /// List/watch every key under the key as a prefix (`key/`), not the single key.
    pub recursive: bool,
    /// Watch: ask the backend for progress notifications, delivered as bookmarks (internal,
    /// used by the cacher).
    pub progress_notify: bool,
    /// Watch: `sendInitialEvents`.
    pub send_initial_events: Option<bool>,
    /// Watch: when the client's watch ends (its `timeoutSeconds`). The watch cache sends a
    /// bookmark ~2 s before it, as kube's `cacheWatcher.nextBookmarkTime` does, so a watch
    /// shorter than the bookmark interval still gets one. `None`: no deadline known.
    pub watch_deadline: Option<tokio::time::Instant>,
}

/// A list result (`metav1.ListMeta` + items).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListResult {
    /// The objects, each with its `metadata.resourceVersion`.
    pub items: Vec<Value>,
    /// The revision the list was read at (the store's revision, not the newest item's).
    pub resource_version: u64,
    /// The continue token of the next page, if more remain.
    pub continue_token: Option<String>,
    /// Items left after this page; set only for unfiltered lists.
    pub remaining_item_count: Option<i64>,
}

/// A list whose objects are not copied: the watch cache hands out its objects shared, as
/// kube-apiserver's cacher hands out pointers to its cached objects, and an unfiltered list
/// from storage hands out the stored bytes undecoded ([`SharedObject`]). Same fields as
/// [`ListResult`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SharedListResult {
    /// The objects; each has (or, decoded, gets) its `metadata.resourceVersion`.
    pub items: Vec<SharedObject>,
    /// The revision the list was read at.
    pub resource_version: u64,
    /// The continue token of the next page, if more remain.
    pub continue_token: Option<String>,
    /// Items left after this page; set only for unfiltered lists.
    pub remaining_item_count: Option<i64>,
}

impl SharedListResult {
    /// The list with owned objects: shared ones moved out when this list held the only
    /// reference (else copied), stored ones decoded. Errors: [`crate::StorageError::CorruptObj`]
    /// for the first stored object that is not JSON.
    pub fn into_owned(self) -> Result<ListResult> {
        Ok(ListResult {
            items: self
                .items
                .into_iter()
                .map(SharedObject::into_value)
                .collect::<Result<_>>()?,
            resource_version: self.resource_version,
            continue_token: self.continue_token,
            remaining_item_count: self.remaining_item_count,
        })
    }
}

impl From<ListResult> for SharedListResult {
    fn from(l: ListResult) -> Self {
        SharedListResult {
            items: l.items.into_iter().map(SharedObject::from).collect(),
            resource_version: l.resource_version,
            continue_token: l.continue_token,
            remaining_item_count: l.remaining_item_count,
        }
    }
}

/// One event of [`Storage::watch`] (`watch.Event`). Objects are [`SharedObject`]s: the
/// watch cache shares its decoded objects with every watcher, and an unfiltered watch on the
/// backend hands out the stored bytes undecoded (a corrupt object is found where it is
/// decoded or written: [`crate::StorageError::CorruptObj`]).
#[derive(Clone, Debug)]
pub enum WatchEvent {
    /// The object appeared (or started to match the predicate).
    Added(SharedObject),
    /// The object changed and still matches.
    Modified(SharedObject),
    /// The object was deleted (or stopped matching); carries the delete revision as its
    /// resourceVersion.
    Deleted(SharedObject),
    /// A bookmark: an object with only `metadata.resourceVersion` (and maybe the
    /// `k8s.io/initial-events-end` annotation).
    Bookmark(Value),
    /// The watch failed; nothing follows.
    Error(crate::StorageError),
}

/// A watch: dropping the receiver stops it. The channel closes without an error when the
/// watch ends normally (context cancelled, server stopping).
pub type WatchStream = mpsc::Receiver<WatchEvent>;

/// `storage.ResponseMeta`: what `try_update` learns about the current object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResponseMeta {
    /// Seconds left on its TTL (0 = none).
    pub ttl: i64,
    /// Its resourceVersion (0 = it does not exist).
    pub resource_version: u64,
}

/// What `try_update` returns: the new object and, optionally, a TTL (`None` = no TTL, as
/// etcd3's `updateState` turns a nil TTL into 0).
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateOutcome {
    /// The object to store.
    pub object: Value,
    /// TTL in seconds for the written object (`None` = none).
    pub ttl: Option<u64>,
}

/// `storage.UpdateFunc`: given the current object (`Value::Null` when it does not exist and
/// `ignore_not_found` was set) and its metadata, produce the new one or an error (wrap a
/// caller's own error with [`crate::StorageError::aborted`]). May be called more than once.
pub type TryUpdate =
    dyn FnMut(Value, ResponseMeta) -> BoxFuture<'static, Result<UpdateOutcome>> + Send;

/// `storage.ValidateObjectFunc` for deletes: given the current object, refuse the delete with
/// an error. May be called more than once.
pub type ValidateDeletion = dyn FnMut(Value) -> BoxFuture<'static, Result<()>> + Send;

/// The storage of one resource: `storage.Interface`. Keys are storage keys under the resource
/// prefix, e.g. `/pods/default/web` (the path prefix such as `/registry` is added by the
/// implementation).
#[async_trait]
pub trait Storage: Send + Sync {
    /// `Create`: store `obj` at `key` unless the key exists (`KeyExists`). `obj` must not carry a
    /// resourceVersion (`Invalid`). `ttl` > 0 deletes it after that many seconds. Returns the
    /// stored object with its resourceVersion.
    async fn create(&self, key: &str, obj: Value, ttl: u64) -> Result<Value>;

    /// `Delete`: remove `key` after checking `preconditions` (`InvalidObj`) and
    /// `validate_deletion`, retrying on concurrent change. `cached_existing` is only a hint.
    /// Returns the last state with the delete revision as its resourceVersion.
    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &mut ValidateDeletion,
        cached_existing: Option<Value>,
    ) -> Result<Value>;

    /// `Watch`: events for `key` (or every key below it when `opts.recursive`) that match the
    /// predicate, from `opts.resource_version` (exclusive), with initial events per the
    /// resourceVersion rules.
    async fn watch(&self, key: &str, opts: ListOptions) -> Result<WatchStream>;

    /// `Get`: `KeyNotFound`, or `Ok(None)` with `ignore_not_found`. The object is not copied:
    /// the watch cache answers with its object shared, `KvStore` with the stored bytes
    /// undecoded (the registry writes a JSON GET's response from them); a caller that wants an
    /// owned object converts ([`SharedObject::into_value`]), which is also where a corrupt
    /// stored object is found.
    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<SharedObject>>;

    /// `GetList`: a recursive list under `key/` or the single `key`, with the resourceVersion,
    /// paging and predicate rules of etcd3's `GetList`. The items are not copied (the watch
    /// cache's objects shared, the stored bytes of an unfiltered list undecoded); a caller that
    /// wants owned objects converts ([`SharedListResult::into_owned`]), which is also where a
    /// corrupt stored object is found.
    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult>;

    /// `GuaranteedUpdate`: read, `try_update`, write if the bytes changed, retrying on
    /// conflict. `KeyNotFound` unless `ignore_not_found`. Returns the stored object (the
    /// current one, unchanged, when `try_update` produced identical bytes).
    async fn guaranteed_update(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: &Preconditions,
        try_update: &mut TryUpdate,
        cached_existing: Option<Value>,
    ) -> Result<Value>;

    /// `Stats().ObjectCount`: number of objects under `key/`.
    async fn count(&self, key: &str) -> Result<i64>;

    /// `GetCurrentResourceVersion`: the backend's current revision (linearizable).
    async fn current_resource_version(&self) -> Result<u64>;

    /// `CompactRevision`: the newest compacted revision seen (0 = none).
    fn compact_revision(&self) -> u64;

    /// The resourceVersion of the newest write this process made through this storage and
    /// was answered (0 = none, or not tracked): a read at it (`resourceVersion=<rv>`, not
    /// older than) sees every write this replica acknowledged, and the watch cache
    /// ([`crate::cacher::Cacher`], which tracks it) serves such a read without a storage
    /// round trip once it has caught up. Admission policies' context reads use it.
    fn newest_write(&self) -> u64 {
        0
    }

    /// Whether [`Storage::request_watch_progress`] makes watches report progress on request
    /// (kube's `etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress)`).
    /// Without it the watch cache does not serve consistent reads (`cacher.go`
    /// `ShouldDelegateConsistentRead`).
    fn supports_request_watch_progress(&self) -> bool {
        false
    }

    /// `RequestWatchProgress`: ask this storage's watches opened with `progress_notify` for a
    /// progress notification (a bookmark) at the current resourceVersion as soon as they have
    /// delivered everything before it. A no-op when unsupported.
    async fn request_watch_progress(&self) -> Result<()> {
        Ok(())
    }

    /// `ReadinessCheck`: `Ok` when the backend answers.
    async fn readiness_check(&self) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn preconditions_word_their_failures_like_kubernetes() {
        let obj = json!({"metadata": {"uid": "a", "resourceVersion": "5"}});
        let p = Preconditions {
            uid: Some("b".into()),
            resource_version: None,
        };
        let e = p.check("/k", &obj).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Precondition failed: UID in precondition: b, UID in object meta: a"
        );
        let p = Preconditions {
            uid: Some("a".into()),
            resource_version: Some("5".into()),
        };
        assert!(p.check("/k", &obj).is_ok());
    }
}

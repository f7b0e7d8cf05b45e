//! The watch cache: [`Cacher`], a [`Storage`] that decorates another one (normally a
//! [`crate::store::KvStore`]) for ONE resource, porting kube-apiserver's
//! `k8s.io/apiserver/pkg/storage/cacher` (`cacher.go`, `delegator.go`, `watch_cache.go`,
//! `cache_watcher.go`).
//!
//! - **Filling** ([`reflector`]): one consistent list of the resource prefix, then one
//!   recursive backend watch from the list's resourceVersion with `progress_notify`, feeding
//!   an in-memory store (key → object, its attributes, optional field indexes) and a bounded
//!   ring buffer of recent events ([`CacherConfig::capacity`]). When the watch breaks it is
//!   re-opened from the cache's resourceVersion; when that is not possible (410, nothing
//!   delivered) the resource is re-listed and every cache watcher's stream ends.
//! - **Writes** (`create`, `delete`, `guaranteed_update`) and `count`,
//!   `current_resource_version`, `compact_revision` always go to the storage; `delete` and
//!   `guaranteed_update` get the cached object as their `cached_existing` hint when the caller
//!   gives none (`delegator.go`), which saves a read when the cache is current.
//! - **Reads** follow `delegator.go` / `ShouldDelegateList`:
//!
//!   | call | served by |
//!   |---|---|
//!   | `get`, RV `""` | storage (quorum read) |
//!   | `get`, RV `"0"` | cache, no waiting |
//!   | `get`, RV `N` | cache once its RV ≥ N (waits up to [`CacherConfig::fresh_timeout`]); 504 TooLargeResourceVersion at once when N is above the storage's current revision; storage when the wait times out |
//!   | `get_list` with a continue token, `Exact`, RV `N` with `limit` (legacy Exact), RV `""` with `limit` | storage |
//!   | `get_list`, RV `"0"` (also with NotOlderThan) | cache, **`limit` ignored**, no continue token |
//!   | `get_list`, RV `N` (NotOlderThan, or unset without limit) | cache once fresh, `limit` honoured (continue tokens in the etcd3 format, pinned at the cache RV) |
//!   | `get_list`, RV `""` | consistent read: with a storage that reports watch progress on request (the embedded store), the storage's current revision, then the cache once it has caught up (asking for progress), else storage; otherwise (etcd) storage |
//!   | `watch` | cache (storage while the cache is not ready) |
//!
//!   A read that would be served from the cache goes to the storage while the cache is not
//!   ready. The list resourceVersion is the cache's. Selectors are applied in memory; a field
//!   selector that pins an indexed field ([`CacherConfig::indexes`]) with `=` reads the index.
//! - **Watches** ([`watcher`]): any number over the single backend watch; resume from any RV
//!   still in the ring buffer, 410 Expired (as the first and only event) for an older one;
//!   initial events from the cache for RV `""`/`"0"` (legacy) or `sendInitialEvents=true`
//!   (then the `k8s.io/initial-events-end` bookmark when bookmarks are allowed); periodic
//!   bookmarks every [`CacherConfig::bookmark_interval`]; slow watchers are closed.
//!
//! Consistent reads need the cache's resourceVersion to reach the storage's current revision.
//! As kube-apiserver, the cache asks the storage for a progress notification
//! ([`Storage::request_watch_progress`]) and serves the read once its watch has delivered
//! everything up to that revision; a storage that cannot (etcd here: kube only uses
//! `RequestWatchProgress` on etcd ≥ 3.4.31 / 3.5.13, `storage/feature/feature_support_checker.go`,
//! because older members can report progress past events a watcher has not yet received,
//! etcd-io/etcd#15220 and #17507) serves consistent reads itself
//! (`cacher.go` `ShouldDelegateConsistentRead`). Reads at an explicit resourceVersion also ask
//! for progress where the storage supports it; on etcd they wait for the resource's own events
//! and etcd's periodic progress notifications (`--experimental-watch-progress-notify-interval`);
//! when the backend watch has been silent for longer than [`CacherConfig::fresh_timeout`]
//! (e.g. etcd's default 10-minute interval on an idle resource), such a read waits only
//! briefly and then goes to the storage instead of waiting the full timeout.
//!
//! Files: `cacher.rs` (the [`Cacher`], its configuration and the state its parts share),
//! `delegator.rs` (the table above: which reads the cache serves, `delegator.go`),
//! `reflector.rs`, `watch_cache.rs`, `watcher.rs`.

#[allow(clippy::module_inception)]
mod cacher;
mod delegator;
mod reflector;
mod watch_cache;
mod watcher;

pub use cacher::{
    cluster_key_func, namespace_key_func, object_key_func, Cacher, CacherConfig, CacherStats,
    KeyFunc,
};

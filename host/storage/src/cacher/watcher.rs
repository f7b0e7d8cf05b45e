//! `cacheWatcher` (`k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go`): one client watch
//! served from the watch cache.
//!
//! Each watcher is a task that pulls from the cache's event ring buffer with its own cursor
//! (the resourceVersion of the last event it considered), so the single backend watch fans
//! out to any number of watchers and a slow one never delays the others. It sends:
//! 1. the initial events, if any (synthetic ADDED for a snapshot of the cache, each object with
//!    its own resourceVersion), then the `k8s.io/initial-events-end` BOOKMARK when asked;
//! 2. every later event with a resourceVersion above the cursor, mapped through its predicate
//!    like `convertToWatchEvent`;
//! 3. periodic BOOKMARKs with the cache's resourceVersion when bookmarks were asked for and it
//!    is caught up (so a bookmark never jumps over an event it has not sent yet).
//!
//! The stream ends (without an ERROR event, as kube closes them) when the client's channel
//! stays full longer than `slow_watcher_timeout`, when the watcher fell behind the ring buffer,
//! or when the cache is re-listed; the client then re-watches or re-lists.

use super::cacher::Shared;
use super::watch_cache::{matches, CacheEvent, EventKind, Scope};
use crate::errors::Result;
use crate::interfaces::WatchEvent;
use crate::selection::SelectionPredicate;
use crate::stored::{SharedObject, StoredObject};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{self, error::SendTimeoutError};
use tokio::time::Instant;

/// Events copied out of the ring buffer per lock acquisition (`watch_cache_interval.go`
/// copies chunks of 100).
const BATCH: usize = 100;

/// What one watcher serves.
pub(crate) struct WatcherSpec {
    pub scope: Scope,
    pub pred: SelectionPredicate,
    /// Send periodic bookmarks (`allowWatchBookmarks`, or `progress_notify`).
    pub bookmarks: bool,
    /// When the client's watch ends, if known: a bookmark is due ~2 s before it.
    pub deadline: Option<Instant>,
    /// The cache generation the watcher belongs to.
    pub generation: u64,
}

/// Where a watcher starts.
pub(crate) enum Start {
    /// Send `objects` as ADDED (a snapshot at `rv`), then the end bookmark if asked, then
    /// events after `rv`.
    Initial {
        objects: Vec<SharedObject>,
        rv: u64,
        end_bookmark: bool,
    },
    /// Events after `rv` (exclusive).
    After(u64),
}

/// When the next periodic bookmark is due (`cacheWatcher.nextBookmarkTime` in
/// `k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go`): every `interval`, but ~2 s before
/// the watch's deadline when that comes sooner; never again once that moment has passed.
pub(crate) fn next_bookmark_time(
    now: Instant,
    interval: Duration,
    deadline: Option<Instant>,
) -> Instant {
    const NEVER: Duration = Duration::from_secs(365 * 24 * 3600);
    let heartbeat = now + interval;
    let Some(deadline) = deadline else {
        return heartbeat;
    };
    let pre_timeout = deadline
        .checked_sub(Duration::from_secs(2))
        .unwrap_or(deadline);
    let next = heartbeat.min(pre_timeout);
    if next < now {
        now + NEVER
    } else {
        next
    }
}

/// Decrements the open-watcher gauge when the watcher task ends, however it ends.
struct Gauge(Arc<Shared>);

impl Drop for Gauge {
    fn drop(&mut self) {
        self.0.counters.watchers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `obj` with resourceVersion `rv`.
fn with_rv(obj: &SharedObject, rv: u64) -> Result<SharedObject> {
    Ok(match obj {
        SharedObject::Stored(s) => SharedObject::Stored(Arc::new(StoredObject {
            resource_version: rv,
            ..(**s).clone()
        })),
        SharedObject::Decoded(v) => {
            let mut o = (**v).clone();
            if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
            }
            o.into()
        }
    })
}

/// `convertToWatchEvent`: a cache event as seen through one watcher's scope and predicate.
/// A DELETED caused by an update that stops matching carries the previous object with the
/// event's resourceVersion. Errors: `GetAttrs` failed.
pub(crate) fn transform(ev: &CacheEvent, spec: &WatcherSpec) -> Result<Option<WatchEvent>> {
    if !spec.scope.contains(&ev.key) {
        return Ok(None);
    }
    let pred = &spec.pred;
    match ev.kind {
        EventKind::Delete => Ok(matches(pred, &ev.obj, ev.attrs.as_deref())?
            .then(|| WatchEvent::Deleted(ev.obj.clone()))),
        EventKind::Put => {
            let cur_ok = matches(pred, &ev.obj, ev.attrs.as_deref())?;
            let old_ok = match &ev.prev {
                Some(p) => Some(matches(pred, &p.obj, p.attrs.as_deref())?),
                None => None,
            };
            Ok(match (cur_ok, old_ok) {
                (true, Some(true)) => Some(WatchEvent::Modified(ev.obj.clone())),
                (true, _) => Some(WatchEvent::Added(ev.obj.clone())),
                (false, Some(true)) => {
                    let prev = ev.prev.as_ref().expect("old_ok implies prev");
                    Some(WatchEvent::Deleted(with_rv(&prev.obj, ev.rv)?))
                }
                (false, _) => None,
            })
        }
    }
}

/// The watcher task. Returns when the stream is over (the sender is dropped on return). The
/// caller has counted the watcher in the open-watcher gauge; the task uncounts it.
pub(crate) async fn run(
    shared: Arc<Shared>,
    spec: WatcherSpec,
    start: Start,
    tx: mpsc::Sender<WatchEvent>,
) {
    let _gauge = Gauge(shared.clone());
    let mut changed = shared.changed.subscribe();
    let config = &shared.config;

    // Everything up to `cursor` has been considered; `last_sent` is the resourceVersion of the
    // last thing sent (an event or a bookmark).
    let mut cursor = match start {
        Start::After(rv) => rv,
        Start::Initial {
            objects,
            rv,
            end_bookmark,
        } => {
            for obj in objects {
                shared
                    .counters
                    .events_dispatched
                    .fetch_add(1, Ordering::Relaxed);
                if tx.send(WatchEvent::Added(obj)).await.is_err() {
                    return;
                }
            }
            if end_bookmark {
                shared
                    .counters
                    .bookmarks_sent
                    .fetch_add(1, Ordering::Relaxed);
                if tx
                    .send(WatchEvent::Bookmark(shared.bookmark(rv, true)))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            rv
        }
    };
    let mut last_sent = cursor;
    let mut next_bookmark =
        next_bookmark_time(Instant::now(), config.bookmark_interval, spec.deadline);

    loop {
        changed.borrow_and_update();
        // Copy the next events out of the ring buffer under the lock.
        let (batch, cache_rv) = {
            let st = shared.read();
            if st.generation != spec.generation {
                return;
            }
            if cursor < st.floor {
                // The ring buffer overwrote events this watcher has not sent yet.
                drop(st);
                shared
                    .counters
                    .terminated_watchers
                    .fetch_add(1, Ordering::Relaxed);
                return;
            }
            let from = st.history_after(cursor);
            let batch: Vec<Arc<CacheEvent>> =
                st.history.range(from..).take(BATCH).cloned().collect();
            (batch, st.rv)
        };
        if !batch.is_empty() {
            for ev in batch {
                cursor = ev.rv;
                let out = match transform(&ev, &spec) {
                    Ok(Some(out)) => out,
                    Ok(None) => continue,
                    Err(e) => {
                        let _ = tx.send(WatchEvent::Error(e)).await;
                        return;
                    }
                };
                shared
                    .counters
                    .events_dispatched
                    .fetch_add(1, Ordering::Relaxed);
                match tx.send_timeout(out, config.slow_watcher_timeout).await {
                    Ok(()) => {
                        last_sent = ev.rv;
                    }
                    Err(SendTimeoutError::Timeout(_)) => {
                        shared
                            .counters
                            .events_dispatched
                            .fetch_sub(1, Ordering::Relaxed);
                        // A slow watcher is closed, never skipped past (kube's
                        // `terminated_watchers_total`).
                        shared
                            .counters
                            .terminated_watchers
                            .fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    Err(SendTimeoutError::Closed(_)) => {
                        shared
                            .counters
                            .events_dispatched
                            .fetch_sub(1, Ordering::Relaxed);
                        return;
                    }
                }
            }
            continue;
        }
        // Caught up with the ring buffer: every event up to `cache_rv` has been considered.
        if spec.bookmarks && Instant::now() >= next_bookmark {
            // Due bookmarks are sent even when nothing changed since the last one (kube's
            // cacher dispatches one per due watcher): the one ~2 s before the deadline tells a
            // client its watch is still current, whatever came before it.
            if cache_rv >= last_sent {
                // Bookmarks are best effort: a full channel skips one, it does not block.
                // (Counted before sending so that a reader never sees more than the count.)
                shared
                    .counters
                    .bookmarks_sent
                    .fetch_add(1, Ordering::Relaxed);
                if tx
                    .try_send(WatchEvent::Bookmark(shared.bookmark(cache_rv, false)))
                    .is_ok()
                {
                    cursor = cursor.max(cache_rv);
                    last_sent = cache_rv;
                } else {
                    shared
                        .counters
                        .bookmarks_sent
                        .fetch_sub(1, Ordering::Relaxed);
                    if tx.is_closed() {
                        return;
                    }
                }
            }
            next_bookmark =
                next_bookmark_time(Instant::now(), config.bookmark_interval, spec.deadline);
        }
        tokio::select! {
            r = changed.changed() => {
                if r.is_err() {
                    return;
                }
            }
            _ = tx.closed() => return,
            _ = tokio::time::sleep_until(next_bookmark), if spec.bookmarks => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::next_bookmark_time;
    use std::time::Duration;
    use tokio::time::Instant;

    #[test]
    fn bookmarks_come_before_the_deadline() {
        let now = Instant::now();
        let minute = Duration::from_secs(60);
        assert_eq!(next_bookmark_time(now, minute, None), now + minute);
        // A 10 s watch: its bookmark is due 8 s in, not after a minute.
        let deadline = now + Duration::from_secs(10);
        assert_eq!(
            next_bookmark_time(now, minute, Some(deadline)),
            now + Duration::from_secs(8)
        );
        // A long watch: the heartbeat first.
        let far = now + Duration::from_secs(3600);
        assert_eq!(next_bookmark_time(now, minute, Some(far)), now + minute);
        // Past the pre-timeout moment: no more bookmarks.
        let later = now + Duration::from_secs(9);
        assert!(
            next_bookmark_time(later, minute, Some(deadline)) > now + Duration::from_secs(3600)
        );
    }
}

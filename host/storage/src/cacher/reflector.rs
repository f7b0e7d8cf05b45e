//! The cacher's reflector (`cacher.go` `startCaching`, `lister_watcher.go`, client-go's
//! `Reflector.ListAndWatch`): list the resource from the underlying storage (a consistent
//! read), then one recursive watch from the list's resourceVersion with `progress_notify`, so
//! idle periods still advance the cache's resourceVersion through bookmarks.
//!
//! When the backend watch ends:
//! - if it delivered something and did not end with 410 Expired, the watch is re-opened once
//!   from the cache's resourceVersion (what etcd's client does transparently when its stream
//!   breaks); open cache watchers are not disturbed, nothing is lost (watches are exclusive
//!   and ordered);
//! - otherwise the cache is invalidated — every cache watcher's stream ends, as kube
//!   terminates all watchers on re-initialisation — and the resource is listed again, with an
//!   exponential backoff while listing or watching fails. Reads meanwhile go to the storage.

use super::cacher::Shared;
use super::watch_cache::{self, Entry, Prepared};
use crate::errors::StorageError;
use crate::interfaces::{ListOptions, WatchEvent, WatchStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// First retry delay after a failed list or watch.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Largest retry delay.
const BACKOFF_MAX: Duration = Duration::from_secs(2);
/// Messages of the backend watch applied under one lock acquisition.
const APPLY_BATCH: usize = 256;

/// Why consuming a backend watch stopped.
enum End {
    /// The cacher was dropped.
    Stop,
    /// The watch ended (with its error, if any); `progressed`: it delivered at least one
    /// message.
    Ended {
        error: Option<StorageError>,
        progressed: bool,
    },
}

/// Sleep for `d` unless the cacher is dropped meanwhile; `false` when it was.
async fn sleep_or_stop(d: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = stop.changed() => false,
    }
}

fn stopped(stop: &watch::Receiver<bool>) -> bool {
    stop.has_changed().unwrap_or(true) || *stop.borrow()
}

/// Open the backend watch after `rv`. `None` when the cacher was dropped meanwhile.
async fn open_watch(
    shared: &Shared,
    rv: u64,
    stop: &mut watch::Receiver<bool>,
) -> Option<Result<WatchStream, StorageError>> {
    let opts = ListOptions {
        resource_version: rv.to_string(),
        recursive: true,
        progress_notify: true,
        ..ListOptions::default()
    };
    tokio::select! {
        r = shared.inner.watch(&shared.config.resource_prefix, opts) => Some(r),
        _ = stop.changed() => None,
    }
}

/// Apply the backend watch to the cache until it ends. `resumed`: the watch was re-opened
/// without a re-list; it counts as a resume once it delivers something.
async fn consume(
    shared: &Shared,
    w: &mut WatchStream,
    stop: &mut watch::Receiver<bool>,
    mut resumed: bool,
) -> End {
    let mut progressed = false;
    loop {
        let first = tokio::select! {
            m = w.recv() => m,
            _ = stop.changed() => return End::Stop,
        };
        let Some(first) = first else {
            return End::Ended {
                error: None,
                progressed,
            };
        };
        let mut batch: Vec<WatchEvent> = vec![first];
        while batch.len() < APPLY_BATCH {
            match w.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        let mut error = None;
        // Stored objects are decoded before the cache's write lock is taken (kube decodes in
        // the etcd3 watcher, outside the watchCache lock); a corrupt one ends the batch there.
        let mut decoded = Vec::with_capacity(batch.len());
        for ev in batch {
            match watch_cache::prepare_event(&shared.config, ev) {
                Ok(ev) => decoded.push(ev),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let mut changed = false;
        let mut applied = 0u64;
        {
            let mut st = shared.write();
            for ev in decoded {
                let is_event = matches!(ev, Prepared::Change { .. } | Prepared::Keyless(_));
                match st.apply(&shared.config, ev) {
                    Ok(c) => {
                        changed |= c;
                        progressed = true;
                        if is_event {
                            applied += 1;
                        }
                    }
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            shared.publish_gauges(&st);
        }
        shared
            .counters
            .events_received
            .fetch_add(applied, Ordering::Relaxed);
        if resumed && progressed {
            resumed = false;
            shared.counters.resumes.fetch_add(1, Ordering::Relaxed);
        }
        shared.touch_activity();
        if changed {
            shared.notify();
        }
        if let Some(e) = error {
            return End::Ended {
                error: Some(e),
                progressed,
            };
        }
    }
}

/// A list of the whole resource made ready for the cache (`watchCache.Replace`'s input).
struct Listed {
    entries: Vec<(String, Entry)>,
    resource_version: u64,
}

/// The reflector task of one cacher; returns when the cacher is dropped.
pub(crate) async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let prefix = shared.config.resource_prefix.clone();
    let mut backoff = BACKOFF_MIN;
    'relist: while !stopped(&stop) {
        // List (a consistent read of the whole resource).
        let opts = ListOptions {
            recursive: true,
            ..ListOptions::default()
        };
        let listed = tokio::select! {
            r = shared.inner.get_list(&prefix, &opts) => r.and_then(|l| {
                let rv = l.resource_version;
                Ok(Listed {
                    entries: watch_cache::prepare_list(&shared.config, l.items)?,
                    resource_version: rv,
                })
            }),
            _ = stop.changed() => break,
        };
        let list = match listed {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(resource = %prefix, error = %e, ?backoff, "watch cache: list failed");
                if !sleep_or_stop(backoff, &mut stop).await {
                    break;
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        let mut w = match open_watch(&shared, list.resource_version, &mut stop).await {
            None => break,
            Some(Ok(w)) => w,
            Some(Err(e)) => {
                tracing::warn!(resource = %prefix, error = %e, ?backoff, "watch cache: watch failed");
                if !sleep_or_stop(backoff, &mut stop).await {
                    break;
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        {
            let mut st = shared.write();
            st.replace(&shared.config, list.entries, list.resource_version);
            shared.publish_gauges(&st);
        }
        shared.counters.relists.fetch_add(1, Ordering::Relaxed);
        shared.touch_activity();
        shared.notify();
        tracing::debug!(resource = %prefix, rv = list.resource_version, "watch cache: listed");

        // Watch, re-opening the watch once after a break that was not an expiry.
        let mut resumed = false;
        loop {
            match consume(&shared, &mut w, &mut stop, resumed).await {
                End::Stop => break 'relist,
                End::Ended { error, progressed } => {
                    let expired = matches!(error, Some(StorageError::Expired { .. }));
                    tracing::info!(resource = %prefix, error = ?error, "watch cache: backend watch ended");
                    if progressed {
                        backoff = BACKOFF_MIN;
                    }
                    if progressed && !expired {
                        let rv = shared.read().rv;
                        match open_watch(&shared, rv, &mut stop).await {
                            None => break 'relist,
                            Some(Ok(nw)) => {
                                shared.touch_activity();
                                resumed = true;
                                w = nw;
                                continue;
                            }
                            Some(Err(e)) => {
                                tracing::warn!(resource = %prefix, error = %e, "watch cache: re-watch failed");
                            }
                        }
                    }
                    // Re-initialise: every cache watcher ends, reads go to the storage.
                    shared.invalidate();
                    if !progressed && !sleep_or_stop(backoff, &mut stop).await {
                        break 'relist;
                    }
                    if !progressed {
                        backoff = (backoff * 2).min(BACKOFF_MAX);
                    }
                    continue 'relist;
                }
            }
        }
    }
    shared.invalidate();
}

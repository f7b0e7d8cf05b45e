//! Watch (`k8s.io/apiserver/pkg/storage/etcd3/watcher.go`, `event.go`): the initial state when
//! the resourceVersion asks for it, then backend events mapped through the predicate (an
//! object leaving the selection is DELETED, entering it ADDED), progress as bookmarks, the
//! watch-list end bookmark.

use super::kv_store::{matches, KvStore};
use crate::backend::{prefix_end, Backend, EventType, KvEvent, WatchResponse};
use crate::errors::{BackendError, Result, StorageError, WATCH_TOO_OLD};
use crate::interfaces::{ListOptions, WatchEvent};
use crate::selection::SelectionPredicate;
use crate::stored::SharedObject;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Page size of the initial-state list of a watch (etcd3 watcher `sync()`).
const SYNC_PAGE: i64 = 10_000;
/// Capacity of a watch's outgoing channel (etcd3 watcher's `outgoingBufSize`).
pub(super) const WATCH_BUFFER: usize = 100;
/// The annotation on the bookmark that ends the initial events of a watch-list.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

impl<B: Backend> KvStore<B> {
    pub(super) fn bookmark(&self, rev: i64, initial_events_end: bool) -> Value {
        let mut meta = json!({"resourceVersion": rev.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({INITIAL_EVENTS_END_ANNOTATION: "true"});
        }
        json!({"apiVersion": self.config.api_version, "kind": self.config.kind, "metadata": meta})
    }

    /// The body of a watch: initial state if required, then backend events mapped through
    /// the predicate. Returns an error to be sent as the final ERROR event; returns `Ok` when
    /// the receiver went away.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_watch(
        &self,
        key: &str,
        recursive: bool,
        rv: i64,
        mut start: i64,
        initial_events: bool,
        opts: &ListOptions,
        tx: &mpsc::Sender<WatchEvent>,
    ) -> Result<()> {
        let pred = &opts.predicate;
        let end = if recursive {
            prefix_end(key)
        } else {
            String::new()
        };
        if initial_events {
            // etcd3 watcher `sync()`: the current state as ADDED events, each with its own
            // resourceVersion, then watch from the list's revision.
            let mut from = key.to_string();
            let mut pinned = 0;
            loop {
                let resp = self.backend.range(&from, &end, SYNC_PAGE, pinned).await?;
                if pinned == 0 {
                    pinned = resp.header_revision;
                    if opts.send_initial_events == Some(true) && rv > pinned {
                        return Err(StorageError::TooLargeResourceVersion {
                            requested: rv as u64,
                            current: pinned as u64,
                        });
                    }
                }
                let (more, last) = (resp.more, resp.kvs.last().map(|kv| kv.key.clone()));
                for kv in resp.kvs {
                    if let Some(obj) = self.list_item(kv, pred)? {
                        if tx.send(WatchEvent::Added(obj)).await.is_err() {
                            return Ok(());
                        }
                    }
                }
                match (more, last) {
                    (true, Some(last)) => from = format!("{last}\0"),
                    _ => break,
                }
            }
            start = pinned;
            if opts.send_initial_events == Some(true)
                && pred.allow_watch_bookmarks
                && tx
                    .send(WatchEvent::Bookmark(self.bookmark(pinned, true)))
                    .await
                    .is_err()
            {
                return Ok(());
            }
        }
        // Watch is exclusive: events after `start`.
        let from = if start > 0 { start + 1 } else { 0 };
        let mut events = self
            .backend
            .watch(key, recursive, from, opts.progress_notify)
            .await?;
        loop {
            let msg = tokio::select! {
                m = events.recv() => m,
                _ = tx.closed() => return Ok(()),
            };
            match msg {
                None => return Ok(()),
                Some(WatchResponse::Error(BackendError::Compacted(_))) => {
                    return Err(StorageError::Expired {
                        message: WATCH_TOO_OLD.into(),
                        continue_token: None,
                    })
                }
                Some(WatchResponse::Error(e)) => return Err(e.into()),
                Some(WatchResponse::Progress(rev)) => {
                    if opts.progress_notify
                        && tx
                            .send(WatchEvent::Bookmark(self.bookmark(rev, false)))
                            .await
                            .is_err()
                    {
                        return Ok(());
                    }
                }
                Some(WatchResponse::Events(batch)) => {
                    for e in batch {
                        if let Some(ev) = self.transform(e, pred)? {
                            if tx.send(ev).await.is_err() {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
    }

    /// etcd3 watcher `transform`: a raw event as seen through the predicate. Old objects carry
    /// the event's revision (a DELETED object has the delete revision). With nothing to
    /// evaluate (no label or field selector) the objects are handed out undecoded, as
    /// [`KvStore::list_item`] does; otherwise they are decoded to evaluate the predicate.
    pub(super) fn transform(
        &self,
        e: KvEvent,
        pred: &SelectionPredicate,
    ) -> Result<Option<WatchEvent>> {
        let KvEvent {
            event_type,
            kv,
            prev_kv,
        } = e;
        let rev = kv.mod_revision;
        match (event_type, &prev_kv) {
            (EventType::Delete, None) => {
                return Err(StorageError::Internal(format!(
                    "etcd event for key {:?} has no previous value (compacted?)",
                    kv.key
                )))
            }
            (EventType::Put, None) if kv.create_revision != kv.mod_revision => {
                // etcd3 `parseEvent`: an update without its previous value (compacted)
                // cannot be mapped through the predicate.
                return Err(StorageError::Internal(format!(
                    "etcd event received with PrevKv=nil (key={:?}, modRevision={}, type=PUT)",
                    kv.key, kv.mod_revision
                )));
            }
            _ => {}
        }
        if pred.is_empty() {
            return Ok(Some(match (event_type, prev_kv) {
                (EventType::Put, None) => WatchEvent::Added(self.stored(kv, rev)?),
                (EventType::Put, Some(_)) => WatchEvent::Modified(self.stored(kv, rev)?),
                (EventType::Delete, prev) => {
                    WatchEvent::Deleted(self.stored(prev.expect("checked above"), rev)?)
                }
            }));
        }
        let decoded = |v: Value| SharedObject::Decoded(Arc::new(v));
        match event_type {
            EventType::Delete => {
                // The last state, sent with the delete's revision.
                let old = self.decode(prev_kv.as_ref().expect("checked above"), rev)?;
                Ok(matches(pred, &old)?.then(|| WatchEvent::Deleted(decoded(old))))
            }
            EventType::Put => {
                let cur = self.decode(&kv, rev)?;
                let cur_ok = matches(pred, &cur)?;
                // The previous state is matched as it was stored (its own revision: a
                // `GetAttrs` that caches by object and revision must not take it for the
                // current state) and sent, when it stopped matching, with the change's
                // revision, as etcd3's watcher.go sends it.
                let old = prev_kv
                    .as_ref()
                    .map(|p| self.decode(p, p.mod_revision))
                    .transpose()?;
                match old {
                    None => Ok(cur_ok.then(|| WatchEvent::Added(decoded(cur)))),
                    Some(old) => {
                        let old_ok = matches(pred, &old)?;
                        Ok(match (cur_ok, old_ok) {
                            (true, true) => Some(WatchEvent::Modified(decoded(cur))),
                            (true, false) => Some(WatchEvent::Added(decoded(cur))),
                            (false, true) => {
                                let mut old = old;
                                if let Some(m) =
                                    old.get_mut("metadata").and_then(Value::as_object_mut)
                                {
                                    m.insert("resourceVersion".into(), rev.to_string().into());
                                }
                                Some(WatchEvent::Deleted(decoded(old)))
                            }
                            (false, false) => None,
                        })
                    }
                }
            }
        }
    }
}

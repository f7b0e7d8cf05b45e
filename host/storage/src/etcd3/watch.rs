//! etcd watches forwarded as [`WatchResponse`]s, as `k8s.io/apiserver/pkg/storage/etcd3/
//! watcher.go` (`startWatching`) opens and reads them: `WithPrevKV`, `WithPrefix` for recursive
//! watches, `WithRev(start)`, `WithProgressNotify` when asked. A compaction cancel becomes
//! `Error(Compacted)`; a cancel for any other reason or a broken stream becomes
//! `Error(Unreachable)`; either ends the watch. Dropping the receiver cancels the etcd watch.

use super::{convert_kv, Shared};
use crate::backend::{EventType, KvEvent, WatchReceiver, WatchResponse};
use crate::errors::BackendError;
use etcd_client::{Client, WatchOptions, WatchStream};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Capacity of a watch channel (etcd3 watcher's `outgoingBufSize`).
pub(crate) const WATCH_CHANNEL_CAPACITY: usize = 100;

/// Open an etcd watch and spawn the task that forwards it. Waits for etcd's `created`
/// response (bounded by the request timeout), so a write made after this returns is seen by
/// a watch "from now on" (`start_revision == 0`).
pub(crate) async fn start(
    client: &Client,
    shared: Arc<Shared>,
    key: &str,
    recursive: bool,
    start_revision: i64,
    progress_notify: bool,
) -> Result<WatchReceiver, BackendError> {
    let mut opts = WatchOptions::new().with_prev_key();
    if recursive {
        opts = opts.with_prefix();
    }
    if start_revision > 0 {
        opts = opts.with_start_revision(start_revision);
    }
    if progress_notify {
        opts = opts.with_progress_notify();
    }
    // A watch response carries up to 1,000 revisions of events (etcd's `watchBatchMaxRevs`).
    let mut watch_client = client
        .watch_client()
        .max_decoding_message_size(super::MAX_RESPONSE_BYTES);
    let timeout = shared.request_timeout;
    let opened = tokio::time::timeout(timeout, async {
        let mut stream = watch_client.watch(key, Some(opts)).await?;
        let first = stream.message().await?;
        Ok::<_, etcd_client::Error>((stream, first))
    })
    .await;
    let (stream, first) = match opened {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            return Err(match shared.map_error(client, &e, start_revision).await {
                err @ BackendError::Compacted(_) => err,
                BackendError::Other(m) => BackendError::Other(m),
                err => BackendError::Unreachable(err.to_string()),
            })
        }
        Err(_) => {
            return Err(BackendError::Unreachable(format!(
                "etcd {}: watch not established within {timeout:?}",
                shared.endpoints
            )))
        }
    };
    let (tx, rx) = mpsc::channel(WATCH_CHANNEL_CAPACITY);
    tokio::spawn(forward(stream, first, tx, shared));
    Ok(rx)
}

/// What to do after one etcd watch response.
enum Step {
    Continue,
    Stop,
}

/// Turn one etcd response into zero or one [`WatchResponse`]s and send it.
async fn handle(
    resp: etcd_client::WatchResponse,
    tx: &mpsc::Sender<WatchResponse>,
    shared: &Shared,
) -> Step {
    if resp.compact_revision() > 0 {
        // etcd cancels a watch whose start revision was compacted (`ErrCompacted`).
        shared.saw_compacted(resp.compact_revision());
        let _ = tx
            .send(WatchResponse::Error(BackendError::Compacted(
                resp.compact_revision(),
            )))
            .await;
        return Step::Stop;
    }
    if resp.canceled() {
        let reason = if resp.cancel_reason().is_empty() {
            "watch canceled by etcd".to_string()
        } else {
            resp.cancel_reason().to_string()
        };
        let _ = tx
            .send(WatchResponse::Error(BackendError::Unreachable(format!(
                "etcd {}: {reason}",
                shared.endpoints
            ))))
            .await;
        return Step::Stop;
    }
    let msg = if !resp.events().is_empty() {
        let events = resp
            .events()
            .iter()
            .filter_map(|ev| {
                let kv = ev.kv()?;
                Some(KvEvent {
                    event_type: match ev.event_type() {
                        etcd_client::EventType::Put => EventType::Put,
                        etcd_client::EventType::Delete => EventType::Delete,
                    },
                    kv: convert_kv(kv),
                    prev_kv: ev.prev_kv().map(convert_kv),
                })
            })
            .collect();
        WatchResponse::Events(events)
    } else if resp.created() {
        return Step::Continue;
    } else {
        // An empty, non-created response is a progress notification.
        WatchResponse::Progress(resp.header().map(|h| h.revision()).unwrap_or(0))
    };
    match tx.send(msg).await {
        Ok(()) => Step::Continue,
        Err(_) => Step::Stop,
    }
}

/// The forwarding task: reads etcd's stream until it ends, errors, is canceled, or the
/// receiver goes away (then the etcd watch is canceled and the stream dropped).
async fn forward(
    mut stream: WatchStream,
    first: Option<etcd_client::WatchResponse>,
    tx: mpsc::Sender<WatchResponse>,
    shared: Arc<Shared>,
) {
    let watch_id = match first {
        Some(resp) => {
            let id = resp.watch_id();
            if let Step::Stop = handle(resp, &tx, &shared).await {
                return;
            }
            id
        }
        None => {
            let _ = tx
                .send(WatchResponse::Error(BackendError::Unreachable(format!(
                    "etcd {}: watch stream closed",
                    shared.endpoints
                ))))
                .await;
            return;
        }
    };
    loop {
        tokio::select! {
            _ = tx.closed() => {
                let _ = tokio::time::timeout(Duration::from_secs(1), stream.cancel(watch_id)).await;
                return;
            }
            msg = stream.message() => match msg {
                Ok(Some(resp)) => {
                    if let Step::Stop = handle(resp, &tx, &shared).await {
                        return;
                    }
                }
                Ok(None) => {
                    let _ = tx
                        .send(WatchResponse::Error(BackendError::Unreachable(format!(
                            "etcd {}: watch stream closed",
                            shared.endpoints
                        ))))
                        .await;
                    return;
                }
                Err(e) => {
                    let err = match super::errors::classify(&e, &shared.endpoints) {
                        super::errors::Classified::Compacted => {
                            BackendError::Compacted(shared.compacted.load(std::sync::atomic::Ordering::SeqCst))
                        }
                        _ => BackendError::Unreachable(format!(
                            "etcd {}: watch stream failed: {e}",
                            shared.endpoints
                        )),
                    };
                    let _ = tx.send(WatchResponse::Error(err)).await;
                    return;
                }
            }
        }
    }
}

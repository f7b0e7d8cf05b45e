//! etcd watches as [`WatchResponse`]s, as `k8s.io/apiserver/pkg/storage/etcd3/watcher.go`
//! (`startWatching`) opens and reads them: `WithPrevKV`, `WithPrefix` for recursive watches,
//! `WithRev(start)`, `WithProgressNotify` when asked. A compaction cancel becomes
//! `Error(Compacted)`; a cancel for any other reason or a broken stream becomes
//! `Error(Unreachable)`; either ends the watch.
//!
//! The receiver is the gRPC watch stream itself ([`EtcdWatch`]): each etcd response is
//! converted when the consumer polls, with no forwarding task between them. Dropping the
//! receiver drops the gRPC stream (HTTP/2 `RST_STREAM`), which ends the etcd watch.

use super::{convert_kv, Shared};
use crate::backend::{EventType, KvEvent, WatchReceiver, WatchResponse};
use crate::errors::BackendError;
use etcd_client::{Client, WatchOptions, WatchStream};
use futures::Stream;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// Open an etcd watch. Waits for etcd's `created` response (bounded by the request timeout),
/// so a write made after this returns is seen by a watch "from now on" (`start_revision == 0`).
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
    let mut watch = EtcdWatch {
        stream: Some(stream),
        pending: None,
        shared,
    };
    // The `created` response, or the cancel of a watch from a compacted revision.
    let first = match first {
        Some(resp) => Ok(resp),
        None => Err(watch.closed()),
    };
    match watch.step(first) {
        Step::Skip => {}
        Step::Yield(msg) => watch.pending = Some(msg),
        Step::Last(msg) => {
            watch.pending = Some(msg);
            watch.stream = None;
        }
    }
    Ok(WatchReceiver::new(watch))
}

/// What one etcd response becomes.
enum Step {
    /// Nothing to deliver (the `created` response).
    Skip,
    /// A message; the watch goes on.
    Yield(WatchResponse),
    /// The final message (an error); the watch is over.
    Last(WatchResponse),
}

/// An etcd watch read as a stream of [`WatchResponse`]s; ends after an `Error`.
struct EtcdWatch {
    /// `None` once the watch is over.
    stream: Option<WatchStream>,
    /// A message to deliver before reading the stream (from the first response).
    pending: Option<WatchResponse>,
    shared: Arc<Shared>,
}

impl EtcdWatch {
    fn closed(&self) -> BackendError {
        BackendError::Unreachable(format!(
            "etcd {}: watch stream closed",
            self.shared.endpoints
        ))
    }

    /// Map one item of etcd's stream.
    fn step(&self, item: Result<etcd_client::WatchResponse, BackendError>) -> Step {
        let resp = match item {
            Ok(resp) => resp,
            Err(e) => return Step::Last(WatchResponse::Error(e)),
        };
        let shared = &self.shared;
        if resp.compact_revision() > 0 {
            // etcd cancels a watch whose start revision was compacted (`ErrCompacted`).
            shared.saw_compacted(resp.compact_revision());
            return Step::Last(WatchResponse::Error(BackendError::Compacted(
                resp.compact_revision(),
            )));
        }
        if resp.canceled() {
            let reason = if resp.cancel_reason().is_empty() {
                "watch canceled by etcd"
            } else {
                resp.cancel_reason()
            };
            return Step::Last(WatchResponse::Error(BackendError::Unreachable(format!(
                "etcd {}: {reason}",
                shared.endpoints
            ))));
        }
        if !resp.events().is_empty() {
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
            Step::Yield(WatchResponse::Events(events))
        } else if resp.created() {
            Step::Skip
        } else {
            // An empty, non-created response is a progress notification.
            Step::Yield(WatchResponse::Progress(
                resp.header().map(|h| h.revision()).unwrap_or(0),
            ))
        }
    }

    /// A failed read of etcd's stream.
    fn failed(&self, e: etcd_client::Error) -> BackendError {
        match super::errors::classify(&e, &self.shared.endpoints) {
            super::errors::Classified::Compacted => BackendError::Compacted(
                self.shared
                    .compacted
                    .load(std::sync::atomic::Ordering::SeqCst),
            ),
            _ => BackendError::Unreachable(format!(
                "etcd {}: watch stream failed: {e}",
                self.shared.endpoints
            )),
        }
    }
}

impl Stream for EtcdWatch {
    type Item = WatchResponse;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchResponse>> {
        let this = &mut *self;
        if let Some(msg) = this.pending.take() {
            return Poll::Ready(Some(msg));
        }
        loop {
            let Some(stream) = this.stream.as_mut() else {
                return Poll::Ready(None);
            };
            let item = match ready!(Pin::new(stream).poll_next(cx)) {
                Some(Ok(resp)) => Ok(resp),
                Some(Err(e)) => Err(this.failed(e)),
                None => Err(this.closed()),
            };
            match this.step(item) {
                Step::Skip => continue,
                Step::Yield(msg) => return Poll::Ready(Some(msg)),
                Step::Last(msg) => {
                    this.stream = None;
                    return Poll::Ready(Some(msg));
                }
            }
        }
    }
}

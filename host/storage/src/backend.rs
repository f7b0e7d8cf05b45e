//! The key-value layer under every [`crate::Storage`]: etcd's data model (keys, global
//! revisions, `mod_revision` compares, watch with previous values, compaction) as a small trait.
//!
//! kube-apiserver's etcd3 store (`k8s.io/apiserver/pkg/storage/etcd3/store.go`) is written
//! against etcd's client; here the same semantics are written once ([`crate::store::KvStore`])
//! against this trait, and each backend — etcd3 through `etcd-client`, or the embedded SQLite
//! store — only provides etcd's primitives. Revisions are etcd's: a global counter; an empty
//! store is at revision 1 (so the first write gets revision 2), and every successful write
//! transaction increments it by exactly one. A failed compare consumes no revision.

use crate::errors::BackendError;
use async_trait::async_trait;
use futures::stream::{BoxStream, Stream, StreamExt};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// A stored key with its revisions, as etcd's `mvccpb.KeyValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// The full key, e.g. `/registry/pods/default/web`.
    pub key: String,
    /// The stored bytes (after the value transformer).
    pub value: Vec<u8>,
    /// Revision of the write that created the key (since its last deletion).
    pub create_revision: i64,
    /// Revision of the last write to the key: the object's resourceVersion.
    pub mod_revision: i64,
    /// Number of writes since creation (1 after create).
    pub version: i64,
    /// Lease attached (0 = none).
    pub lease: i64,
}

/// The answer to a range read.
#[derive(Clone, Debug, Default)]
pub struct RangeResponse {
    /// Keys in ascending byte order, at most `limit` of them.
    pub kvs: Vec<KeyValue>,
    /// Whether more keys exist in the range beyond `kvs`.
    pub more: bool,
    /// Number of keys in the whole range (at the read revision), ignoring `limit`.
    pub count: i64,
    /// The store's current revision when the read was served (etcd's response header), also
    /// for a read at a past revision.
    pub header_revision: i64,
}

/// The answer to a conditional write (`Txn(If(mod_revision(key) == expected)).Then(op).Else(Get)`).
#[derive(Clone, Debug)]
pub struct TxnResponse {
    /// Whether the compare held and the write happened.
    pub succeeded: bool,
    /// On success: the revision of the write. On failure: the current store revision.
    pub revision: i64,
    /// On failure: the key's current value (`None` if absent). On success of a delete: the
    /// deleted value. On success of a put: `None`.
    pub kv: Option<KeyValue>,
}

/// The kind of a raw watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// A put (create or update).
    Put,
    /// A delete (or a lease expiry).
    Delete,
}

/// One raw change, as etcd's watch reports it with `WithPrevKV`.
#[derive(Clone, Debug)]
pub struct KvEvent {
    /// Put or delete.
    pub event_type: EventType,
    /// For a put: the new value. For a delete: the key with `mod_revision` = the delete
    /// revision and an empty value.
    pub kv: KeyValue,
    /// The value before the change (`None` for a create).
    pub prev_kv: Option<KeyValue>,
}

/// What a backend watch delivers: events in revision order, or a terminal error
/// (e.g. [`BackendError::Compacted`]); after an error nothing more arrives. Progress
/// notifications carry the current revision with no event.
#[derive(Clone, Debug)]
pub enum WatchResponse {
    /// Changes, in revision order.
    Events(Vec<KvEvent>),
    /// A progress notification: every change up to this revision has been delivered.
    Progress(i64),
    /// The watch failed and is over.
    Error(BackendError),
}

/// A backend watch: a stream of [`WatchResponse`]s that ends after an `Error`; dropping it
/// cancels the watch.
///
/// A stream rather than a channel so that a backend can hand out its own source without a
/// forwarding task: the etcd3 backend's receiver *is* the gRPC watch stream, read and
/// converted by whoever polls it (one task hop less per event than a channel fed by a task;
/// kube's etcd3 watcher reads `clientv3`'s channel directly in the same way). The embedded
/// backend wraps the channel its watch task feeds ([`WatchReceiver::from_channel`]).
pub struct WatchReceiver(BoxStream<'static, WatchResponse>);

impl WatchReceiver {
    /// A receiver reading `stream`.
    pub fn new(stream: impl Stream<Item = WatchResponse> + Send + 'static) -> Self {
        WatchReceiver(stream.boxed())
    }

    /// A receiver reading a channel fed by a watch task (the task notices the drop through
    /// `Sender::closed` / a failed send).
    pub fn from_channel(mut rx: mpsc::Receiver<WatchResponse>) -> Self {
        WatchReceiver::new(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }

    /// The next message; `None` once the watch is over. Cancel-safe (usable in `select!`).
    pub async fn recv(&mut self) -> Option<WatchResponse> {
        self.0.next().await
    }
}

impl Stream for WatchReceiver {
    type Item = WatchResponse;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchResponse>> {
        self.0.as_mut().poll_next(cx)
    }
}

impl std::fmt::Debug for WatchReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchReceiver")
    }
}

/// etcd's primitives. Every method is a single round trip (one etcd request or one SQLite
/// transaction). `end` follows etcd's range convention: `""` means the single key `start`.
#[async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Range read `[start, end)` at `revision` (0 = latest) returning at most `limit` keys
    /// (0 = no limit). Errors: [`BackendError::Compacted`] for a revision below the compacted
    /// revision (the compacted revision itself stays readable, as in etcd), [`BackendError::FutureRevision`] for one above the current revision.
    async fn range(
        &self,
        start: &str,
        end: &str,
        limit: i64,
        revision: i64,
    ) -> Result<RangeResponse, BackendError>;

    /// Number of keys in `[start, end)` at the latest revision, and the current revision.
    async fn count(&self, start: &str, end: &str) -> Result<(i64, i64), BackendError>;

    /// Put `value` at `key` if the key's mod revision equals `expected_mod_revision`
    /// (0 = the key must not exist). `ttl_seconds > 0` attaches a lease that deletes the key
    /// after that many seconds.
    async fn put_if(
        &self,
        key: &str,
        expected_mod_revision: i64,
        value: Vec<u8>,
        ttl_seconds: i64,
    ) -> Result<TxnResponse, BackendError>;

    /// Delete `key` if its mod revision equals `expected_mod_revision`.
    async fn delete_if(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnResponse, BackendError>;

    /// Watch `key` (or every key with prefix `key` when `recursive`) for changes with a revision
    /// ≥ `start_revision` (0 = from now on). With `progress_notify`, idle periods produce
    /// [`WatchResponse::Progress`]. Errors: as the first message of the receiver.
    async fn watch(
        &self,
        key: &str,
        recursive: bool,
        start_revision: i64,
        progress_notify: bool,
    ) -> Result<WatchReceiver, BackendError>;

    /// The current revision (a linearizable read).
    async fn current_revision(&self) -> Result<i64, BackendError>;

    /// Whether [`Backend::request_progress`] is supported: a progress notification then
    /// arrives on request, not only every progress interval (kube's feature check for
    /// `RequestWatchProgress`, `k8s.io/apiserver/pkg/storage/feature/feature_support_checker.go`).
    fn supports_request_progress(&self) -> bool {
        false
    }

    /// `RequestWatchProgress`: ask every open watch started with `progress_notify` to send a
    /// [`WatchResponse::Progress`] as soon as it has delivered every event up to the current
    /// revision. A no-op where [`Backend::supports_request_progress`] is false.
    async fn request_progress(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// Drop history at or below `revision`: later reads and watches there fail with
    /// [`BackendError::Compacted`].
    async fn compact(&self, revision: i64) -> Result<(), BackendError>;

    /// The newest compacted revision this backend knows of (0 = none).
    fn compacted_revision(&self) -> i64;

    /// Health for `/readyz`: `Ok` when a read round trip succeeds.
    async fn health(&self) -> Result<(), BackendError>;
}

/// The end of the range of keys that start with `prefix` (etcd's `clientv3.GetPrefixRangeEnd`).
pub fn prefix_end(prefix: &str) -> String {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0xff {
            bytes.push(last + 1);
            return String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    "\0".to_string()
}

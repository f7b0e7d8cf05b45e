//! The compactor of `k8s.io/apiserver/pkg/storage/etcd3/compact.go` (`startCompactorOnce`,
//! `compactor`, `compact`): every interval, one txn on [`COMPACT_REV_KEY`] elects which
//! apiserver compacts, and the winner compacts the revision it saw one interval earlier.

use super::Shared;
use crate::errors::BackendError;
use etcd_client::{Client, Compare, CompareOp, Txn, TxnOp, TxnOpResponse};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// The key the compactors of all apiservers of a cluster agree on (`compactRevKey`).
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

/// The outcome of one [`Compactor::run_once`] round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactRound {
    /// Whether this compactor won the round (its `Version(compact_rev_key)` was current and it
    /// wrote the key). A loser adopts the stored version and compacts nothing.
    pub won: bool,
    /// The revision compacted this round (`Some` only for a winner with a previous revision,
    /// never on the first round; also `Some` when etcd had already compacted it).
    pub compacted: Option<i64>,
    /// The header revision of this round's txn: what the next winning round compacts.
    pub next_revision: i64,
}

/// One compactor's state (`compactTime` = last seen version of [`COMPACT_REV_KEY`], `rev` =
/// header revision of the previous round), driven by [`Compactor::run_once`] or by the task
/// of [`Compactor::start`].
pub struct Compactor {
    client: Client,
    shared: Arc<Shared>,
    /// `compactTime`: the version of `compact_rev_key` this compactor last saw or wrote.
    last_version: i64,
    /// `rev`: the header revision of the previous round (0 before the first).
    rev: i64,
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor")
            .field("endpoints", &self.shared.endpoints)
            .field("last_version", &self.last_version)
            .field("rev", &self.rev)
            .finish()
    }
}

impl Compactor {
    pub(crate) fn new(client: Client, shared: Arc<Shared>) -> Compactor {
        Compactor {
            client,
            shared,
            last_version: 0,
            rev: 0,
        }
    }

    /// One round of `compact.go`'s `compact(ctx, client, compactTime, rev)`:
    /// `Txn(If(Version(compact_rev_key) == compactTime)).Then(Put(compact_rev_key, rev))
    /// .Else(Get(compact_rev_key))`. On success with a previous `rev != 0` it compacts `rev`;
    /// on failure it adopts the stored version (and the stored revision as the newest
    /// compaction known, since the winner compacts it). The txn header revision becomes the
    /// next `rev` even when the compaction fails, as in kube-apiserver.
    ///
    /// Errors: the txn's or the compaction's [`BackendError`]. A compaction that etcd rejects
    /// because the revision is already compacted counts as done.
    pub async fn run_once(&mut self) -> Result<CompactRound, BackendError> {
        let txn = Txn::new()
            .when([Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                self.last_version,
            )])
            .and_then([TxnOp::put(COMPACT_REV_KEY, self.rev.to_string(), None)])
            .or_else([TxnOp::get(COMPACT_REV_KEY, None)]);
        let mut kv = self.client.kv_client();
        let resp = self
            .shared
            .call(&self.client, "compactor txn", 0, kv.txn(txn))
            .await?;
        let cur_rev = resp.header().map(|h| h.revision()).unwrap_or(0);
        if !resp.succeeded() {
            let stored = resp.op_responses().into_iter().find_map(|op| match op {
                TxnOpResponse::Get(get) => get.kvs().first().cloned(),
                _ => None,
            });
            self.last_version = stored.as_ref().map(|kv| kv.version()).unwrap_or(0);
            if let Some(rev) = stored
                .as_ref()
                .and_then(|kv| std::str::from_utf8(kv.value()).ok())
                .and_then(|v| v.parse::<i64>().ok())
            {
                self.shared.saw_compacted(rev);
            }
            self.rev = cur_rev;
            return Ok(CompactRound {
                won: false,
                compacted: None,
                next_revision: cur_rev,
            });
        }
        self.last_version += 1;
        let prev = std::mem::replace(&mut self.rev, cur_rev);
        if prev == 0 {
            // "We don't compact on bootstrap."
            return Ok(CompactRound {
                won: true,
                compacted: None,
                next_revision: cur_rev,
            });
        }
        let mut kv = self.client.kv_client();
        match self
            .shared
            .call(&self.client, "compact", prev, kv.compact(prev, None))
            .await
        {
            Ok(_) | Err(BackendError::Compacted(_)) => {
                self.shared.saw_compacted(prev);
                tracing::debug!(revision = prev, endpoints = %self.shared.endpoints, "etcd: compacted");
                Ok(CompactRound {
                    won: true,
                    compacted: Some(prev),
                    next_revision: cur_rev,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Spawn the loop of `compact.go`'s `compactor`: wait `interval`, run a round, log errors,
    /// repeat until the returned handle is dropped or stopped. Must be called inside a tokio
    /// runtime.
    pub fn start(mut self, interval: Duration) -> CompactorHandle {
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                if let Err(e) = self.run_once().await {
                    tracing::error!(endpoints = %self.shared.endpoints, error = %e, "etcd: compact failed");
                }
            }
        });
        CompactorHandle { task }
    }
}

/// A running compactor task; dropping it (or [`CompactorHandle::stop`]) stops the task.
#[derive(Debug)]
pub struct CompactorHandle {
    task: JoinHandle<()>,
}

impl CompactorHandle {
    /// Stop the compactor (a round in flight is abandoned).
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for CompactorHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

//! The writer thread: the only write connection, group commit, revision assignment, lease
//! expiry, compaction, and publication of committed events.

use super::schema::{Recovered, DELETE, PUT};
use super::{sql_err, EmbeddedOptions, Shared};
use crate::backend::{EventType, KeyValue, KvEvent, TxnResponse};
use crate::errors::BackendError;
use rusqlite::{params, Connection, OptionalExtension};
use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::{broadcast, mpsc, oneshot};

/// Log rows examined per compaction step (one short transaction each).
const COMPACT_CHUNK: i64 = 4096;
/// Pages released per `incremental_vacuum` step after a compaction.
const VACUUM_PAGES: i64 = 1024;
/// Leases expired per expiry pass.
const EXPIRE_BATCH: i64 = 1000;

type Reply<T> = oneshot::Sender<Result<T, BackendError>>;

/// A request to the writer.
pub(crate) enum Op {
    /// `put_if`.
    Put {
        key: String,
        expected: i64,
        value: Vec<u8>,
        ttl: i64,
        reply: Reply<TxnResponse>,
    },
    /// `delete_if`.
    Delete {
        key: String,
        expected: i64,
        reply: Reply<TxnResponse>,
    },
    /// Delete the keys whose lease expired (from the lease timer).
    Expire,
    /// `compact` (reply `None` for the periodic compactor).
    Compact { rev: i64, reply: Option<Reply<()>> },
}

/// One committed batch as watchers receive it.
#[derive(Debug)]
pub(crate) struct Published {
    /// The store revision after the batch (every revision up to it is committed).
    pub high_rev: i64,
    /// The batch's events, in revision order (`kv.mod_revision` is each event's revision).
    pub events: Vec<KvEvent>,
}

/// The outcome of one op inside a batch (before commit).
enum Outcome {
    Txn(TxnResponse),
    Done,
    Failed(BackendError),
}

/// In-transaction state of a batch.
struct BatchState {
    rev: i64,
    compact: i64,
    events: Vec<KvEvent>,
    min_new_expiry: i64,
    recompute_expiry: bool,
    expired: bool,
}

/// Background work between batches.
enum Job {
    /// Delete superseded log rows at or below `target`, from `cursor` on.
    Compact { target: i64, cursor: i64 },
    /// Return free pages to the OS, then checkpoint.
    Vacuum { steps_left: u32 },
}

/// Unix time in milliseconds.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The writer actor; runs on its own OS thread.
pub(crate) struct Writer {
    // Field order matters: the connection closes before the lock is released.
    conn: Connection,
    _lock: File,
    rev: i64,
    compact_rev: i64,
    job: Option<Job>,
    shared: Arc<Shared>,
    events: broadcast::Sender<Arc<Published>>,
    max_batch: usize,
}

impl Writer {
    pub(crate) fn new(
        conn: Connection,
        lock: File,
        state: Recovered,
        shared: Arc<Shared>,
        events: broadcast::Sender<Arc<Published>>,
        opts: &EmbeddedOptions,
    ) -> Writer {
        // A compaction interrupted by a crash resumes after reopening.
        let job = (state.compact_done < state.compact_rev).then_some(Job::Compact {
            target: state.compact_rev,
            cursor: 0,
        });
        Writer {
            conn,
            _lock: lock,
            rev: state.rev,
            compact_rev: state.compact_rev,
            job,
            shared,
            events,
            max_batch: opts.max_batch.max(1),
        }
    }

    /// Serve requests until every sender is gone.
    pub(crate) fn run(mut self, mut rx: mpsc::Receiver<Op>) {
        loop {
            let first = if self.job.is_some() {
                match rx.try_recv() {
                    Ok(op) => op,
                    Err(TryRecvError::Empty) => {
                        self.background_step();
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => break,
                }
            } else {
                match rx.blocking_recv() {
                    Some(op) => op,
                    None => break,
                }
            };
            let mut ops = vec![first];
            while ops.len() < self.max_batch {
                match rx.try_recv() {
                    Ok(op) => ops.push(op),
                    Err(_) => break,
                }
            }
            self.process(ops);
        }
        tracing::debug!(revision = self.rev, "embedded store writer stopped");
    }

    /// Commit a batch; if it fails as a whole, retry each op alone so one bad op does not fail
    /// the others (a full disk fails them all, each with its own error).
    fn process(&mut self, ops: Vec<Op>) {
        match self.run_batch(&ops) {
            Ok((outcomes, st)) => self.finish(ops, outcomes, st),
            Err(e) if ops.len() == 1 => {
                tracing::warn!(error = %e, "embedded store write failed");
                self.fail(ops.into_iter().next().unwrap(), e)
            }
            Err(e) => {
                tracing::warn!(error = %e, ops = ops.len(), "embedded store batch failed; retrying one by one");
                for op in ops {
                    match self.run_batch(std::slice::from_ref(&op)) {
                        Ok((outcomes, st)) => self.finish(vec![op], outcomes, st),
                        Err(e) => self.fail(op, e),
                    }
                }
            }
        }
    }

    /// One transaction for `ops`. On error nothing is committed and the in-memory state is
    /// unchanged.
    fn run_batch(&mut self, ops: &[Op]) -> Result<(Vec<Outcome>, BatchState), BackendError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(sql_err)?;
        let mut st = BatchState {
            rev: self.rev,
            compact: self.compact_rev,
            events: Vec::new(),
            min_new_expiry: i64::MAX,
            recompute_expiry: false,
            expired: false,
        };
        let mut outcomes = Vec::with_capacity(ops.len());
        let applied = (|| -> rusqlite::Result<()> {
            for op in ops {
                outcomes.push(self.apply(op, &mut st)?);
            }
            if st.rev != self.rev {
                self.conn
                    .prepare_cached("UPDATE meta SET v = ?1 WHERE k = 'rev'")?
                    .execute([st.rev])?;
            }
            if st.compact != self.compact_rev {
                self.conn
                    .prepare_cached("UPDATE meta SET v = ?1 WHERE k = 'compact_rev'")?
                    .execute([st.compact])?;
            }
            Ok(())
        })();
        if let Err(e) = applied {
            self.rollback();
            return Err(sql_err(e));
        }
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            self.rollback();
            // A failed COMMIT may still have reached the file (e.g. an error after the WAL
            // write): trust the file.
            let committed: Option<i64> = self
                .conn
                .query_row("SELECT v FROM meta WHERE k = 'rev'", [], |r| r.get(0))
                .optional()
                .ok()
                .flatten();
            if st.rev != self.rev && committed == Some(st.rev) {
                tracing::warn!(error = %e, "embedded store COMMIT reported an error but the batch is in the file");
            } else {
                return Err(sql_err(e));
            }
        }
        Ok((outcomes, st))
    }

    fn rollback(&mut self) {
        if !self.conn.is_autocommit() {
            if let Err(e) = self.conn.execute_batch("ROLLBACK") {
                tracing::error!(error = %e, "embedded store ROLLBACK failed");
            }
        }
    }

    /// After a commit: advance the in-memory state, reply, then publish.
    fn finish(&mut self, ops: Vec<Op>, outcomes: Vec<Outcome>, st: BatchState) {
        self.rev = st.rev;
        self.shared.current_rev.store(st.rev, Ordering::SeqCst);
        if st.compact != self.compact_rev {
            self.compact_rev = st.compact;
            self.shared.compact_rev.store(st.compact, Ordering::SeqCst);
            self.job = Some(Job::Compact {
                target: st.compact,
                cursor: 0,
            });
        }
        if st.expired {
            self.shared.expire_queued.store(false, Ordering::SeqCst);
        }
        if st.recompute_expiry {
            let next: Option<i64> = self
                .conn
                .query_row("SELECT MIN(expires_at) FROM leases", [], |r| r.get(0))
                .unwrap_or(None);
            self.shared
                .next_expiry
                .store(next.unwrap_or(i64::MAX), Ordering::SeqCst);
        } else if st.min_new_expiry != i64::MAX {
            self.shared
                .next_expiry
                .fetch_min(st.min_new_expiry, Ordering::SeqCst);
        }
        for (op, outcome) in ops.into_iter().zip(outcomes) {
            match (op, outcome) {
                (Op::Put { reply, .. } | Op::Delete { reply, .. }, Outcome::Txn(r)) => {
                    let _ = reply.send(Ok(r));
                }
                (Op::Put { reply, .. } | Op::Delete { reply, .. }, Outcome::Failed(e)) => {
                    let _ = reply.send(Err(e));
                }
                (
                    Op::Compact {
                        reply: Some(reply), ..
                    },
                    Outcome::Done,
                ) => {
                    let _ = reply.send(Ok(()));
                }
                (
                    Op::Compact {
                        reply: Some(reply), ..
                    },
                    Outcome::Failed(e),
                ) => {
                    let _ = reply.send(Err(e));
                }
                _ => {}
            }
        }
        if !st.events.is_empty() {
            let _ = self.events.send(Arc::new(Published {
                high_rev: st.rev,
                events: st.events,
            }));
        }
    }

    fn get_current(&self, key: &str) -> rusqlite::Result<Option<KeyValue>> {
        self.conn
            .prepare_cached(
                "SELECT create_rev, mod_rev, version, lease, value FROM current WHERE key = ?1",
            )?
            .query_row([key], |r| {
                Ok(KeyValue {
                    key: key.to_string(),
                    create_revision: r.get(0)?,
                    mod_revision: r.get(1)?,
                    version: r.get(2)?,
                    lease: r.get(3)?,
                    value: r.get(4)?,
                })
            })
            .optional()
    }

    fn apply(&mut self, op: &Op, st: &mut BatchState) -> rusqlite::Result<Outcome> {
        match op {
            Op::Put {
                key,
                expected,
                value,
                ttl,
                ..
            } => self.put(key, *expected, value, *ttl, st),
            Op::Delete { key, expected, .. } => {
                let prev = self.get_current(key)?;
                let cur_mod = prev.as_ref().map_or(0, |p| p.mod_revision);
                if cur_mod != *expected {
                    return Ok(Outcome::Txn(TxnResponse {
                        succeeded: false,
                        revision: st.rev,
                        kv: prev,
                    }));
                }
                match prev {
                    // etcd: a delete of nothing succeeds without a new revision.
                    None => Ok(Outcome::Txn(TxnResponse {
                        succeeded: true,
                        revision: st.rev,
                        kv: None,
                    })),
                    Some(prev) => {
                        let rev = self.delete_row(&prev, st)?;
                        Ok(Outcome::Txn(TxnResponse {
                            succeeded: true,
                            revision: rev,
                            kv: Some(prev),
                        }))
                    }
                }
            }
            Op::Expire => {
                st.expired = true;
                st.recompute_expiry = true;
                let due: Vec<(i64, String)> = self
                    .conn
                    .prepare_cached(
                        "SELECT id, key FROM leases WHERE expires_at <= ?1 \
                         ORDER BY expires_at LIMIT ?2",
                    )?
                    .query_map(params![now_ms(), EXPIRE_BATCH], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                for (id, key) in due {
                    match self.get_current(&key)? {
                        Some(prev) if prev.lease == id => {
                            self.delete_row(&prev, st)?;
                        }
                        _ => {
                            self.conn
                                .prepare_cached("DELETE FROM leases WHERE id = ?1")?
                                .execute([id])?;
                        }
                    }
                }
                Ok(Outcome::Done)
            }
            Op::Compact { rev, .. } => {
                if *rev > st.rev {
                    Ok(Outcome::Failed(BackendError::FutureRevision(st.rev)))
                } else if *rev <= st.compact {
                    Ok(Outcome::Failed(BackendError::Compacted(st.compact)))
                } else {
                    st.compact = *rev;
                    Ok(Outcome::Done)
                }
            }
        }
    }

    fn put(
        &mut self,
        key: &str,
        expected: i64,
        value: &[u8],
        ttl: i64,
        st: &mut BatchState,
    ) -> rusqlite::Result<Outcome> {
        let prev = self.get_current(key)?;
        let cur_mod = prev.as_ref().map_or(0, |p| p.mod_revision);
        if cur_mod != expected {
            return Ok(Outcome::Txn(TxnResponse {
                succeeded: false,
                revision: st.rev,
                kv: prev,
            }));
        }
        let rev = st.rev + 1;
        let (create_rev, version) = match &prev {
            Some(p) => (p.create_revision, p.version + 1),
            None => (rev, 1),
        };
        let lease = if ttl > 0 { rev } else { 0 };
        self.conn
            .prepare_cached(
                "INSERT INTO current(key, create_rev, mod_rev, version, lease, value) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                 ON CONFLICT(key) DO UPDATE SET create_rev = excluded.create_rev, \
                 mod_rev = excluded.mod_rev, version = excluded.version, \
                 lease = excluded.lease, value = excluded.value",
            )?
            .execute(params![key, create_rev, rev, version, lease, value])?;
        self.conn
            .prepare_cached(
                "INSERT INTO log(rev, key, type, create_rev, version, lease, value, prev_mod_rev) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                rev, key, PUT, create_rev, version, lease, value, cur_mod
            ])?;
        if let Some(p) = &prev {
            if p.lease != 0 {
                self.conn
                    .prepare_cached("DELETE FROM leases WHERE id = ?1")?
                    .execute([p.lease])?;
            }
        }
        if lease != 0 {
            let expires_at = now_ms().saturating_add(ttl.saturating_mul(1000));
            self.conn
                .prepare_cached("INSERT INTO leases(id, key, expires_at) VALUES (?1, ?2, ?3)")?
                .execute(params![lease, key, expires_at])?;
            st.min_new_expiry = st.min_new_expiry.min(expires_at);
        }
        st.rev = rev;
        st.events.push(KvEvent {
            event_type: EventType::Put,
            kv: KeyValue {
                key: key.to_string(),
                value: value.to_vec(),
                create_revision: create_rev,
                mod_revision: rev,
                version,
                lease,
            },
            prev_kv: prev,
        });
        Ok(Outcome::Txn(TxnResponse {
            succeeded: true,
            revision: rev,
            kv: None,
        }))
    }

    /// Delete an existing key at the next revision; returns that revision.
    fn delete_row(&mut self, prev: &KeyValue, st: &mut BatchState) -> rusqlite::Result<i64> {
        let rev = st.rev + 1;
        self.conn
            .prepare_cached("DELETE FROM current WHERE key = ?1")?
            .execute([&prev.key])?;
        self.conn
            .prepare_cached(
                "INSERT INTO log(rev, key, type, create_rev, version, lease, value, prev_mod_rev) \
                 VALUES (?1, ?2, ?3, 0, 0, 0, NULL, ?4)",
            )?
            .execute(params![rev, prev.key, DELETE, prev.mod_revision])?;
        if prev.lease != 0 {
            self.conn
                .prepare_cached("DELETE FROM leases WHERE id = ?1")?
                .execute([prev.lease])?;
        }
        st.rev = rev;
        st.events.push(KvEvent {
            event_type: EventType::Delete,
            kv: KeyValue {
                key: prev.key.clone(),
                value: Vec::new(),
                create_revision: 0,
                mod_revision: rev,
                version: 0,
                lease: 0,
            },
            prev_kv: Some(prev.clone()),
        });
        Ok(rev)
    }

    /// One step of background work (called only when no request is queued).
    fn background_step(&mut self) {
        let Some(job) = self.job.take() else { return };
        match job {
            Job::Compact { target, cursor } => match self.compact_step(target, cursor) {
                Ok(Some(next)) => {
                    self.job = Some(Job::Compact {
                        target,
                        cursor: next,
                    })
                }
                Ok(None) => {
                    tracing::debug!(revision = target, "embedded store compaction finished");
                    self.job = Some(Job::Vacuum { steps_left: 64 });
                }
                Err(e) => {
                    // Retried after the next compaction or reopen (compact_done lags).
                    tracing::error!(error = %e, revision = target, "embedded store compaction failed");
                }
            },
            Job::Vacuum { steps_left } => {
                let free: i64 = self
                    .conn
                    .query_row("PRAGMA freelist_count", [], |r| r.get(0))
                    .unwrap_or(0);
                if free > 0 && steps_left > 0 {
                    match self
                        .conn
                        .execute_batch(&format!("PRAGMA incremental_vacuum({VACUUM_PAGES})"))
                    {
                        Ok(()) => {
                            self.job = Some(Job::Vacuum {
                                steps_left: steps_left - 1,
                            });
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "embedded store incremental_vacuum failed")
                        }
                    }
                    return;
                }
                // Truncate the WAL, waiting at most briefly for readers.
                let _ = self.conn.busy_timeout(Duration::from_millis(50));
                if let Err(e) = self
                    .conn
                    .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                {
                    tracing::debug!(error = %e, "embedded store WAL checkpoint skipped");
                }
                let _ = self.conn.busy_timeout(Duration::from_secs(5));
            }
        }
    }

    /// Delete, in one short transaction, the log rows in the next chunk after `cursor` that no
    /// read above `target` needs: tombstones, and entries superseded by a newer entry of the
    /// same key at or below `target`. etcd keeps the same (the newest live revision of each key).
    /// Returns the next cursor, or `None` when done (and `compact_done` is recorded).
    fn compact_step(&mut self, target: i64, cursor: i64) -> rusqlite::Result<Option<i64>> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let res = (|| -> rusqlite::Result<Option<i64>> {
            let hi: Option<i64> = self
                .conn
                .prepare_cached(
                    "SELECT MAX(rev) FROM (SELECT rev FROM log WHERE rev > ?1 AND rev <= ?2 \
                     ORDER BY rev LIMIT ?3)",
                )?
                .query_row(params![cursor, target, COMPACT_CHUNK], |r| r.get(0))?;
            match hi {
                Some(hi) => {
                    self.conn
                        .prepare_cached(
                            "DELETE FROM log WHERE rev > ?1 AND rev <= ?2 AND (type = ?4 OR EXISTS \
                             (SELECT 1 FROM log AS newer WHERE newer.key = log.key \
                              AND newer.rev > log.rev AND newer.rev <= ?3))",
                        )?
                        .execute(params![cursor, hi, target, DELETE])?;
                    Ok(Some(hi))
                }
                None => {
                    self.conn
                        .prepare_cached("UPDATE meta SET v = ?1 WHERE k = 'compact_done'")?
                        .execute([target])?;
                    Ok(None)
                }
            }
        })();
        match res {
            Ok(r) => match self.conn.execute_batch("COMMIT") {
                Ok(()) => Ok(r),
                Err(e) => {
                    self.rollback();
                    Err(e)
                }
            },
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }
}

impl Writer {
    /// Answer an op whose transaction failed.
    fn fail(&self, op: Op, e: BackendError) {
        match op {
            Op::Put { reply, .. } | Op::Delete { reply, .. } => {
                let _ = reply.send(Err(e));
            }
            Op::Compact {
                reply: Some(reply), ..
            } => {
                let _ = reply.send(Err(e));
            }
            Op::Expire => self.shared.expire_queued.store(false, Ordering::SeqCst),
            Op::Compact { reply: None, .. } => {}
        }
    }
}

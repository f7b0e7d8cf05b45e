//! Watches of the embedded store: replay from `log`, then live events from the writer's
//! broadcast, with no gap and no duplicate.
//!
//! The broadcast receiver is subscribed before the replay's snapshot is taken, so every event
//! above the snapshot's revision is received live (the writer publishes after committing), and
//! live events at or below the last replayed revision are skipped. A receiver that lags behind
//! the broadcast resubscribes and catches up from `log` the same way.

use super::schema::{read_meta, PUT};
use super::writer::Published;
use super::{sql_err, Shared};
use crate::backend::{EventType, KeyValue, KvEvent, WatchResponse};
use crate::errors::BackendError;
use rusqlite::{params, Connection};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc};

/// Events read from `log` per replay query (and per message).
const REPLAY_CHUNK: i64 = 1000;

/// What to watch.
pub(crate) struct WatchSpec {
    pub key: String,
    pub recursive: bool,
    /// First revision to deliver (≥ 1).
    pub start: i64,
    pub progress_notify: bool,
    pub progress_interval: Duration,
}

impl WatchSpec {
    fn matches(&self, key: &str) -> bool {
        if self.recursive {
            key.starts_with(&self.key)
        } else {
            key == self.key
        }
    }
}

struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.watchers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Start the watch task; it ends when `out`'s receiver is dropped, after an error, or when the
/// store closes.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    spec: WatchSpec,
    live: broadcast::Receiver<Arc<Published>>,
    out: mpsc::Sender<WatchResponse>,
) {
    shared.watchers.fetch_add(1, Ordering::SeqCst);
    let running = Running(shared.clone());
    tokio::spawn(async move {
        let _running = running;
        run(shared, Arc::new(spec), live, out).await;
    });
}

/// One replay query's result.
struct Chunk {
    /// The store revision of the snapshot.
    snapshot: i64,
    events: Vec<KvEvent>,
    /// Revision of the last row read, if the chunk was full (more may follow).
    full_until: Option<i64>,
}

fn replay(conn: &mut Connection, spec: &WatchSpec, from: i64) -> Result<Chunk, BackendError> {
    let tx = conn.transaction().map_err(sql_err)?;
    let (snapshot, compacted) = read_meta(&tx)?;
    // A watch from the compacted revision would need previous values compaction removed
    // (etcd then sends the event without prev_kv, which the store rejects): refuse it here.
    if from <= compacted {
        return Err(BackendError::Compacted(compacted));
    }
    let filter = if spec.recursive {
        "(?4 = '' OR substr(l.key, 1, length(?4)) = ?4)"
    } else {
        "l.key = ?4"
    };
    let sql = format!(
        "SELECT l.rev, l.key, l.type, l.create_rev, l.version, l.lease, l.value, l.prev_mod_rev, \
         p.create_rev, p.version, p.lease, p.value \
         FROM log AS l LEFT JOIN log AS p ON p.rev = l.prev_mod_rev \
         WHERE l.rev >= ?1 AND l.rev <= ?2 AND {filter} ORDER BY l.rev LIMIT ?3"
    );
    let mut stmt = tx.prepare_cached(&sql).map_err(sql_err)?;
    let mut rows = stmt
        .query(params![from, snapshot, REPLAY_CHUNK, spec.key])
        .map_err(sql_err)?;
    let mut events = Vec::new();
    let mut last = 0;
    while let Some(r) = rows.next().map_err(sql_err)? {
        let rev: i64 = r.get(0).map_err(sql_err)?;
        let key: String = r.get(1).map_err(sql_err)?;
        let ty: i64 = r.get(2).map_err(sql_err)?;
        let prev_mod: i64 = r.get(7).map_err(sql_err)?;
        let prev_value: Option<Vec<u8>> = r.get(11).map_err(sql_err)?;
        let prev_kv = match prev_value {
            Some(value) => Some(KeyValue {
                key: key.clone(),
                value,
                create_revision: r.get(8).map_err(sql_err)?,
                mod_revision: prev_mod,
                version: r.get(9).map_err(sql_err)?,
                lease: r.get(10).map_err(sql_err)?,
            }),
            None => {
                if prev_mod > 0 {
                    tracing::warn!(
                        key,
                        rev,
                        prev_mod,
                        "embedded store: previous value missing from log"
                    );
                }
                None
            }
        };
        let (event_type, kv) = if ty == PUT {
            (
                EventType::Put,
                KeyValue {
                    key,
                    value: r.get(6).map_err(sql_err)?,
                    create_revision: r.get(3).map_err(sql_err)?,
                    mod_revision: rev,
                    version: r.get(4).map_err(sql_err)?,
                    lease: r.get(5).map_err(sql_err)?,
                },
            )
        } else {
            (
                EventType::Delete,
                KeyValue {
                    key,
                    value: Vec::new(),
                    create_revision: 0,
                    mod_revision: rev,
                    version: 0,
                    lease: 0,
                },
            )
        };
        events.push(KvEvent {
            event_type,
            kv,
            prev_kv,
        });
        last = rev;
    }
    let full_until = (events.len() as i64 == REPLAY_CHUNK).then_some(last);
    Ok(Chunk {
        snapshot,
        events,
        full_until,
    })
}

async fn run(
    shared: Arc<Shared>,
    spec: Arc<WatchSpec>,
    mut live: broadcast::Receiver<Arc<Published>>,
    out: mpsc::Sender<WatchResponse>,
) {
    // Next revision to deliver, and the highest revision fully processed (for progress).
    let mut next = spec.start.max(1);
    let mut seen: i64 = 0;
    // Progress requests (`Backend::request_progress`) made while this watch replays are
    // answered once it is live again: subscribed once, so none is lost across replays.
    let mut requested = shared.progress_requested.subscribe();
    // A requested progress notification not yet sent: the revision it must cover.
    let mut owed: Option<i64> = None;
    loop {
        // Catch up from the log.
        loop {
            if out.is_closed() {
                return;
            }
            let s = spec.clone();
            let from = next;
            match shared.read(move |conn| replay(conn, &s, from)).await {
                Err(e) => {
                    let _ = out.send(WatchResponse::Error(e)).await;
                    return;
                }
                Ok(chunk) => {
                    if !chunk.events.is_empty()
                        && out.send(WatchResponse::Events(chunk.events)).await.is_err()
                    {
                        return;
                    }
                    seen = seen.max(chunk.snapshot);
                    match chunk.full_until {
                        Some(last) => next = last + 1,
                        None => {
                            next = next.max(chunk.snapshot + 1);
                            break;
                        }
                    }
                }
            }
        }

        // Live.
        let period = spec.progress_interval.max(Duration::from_millis(1));
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut sent = false;
        loop {
            if let Some(rev) = owed {
                if seen >= rev {
                    owed = None;
                    if out.send(WatchResponse::Progress(seen)).await.is_err() {
                        return;
                    }
                }
            }
            tokio::select! {
                _ = out.closed() => return,
                changed = requested.changed(), if spec.progress_notify => {
                    if changed.is_err() {
                        continue;
                    }
                    let rev = *requested.borrow_and_update();
                    owed = Some(owed.map_or(rev, |o| o.max(rev)));
                }
                r = live.recv() => match r {
                    Ok(batch) => {
                        seen = seen.max(batch.high_rev);
                        if batch.high_rev < next {
                            continue;
                        }
                        let events: Vec<KvEvent> = batch
                            .events
                            .iter()
                            .filter(|e| e.kv.mod_revision >= next && spec.matches(&e.kv.key))
                            .cloned()
                            .collect();
                        next = batch.high_rev + 1;
                        if !events.is_empty() {
                            if out.send(WatchResponse::Events(events)).await.is_err() {
                                return;
                            }
                            sent = true;
                        }
                    }
                    Err(RecvError::Lagged(n)) => {
                        tracing::debug!(skipped = n, next, "embedded watch lagged; catching up from the log");
                        live = live.resubscribe();
                        break;
                    }
                    Err(RecvError::Closed) => {
                        let _ = out
                            .send(WatchResponse::Error(BackendError::Unreachable(
                                "embedded store closed".into(),
                            )))
                            .await;
                        return;
                    }
                },
                _ = tick.tick(), if spec.progress_notify => {
                    if !sent && out.send(WatchResponse::Progress(seen)).await.is_err() {
                        return;
                    }
                    sent = false;
                }
            }
        }
    }
}

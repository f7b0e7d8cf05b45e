//! Reads of the embedded store: ranges (at the current or a past revision) and counts, each in
//! one read transaction on a reader connection.

use super::schema::{read_meta, PUT};
use super::sql_err;
use crate::backend::{KeyValue, RangeResponse};
use crate::errors::BackendError;
use rusqlite::{Connection, OptionalExtension, ToSql};
use std::collections::BTreeMap;

/// A key range in etcd's convention.
#[derive(Clone, Debug)]
pub(crate) enum KeyRange {
    /// `end == ""`: the single key.
    Single(String),
    /// `end == "\0"`: every key ≥ start.
    From(String),
    /// `[start, end)`.
    Between(String, String),
    /// `end <= start`: nothing.
    Empty,
}

impl KeyRange {
    pub(crate) fn new(start: &str, end: &str) -> KeyRange {
        if end.is_empty() {
            KeyRange::Single(start.to_string())
        } else if end == "\0" {
            KeyRange::From(start.to_string())
        } else if end <= start {
            KeyRange::Empty
        } else {
            KeyRange::Between(start.to_string(), end.to_string())
        }
    }

    /// SQL condition on `col` using the named parameters `:start` / `:end`.
    fn cond(&self, col: &str) -> String {
        match self {
            KeyRange::Single(_) => format!("{col} = :start"),
            KeyRange::From(_) => format!("{col} >= :start"),
            KeyRange::Between(..) => format!("{col} >= :start AND {col} < :end"),
            KeyRange::Empty => "0".to_string(),
        }
    }

    /// The parameters `cond` refers to.
    fn params(&self) -> Vec<(&'static str, &dyn ToSql)> {
        match self {
            KeyRange::Single(s) | KeyRange::From(s) => vec![(":start", s as &dyn ToSql)],
            KeyRange::Between(s, e) => vec![(":start", s as &dyn ToSql), (":end", e)],
            KeyRange::Empty => vec![],
        }
    }
}

fn row_kv(row: &rusqlite::Row<'_>) -> rusqlite::Result<KeyValue> {
    Ok(KeyValue {
        key: row.get(0)?,
        create_revision: row.get(1)?,
        mod_revision: row.get(2)?,
        version: row.get(3)?,
        lease: row.get(4)?,
        value: row.get(5)?,
    })
}

/// etcd's Range: keys of `keys` at `revision` (0 = latest), at most `limit` (0 = all); the
/// header revision is the current one.
pub(crate) fn range(
    conn: &mut Connection,
    keys: &KeyRange,
    limit: i64,
    revision: i64,
) -> Result<RangeResponse, BackendError> {
    let tx = conn.transaction().map_err(sql_err)?;
    let (current, compacted) = read_meta(&tx)?;
    let at = if revision > 0 { revision } else { current };
    if revision > 0 {
        if at > current {
            return Err(BackendError::FutureRevision(current));
        }
        // etcd: a read below the compacted revision fails; the compacted revision itself
        // is still readable (mvcc `ErrCompacted` when `rev < compactMainRev`).
        if at < compacted {
            return Err(BackendError::Compacted(compacted));
        }
    }
    let historic = at < current;

    // Keys of the range written after `at`: their state at `at` comes from the log (the
    // newest entry at or below `at`, absent if that is a tombstone or there is none).
    // Every other key of the range has its `current` row unchanged since `at`.
    let mut changed: BTreeMap<String, KeyValue> = BTreeMap::new();
    // How many of those keys are in `current` now (with a mod revision above `at`).
    let mut changed_present: i64 = 0;
    if historic {
        let sql = format!(
            "SELECT DISTINCT key FROM log WHERE rev > :rev AND {}",
            keys.cond("+key")
        );
        let mut params = keys.params();
        params.push((":rev", &at));
        let mut stmt = tx.prepare_cached(&sql).map_err(sql_err)?;
        let names: Vec<String> = stmt
            .query_map(params.as_slice(), |r| r.get(0))
            .map_err(sql_err)?
            .collect::<rusqlite::Result<_>>()
            .map_err(sql_err)?;
        let mut at_rev = tx
            .prepare_cached(
                "SELECT key, create_rev, rev, version, lease, value, type FROM log \
                 WHERE key = ?1 AND rev <= ?2 ORDER BY rev DESC LIMIT 1",
            )
            .map_err(sql_err)?;
        let mut in_current = tx
            .prepare_cached("SELECT 1 FROM current WHERE key = ?1")
            .map_err(sql_err)?;
        for name in names {
            if in_current.exists([&name]).map_err(sql_err)? {
                changed_present += 1;
            }
            let found = at_rev
                .query_row(rusqlite::params![name, at], |r| {
                    let ty: i64 = r.get(6)?;
                    if ty == PUT {
                        row_kv(r).map(Some)
                    } else {
                        Ok(None)
                    }
                })
                .optional()
                .map_err(sql_err)?
                .flatten();
            if let Some(kv) = found {
                changed.insert(name, kv);
            }
        }
    }

    let cond = keys.cond("key");
    let rev_cond = if historic { " AND mod_rev <= :rev" } else { "" };
    let sql_limit: i64 = if limit > 0 { limit } else { -1 };
    let sql = format!(
        "SELECT key, create_rev, mod_rev, version, lease, value FROM current \
         WHERE {cond}{rev_cond} ORDER BY key LIMIT :limit"
    );
    let mut params = keys.params();
    if historic {
        params.push((":rev", &at));
    }
    params.push((":limit", &sql_limit));
    let rows: Vec<KeyValue> = {
        let mut stmt = tx.prepare_cached(&sql).map_err(sql_err)?;
        let it = stmt.query_map(params.as_slice(), row_kv).map_err(sql_err)?;
        it.collect::<rusqlite::Result<_>>().map_err(sql_err)?
    };
    let current_count = if limit > 0 && rows.len() as i64 == limit {
        // Keys of `current` unchanged since `at` = all keys of the range (an index-only count)
        // minus the changed ones still present.
        let sql = format!("SELECT COUNT(*) FROM current WHERE {cond}");
        let mut stmt = tx.prepare_cached(&sql).map_err(sql_err)?;
        let all = stmt
            .query_row(keys.params().as_slice(), |r| r.get::<_, i64>(0))
            .map_err(sql_err)?;
        all - changed_present
    } else {
        rows.len() as i64
    };
    drop(tx);

    let count = current_count + changed.len() as i64;
    let kvs = merge(rows, changed, limit);
    Ok(RangeResponse {
        more: count > kvs.len() as i64,
        kvs,
        count,
        // etcd's response header carries the store's current revision, whatever revision the
        // range was read at.
        header_revision: current,
    })
}

/// Merge two key-sorted lists, keeping the first `limit` (0 = all).
fn merge(a: Vec<KeyValue>, b: BTreeMap<String, KeyValue>, limit: i64) -> Vec<KeyValue> {
    if b.is_empty() {
        return a;
    }
    let cap = if limit > 0 {
        limit as usize
    } else {
        usize::MAX
    };
    let mut out = Vec::with_capacity((a.len() + b.len()).min(cap));
    let mut a = a.into_iter().peekable();
    let mut b = b.into_values().peekable();
    while out.len() < cap {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.key < y.key,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_a { a.next() } else { b.next() };
        out.extend(next);
    }
    out
}

/// Number of keys in the range at the latest revision, and that revision.
pub(crate) fn count(conn: &mut Connection, keys: &KeyRange) -> Result<(i64, i64), BackendError> {
    let tx = conn.transaction().map_err(sql_err)?;
    let (current, _) = read_meta(&tx)?;
    let sql = format!("SELECT COUNT(*) FROM current WHERE {}", keys.cond("key"));
    let n = {
        let mut stmt = tx.prepare_cached(&sql).map_err(sql_err)?;
        stmt.query_row(keys.params().as_slice(), |r| r.get::<_, i64>(0))
            .map_err(sql_err)?
    };
    Ok((n, current))
}

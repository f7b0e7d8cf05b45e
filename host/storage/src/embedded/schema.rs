//! The SQLite schema and connection setup of the embedded store.

use super::{sql_err, EmbeddedOptions};
use crate::errors::BackendError;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::Path;
use std::time::Duration;

/// Version of the on-disk layout, stored in `meta` as `schema_version`.
pub(crate) const SCHEMA_VERSION: i64 = 1;

/// `PRAGMA mmap_size` of reader connections (address space, not memory: pages stay in the OS
/// page cache, shared by every connection). Beyond it SQLite reads the file as usual.
const READER_MMAP_BYTES: i64 = 1 << 30;

/// `log.type` of a put.
pub(crate) const PUT: i64 = 0;
/// `log.type` of a delete (tombstone; `value` is NULL).
pub(crate) const DELETE: i64 = 1;

/// Tables (rowid tables: values are typically 1 KiB or more, see `storage.md` §3.5).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS current (
    key        TEXT PRIMARY KEY,
    create_rev INTEGER NOT NULL,
    mod_rev    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    lease      INTEGER NOT NULL,
    value      BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS log (
    rev          INTEGER PRIMARY KEY,
    key          TEXT NOT NULL,
    type         INTEGER NOT NULL,
    create_rev   INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    lease        INTEGER NOT NULL,
    value        BLOB,
    prev_mod_rev INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS log_key_rev ON log(key, rev);
CREATE TABLE IF NOT EXISTS meta (
    k TEXT PRIMARY KEY,
    v INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    id         INTEGER PRIMARY KEY,
    key        TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS leases_expiry ON leases(expires_at);
INSERT OR IGNORE INTO meta(k, v) VALUES ('schema_version', 1);
INSERT OR IGNORE INTO meta(k, v) VALUES ('rev', 1);
INSERT OR IGNORE INTO meta(k, v) VALUES ('compact_rev', 0);
INSERT OR IGNORE INTO meta(k, v) VALUES ('compact_done', 0);
";

/// What the writer recovers from the file on open.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recovered {
    /// Current revision (1 for an empty store).
    pub rev: i64,
    /// Compacted revision (0 = never compacted).
    pub compact_rev: i64,
    /// Compacted revision whose physical deletion finished.
    pub compact_done: i64,
    /// Earliest lease expiry in unix ms (`i64::MAX` for none).
    pub next_expiry: i64,
}

fn other(msg: String) -> BackendError {
    BackendError::Other(msg)
}

/// Open the write connection: WAL, durability, schema, recovery.
pub(crate) fn open_writer(
    path: &Path,
    opts: &EmbeddedOptions,
) -> Result<(Connection, Recovered), BackendError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| {
        other(format!(
            "embedded store: cannot open {}: {e}",
            path.display()
        ))
    })?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(sql_err)?;
    conn.set_prepared_statement_cache_capacity(64);
    // Only effective on a new, empty database: freed pages can be returned to the OS
    // after compaction with `incremental_vacuum`.
    conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
        .map_err(sql_err)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(sql_err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(other(format!(
            "embedded store: {} cannot use WAL mode (got {mode})",
            path.display()
        )));
    }
    let sync = if opts.synchronous_full {
        "FULL"
    } else {
        "NORMAL"
    };
    conn.pragma_update(None, "synchronous", sync)
        .map_err(sql_err)?;
    // Truncate the WAL back to 64 MiB after checkpoints (k3s#5033-style WAL growth).
    conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)
        .map_err(sql_err)?;
    conn.pragma_update(None, "cache_size", -16384)
        .map_err(sql_err)?;
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(sql_err)?;
    conn.execute_batch(&format!("BEGIN IMMEDIATE; {SCHEMA} COMMIT;"))
        .map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            sql_err(e)
        })?;

    let meta = |k: &str| -> Result<i64, BackendError> {
        conn.query_row("SELECT v FROM meta WHERE k = ?1", [k], |r| r.get(0))
            .map_err(sql_err)
    };
    let version = meta("schema_version")?;
    if version != SCHEMA_VERSION {
        return Err(other(format!(
            "embedded store: {} has schema version {version}, this server supports {SCHEMA_VERSION}",
            path.display()
        )));
    }
    let max_log: Option<i64> = conn
        .query_row("SELECT MAX(rev) FROM log", [], |r| r.get(0))
        .map_err(sql_err)?;
    let rev = meta("rev")?.max(max_log.unwrap_or(1)).max(1);
    let compact_rev = meta("compact_rev")?;
    let compact_done = meta("compact_done")?;
    let next_expiry: Option<i64> = conn
        .query_row("SELECT MIN(expires_at) FROM leases", [], |r| r.get(0))
        .optional()
        .map_err(sql_err)?
        .flatten();
    if let Some(pages) = opts.max_page_count {
        conn.pragma_update(None, "max_page_count", pages as i64)
            .map_err(sql_err)?;
    }
    Ok((
        conn,
        Recovered {
            rev,
            compact_rev,
            compact_done,
            next_expiry: next_expiry.unwrap_or(i64::MAX),
        },
    ))
}

/// Open a reader connection (query-only; WAL gives it its own snapshot per read transaction).
pub(crate) fn open_reader(path: &Path) -> Result<Connection, BackendError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| {
        other(format!(
            "embedded store: cannot open {}: {e}",
            path.display()
        ))
    })?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(sql_err)?;
    conn.set_prepared_statement_cache_capacity(32);
    conn.pragma_update(None, "query_only", true)
        .map_err(sql_err)?;
    conn.pragma_update(None, "cache_size", -8192)
        .map_err(sql_err)?;
    // Reads map the database instead of copying each page out of the OS cache with `pread`:
    // a 10,000-object list touches every page of `current` (more than `cache_size`), and this
    // was about 40% of its SQLite time. The writer keeps ordinary I/O.
    if cfg!(target_pointer_width = "64") {
        conn.pragma_update(None, "mmap_size", READER_MMAP_BYTES)
            .map_err(sql_err)?;
    }
    Ok(conn)
}

/// `(current revision, compacted revision)` as of the caller's transaction.
pub(crate) fn read_meta(conn: &Connection) -> Result<(i64, i64), BackendError> {
    let mut stmt = conn
        .prepare_cached("SELECT k, v FROM meta WHERE k IN ('rev', 'compact_rev')")
        .map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let (mut rev, mut compact) = (1, 0);
    while let Some(row) = rows.next().map_err(sql_err)? {
        let k: String = row.get(0).map_err(sql_err)?;
        let v: i64 = row.get(1).map_err(sql_err)?;
        if k == "rev" {
            rev = v;
        } else {
            compact = v;
        }
    }
    Ok((rev, compact))
}

//! The embedded backend: etcd's primitives ([`Backend`]) on one SQLite file, for single-node
//! use without an external etcd.
//!
//! Layout (etcd's data model — a key space with revisions — kept in SQLite): the store lives in `<dir>/state.db`
//! (WAL mode), guarded by an exclusive advisory lock on `<dir>/lock`.
//!
//! * **Writes** go to one writer OS thread that owns the only write connection. Requests arrive
//!   over a bounded channel; the writer drains what is queued into a batch (up to
//!   [`EmbeddedOptions::max_batch`] operations), evaluates each operation's compare inside one
//!   `BEGIN IMMEDIATE` transaction (later operations see earlier ones), assigns revisions from an
//!   in-memory counter, commits once (`synchronous=FULL` by default), replies to every caller and
//!   only then publishes the events to watchers. Nothing is acknowledged unless committed.
//! * **Revisions** follow etcd: an empty store is at revision 1, every successful write (create,
//!   update, delete, lease expiry) takes exactly the next revision, and a failed compare takes
//!   none.
//! * **Schema**: `current` (key → latest value and revisions), `log` (one row per revision: puts
//!   with their value, deletes as tombstones, and the previous mod revision so watch replays can
//!   rebuild `prev_kv`), `meta` (current revision, compacted revision, schema version) and
//!   `leases` (TTL expiry times).
//! * **Reads** use a small pool of reader connections on blocking threads, each read in one
//!   read transaction, so results and the header revision come from the same snapshot. A read at
//!   a past revision is answered from `current` for keys that did not change after it and from
//!   `log` for those that did.
//! * **Watches** replay `log` from the start revision and then follow an in-process broadcast of
//!   committed batches, with no gap and no duplicate; a watcher that falls behind the broadcast
//!   catches up from `log` again (it fails with [`BackendError::Compacted`] only if the history it
//!   needs was compacted).
//! * **Compaction** keeps, like etcd, the newest non-deleted entry of each key at or below the
//!   compacted revision (reads above it still need it) and deletes the rest of the history at or
//!   below it, in chunks interleaved with writes.

mod read;
mod schema;
mod watch;
mod writer;

use crate::backend::{Backend, RangeResponse, TxnResponse, WatchReceiver};
use crate::errors::BackendError;
use async_trait::async_trait;
use rusqlite::Connection;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, Semaphore};

use self::writer::{Op, Published};

/// Name of the database file inside the data directory.
pub const DB_FILE: &str = "state.db";
/// Name of the lock file inside the data directory (held with an exclusive `flock` while the
/// store is open, so a second server on the same directory fails instead of corrupting it).
pub const LOCK_FILE: &str = "lock";

/// Tuning of the embedded store. `EmbeddedOptions::default()` is what a server should use.
#[derive(Clone, Debug)]
pub struct EmbeddedOptions {
    /// `true` (default): `PRAGMA synchronous=FULL`, every group commit is fsynced before it is
    /// acknowledged (etcd's durability). `false`: `synchronous=NORMAL`, which survives a process
    /// crash but may lose the last commits on power loss.
    pub synchronous_full: bool,
    /// Automatic compaction (etcd's periodic `--auto-compaction-retention`): every interval the
    /// store compacts up to the revision that was current one interval earlier, so at least one
    /// interval of history is kept. `None` (default): only explicit [`Backend::compact`] calls,
    /// which kube-apiserver issues itself every 5 minutes.
    pub compaction_interval: Option<Duration>,
    /// Number of reader connections, i.e. reads (ranges, counts, watch replays) running at once.
    /// Default 4.
    pub reader_connections: usize,
    /// Largest number of write operations committed in one transaction. Default 512.
    pub max_batch: usize,
    /// Capacity of the writer's request queue (callers wait when it is full). Default 4096.
    pub queue_capacity: usize,
    /// Capacity, in committed batches, of the in-memory event broadcast to watchers. A watcher
    /// more than this many batches behind catches up from the `log` table instead. A batch is
    /// freed once every watcher has read it, so this bounds the memory a stuck watcher pins
    /// (at most `watch_buffer × max_batch` events). Default 256.
    pub watch_buffer: usize,
    /// Capacity, in messages, of each watch's channel. Default 128.
    pub watch_channel: usize,
    /// How long a `progress_notify` watch must be idle before it gets a
    /// [`crate::backend::WatchResponse::Progress`]. Default 1 s.
    pub progress_interval: Duration,
    /// How often the lease timer looks for expired TTL keys. Default 250 ms.
    pub lease_check_interval: Duration,
    /// Test-only: `PRAGMA max_page_count` on the writer connection (pages of 4 KiB), to simulate
    /// a full disk. `None` (default): no limit.
    pub max_page_count: Option<u64>,
    /// The largest write (key and value, bytes) accepted, as etcd's `--max-request-bytes`
    /// (default [`DEFAULT_MAX_REQUEST_BYTES`], etcd's): a larger one fails with
    /// [`BackendError::RequestTooLarge`], so an object too large for etcd is too large here
    /// too (a 413, and the field manager's retry without managedFields). 0: no limit.
    pub max_request_bytes: usize,
}

/// etcd's default `--max-request-bytes`: 1.5 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1536 * 1024;

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            synchronous_full: true,
            compaction_interval: None,
            reader_connections: 4,
            max_batch: 512,
            queue_capacity: 4096,
            watch_buffer: 256,
            watch_channel: 128,
            progress_interval: Duration::from_secs(1),
            lease_check_interval: Duration::from_millis(250),
            max_page_count: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
        }
    }
}

/// State shared by the handle, the writer thread, watch tasks and timer tasks.
pub(crate) struct Shared {
    /// Path of `state.db` (for opening extra reader connections).
    pub(crate) db_path: PathBuf,
    /// Idle reader connections.
    readers: Mutex<Vec<Connection>>,
    /// Limits concurrent reads to the pool size.
    read_permits: Arc<Semaphore>,
    /// The newest committed revision (set by the writer after commit, before replying).
    pub(crate) current_rev: AtomicI64,
    /// The newest compacted revision (set by the writer after commit).
    pub(crate) compact_rev: AtomicI64,
    /// Earliest lease expiry (unix ms) the writer knows of; `i64::MAX` for none.
    pub(crate) next_expiry: AtomicI64,
    /// Whether an expiry request is already queued for the writer.
    pub(crate) expire_queued: AtomicBool,
    /// Number of running watch tasks.
    pub(crate) watchers: AtomicUsize,
    /// The newest revision a progress notification was requested for
    /// ([`Backend::request_progress`]); each watch task answers once it has processed it.
    pub(crate) progress_requested: tokio::sync::watch::Sender<i64>,
    /// When progress was last requested.
    pub(crate) progress_requested_at: Mutex<Option<std::time::Instant>>,
}

impl Shared {
    /// Run `f` on a reader connection on a blocking thread.
    pub(crate) async fn read<T, F>(self: &Arc<Self>, f: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, BackendError> + Send + 'static,
    {
        let permit = self
            .read_permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| BackendError::Unreachable("embedded store is closed".into()))?;
        let shared = self.clone();
        tokio::task::spawn_blocking(move || {
            let pooled = shared
                .readers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop();
            let mut conn = match pooled {
                Some(c) => c,
                None => schema::open_reader(&shared.db_path)?,
            };
            let out = f(&mut conn);
            shared
                .readers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(conn);
            drop(permit);
            out
        })
        .await
        .map_err(|e| BackendError::Other(format!("embedded store: read task failed: {e}")))?
    }
}

/// The embedded SQLite store. Cheap to share behind an `Arc`; dropping it stops the writer
/// thread (after the queued writes), releases the directory lock, and ends every watch with
/// [`BackendError::Unreachable`].
pub struct Embedded {
    dir: PathBuf,
    requests: mpsc::Sender<Op>,
    events: broadcast::Sender<Arc<Published>>,
    shared: Arc<Shared>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    opts: EmbeddedOptions,
}

static MEMSTATUS_OFF: Once = Once::new();

/// Turn off SQLite's global allocation statistics before the first connection is opened: with
/// it on, every allocation takes one global mutex and reader threads serialise
/// (`storage.md` §3.4). Fails harmlessly if SQLite was already initialised.
fn disable_memstatus() {
    MEMSTATUS_OFF.call_once(|| {
        // SAFETY: `sqlite3_config` is called with an integer argument, as
        // SQLITE_CONFIG_MEMSTATUS expects; if SQLite is already initialised it returns
        // SQLITE_MISUSE and changes nothing.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::os::raw::c_int,
            )
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(rc, "sqlite3_config(MEMSTATUS, 0) not applied");
        }
    });
}

/// Map a SQLite error to a [`BackendError::Other`] with a recognisable message.
pub(crate) fn sql_err(e: rusqlite::Error) -> BackendError {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => {
            BackendError::Other(format!("embedded store: database or disk is full: {e}"))
        }
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
            BackendError::Other(format!("embedded store: database is locked: {e}"))
        }
        _ => BackendError::Other(format!("embedded store: {e}")),
    }
}

fn closed() -> BackendError {
    BackendError::Unreachable("embedded store writer has stopped".into())
}

impl Embedded {
    /// Open (or create) the store in `dir`: creates the directory and `<dir>/state.db` with its
    /// schema if missing, recovers the current and compacted revisions from the file, starts the
    /// writer thread and the lease (and optional compaction) timers. Must be called inside a
    /// tokio runtime.
    ///
    /// Errors: [`BackendError::Other`] with "the embedded store in `<dir>` is in use by another
    /// process" when another process (or another `Embedded` in this one) holds `<dir>/lock`;
    /// [`BackendError::Other`] for I/O or SQLite failures (unwritable directory, corrupt file,
    /// a newer schema version).
    pub async fn open(dir: &Path, opts: EmbeddedOptions) -> Result<Embedded, BackendError> {
        disable_memstatus();
        let dir = dir.to_path_buf();
        let opts_c = opts.clone();
        let dir_c = dir.clone();
        let (lock, conn, state, readers) =
            tokio::task::spawn_blocking(move || -> Result<_, BackendError> {
                let lock = acquire_lock(&dir_c)?;
                let db_path = dir_c.join(DB_FILE);
                let (conn, state) = schema::open_writer(&db_path, &opts_c)?;
                let mut readers = Vec::new();
                for _ in 0..opts_c.reader_connections.max(1) {
                    readers.push(schema::open_reader(&db_path)?);
                }
                Ok((lock, conn, state, readers))
            })
            .await
            .map_err(|e| BackendError::Other(format!("embedded store: open failed: {e}")))??;

        let shared = Arc::new(Shared {
            db_path: dir.join(DB_FILE),
            read_permits: Arc::new(Semaphore::new(readers.len())),
            readers: Mutex::new(readers),
            current_rev: AtomicI64::new(state.rev),
            compact_rev: AtomicI64::new(state.compact_rev),
            next_expiry: AtomicI64::new(state.next_expiry),
            expire_queued: AtomicBool::new(false),
            watchers: AtomicUsize::new(0),
            progress_requested: tokio::sync::watch::Sender::new(0),
            progress_requested_at: Mutex::new(None),
        });
        let (req_tx, req_rx) = mpsc::channel(opts.queue_capacity.max(1));
        let (ev_tx, _) = broadcast::channel(opts.watch_buffer.max(1));
        let w = writer::Writer::new(conn, lock, state, shared.clone(), ev_tx.clone(), &opts);
        let handle = std::thread::Builder::new()
            .name("embedded-writer".into())
            .spawn(move || w.run(req_rx))
            .map_err(|e| BackendError::Other(format!("embedded store: spawn writer: {e}")))?;

        spawn_lease_timer(
            shared.clone(),
            req_tx.downgrade(),
            opts.lease_check_interval,
        );
        if let Some(every) = opts.compaction_interval {
            spawn_compactor(shared.clone(), req_tx.downgrade(), every);
        }
        tracing::info!(dir = %dir.display(), revision = state.rev, compacted = state.compact_rev,
            "embedded store opened");
        Ok(Embedded {
            dir,
            requests: req_tx,
            events: ev_tx,
            shared,
            writer: Mutex::new(Some(handle)),
            opts,
        })
    }

    /// The data directory this store was opened on.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of watch tasks currently running (a watch ends when its receiver is dropped,
    /// after an error, or when the store closes).
    pub fn watcher_count(&self) -> usize {
        self.shared.watchers.load(Ordering::SeqCst)
    }

    /// Stop the writer (after the writes already queued), release the directory lock and wait
    /// for it, without blocking the async runtime. Dropping the store does the same, blocking.
    pub async fn close(self) {
        let _ = tokio::task::spawn_blocking(move || drop(self)).await;
    }

    async fn submit<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, BackendError>>) -> Op,
    ) -> Result<T, BackendError> {
        let (tx, rx) = oneshot::channel();
        self.requests.send(make(tx)).await.map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        // Close the request channel (timers only hold weak senders), then wait for the writer
        // to finish its queue and release the database and the lock.
        let (dummy, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.requests, dummy));
        let handle = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            if h.join().is_err() {
                tracing::error!("embedded store writer thread panicked");
            }
        }
    }
}

fn acquire_lock(dir: &Path) -> Result<File, BackendError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        BackendError::Other(format!(
            "embedded store: cannot create {}: {e}",
            dir.display()
        ))
    })?;
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| {
            BackendError::Other(format!(
                "embedded store: cannot open {}: {e}",
                path.display()
            ))
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(BackendError::Other(format!(
            "the embedded store in {} is in use by another process",
            dir.display()
        ))),
        Err(TryLockError::Error(e)) => Err(BackendError::Other(format!(
            "embedded store: cannot lock {}: {e}",
            path.display()
        ))),
    }
}

/// Ask the writer to delete expired TTL keys whenever the earliest known expiry has passed.
fn spawn_lease_timer(shared: Arc<Shared>, requests: mpsc::WeakSender<Op>, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(tx) = requests.upgrade() else { break };
            if shared.next_expiry.load(Ordering::SeqCst) > writer::now_ms() {
                continue;
            }
            if shared.expire_queued.swap(true, Ordering::SeqCst) {
                continue;
            }
            if tx.try_send(Op::Expire).is_err() {
                shared.expire_queued.store(false, Ordering::SeqCst);
            }
        }
    });
}

/// etcd's periodic auto-compaction: at every tick compact to the revision seen one tick earlier.
fn spawn_compactor(shared: Arc<Shared>, requests: mpsc::WeakSender<Op>, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let mut previous: Option<i64> = None;
        loop {
            tick.tick().await;
            let Some(tx) = requests.upgrade() else { break };
            if let Some(rev) = previous {
                if rev > shared.compact_rev.load(Ordering::SeqCst) {
                    // Never wait while holding a sender: dropping the store waits for all
                    // senders to go. A full queue skips this tick.
                    let _ = tx.try_send(Op::Compact { rev, reply: None });
                }
            }
            previous = Some(shared.current_rev.load(Ordering::SeqCst));
        }
    });
}

#[async_trait]
impl Backend for Embedded {
    async fn range(
        &self,
        start: &str,
        end: &str,
        limit: i64,
        revision: i64,
    ) -> Result<RangeResponse, BackendError> {
        let keys = read::KeyRange::new(start, end);
        self.shared
            .read(move |conn| read::range(conn, &keys, limit, revision))
            .await
    }

    async fn count(&self, start: &str, end: &str) -> Result<(i64, i64), BackendError> {
        let keys = read::KeyRange::new(start, end);
        self.shared.read(move |conn| read::count(conn, &keys)).await
    }

    async fn put_if(
        &self,
        key: &str,
        expected_mod_revision: i64,
        value: Vec<u8>,
        ttl_seconds: i64,
    ) -> Result<TxnResponse, BackendError> {
        if key.is_empty() {
            return Err(BackendError::Other(
                "etcdserver: key is not provided".into(),
            ));
        }
        let size = key.len() + value.len();
        if self.opts.max_request_bytes > 0 && size > self.opts.max_request_bytes {
            return Err(BackendError::RequestTooLarge(format!(
                "embedded store: request is too large ({size} bytes, the limit is {})",
                self.opts.max_request_bytes
            )));
        }
        let key = key.to_string();
        self.submit(|reply| Op::Put {
            key,
            expected: expected_mod_revision,
            value,
            ttl: ttl_seconds,
            reply,
        })
        .await
    }

    async fn delete_if(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnResponse, BackendError> {
        if key.is_empty() {
            return Err(BackendError::Other(
                "etcdserver: key is not provided".into(),
            ));
        }
        let key = key.to_string();
        self.submit(|reply| Op::Delete {
            key,
            expected: expected_mod_revision,
            reply,
        })
        .await
    }

    async fn watch(
        &self,
        key: &str,
        recursive: bool,
        start_revision: i64,
        progress_notify: bool,
    ) -> Result<WatchReceiver, BackendError> {
        // Subscribe before reading the current revision: every event above it is published
        // after this point, so the watch sees it either in its replay or live.
        let live = self.events.subscribe();
        let (tx, rx) = mpsc::channel(self.opts.watch_channel.max(1));
        let start = if start_revision > 0 {
            start_revision
        } else {
            self.shared.current_rev.load(Ordering::SeqCst) + 1
        };
        let spec = watch::WatchSpec {
            key: key.to_string(),
            recursive,
            start,
            progress_notify,
            progress_interval: self.opts.progress_interval,
        };
        watch::spawn(self.shared.clone(), spec, live, tx);
        Ok(WatchReceiver::from_channel(rx))
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        // The writer publishes the revision after the commit and before acknowledging, so this
        // is at least the revision of every acknowledged write (linearizable in-process).
        Ok(self.shared.current_rev.load(Ordering::SeqCst))
    }

    fn supports_request_progress(&self) -> bool {
        true
    }

    async fn request_progress(&self) -> Result<(), BackendError> {
        // Every watch task answers once it has processed this revision's events (its batch
        // may still be on the way: the revision is published before the batch).
        // Requests for a revision already asked for within the last 100 ms are one request
        // (many reads waiting for the same revision wake each watch once, as kube's
        // `ConditionalProgressRequester` asks at most every 100 ms); a repeat after that wakes
        // them again (e.g. a watch that started after the first request).
        let rev = self.shared.current_rev.load(Ordering::SeqCst);
        let mut last = self
            .shared
            .progress_requested_at
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let repeat_due = last.is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        let woke = self.shared.progress_requested.send_if_modified(|r| {
            let wake = rev > *r || repeat_due;
            *r = (*r).max(rev);
            wake
        });
        if woke {
            *last = Some(std::time::Instant::now());
        }
        Ok(())
    }

    async fn compact(&self, revision: i64) -> Result<(), BackendError> {
        self.submit(|reply| Op::Compact {
            rev: revision,
            reply: Some(reply),
        })
        .await
    }

    fn compacted_revision(&self) -> i64 {
        self.shared.compact_rev.load(Ordering::SeqCst)
    }

    async fn health(&self) -> Result<(), BackendError> {
        self.shared
            .read(|conn| {
                conn.query_row("SELECT v FROM meta WHERE k = 'rev'", [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|_| ())
                .map_err(sql_err)
            })
            .await?;
        if self.requests.is_closed() {
            return Err(closed());
        }
        Ok(())
    }
}

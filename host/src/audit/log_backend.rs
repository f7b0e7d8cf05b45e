//! The audit log backend (`k8s.io/apiserver/plugin/pkg/audit/log/backend.go`): one JSON event
//! per line in `--audit-log-path` (`-` for standard output), rotated when the file passes
//! `--audit-log-maxsize` MiB (between lines, so a file may pass the limit by one write of at
//! most [`WRITE_CHUNK`]), keeping `--audit-log-maxbackup` old files (`<path>.1` newest).
//!
//! A request serializes its event into a per-thread scratch buffer and appends the line to a
//! shared pending buffer (one short lock, no allocation once warm); a writer thread takes the
//! whole pending buffer every [`BATCH_WAIT`] and writes it, and a last time at shutdown
//! ([`LogBackend::shutdown`]). A request never waits for the disk,
//! and no event crosses threads as an object (a hand-off per event — a channel send, the
//! event freed on another thread — cost the request path more than writing it does). When
//! [`MAX_PENDING`] bytes are waiting or a write fails, events are dropped, logged and counted
//! in `apiserver_audit_error_total`, as kube's buffered backend does.

use super::event::Event;
use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes of serialized events waiting for the writer at most (kube's buffered backend holds
/// `--audit-log-batch-buffer-size`, 10,000 events, of any size).
pub const MAX_PENDING: usize = 64 << 20;

/// How long the writer lets events gather between writes: an event reaches the file at most
/// this much (plus the write) after it was recorded.
pub const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Bytes handed to the file per write at most, always whole lines (rotation happens between
/// writes).
pub const WRITE_CHUNK: usize = 256 << 10;

/// A thread's scratch buffer above this is not kept after an event (a large body at
/// `RequestResponse` does not pin memory on every worker).
const SCRATCH_KEEP: usize = 64 << 10;

/// Where audit events are written.
#[derive(Clone, Debug)]
pub struct LogBackend {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// Serialized events not yet taken by the writer.
    pending: Mutex<Vec<u8>>,
    /// Set by [`LogBackend::shutdown`]: the writer writes what is pending and stops.
    closed: AtomicBool,
    /// The writer thread, joined by [`LogBackend::shutdown`].
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The log options.
#[derive(Clone, Debug)]
pub struct LogOptions {
    /// `--audit-log-path` (`-`: standard output).
    pub path: PathBuf,
    /// `--audit-log-maxsize`, MiB; 0: never rotate.
    pub max_size_mib: u64,
    /// `--audit-log-maxbackup`; 0: keep every rotated file.
    pub max_backup: usize,
}

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl LogBackend {
    /// Open the log and start its writer. Errors: the file's directory cannot be created or
    /// the file cannot be opened.
    pub fn start(opts: &LogOptions) -> anyhow::Result<LogBackend> {
        // Registered with the backend, so `/metrics` shows the counters from the start.
        std::sync::LazyLock::force(&AUDIT_METRICS);
        let mut out: Box<dyn Write + Send> = if opts.path.as_os_str() == "-" {
            Box::new(std::io::stdout())
        } else {
            if let Some(dir) = opts.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            // Fail at start, not on the first event, when the file cannot be opened.
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&opts.path)
                .map_err(|e| anyhow::anyhow!("audit log '{}': {e}", opts.path.display()))?;
            let limit = if opts.max_size_mib == 0 {
                ContentLimit::None
            } else {
                ContentLimit::BytesSurpassed((opts.max_size_mib as usize) << 20)
            };
            let backups = if opts.max_backup == 0 {
                usize::MAX
            } else {
                opts.max_backup
            };
            Box::new(FileRotate::new(
                &opts.path,
                AppendCount::new(backups),
                limit,
                Compression::None,
                None,
            ))
        };
        let shared = Arc::new(Shared {
            pending: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            writer: Mutex::new(None),
        });
        let state = shared.clone();
        let writer = std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || {
                let mut batch = Vec::new();
                loop {
                    // Woken early by shutdown.
                    std::thread::park_timeout(BATCH_WAIT);
                    let closed = state.closed.load(Ordering::SeqCst);
                    std::mem::swap(&mut *lock(&state.pending), &mut batch);
                    if let Err(e) = write_lines(&mut out, &batch).and_then(|_| out.flush()) {
                        let lost = batch.iter().filter(|&&b| b == b'\n').count();
                        tracing::error!(error = %e, events = lost, "cannot write the audit log");
                        AUDIT_METRICS
                            .1
                            .with_label_values(&["log"])
                            .inc_by(lost as u64);
                    }
                    batch.clear();
                    // A burst's buffer is not kept for ever.
                    batch.shrink_to(MAX_PENDING / 16);
                    if closed {
                        return;
                    }
                }
            })?;
        *lock_writer(&shared.writer) = Some(writer);
        Ok(LogBackend { shared })
    }

    /// Write what is pending and stop the writer (at shutdown, after the last request);
    /// events recorded later are not written.
    pub fn shutdown(&self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        if let Some(writer) = lock_writer(&self.shared.writer).take() {
            writer.thread().unpark();
            let _ = writer.join();
        }
    }

    /// Record an event; never blocks on the disk.
    pub fn process(&self, event: &Event<'_>) {
        AUDIT_METRICS.0.inc();
        let append = |line: &mut Vec<u8>| {
            line.clear();
            if let Err(e) = serde_json::to_writer(&mut *line, event) {
                tracing::error!(error = %e, "cannot serialize an audit event");
                AUDIT_METRICS.1.with_label_values(&["log"]).inc();
                return;
            }
            line.push(b'\n');
            let mut pending = lock(&self.shared.pending);
            if pending.len() + line.len() > MAX_PENDING {
                drop(pending);
                tracing::error!("audit buffer full; event dropped");
                AUDIT_METRICS.1.with_label_values(&["log"]).inc();
            } else {
                pending.extend_from_slice(line);
            }
        };
        // A thread being torn down has no scratch buffer left: a fresh one then.
        let done = SCRATCH.try_with(|scratch| {
            let mut line = scratch.borrow_mut();
            append(&mut line);
            if line.capacity() > SCRATCH_KEEP {
                *line = Vec::new();
            }
        });
        if done.is_err() {
            append(&mut Vec::new());
        }
    }
}

/// The pending buffer, even if a thread panicked holding it (it holds only bytes).
fn lock(m: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

type Writer = Option<std::thread::JoinHandle<()>>;

fn lock_writer(m: &Mutex<Writer>) -> std::sync::MutexGuard<'_, Writer> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Write `batch` (whole lines) in writes of whole lines of at most [`WRITE_CHUNK`] bytes
/// (a longer line alone).
fn write_lines(out: &mut dyn Write, mut batch: &[u8]) -> std::io::Result<()> {
    while !batch.is_empty() {
        let end = if batch.len() <= WRITE_CHUNK {
            batch.len()
        } else {
            match batch[..WRITE_CHUNK].iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => batch
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(batch.len(), |i| i + 1),
            }
        };
        out.write_all(&batch[..end])?;
        batch = &batch[end..];
    }
    Ok(())
}

/// `apiserver_audit_event_total` (events generated and sent to the backend) and
/// `apiserver_audit_error_total{plugin}` (events lost: buffer full, serialization or write
/// failed), as `k8s.io/apiserver/pkg/audit/metrics.go` defines them.
static AUDIT_METRICS: std::sync::LazyLock<(prometheus::IntCounter, prometheus::IntCounterVec)> =
    std::sync::LazyLock::new(|| {
        (
            crate::metrics::counter(
                "apiserver_audit_event_total",
                "Counter of audit events generated and sent to the audit backend.",
            ),
            crate::metrics::counter_vec(
                "apiserver_audit_error_total",
                "Counter of audit events that failed to be audited properly.",
                &["plugin"],
            ),
        )
    });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_written_in_whole_lines() {
        let line = |n: usize, c: u8| {
            let mut l = vec![c; n];
            l.push(b'\n');
            l
        };
        let mut batch = Vec::new();
        for i in 0..10 {
            batch.extend(line(WRITE_CHUNK / 3, b'a' + i));
        }
        batch.extend(line(WRITE_CHUNK * 2, b'z'));
        batch.extend(line(5, b'y'));
        struct Writes(Vec<Vec<u8>>);
        impl Write for Writes {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.push(b.to_vec());
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut w = Writes(Vec::new());
        write_lines(&mut w, &batch).unwrap();
        assert_eq!(w.0.concat(), batch);
        for write in &w.0 {
            assert_eq!(write.last(), Some(&b'\n'));
            assert!(
                write.len() <= WRITE_CHUNK || write.iter().filter(|&&b| b == b'\n').count() == 1
            );
        }
        // Two lines of a third fit a write, the third does not; the long line goes alone.
        assert_eq!(w.0.len(), 5 + 1 + 1);
    }
}

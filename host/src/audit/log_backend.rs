//! The audit log backend (`k8s.io/apiserver/plugin/pkg/audit/log/backend.go`): one JSON event
//! per line in `--audit-log-path` (`-` for standard output), rotated when the file passes
//! `--audit-log-maxsize` MiB, keeping `--audit-log-maxbackup` old files (`<path>.1` newest).
//! Events go through a bounded queue to a writer thread that writes them in batches (every
//! [`BATCH_WAIT`]): a request never waits for the disk;
//! when the queue is full or a write fails the event is dropped, logged and counted in
//! `apiserver_audit_error_total` (kube's buffered backend does the same).

use super::event::Event;
use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};

/// Events queued for the writer at most (kube's `--audit-log-batch-buffer-size` default).
pub const QUEUE: usize = 10_000;

/// How long the writer lets events gather after writing a batch: an event reaches the file
/// at most this much (plus the write) after its request ended.
pub const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Where audit events are written.
#[derive(Clone, Debug)]
pub struct LogBackend {
    queue: SyncSender<Event>,
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

impl LogBackend {
    /// Open the log and start its writer. Errors: the file's directory cannot be created or
    /// the file cannot be opened.
    pub fn start(opts: &LogOptions) -> anyhow::Result<LogBackend> {
        let out: Box<dyn Write + Send> = if opts.path.as_os_str() == "-" {
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
        let (queue, events) = sync_channel::<Event>(QUEUE);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || {
                // Events are written through a buffer, flushed whenever the queue runs dry:
                // one write per burst rather than per event, and nothing waits in the buffer
                // longer than the queue takes to empty.
                let mut out = std::io::BufWriter::with_capacity(64 << 10, out);
                while let Ok(first) = events.recv() {
                    let mut next = Some(first);
                    while let Some(event) = next {
                        let written = serde_json::to_writer(&mut out, &event)
                            .map_err(std::io::Error::other)
                            .and_then(|_| out.write_all(b"\n"));
                        if let Err(e) = written {
                            tracing::error!(error = %e, "cannot write an audit event");
                            crate::metrics::audit_error();
                        }
                        next = events.try_recv().ok();
                    }
                    if let Err(e) = out.flush() {
                        tracing::error!(error = %e, "cannot write the audit log");
                        crate::metrics::audit_error();
                    }
                    // Batch: let events gather for a moment rather than waking this thread
                    // for each one (a wake-up per request costs the request path more than
                    // writing the event does); kube's buffered backend batches the same way.
                    std::thread::sleep(BATCH_WAIT);
                }
            })?;
        Ok(LogBackend { queue })
    }

    /// Queue an event; never blocks.
    pub fn process(&self, event: Event) {
        crate::metrics::audit_event();
        match self.queue.try_send(event) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::error!("audit queue full; event dropped");
                crate::metrics::audit_error();
            }
            Err(TrySendError::Disconnected(_)) => crate::metrics::audit_error(),
        }
    }
}

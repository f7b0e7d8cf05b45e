//! Per-instance host state: the memory limiter (each instance's cap and the process-wide one)
//! and what the guest logged during the current call, and its sandboxed WASI.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use wasmtime::ResourceLimiter;

/// Per-store state: the memory limiter and what the guest logged during the current call.
pub struct HostState {
    pub(super) plugin: Arc<str>,
    pub(super) memory_limit: usize,
    pub(super) memory_denied: bool,
    /// The denial was the process-wide cap, not this instance's own limit.
    pub(super) memory_denied_by_total: bool,
    /// Linear memory this instance holds, bytes (counted in [`MEMORY_IN_USE`]).
    pub(super) memory_bytes: usize,
    /// The bytes of the last approved growth (refunded if the growth then fails).
    pub(super) last_growth: usize,
    pub(super) last_error_log: Option<String>,
    /// The guest's deny-by-default WASI ([`super::sandbox`]) and its resources.
    pub(super) wasi: wasmtime_wasi::WasiCtx,
    pub(super) table: wasmtime_wasi::ResourceTable,
    /// What the guest wrote to stderr during the current call (its end).
    pub(super) stderr: super::sandbox::StderrTail,
    /// What answers an admission policy's context reads during the current call.
    pub(super) context: Option<Arc<dyn super::context_reads::ContextReads>>,
}

impl HostState {
    /// State for a new instance of `plugin` capped at `memory_limit` bytes.
    pub(super) fn new(plugin: Arc<str>, memory_limit: usize) -> HostState {
        let (wasi, stderr) = super::sandbox::wasi_ctx();
        HostState {
            plugin,
            memory_limit,
            memory_denied: false,
            memory_denied_by_total: false,
            memory_bytes: 0,
            last_growth: 0,
            last_error_log: None,
            wasi,
            table: {
                let mut t = wasmtime_wasi::ResourceTable::new();
                t.set_max_capacity(super::sandbox::MAX_RESOURCES);
                t
            },
            stderr,
            context: None,
        }
    }
}

impl HostState {
    /// The guest's `log` import (every contract version's): one line tagged with the plugin;
    /// an error line is kept for the message of a call that then fails.
    pub(super) fn log(&mut self, level: tracing::Level, message: String) {
        let plugin = &*self.plugin;
        match level {
            tracing::Level::TRACE => tracing::trace!(plugin, "{message}"),
            tracing::Level::DEBUG => tracing::debug!(plugin, "{message}"),
            tracing::Level::INFO => tracing::info!(plugin, "{message}"),
            tracing::Level::WARN => tracing::warn!(plugin, "{message}"),
            tracing::Level::ERROR => {
                tracing::error!(plugin, "{message}");
                self.last_error_log = Some(message);
            }
        }
    }
}

impl wasmtime_wasi::WasiView for HostState {
    fn ctx(&mut self) -> wasmtime_wasi::WasiCtxView<'_> {
        wasmtime_wasi::WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The most linear memory all instances together may hold: twice the per-instance limit.
pub(super) fn total_memory_cap(per_instance: usize) -> usize {
    per_instance.saturating_mul(2)
}

/// Linear memory held by every plugin instance of the process, bytes; capped at twice the
/// per-instance limit, so that a burst of calls on huge objects cannot take all the host's
/// memory: past the cap a growing instance is refused, as over its own limit.
pub(super) static MEMORY_IN_USE: AtomicUsize = AtomicUsize::new(0);

/// Linear memory held by every plugin instance of this process right now, bytes (what the
/// process-wide cap counts; warm instances included).
pub fn plugin_memory_in_use() -> usize {
    MEMORY_IN_USE.load(Ordering::SeqCst)
}

impl Drop for HostState {
    fn drop(&mut self) {
        MEMORY_IN_USE.fetch_sub(self.memory_bytes, Ordering::SeqCst);
    }
}

thread_local! {
    /// Bytes of the largest JSON object handed to the next plugin call on this thread (read
    /// and reset by `WasmStrategy::call`), to tell a huge object from a hoarding plugin on a
    /// memory fault.
    pub(super) static INPUT_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl ResourceLimiter for HostState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_limit {
            self.memory_denied = true;
            return Ok(false);
        }
        let grow = desired.saturating_sub(current);
        let before = MEMORY_IN_USE.fetch_add(grow, Ordering::SeqCst);
        if before + grow > total_memory_cap(self.memory_limit) {
            MEMORY_IN_USE.fetch_sub(grow, Ordering::SeqCst);
            self.memory_denied = true;
            self.memory_denied_by_total = true;
            return Ok(false);
        }
        self.memory_bytes += grow;
        self.last_growth = grow;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // Approved but not done: give the accounted bytes back.
        MEMORY_IN_USE.fetch_sub(self.last_growth, Ordering::SeqCst);
        self.memory_bytes -= self.last_growth;
        self.last_growth = 0;
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

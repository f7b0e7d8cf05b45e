//! The WASI a plugin gets: everything a language runtime imports is linked, and none of it
//! reaches outside the instance.
//!
//! Rust components import little WASI, but CPython (componentize-py) and StarlingMonkey
//! (componentize-js) read their environment, the clocks and random bytes while they start and
//! write tracebacks to stderr. The contract ("every export is a pure function of its
//! arguments", `wit/0.2.0/strategy.wit`) is kept by giving them a deny-by-default WASI
//! (`wasmtime_wasi::p2`, the host's own WASI 0.2 implementation):
//! - no environment variables, no arguments, no preopened directories (no filesystem), stdin
//!   closed, no sockets (every address refused, name lookup off);
//! - a wall clock fixed at the Unix epoch and a monotonic clock fixed at 0, so a guest that
//!   reads "now" reads the same thing on every call (a strategy takes time from
//!   `metadata.creationTimestamp`, which the host sets);
//! - random bytes from a generator seeded with a constant, freshly for every instance, so hash
//!   seeds and the like are the same on every instance (determinism, not secrecy: a strategy
//!   has no secrets to make);
//! - stdout discarded; stderr kept as the last [`STDERR_TAIL`] bytes of the current call, which
//!   a failing call's 500 quotes (a Python traceback, a JavaScript exception);
//! - no sleeping: `wasi:clocks/monotonic-clock`'s `subscribe-duration` and `subscribe-instant`
//!   trap ([`deny_timers`]) — wasmtime-wasi waits on tokio's real timer inside the host call,
//!   where the epoch deadline cannot interrupt it, so `time.sleep(3600)` would hold a thread
//!   for an hour;
//! - bounded host memory: at most [`MAX_RANDOM_BYTES`] per random call and
//!   [`MAX_RESOURCES`] live WASI handles per instance.
//!
//! Anything else a component imports from WASI (`wasi:http`, …) is linked as a trap.

use bytes::Bytes;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};
use wasmtime_wasi::{Deterministic, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder};

/// How much of what a guest wrote to stderr during one call is kept, bytes (the end of it).
pub const STDERR_TAIL: usize = 4096;

/// The most bytes one `get-random-bytes` call may ask for (wasmtime-wasi's default is 64 MiB,
/// allocated by the host outside the instance's memory limit).
pub const MAX_RANDOM_BYTES: u64 = 64 << 10;

/// The most WASI handles (streams, pollables) one instance may hold at once.
pub const MAX_RESOURCES: usize = 4096;

/// The seed of every instance's random generators.
const RANDOM_SEED: u64 = 0x7761_736d_2d61_7069; // "wasm-api"

/// A fresh deny-by-default WASI context, and the handle on its stderr tail.
pub fn wasi_ctx() -> (WasiCtx, StderrTail) {
    let stderr = StderrTail::default();
    let ctx = WasiCtxBuilder::new()
        .stderr(stderr.clone())
        .wall_clock(FixedClock)
        .monotonic_clock(FixedClock)
        .secure_random(Deterministic::new(random_bytes()))
        .insecure_random(Deterministic::new(random_bytes()))
        .insecure_random_seed(u128::from(RANDOM_SEED))
        .max_random_size(MAX_RANDOM_BYTES)
        .allow_ip_name_lookup(false)
        .allow_tcp(false)
        .allow_udp(false)
        .build();
    (ctx, stderr)
}

/// The bytes every instance's generators cycle through: 4 KiB of splitmix64 from
/// [`RANDOM_SEED`], so a guest sees varied bytes, the same on every instance.
fn random_bytes() -> Vec<u8> {
    let mut state = RANDOM_SEED;
    (0..512)
        .flat_map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .collect()
}

/// Redefine the monotonic clock's timers (linked by `wasmtime_wasi::p2::add_to_linker_sync`
/// just before) as traps: a hook is a pure function and has nothing to wait for. Errors: the
/// linker refused the definitions.
pub fn deny_timers<T: 'static>(
    linker: &mut wasmtime::component::Linker<T>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut clock = linker.instance("wasi:clocks/monotonic-clock@0.2.12")?;
    for f in ["subscribe-duration", "subscribe-instant"] {
        clock.func_new(f, move |_, _, _, _| {
            wasmtime::bail!(
                "wasi:clocks/monotonic-clock#{f}: strategy plugins may not sleep or wait (hooks are pure functions)"
            )
        })?;
    }
    linker.allow_shadowing(false);
    Ok(())
}

/// Both clocks, stopped at their origin.
struct FixedClock;

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A guest's stderr: the last [`STDERR_TAIL`] bytes written since [`StderrTail::take`].
/// Writing never fails and never blocks, however much a guest writes.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<Vec<u8>>>);

impl StderrTail {
    /// What was written since the last call, as text (lossy UTF-8, trimmed); empties it.
    pub fn take(&self) -> String {
        let bytes = std::mem::take(&mut *self.0.lock().unwrap());
        String::from_utf8_lossy(&bytes).trim().to_string()
    }

    fn push(&self, bytes: &[u8]) {
        let mut kept = self.0.lock().unwrap();
        let bytes = &bytes[bytes.len().saturating_sub(STDERR_TAIL)..];
        let over = (kept.len() + bytes.len()).saturating_sub(STDERR_TAIL);
        kept.drain(..over);
        kept.extend_from_slice(bytes);
    }
}

impl IsTerminal for StderrTail {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for StderrTail {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for StderrTail {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }
    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(1 << 20)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for StderrTail {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for StderrTail {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.push(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_keeps_only_the_tail() {
        let t = StderrTail::default();
        t.push(&vec![b'a'; STDERR_TAIL]);
        t.push(b"end");
        let s = t.take();
        assert_eq!(s.len(), STDERR_TAIL);
        assert!(s.ends_with("aend"));
        t.push(&vec![b'b'; 3 * STDERR_TAIL]);
        assert_eq!(t.take(), "b".repeat(STDERR_TAIL));
        assert_eq!(t.take(), "");
    }
}

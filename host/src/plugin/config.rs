//! The runtime's limits: [`RuntimeConfig`] (per call: deadline, memory; where artifacts are
//! cached) and the constants that bound warm instances.

use std::path::PathBuf;
use std::time::Duration;

/// How often the epoch advances: the granularity of call deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);
/// A warm instance is replaced after this many calls, bounding what a leaking guest can hold.
pub const MAX_CALLS_PER_INSTANCE: u64 = 10_000;
/// A warm instance whose linear memory grew beyond this (a call on a very large object) is
/// dropped after the call instead of kept, so its memory goes back at once.
pub const MAX_WARM_MEMORY: usize = 64 << 20;

/// Limits and paths of the runtime.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Deadline of one hook call (default 1 s). A call past it traps with
    /// [`PluginFault::Timeout`].
    pub call_deadline: Duration,
    /// Cap on one instance's linear memory, bytes (default 1 GiB: what the standard `pods`
    /// plugin needs for the worst pod under the 3 MiB body limit, ~190,000 volumes, is
    /// between 512 MiB and 1 GiB). Instances together may hold at most twice this
    /// (see [`PluginRuntime`]), so concurrent huge requests fail instead of exhausting the
    /// host.
    pub memory_limit: usize,
    /// Directory for precompiled artifacts; `None` disables the disk cache.
    pub cache_dir: Option<PathBuf>,
    /// Compile a component missing from the disk cache in a child process
    /// (`wasm-apiserver plugin precompile`) and load the artifact it writes, so this process
    /// never holds the compiler's peak memory (~900 MB for the 2.7 MB `pods` component). Needs
    /// `cache_dir`; the server sets it, offline tools do not.
    pub compile_in_subprocess: bool,
    /// The most resident memory a compile may use, bytes (`--plugin-compile-memory-mib`,
    /// default 1 GiB): child compiles run one at a time and a child past this is killed and
    /// its component refused, so loading plugins never risks the host's memory.
    pub compile_memory_limit: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_deadline: Duration::from_secs(1),
            memory_limit: 1 << 30,
            cache_dir: None,
            compile_in_subprocess: false,
            compile_memory_limit: 1 << 30,
        }
    }
}

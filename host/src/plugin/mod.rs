//! The plugin runtime: loads strategy components with wasmtime and runs their hooks.
//!
//! - One [`wasmtime::Engine`] per process ([`PluginRuntime`]) with epoch interruption; a ticker
//!   thread advances the epoch every [`EPOCH_TICK`], so a call's deadline is enforced within
//!   one tick.
//! - Compile once per file hash: an in-memory map sha256 → `Component`, and an on-disk cache of
//!   precompiled artifacts (`<cache-dir>/<sha256>-<engine compat hash>.cwasm`) that only this
//!   process writes.
//! - At load: header check (WebAssembly? component, not core module?), WIT version check from the
//!   export name, import check (only `wasm-apiserver:strategy/*` and WASI, the latter linked as
//!   traps: the guest gets no files, network, environment or clock), `InstancePre`, then
//!   `describe` read once and validated, then a smoke run on the plugin's example.
//! - Calls: a warm instance per (thread, loaded plugin) reused across calls, dropped after any
//!   trap (a trapped instance is poisoned), after [`MAX_CALLS_PER_INSTANCE`] calls, or when the
//!   plugin version is dropped. Each call gets the deadline and the memory cap of
//!   [`RuntimeConfig`].
//!
//! Measurements: BENCHMARKS.md (strategy hooks, hot reload, server memory after start).

pub mod describe;
pub mod fixtures;

use crate::strategy::{
    Attributes, CreateOutcome, ErrorType, FieldError, PluginFault, PrinterColumn, Rejection,
    ResourceDescription, Strategy, StrategyError, StrategyResult,
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, ResourceLimiter, Store};

mod bindings {
    wasmtime::component::bindgen!({
        world: "strategy-plugin",
        path: "../wit",
    });
}

use bindings::exports::wasm_apiserver::strategy::strategy::Guest;
use bindings::wasm_apiserver::strategy::types as wit;
use bindings::{StrategyPlugin, StrategyPluginPre};

/// The WIT package this host implements.
pub const WIT_PACKAGE: &str = "wasm-apiserver:strategy";
/// The WIT version this host implements (`wit/strategy.wit`).
pub const WIT_VERSION: &str = "0.1.0";
/// How often the epoch advances: the granularity of call deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);
/// A warm instance is replaced after this many calls, bounding what a leaking guest can hold.
pub const MAX_CALLS_PER_INSTANCE: u64 = 10_000;
/// A warm instance whose linear memory grew beyond this (a call on a very large object) is
/// dropped after the call instead of kept, so its memory goes back at once.
pub const MAX_WARM_MEMORY: usize = 64 << 20;
/// A plugin call whose input JSON is at least this long and that runs out of memory is a
/// request too large for the plugin (413), not a plugin fault (500).
pub const LARGE_INPUT_BYTES: usize = 1 << 20;

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
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_deadline: Duration::from_secs(1),
            memory_limit: 1 << 30,
            cache_dir: None,
            compile_in_subprocess: false,
        }
    }
}

/// Why a plugin did not load. The `Display` form names the plugin and the reason.
#[derive(Debug, thiserror::Error)]
#[error("plugin {plugin:?}: {reason}")]
pub struct LoadError {
    /// Plugin name (file stem).
    pub plugin: String,
    /// What was wrong.
    pub reason: LoadErrorKind,
}

/// The reasons a plugin fails to load.
#[derive(Debug, thiserror::Error)]
pub enum LoadErrorKind {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default())]
    Io {
        /// File path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes are not WebAssembly.
    #[error("not a WebAssembly file (no \\0asm header)")]
    NotWasm,
    /// A core module where a component is required.
    #[error(
        "is a core WebAssembly module, not a component: build it with \
         `cargo build --target wasm32-wasip2` (or wrap it with `wasm-tools component new`)"
    )]
    CoreModule,
    /// wasmtime refused to compile it.
    #[error("does not compile: {0}")]
    Compile(String),
    /// Built against a WIT version this host does not implement.
    #[error(
        "was built against {WIT_PACKAGE}@{found}, but this host implements \
         {WIT_PACKAGE}@{WIT_VERSION}; rebuild it against wit/ version {WIT_VERSION}"
    )]
    WitVersion {
        /// The version the component exports.
        found: String,
    },
    /// Does not export the strategy interface at all.
    #[error("does not export {WIT_PACKAGE}/strategy (it exports: {exports})")]
    NotAStrategy {
        /// The component's export names.
        exports: String,
    },
    /// Imports something the host does not provide.
    #[error("imports {0}, which this host does not provide (plugins may import only {WIT_PACKAGE}/host and WASI)")]
    ForbiddenImport(String),
    /// Instantiation or a load-time call failed.
    #[error("{0}")]
    Instantiate(String),
    /// The self-description is invalid.
    #[error("invalid self-description: {}", .0.join("; "))]
    Describe(Vec<String>),
    /// The smoke run on the plugin's example failed.
    #[error("smoke test on its example failed: {0}")]
    Smoke(String),
}

/// The process-wide runtime: one engine, the compile caches, the limits.
pub struct PluginRuntime {
    engine: Engine,
    config: RuntimeConfig,
    compiled: Mutex<HashMap<String, Component>>,
}

impl PluginRuntime {
    /// Build the engine (epoch interruption on) and start its epoch ticker thread, which stops
    /// when the engine is dropped. Errors: wasmtime refused the configuration.
    pub fn new(config: RuntimeConfig) -> anyhow::Result<Arc<PluginRuntime>> {
        let mut c = Config::new();
        c.epoch_interruption(true);
        c.wasm_component_model(true);
        let engine = Engine::new(&c).map_err(|e| anyhow::anyhow!("wasmtime engine: {e}"))?;
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })?;
        if let Some(dir) = &config.cache_dir {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Arc::new(PluginRuntime {
            engine,
            config,
            compiled: Mutex::new(HashMap::new()),
        }))
    }

    /// The limits in force.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Load a plugin file; its name is the file stem. See [`PluginRuntime::load_bytes`].
    pub fn load_file(&self, path: &Path) -> Result<WasmStrategy, LoadError> {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let bytes = std::fs::read(path).map_err(|source| LoadError {
            plugin: name.clone(),
            reason: LoadErrorKind::Io {
                path: path.to_path_buf(),
                source,
            },
        })?;
        self.load_bytes(&name, &bytes)
    }

    /// Compile (or fetch from cache), check and describe a plugin. Blocking: call it off the
    /// async workers. Errors: every [`LoadErrorKind`].
    pub fn load_bytes(&self, name: &str, bytes: &[u8]) -> Result<WasmStrategy, LoadError> {
        let fail = |reason| LoadError {
            plugin: name.to_string(),
            reason,
        };
        check_header(bytes).map_err(fail)?;
        let sha256 = hex::encode(Sha256::digest(bytes));
        let component = self.compile(&sha256, bytes).map_err(fail)?;
        let wit_version = check_exports(&self.engine, &component).map_err(fail)?;
        check_imports(&self.engine, &component).map_err(fail)?;

        let mut linker: Linker<HostState> = Linker::new(&self.engine);
        StrategyPlugin::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| fail(LoadErrorKind::Instantiate(e.to_string())))?;
        linker
            .define_unknown_imports_as_traps(&component)
            .map_err(|e| fail(LoadErrorKind::Instantiate(e.to_string())))?;
        let pre = linker
            .instantiate_pre(&component)
            .and_then(StrategyPluginPre::new)
            .map_err(|e| fail(LoadErrorKind::Instantiate(format!("{e:#}"))))?;

        let mut strategy = WasmStrategy {
            inner: Arc::new(Inner {
                name: name.to_string(),
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                pre,
                config: self.config.clone(),
                sha256,
                wit_version,
                description: placeholder_description(),
                allow_create_on_update: false,
                allow_unconditional_update: false,
            }),
        };
        live().lock().unwrap().insert(strategy.inner.id);

        // Static metadata, read once.
        let (desc, create_on_update, unconditional) = strategy
            .call("describe", |g, s| {
                Ok((
                    g.call_describe(&mut *s)?,
                    g.call_allow_create_on_update(&mut *s)?,
                    g.call_allow_unconditional_update(&mut *s)?,
                ))
            })
            .map_err(|e| fail(LoadErrorKind::Instantiate(e.to_string())))?;
        let description = describe::convert(desc).map_err(|p| fail(LoadErrorKind::Describe(p)))?;
        let problems = describe::validate(&description);
        if !problems.is_empty() {
            return Err(fail(LoadErrorKind::Describe(problems)));
        }
        {
            let inner = Arc::get_mut(&mut strategy.inner).expect("not shared yet");
            inner.description = description;
            inner.allow_create_on_update = create_on_update;
            inner.allow_unconditional_update = unconditional;
        }
        if let Some(example) = strategy.description().example.clone() {
            smoke(&strategy, &example).map_err(|e| fail(LoadErrorKind::Smoke(e)))?;
        }
        Ok(strategy)
    }

    fn compile(&self, sha256: &str, bytes: &[u8]) -> Result<Component, LoadErrorKind> {
        if let Some(c) = self.compiled.lock().unwrap().get(sha256) {
            return Ok(c.clone());
        }
        let cached = self.config.cache_dir.as_ref().map(|dir| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(&self.engine.precompile_compatibility_hash(), &mut h);
            let compat = std::hash::Hasher::finish(&h);
            dir.join(format!("{sha256}-{compat:016x}.cwasm"))
        });
        let mut component = None;
        if let Some(path) = cached.as_ref().filter(|p| p.exists()) {
            // SAFETY: the cache directory holds only artifacts this runtime serialized itself
            // (written via a temp file + rename below); the file name carries the engine's
            // compatibility hash, and wasmtime re-checks version and configuration.
            match unsafe { Component::deserialize_file(&self.engine, path) } {
                Ok(c) => component = Some(c),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "ignoring unusable precompiled artifact")
                }
            }
        }
        if component.is_none() && self.config.compile_in_subprocess {
            if let Some(path) = &cached {
                component = self.compile_in_child(bytes, path);
            }
        }
        let component = match component {
            Some(c) => c,
            None => {
                let c = Component::new(&self.engine, bytes)
                    .map_err(|e| LoadErrorKind::Compile(format!("{e:#}")))?;
                if let Some(path) = &cached {
                    if let Err(e) = write_artifact(&c, path) {
                        tracing::warn!(path = %path.display(), error = %e, "cannot cache precompiled artifact");
                    }
                }
                c
            }
        };
        self.compiled
            .lock()
            .unwrap()
            .insert(sha256.to_string(), component.clone());
        Ok(component)
    }
}

impl PluginRuntime {
    /// Compile `bytes` in a child process that writes the artifact to `path`, then load it.
    /// `None` when that failed for any reason (the caller compiles in-process, which also
    /// yields the precise compile error).
    fn compile_in_child(&self, bytes: &[u8], path: &Path) -> Option<Component> {
        use std::io::Write;
        let exe = std::env::current_exe().ok()?;
        let mut child = std::process::Command::new(exe)
            .args(["plugin", "precompile", "--out"])
            .arg(path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| tracing::warn!(error = %e, "cannot start the compiler process"))
            .ok()?;
        let written = child.stdin.take().map(|mut i| i.write_all(bytes));
        // Bounded: a compile that hangs is killed (the in-process fallback then reports).
        let started = std::time::Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if started.elapsed() < CHILD_COMPILE_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        if !status.is_some_and(|s| s.success()) || !matches!(written, Some(Ok(()))) {
            tracing::warn!(stderr = %stderr.trim(), "compiling in a child process failed; compiling in-process");
            return None;
        }
        // SAFETY: as for the cache in `compile`: an artifact this binary serialized, named by
        // the engine's compatibility hash; wasmtime re-checks version and configuration.
        unsafe { Component::deserialize_file(&self.engine, path) }
            .map_err(|e| tracing::warn!(error = %e, "cannot load the child's artifact"))
            .ok()
    }

    /// Compile a component and write its precompiled artifact to `out` (temp file + rename):
    /// what `wasm-apiserver plugin precompile` runs in the child process. Errors: the bytes do
    /// not compile, or the file cannot be written.
    pub fn precompile_to(&self, bytes: &[u8], out: &Path) -> anyhow::Result<()> {
        check_header(bytes).map_err(|e| anyhow::anyhow!("{e}"))?;
        let c = Component::new(&self.engine, bytes).map_err(|e| anyhow::anyhow!("{e:#}"))?;
        write_artifact(&c, out)
    }
}

/// How long a child compile may take before it is killed.
const CHILD_COMPILE_TIMEOUT: Duration = Duration::from_secs(300);

fn write_artifact(c: &Component, path: &Path) -> anyhow::Result<()> {
    let bytes = c.serialize().map_err(|e| anyhow::anyhow!("{e}"))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        // Durable before it is renamed into place: the loader maps artifacts unchecked.
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// `\0asm` + version 1 is a core module; `\0asm` + `0d 00 01 00` is a component (layer 1).
fn check_header(bytes: &[u8]) -> Result<(), LoadErrorKind> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadErrorKind::NotWasm);
    }
    if bytes[4..8] == [1, 0, 0, 0] {
        return Err(LoadErrorKind::CoreModule);
    }
    Ok(())
}

/// Find `wasm-apiserver:strategy/strategy@X.Y.Z` among the exports; accept X.Y.Z compatible
/// with [`WIT_VERSION`] (same major, and same minor while major is 0).
fn check_exports(engine: &Engine, c: &Component) -> Result<String, LoadErrorKind> {
    let ty = c.component_type();
    let names: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let prefix = format!("{WIT_PACKAGE}/strategy@");
    let Some(found) = names.iter().find_map(|n| n.strip_prefix(&prefix)) else {
        return Err(LoadErrorKind::NotAStrategy {
            exports: if names.is_empty() {
                "nothing".into()
            } else {
                names.join(", ")
            },
        });
    };
    if compatible(found, WIT_VERSION) {
        Ok(found.to_string())
    } else {
        Err(LoadErrorKind::WitVersion {
            found: found.to_string(),
        })
    }
}

fn compatible(found: &str, ours: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> { v.split('.').filter_map(|p| p.parse().ok()).collect() };
    let (f, o) = (parts(found), parts(ours));
    if f.len() != 3 || o.len() != 3 {
        return false;
    }
    if o[0] == 0 {
        f[0] == 0 && f[1] == o[1]
    } else {
        f[0] == o[0] && f[1] <= o[1]
    }
}

fn check_imports(engine: &Engine, c: &Component) -> Result<(), LoadErrorKind> {
    for (name, _) in c.component_type().imports(engine) {
        let ours = name.starts_with(&format!("{WIT_PACKAGE}/"));
        if !ours && !name.starts_with("wasi:") {
            return Err(LoadErrorKind::ForbiddenImport(name.to_string()));
        }
    }
    Ok(())
}

/// Run the create sequence and get-attrs on the plugin's example.
fn smoke(s: &WasmStrategy, example: &Value) -> Result<(), String> {
    match crate::strategy::sequence::create(
        s,
        example,
        &crate::strategy::sequence::no_meta_validation,
    ) {
        Ok(out) => s
            .get_attrs(&out.object)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(StrategyError::Rejected(r)) => Err(format!("the plugin's own example is refused: {r}")),
        Err(StrategyError::Fault(f)) => Err(f.to_string()),
    }
}

fn placeholder_description() -> ResourceDescription {
    ResourceDescription {
        group: String::new(),
        version: String::new(),
        kind: String::new(),
        list_kind: String::new(),
        plural: String::new(),
        singular: String::new(),
        short_names: Vec::new(),
        categories: Vec::new(),
        namespaced: false,
        subresources: Vec::new(),
        printer_columns: Vec::<PrinterColumn>::new(),
        selectable_fields: Vec::new(),
        openapi_schema: Value::Null,
        example: None,
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Ids of loaded plugin versions still alive; warm instances of dead ones are pruned.
fn live() -> &'static Mutex<HashSet<u64>> {
    static LIVE: OnceLock<Mutex<HashSet<u64>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Per-store state: the memory limiter and what the guest logged during the current call.
pub struct HostState {
    plugin: Arc<str>,
    memory_limit: usize,
    memory_denied: bool,
    /// The denial was the process-wide cap, not this instance's own limit.
    memory_denied_by_total: bool,
    /// Linear memory this instance holds, bytes (counted in [`MEMORY_IN_USE`]).
    memory_bytes: usize,
    /// The bytes of the last approved growth (refunded if the growth then fails).
    last_growth: usize,
    last_error_log: Option<String>,
}

/// The most linear memory all instances together may hold: twice the per-instance limit.
fn total_memory_cap(per_instance: usize) -> usize {
    per_instance.saturating_mul(2)
}

/// Linear memory held by every plugin instance of the process, bytes; capped at twice the
/// per-instance limit, so that a burst of calls on huge objects cannot take all the host's
/// memory: past the cap a growing instance is refused, as over its own limit.
static MEMORY_IN_USE: AtomicUsize = AtomicUsize::new(0);

impl Drop for HostState {
    fn drop(&mut self) {
        MEMORY_IN_USE.fetch_sub(self.memory_bytes, Ordering::SeqCst);
    }
}

thread_local! {
    /// Bytes of the largest JSON object handed to the next plugin call on this thread (read
    /// and reset by `WasmStrategy::call`), to tell a huge object from a hoarding plugin on a
    /// memory fault.
    static INPUT_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
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

impl bindings::wasm_apiserver::strategy::host::Host for HostState {
    fn log(&mut self, level: bindings::wasm_apiserver::strategy::host::LogLevel, message: String) {
        use bindings::wasm_apiserver::strategy::host::LogLevel;
        let plugin = &*self.plugin;
        match level {
            LogLevel::Trace => tracing::trace!(plugin, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info => tracing::info!(plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            LogLevel::Error => {
                tracing::error!(plugin, "{message}");
                self.last_error_log = Some(message);
            }
        }
    }
}

impl wit::Host for HostState {}

struct Warm {
    store: Store<HostState>,
    bindings: StrategyPlugin,
    calls: u64,
}

thread_local! {
    static WARM: RefCell<HashMap<u64, Warm>> = RefCell::new(HashMap::new());
}

struct Inner {
    name: String,
    id: u64,
    pre: StrategyPluginPre<HostState>,
    config: RuntimeConfig,
    sha256: String,
    wit_version: String,
    description: ResourceDescription,
    allow_create_on_update: bool,
    allow_unconditional_update: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        live().lock().unwrap().remove(&self.id);
    }
}

/// A loaded plugin version: the [`Strategy`] implementation over a wasm component. Cheap to
/// clone; all clones share one version. Calls block the calling thread for at most the call
/// deadline: run them off the async workers.
#[derive(Clone)]
pub struct WasmStrategy {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for WasmStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmStrategy")
            .field("name", &self.inner.name)
            .field("sha256", &self.inner.sha256)
            .finish()
    }
}

impl WasmStrategy {
    /// sha256 of the component file, hex.
    pub fn sha256(&self) -> &str {
        &self.inner.sha256
    }

    /// The WIT version the component was built against.
    pub fn wit_version(&self) -> &str {
        &self.inner.wit_version
    }

    fn instantiate(&self) -> Result<Warm, String> {
        let inner = &self.inner;
        let mut store = Store::new(
            inner.pre.engine(),
            HostState {
                plugin: Arc::from(inner.name.as_str()),
                memory_limit: inner.config.memory_limit,
                memory_denied: false,
                memory_denied_by_total: false,
                memory_bytes: 0,
                last_growth: 0,
                last_error_log: None,
            },
        );
        store.limiter(|s| s as &mut dyn ResourceLimiter);
        // What a hook may return is bounded by its memory, not by wasmtime's default 128 MiB
        // per host call: a hook answering a million field errors on a 3 MB object (all
        // within the limits) is a 422, not a fault.
        store.set_hostcall_fuel(inner.config.memory_limit);
        store.set_epoch_deadline(self.deadline_ticks());
        let bindings = inner
            .pre
            .instantiate(&mut store)
            .map_err(|e| format!("cannot instantiate: {e:#}"))?;
        Ok(Warm {
            store,
            bindings,
            calls: 0,
        })
    }

    fn deadline_ticks(&self) -> u64 {
        let tick = EPOCH_TICK.as_millis().max(1);
        (self.inner.config.call_deadline.as_millis().div_ceil(tick) as u64).max(1)
    }

    /// Run `f` on this thread's warm instance (creating it if needed) under the deadline.
    fn call<R>(
        &self,
        hook: &'static str,
        f: impl FnOnce(&Guest, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginFault> {
        let id = self.inner.id;
        let input_bytes = INPUT_BYTES.with(|n| n.take());
        let warm = WARM.with(|w| w.borrow_mut().remove(&id));
        let mut warm = match warm {
            Some(w) => w,
            None => self.instantiate().map_err(|message| PluginFault::Trap {
                plugin: self.inner.name.clone(),
                hook,
                message,
            })?,
        };
        warm.store.set_epoch_deadline(self.deadline_ticks());
        {
            let data = warm.store.data_mut();
            data.memory_denied = false;
            data.memory_denied_by_total = false;
            data.last_error_log = None;
        }
        let guest = warm.bindings.wasm_apiserver_strategy_strategy();
        let started = std::time::Instant::now();
        let result = f(guest, &mut warm.store);
        crate::metrics::metrics()
            .plugin_calls
            .with_label_values(&[self.inner.name.as_str(), hook])
            .observe(started.elapsed().as_secs_f64());
        match result {
            Ok(v) => {
                warm.calls += 1;
                // Keep the instance for the next call unless it is worn, grew large, or memory
                // is scarce (warm instances must not starve the calls that need memory).
                if warm.calls < MAX_CALLS_PER_INSTANCE
                    && warm.store.data().memory_bytes <= MAX_WARM_MEMORY
                    && MEMORY_IN_USE.load(Ordering::SeqCst)
                        <= total_memory_cap(self.inner.config.memory_limit) / 2
                {
                    WARM.with(|w| {
                        let mut w = w.borrow_mut();
                        if w.len() >= 8 {
                            let live = live().lock().unwrap();
                            w.retain(|k, _| live.contains(k));
                        }
                        w.insert(id, warm);
                    });
                }
                Ok(v)
            }
            Err(e) => {
                let fault = self.fault(hook, e, warm.store.data(), input_bytes);
                let kind = match &fault {
                    PluginFault::Timeout { .. } => "timeout",
                    PluginFault::MemoryExceeded { .. } => "memory",
                    PluginFault::Overloaded { .. } => "overloaded",
                    PluginFault::BadOutput { .. } => "output",
                    PluginFault::Trap { .. } => "trap",
                };
                crate::metrics::metrics()
                    .plugin_faults
                    .with_label_values(&[self.inner.name.as_str(), hook, kind])
                    .inc();
                tracing::warn!(plugin = %self.inner.name, hook, error = %fault, "plugin call failed");
                Err(fault)
            }
        }
    }

    fn fault(
        &self,
        hook: &'static str,
        e: wasmtime::Error,
        state: &HostState,
        input_bytes: usize,
    ) -> PluginFault {
        let plugin = self.inner.name.clone();
        if matches!(
            e.downcast_ref::<wasmtime::Trap>(),
            Some(wasmtime::Trap::Interrupt)
        ) {
            return PluginFault::Timeout {
                plugin,
                hook,
                deadline_ms: self.inner.config.call_deadline.as_millis() as u64,
                input_bytes,
            };
        }
        if state.memory_denied_by_total {
            return PluginFault::Overloaded { plugin, hook };
        }
        if state.memory_denied {
            return PluginFault::MemoryExceeded {
                plugin,
                hook,
                limit_bytes: self.inner.config.memory_limit,
                input_bytes,
            };
        }
        let mut message = match e.downcast_ref::<wasmtime::Trap>() {
            Some(t) => format!("wasm trap: {t}"),
            // The root cause, without the wasm backtrace wasmtime attaches as context.
            None => e.root_cause().to_string(),
        };
        if let Some(log) = &state.last_error_log {
            message = format!("{log} ({message})");
        }
        PluginFault::Trap {
            plugin,
            hook,
            message,
        }
    }

    fn bad_output(&self, hook: &'static str, reason: String) -> StrategyError {
        crate::metrics::metrics()
            .plugin_faults
            .with_label_values(&[self.inner.name.as_str(), hook, "output"])
            .inc();
        StrategyError::Fault(PluginFault::BadOutput {
            plugin: self.inner.name.clone(),
            hook,
            reason,
        })
    }

    /// A mutating hook: the rejection, or the returned object checked by [`Self::output`].
    fn mutating(
        &self,
        hook: &'static str,
        input: &Value,
        r: Result<Result<String, wit::HookError>, PluginFault>,
    ) -> StrategyResult<Value> {
        let text = r?.map_err(|e| StrategyError::Rejected(rejection(e)))?;
        self.output(hook, input, &text)
    }

    /// Parse an object a hook returned and check it is one JSON object whose `apiVersion`,
    /// `kind`, `metadata.name` and `metadata.namespace` are those of `input`; anything else is
    /// [`PluginFault::BadOutput`] naming the plugin and `hook`.
    fn output(&self, hook: &'static str, input: &Value, text: &str) -> StrategyResult<Value> {
        let out: Value = serde_json::from_str(text)
            .map_err(|e| self.bad_output(hook, format!("not JSON: {e}")))?;
        if !out.is_object() {
            return Err(self.bad_output(hook, "not a JSON object".into()));
        }
        // Plain lookups rather than `Value::pointer`, which parses its argument on every call.
        fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
            path.iter().try_fold(v, |v, k| v.get(k))
        }
        for path in [
            &["apiVersion"][..],
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
        ] {
            let (before, after) = (at(input, path), at(&out, path));
            if before != after {
                return Err(self.bad_output(
                    hook,
                    format!(
                        "it changed {} from {} to {}",
                        path.join("."),
                        before.map_or("nothing".into(), Value::to_string),
                        after.map_or("nothing".into(), Value::to_string)
                    ),
                ));
            }
        }
        Ok(out)
    }
}

/// An object as the JSON text a hook receives. `serde_json::to_string` rather than `Display`,
/// which goes through the formatting machinery and takes about three times as long.
fn json_text(v: &Value) -> String {
    // Room for a typical object up front: growing from serde_json's default 128 bytes costs
    // several reallocations per call.
    let mut buf = Vec::with_capacity(4096);
    serde_json::to_writer(&mut buf, v).expect("a Value always serializes");
    INPUT_BYTES.with(|n| n.set(n.get().max(buf.len())));
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// Run `f` on `v` as JSON text written into a buffer kept per thread: the hot path (the create
/// sequence) then allocates no input buffer per call. Buffers above 1 MiB are not kept.
fn with_json_text<R>(v: &Value, f: impl FnOnce(&str) -> R) -> R {
    thread_local! {
        static BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let mut buf = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
    buf.clear();
    serde_json::to_writer(&mut buf, v).expect("a Value always serializes");
    INPUT_BYTES.with(|n| n.set(n.get().max(buf.len())));
    let r = f(std::str::from_utf8(&buf).expect("serde_json writes UTF-8"));
    if buf.capacity() <= 1 << 20 {
        BUF.with(|b| *b.borrow_mut() = buf);
    }
    r
}

fn rejection(e: wit::HookError) -> Rejection {
    match e {
        wit::HookError::BadRequest(m) => Rejection::BadRequest(m),
        wit::HookError::Invalid(errs) => {
            Rejection::Invalid(errs.into_iter().map(field_error).collect())
        }
    }
}

fn field_errors(errs: Vec<wit::FieldError>) -> Vec<FieldError> {
    errs.into_iter().map(field_error).collect()
}

fn field_error(e: wit::FieldError) -> FieldError {
    FieldError {
        error_type: match e.type_ {
            wit::ErrorType::Required => ErrorType::Required,
            wit::ErrorType::Invalid => ErrorType::Invalid,
            wit::ErrorType::Duplicate => ErrorType::Duplicate,
            wit::ErrorType::NotSupported => ErrorType::NotSupported,
            wit::ErrorType::Forbidden => ErrorType::Forbidden,
            wit::ErrorType::TooLong => ErrorType::TooLong,
            wit::ErrorType::TooMany => ErrorType::TooMany,
            wit::ErrorType::Internal => ErrorType::Internal,
            wit::ErrorType::TypeInvalid => ErrorType::TypeInvalid,
            wit::ErrorType::NotFound => ErrorType::NotFound,
        },
        field: e.field,
        // A bad value that is not JSON is kept as a string rather than dropped.
        bad_value: e
            .bad_value
            .map(|v| serde_json::from_str(&v).unwrap_or(Value::String(v))),
        detail: e.detail,
    }
}

impl Strategy for WasmStrategy {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn description(&self) -> &ResourceDescription {
        &self.inner.description
    }

    fn allow_create_on_update(&self) -> bool {
        self.inner.allow_create_on_update
    }

    fn allow_unconditional_update(&self) -> bool {
        self.inner.allow_unconditional_update
    }

    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let text = json_text(obj);
        let r = self.call("prepare-for-create", |g, s| {
            g.call_prepare_for_create(s, &text)
        });
        self.mutating("prepare-for-create", obj, r)
    }

    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        let text = json_text(obj);
        Ok(field_errors(
            self.call("validate", |g, s| g.call_validate(s, &text))?,
        ))
    }

    fn warnings_on_create(&self, obj: &Value) -> StrategyResult<Vec<String>> {
        let text = json_text(obj);
        Ok(self.call("warnings-on-create", |g, s| {
            g.call_warnings_on_create(s, &text)
        })?)
    }

    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        let text = json_text(obj);
        let r = self.call("canonicalize", |g, s| g.call_canonicalize(s, &text));
        self.mutating("canonicalize", obj, r)
    }

    /// One `create-sequence` call; its object gets the checks of the separate mutating hooks.
    fn create_sequence(&self, obj: &Value) -> StrategyResult<CreateOutcome> {
        const HOOK: &str = "create-sequence";
        let out = with_json_text(obj, |text| {
            self.call(HOOK, |g, s| g.call_create_sequence(s, text))
        })?
        .map_err(|e| StrategyError::Rejected(rejection(e)))?;
        Ok(CreateOutcome {
            object: self.output(HOOK, obj, &out.object)?,
            errors: field_errors(out.errors),
            warnings: out.warnings,
        })
    }

    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let (n, o) = (json_text(new), json_text(old));
        let r = self.call("prepare-for-update", |g, s| {
            g.call_prepare_for_update(s, &n, &o)
        });
        self.mutating("prepare-for-update", new, r)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(field_errors(self.call("validate-update", |g, s| {
            g.call_validate_update(s, &n, &o)
        })?))
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(self.call("warnings-on-update", |g, s| {
            g.call_warnings_on_update(s, &n, &o)
        })?)
    }

    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let (n, o) = (json_text(new), json_text(old));
        let r = self.call("prepare-for-status-update", |g, s| {
            g.call_prepare_for_status_update(s, &n, &o)
        });
        self.mutating("prepare-for-status-update", new, r)
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(field_errors(
            self.call("validate-status-update", |g, s| {
                g.call_validate_status_update(s, &n, &o)
            })?,
        ))
    }

    fn warnings_on_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(self.call("warnings-on-status-update", |g, s| {
            g.call_warnings_on_status_update(s, &n, &o)
        })?)
    }

    fn check_graceful_delete(
        &self,
        obj: &Value,
        requested: Option<i64>,
    ) -> StrategyResult<Option<i64>> {
        let text = json_text(obj);
        Ok(self.call("check-graceful-delete", |g, s| {
            g.call_check_graceful_delete(s, &text, requested)
        })?)
    }

    fn validate_delete(&self, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let text = json_text(old);
        Ok(field_errors(self.call("validate-delete", |g, s| {
            g.call_validate_delete(s, &text)
        })?))
    }

    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>> {
        let text = json_text(obj);
        let cells = self.call("printer-cells", |g, s| g.call_printer_cells(s, &text))?;
        cells
            .into_iter()
            .map(|c| {
                serde_json::from_str(&c)
                    .map_err(|e| self.bad_output("printer-cells", format!("cell is not JSON: {e}")))
            })
            .collect()
    }

    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes> {
        let text = json_text(obj);
        let a = self
            .call("get-attrs", |g, s| g.call_get_attrs(s, &text))?
            .map_err(|e| StrategyError::Rejected(rejection(e)))?;
        Ok(Attributes {
            labels: a.labels,
            fields: a.fields,
        })
    }
}

//! [`PluginRuntime`]: one wasmtime engine per process with epoch interruption (a ticker thread
//! advances the epoch every [`EPOCH_TICK`], so a call's deadline holds within one tick), the
//! compile caches (in memory by sha256, on disk as precompiled artifacts, compiled in a child
//! process when the server asks), and loading: checks, linking, self-description, smoke run.

use super::config::{RuntimeConfig, EPOCH_TICK};
use super::describe;
use super::host_state::HostState;
use super::load::{
    admission_export, check_exports, check_header, check_imports, stub_unknown_imports, LoadError,
    LoadErrorKind, ADMISSION_PACKAGE, WIT_PACKAGE,
};
use super::sandbox;
use super::wasm_strategy::{live, Configuration, Inner, WasmStrategy, NEXT_ID};
use super::wit::{admission_v0_1, v0_1, v0_2, v0_3, Pre};
use crate::strategy::webhook_converter::WebhookConverter;
use crate::strategy::{PrinterColumn, ResourceDescription, Strategy, StrategyError};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine};

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
    /// async workers. Errors: every [`LoadErrorKind`]; a configured component
    /// ([`PluginRuntime::load_configured`]) is [`LoadErrorKind::WrongWorld`].
    pub fn load_bytes(&self, name: &str, bytes: &[u8]) -> Result<WasmStrategy, LoadError> {
        let component = self.link(name, bytes)?;
        refuse_admission(&component)?;
        if component.inner.configuration.is_none()
            && matches!(*component.inner.pre, Pre::V0_3Configured(_))
        {
            return Err(LoadError {
                plugin: name.to_string(),
                reason: LoadErrorKind::WrongWorld(format!(
                    "exports {WIT_PACKAGE}/configured (it serves the resources it is configured \
                     with, e.g. CustomResourceDefinitions), not one resource of its own"
                )),
            });
        }
        describe_and_smoke(component)
    }

    /// Compile (or fetch from cache) and check a configured component (world
    /// `configured-strategy-plugin` of `wit/0.3.0/strategy.wit`): nothing of it runs until
    /// [`ConfiguredPlugin::configure`]. Errors: as [`PluginRuntime::load_bytes`]; a plain
    /// strategy is [`LoadErrorKind::WrongWorld`].
    pub fn load_configured(&self, name: &str, bytes: &[u8]) -> Result<ConfiguredPlugin, LoadError> {
        let component = self.link(name, bytes)?;
        refuse_admission(&component)?;
        if !matches!(*component.inner.pre, Pre::V0_3Configured(_)) {
            return Err(LoadError {
                plugin: name.to_string(),
                reason: LoadErrorKind::WrongWorld(format!(
                    "does not export {WIT_PACKAGE}/configured@0.3: it serves one resource of its \
                     own and takes no configuration"
                )),
            });
        }
        Ok(ConfiguredPlugin { component })
    }

    /// Header, compile, export and import checks, linking against the bindings of the contract
    /// version (and world) the component exports — a strategy's, or an admission policy's
    /// (`wit/admission/`). Nothing of the component runs yet.
    pub(super) fn link(&self, name: &str, bytes: &[u8]) -> Result<WasmStrategy, LoadError> {
        let fail = |reason| LoadError {
            plugin: name.to_string(),
            reason,
        };
        check_header(bytes).map_err(fail)?;
        let sha256 = hex::encode(Sha256::digest(bytes));
        let component = self.compile(&sha256, bytes).map_err(fail)?;
        let mut linker: Linker<HostState> = Linker::new(&self.engine);
        let instantiate = |e: wasmtime::Error| fail(LoadErrorKind::Instantiate(e.to_string()));
        let admission = admission_export(&self.engine, &component)
            .transpose()
            .map_err(fail)?;
        let (wit_version, package) = match &admission {
            Some(v) => (v.clone(), ADMISSION_PACKAGE),
            None => {
                let (v, _) = check_exports(&self.engine, &component).map_err(fail)?;
                (v, WIT_PACKAGE)
            }
        };
        check_imports(&self.engine, &component, package).map_err(fail)?;
        let configured =
            admission.is_none() && check_exports(&self.engine, &component).is_ok_and(|(_, c)| c);

        // The bindings of the contract version the component exports (`check_exports`
        // accepted one of `wit::VERSIONS`, `admission_export` the admission one).
        let minor = if admission.is_some() {
            0
        } else if wit_version.starts_with("0.1.") {
            1
        } else if wit_version.starts_with("0.2.") {
            2
        } else {
            3
        };
        match minor {
            0 => admission_v0_1::AdmissionPlugin::add_to_linker::<HostState, HasSelf<HostState>>(
                &mut linker,
                |s| s,
            ),
            1 => v0_1::StrategyPlugin::add_to_linker::<HostState, HasSelf<HostState>>(
                &mut linker,
                |s| s,
            ),
            2 => v0_2::StrategyPlugin::add_to_linker::<HostState, HasSelf<HostState>>(
                &mut linker,
                |s| s,
            ),
            // Both 0.3 worlds import the same `host` and `types`.
            _ => v0_3::StrategyPlugin::add_to_linker::<HostState, HasSelf<HostState>>(
                &mut linker,
                |s| s,
            ),
        }
        .map_err(instantiate)?;
        // WASI, deny by default (`sandbox.rs`): what language runtimes import to start.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(instantiate)?;
        sandbox::deny_timers(&mut linker).map_err(instantiate)?;
        stub_unknown_imports(&self.engine, &mut linker, &component, package)
            .map_err(instantiate)?;
        let pre = linker.instantiate_pre(&component).and_then(|pre| {
            Ok(match (minor, configured) {
                (0, _) => Pre::Admission(admission_v0_1::AdmissionPluginPre::new(pre)?),
                (1, _) => Pre::V0_1(v0_1::StrategyPluginPre::new(pre)?),
                (2, _) => Pre::V0_2(v0_2::StrategyPluginPre::new(pre)?),
                (_, false) => Pre::V0_3(v0_3::StrategyPluginPre::new(pre)?),
                (_, true) => Pre::V0_3Configured(v0_3::ConfiguredStrategyPluginPre::new(pre)?),
            })
        });
        let pre = pre.map_err(|e| fail(LoadErrorKind::Instantiate(format!("{e:#}"))))?;

        let strategy = WasmStrategy {
            inner: Arc::new(Inner {
                name: name.to_string(),
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                pre: Arc::new(pre),
                config: self.config.clone(),
                sha256,
                wit_version,
                description: placeholder_description(),
                allow_create_on_update: false,
                allow_unconditional_update: false,
                configuration: None,
            }),
        };
        live().lock().unwrap().insert(strategy.inner.id);
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
                component = Some(self.compile_in_child(bytes, path)?);
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

/// An admission policy where a strategy is required: [`LoadErrorKind::WrongWorld`].
fn refuse_admission(component: &WasmStrategy) -> Result<(), LoadError> {
    if matches!(*component.inner.pre, Pre::Admission(_)) {
        return Err(LoadError {
            plugin: component.inner.name.clone(),
            reason: LoadErrorKind::WrongWorld(format!(
                "exports {ADMISSION_PACKAGE}/admission: it is an admission policy (an \
                 AdmissionPlugin object serves it), not a strategy"
            )),
        });
    }
    Ok(())
}

/// Read a strategy's static metadata (`describe`, `allow-create-on-update`,
/// `allow-unconditional-update`) once, check the description, and run the smoke test on its
/// example. `strategy` must not be shared yet.
fn describe_and_smoke(mut strategy: WasmStrategy) -> Result<WasmStrategy, LoadError> {
    let name = strategy.inner.name.clone();
    let fail = |reason| LoadError {
        plugin: name.clone(),
        reason,
    };
    let (description, create_on_update, unconditional) = strategy
        .call("describe", |g, s| {
            Ok((
                g.describe(&mut *s)?,
                g.allow_create_on_update(&mut *s)?,
                g.allow_unconditional_update(&mut *s)?,
            ))
        })
        .map_err(|e| fail(LoadErrorKind::Instantiate(e.to_string())))?;
    let description = description.map_err(|p| fail(LoadErrorKind::Describe(p)))?;
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

/// A loaded configured component (`configured-strategy-plugin`, `wit/0.3.0/strategy.wit`):
/// one compiled component serving any number of resources, each a [`WasmStrategy`] made by
/// [`ConfiguredPlugin::configure`]. Every configuration runs on the component's warm instances,
/// each of which builds a `configured-strategy` handle per configuration on first use.
#[derive(Clone, Debug)]
pub struct ConfiguredPlugin {
    component: WasmStrategy,
}

impl ConfiguredPlugin {
    /// The component's name (its file stem).
    pub fn name(&self) -> &str {
        &self.component.inner.name
    }

    /// sha256 of the component file, hex.
    pub fn sha256(&self) -> &str {
        self.component.sha256()
    }

    /// The strategy of one resource: `configure(config)` on a warm instance, then `describe`
    /// read and checked and the smoke test run as for a plain plugin. Blocking (it calls the
    /// component): call it off the async workers. Errors: the component refused the
    /// configuration ([`LoadErrorKind::Instantiate`] with its message), its description is
    /// invalid, or it failed.
    pub fn configure(&self, config: &str) -> Result<WasmStrategy, LoadError> {
        self.configure_with(config, None)
    }

    /// [`ConfiguredPlugin::configure`], converting between the resource's versions through
    /// `webhook` instead of the component's `convert` when given (a CRD's
    /// `spec.conversion.strategy: Webhook`: the host makes the HTTPS call).
    pub fn configure_with(
        &self,
        config: &str,
        webhook: Option<Arc<WebhookConverter>>,
    ) -> Result<WasmStrategy, LoadError> {
        let c = &self.component.inner;
        let strategy = WasmStrategy {
            inner: Arc::new(Inner {
                name: c.name.clone(),
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                pre: c.pre.clone(),
                config: c.config.clone(),
                sha256: c.sha256.clone(),
                wit_version: c.wit_version.clone(),
                description: placeholder_description(),
                allow_create_on_update: false,
                allow_unconditional_update: false,
                configuration: Some(Configuration {
                    text: Arc::from(config),
                    component: c.clone(),
                    webhook,
                }),
            }),
        };
        live().lock().unwrap().insert(strategy.inner.id);
        describe_and_smoke(strategy)
    }
}

impl PluginRuntime {
    /// Compile `bytes` in a child process that writes the artifact to `path`, then load it.
    /// One child at a time per process, each killed once its resident memory (sampled every
    /// 5 ms) passes [`RuntimeConfig::compile_memory_limit`], with at most two compiler
    /// threads (`RAYON_NUM_THREADS`), so a node's core count does not raise the peak.
    /// Errors: [`LoadErrorKind::Compile`] when the child cannot start, passes the budget or
    /// [`CHILD_COMPILE_TIMEOUT`], fails (its own `error: …` line, e.g. the bytes do not
    /// compile) or leaves an unusable artifact — never retried in this process, which would
    /// hold the memory the child was stopped for.
    fn compile_in_child(&self, bytes: &[u8], path: &Path) -> Result<Component, LoadErrorKind> {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let limit = self.config.compile_memory_limit;
        let fail = |m: String| LoadErrorKind::Compile(m);
        // `/proc/self/exe` starts this very binary even when its file was replaced.
        let mut child = std::process::Command::new("/proc/self/exe")
            .args(["plugin", "precompile", "--out"])
            .arg(path)
            .env("RUST_LOG", "error")
            .env("RAYON_NUM_THREADS", "2")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot start the compiler process: {e}")))?;
        let pid = child.id();
        // Its stderr is read as it comes (the last 8 KiB kept), so a chatty child never
        // blocks on a full pipe.
        let stderr = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut kept: Vec<u8> = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = std::io::Read::read(&mut e, &mut buf) {
                    if n == 0 {
                        break;
                    }
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > 8192 {
                        kept.drain(..kept.len() - 8192);
                    }
                }
                String::from_utf8_lossy(&kept).into_owned()
            })
        });
        let started = std::time::Instant::now();
        // The child reads all of stdin before it compiles, so memory cannot grow meanwhile.
        let written = child
            .stdin
            .take()
            .map(|mut i| std::io::Write::write_all(&mut i, bytes));
        let stop = |child: &mut std::process::Child| {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(path.with_extension(format!("tmp{pid}")));
        };
        let mut peak: u64 = 0;
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) if started.elapsed() < CHILD_COMPILE_TIMEOUT => {
                    let rss = resident_bytes(pid).unwrap_or(0);
                    peak = peak.max(rss);
                    if rss > limit {
                        stop(&mut child);
                        return Err(fail(format!(
                            "compiling it needs more than the compile memory budget of {} MiB (--plugin-compile-memory-mib); stopped at {} MiB",
                            limit >> 20,
                            rss >> 20
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {
                    stop(&mut child);
                    return Err(fail(format!(
                        "compiling it took longer than {CHILD_COMPILE_TIMEOUT:?}; stopped"
                    )));
                }
            }
        };
        tracing::debug!(
            bytes = bytes.len(),
            peak_rss_bytes = peak,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "plugin compiled in a child process"
        );
        let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
        if !status.success() {
            // The child's own error (`error: …`, the last line `main` prints), else its status.
            let reason = stderr
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .map(str::to_string)
                .unwrap_or_else(|| format!("the compiler process failed ({status})"));
            return Err(fail(reason));
        }
        if let Some(Err(e)) = written {
            return Err(fail(format!(
                "cannot hand the component to the compiler process: {e}"
            )));
        }
        // SAFETY: as for the cache in `compile`: an artifact this binary serialized, named by
        // the engine's compatibility hash; wasmtime re-checks version and configuration.
        unsafe { Component::deserialize_file(&self.engine, path) }
            .map_err(|e| fail(format!("cannot load the compiled artifact: {e}")))
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

/// A process's resident set (`VmRSS` of `/proc/<pid>/status`), bytes.
fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
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
        return_deleted_object: false,
        versions: Vec::new(),
    }
}

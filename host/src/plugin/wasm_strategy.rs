//! [`WasmStrategy`]: the [`Strategy`] implementation over a loaded component. Each call runs on
//! the calling thread's warm instance (created on first use, dropped after a trap, after
//! [`MAX_CALLS_PER_INSTANCE`] calls, when it grew past [`MAX_WARM_MEMORY`], or with its
//! plugin version) under the call deadline and memory cap; a failure is a [`PluginFault`].

use super::config::{RuntimeConfig, EPOCH_TICK, MAX_CALLS_PER_INSTANCE, MAX_WARM_MEMORY};
use super::host_state::{total_memory_cap, HostState, INPUT_BYTES, MEMORY_IN_USE};
use super::wit::{v0_3, Guest, Instance, Pre};
use crate::strategy::webhook_converter::WebhookConverter;
use crate::strategy::{
    Attributes, CreateOutcome, FieldError, PluginFault, Rejection, ResourceDescription, Strategy,
    StrategyError, StrategyResult, UpdateOutcome,
};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime::component::ResourceAny;
use wasmtime::{ResourceLimiter, Store};

pub(super) static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Ids of loaded plugin versions still alive; warm instances of dead ones are pruned.
pub(super) fn live() -> &'static Mutex<HashSet<u64>> {
    static LIVE: OnceLock<Mutex<HashSet<u64>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

struct Warm {
    store: Store<HostState>,
    instance: Instance,
    calls: u64,
    /// A configured component's `configured-strategy` handles, by configuration id.
    handles: HashMap<u64, ResourceAny>,
}

thread_local! {
    static WARM: RefCell<HashMap<u64, Warm>> = RefCell::new(HashMap::new());
}

/// One loaded plugin version (or one configuration of a configured component), shared by
/// every clone of its [`WasmStrategy`].
pub(super) struct Inner {
    pub(super) name: String,
    pub(super) id: u64,
    pub(super) pre: Arc<Pre>,
    pub(super) config: RuntimeConfig,
    pub(super) sha256: String,
    pub(super) wit_version: String,
    pub(super) description: ResourceDescription,
    pub(super) allow_create_on_update: bool,
    pub(super) allow_unconditional_update: bool,
    /// Set for one configuration of a configured component.
    pub(super) configuration: Option<Configuration>,
}

/// What makes a [`WasmStrategy`] one resource of a configured component.
pub(super) struct Configuration {
    /// The text `configure` is called with.
    pub(super) text: Arc<str>,
    /// The loaded component: its id keys the warm instances every configuration shares, and
    /// holding it keeps them alive.
    pub(super) component: Arc<Inner>,
    /// The CRD's conversion webhook, called for `convert` instead of the component
    /// ([`ConfiguredPlugin::configure_with`](super::ConfiguredPlugin::configure_with)).
    pub(super) webhook: Option<Arc<WebhookConverter>>,
}

impl Inner {
    /// The key of the warm instances this strategy runs on: the component's id, which every
    /// configuration of a configured component shares.
    fn instance_key(&self) -> u64 {
        self.configuration
            .as_ref()
            .map_or(self.id, |c| c.component.id)
    }
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
    pub(super) inner: Arc<Inner>,
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

    /// A stored object as it is to be answered: a configured strategy's `read` (the CRD
    /// plugin prunes and defaults it by the current schema, `wit/0.3.0/strategy.wit`); the
    /// object itself for other components. Errors: the plugin refused or failed
    /// ([`PluginFault`]: the object is stored, the client did nothing wrong), or returned
    /// something that is not the same object.
    pub fn read_stored(&self, obj: &Value) -> StrategyResult<Value> {
        const HOOK: &str = "read";
        if self.inner.configuration.is_none() {
            return Ok(obj.clone());
        }
        let out = with_json_text(obj, |text| self.call(HOOK, |g, s| g.read(s, text)))?;
        match out {
            None => Ok(obj.clone()),
            Some(Ok(text)) => self.output(HOOK, obj, &text),
            Some(Err(r)) => Err(self.bad_output(HOOK, format!("it refused a stored object: {r}"))),
        }
    }

    fn instantiate(&self) -> Result<Warm, String> {
        let inner = &self.inner;
        let pre = &inner.pre;
        let mut store = Store::new(
            pre.engine(),
            HostState::new(Arc::from(inner.name.as_str()), inner.config.memory_limit),
        );
        store.limiter(|s| s as &mut dyn ResourceLimiter);
        // What a hook may return is bounded by its memory, not by wasmtime's default 128 MiB
        // per host call: a hook answering a million field errors on a 3 MB object (all
        // within the limits) is a 422, not a fault.
        store.set_hostcall_fuel(inner.config.memory_limit);
        store.set_epoch_deadline(self.deadline_ticks());
        let instance = pre.instantiate(&mut store).map_err(|e| {
            let stderr = store.data().stderr.take();
            if stderr.is_empty() {
                format!("cannot instantiate: {e:#}")
            } else {
                format!("cannot instantiate: {e:#}; stderr: {stderr}")
            }
        })?;
        Ok(Warm {
            store,
            instance,
            calls: 0,
            handles: HashMap::new(),
        })
    }

    fn deadline_ticks(&self) -> u64 {
        let tick = EPOCH_TICK.as_millis().max(1);
        (self.inner.config.call_deadline.as_millis().div_ceil(tick) as u64).max(1)
    }

    /// Run `f` on this thread's warm instance (creating it if needed) under the deadline.
    pub(super) fn call<R>(
        &self,
        hook: &'static str,
        f: impl FnOnce(&dyn Guest, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginFault> {
        self.call_instance(hook, |instance, handles, store| {
            match (&self.inner.configuration, instance.guest()) {
                (None, Some(guest)) => f(guest, store),
                (Some(c), None) => {
                    let api = instance.configured().expect("a configured instance");
                    let handle = configured_handle(store, handles, &api, self.inner.id, c)?;
                    f(&v0_3::ConfiguredGuest { api, handle }, store)
                }
                _ => Err(wasmtime::Error::msg(
                    "a configured component is called through one of its configurations",
                )),
            }
        })
    }

    /// Run `f` on this thread's warm instance of the component (creating it if needed) under
    /// the deadline and the memory cap, with the instance's configured handles: what every
    /// call of every world shares (instance reuse, fault classification, metrics).
    pub(super) fn call_instance<R>(
        &self,
        hook: &'static str,
        f: impl FnOnce(
            &Instance,
            &mut HashMap<u64, ResourceAny>,
            &mut Store<HostState>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, PluginFault> {
        let id = self.inner.instance_key();
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
            data.stderr.take();
        }
        let started = std::time::Instant::now();
        let result = f(&warm.instance, &mut warm.handles, &mut warm.store);
        PLUGIN_CALLS
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
                    PluginFault::ConversionWebhook { .. } => "webhook",
                };
                PLUGIN_FAULTS
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
        // A Python traceback or a JavaScript exception: what the guest wrote to stderr.
        let stderr = state.stderr.take();
        if !stderr.is_empty() {
            message = format!("{message}; stderr: {stderr}");
        }
        PluginFault::Trap {
            plugin,
            hook,
            message,
        }
    }

    /// Count and log a conversion webhook's failure as a fault of this configuration.
    fn webhook_failed(&self, e: &StrategyError) {
        PLUGIN_FAULTS
            .with_label_values(&[self.inner.name.as_str(), "convert", "webhook"])
            .inc();
        tracing::warn!(plugin = %self.inner.name, error = %e, "conversion webhook failed");
    }

    fn bad_output(&self, hook: &'static str, reason: String) -> StrategyError {
        PLUGIN_FAULTS
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
        r: Result<Result<String, Rejection>, PluginFault>,
    ) -> StrategyResult<Value> {
        let text = r?.map_err(StrategyError::Rejected)?;
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

/// The handle of configuration `id` in this instance, built by `configure` on first use. A
/// new handle first drops those of configurations no longer alive, so that an instance does
/// not keep the state of replaced CRDs until it is recycled.
fn configured_handle(
    store: &mut Store<HostState>,
    handles: &mut HashMap<u64, ResourceAny>,
    api: &v0_3::GuestConfiguredStrategy<'_>,
    id: u64,
    c: &Configuration,
) -> wasmtime::Result<ResourceAny> {
    if let Some(h) = handles.get(&id) {
        return Ok(*h);
    }
    let dead: Vec<u64> = {
        let live = live().lock().unwrap();
        handles
            .keys()
            .filter(|k| !live.contains(k))
            .copied()
            .collect()
    };
    for k in dead {
        if let Some(h) = handles.remove(&k) {
            h.resource_drop(&mut *store)?;
        }
    }
    let handle = v0_3::configure(api, store, &c.text)?
        .map_err(|m| wasmtime::Error::msg(format!("it refused its configuration: {m}")))?;
    handles.insert(id, handle);
    Ok(handle)
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
        let r = self.call("prepare-for-create", |g, s| g.prepare_for_create(s, &text));
        self.mutating("prepare-for-create", obj, r)
    }

    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        let text = json_text(obj);
        Ok(self.call("validate", |g, s| g.validate(s, &text))?)
    }

    fn warnings_on_create(&self, obj: &Value) -> StrategyResult<Vec<String>> {
        let text = json_text(obj);
        Ok(self.call("warnings-on-create", |g, s| g.warnings_on_create(s, &text))?)
    }

    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        let text = json_text(obj);
        let r = self.call("canonicalize", |g, s| g.canonicalize(s, &text));
        self.mutating("canonicalize", obj, r)
    }

    /// One `create-sequence` call; its object gets the checks of the separate mutating hooks.
    fn create_sequence(&self, obj: &Value) -> StrategyResult<CreateOutcome> {
        const HOOK: &str = "create-sequence";
        let out = with_json_text(obj, |text| {
            self.call(HOOK, |g, s| g.create_sequence(s, text))
        })?
        .map_err(StrategyError::Rejected)?;
        Ok(CreateOutcome {
            object: self.output(HOOK, obj, &out.object)?,
            errors: out.errors,
            warnings: out.warnings,
        })
    }

    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let (n, o) = (json_text(new), json_text(old));
        let r = self.call("prepare-for-update", |g, s| g.prepare_for_update(s, &n, &o));
        self.mutating("prepare-for-update", new, r)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(self.call("validate-update", |g, s| g.validate_update(s, &n, &o))?)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(self.call("warnings-on-update", |g, s| g.warnings_on_update(s, &n, &o))?)
    }

    /// One `update-sequence` call for a 0.3 component (the steps for older ones); its object
    /// gets the checks of the separate mutating hooks.
    fn update_sequence(
        &self,
        new: &Value,
        old: &Value,
        restore: &dyn Fn(&mut Value),
    ) -> StrategyResult<UpdateOutcome> {
        const HOOK: &str = "update-sequence";
        let o = json_text(old);
        let out = with_json_text(new, |n| self.call(HOOK, |g, s| g.update_sequence(s, n, &o)))?;
        let Some(out) = out else {
            return crate::strategy::update_in_steps(self, new, old, restore);
        };
        let out = out.map_err(StrategyError::Rejected)?;
        Ok(UpdateOutcome {
            object: self.output(HOOK, new, &out.object)?,
            errors: out.errors,
            warnings: out.warnings,
        })
    }

    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let (n, o) = (json_text(new), json_text(old));
        let r = self.call("prepare-for-status-update", |g, s| {
            g.prepare_for_status_update(s, &n, &o)
        });
        self.mutating("prepare-for-status-update", new, r)
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(self.call("validate-status-update", |g, s| {
            g.validate_status_update(s, &n, &o)
        })?)
    }

    fn warnings_on_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Vec<String>> {
        let (n, o) = (json_text(new), json_text(old));
        Ok(self.call("warnings-on-status-update", |g, s| {
            g.warnings_on_status_update(s, &n, &o)
        })?)
    }

    fn check_graceful_delete(
        &self,
        obj: &Value,
        requested: Option<i64>,
    ) -> StrategyResult<Option<i64>> {
        let text = json_text(obj);
        Ok(self.call("check-graceful-delete", |g, s| {
            g.check_graceful_delete(s, &text, requested)
        })?)
    }

    fn validate_delete(&self, old: &Value) -> StrategyResult<Vec<FieldError>> {
        let text = json_text(old);
        Ok(self.call("validate-delete", |g, s| g.validate_delete(s, &text))?)
    }

    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>> {
        let text = json_text(obj);
        let cells = self.call("printer-cells", |g, s| g.printer_cells(s, &text))?;
        cells
            .into_iter()
            .map(|c| {
                serde_json::from_str(&c)
                    .map_err(|e| self.bad_output("printer-cells", format!("cell is not JSON: {e}")))
            })
            .collect()
    }

    /// One `convert` call; the result must be one JSON object in `desired_api_version` of the
    /// same kind with the same name, namespace and uid. As kube's webhook converter
    /// (`restoreObjectMeta` in apiextensions-apiserver's `webhook_converter.go`), only labels
    /// and annotations — maps of strings — are taken from the plugin's metadata: the rest is
    /// the input's. A conversion the plugin refuses is a fault too (500): the object is stored,
    /// so the client did nothing wrong.
    fn reads_stored(&self) -> bool {
        self.inner.configuration.is_some()
    }

    fn read_stored(&self, obj: &Value) -> StrategyResult<Value> {
        WasmStrategy::read_stored(self, obj)
    }

    fn convert_list(
        &self,
        objs: &[&Value],
        desired_api_version: &str,
    ) -> StrategyResult<Vec<Value>> {
        let configuration = self.inner.configuration.as_ref();
        match configuration.and_then(|c| c.webhook.as_ref()) {
            Some(webhook) => webhook
                .convert_list(objs, desired_api_version)
                .inspect_err(|e| self.webhook_failed(e)),
            None => objs
                .iter()
                .map(|o| self.convert(o, desired_api_version))
                .collect(),
        }
    }

    fn convert(&self, obj: &Value, desired_api_version: &str) -> StrategyResult<Value> {
        const HOOK: &str = "convert";
        if obj.get("apiVersion").and_then(Value::as_str) == Some(desired_api_version) {
            return Ok(obj.clone());
        }
        let configuration = self.inner.configuration.as_ref();
        if let Some(webhook) = configuration.and_then(|c| c.webhook.as_ref()) {
            return webhook
                .convert(obj, desired_api_version)
                .inspect_err(|e| self.webhook_failed(e));
        }
        let text = with_json_text(obj, |text| {
            self.call(HOOK, |g, s| g.convert(s, text, desired_api_version))
        })?
        .map_err(|r| {
            self.bad_output(
                HOOK,
                format!("it refused the conversion to {desired_api_version}: {r}"),
            )
        })?;
        let mut out: Value = serde_json::from_str(&text)
            .map_err(|e| self.bad_output(HOOK, format!("not JSON: {e}")))?;
        let Some(fields) = out.as_object_mut() else {
            return Err(self.bad_output(HOOK, "not a JSON object".into()));
        };
        if fields.get("apiVersion").and_then(Value::as_str) != Some(desired_api_version) {
            return Err(self.bad_output(
                HOOK,
                format!(
                    "asked for apiVersion {desired_api_version}, it returned {}",
                    fields
                        .get("apiVersion")
                        .map_or("none".into(), Value::to_string)
                ),
            ));
        }
        if fields.get("kind") != obj.get("kind") {
            return Err(self.bad_output(HOOK, "it changed kind".into()));
        }
        let Some(returned) = fields.get("metadata").and_then(Value::as_object) else {
            return Err(self.bad_output(HOOK, "it returned no metadata object".into()));
        };
        let mut meta = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
        let m = meta
            .as_object_mut()
            .expect("stored objects have object metadata");
        for key in ["name", "namespace", "uid"] {
            if returned.get(key) != m.get(key) {
                return Err(self.bad_output(HOOK, format!("it changed metadata.{key}")));
            }
        }
        for key in ["labels", "annotations"] {
            match returned.get(key) {
                None | Some(Value::Null) => {
                    m.remove(key);
                }
                Some(Value::Object(map)) if map.values().all(Value::is_string) => {
                    m.insert(key.into(), Value::Object(map.clone()));
                }
                Some(_) => {
                    return Err(
                        self.bad_output(HOOK, format!("metadata.{key} is not a map of strings"))
                    )
                }
            }
        }
        fields.insert("metadata".into(), meta);
        Ok(out)
    }

    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes> {
        let text = json_text(obj);
        self.call("get-attrs", |g, s| g.get_attrs(s, &text))?
            .map_err(StrategyError::Rejected)
    }
}

/// `wasm_apiserver_plugin_call_duration_seconds{plugin, hook}`: hook calls, timed.
static PLUGIN_CALLS: std::sync::LazyLock<prometheus::HistogramVec> =
    std::sync::LazyLock::new(|| {
        crate::metrics::histogram_vec(
            "wasm_apiserver_plugin_call_duration_seconds",
            "Duration of strategy plugin hook calls in seconds.",
            &[
                0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.01, 0.1, 1.0,
            ],
            &["plugin", "hook"],
        )
    });

/// `wasm_apiserver_plugin_faults_total{plugin, hook, kind}` (trap, timeout, memory,
/// overloaded, output).
static PLUGIN_FAULTS: std::sync::LazyLock<prometheus::IntCounterVec> =
    std::sync::LazyLock::new(|| {
        crate::metrics::counter_vec(
            "wasm_apiserver_plugin_faults_total",
            "Strategy plugin calls that failed, by plugin, hook and kind of fault.",
            &["plugin", "hook", "kind"],
        )
    });

//! Wasm admission policies delivered in the plugin folder (`--plugin-dir`), beside the strategy
//! components: each `*.wasm` file that is an admission policy component (the plugin manager
//! leaves those to this file) is enforced as a policy named by its file stem, with what the
//! component describes — its own rules, `mode: Enforce`, `failurePolicy: Fail`, settings `{}`,
//! and the context reads it declares (the operator who put it in the folder grants them, as
//! the configuration files of kube's static admission manifests,
//! `k8s.io/apiserver/pkg/admission/plugin/webhook/manifest`). Like kube's manifest source,
//! the folder is read again on a fixed interval ([`INTERVAL`]): a new or changed file is
//! loaded (compiled off the async workers, its settings checked) and swapped in, a file that
//! no longer loads keeps its last good version, a deleted file's policy is gone. A file
//! whose stem names an `AdmissionPlugin` object when it is read is refused (the object's
//! policy runs; an object created later under a file's name runs beside it). Files are read
//! only when their size or modification time changed.

use super::resources::{Mode, PluginSpec};
use super::source::{rules_json, LoadedPolicy, WasmPolicySource};
use crate::admission::policy::matching::MatchResources;
use crate::plugin::admission_plugin::is_admission;
use crate::plugin::PluginRuntime;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How often the folder is read again.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// What was last seen of one file: its size and modification time, and whether it is a
/// policy component.
#[derive(Clone, PartialEq)]
struct Seen {
    len: u64,
    modified: Option<SystemTime>,
    policy: bool,
}

/// Load `bytes` (the file `stem`) as a policy with the component's own description.
async fn load(
    runtime: &Arc<PluginRuntime>,
    stem: &str,
    bytes: Vec<u8>,
) -> Result<LoadedPolicy, String> {
    let (r, n) = (runtime.clone(), stem.to_string());
    let plugin = tokio::task::spawn_blocking(move || r.load_admission(&n, &bytes))
        .await
        .map_err(|e| format!("loading panicked: {e}"))?
        .map_err(|e| e.reason.to_string())?;
    let p = plugin.clone();
    match tokio::task::spawn_blocking(move || p.validate_settings("{}"))
        .await
        .map_err(|e| format!("validate-settings panicked: {e}"))?
    {
        Ok(Ok(())) => {}
        Ok(Err(m)) => return Err(format!("the component refuses empty settings: {m}")),
        Err(fault) => return Err(fault.to_string()),
    }
    let matcher = MatchResources::parse(Some(&json!({"resourceRules": rules_json(&plugin)})))?;
    let context_reads = plugin
        .description()
        .context_reads
        .iter()
        .map(|g| super::resources::ContextRead {
            group: g.group.clone(),
            resource: g.resource.clone(),
        })
        .collect();
    let spec = PluginSpec {
        sha256: plugin.sha256().to_string(),
        settings: "{}".into(),
        mode: Mode::Enforce,
        ignore_failures: false,
        rules: None,
        namespace_selector: None,
        object_selector: None,
        context_reads,
    };
    Ok(LoadedPolicy {
        name: stem.to_string(),
        plugin,
        spec,
        matcher,
    })
}

/// Read `dir` now and every [`INTERVAL`] after, keeping `source`'s folder policies in step.
/// Runs on a spawned task until the process ends; the source is not synced until the first
/// reading is done.
pub fn watch(source: Arc<WasmPolicySource>, runtime: Arc<PluginRuntime>, dir: PathBuf) {
    source.set_folder(BTreeMap::new(), false);
    tokio::spawn(async move {
        let mut seen: BTreeMap<PathBuf, Seen> = BTreeMap::new();
        loop {
            scan(&source, &runtime, &dir, &mut seen).await;
            tokio::time::sleep(INTERVAL).await;
        }
    });
}

async fn scan(
    source: &WasmPolicySource,
    runtime: &Arc<PluginRuntime>,
    dir: &Path,
    seen: &mut BTreeMap<PathBuf, Seen>,
) {
    let files = crate::reload::plugin_files(dir).unwrap_or_default();
    let mut policies = (*source.folder()).clone();
    let mut changed = false;
    seen.retain(|p, _| files.contains(p));
    let stems: Vec<String> = files
        .iter()
        .filter_map(|f| Some(f.file_stem()?.to_str()?.to_string()))
        .collect();
    if policies.keys().any(|k| !stems.contains(k)) {
        policies.retain(|k, _| stems.contains(k));
        changed = true;
    }
    let objects = source.current();
    for (path, stem) in files.iter().zip(&stems) {
        let Ok(meta) = tokio::fs::metadata(path).await else {
            continue;
        };
        let now = Seen {
            len: meta.len(),
            modified: meta.modified().ok(),
            policy: false,
        };
        let known = seen.get(path);
        if known.is_some_and(|k| k.len == now.len && k.modified == now.modified) {
            continue;
        }
        let Some(bytes) = crate::reload::stable_read(path).await else {
            continue; // still being written
        };
        let policy = is_admission(&bytes);
        seen.insert(path.clone(), Seen { policy, ..now });
        if !policy {
            // (A policy file replaced by a strategy component of the same name.)
            changed |= policies.remove(stem).is_some();
            continue;
        }
        if objects.contains_key(stem) {
            tracing::error!(policy = %stem, file = %path.display(), "admission policy file refused: an AdmissionPlugin object of the same name exists; rename the file or delete the object");
            changed |= policies.remove(stem).is_some();
            continue;
        }
        match load(runtime, stem, bytes).await {
            Ok(p) => {
                tracing::info!(policy = %stem, file = %path.display(), sha256 = %p.plugin.sha256(), "admission policy file loaded");
                policies.insert(stem.clone(), Arc::new(p));
                changed = true;
            }
            Err(e) => {
                tracing::error!(policy = %stem, file = %path.display(), error = %e, "admission policy file refused; the last good version, if any, stays");
            }
        }
    }
    if changed || source.folder_pending() {
        source.set_folder(policies, true);
    }
}

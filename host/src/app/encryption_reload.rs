//! `--encryption-provider-config-automatic-reload` (kube's
//! `k8s.io/apiserver/pkg/server/options/encryptionconfig/controller/controller.go`): the file
//! is read every second; a changed file that validates replaces the transformers of every
//! resource at once, one that does not is logged and the last good one kept.
//!
//! **Beyond kube: a reload never strands data.** Before a new configuration is used, every
//! served resource is checked:
//! - what the configuration in use writes, the new one must read (a probe sealed with the one
//!   and opened with the other), so objects written while the check runs stay readable;
//! - every stored object the configuration in use reads, the new one must read (each value of
//!   each resource the old or the new configuration names is opened with the new transformer).
//!
//! A configuration that drops a key some object still uses is therefore refused, naming the
//! object; rewrite those objects first (a `StorageVersionMigration`, or
//! `wasm-apiserver encryption rotate`, which does it all). kube reloads it and answers 500s
//! for those objects. What the check does not see: resources not served at the time, and
//! objects already unreadable before the reload.
//!
//! What is loaded (the file's hash, whether it reloads, the last refusal) is published to
//! this replica's identity lease ([`EncryptionStatus`]).

use super::encryption_config::parse;
use crate::controllers::apiserver_identity::EncryptionStatus;
use crate::registry::Served;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use wasm_apiserver_storage::backend::prefix_end;
use wasm_apiserver_storage::factory::StorageFactory;
use wasm_apiserver_storage::value::metrics::unrecorded;
use wasm_apiserver_storage::value::{ReloadableTransformers, ResourceTransformers};

/// `sha256:<hex>` of a configuration file's bytes (kube's `apiserver_encryption_config_controller_last_config_info` hash).
pub fn config_hash(digest: &[u8]) -> String {
    format!("sha256:{}", hex::encode(digest))
}

/// Re-read `path` every second; when its bytes change, parse it, check it
/// ([`check_readable`]) and use it, or log why not and keep the current transformers.
/// Publishes each outcome to `status`. Runs until the runtime stops.
pub fn spawn_automatic_reload(
    transformers: ReloadableTransformers,
    path: PathBuf,
    loaded_digest: Vec<u8>,
    served: Arc<Served>,
    manager: Arc<crate::reload::PluginManager>,
    status: tokio::sync::watch::Sender<EncryptionStatus>,
) {
    tokio::spawn(async move {
        // The bytes the server started with, not a second read (a change in between counts).
        let mut last = loaded_digest;
        // A file the check refused is checked again now and then: the objects that kept it
        // out may have been rewritten since.
        let mut refused_at: Option<std::time::Instant> = None;
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tick.tick().await;
            let Ok(now) = std::fs::read(&path) else {
                continue;
            };
            let digest = Sha256::digest(&now).to_vec();
            let recheck = refused_at.is_some_and(|t| t.elapsed() >= RECHECK_REFUSED);
            if digest == last && !recheck {
                continue;
            }
            last = digest.clone();
            refused_at = None;
            let parsed = std::str::from_utf8(&now)
                .map_err(|e| e.to_string())
                .and_then(parse)
                .map_err(|e| Refusal::Invalid(format!("it does not validate: {e}")));
            let checked = match parsed {
                Ok((t, writers)) => {
                    // A KMS provider makes its seed before anything reads or writes with it.
                    super::encryption_config::start_kms(&t);
                    match t.kms_providers().iter().find(|p| !p.ready()) {
                        Some(p) => Err(Refusal::Unavailable(format!(
                            "kms provider {} has no key yet: its plugin did not answer",
                            p.name()
                        ))),
                        None => {
                            check_readable(&served, manager.factory(), &transformers.current(), &t)
                                .await
                                .map(|()| (t, writers))
                        }
                    }
                }
                Err(e) => Err(e),
            };
            match checked {
                Ok((t, writers)) => {
                    transformers.replace(t);
                    for (resources, writer, fp) in writers {
                        let fp = fp.get(..16).unwrap_or_default();
                        tracing::info!(path = %path.display(), resources, writer, key_sha256 = fp, "encryption provider config reloaded");
                    }
                    status.send_modify(|s| {
                        s.config_hash = config_hash(&digest);
                        s.reload_error = None;
                    });
                }
                Err(Refusal::Unavailable(e)) => {
                    // The store or a KMS plugin did not answer: the same file is tried again
                    // in 10 s.
                    tracing::warn!(path = %path.display(), error = %e, "encryption provider config not checked yet");
                    tokio::time::sleep(RETRY_UNAVAILABLE).await;
                    last.clear();
                }
                Err(Refusal::Invalid(e) | Refusal::Stranded(e)) => {
                    tracing::warn!(
                        path = %path.display(),
                        error = %e,
                        "encryption provider config not reloaded; the last good one stays in use"
                    );
                    if !e.starts_with("it does not validate") {
                        refused_at = Some(std::time::Instant::now());
                    }
                    status.send_modify(|s| s.reload_error = Some(e));
                }
            }
        }
    });
}

/// How long before a file that could not be checked is tried again.
const RETRY_UNAVAILABLE: std::time::Duration = std::time::Duration::from_secs(10);

/// How often a file refused for stranding objects is checked again.
const RECHECK_REFUSED: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a configuration was not loaded.
pub enum Refusal {
    /// It does not parse or validate.
    Invalid(String),
    /// It cannot read something stored or written now.
    Stranded(String),
    /// The stored objects could not be read to find out.
    Unavailable(String),
}

/// How many stored values one range read of the check returns.
const PAGE: i64 = 500;

/// Whether `new` may replace `old`: for every served resource, `new` reads what `old`
/// writes, and every stored value `old` reads. Errors: the first resource or object that
/// would become unreadable, and what to do.
pub async fn check_readable(
    served: &Served,
    factory: &StorageFactory,
    old: &ResourceTransformers,
    new: &ResourceTransformers,
) -> Result<(), Refusal> {
    let snapshot = served.load();
    let mut seen = BTreeSet::new();
    for store in snapshot.resources.iter() {
        let (group, plural) = (&store.description.group, &store.description.plural);
        if !seen.insert((group.clone(), plural.clone()))
            || !(old.configures(group, plural) || new.configures(group, plural))
        {
            continue;
        }
        let gr = if group.is_empty() {
            plural.clone()
        } else {
            format!("{plural}.{group}")
        };
        let (old_t, new_t) = (
            old.for_resource(group, plural),
            new.for_resource(group, plural),
        );
        let start = format!(
            "{}{}/",
            factory.prefix().trim_end_matches('/'),
            StorageFactory::resource_prefix(group, plural)
        );
        let probe_key = format!("{start}encryption-reload-probe");
        // Trial transformations, not the server's: kept out of the transformation metrics.
        let probe = unrecorded(|| old_t.to_storage(b"{}".to_vec(), &probe_key)).map_err(|e| {
            Refusal::Unavailable(format!(
                "{gr}: cannot seal a probe with the configuration in use: {e}"
            ))
        })?;
        if unrecorded(|| new_t.from_storage(&probe, &probe_key)).is_err() {
            return Err(Refusal::Stranded(format!(
                "{gr}: the new configuration cannot read what the one in use writes ({}); add the new key beside the one in use first",
                encryption_prefix(&probe)
            )));
        }
        let backend = factory.backend_for(group, plural).backend();
        let end = prefix_end(&start);
        let mut from = start.clone();
        loop {
            let page = backend.range(&from, &end, PAGE, 0).await.map_err(|e| {
                Refusal::Unavailable(format!("{gr}: cannot read the stored objects: {e}"))
            })?;
            for kv in &page.kvs {
                let (new_read, old_read) = unrecorded(|| {
                    (
                        new_t.from_storage(&kv.value, &kv.key),
                        old_t.from_storage(&kv.value, &kv.key),
                    )
                });
                // A KMS plugin that did not answer strands nothing: try again later.
                if let Err(e) = &new_read {
                    if e.to_string().contains("failed to decrypt DEK") {
                        return Err(Refusal::Unavailable(format!("{gr}: {}: {e}", kv.key)));
                    }
                }
                if new_read.is_err() && old_read.is_ok() {
                    return Err(Refusal::Stranded(format!(
                        "{gr}: {} is stored with {}, which the new configuration cannot read; rewrite the objects first (a StorageVersionMigration of {gr}, or `wasm-apiserver encryption rotate`) or keep the key",
                        kv.key,
                        encryption_prefix(&kv.value)
                    )));
                }
            }
            match page.kvs.last() {
                Some(last) if page.more => from = format!("{}\0", last.key),
                _ => break,
            }
        }
    }
    Ok(())
}

/// `k8s:enc:<provider>:v1:<key>:` of a stored value, or `identity` (unencrypted).
pub fn encryption_prefix(value: &[u8]) -> String {
    if !value.starts_with(b"k8s:enc:") {
        return "identity (unencrypted)".into();
    }
    let head: Vec<&[u8]> = value.splitn(6, |b| *b == b':').take(5).collect();
    format!("{}:", String::from_utf8_lossy(&head.join(&b':')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_hashes() {
        assert_eq!(
            encryption_prefix(b"k8s:enc:aesgcm:v1:key1:\x00\x01"),
            "k8s:enc:aesgcm:v1:key1:"
        );
        assert_eq!(encryption_prefix(b"{}"), "identity (unencrypted)");
        assert_eq!(config_hash(&[0xab, 0x01]), "sha256:ab01");
    }
}

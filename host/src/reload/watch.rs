//! Noticing plugin folder changes: a `notify` watcher, debounced, and `SIGHUP`.

use super::manager::PluginManager;
use std::sync::Arc;
use std::time::Duration;

/// How long the folder must be quiet before a rescan (editors and `cp` write in steps).
pub const DEBOUNCE: Duration = Duration::from_millis(25);

/// Watch the plugin folder with `notify` (when `watch`) and rescan after [`DEBOUNCE`] of
/// quiet; `SIGHUP` rescans in any case. The watcher is registered before this returns, so no
/// change made after start-up is missed; the loop runs on a spawned task until the process ends.
pub fn watch_folder(manager: Arc<PluginManager>, watch: bool) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = if watch {
        use notify::Watcher;
        let events = tx.clone();
        let created = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(ev) = res {
                let relevant = ev
                    .paths
                    .iter()
                    .any(|p| p.extension().is_some_and(|x| x == "wasm"));
                if relevant && !ev.kind.is_access() {
                    let _ = events.send(());
                }
            }
        });
        match created {
            Ok(mut w) => match w.watch(manager.dir(), notify::RecursiveMode::NonRecursive) {
                Ok(()) => Some(w),
                Err(e) => {
                    tracing::error!(error = %e, "cannot watch the plugin folder; only SIGHUP reloads");
                    None
                }
            },
            Err(e) => {
                tracing::error!(error = %e, "cannot watch the plugin folder; only SIGHUP reloads");
                None
            }
        }
    } else {
        None
    };
    let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    tokio::spawn(async move {
        let _watcher = watcher; // dropping it would stop the events
        let _sender = tx; // keeps `rx` open when nothing watches the folder (SIGHUP only)
        loop {
            let hup_fired = async {
                match hup.as_mut() {
                    Some(h) => {
                        h.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                ev = rx.recv() => {
                    if ev.is_none() {
                        return;
                    }
                    // Debounce: wait until the folder has been quiet for DEBOUNCE.
                    while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, rx.recv()).await {}
                }
                _ = hup_fired => tracing::info!("SIGHUP: rescanning the plugin folder"),
            }
            for c in manager.rescan().await {
                tracing::debug!(change = ?c, "plugin folder rescanned");
            }
        }
    });
}

/// How often the `StrategyPlugin` objects are listed again even when no event came (a
/// component uploaded after its object, a status write that failed, a watch that ended).
pub const RESYNC: Duration = Duration::from_secs(2);

/// List the `StrategyPlugin` objects once and sync them ([`PluginManager::sync_objects`]).
/// Errors: the list's (logged by the caller; the next resync tries again).
pub async fn sync_objects_once(
    manager: &PluginManager,
) -> Result<(String, Vec<super::manager::Change>), crate::status::ApiError> {
    let store = manager.plugins();
    let list = store
        .list("", &crate::registry::ListOptions::default())
        .await?;
    let rv = crate::registry::store::list_meta(&list)["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let items = store.decode_items(&list)?;
    Ok((rv, manager.sync_objects(&items).await))
}

/// Keep every replica serving what the `StrategyPlugin` objects say: list and sync, then wait
/// for the next event on the resource (or [`RESYNC`]) and start over. Runs on a spawned task
/// for the life of the process.
pub fn watch_objects(manager: Arc<PluginManager>) {
    tokio::spawn(async move {
        loop {
            let rv = match sync_objects_once(&manager).await {
                Ok((rv, changes)) => {
                    let removed = changes
                        .iter()
                        .any(|c| matches!(c, super::Change::Removed(_)));
                    for c in changes {
                        tracing::debug!(change = ?c, "StrategyPlugin objects synced");
                    }
                    // A file refused while an object held its name or resource may load now.
                    if removed {
                        manager.rescan().await;
                    }
                    rv
                }
                Err(e) => {
                    tracing::debug!(error = %e.message, "cannot list StrategyPlugin objects");
                    tokio::time::sleep(RESYNC).await;
                    continue;
                }
            };
            let opts = crate::registry::ListOptions {
                resource_version: rv,
                ..Default::default()
            };
            match manager.plugins().watch("", &opts).await {
                Ok(mut events) => {
                    // A watch that ends at once waits out the period (no busy relisting).
                    if let Ok(None) = tokio::time::timeout(RESYNC, events.recv()).await {
                        tokio::time::sleep(RESYNC).await;
                    }
                }
                Err(_) => tokio::time::sleep(RESYNC).await,
            }
        }
    });
}

/// List the CRDs once and sync them ([`PluginManager::sync_crds_now`]). Errors: the list's.
pub async fn sync_crds_once(manager: &PluginManager) -> Result<String, crate::status::ApiError> {
    manager.sync_crds_now().await
}

/// Keep this server serving what the CustomResourceDefinitions say, as an informer does: list
/// and sync, then apply each watch event to the CRDs known and sync what it changed
/// ([`PluginManager::crd_event`], [`PluginManager::crd_deleted`]); with no event for
/// [`RESYNC`], sync again without listing (a status write that failed is retried). A watch
/// that ends or fails lists again. Runs for the life of the process.
pub fn watch_crds(manager: Arc<PluginManager>) {
    use wasm_apiserver_storage::WatchEvent;
    tokio::spawn(async move {
        loop {
            let rv = match manager.sync_crds_now().await {
                Ok(rv) => rv,
                Err(e) => {
                    tracing::debug!(error = %e.message, "cannot list CustomResourceDefinitions");
                    tokio::time::sleep(RESYNC).await;
                    continue;
                }
            };
            let opts = crate::registry::ListOptions {
                resource_version: rv,
                ..Default::default()
            };
            let mut events = match manager.crd_store().watch("", &opts).await {
                Ok(events) => events,
                Err(_) => {
                    tokio::time::sleep(RESYNC).await;
                    continue;
                }
            };
            let started = std::time::Instant::now();
            loop {
                let event = match tokio::time::timeout(RESYNC, events.recv()).await {
                    Err(_) => {
                        manager.sync_crds().await;
                        continue;
                    }
                    Ok(None) | Ok(Some(WatchEvent::Error(_))) => break,
                    Ok(Some(event)) => event,
                };
                match event {
                    WatchEvent::Added(o) | WatchEvent::Modified(o) => match o.to_arc() {
                        Ok(o) => manager.crd_event(o).await,
                        Err(_) => break,
                    },
                    WatchEvent::Deleted(o) => match o.to_arc() {
                        Ok(o) => {
                            let m = wasm_apiserver_apimachinery::meta::accessor(&o);
                            let rv = m.resource_version().parse().unwrap_or(u64::MAX);
                            manager.crd_deleted(m.name(), rv).await;
                        }
                        Err(_) => break,
                    },
                    _ => {}
                }
            }
            // A watch that ends at once waits out the period (no busy relisting).
            if started.elapsed() < RESYNC {
                tokio::time::sleep(RESYNC).await;
            }
        }
    });
}

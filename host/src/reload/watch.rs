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

//! The HTTP server. This first slice loads every plugin in `--plugin-dir` (off the async
//! workers), reports each one's state, and serves `/version`, `/healthz`, `/livez`, `/readyz`.
//! The registry Store, REST routing, discovery and OpenAPI arrive with the server issue.

use crate::cli::ServeArgs;
use crate::plugin::PluginRuntime;
use crate::strategy::Strategy;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use std::path::PathBuf;

/// The version reported at `/version`: kubectl's dispatcher picks its client by the minor
/// version, and 1.32 selects the built-in kubectl 1.32 (`shared/research/kubectl.md` §0.1).
pub fn version_info() -> serde_json::Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.0-wasm-apiserver",
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "linux/amd64"
    })
}

/// The `*.wasm` files of a plugin directory, sorted. Errors: the directory cannot be read.
pub fn plugin_files(dir: &std::path::Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    files.sort();
    Ok(files)
}

/// Load the plugins and serve until SIGTERM / Ctrl-C. Errors: the listener cannot bind or the
/// runtime cannot start. A plugin that fails to load is logged and skipped.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let runtime = PluginRuntime::new(args.limits.runtime_config())?;
    let dir = args.plugin_dir.clone();
    let loaded = tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<_>> {
        let mut loaded = Vec::new();
        for file in plugin_files(&dir)? {
            match runtime.load_file(&file) {
                Ok(s) => {
                    let d = s.description();
                    tracing::info!(plugin = s.name(), resource = %d.group_resource(), version = %d.api_version(), "plugin loaded");
                    loaded.push(s);
                }
                Err(e) => tracing::error!(error = %e, "plugin failed to load"),
            }
        }
        Ok(loaded)
    })
    .await??;
    tracing::info!(count = loaded.len(), dir = %args.plugin_dir.display(), "plugins loaded");

    let app = Router::new()
        .route("/version", get(|| async { Json(version_info()) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }));
    let listener = tokio::net::TcpListener::bind((args.bind_address, args.port)).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {},
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {},
            }
            tracing::info!("shutting down");
        })
        .await?;
    Ok(())
}

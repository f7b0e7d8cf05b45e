//! Start-up (kube-apiserver's `cmd/kube-apiserver/app/server.go` `Run`): flags → storage
//! factory → plugin runtime → plugin manager (which publishes the first snapshot) → listener →
//! signals. The offline plugin tools are in `plugin_tools.rs`, the storage flags in
//! `storage.rs`.

pub mod plugin_tools;
pub mod storage;

use crate::cli::{Cli, Command, PluginCommand, ServeArgs};
use crate::plugin::PluginRuntime;
use crate::registry::Served;
use crate::reload::PluginManager;
use crate::server::{router, serving, AppState};
use std::sync::Arc;
use std::time::Duration;

/// Run the CLI; returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Some(Command::Plugin(PluginCommand::Check { file, limits })) => {
            plugin_tools::check(&file, &limits)
        }
        Some(Command::Plugin(PluginCommand::Test { file, dir, limits })) => {
            plugin_tools::test(&file, &dir, &limits)
        }
        Some(Command::Plugin(PluginCommand::Precompile { out })) => plugin_tools::precompile(&out),
        None => {
            let rt = tokio::runtime::Runtime::new()?;
            let served = rt.block_on(serve(cli.serve));
            // Blocking tasks (a plugin call, a storage read) are not waited for: their
            // connections are gone, and each is bounded by its own deadline anyway.
            rt.shutdown_timeout(std::time::Duration::from_secs(1));
            served?;
            Ok(0)
        }
    }
}

/// Open storage, load the plugins and serve until SIGTERM / Ctrl-C, finishing requests in
/// flight. Errors: storage cannot be opened, the listener cannot bind, or the runtime cannot
/// start. A plugin that fails to load is logged and skipped.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind((args.bind_address, args.port)).await?;
    let signals = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {},
        }
    };
    serve_on(args, listener, signals, Compile::InChildProcess).await
}

/// Where a plugin missing from the precompiled cache is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compile {
    /// In a child `wasm-apiserver plugin precompile` (the server: it never holds the
    /// compiler's memory). Needs the running executable to be `wasm-apiserver`.
    InChildProcess,
    /// In this process (an embedding process such as a test binary).
    InProcess,
}

/// [`serve`] on `listener` until `shutdown` completes, then the shutdown sequence
/// (`/readyz` fails, `--shutdown-delay-duration`, the listener closes, watches end, requests in
/// flight finish). Prints `wasm-apiserver listening on http://<address>` once serving.
/// Errors: as [`serve`].
pub async fn serve_on(
    args: ServeArgs,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    compile: Compile,
) -> anyhow::Result<()> {
    let (backend, factory) = storage::storage_factory(&args).await?;
    let mut runtime_config = args.limits.runtime_config();
    // Compiled artifacts are kept under the data dir unless told otherwise, and (for the
    // server) compiled in a child process, so the server's memory after start is that of the
    // loaded artifacts only.
    runtime_config.cache_dir = Some(
        runtime_config
            .cache_dir
            .unwrap_or_else(|| args.data_dir.join("plugin-cache")),
    );
    runtime_config.compile_in_subprocess = compile == Compile::InChildProcess;
    let runtime = PluginRuntime::new(runtime_config)?;
    let served = Arc::new(Served::default());
    let manager = Arc::new(PluginManager::new(
        runtime,
        args.plugin_dir.clone(),
        factory,
        served.clone(),
    ));
    let m = manager.clone();
    crate::metrics::set_cache_stats_source(Box::new(move || m.watch_cache_stats()));

    let open_files = serving::raise_open_files_limit();
    let address = listener.local_addr()?.to_string();
    let (shutdown_tx, watches_end) = tokio::sync::watch::channel(false);
    let state = Arc::new(AppState {
        served: served.clone(),
        backend,
        watch_timeout: Duration::from_secs(args.min_request_timeout_seconds.max(1)),
        address: address.clone(),
        shutdown: watches_end,
        terminating: std::sync::atomic::AtomicBool::new(false),
        request_timeout: args.request_timeout,
    });
    crate::reload::watch_folder(manager.clone(), args.plugin_reload);
    manager.rescan().await;
    tracing::info!(dir = %args.plugin_dir.display(), plugins = manager.statuses().len(), "plugins loaded");
    tracing::info!(%address, open_files_limit = open_files, "serving");
    println!("wasm-apiserver listening on http://{address}");
    let serving = serving::ServingConfig {
        read_header_timeout: args.read_header_timeout,
        shutdown_timeout: args.request_timeout,
    };
    let delay = args.shutdown_delay_duration;
    let st = state.clone();
    let dropped = serving::serve(listener, router(state), serving, async move {
        shutdown.await;
        // kube-apiserver's order: /readyz fails at once, the listener stays open for
        // --shutdown-delay-duration (so load balancers notice), then closes; watches end.
        st.terminating
            .store(true, std::sync::atomic::Ordering::SeqCst);
        tracing::info!(
            delay_seconds = delay.as_secs_f64(),
            "shutting down: /readyz fails from now"
        );
        tokio::time::sleep(delay).await;
        tracing::info!("shutting down: finishing requests in flight, closing watches");
        let _ = shutdown_tx.send(true);
    })
    .await;
    if dropped > 0 {
        tracing::warn!(dropped, "shut down with connections dropped");
    }
    Ok(())
}

//! Start-up (kube-apiserver's `cmd/kube-apiserver/app/server.go` `Run`): flags → listeners →
//! certificates, authenticator and authorizer (`security.rs`, `certs.rs`) → storage factory
//! → plugin runtime → plugin manager (which publishes the first snapshot) → serving →
//! signals. The offline plugin tools are in `plugin_tools.rs` (`plugin new`: `plugin_new.rs`), the storage flags in
//! `storage.rs`.

pub mod authentication_config;
pub mod certs;
pub mod encryption_config;
pub mod encryption_reload;
pub mod encryption_rotate;
pub mod plugin_new;
pub mod plugin_push;
pub mod plugin_tools;
pub mod security;
pub mod storage;

use crate::admission::{Initializer, Plugins};
use crate::cli::{Cli, Command, EncryptionCommand, PluginCommand, ServeArgs};
use crate::plugin::PluginRuntime;
use crate::registry::Served;
use crate::reload::PluginManager;
use crate::server::filters::max_in_flight::InFlightLimits;
use crate::server::filters::wait_group::WaitGroups;
use crate::server::filters::HandlerChain;
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
        Some(Command::Encryption(EncryptionCommand::Rotate {
            encryption_provider_config,
            timeout,
            replica_grace,
            kubeconfig,
            context,
            server,
        })) => tokio::runtime::Runtime::new()?.block_on(encryption_rotate::rotate(
            &encryption_rotate::Options {
                config: encryption_provider_config,
                target: plugin_push::Target {
                    kubeconfig,
                    context,
                    server,
                },
                timeout,
                replica_grace,
            },
        )),
        Some(Command::Plugin(PluginCommand::New {
            name,
            lang,
            group,
            kind,
            dir,
            sdk_path,
            policy,
        })) => plugin_new::run(&plugin_new::Options {
            name,
            lang,
            group,
            kind,
            dir,
            sdk_path,
            policy,
        }),
        Some(Command::Plugin(PluginCommand::Manifest {
            file,
            name,
            inactive,
            extends,
        })) => plugin_push::manifest(&file, name.as_deref(), inactive, extends.as_deref()),
        Some(Command::Plugin(PluginCommand::Push {
            file,
            name,
            inactive,
            upload_only,
            extends,
            kubeconfig,
            context,
            server,
        })) => {
            let target = plugin_push::Target {
                kubeconfig,
                context,
                server,
            };
            tokio::runtime::Runtime::new()?.block_on(plugin_push::push(
                &file,
                name.as_deref(),
                inactive,
                upload_only,
                extends.as_deref(),
                &target,
            ))
        }
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
    let secure = tokio::net::TcpListener::bind((args.bind_address, args.secure_port))
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "secure port {}:{}: {e}",
                args.bind_address,
                args.secure_port
            )
        })?;
    let insecure = match args.port {
        // Plain HTTP is for local development: loopback only, whatever --bind-address says.
        Some(port) => Some(
            tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
                .await
                .map_err(|e| anyhow::anyhow!("port 127.0.0.1:{port}: {e}"))?,
        ),
        None => None,
    };
    let signals = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {},
        }
    };
    serve_on(
        args,
        Listeners { secure, insecure },
        signals,
        Compile::InChildProcess,
    )
    .await
}

/// Where the server listens.
pub struct Listeners {
    /// The secure port (TLS, `--secure-port`).
    pub secure: tokio::net::TcpListener,
    /// The plain-HTTP port (`--port`), when asked for.
    pub insecure: Option<tokio::net::TcpListener>,
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

/// [`serve`] on `listeners` until `shutdown` completes, then the shutdown sequence
/// (`/readyz` fails, `--shutdown-delay-duration`, the listeners close, watches end, requests
/// in flight finish). Prints `wasm-apiserver listening on https://<address>` (and
/// `http://<address>` for the plain port) once serving, and
/// `admin kubeconfig: <path>` when one was written.
/// Errors: as [`serve`], and the certificate, CA and token files (see
/// [`security::security`]).
pub async fn serve_on(
    args: ServeArgs,
    listeners: Listeners,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    compile: Compile,
) -> anyhow::Result<()> {
    serve_with_admission(args, listeners, shutdown, compile, Plugins::standard()).await
}

/// [`serve_on`] with the admission members `plugins` (in their order) instead of the
/// standard ones — how an embedding program or a test adds a member of its own.
pub async fn serve_with_admission(
    args: ServeArgs,
    listeners: Listeners,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    compile: Compile,
    mut plugins: Plugins,
) -> anyhow::Result<()> {
    plugins
        .disable(&args.disable_admission_plugins)
        .map_err(|e| anyhow::anyhow!(e))?;
    let secure_address = listeners.secure.local_addr()?;
    let security = security::security(&args, secure_address.port())?;
    let policies = Arc::new(crate::admission::policy::source::PolicySource::default());
    let wasm_policies = Arc::new(crate::admission::wasm::source::WasmPolicySource::default());
    let admission = plugins.chain(&Initializer {
        authorizer: security.authorizer.clone(),
        policies: policies.clone(),
        wasm_policies: wasm_policies.clone(),
    });
    tracing::debug!(members = ?admission.names(), "admission chain");
    let (backend, factory, encryption) = storage::storage_factory(&args).await?;
    let reload_transformers = factory.transformers().clone();
    let encryption_transformers = reload_transformers.clone();
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
    ensure_plugin_dir(&args.plugin_dir)?;
    let served = Arc::new(Served::default());
    let server_id = args
        .server_id
        .clone()
        .unwrap_or_else(|| server_identity(secure_address.port()));
    // `wasm_apiserver_server_info{server_id}`: 1, naming this replica (one label value per
    // server; a test process runs several).
    static SERVER_INFO: std::sync::LazyLock<prometheus::IntGaugeVec> = std::sync::LazyLock::new(
        || {
            crate::metrics::gauge_vec(
                "wasm_apiserver_server_info",
                "A metric with a constant '1' value labeled by the identity of this server among the replicas of its storage.",
                &["server_id"],
            )
        },
    );
    SERVER_INFO.with_label_values(&[&server_id]).set(1);
    let mut policy_stores = crate::admission::policy::resources::stores(&factory, &policies);
    let wasm_policy_store = Arc::new(crate::admission::wasm::source::store(
        &factory,
        &wasm_policies,
    ));
    wasm_policies.start(
        runtime.clone(),
        crate::reload::components(&factory),
        &server_id,
        wasm_policy_store.clone(),
    );
    crate::admission::wasm::folder::watch(
        wasm_policies.clone(),
        runtime.clone(),
        args.plugin_dir.clone(),
    );
    crate::admission::policy::source::watch_policies(
        policy_stores.iter().cloned().map(Arc::new).collect(),
        policies,
    );
    let migrations_store = crate::registry::storage_version_migration::store(&factory);
    let manager = PluginManager::new(
        runtime,
        args.plugin_dir.clone(),
        factory,
        served.clone(),
        &server_id,
        Some(args.plugin_dir.join(&args.crd_plugin)),
    )
    .with_host_resources({
        policy_stores.push((*wasm_policy_store).clone());
        policy_stores.push(migrations_store);
        policy_stores
    })
    .shared();
    // What this replica has loaded of its encryption configuration, on its identity lease.
    let (encryption_status, encryption_seen) =
        tokio::sync::watch::channel(crate::controllers::apiserver_identity::EncryptionStatus {
            config_hash: encryption_reload::config_hash(&encryption.digest),
            automatic_reload: args.encryption_provider_config_automatic_reload,
            reload_error: None,
        });
    if args.encryption_provider_config_automatic_reload {
        encryption_reload::spawn_automatic_reload(
            reload_transformers,
            encryption.path.clone(),
            encryption.digest.clone(),
            served.clone(),
            manager.clone(),
            encryption_status,
        );
    }
    // Every replica, always: `encryption rotate` finds the replicas by these leases.
    crate::controllers::apiserver_identity::start(
        served.clone(),
        server_id.clone(),
        encryption_seen,
    );
    let m = manager.clone();
    crate::metrics::set_cache_stats_source(Box::new(move || m.factory().watch_cache_stats()));

    let open_files = serving::raise_open_files_limit();
    let address = secure_address.to_string();
    // NotAcceptingNewRequest: watches end, the listener closes, the wait groups drain.
    let (shutdown_tx, watches_end) = tokio::sync::watch::channel(false);
    let (drained_tx, drained) = tokio::sync::watch::channel(false);
    let wait_groups = WaitGroups::new(watches_end.clone());
    let state = Arc::new(AppState {
        served: served.clone(),
        backend,
        watch_timeout: Duration::from_secs(args.min_request_timeout_seconds.max(1)),
        address: address.clone(),
        shutdown: watches_end.clone(),
        terminating: std::sync::atomic::AtomicBool::new(false),
        authorizer: security.authorizer.clone(),
        admission: admission.clone(),
        components: manager.components().clone(),
        max_component_bytes: args.max_plugin_component_bytes,
        service_accounts: Some(security.service_accounts.clone()),
        encryption: encryption_transformers,
    });
    security
        .service_accounts
        .set_lookup(Arc::new(crate::server::token_request::ServedObjects(
            served.clone(),
        )));
    let chain = HandlerChain {
        served: served.clone(),
        request_timeout: args.request_timeout,
        authenticator: security.authenticator,
        audit: security.audit.clone(),
        authorizer: security.authorizer,
        in_flight: InFlightLimits::new(
            args.max_requests_inflight,
            args.max_mutating_requests_inflight,
        ),
        wait_groups: wait_groups.clone(),
        send_retry_after: args.shutdown_send_retry_after,
    };
    crate::reload::watch_folder(manager.clone(), args.plugin_reload);
    manager.rescan().await;
    // What the StrategyPlugin objects say is served before the first request, then kept so.
    if let Err(e) = crate::reload::sync_objects_once(&manager).await {
        tracing::warn!(error = %e.message, "cannot list StrategyPlugin objects; retrying in the background");
    }
    crate::reload::watch_objects(manager.clone());
    // Likewise the CustomResourceDefinitions.
    if let Err(e) = crate::reload::sync_crds_once(&manager).await {
        tracing::warn!(error = %e.message, "cannot list CustomResourceDefinitions; retrying in the background");
    }
    crate::reload::watch_crds(manager.clone());
    // The system namespaces exist before the first request is served.
    if crate::controllers::enabled(&args.controllers, "system-namespaces") {
        if let Some(namespaces) = served.load().resources.get("", "v1", "namespaces") {
            crate::controllers::system_namespaces::ensure(&namespaces).await;
        }
    }
    let leader_election =
        args.leader_elect.then(
            || crate::controllers::leader_election::LeaderElectionConfig {
                lease_duration: args.leader_elect_lease_duration,
                renew_deadline: args.leader_elect_renew_deadline,
                retry_period: args.leader_elect_retry_period,
                identity: crate::controllers::leader_election::default_identity(),
            },
        );
    if let Some(config) = &leader_election {
        config.validate().map_err(|e| anyhow::anyhow!(e))?;
    }
    crate::controllers::start(
        served.clone(),
        &crate::controllers::ControllerOptions {
            list: args.controllers.clone(),
            leader_election,
            admission,
        },
    );
    crate::authorization::rbac::policy_watcher::watch_policy(
        served.clone(),
        state.authorizer.rbac().clone(),
    );
    tracing::info!(dir = %args.plugin_dir.display(), plugins = manager.statuses().len(), %server_id, "plugins loaded");
    tracing::info!(%address, open_files_limit = open_files, "serving");
    let insecure_address = match &listeners.insecure {
        Some(l) => Some(l.local_addr()?),
        None => None,
    };
    let serving = serving::ServingConfig {
        read_header_timeout: args.read_header_timeout,
    };
    let lifecycle = serving::Lifecycle {
        not_accepting: watches_end,
        drained,
        listen_until_drained: args.shutdown_send_retry_after,
    };
    tokio::spawn(graceful_termination(
        shutdown,
        state.clone(),
        GracefulTermination {
            delay: args.shutdown_delay_duration,
            drain_bound: args.request_timeout,
            watch_grace: args.shutdown_watch_termination_grace_period,
            wait_groups,
            not_accepting: shutdown_tx,
            drained: drained_tx,
        },
    ));
    let audit = security.audit;
    let app = router(state, chain);
    // One table for both ports: they share the process's descriptors.
    let connections = crate::server::connection_limit::Connections::new(open_files);
    let secure = serving::serve(
        listeners.secure,
        Some(security.tls),
        app.clone(),
        serving.clone(),
        lifecycle.clone(),
        connections.clone(),
    );
    if let Some(path) = &security.admin_kubeconfig {
        println!("admin kubeconfig: {}", path.display());
    }
    for (resources, writer, fingerprint) in &encryption.writers {
        // The key's fingerprint, never the key.
        println!(
            "encryption at rest: {resources} with {writer}{} ({}{})",
            if fingerprint.is_empty() {
                String::new()
            } else {
                format!(", key sha256:{}", &fingerprint[..16])
            },
            encryption.path.display(),
            if encryption.generated {
                ", generated now"
            } else {
                ""
            }
        );
    }
    println!("wasm-apiserver listening on https://{address}");
    let dropped = match (listeners.insecure, insecure_address) {
        (Some(plain), Some(plain_address)) => {
            tracing::info!(address = %plain_address, "serving plain HTTP on loopback (development)");
            println!("wasm-apiserver listening on http://{plain_address}");
            let insecure = serving::serve(plain, None, app, serving, lifecycle, connections);
            let (a, b) = tokio::join!(secure, insecure);
            a + b
        }
        _ => secure.await,
    };
    if dropped > 0 {
        tracing::warn!(dropped, "shut down with connections dropped");
    }
    // The last audit events (watches' ResponseComplete among them) reach the log.
    if let Some(a) = audit {
        let _ = tokio::task::spawn_blocking(move || a.backend.shutdown()).await;
    }
    Ok(())
}

/// What [`graceful_termination`] signals and waits for.
struct GracefulTermination {
    /// `--shutdown-delay-duration`.
    delay: Duration,
    /// How long the requests in flight are waited for (`--request-timeout`, kube's
    /// `ShutdownTimeout`): the timeout filter answers every request by then, so only a client
    /// reading its answer slowly can reach it.
    drain_bound: Duration,
    /// `--shutdown-watch-termination-grace-period`.
    watch_grace: Duration,
    wait_groups: WaitGroups,
    not_accepting: tokio::sync::watch::Sender<bool>,
    drained: tokio::sync::watch::Sender<bool>,
}

/// kube-apiserver's graceful termination (`genericapiserver.go` `RunWithContext`), once
/// `shutdown` completes: `ShutdownInitiated` (`/readyz` fails), `--shutdown-delay-duration`
/// (still serving, so load balancers notice), `NotAcceptingNewRequest` (connections asked to
/// close, the listener closed unless `--shutdown-send-retry-after`, watches told to end, new
/// requests refused), then `InFlightRequestsDrained` once the non-watch requests in flight are
/// done (bounded) and, with a grace period, the watches — after which [`serving::serve`]
/// returns and the process exits.
async fn graceful_termination(
    shutdown: impl std::future::Future<Output = ()>,
    state: Arc<AppState>,
    t: GracefulTermination,
) {
    shutdown.await;
    state
        .terminating
        .store(true, std::sync::atomic::Ordering::SeqCst);
    tracing::info!(
        delay_seconds = t.delay.as_secs_f64(),
        "shutting down: /readyz fails from now"
    );
    tokio::time::sleep(t.delay).await;
    let in_flight = t.wait_groups.non_long_running.in_flight();
    tracing::info!(
        in_flight,
        "shutting down: not accepting new requests; finishing those in flight, ending watches"
    );
    let _ = t.not_accepting.send(true);
    let started = std::time::Instant::now();
    if tokio::time::timeout(t.drain_bound, t.wait_groups.non_long_running.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            in_flight = t.wait_groups.non_long_running.in_flight(),
            bound_seconds = t.drain_bound.as_secs(),
            "requests still in flight at the drain bound are dropped"
        );
    }
    if !t.watch_grace.is_zero() {
        let _ = tokio::time::timeout(t.watch_grace, t.wait_groups.watches.wait()).await;
    }
    tracing::info!(
        drain_ms = started.elapsed().as_millis() as u64,
        "shutting down: requests in flight drained"
    );
    let _ = t.drained.send(true);
}

/// The default `--server-id`: `apiserver-` and the lowercase unpadded base32 of the first 16
/// bytes of a sha256 of the host name and the secure port — kube-apiserver's `APIServerID`
/// (`k8s.io/apiserver/pkg/server/config.go` `NewConfig`), with the port added so replicas on
/// one host differ, and stable across restarts of the same replica.
pub fn server_identity(secure_port: u16) -> String {
    use sha2::{Digest, Sha256};
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let mut data = Vec::new();
    for part in [host, format!("wasm-apiserver:{secure_port}")] {
        data.extend_from_slice(&(part.len() as u16).to_be_bytes());
        data.extend_from_slice(part.as_bytes());
    }
    let hash = Sha256::digest(&data);
    format!(
        "apiserver-{}",
        data_encoding::BASE32_NOPAD
            .encode(&hash[..16])
            .to_lowercase()
    )
}

/// `--plugin-dir`: a folder that does not exist is created, empty, and said so (one WARN line
/// naming it) — plugins arrive later, dropped in or pushed through the API, and the folder
/// watch needs it to exist. kube refuses to start on a missing configuration *file*; a
/// folder that is filled at run time is not one. Errors: the path exists and is not a
/// directory, or cannot be created.
fn ensure_plugin_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if dir.exists() {
        anyhow::bail!("--plugin-dir {}: not a directory", dir.display());
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("--plugin-dir {}: cannot create it: {e}", dir.display()))?;
    tracing::warn!(
        dir = %dir.display(),
        "the plugin folder did not exist: created it, empty; put *.wasm plugins in it (loaded as they appear) or push them through the API"
    );
    Ok(())
}

//! The HTTP server: routing declared in one place, shared state in an `Arc` built at start-up.
//!
//! - `request_info.rs`: resource paths → group/version/namespace/resource/name/subresource.
//! - `handlers.rs`: CRUD, patch, watch and deletecollection on resources.
//! - `discovery.rs`, `openapi.rs`: discovery (aggregated v2 and legacy) and OpenAPI v3.
//! - `table.rs`: server-side Tables. `patch.rs`: patch types.
//!
//! Start-up: open the storage backend, load every plugin in `--plugin-dir` (off the async
//! workers), build the path-to-storage map, serve.

pub mod discovery;
pub mod handlers;
pub mod negotiation;
pub mod openapi;
pub mod options;
pub mod patch;
pub mod protobuf;
pub mod request_info;
pub mod serving;
pub mod table;
pub mod timeout;

use crate::cli::ServeArgs;
use crate::plugin::PluginRuntime;
use crate::registry::ResourceMap;
use crate::reload::PluginManager;
use crate::status::ApiError;
use arc_swap::ArcSwap;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_storage::etcd3::Etcd3Config;
use wasm_apiserver_storage::factory::{AnyBackend, BackendConfig, StorageFactory};

/// The version reported at `/version`: kubectl's dispatcher picks its client by the minor
/// version, and 1.32 selects the built-in kubectl 1.32 (`k8s.io/apimachinery/pkg/version`
/// `Info`).
pub fn version_info() -> Value {
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

/// What is served at one instant: the path-to-storage map and the OpenAPI documents derived
/// from it, swapped together so discovery, OpenAPI and routing always agree.
pub struct Snapshot {
    /// The path-to-storage map.
    pub resources: ResourceMap,
    /// OpenAPI v3 documents by group-version path.
    pub openapi: BTreeMap<String, Value>,
}

/// What every handler shares.
pub struct AppState {
    /// What is served (swapped atomically when a plugin changes).
    pub snapshot: ArcSwap<Snapshot>,
    /// The storage backend, for `/readyz`.
    pub backend: AnyBackend,
    /// Default watch duration when the client gives no `timeoutSeconds`.
    pub watch_timeout: Duration,
    /// `host:port` for legacy discovery's `serverAddressByClientCIDRs`.
    pub address: String,
    /// Set to `true` when the server starts shutting down: open watches end (as
    /// kube-apiserver closes them), so graceful shutdown only waits for short requests.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// Set at SIGTERM, before the shutdown delay: `/readyz` fails from then on.
    pub terminating: std::sync::atomic::AtomicBool,
    /// Deadline of a non-long-running request (`--request-timeout`); see [`timeout`].
    pub request_timeout: Duration,
}

impl AppState {
    /// Replace the path-to-storage map and the documents derived from it, atomically.
    pub fn set_resources(&self, map: ResourceMap) {
        let openapi = openapi::documents(&map);
        self.snapshot.store(Arc::new(Snapshot {
            resources: map,
            openapi,
        }));
    }

    /// The path-to-storage map in force.
    pub fn resources(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.snapshot.load()
    }
}

/// The router: non-resource paths by name, everything under `/api` and `/apis` through
/// discovery or the resource handler.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/version", get(|| async { Json(version_info()) }))
        // The Python client asks for `/version/`, `/api/` and `/apis/`; go-restful serves both.
        .route("/version/", get(|| async { Json(version_info()) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(|| async { crate::metrics::render() }))
        .route("/api", get(api_root))
        .route("/api/", get(api_root))
        .route("/apis", get(apis_root))
        .route("/apis/", get(apis_root))
        .route("/openapi/v3", get(openapi_root))
        .route("/openapi/v3/{*gv}", get(openapi_doc))
        .route("/api/{*rest}", any(handlers::resource))
        .route("/apis/{*rest}", any(handlers::resource))
        .fallback(|OriginalUri(uri): OriginalUri| async move {
            ApiError::no_route(uri.path()).into_response()
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            timeout::with_timeout,
        ))
        .layer(axum::middleware::from_fn_with_state(state.clone(), observe))
        // The resource handler enforces its own limit and answers 413 as a Status.
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(state)
}

/// Count and time every resource request (`apiserver_request_total`,
/// `apiserver_request_duration_seconds`); watches are counted, not timed. Labels come from a
/// closed set, so no client can grow the series: only requests for a served resource (and a
/// served subresource) are counted, as kube-apiserver instruments only the routes it installed
/// (`endpoints/metrics/metrics.go` `InstrumentRouteFunc`; unknown paths reach NotFound
/// uncounted); the verb comes from [`crate::metrics::verb`].
async fn observe(
    State(state): State<Arc<AppState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    // kube's CleanVerb: a server-side apply is counted as `apply`, not `patch`.
    let apply = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct == "application/apply-patch+yaml");
    let method = match req.method().as_str() {
        "PATCH" if apply => "APPLY".to_string(),
        m => m.to_string(),
    };
    let info = request_info::parse(req.uri().path());
    let watch = options::raw_query_watch(req.uri().query());
    let started = std::time::Instant::now();
    let resp = next.run(req).await;
    let served = info.and_then(|info| {
        let labels = served_labels(&state.resources().resources, &info)?;
        Some((info, labels))
    });
    if let Some((info, (group, resource))) = served {
        let verb = crate::metrics::verb(&method, !info.name.is_empty(), watch || info.watch_path);
        let m = crate::metrics::metrics();
        m.requests
            .with_label_values(&[
                verb,
                group.as_str(),
                resource.as_str(),
                resp.status().as_str(),
            ])
            .inc();
        if verb != "WATCH" {
            m.request_duration
                .with_label_values(&[verb, group.as_str(), resource.as_str()])
                .observe(started.elapsed().as_secs_f64());
        }
    }
    resp
}

/// The `group` and `resource` labels of a request: the served resource's names (with
/// `/status` for a served status subresource); `None` for anything the server does not serve.
fn served_labels(map: &ResourceMap, info: &request_info::RequestInfo) -> Option<(String, String)> {
    let r = map.get(&info.group, &info.version, &info.resource)?;
    let d = &r.description;
    match info.subresource.as_str() {
        "" => Some((d.group.clone(), d.plural.clone())),
        "status" if d.has_status() => Some((d.group.clone(), format!("{}/status", d.plural))),
        _ => None,
    }
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.terminating.load(std::sync::atomic::Ordering::SeqCst) {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[-]shutdown failed: process is shutting down\nreadyz check failed\n",
        )
            .into_response();
    }
    match state.backend.health().await {
        Ok(()) => "ok".into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("[-]storage failed: {e}\nreadyz check failed\n"),
        )
            .into_response(),
    }
}

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

fn aggregated_response(body: Value) -> Response {
    let mut r = Json(body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(discovery::AGGREGATED_V2),
    );
    r
}

async fn api_root(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if discovery::wants_aggregated(accept(&headers)) {
        return aggregated_response(discovery::aggregated(&state.resources().resources, true));
    }
    Json(discovery::api_versions(&state.address)).into_response()
}

async fn apis_root(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if discovery::wants_aggregated(accept(&headers)) {
        return aggregated_response(discovery::aggregated(&state.resources().resources, false));
    }
    Json(discovery::api_group_list(&state.resources().resources)).into_response()
}

/// Legacy discovery below `/api` and `/apis`: `/api/<v>`, `/apis/<g>`, `/apis/<g>/<v>`.
/// `None` when the path is not one of those.
pub fn legacy_discovery(map: &ResourceMap, path: &str) -> Option<Response> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let body = match parts.as_slice() {
        ["api", version] => discovery::api_resource_list(map, "", version),
        ["apis", group] => map
            .groups()
            .get(*group)
            .map(|vs| discovery::api_group(group, vs)),
        ["apis", group, version] => discovery::api_resource_list(map, group, version),
        _ => return None,
    };
    Some(match body {
        Some(b) => Json(b).into_response(),
        None => ApiError::no_route(path).into_response(),
    })
}

async fn openapi_root(State(state): State<Arc<AppState>>) -> Response {
    Json(openapi::root(&state.resources().openapi)).into_response()
}

async fn openapi_doc(State(state): State<Arc<AppState>>, Path(gv): Path<String>) -> Response {
    match state.resources().openapi.get(gv.trim_matches('/')) {
        Some(doc) => {
            let mut r = Json(doc).into_response();
            r.headers_mut().insert(
                header::CACHE_CONTROL,
                header::HeaderValue::from_static("public, immutable, max-age=31536000"),
            );
            r
        }
        None => ApiError::no_route(&format!("/openapi/v3/{gv}")).into_response(),
    }
}

/// Parse one `--etcd-servers-overrides` entry: `group/resource#server;server`
/// (kube-apiserver's `pkg/kubeapiserver/options` format; the core group is empty).
/// Errors: no `#`, no `/`, or no server.
pub fn parse_override(s: &str) -> anyhow::Result<((String, String), Vec<String>)> {
    let (gr, servers) = s.split_once('#').ok_or_else(|| {
        anyhow::anyhow!("--etcd-servers-overrides {s:?}: expected group/resource#servers")
    })?;
    let (group, resource) = gr.split_once('/').ok_or_else(|| {
        anyhow::anyhow!("--etcd-servers-overrides {s:?}: expected group/resource before '#'")
    })?;
    let servers: Vec<String> = servers
        .split(';')
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect();
    if servers.is_empty() || resource.is_empty() {
        anyhow::bail!("--etcd-servers-overrides {s:?}: needs a resource and at least one server");
    }
    Ok(((group.to_string(), resource.to_string()), servers))
}

/// Open storage, load the plugins and serve until SIGTERM / Ctrl-C, finishing requests in
/// flight. Errors: storage cannot be opened, the listener cannot bind, or the runtime cannot
/// start. A plugin that fails to load is logged and skipped.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let compaction = (args.etcd_compaction_interval_seconds > 0)
        .then(|| Duration::from_secs(args.etcd_compaction_interval_seconds));
    let backend_config = if args.etcd_servers.is_empty() {
        BackendConfig::Embedded(args.data_dir.join("store"), compaction)
    } else {
        BackendConfig::Etcd(Etcd3Config {
            ca_file: args.etcd_cafile.clone(),
            cert_file: args.etcd_certfile.clone(),
            key_file: args.etcd_keyfile.clone(),
            compaction_interval: compaction,
            ..Etcd3Config::new(args.etcd_servers.clone())
        })
    };
    let backend = AnyBackend::open(&backend_config)
        .await
        .map_err(|e| anyhow::anyhow!("storage: {e}"))?;
    let mut factory = StorageFactory::new(&args.etcd_prefix, backend.clone());
    for o in &args.etcd_servers_overrides {
        let (gr, servers) = parse_override(o)?;
        let config = BackendConfig::Etcd(Etcd3Config {
            ca_file: args.etcd_cafile.clone(),
            cert_file: args.etcd_certfile.clone(),
            key_file: args.etcd_keyfile.clone(),
            compaction_interval: compaction,
            ..Etcd3Config::new(servers)
        });
        let b = AnyBackend::open(&config)
            .await
            .map_err(|e| anyhow::anyhow!("storage override {o}: {e}"))?;
        factory.set_override(gr, b);
    }
    factory.set_watch_cache(args.watch_cache);
    let mut runtime_config = args.limits.runtime_config();
    // Compiled artifacts are kept under the data dir unless told otherwise, and compiled in a
    // child process, so the server's memory after start is that of the loaded artifacts only.
    runtime_config.cache_dir = Some(
        runtime_config
            .cache_dir
            .unwrap_or_else(|| args.data_dir.join("plugin-cache")),
    );
    runtime_config.compile_in_subprocess = true;
    let runtime = PluginRuntime::new(runtime_config)?;
    let manager = Arc::new(PluginManager::new(
        runtime,
        args.plugin_dir.clone(),
        factory,
    ));
    let m = manager.clone();
    crate::metrics::set_cache_stats_source(Box::new(move || m.watch_cache_stats()));

    let open_files = serving::raise_open_files_limit();
    let listener = tokio::net::TcpListener::bind((args.bind_address, args.port)).await?;
    let address = listener.local_addr()?.to_string();
    let (shutdown_tx, shutdown) = tokio::sync::watch::channel(false);
    let state = Arc::new(AppState {
        snapshot: ArcSwap::from_pointee(Snapshot {
            resources: ResourceMap::default(),
            openapi: BTreeMap::new(),
        }),
        backend,
        watch_timeout: Duration::from_secs(args.min_request_timeout_seconds.max(1)),
        address: address.clone(),
        shutdown,
        terminating: std::sync::atomic::AtomicBool::new(false),
        request_timeout: args.request_timeout,
    });
    crate::reload::watch_folder(manager.clone(), state.clone(), args.plugin_reload);
    manager.rescan(&state).await;
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
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {},
        }
        // kube-apiserver's order: /readyz fails at once, the listener stays open for
        // --shutdown-delay-duration (so load balancers notice), then closes; watches end.
        st.terminating.store(true, std::sync::atomic::Ordering::SeqCst);
        tracing::info!(delay_seconds = delay.as_secs_f64(), "shutting down: /readyz fails from now");
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

#[cfg(test)]
mod tests {
    use super::parse_override;

    #[test]
    fn etcd_servers_overrides_parse_like_kube_apiserver() {
        let ((g, r), s) = parse_override("/events#http://127.0.0.1:4002").unwrap();
        assert_eq!((g.as_str(), r.as_str()), ("", "events"));
        assert_eq!(s, ["http://127.0.0.1:4002"]);
        let (_, s) = parse_override("example.dev/widgets#http://a:2379;http://b:2379").unwrap();
        assert_eq!(s.len(), 2);
        assert!(parse_override("widgets").is_err());
        assert!(parse_override("widgets#http://a").is_err());
        assert!(parse_override("/events#").is_err());
    }
}

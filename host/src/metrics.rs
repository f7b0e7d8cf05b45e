//! Prometheus metrics served at `/metrics`, named as kube-apiserver names its own where one
//! exists (`apiserver_request_total`, `apiserver_request_duration_seconds`), plus the plugin
//! runtime's (`wasm_apiserver_plugin_call_duration_seconds`, by plugin and hook, and
//! `wasm_apiserver_plugin_faults_total`).

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};
use std::sync::OnceLock;

/// The process's metrics.
pub struct Metrics {
    registry: Registry,
    /// `apiserver_request_total{verb, group, resource, code}`.
    pub requests: IntCounterVec,
    /// `apiserver_request_duration_seconds{verb, group, resource}` (watches excluded).
    pub request_duration: HistogramVec,
    /// `wasm_apiserver_plugin_call_duration_seconds{plugin, hook}`.
    pub plugin_calls: HistogramVec,
    /// `wasm_apiserver_plugin_faults_total{plugin, hook, kind}` (trap, timeout, memory, output).
    pub plugin_faults: IntCounterVec,
    /// `wasm_apiserver_plugin_reloads_total{plugin, result}` (result: `success`, `failure`,
    /// `removed`).
    pub plugin_reloads: IntCounterVec,
    /// `authenticated_user_requests{username}`, the user name compressed to a bounded set as
    /// kube does (`pkg/endpoints/filters/metrics.go` `compressUsername`).
    pub authenticated_user_requests: IntCounterVec,
    /// `authentication_attempts{result}` (`success`, `failure`).
    pub authentication_attempts: IntCounterVec,
    /// `apiserver_authorization_decisions_total{decision}` (`allowed`, `denied`).
    pub authorization_decisions: IntCounterVec,
    /// `leader_election_master_status{name}` (client-go's): 1 while this server leads.
    pub leader: prometheus::IntGaugeVec,
    /// `wasm_apiserver_server_info{server_id}`: 1, naming this replica (`--server-id`).
    pub server_info: prometheus::IntGaugeVec,
    /// `apiserver_audit_event_total`: audit events generated.
    pub audit_events: prometheus::IntCounter,
    /// `apiserver_audit_error_total{plugin}`: audit events dropped (queue full, write failed).
    pub audit_errors: IntCounterVec,
    /// `apiserver_dropped_requests_total{request_kind}` (`readOnly`, `mutating`): answered 429
    /// by the in-flight limits.
    pub dropped_requests: IntCounterVec,
}

/// The global metrics, created on first use.
pub fn metrics() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(|| {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("apiserver_request_total", "Counter of apiserver requests broken out by verb, group, resource and HTTP response code."),
            &["verb", "group", "resource", "code"],
        )
        .expect("valid metric");
        let request_duration = HistogramVec::new(
            HistogramOpts::new("apiserver_request_duration_seconds", "Response latency distribution in seconds for each verb, group and resource.")
                .buckets(vec![0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0]),
            &["verb", "group", "resource"],
        )
        .expect("valid metric");
        let plugin_calls = HistogramVec::new(
            HistogramOpts::new("wasm_apiserver_plugin_call_duration_seconds", "Duration of strategy plugin hook calls in seconds.")
                .buckets(vec![0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.01, 0.1, 1.0]),
            &["plugin", "hook"],
        )
        .expect("valid metric");
        let plugin_faults = IntCounterVec::new(
            Opts::new("wasm_apiserver_plugin_faults_total", "Strategy plugin calls that failed, by plugin, hook and kind of fault."),
            &["plugin", "hook", "kind"],
        )
        .expect("valid metric");
        let plugin_reloads = IntCounterVec::new(
            Opts::new("wasm_apiserver_plugin_reloads_total", "Plugin loads and reloads by plugin and result (success, failure, removed)."),
            &["plugin", "result"],
        )
        .expect("valid metric");
        let authenticated_user_requests = IntCounterVec::new(
            Opts::new("authenticated_user_requests", "Counter of authenticated requests broken out by username."),
            &["username"],
        )
        .expect("valid metric");
        let authentication_attempts = IntCounterVec::new(
            Opts::new("authentication_attempts", "Counter of authenticated attempts."),
            &["result"],
        )
        .expect("valid metric");
        let authorization_decisions = IntCounterVec::new(
            Opts::new("apiserver_authorization_decisions_total", "Total number of terminal decisions made by the authorizer chain."),
            &["decision"],
        )
        .expect("valid metric");
        let leader = prometheus::IntGaugeVec::new(
            Opts::new("leader_election_master_status", "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease."),
            &["name"],
        )
        .expect("valid metric");
        let server_info = prometheus::IntGaugeVec::new(
            Opts::new("wasm_apiserver_server_info", "A metric with a constant '1' value labeled by the identity of this server among the replicas of its storage."),
            &["server_id"],
        )
        .expect("valid metric");
        let audit_events = prometheus::IntCounter::new(
            "apiserver_audit_event_total",
            "Counter of audit events generated and sent to the audit backend.",
        )
        .expect("valid metric");
        let audit_errors = IntCounterVec::new(
            Opts::new("apiserver_audit_error_total", "Counter of audit events that failed to be audited properly."),
            &["plugin"],
        )
        .expect("valid metric");
        let dropped_requests = IntCounterVec::new(
            Opts::new("apiserver_dropped_requests_total", "Number of requests dropped with 'Try again later' response."),
            &["request_kind"],
        )
        .expect("valid metric");
        for c in [
            Box::new(plugin_reloads.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(dropped_requests.clone()),
            Box::new(audit_events.clone()),
            Box::new(audit_errors.clone()),
            Box::new(leader.clone()),
            Box::new(server_info.clone()),
            Box::new(authenticated_user_requests.clone()),
            Box::new(authentication_attempts.clone()),
            Box::new(authorization_decisions.clone()),
            Box::new(requests.clone()),
            Box::new(request_duration.clone()),
            Box::new(plugin_calls.clone()),
            Box::new(plugin_faults.clone()),
        ] {
            registry.register(c).expect("unique metric");
        }
        Metrics {
            registry,
            requests,
            request_duration,
            plugin_calls,
            plugin_faults,
            plugin_reloads,
            authenticated_user_requests,
            authentication_attempts,
            authorization_decisions,
            audit_events,
            audit_errors,
            dropped_requests,
            leader,
            server_info,
        }
    })
}

/// Count an authenticated request by `username` (compressed: a few known names kept, an
/// address-like name `email_id`, anything else `other`, so clients cannot grow the label set).
pub fn authenticated_user_request(username: &str) {
    let m = metrics();
    m.authentication_attempts
        .with_label_values(&["success"])
        .inc();
    let compressed = match username {
        "admin"
        | "client"
        | "kube_proxy"
        | "kubelet"
        | "system:serviceaccount:kube-system:default" => username,
        u if u.contains('@') => "email_id",
        _ => "other",
    };
    m.authenticated_user_requests
        .with_label_values(&[compressed])
        .inc();
}

/// Whether this server leads the lease named `lease` (one label value per lease the server
/// contends for).
pub fn leader(lease: &str, leading: bool) {
    metrics()
        .leader
        .with_label_values(&[lease])
        .set(leading as i64);
}

/// Name this server (one label value for the process's life).
pub fn server_info(server_id: &str) {
    metrics().server_info.with_label_values(&[server_id]).set(1);
}

/// Count an audit event sent to the backend.
pub fn audit_event() {
    metrics().audit_events.inc();
}

/// Count `n` audit events lost (buffer full, serialization or write failed).
pub fn audit_errors(n: u64) {
    metrics().audit_errors.with_label_values(&["log"]).inc_by(n);
}

/// Count a request refused by an in-flight limit.
pub fn dropped_request(mutating: bool) {
    let kind = if mutating { "mutating" } else { "readOnly" };
    metrics().dropped_requests.with_label_values(&[kind]).inc();
}

/// Count a request answered 401.
pub fn authentication_failure() {
    metrics()
        .authentication_attempts
        .with_label_values(&["failure"])
        .inc();
}

/// Count the authorizer chain's decision on a request (allowed, or denied / no opinion).
pub fn authorization_decision(allowed: bool) {
    let label = if allowed { "allowed" } else { "denied" };
    metrics()
        .authorization_decisions
        .with_label_values(&[label])
        .inc();
}

/// Where the watch cache's per-resource figures come from (set once by the server).
pub type CacheStatsSource = Box<
    dyn Fn() -> Vec<(
            (String, String),
            wasm_apiserver_storage::cacher::CacherStats,
        )> + Send
        + Sync,
>;

static CACHE_STATS: OnceLock<CacheStatsSource> = OnceLock::new();

/// Register the source of the watch cache figures.
pub fn set_cache_stats_source(f: CacheStatsSource) {
    let _ = CACHE_STATS.set(f);
}

/// The Prometheus text exposition of every metric, plus the watch cache's figures per
/// resource (`apiserver_watch_cache_*`, as kube-apiserver names them; `group/resource` labels).
pub fn render() -> String {
    let mut buf = Vec::new();
    let _ = TextEncoder::new().encode(&metrics().registry.gather(), &mut buf);
    let mut text = String::from_utf8(buf).unwrap_or_default();
    if let Some(source) = CACHE_STATS.get() {
        let stats = source();
        type Series = (
            &'static str,
            &'static str,
            &'static str,
            fn(&wasm_apiserver_storage::cacher::CacherStats) -> u64,
        );
        let series: [Series; 5] = [
            (
                "apiserver_watch_cache_capacity_objects",
                "gauge",
                "Objects held by the watch cache.",
                |s| s.objects,
            ),
            (
                "apiserver_watch_cache_events_dispatched_total",
                "counter",
                "Events dispatched to watchers by the watch cache.",
                |s| s.events_dispatched,
            ),
            (
                "apiserver_watch_cache_watchers",
                "gauge",
                "Watchers served by the watch cache.",
                |s| s.watchers,
            ),
            (
                "apiserver_terminated_watchers_total",
                "counter",
                "Watchers closed because they could not keep up.",
                |s| s.terminated_watchers,
            ),
            (
                "apiserver_watch_cache_resource_version",
                "gauge",
                "The resourceVersion the watch cache has caught up to.",
                |s| s.resource_version,
            ),
        ];
        for (name, kind, help, f) in series {
            text.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
            for ((group, resource), st) in &stats {
                text.push_str(&format!(
                    "{name}{{group=\"{group}\",resource=\"{resource}\"}} {}\n",
                    f(st)
                ));
            }
        }
    }
    text
}

/// kube-apiserver's `verb` label for a request (`endpoints/metrics/metrics.go` `CleanVerb` over
/// the route's action verb): `GET` (one object), `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`,
/// `APPLY` (method `APPLY`: a PATCH with an `application/apply-patch+yaml` body), `DELETE`,
/// `DELETECOLLECTION`; anything else `other`.
pub fn verb(method: &str, has_name: bool, watch: bool) -> &'static str {
    match (method, has_name, watch) {
        ("GET", _, true) => "WATCH",
        ("GET", true, _) => "GET",
        ("GET", false, _) => "LIST",
        ("POST", _, _) => "POST",
        ("PUT", _, _) => "PUT",
        ("PATCH", _, _) => "PATCH",
        ("APPLY", _, _) => "APPLY",
        ("DELETE", true, _) => "DELETE",
        ("DELETE", false, _) => "DELETECOLLECTION",
        _ => "other",
    }
}

//! The process's metrics registry, served at `/metrics` (kube's
//! `k8s.io/component-base/metrics/legacyregistry`): each module defines and registers its own
//! metrics where they are counted, as upstream packages do, named as kube-apiserver names them
//! where one exists — the request filters (`apiserver_request_total`,
//! `apiserver_request_duration_seconds`, `authenticated_user_requests`,
//! `authentication_attempts`, `apiserver_authorization_decisions_total`,
//! `apiserver_dropped_requests_total`), audit (`apiserver_audit_event_total`,
//! `apiserver_audit_error_total`), leader election (`leader_election_master_status`), the
//! plugin runtime (`wasm_apiserver_plugin_call_duration_seconds`,
//! `wasm_apiserver_plugin_faults_total`, `wasm_apiserver_plugin_reloads_total`) and start-up
//! (`wasm_apiserver_server_info`). This file only registers and renders; it imports no module.

use prometheus::core::Collector;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};
use std::sync::OnceLock;

/// The registry every metric of the process is registered in.
fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Registry::new)
}

/// Register `c` (`legacyregistry.MustRegister`) and return it. Panics when a metric of the
/// same name is already registered: each metric is defined once, by its module.
pub fn register<C: Collector + Clone + 'static>(c: C) -> C {
    registry()
        .register(Box::new(c.clone()))
        .expect("each metric is registered once");
    c
}

/// A registered counter vector `name{labels}`.
pub fn counter_vec(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    register(IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric"))
}

/// A registered counter `name`.
pub fn counter(name: &str, help: &str) -> IntCounter {
    register(IntCounter::new(name, help).expect("valid metric"))
}

/// A registered gauge vector `name{labels}`.
pub fn gauge_vec(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    register(IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric"))
}

/// A registered histogram vector `name{labels}` with `buckets` (seconds).
pub fn histogram_vec(name: &str, help: &str, buckets: &[f64], labels: &[&str]) -> HistogramVec {
    register(
        HistogramVec::new(
            HistogramOpts::new(name, help).buckets(buckets.to_vec()),
            labels,
        )
        .expect("valid metric"),
    )
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
    let _ = TextEncoder::new().encode(&registry().gather(), &mut buf);
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

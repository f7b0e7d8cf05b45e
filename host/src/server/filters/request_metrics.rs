//! Request metrics (`k8s.io/apiserver/pkg/endpoints/metrics`): `apiserver_request_total` and
//! `apiserver_request_duration_seconds` around every request.

use crate::registry::{ResourceMap, Served};
use crate::server::context::request_info;
use crate::server::request_info::RequestInfo;
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use prometheus::{HistogramVec, IntCounterVec};
use std::sync::{Arc, LazyLock};

/// `apiserver_request_total{verb, group, resource, code}` and
/// `apiserver_request_duration_seconds{verb, group, resource}` (watches excluded), as
/// `endpoints/metrics/metrics.go` defines them.
static REQUEST_METRICS: LazyLock<(IntCounterVec, HistogramVec)> = LazyLock::new(|| {
    (
        crate::metrics::counter_vec(
            "apiserver_request_total",
            "Counter of apiserver requests broken out by verb, group, resource and HTTP response code.",
            &["verb", "group", "resource", "code"],
        ),
        crate::metrics::histogram_vec(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, group and resource.",
            &[
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                5.0, 10.0, 30.0,
            ],
            &["verb", "group", "resource"],
        ),
    )
});

/// Count and time every resource request (`apiserver_request_total`,
/// `apiserver_request_duration_seconds`); watches are counted, not timed. Labels come from a
/// closed set, so no client can grow the series: only requests for a served resource (and a
/// served subresource) are counted, as kube-apiserver instruments only the routes it installed
/// (`endpoints/metrics/metrics.go` `InstrumentRouteFunc`; unknown paths reach NotFound
/// uncounted); the verb comes from [`verb`].
pub async fn observe(
    State(served): State<Arc<Served>>,
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
    let info = request_info(&req);
    let started = std::time::Instant::now();
    let resp = next.run(req).await;
    let labels = info
        .is_resource_request
        .then(|| served_labels(&served.load().resources, &info))
        .flatten();
    if let Some((group, resource)) = labels {
        let verb = verb(&method, !info.name.is_empty(), info.long_running);
        let (requests, request_duration) = &*REQUEST_METRICS;
        requests
            .with_label_values(&[
                verb,
                group.as_str(),
                resource.as_str(),
                resp.status().as_str(),
            ])
            .inc();
        if verb != "WATCH" {
            request_duration
                .with_label_values(&[verb, group.as_str(), resource.as_str()])
                .observe(started.elapsed().as_secs_f64());
        }
    }
    resp
}

/// The `group` and `resource` labels of a request: the served resource's names (with
/// `/status` for a served status subresource); `None` for anything the server does not serve.
fn served_labels(map: &ResourceMap, info: &RequestInfo) -> Option<(String, String)> {
    let r = map.get(&info.group, &info.version, &info.resource)?;
    let d = &r.description;
    match info.subresource.as_str() {
        "" => Some((d.group.clone(), d.plural.clone())),
        "status" if d.has_status() => Some((d.group.clone(), format!("{}/status", d.plural))),
        _ => None,
    }
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

//! Request metrics (`k8s.io/apiserver/pkg/endpoints/metrics`): `apiserver_request_total` and
//! `apiserver_request_duration_seconds` around every request.

use crate::registry::{ResourceMap, Served};
use crate::server::context::request_info;
use crate::server::request_info::RequestInfo;
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use std::sync::Arc;

/// Count and time every resource request (`apiserver_request_total`,
/// `apiserver_request_duration_seconds`); watches are counted, not timed. Labels come from a
/// closed set, so no client can grow the series: only requests for a served resource (and a
/// served subresource) are counted, as kube-apiserver instruments only the routes it installed
/// (`endpoints/metrics/metrics.go` `InstrumentRouteFunc`; unknown paths reach NotFound
/// uncounted); the verb comes from [`crate::metrics::verb`].
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
        let verb = crate::metrics::verb(&method, !info.name.is_empty(), info.long_running);
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
fn served_labels(map: &ResourceMap, info: &RequestInfo) -> Option<(String, String)> {
    let r = map.get(&info.group, &info.version, &info.resource)?;
    let d = &r.description;
    match info.subresource.as_str() {
        "" => Some((d.group.clone(), d.plural.clone())),
        "status" if d.has_status() => Some((d.group.clone(), format!("{}/status", d.plural))),
        _ => None,
    }
}

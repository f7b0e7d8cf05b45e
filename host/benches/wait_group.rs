//! What graceful termination's wait group (`server/filters/wait_group.rs`, kube's
//! `WithWaitGroup`) costs each request: the same in-process router — request info and a
//! handler answering a small JSON body after reading the request's — with and without the
//! wait-group filter, N requests each through `tower::ServiceExt::oneshot` (no sockets), a GET
//! and a POST with a 1 KiB body, alternating rounds; nanoseconds per request and the
//! difference.
//!
//! Run: `cargo bench -p wasm-apiserver --bench wait_group`

use axum::body::Body;
use axum::http::Request;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::any;
use axum::Router;
use std::time::Instant;
use tower::ServiceExt;
use wasm_apiserver::server::filters::request_info::with_request_info;
use wasm_apiserver::server::filters::wait_group::{with_wait_group, WaitGroups};

const N: usize = 200_000;
const ROUNDS: usize = 3;

async fn handler(body: Body) -> &'static str {
    let _ = axum::body::to_bytes(body, 1 << 20).await;
    "{\"kind\":\"ConfigMap\"}"
}

fn router(wait_group: bool, groups: &WaitGroups) -> Router {
    let r = Router::new().route("/api/v1/namespaces/default/configmaps", any(handler));
    let r = if wait_group {
        r.layer(from_fn_with_state(groups.clone(), with_wait_group))
    } else {
        r
    };
    r.layer(from_fn(with_request_info))
}

/// ns per request through `app`.
async fn run(app: &Router, post: bool) -> f64 {
    let body = "x".repeat(1024);
    let started = Instant::now();
    for _ in 0..N {
        let req = if post {
            Request::post("/api/v1/namespaces/default/configmaps").body(Body::from(body.clone()))
        } else {
            Request::get("/api/v1/namespaces/default/configmaps").body(Body::empty())
        }
        .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let _ = axum::body::to_bytes(resp.into_body(), usize::MAX).await;
    }
    started.elapsed().as_nanos() as f64 / N as f64
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (_tx, not_accepting) = tokio::sync::watch::channel(false);
        let groups = WaitGroups::new(not_accepting);
        let (without, with) = (router(false, &groups), router(true, &groups));
        println!("wait group: ns per request in process ({N} requests, {ROUNDS} rounds)");
        for (what, post) in [("GET", false), ("POST 1 KiB", true)] {
            let (mut a, mut b) = (0.0, 0.0);
            run(&without, post).await;
            run(&with, post).await;
            for round in 1..=ROUNDS {
                let x = run(&without, post).await;
                let y = run(&with, post).await;
                println!(
                    "   {what:<10} round {round}: without {x:>6.0}   with {y:>6.0}   (+{:.0} ns)",
                    y - x
                );
                a += x;
                b += y;
            }
            let (a, b) = (a / ROUNDS as f64, b / ROUNDS as f64);
            println!(
                "   {what:<10} mean:    without {a:>6.0}   with {b:>6.0}   (+{:.0} ns, {:.2}×)",
                b - a,
                b / a
            );
        }
    });
}

//! What field management (server-side apply's `managedFields`, `crate::fieldmanager`) costs per
//! write of the ~2 KB pod of `benches/common`, against the server's whole CPU time for the same
//! write measured in the same run (issue 18's target: at most 25% of the request's server time).
//!
//! 1. The real server binary (embedded store, `pods` and `namespaces` plugins, plain HTTP on
//!    loopback) serves pod creates (POST) and updates (PUT changing an image) at 8 in flight;
//!    its CPU time per request comes from `/proc/<pid>/stat` around the measured requests.
//! 2. In this process, the field manager built from the same `pods.wasm` description runs the
//!    exact calls the server makes for those writes (`FieldManager::update` from nothing to the
//!    created pod, and from the stored pod to the updated one, managed fields included), and
//!    a server-side apply of the pod by a second manager; CPU per call by `getrusage`.
//!
//! Run: `cargo bench -p wasm-apiserver --bench field_manager` (after `bash plugins/build.sh`).

mod common;

use common::{pod, proc_cpu_us, root, self_cpu_us, Server};
use serde_json::{json, Value};
use std::hint::black_box;
use wasm_apiserver::fieldmanager::FieldManager;
use wasm_apiserver::plugin::{PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::Strategy;

// The server's allocator, so the in-process figures are the server's costs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU µs per call of `f`, over `n` calls after `n / 10` warm-up calls.
fn per_call(n: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..n / 10 {
        f();
    }
    let start = self_cpu_us();
    for _ in 0..n {
        f();
    }
    (self_cpu_us() - start) / n as f64
}

async fn run_all<F, Fut>(n: usize, in_flight: usize, f: F)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let f = std::sync::Arc::new(f);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..in_flight {
        let (f, next) = (f.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    break;
                }
                f(i).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

fn named(i: usize) -> Value {
    let mut p = pod();
    p["metadata"]["name"] = json!(format!("web-{i}"));
    p["metadata"].as_object_mut().unwrap().remove("uid");
    p["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    p
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    const N: usize = 1500;
    const IN_FLIGHT: usize = 8;
    let (dir, plugins) = Server::dir_with_plugins(&["namespaces", "pods"]);
    let server = Server::spawn_with_plugins(dir, &plugins, |cmd| {
        cmd.arg("--authorization-mode=AlwaysAllow");
    });
    let pid = server.child.id();
    let http = reqwest::Client::new();
    let base = format!("{}/api/v1/namespaces/default/pods", server.url);
    let _ = http
        .post(format!("{}/api/v1/namespaces", server.url))
        .json(&json!({"metadata": {"name": "default"}}))
        .send()
        .await;

    // Creates.
    let cpu0 = proc_cpu_us(pid);
    let (h, b) = (http.clone(), base.clone());
    run_all(N, IN_FLIGHT, move |i| {
        let (h, b) = (h.clone(), b.clone());
        async move {
            let r = h.post(&b).json(&named(i)).send().await.unwrap();
            assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        }
    })
    .await;
    let server_create = (proc_cpu_us(pid) - cpu0) / N as f64;

    // Updates: PUT of each stored pod (read before the measurement) with another image.
    let stored: Vec<Value> = {
        let mut v = Vec::new();
        for i in 0..N {
            let r = http.get(format!("{base}/web-{i}")).send().await.unwrap();
            v.push(r.json().await.unwrap());
        }
        v
    };
    let stored = std::sync::Arc::new(stored);
    let cpu0 = proc_cpu_us(pid);
    let (h, b, s) = (http.clone(), base.clone(), stored.clone());
    run_all(N, IN_FLIGHT, move |i| {
        let (h, b, s) = (h.clone(), b.clone(), s.clone());
        async move {
            let mut p = s[i].clone();
            p["spec"]["containers"][0]["image"] = json!("registry.example.dev/web:1.4.3");
            let r = h.put(format!("{b}/web-{i}")).json(&p).send().await.unwrap();
            assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
        }
    })
    .await;
    let server_update = (proc_cpu_us(pid) - cpu0) / N as f64;

    // The field manager's calls for the same writes, in this process.
    let runtime = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let wasm = runtime
        .load_file(&root().join("target/plugins/pods.wasm"))
        .expect("run `bash plugins/build.sh` first");
    let fm = FieldManager::new(wasm.description());
    let created = stored[0].clone();
    let mut untracked = created.clone();
    untracked["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    let mut changed = created.clone();
    changed["spec"]["containers"][0]["image"] = json!("registry.example.dev/web:1.4.3");
    let mut applied = named(0);
    applied["spec"]["containers"][0]["image"] = json!("registry.example.dev/web:1.4.4");
    let calls = 3000;
    let fm_create = per_call(calls, || {
        black_box(fm.update(&Value::Null, untracked.clone(), "bench", ""));
    });
    let fm_update = per_call(calls, || {
        black_box(fm.update(&created, changed.clone(), "bench", ""));
    });
    let fm_apply = per_call(calls, || {
        black_box(fm.apply(&created, &applied, "applier", true, "").unwrap());
    });
    let clone_only = per_call(calls, || {
        black_box(untracked.clone());
    });

    println!(
        "pod JSON: {} bytes as sent, {} bytes stored with managedFields",
        named(0).to_string().len(),
        created.to_string().len()
    );
    println!(
        "{:<34} {:>12} {:>14} {:>8}",
        "write (2 KB pod)", "field mgmt", "server/request", "share"
    );
    for (what, fm_us, server_us) in [
        (
            "create (POST, 8 in flight)",
            fm_create - clone_only,
            server_create,
        ),
        (
            "update (PUT, 8 in flight)",
            fm_update - clone_only,
            server_update,
        ),
    ] {
        println!(
            "{what:<34} {fm_us:>9.1} µs {server_us:>11.1} µs {:>7.1}%",
            100.0 * fm_us / server_us
        );
    }
    println!(
        "{:<34} {:>9.1} µs (forced, onto the stored pod)",
        "server-side apply by a 2nd manager", fm_apply
    );
}

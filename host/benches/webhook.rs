//! The webhook a strategy plugin replaces (issue 17, item 5): the `pods` validation served as
//! an HTTPS `ValidatingAdmissionWebhook` on loopback against the same rules run as the wasm
//! `create-sequence` the server calls, per request, in one run.
//!
//! Run: `bash plugins/build.sh && cargo bench -p wasm-apiserver --bench webhook`
//!
//! - **Webhook**: a bench-only HTTPS server (rustls, HTTP/2 and HTTP/1.1 by ALPN, a
//!   self-signed certificate) answering `admission.k8s.io/v1` `AdmissionReview`s: it decodes
//!   the review, runs the pod validation natively (`glue::validate::<pods::Pods>`, the code the
//!   `pods` component is built from) on `request.object`, and answers `response.uid`,
//!   `allowed`, and on a refusal a `Status` with the field errors, as a webhook does. The
//!   caller does what kube-apiserver's `admission/plugin/webhook/validating/dispatcher.go`
//!   does per call: build the `AdmissionReview` (uid, kind, resource, requestKind, operation
//!   CREATE, userInfo, the object, options), encode it, POST it over a kept-alive TLS
//!   connection (client-go negotiates HTTP/2 over TLS), decode the answer, check the uid and
//!   `allowed`.
//! - **wasm**: `validate` on the `pods` component (the same check: host JSON encode, the
//!   component call, the answer's decode), and `sequence::create` — PrepareForCreate,
//!   Validate, WarningsOnCreate and Canonicalize in one call, the whole strategy the server
//!   runs, more work than the webhook's validation.
//! - Both in this process, on this machine's cores; CPU per request is the process's CPU
//!   (`getrusage`) over the measurement divided by the requests, so the webhook figure counts
//!   both ends of the call, as a webhook on the same node costs both. Single = one request
//!   at a time; 64 in flight = 64 concurrent callers (for wasm, 64 tasks on the runtime's
//!   worker threads calling the component).
//!
//! Target (issue 17): wasm ≥ 20× cheaper per request than the webhook.

mod common;

use bytes::Bytes;
use common::{pod, self_cpu_us as cpu_us};
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasm_apiserver::plugin::{PluginRuntime, RuntimeConfig};
use wasm_apiserver::strategy::{sequence, Strategy};
use wasm_apiserver_sdk::glue;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MEASURE: Duration = Duration::from_secs(5);
const WARM_UP: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------------
// The webhook server

/// The validating webhook's answer to one `AdmissionReview` request body.
fn review(body: &[u8]) -> Value {
    let review: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return json!({"error": e.to_string()}),
    };
    let req = &review["request"];
    let object = serde_json::to_string(&req["object"]).unwrap();
    let errors = glue::validate::<pods::Pods>(&object);
    let mut response = json!({"uid": req["uid"], "allowed": errors.is_empty()});
    if !errors.is_empty() {
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"field": e.field, "message": e.detail}))
            .collect();
        response["status"] = json!({"code": 422, "reason": "Invalid",
            "message": format!("{} field errors", causes.len()), "details": {"causes": causes}});
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// Serve the webhook on 127.0.0.1; its address and the certificate (PEM) to trust.
async fn start_webhook() -> (std::net::SocketAddr, String) {
    let cert = rcgen::generate_simple_self_signed(vec!["webhook.bench.svc".to_string()]).unwrap();
    let cert_pem = cert.cert.pem();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into()),
        )
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let _ = stream.set_nodelay(true);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    |req: hyper::Request<hyper::body::Incoming>| async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        let answer = serde_json::to_vec(&review(&body)).unwrap();
                        Ok::<_, hyper::Error>(
                            hyper::Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(answer)))
                                .unwrap(),
                        )
                    },
                );
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    (addr, cert_pem)
}

/// One call as kube-apiserver's validating dispatcher makes it; panics unless allowed.
async fn call_webhook(c: &reqwest::Client, url: &str, object: &Value, n: u64) {
    let uid = format!("9d0b6a3e-1c2f-4e5a-8b7c-{n:012x}");
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "name": object["metadata"]["name"], "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "alice", "uid": "u-1", "groups": ["dev", "system:authenticated"]},
            "object": object, "oldObject": null, "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
        }
    });
    let body = serde_json::to_vec(&review).unwrap();
    let r = c
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let answer: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    let resp = &answer["response"];
    assert_eq!(resp["uid"].as_str(), Some(uid.as_str()));
    assert_eq!(resp["allowed"], json!(true), "{answer}");
}

// ---------------------------------------------------------------------------------------------
// Measurement

struct Figures {
    rate: f64,
    p50: u32,
    p99: u32,
    cpu: f64,
}

async fn measure<F, Fut>(in_flight: usize, one: F) -> Figures
where
    F: Fn(u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let run = |dur: Duration| {
        let one = one.clone();
        async move {
            let end = Instant::now() + dur;
            let mut tasks = Vec::new();
            for slot in 0..in_flight {
                let one = one.clone();
                tasks.push(tokio::spawn(async move {
                    let mut lat = Vec::new();
                    let mut k = slot as u64 * 1_000_000_000;
                    while Instant::now() < end {
                        let t = Instant::now();
                        one(k).await;
                        lat.push(t.elapsed().as_micros() as u32);
                        k += 1;
                    }
                    lat
                }));
            }
            let mut lat = Vec::new();
            for t in tasks {
                lat.extend(t.await.unwrap());
            }
            lat
        }
    };
    run(WARM_UP).await;
    let (t0, c0) = (Instant::now(), cpu_us());
    let mut lat = run(MEASURE).await;
    let (secs, cpu) = (t0.elapsed().as_secs_f64(), cpu_us() - c0);
    lat.sort_unstable();
    let n = lat.len().max(1);
    Figures {
        rate: lat.len() as f64 / secs,
        p50: lat[(n - 1) / 2],
        p99: lat[((n - 1) as f64 * 0.99) as usize],
        cpu: cpu / n as f64,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = PluginRuntime::new(RuntimeConfig::default()).unwrap();
    let wasm = Arc::new(
        runtime
            .load_file(&root.join("target/plugins/pods.wasm"))
            .expect("run `bash plugins/build.sh` first"),
    );
    let obj = Arc::new(pod());
    // The webhook sees the object as kube sends it: after defaulting and mutation.
    let prepared = Arc::new(
        sequence::create(&*wasm, &obj, &sequence::no_meta_validation)
            .unwrap()
            .object,
    );
    let (addr, cert) = start_webhook().await;
    let c = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert.as_bytes()).unwrap())
        .resolve("webhook.bench.svc", addr)
        .pool_max_idle_per_host(128)
        .build()
        .unwrap();
    let url = format!("https://webhook.bench.svc:{}/validate-pods", addr.port());
    // A refused pod is answered with its causes (the webhook's code path works both ways).
    let mut bad = (*prepared).clone();
    bad["spec"]["containers"][0]["name"] = json!("Not_A_DNS_Label");
    let refused = review(
        json!({"request": {"uid": "x", "object": bad}})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(refused["response"]["allowed"], json!(false), "{refused}");
    let v = c.get(&url).send().await.unwrap().version();
    println!(
        "webhook over {v:?}, pod {} bytes",
        prepared.to_string().len()
    );

    println!("| path | in flight | req/s | p50 µs | p99 µs | CPU µs/req |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut cpu = Vec::new();
    for in_flight in [1usize, 64] {
        let (c2, url2, p2) = (c.clone(), url.clone(), prepared.clone());
        let hook = measure(in_flight, move |k| {
            let (c, url, p) = (c2.clone(), url2.clone(), p2.clone());
            async move { call_webhook(&c, &url, &p, k).await }
        })
        .await;
        let (w, o) = (wasm.clone(), obj.clone());
        let local = measure(in_flight, move |_| {
            let (w, o) = (w.clone(), o.clone());
            async move {
                std::hint::black_box(
                    sequence::create(&*w, &o, &sequence::no_meta_validation).unwrap(),
                );
            }
        })
        .await;
        let (w, p) = (wasm.clone(), prepared.clone());
        let validate = measure(in_flight, move |_| {
            let (w, p) = (w.clone(), p.clone());
            async move {
                assert!(w.validate(&p).unwrap().is_empty());
            }
        })
        .await;
        for (name, f) in [
            ("HTTPS webhook (validation)", &hook),
            ("wasm validate (the same check)", &validate),
            ("wasm create-sequence", &local),
        ] {
            println!(
                "| {name} | {in_flight} | {:.0} | {} | {} | {:.1} |",
                f.rate, f.p50, f.p99, f.cpu
            );
        }
        cpu.push((in_flight, hook.cpu / validate.cpu, hook.cpu / local.cpu));
    }
    for (in_flight, same_check, sequence) in cpu {
        println!(
            "{in_flight} in flight: webhook CPU per request / wasm validate {same_check:.1}×, / wasm create-sequence {sequence:.1}× (target ≥ 20×)"
        );
    }
}

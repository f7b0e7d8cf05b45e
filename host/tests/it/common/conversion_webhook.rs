//! A webhook over HTTPS for tests and benchmarks (the benchmark includes this file): a CA and a
//! serving certificate for 127.0.0.1, and a server answering reviews (`ConversionReview`,
//! `AdmissionReview`) with a given function.

use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A CA named `ca_name` and a serving certificate for 127.0.0.1 signed by it: (CA PEM, cert
/// PEM, key PEM).
pub fn certificates(ca_name: &str) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, ca_name);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// A webhook answering each review with `convert(review)`, on a free loopback port
/// over HTTPS, counting the reviews it answers; it runs as long as the process.
pub fn start(
    cert_pem: &str,
    key_pem: &str,
    convert: fn(&Value) -> Value,
    calls: Arc<AtomicUsize>,
) -> u16 {
    use http_body_util::{BodyExt, Full};
    let tls = wasm_apiserver::server::tls::server_config(cert_pem, key_pem).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tokio_rustls::TlsAcceptor::from(tls);
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                let (acceptor, calls) = (acceptor.clone(), calls.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let calls = calls.clone();
                            async move {
                                let body = req.into_body().collect().await?.to_bytes();
                                let review: Value = serde_json::from_slice(&body).unwrap();
                                calls.fetch_add(1, Ordering::SeqCst);
                                // Off the server's one thread: a slow answer delays
                                // only its own call.
                                let answer = tokio::task::spawn_blocking(move || {
                                    serde_json::to_vec(&convert(&review)).unwrap()
                                })
                                .await
                                .unwrap();
                                Ok::<_, hyper::Error>(hyper::Response::new(Full::new(
                                    bytes::Bytes::from(answer),
                                )))
                            }
                        },
                    );
                    let io = hyper_util::rt::TokioIo::new(tls);
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(io, service)
                    .await;
                });
            }
        });
    });
    port
}

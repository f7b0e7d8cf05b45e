//! An OpenID Connect issuer for tests and benchmarks (the secrets benchmark includes this
//! file): ES256 keys with their JWKs, ID tokens signed with them, and an HTTPS server on
//! loopback serving the discovery document and a JWKS the caller can replace.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use wasm_apiserver::authentication::service_account_keys::pem_keys;

/// A signing key of the issuer: its kid, its PKCS#8 DER and its JWK.
pub struct IssuerKey {
    pub kid: String,
    pub pkcs8: Vec<u8>,
    pub jwk: Value,
}

/// A new P-256 signing key named `kid`.
pub fn issuer_key(kid: &str) -> IssuerKey {
    let k = rcgen::KeyPair::generate().unwrap();
    let rng = ring::rand::SystemRandom::new();
    let (_, public) = pem_keys(&k.public_key_pem(), &rng).unwrap();
    IssuerKey {
        kid: kid.into(),
        pkcs8: k.serialize_der(),
        jwk: public[0].jwk(kid),
    }
}

/// An ES256 JWT of `claims` signed with `key`.
pub fn sign(key: &IssuerKey, claims: &Value) -> String {
    let rng = ring::rand::SystemRandom::new();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &key.pkcs8, &rng).unwrap();
    let header = json!({"alg": "ES256", "kid": key.kid, "typ": "JWT"});
    let input = format!(
        "{}.{}",
        B64.encode(header.to_string()),
        B64.encode(claims.to_string())
    );
    let sig = pair.sign(&rng, input.as_bytes()).unwrap();
    format!("{input}.{}", B64.encode(sig.as_ref()))
}

/// The issuer on loopback: `/.well-known/openid-configuration` and `/jwks` (the keys in
/// `jwks`, replaceable). Returns its URL.
pub fn start_issuer(cert_pem: &str, key_pem: &str, jwks: Arc<Mutex<Vec<Value>>>) -> String {
    use http_body_util::Full;
    let tls = wasm_apiserver::server::tls::server_config(cert_pem, key_pem).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    listener.set_nonblocking(true).unwrap();
    let issuer = url.clone();
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
                let (acceptor, jwks, issuer) = (acceptor.clone(), jwks.clone(), issuer.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let body = match req.uri().path() {
                                "/.well-known/openid-configuration" => json!({
                                    "issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                                    "id_token_signing_alg_values_supported": ["ES256"]}),
                                _ => json!({"keys": *jwks.lock().unwrap()}),
                            };
                            async move {
                                Ok::<_, hyper::Error>(hyper::Response::new(Full::new(
                                    bytes::Bytes::from(body.to_string()),
                                )))
                            }
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
    });
    url
}

//! One webhook's HTTPS client (client-go's REST client as kube's webhook `ClientManager` builds
//! it, `k8s.io/apiserver/pkg/util/webhook/client.go`): a JSON review POSTed to the webhook's
//! `url`, the server verified against its `caBundle` (the system's roots when there is none, as
//! client-go), connections kept alive, the answer bounded by [`MAX_RESPONSE_BYTES`], errors in
//! client-go's words (`Post "<url>": …`).

use base64::Engine;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How long one call may take when its caller gives no bound, connecting and reading the
/// answer included: 30 s, kube's `defaultRequestTimeout` for webhook clients.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read from a webhook: 64 MiB (an object is at most etcd's 1.5 MiB request
/// limit; the rest is room for the review around it).
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// A failed call: client-go's text, and the HTTP status of an answer other than 2xx.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    /// `Post "<url>": <cause>` (a timeout is Go's `context deadline exceeded`); for an answer
    /// other than 2xx, the message of the `metav1.Status` it carries, else its status and body
    /// as client-go words them.
    pub message: String,
    /// The answer's HTTP status, when there was one.
    pub status: Option<u16>,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The client of one webhook URL.
pub struct WebhookClient {
    url: reqwest::Url,
    client: reqwest::Client,
}

impl std::fmt::Debug for WebhookClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookClient")
            .field("url", &self.url.as_str())
            .finish()
    }
}

impl WebhookClient {
    /// A client of `url` trusting `ca_bundle` (base64 of PEM certificates; empty: the
    /// system's roots). Errors, as text: a URL that does not parse, an unusable bundle.
    pub fn new(url: &str, ca_bundle: &str) -> Result<WebhookClient, String> {
        let url = reqwest::Url::parse(url).map_err(|e| format!("url {url:?}: {e}"))?;
        let tls = client_config(ca_bundle)?;
        let client = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| format!("building the webhook client: {e}"))?;
        Ok(WebhookClient { url, client })
    }

    /// The webhook's URL.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// POST `review` and read the answer's JSON, within `timeout` when given (else
    /// [`TIMEOUT`]). With a timeout the URL carries it as `?timeout=<seconds>s`, rounded up to
    /// whole seconds, as client-go's `Request.Timeout` tells the webhook (kube's webhook
    /// dispatchers set it). Errors: [`CallError`].
    pub async fn post(
        &self,
        review: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, CallError> {
        let mut url = self.url.clone();
        if let Some(t) = timeout {
            let secs = t.as_secs() + u64::from(t.subsec_nanos() > 0);
            url.query_pairs_mut()
                .append_pair("timeout", &format!("{secs}s"));
        }
        let failed = |e: reqwest::Error| CallError {
            message: format!("Post {:?}: {}", url.as_str(), chain(&e)),
            status: None,
        };
        let call = async {
            let mut request = self
                .client
                .post(url.clone())
                .header(http::header::ACCEPT, "application/json")
                .json(review);
            if let Some(t) = timeout {
                request = request.timeout(t);
            }
            let mut response = request.send().await.map_err(failed)?;
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(failed)? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(CallError {
                        message: format!("the answer is larger than {MAX_RESPONSE_BYTES} bytes"),
                        status: Some(response.status().as_u16()),
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok((response.status(), body))
        };
        let (status, body) = call.await?;
        if !status.is_success() {
            // client-go's `StatusError` when the body is a Status with a message.
            let status_message = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
                (v["kind"] == "Status").then(|| v["message"].as_str().map(str::to_string))?
            });
            let text = String::from_utf8_lossy(&body[..body.len().min(1024)]).into_owned();
            return Err(CallError {
                message: status_message.unwrap_or_else(|| {
                    format!(
                        "an error on the server ({text:?}) has prevented the request from succeeding \
                         (post {status})"
                    )
                }),
                status: Some(status.as_u16()),
            });
        }
        serde_json::from_slice(&body).map_err(|e| CallError {
            message: format!("the answer is not JSON: {e}"),
            status: Some(status.as_u16()),
        })
    }
}

/// rustls client configuration trusting `ca_bundle` (base64 of PEM certificates), or the
/// system's roots when it is empty (kube treats a whitespace-only bundle as none). Errors, as
/// text: the bundle is not base64, holds no certificate, or a certificate rustls refuses.
pub fn client_config(ca_bundle: &str) -> Result<rustls::ClientConfig, String> {
    let pem = base64::engine::general_purpose::STANDARD
        .decode(ca_bundle.trim())
        .map_err(|e| format!("caBundle: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    if pem.iter().all(u8::is_ascii_whitespace) {
        let native = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(native.certs);
    } else {
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| format!("caBundle: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("caBundle: unable to load root certificates: {e}"))?;
        }
        if roots.is_empty() {
            return Err("caBundle: unable to load root certificates: no certificates".into());
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// A reqwest error's causes, `a: b: c` as Go wraps them; reqwest's own `error sending
/// request for url (…)` is left out when there is a cause (the caller names the URL). A
/// timeout is Go's `context deadline exceeded`.
fn chain(e: &reqwest::Error) -> String {
    use std::error::Error;
    if e.is_timeout() {
        return "context deadline exceeded".to_string();
    }
    let mut source = e.source();
    let Some(first) = source else {
        return e.to_string();
    };
    let mut text = first.to_string();
    source = first.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

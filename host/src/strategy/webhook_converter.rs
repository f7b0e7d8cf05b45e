//! A CRD's conversion webhook (`spec.conversion.strategy: Webhook`), as kube's
//! `webhookConverter` calls it (apiextensions-apiserver/pkg/apiserver/conversion/
//! webhook_converter.go): one `ConversionReview` POSTed to `clientConfig.url` over HTTPS,
//! verified against `caBundle` (the system's roots when there is none, as client-go), and the
//! answer checked by [`wasm_apiserver_apiextensions::conversion`]. A call that fails, or an
//! answer that cannot be used, is a [`PluginFault::ConversionWebhook`] (500 with kube's text:
//! `conversion webhook for <group/version>, Kind=<kind> failed: …`).
//!
//! The call is [`WebhookClient`]'s (bounded by its `TIMEOUT` and `MAX_RESPONSE_BYTES`), on a
//! runtime of its own (see `block_on`).

use std::sync::Arc;

use serde_json::Value;
use wasm_apiserver_apiextensions::conversion;

use super::{PluginFault, StrategyError, StrategyResult};
use crate::webhook::client::WebhookClient;

/// The most objects sent in one review by [`WebhookConverter::convert_list`].
pub const BATCH_OBJECTS: usize = 500;

/// About the most JSON sent in one review by [`WebhookConverter::convert_list`]: 8 MiB (a
/// review closes once its objects reach it).
pub const BATCH_BYTES: usize = 8 << 20;

/// Whether `obj` is sent to the webhook to be in `desired_api_version`: not when it is in that
/// version already, nor when it has nothing but `apiVersion` and `kind` (kube's
/// `isEmptyUnstructuredObject`: the cacher's smoke test converts such objects).
fn needs_call(obj: &Value, desired_api_version: &str) -> bool {
    let api_version = obj.get("apiVersion").and_then(Value::as_str);
    let empty = obj
        .as_object()
        .is_some_and(|o| o.len() == 2 && o.contains_key("apiVersion") && o.contains_key("kind"));
    api_version != Some(desired_api_version) && !empty
}

fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    let _ = serde_json::to_writer(&mut n, v);
    n.0
}

/// One CRD's conversion webhook, with its own HTTPS client (connections are kept alive).
pub struct WebhookConverter {
    crd: String,
    review_version: &'static str,
    client: WebhookClient,
}

impl std::fmt::Debug for WebhookConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookConverter")
            .field("crd", &self.crd)
            .field("url", &self.client.url())
            .finish()
    }
}

impl WebhookConverter {
    /// The webhook of `crd` (a CustomResourceDefinition, JSON) when it converts by `Webhook`;
    /// `Ok(None)` when it does not. Errors: what kube's validation refuses first (no `url`,
    /// an unusable `caBundle`, no review version this server speaks), as text.
    pub fn from_crd(crd: &Value) -> Result<Option<Arc<WebhookConverter>>, String> {
        if crd
            .pointer("/spec/conversion/strategy")
            .and_then(Value::as_str)
            != Some("Webhook")
        {
            return Ok(None);
        }
        let name = crd.pointer("/metadata/name").and_then(Value::as_str);
        let cc = crd.pointer("/spec/conversion/webhook/clientConfig");
        let url = cc
            .and_then(|c| c.get("url"))
            .and_then(Value::as_str)
            .ok_or("the conversion webhook has no url (this server has no Services)")?;
        let review_version =
            conversion::review_version(crd).ok_or("no supported conversion review versions")?;
        let ca = cc
            .and_then(|c| c.get("caBundle"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let client = WebhookClient::new(url, ca)?;
        Ok(Some(Arc::new(WebhookConverter {
            crd: name.unwrap_or_default().to_string(),
            review_version,
            client,
        })))
    }

    /// `obj` (a custom resource, JSON) in `desired_api_version`, converted by the webhook.
    /// Blocking: it waits for the call (at most [`crate::webhook::client::TIMEOUT`]). An object already in that
    /// version, or one with nothing but `apiVersion` and `kind` (kube's
    /// `isEmptyUnstructuredObject`), is not sent. Errors: [`PluginFault::ConversionWebhook`].
    pub fn convert(
        self: &Arc<Self>,
        obj: &Value,
        desired_api_version: &str,
    ) -> StrategyResult<Value> {
        if !needs_call(obj, desired_api_version) {
            let mut out = obj.clone();
            conversion::convert_none(&mut out, desired_api_version);
            return Ok(out);
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let review =
            conversion::review_request(self.review_version, &uid, desired_api_version, &[obj]);
        let answer = self.send(review, obj)?;
        conversion::read_review_response(
            &answer,
            self.review_version,
            &uid,
            desired_api_version,
            obj,
        )
        .map_err(|m| self.fault(m))
    }

    /// `objs` in `desired_api_version`, in order: those that need it converted in reviews of
    /// at most [`BATCH_OBJECTS`] objects and about [`BATCH_BYTES`] of JSON each (kube sends a
    /// list's objects in one review; the bound keeps a review and its answer within
    /// [`crate::webhook::client::MAX_RESPONSE_BYTES`]). Blocking. Errors: the first failing review's, as
    /// [`WebhookConverter::convert`]'s.
    pub fn convert_list(
        self: &Arc<Self>,
        objs: &[&Value],
        desired_api_version: &str,
    ) -> StrategyResult<Vec<Value>> {
        let mut out: Vec<Option<Value>> = objs
            .iter()
            .map(|o| {
                (!needs_call(o, desired_api_version)).then(|| {
                    let mut o = (*o).clone();
                    conversion::convert_none(&mut o, desired_api_version);
                    o
                })
            })
            .collect();
        let pending: Vec<usize> = (0..objs.len()).filter(|i| out[*i].is_none()).collect();
        let mut batch: Vec<usize> = Vec::new();
        let mut bytes = 0;
        for (n, &i) in pending.iter().enumerate() {
            batch.push(i);
            bytes += json_len(objs[i]);
            let last = n + 1 == pending.len();
            if last || batch.len() >= BATCH_OBJECTS || bytes >= BATCH_BYTES {
                let originals: Vec<&Value> = batch.iter().map(|&i| objs[i]).collect();
                let uid = uuid::Uuid::new_v4().to_string();
                let review = conversion::review_request(
                    self.review_version,
                    &uid,
                    desired_api_version,
                    &originals,
                );
                let answer = self.send(review, originals[0])?;
                let converted = conversion::read_review_list(
                    &answer,
                    self.review_version,
                    &uid,
                    desired_api_version,
                    &originals,
                )
                .map_err(|m| self.fault(m))?;
                for (&i, c) in batch.iter().zip(converted) {
                    out[i] = Some(c);
                }
                batch.clear();
                bytes = 0;
            }
        }
        Ok(out
            .into_iter()
            .map(|o| o.expect("every object converted"))
            .collect())
    }

    /// One review sent and its answer read, on the webhooks' runtime. Errors: the call's,
    /// as kube words them, naming `first`'s kind.
    fn send(self: &Arc<Self>, review: Value, first: &Value) -> StrategyResult<Value> {
        let this = self.clone();
        block_on(async move { this.client.post(&review, None).await.map_err(|e| e.message) })
            .and_then(|answer| answer)
            .map_err(|e| {
                self.fault(format!(
                    "conversion webhook for {} failed: {e}",
                    conversion::gvk_string(first)
                ))
            })
    }

    fn fault(&self, message: String) -> StrategyError {
        StrategyError::Fault(PluginFault::ConversionWebhook {
            crd: self.crd.clone(),
            message,
        })
    }
}

/// Run `fut` on the webhook calls' own runtime (one thread, started on first use) and wait for
/// it on this thread. The call never needs the server's runtime: a conversion may be asked
/// for while its caller holds a lock or occupies one of the server's few workers, and the
/// server's workers blocked that way cannot starve the call's I/O or its timeout.
fn block_on<F>(fut: F) -> Result<F::Output, String>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    static RUNTIME: std::sync::OnceLock<Result<tokio::runtime::Runtime, String>> =
        std::sync::OnceLock::new();
    let rt = RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("conversion-webhooks")
                .enable_all()
                .build()
                .map_err(|e| format!("starting the conversion webhooks' runtime: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    // A call that panicked drops its sender: an error, not a panic here.
    rx.recv()
        .map_err(|_| "the call was interrupted".to_string())
}

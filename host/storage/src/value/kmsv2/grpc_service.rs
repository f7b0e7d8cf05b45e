//! The KMS v2 plugin client (`k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2/grpc_service.go`):
//! gRPC over the unix socket of `endpoint` (`unix:///path`), each call bounded by the
//! provider's `timeout`. Calls run on a runtime of the client's own (one thread), so a
//! value transformer — synchronous — can wait for a `Decrypt` from inside the server's
//! runtime without blocking the runtime the call needs.

use super::api::{
    DecryptRequest, DecryptResponse, EncryptRequest, EncryptResponse, StatusRequest, StatusResponse,
};
use std::path::PathBuf;
use std::time::Duration;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint, Uri};

/// A KMS v2 plugin at a unix socket.
pub struct GrpcService {
    runtime: Option<tokio::runtime::Runtime>,
    channel: Channel,
    timeout: Duration,
}

impl Drop for GrpcService {
    fn drop(&mut self) {
        // Dropped from inside the server's runtime (a reload): no blocking shutdown there.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl GrpcService {
    /// A client of the plugin at `endpoint` (`unix:///path/to.sock`); connects on first use.
    /// Errors: another scheme, or the runtime cannot start.
    pub fn new(endpoint: &str, timeout: Duration) -> Result<GrpcService, String> {
        let path: PathBuf = endpoint
            .strip_prefix("unix://")
            .ok_or_else(|| format!("unsupported scheme for KMS provider endpoint {endpoint:?}, only unix is supported"))?
            .into();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("kms-v2")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let channel = {
            let _in = runtime.enter();
            // The URI is required by the builder and unused: the connector dials the socket.
            Endpoint::from_static("http://kms.socket").connect_with_connector_lazy(
                tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move {
                        let stream = tokio::net::UnixStream::connect(path).await?;
                        Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                    }
                }),
            )
        };
        Ok(GrpcService {
            runtime: Some(runtime),
            channel,
            timeout,
        })
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.as_ref().expect("until dropped").handle()
    }

    /// One unary call of `method` on the client's runtime, within the timeout.
    async fn call<Req, Resp>(&self, method: &'static str, request: Req) -> Result<Resp, String>
    where
        Req: prost::Message + Send + 'static,
        Resp: prost::Message + Default + Send + 'static,
    {
        let (tx, rx) = futures::channel::oneshot::channel();
        let (channel, timeout) = (self.channel.clone(), self.timeout);
        self.handle().spawn(async move {
            let _ = tx.send(call(channel, timeout, method, request).await);
        });
        rx.await
            .unwrap_or_else(|_| Err("the KMS client stopped".into()))
    }

    /// `Status`.
    pub async fn status(&self) -> Result<StatusResponse, String> {
        self.call("/v2.KeyManagementService/Status", StatusRequest {})
            .await
    }

    /// `Encrypt` of `plaintext` (a seed).
    pub async fn encrypt(
        &self,
        uid: String,
        plaintext: Vec<u8>,
    ) -> Result<EncryptResponse, String> {
        self.call(
            "/v2.KeyManagementService/Encrypt",
            EncryptRequest { plaintext, uid },
        )
        .await
    }

    /// `Decrypt`.
    pub async fn decrypt(&self, request: DecryptRequest) -> Result<DecryptResponse, String> {
        self.call("/v2.KeyManagementService/Decrypt", request).await
    }

    /// [`GrpcService::decrypt`] for a synchronous caller: the call runs on the client's
    /// runtime and its answer comes back over a plain channel (never a tokio `JoinHandle`,
    /// whose wake-up a blocked task's exhausted budget would defer for ever); inside a
    /// multi-threaded runtime the wait tells it this worker blocks.
    pub fn decrypt_blocking(&self, request: DecryptRequest) -> Result<DecryptResponse, String> {
        let channel = self.channel.clone();
        let timeout = self.timeout;
        self.run_blocking(async move {
            call(
                channel,
                timeout,
                "/v2.KeyManagementService/Decrypt",
                request,
            )
            .await
        })
    }

    /// Run `f` on the client's runtime and wait for its result from synchronous code (see
    /// [`GrpcService::decrypt_blocking`]).
    pub fn run_blocking<T: Send + 'static>(
        &self,
        f: impl std::future::Future<Output = Result<T, String>> + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.handle().spawn(async move {
            let _ = tx.send(f.await);
        });
        let wait = move || {
            rx.recv()
                .unwrap_or_else(|_| Err("the KMS client stopped".into()))
        };
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }

    /// Run `f` on the client's runtime (the probe's loops).
    pub fn spawn<F>(&self, f: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.handle().spawn(f);
    }
}

/// One unary call of `method` over `channel` within `timeout` (run on the client's runtime).
async fn call<Req, Resp>(
    channel: Channel,
    timeout: Duration,
    method: &'static str,
    request: Req,
) -> Result<Resp, String>
where
    Req: prost::Message + Send + 'static,
    Resp: prost::Message + Default + Send + 'static,
{
    let mut grpc = tonic::client::Grpc::new(channel);
    let call = async move {
        grpc.ready().await.map_err(|e| format!("{e}"))?;
        grpc.unary(
            tonic::Request::new(request),
            PathAndQuery::from_static(method),
            tonic_prost::ProstCodec::<Req, Resp>::default(),
        )
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| format!("rpc error: code = {:?} desc = {}", s.code(), s.message()))
    };
    tokio::time::timeout(timeout, call)
        .await
        .unwrap_or_else(|_| {
            Err("rpc error: code = DeadlineExceeded desc = context deadline exceeded".into())
        })
}

//! A KMS v2 plugin for the tests: the `v2.KeyManagementService` gRPC API (`Status`,
//! `Encrypt`, `Decrypt`, `k8s.io/kms/apis/v2/api.proto`) on a unix socket, encrypting with
//! AES-256-GCM under keys it keeps in memory. The test can make it unhealthy, rotate its key
//! (a new `key_id`) and count its `Decrypt` calls. Served by a thread of its own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codegen::http;
use wasm_apiserver_storage::store::ValueTransformer;
use wasm_apiserver_storage::value::kmsv2::api::*;
use wasm_apiserver_storage::value::AesGcmTransformer;

type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

struct Inner {
    /// The current key id, and every key by id.
    current: Mutex<String>,
    keys: Mutex<HashMap<String, [u8; 32]>>,
    healthz: Mutex<String>,
    decrypts: AtomicUsize,
}

/// The running plugin; stops when dropped.
pub struct KmsPlugin {
    inner: Arc<Inner>,
    /// The socket.
    pub socket: PathBuf,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl KmsPlugin {
    /// Serve at `<dir>/kms.sock` with key `key-1`.
    pub fn start(dir: &Path) -> KmsPlugin {
        let socket = dir.join("kms.sock");
        let inner = Arc::new(Inner {
            current: Mutex::new(String::new()),
            keys: Mutex::new(HashMap::new()),
            healthz: Mutex::new("ok".into()),
            decrypts: AtomicUsize::new(0),
        });
        let plugin_inner = inner.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, is_ready) = std::sync::mpsc::channel();
        let path = socket.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::UnixListener::bind(&path).unwrap();
                ready.send(()).unwrap();
                tonic::transport::Server::builder()
                    .add_service(Service(plugin_inner))
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::UnixListenerStream::new(listener),
                        async {
                            let _ = stopped.await;
                        },
                    )
                    .await
                    .unwrap();
            });
        });
        is_ready.recv().unwrap();
        let plugin = KmsPlugin {
            inner,
            socket,
            _stop: stop,
        };
        plugin.rotate("key-1");
        plugin
    }

    /// The endpoint for an `EncryptionConfiguration`: `unix://<socket>`.
    pub fn endpoint(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// Make `key_id` (a new random key) the current key; the old ones still decrypt.
    pub fn rotate(&self, key_id: &str) {
        let mut key = [0u8; 32];
        getrandom_fill(&mut key);
        self.inner.keys.lock().unwrap().insert(key_id.into(), key);
        *self.inner.current.lock().unwrap() = key_id.into();
    }

    /// What `Status` answers as `healthz` (`ok` is healthy).
    pub fn set_healthz(&self, healthz: &str) {
        *self.inner.healthz.lock().unwrap() = healthz.into();
    }

    /// How many `Decrypt` calls were answered.
    pub fn decrypts(&self) -> usize {
        self.inner.decrypts.load(Ordering::SeqCst)
    }
}

fn getrandom_fill(b: &mut [u8]) {
    // Random enough for a test key: two v4 UUIDs.
    let u = [
        uuid::Uuid::new_v4().into_bytes(),
        uuid::Uuid::new_v4().into_bytes(),
    ]
    .concat();
    b.copy_from_slice(&u[..b.len()]);
}

#[derive(Clone)]
struct Service(Arc<Inner>);

impl tonic::server::NamedService for Service {
    const NAME: &'static str = "v2.KeyManagementService";
}

/// One unary method: the request handled by `f`.
struct Unary<Req, Resp>(Arc<Inner>, fn(&Inner, Req) -> Result<Resp, tonic::Status>);

impl<Req: Send + 'static, Resp: Send + 'static> tonic::server::UnaryService<Req>
    for Unary<Req, Resp>
{
    type Response = Resp;
    type Future = BoxFuture<Result<tonic::Response<Resp>, tonic::Status>>;
    fn call(&mut self, request: tonic::Request<Req>) -> Self::Future {
        let out = (self.1)(&self.0, request.into_inner()).map(tonic::Response::new);
        Box::pin(async move { out })
    }
}

async fn unary<Req, Resp>(
    inner: Arc<Inner>,
    f: fn(&Inner, Req) -> Result<Resp, tonic::Status>,
    req: http::Request<Body>,
) -> http::Response<Body>
where
    Req: prost::Message + Default + Send + 'static,
    Resp: prost::Message + Send + 'static,
{
    let mut grpc = tonic::server::Grpc::new(tonic_prost::ProstCodec::<Resp, Req>::default());
    grpc.unary(Unary(inner, f), req).await
}

impl tower::Service<http::Request<Body>> for Service {
    type Response = http::Response<Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let inner = self.0.clone();
        match req.uri().path() {
            "/v2.KeyManagementService/Status" => {
                Box::pin(async move { Ok(unary(inner, status, req).await) })
            }
            "/v2.KeyManagementService/Encrypt" => {
                Box::pin(async move { Ok(unary(inner, encrypt, req).await) })
            }
            "/v2.KeyManagementService/Decrypt" => {
                Box::pin(async move { Ok(unary(inner, decrypt, req).await) })
            }
            _ => Box::pin(async { Ok(tonic::Status::unimplemented("no such method").into_http()) }),
        }
    }
}

fn status(inner: &Inner, _: StatusRequest) -> Result<StatusResponse, tonic::Status> {
    Ok(StatusResponse {
        version: "v2".into(),
        healthz: inner.healthz.lock().unwrap().clone(),
        key_id: inner.current.lock().unwrap().clone(),
    })
}

fn encrypt(inner: &Inner, req: EncryptRequest) -> Result<EncryptResponse, tonic::Status> {
    let key_id = inner.current.lock().unwrap().clone();
    let key = inner.keys.lock().unwrap()[&key_id];
    let sealed = AesGcmTransformer::new(&key)
        .unwrap()
        .to_storage(req.plaintext, "")
        .map_err(|e| tonic::Status::internal(e.to_string()))?;
    Ok(EncryptResponse {
        ciphertext: sealed,
        key_id,
        annotations: [("kms.example.com".to_string(), b"test".to_vec())].into(),
    })
}

fn decrypt(inner: &Inner, req: DecryptRequest) -> Result<DecryptResponse, tonic::Status> {
    let Some(key) = inner.keys.lock().unwrap().get(&req.key_id).copied() else {
        return Err(tonic::Status::not_found(format!("no key {}", req.key_id)));
    };
    if req.annotations.get("kms.example.com").map(Vec::as_slice) != Some(b"test") {
        return Err(tonic::Status::invalid_argument(
            "annotations not passed back",
        ));
    }
    let (plaintext, _) = AesGcmTransformer::new(&key)
        .unwrap()
        .from_storage(&req.ciphertext, "")
        .map_err(|e| tonic::Status::internal(e.to_string()))?;
    inner.decrypts.fetch_add(1, Ordering::SeqCst);
    Ok(DecryptResponse { plaintext })
}

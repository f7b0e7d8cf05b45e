//! The etcd3 backend: [`Backend`] over a real etcd cluster through `etcd-client`.
//!
//! Follows kube-apiserver's etcd3 storage (`k8s.io/apiserver/pkg/storage/etcd3/`):
//! - client construction and TLS from `storagebackend/factory/etcd3.go` (`newETCD3Client`:
//!   `--etcd-cafile`/`--etcd-certfile`/`--etcd-keyfile`, a 20 s dial timeout, 30 s/10 s
//!   keepalives, `WithRequireLeader`);
//! - conditional writes as `store.go` issues them: exactly one
//!   `Txn(If(mod_revision(key) == rev)).Then(Put | Delete).Else(Get)` per call;
//! - watches as `watcher.go` opens them (`WithPrevKV`, `WithPrefix` for recursive watches,
//!   `WithRev`, `WithProgressNotify`);
//! - the compactor of `compact.go` ([`Compactor`], started by [`Etcd3::connect`] when
//!   [`Etcd3Config::compaction_interval`] is set).
//!
//! Every unary request is bounded by [`Etcd3Config::request_timeout`] (`tokio::time::timeout`),
//! so a vanished etcd produces [`BackendError::Timeout`] or [`BackendError::Unreachable`],
//! never a hang. Watches end with [`WatchResponse::Error`] when the stream breaks.

mod compact;
mod errors;
mod watch;

pub use compact::{CompactRound, Compactor, CompactorHandle, COMPACT_REV_KEY};

use crate::backend::{Backend, KeyValue, RangeResponse, TxnResponse, WatchReceiver};
use crate::errors::BackendError;
use async_trait::async_trait;
use errors::{classify, Classified};
use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, Identity,
    PutOptions, TlsOptions, Txn, TxnOp, TxnOpResponse,
};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// kube-apiserver's `DefaultCompactInterval` (`storagebackend/config.go`): 5 minutes.
pub const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(5 * 60);
/// kube-apiserver's etcd `dialTimeout` (`factory/etcd3.go`): 20 s.
pub const DEFAULT_DIAL_TIMEOUT: Duration = Duration::from_secs(20);
/// Default bound on one etcd request: 60 s, kube-apiserver's default `--request-timeout`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// kube-apiserver's `DefaultHealthcheckTimeout` (`storagebackend/config.go`): 2 s.
pub const DEFAULT_HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
/// kube-apiserver's `keepaliveTime` (`factory/etcd3.go`): 30 s.
pub const DEFAULT_KEEPALIVE_TIME: Duration = Duration::from_secs(30);
/// kube-apiserver's `keepaliveTimeout` (`factory/etcd3.go`): 10 s.
pub const DEFAULT_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest response accepted from etcd: clientv3's default `MaxCallRecvMsgSize`
/// (`math.MaxInt32`), which kube-apiserver keeps. tonic's default (4 MiB) would fail every
/// range over about 4,000 objects of 1 KiB.
pub(crate) const MAX_RESPONSE_BYTES: usize = i32::MAX as usize;

/// How to reach etcd: kube-apiserver's `--etcd-servers`, `--etcd-cafile`, `--etcd-certfile`,
/// `--etcd-keyfile` and `--etcd-compaction-interval` (`storagebackend.TransportConfig` and
/// `storagebackend.Config`).
#[derive(Clone, Debug)]
pub struct Etcd3Config {
    /// Client URLs, e.g. `http://127.0.0.1:2379` or `https://etcd-0:2379`. A URL without a
    /// scheme gets `https://` when TLS files are set and `http://` otherwise. TLS files with an
    /// `http://` URL are rejected by [`Etcd3::connect`].
    pub endpoints: Vec<String>,
    /// PEM CA bundle that signs etcd's serving certificate (`--etcd-cafile`). Without it, TLS
    /// has no trust roots, so set it whenever TLS is used.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate (`--etcd-certfile`); requires `key_file`.
    pub cert_file: Option<PathBuf>,
    /// PEM client private key (`--etcd-keyfile`); requires `cert_file`.
    pub key_file: Option<PathBuf>,
    /// Bound on establishing the first connection in [`Etcd3::connect`] (and on each TCP
    /// connect attempt later). Default [`DEFAULT_DIAL_TIMEOUT`].
    pub dial_timeout: Duration,
    /// Bound on each unary request and on opening a watch. Default [`DEFAULT_REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// Bound on the read of [`Backend::health`]. Default [`DEFAULT_HEALTH_TIMEOUT`].
    pub health_timeout: Duration,
    /// HTTP/2 keepalive ping interval; a dead connection is detected within
    /// `keepalive_time + keepalive_timeout`. Default [`DEFAULT_KEEPALIVE_TIME`].
    pub keepalive_time: Duration,
    /// How long a keepalive ping may stay unanswered. Default [`DEFAULT_KEEPALIVE_TIMEOUT`].
    pub keepalive_timeout: Duration,
    /// Period of the compactor started by [`Etcd3::connect`]; `None` or zero disables it.
    /// Default [`DEFAULT_COMPACTION_INTERVAL`].
    pub compaction_interval: Option<Duration>,
}

impl Default for Etcd3Config {
    fn default() -> Self {
        Etcd3Config {
            endpoints: Vec::new(),
            ca_file: None,
            cert_file: None,
            key_file: None,
            dial_timeout: DEFAULT_DIAL_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            health_timeout: DEFAULT_HEALTH_TIMEOUT,
            keepalive_time: DEFAULT_KEEPALIVE_TIME,
            keepalive_timeout: DEFAULT_KEEPALIVE_TIMEOUT,
            compaction_interval: Some(DEFAULT_COMPACTION_INTERVAL),
        }
    }
}

impl Etcd3Config {
    /// Defaults for everything but the endpoints.
    pub fn new<S: Into<String>>(endpoints: impl IntoIterator<Item = S>) -> Etcd3Config {
        Etcd3Config {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            ..Etcd3Config::default()
        }
    }

    /// The `etcd-client` TLS options for the configured files (`None` without any file).
    /// Errors: [`BackendError::Other`] for an unreadable file or a certificate without a key.
    pub fn tls_options(&self) -> Result<Option<TlsOptions>, BackendError> {
        if self.ca_file.is_none() && self.cert_file.is_none() && self.key_file.is_none() {
            return Ok(None);
        }
        let read = |what: &str, path: &PathBuf| {
            std::fs::read(path).map_err(|e| {
                BackendError::Other(format!("reading etcd {what} {}: {e}", path.display()))
            })
        };
        let mut tls = TlsOptions::new();
        if let Some(ca) = &self.ca_file {
            tls = tls.ca_certificate(Certificate::from_pem(read("CA file", ca)?));
        }
        match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => {
                tls = tls.identity(Identity::from_pem(
                    read("certificate file", cert)?,
                    read("key file", key)?,
                ));
            }
            (None, None) => {}
            _ => {
                return Err(BackendError::Other(
                    "--etcd-certfile and --etcd-keyfile must be set together".into(),
                ))
            }
        }
        Ok(Some(tls))
    }
}

/// State shared by the backend, its watch tasks and its compactors.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The endpoints as one string for error messages, e.g. `[http://127.0.0.1:2379]`.
    pub(crate) endpoints: String,
    pub(crate) request_timeout: Duration,
    /// Newest compacted revision seen (by this process's compactions, etcd's compaction
    /// errors, watch cancellations and other apiservers' `compact_rev_key`).
    pub(crate) compacted: AtomicI64,
}

impl Shared {
    /// Record a compacted revision; keeps the maximum.
    pub(crate) fn saw_compacted(&self, rev: i64) {
        self.compacted.fetch_max(rev, Ordering::SeqCst);
    }

    /// Run one etcd request bounded by the request timeout, mapping errors. `requested` is the
    /// revision the request asked for (0 if none), a lower bound for `Compacted`.
    pub(crate) async fn call<T>(
        &self,
        client: &Client,
        op: &str,
        requested: i64,
        fut: impl Future<Output = Result<T, etcd_client::Error>>,
    ) -> Result<T, BackendError> {
        match tokio::time::timeout(self.request_timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.map_error(client, &e, requested).await),
            Err(_) => Err(BackendError::Timeout(format!(
                "etcd {} {op}: no answer within {:?}",
                self.endpoints, self.request_timeout
            ))),
        }
    }

    /// Map an etcd error; `FutureRevision` looks the current revision up (one more read).
    pub(crate) async fn map_error(
        &self,
        client: &Client,
        e: &etcd_client::Error,
        requested: i64,
    ) -> BackendError {
        match classify(e, &self.endpoints) {
            Classified::Compacted => {
                // etcd does not say which revision was compacted: the requested revision is
                // below it, and the newest one we saw is at or below it.
                self.saw_compacted(requested);
                BackendError::Compacted(self.compacted.load(Ordering::SeqCst))
            }
            Classified::FutureRevision => {
                let current = self.header_revision(client).await.unwrap_or(requested - 1);
                BackendError::FutureRevision(current)
            }
            Classified::Mapped(err) => err,
        }
    }

    /// The current revision from a linearizable read's header (no error refinement).
    pub(crate) async fn header_revision(&self, client: &Client) -> Result<i64, BackendError> {
        let mut kv = client.kv_client();
        let fut = kv.get(COMPACT_REV_KEY, Some(GetOptions::new().with_count_only()));
        match tokio::time::timeout(self.request_timeout, fut).await {
            Ok(Ok(resp)) => Ok(resp.header().map(|h| h.revision()).unwrap_or(0)),
            Ok(Err(e)) => Err(match classify(&e, &self.endpoints) {
                Classified::Mapped(err) => err,
                _ => BackendError::Other(format!("etcd {}: {e}", self.endpoints)),
            }),
            Err(_) => Err(BackendError::Timeout(format!(
                "etcd {} get: no answer within {:?}",
                self.endpoints, self.request_timeout
            ))),
        }
    }
}

/// The etcd3 backend. Not `Clone`: share it behind an `Arc`. Dropping it stops the compactor
/// that [`Etcd3::connect`] started (watch tasks end when their receivers are dropped).
pub struct Etcd3 {
    client: Client,
    shared: Arc<Shared>,
    endpoints: Vec<String>,
    health_timeout: Duration,
    compactor: Option<CompactorHandle>,
}

impl std::fmt::Debug for Etcd3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Etcd3")
            .field("endpoints", &self.endpoints)
            .field("compacted", &self.compacted_revision())
            .field("compactor", &self.compactor.is_some())
            .finish()
    }
}

/// Convert an `etcd-client` key-value (keys are UTF-8 in Kubernetes; other bytes are replaced).
pub(crate) fn convert_kv(kv: &etcd_client::KeyValue) -> KeyValue {
    KeyValue {
        key: String::from_utf8_lossy(kv.key()).into_owned(),
        value: kv.value().to_vec(),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
        version: kv.version(),
        lease: kv.lease(),
    }
}

/// [`convert_kv`] taking ownership: moves the key and value out instead of copying them (a
/// 10,000-object list is about 10 MiB).
pub(crate) fn convert_kv_owned(kv: etcd_client::KeyValue) -> KeyValue {
    let (create_revision, mod_revision, version, lease) = (
        kv.create_revision(),
        kv.mod_revision(),
        kv.version(),
        kv.lease(),
    );
    let (key, value) = kv.into_key_value();
    KeyValue {
        key: String::from_utf8(key)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        value,
        create_revision,
        mod_revision,
        version,
        lease,
    }
}

impl Etcd3 {
    /// Connect to etcd (`newETCD3Client`) and check that it answers a read within
    /// `config.dial_timeout`, then start the compactor when `config.compaction_interval` is a
    /// non-zero duration.
    ///
    /// Errors: [`BackendError::Unreachable`] naming the endpoints when no endpoint answers in
    /// time (never hangs longer than the dial timeout); [`BackendError::Other`] for a bad
    /// configuration (no endpoints, unreadable TLS files, TLS with an `http://` URL).
    pub async fn connect(config: Etcd3Config) -> Result<Etcd3, BackendError> {
        if config.endpoints.is_empty() {
            return Err(BackendError::Other("no etcd endpoints configured".into()));
        }
        let endpoints = format!("[{}]", config.endpoints.join(","));
        let mut options = ConnectOptions::new()
            .with_connect_timeout(config.dial_timeout)
            .with_keep_alive(config.keepalive_time, config.keepalive_timeout)
            .with_keep_alive_while_idle(true)
            .with_require_leader(true);
        if let Some(tls) = config.tls_options()? {
            options = options.with_tls(tls);
        }
        let unreachable =
            |detail: String| BackendError::Unreachable(format!("etcd {endpoints}: {detail}"));
        // One deadline for building the client and the first answer.
        let deadline = tokio::time::Instant::now() + config.dial_timeout;
        let client = match tokio::time::timeout_at(
            deadline,
            Client::connect(&config.endpoints, Some(options)),
        )
        .await
        {
            Ok(Ok(client)) => client,
            Ok(Err(e @ etcd_client::Error::InvalidArgs(_)))
            | Ok(Err(e @ etcd_client::Error::InvalidUri(_))) => {
                return Err(BackendError::Other(format!("etcd {endpoints}: {e}")))
            }
            Ok(Err(e)) => return Err(unreachable(errors::one_line(&e))),
            Err(_) => {
                return Err(unreachable(format!(
                    "no connection within {:?}",
                    config.dial_timeout
                )))
            }
        };
        // The channel connects lazily: one read proves an endpoint answers.
        let mut kv = client.kv_client();
        let probe = kv.get(COMPACT_REV_KEY, Some(GetOptions::new().with_count_only()));
        match tokio::time::timeout_at(deadline, probe).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) if errors::is_auth_error(&e) => {
                return Err(BackendError::Other(format!("etcd {endpoints}: {e}")))
            }
            // Refused connections, TLS failures, and peers that do not speak etcd's gRPC.
            Ok(Err(e)) => return Err(unreachable(errors::one_line(&e))),
            Err(_) => {
                return Err(unreachable(format!(
                    "no answer within {:?}",
                    config.dial_timeout
                )))
            }
        }
        let shared = Arc::new(Shared {
            endpoints,
            request_timeout: config.request_timeout,
            compacted: AtomicI64::new(0),
        });
        let mut etcd = Etcd3 {
            client,
            shared,
            endpoints: config.endpoints.clone(),
            health_timeout: config.health_timeout,
            compactor: None,
        };
        if let Some(interval) = config.compaction_interval.filter(|d| !d.is_zero()) {
            etcd.compactor = Some(etcd.start_compactor(interval));
        }
        Ok(etcd)
    }

    /// The configured endpoints.
    pub fn endpoints(&self) -> &[String] {
        &self.endpoints
    }

    /// The underlying `etcd-client` client (cheap to clone), for etcd-specific tooling and tests.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// A compactor sharing this backend's client and compacted revision, for driving rounds by
    /// hand ([`Compactor::run_once`]).
    pub fn compactor(&self) -> Compactor {
        Compactor::new(self.client.clone(), self.shared.clone())
    }

    /// Start a compactor task (`startCompactorOnce`/`compactor` in `etcd3/compact.go`) that runs
    /// one [`Compactor::run_once`] round every `interval`; the first round only records the
    /// revision, so history older than about one interval is dropped. Must be called inside a
    /// tokio runtime; the task stops when the returned handle is dropped.
    pub fn start_compactor(&self, interval: Duration) -> CompactorHandle {
        self.compactor().start(interval)
    }

    /// One request, sent again while it fails in a way that is safe to retry
    /// ([`errors::is_safe_retry`]: a member that went away — the client's balancer keeps
    /// sending to it until it notices) and the request timeout allows; `make` builds each
    /// attempt. Errors: as [`Shared::call`].
    async fn kv_call<T, F>(
        &self,
        op: &str,
        requested: i64,
        mutation: bool,
        mut make: impl FnMut() -> F,
    ) -> Result<T, BackendError>
    where
        F: Future<Output = Result<T, etcd_client::Error>>,
    {
        let deadline = tokio::time::Instant::now() + self.shared.request_timeout;
        let mut backoff = Duration::from_millis(5);
        loop {
            match tokio::time::timeout_at(deadline, make()).await {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e))
                    if errors::is_safe_retry(&e, mutation)
                        && tokio::time::Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(op, error = %e, "etcd request failed before reaching a member; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(200));
                }
                Ok(Err(e)) => return Err(self.shared.map_error(&self.client, &e, requested).await),
                Err(_) => {
                    return Err(BackendError::Timeout(format!(
                        "etcd {} {op}: no answer within {:?}",
                        self.shared.endpoints, self.shared.request_timeout
                    )))
                }
            }
        }
    }

    fn header_rev(header: Option<&etcd_client::ResponseHeader>) -> i64 {
        header.map(|h| h.revision()).unwrap_or(0)
    }

    /// A range over `[start, end)` (`end` empty = the single key `start`).
    fn range_options(end: &str) -> GetOptions {
        let opts = GetOptions::new();
        if end.is_empty() {
            opts
        } else {
            opts.with_range(end.as_bytes().to_vec())
        }
    }

    /// Interpret a `Txn(If).Then(op).Else(Get)` response.
    fn txn_result(resp: etcd_client::TxnResponse) -> TxnResponse {
        let revision = Self::header_rev(resp.header());
        let succeeded = resp.succeeded();
        let mut kv = None;
        for op in resp.op_responses() {
            match op {
                TxnOpResponse::Get(get) if !succeeded => {
                    kv = get.kvs().first().map(convert_kv);
                }
                TxnOpResponse::Delete(del) if succeeded => {
                    kv = del.prev_kvs().first().map(convert_kv);
                }
                _ => {}
            }
        }
        TxnResponse {
            succeeded,
            revision,
            kv,
        }
    }
}

#[async_trait]
impl Backend for Etcd3 {
    async fn range(
        &self,
        start: &str,
        end: &str,
        limit: i64,
        revision: i64,
    ) -> Result<RangeResponse, BackendError> {
        let mut opts = Self::range_options(end);
        if limit > 0 {
            opts = opts.with_limit(limit);
        }
        if revision > 0 {
            opts = opts.with_revision(revision);
        }
        let kv = self
            .client
            .kv_client()
            .max_decoding_message_size(MAX_RESPONSE_BYTES);
        let mut resp = self
            .kv_call("range", revision, false, || {
                let (mut kv, opts) = (kv.clone(), opts.clone());
                async move { kv.get(start, Some(opts)).await }
            })
            .await?;
        Ok(RangeResponse {
            kvs: resp.take_kvs().into_iter().map(convert_kv_owned).collect(),
            more: resp.more(),
            count: resp.count(),
            header_revision: Self::header_rev(resp.header()),
        })
    }

    async fn count(&self, start: &str, end: &str) -> Result<(i64, i64), BackendError> {
        let opts = Self::range_options(end).with_count_only();
        let kv = self.client.kv_client();
        let resp = self
            .kv_call("count", 0, false, || {
                let (mut kv, opts) = (kv.clone(), opts.clone());
                async move { kv.get(start, Some(opts)).await }
            })
            .await?;
        Ok((resp.count(), Self::header_rev(resp.header())))
    }

    async fn put_if(
        &self,
        key: &str,
        expected_mod_revision: i64,
        value: Vec<u8>,
        ttl_seconds: i64,
    ) -> Result<TxnResponse, BackendError> {
        let mut put = PutOptions::new();
        if ttl_seconds > 0 {
            // kube's leaseManager reuses leases across writes; one lease per write is simpler
            // and equally correct (a lease per TTL'd object, e.g. Events).
            let lease = self.client.lease_client();
            let grant = self
                .kv_call("lease grant", 0, true, || {
                    let mut lease = lease.clone();
                    async move { lease.grant(ttl_seconds, None).await }
                })
                .await?;
            put = put.with_lease(grant.id());
        }
        let txn = Txn::new()
            .when([Compare::mod_revision(
                key,
                CompareOp::Equal,
                expected_mod_revision,
            )])
            .and_then([TxnOp::put(key, value, Some(put))])
            .or_else([TxnOp::get(key, None)]);
        let kv = self.client.kv_client();
        let resp = self
            .kv_call("txn put", 0, true, || {
                let (mut kv, txn) = (kv.clone(), txn.clone());
                async move { kv.txn(txn).await }
            })
            .await?;
        Ok(Self::txn_result(resp))
    }

    async fn delete_if(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnResponse, BackendError> {
        let txn = Txn::new()
            .when([Compare::mod_revision(
                key,
                CompareOp::Equal,
                expected_mod_revision,
            )])
            .and_then([TxnOp::delete(
                key,
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let kv = self.client.kv_client();
        let resp = self
            .kv_call("txn delete", 0, true, || {
                let (mut kv, txn) = (kv.clone(), txn.clone());
                async move { kv.txn(txn).await }
            })
            .await?;
        Ok(Self::txn_result(resp))
    }

    async fn watch(
        &self,
        key: &str,
        recursive: bool,
        start_revision: i64,
        progress_notify: bool,
    ) -> Result<WatchReceiver, BackendError> {
        watch::start(
            &self.client,
            self.shared.clone(),
            key,
            recursive,
            start_revision,
            progress_notify,
        )
        .await
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        let rev = self.shared.header_revision(&self.client).await?;
        if rev == 0 {
            return Err(BackendError::Other(format!(
                "etcd {}: response without a revision",
                self.shared.endpoints
            )));
        }
        Ok(rev)
    }

    async fn compact(&self, revision: i64) -> Result<(), BackendError> {
        let kv = self.client.kv_client();
        self.kv_call("compact", revision, true, || {
            let mut kv = kv.clone();
            async move { kv.compact(revision, None).await }
        })
        .await?;
        self.shared.saw_compacted(revision);
        Ok(())
    }

    fn compacted_revision(&self) -> i64 {
        self.shared.compacted.load(Ordering::SeqCst)
    }

    async fn health(&self) -> Result<(), BackendError> {
        let mut kv = self.client.kv_client();
        let fut = kv.get(COMPACT_REV_KEY, Some(GetOptions::new().with_count_only()));
        match tokio::time::timeout(self.health_timeout, fut).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(self.shared.map_error(&self.client, &e, 0).await),
            Err(_) => Err(BackendError::Unreachable(format!(
                "etcd {}: no answer to a health read within {:?}",
                self.shared.endpoints, self.health_timeout
            ))),
        }
    }
}

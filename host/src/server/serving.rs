//! Serving connections with kube-apiserver's bounds (`k8s.io/apiserver/pkg/server/
//! secure_serving.go` `SecureServingInfo.Serve`, `genericapiserver.go` shutdown):
//!
//! - a request head must arrive within [`ServingConfig::read_header_timeout`] (kube's
//!   `ReadHeaderTimeout`, 32 s) and be at most 1 MiB (`MaxHeaderBytes`); a connection that
//!   sends nothing, or stalls inside the HTTP/2 preface before hyper has picked a protocol, is
//!   closed at the same deadline. hyper's header timer
//!   also runs while a kept-alive HTTP/1 connection waits for its next request, so an idle
//!   connection is closed after the same 32 s (kube: `IdleTimeout` 90 s) — earlier than a
//!   client's own idle limit, which clients handle by reconnecting;
//! - HTTP/2 connections are pinged and closed when the peer stops answering, and carry at most
//!   100 concurrent streams (kube's default `MaxConcurrentStreams`);
//! - shutdown follows kube's stages ([`Lifecycle`]): when the server stops accepting
//!   requests every connection is asked to finish (HTTP/1 after its request in flight —
//!   `Connection: close` —, HTTP/2 with GOAWAY) and the listener closes (with
//!   `--shutdown-send-retry-after`, only once the requests in flight are drained: meanwhile new
//!   requests are answered 429); once drained, connections get [`CONNECTION_GRACE`] to
//!   finish writing, and those still open — idle, or stalled inside a request head — are
//!   dropped. The drain itself is bounded by the caller (`--request-timeout`), so a stalled
//!   client cannot hold the process;
//! - a failed `accept` (for example, out of descriptors) is logged and retried after a pause
//!   instead of ending the server.
//!
//! - on the secure port, the TLS handshake must also finish within the header deadline; the
//!   protocol is the one ALPN agreed (`h2`, else HTTP/1.1), and the client's certificates
//!   travel with every request as [`ConnectionInfo`] for authentication.
//!
//! [`raise_open_files_limit`] lifts the descriptor soft limit to the hard limit, as Go's
//! runtime does for kube-apiserver at start (`syscall/rlimit.go`).

use super::connection_limit::{Connection, Connections};
use super::holding_body::holding;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// What the connection a request arrived on says about its client, attached to every
/// request as an extension.
#[derive(Clone, Debug, Default)]
pub struct ConnectionInfo {
    /// The certificate chain the client presented in the TLS handshake, leaf first (empty
    /// without TLS or without a certificate).
    pub peer_certificates: Arc<[rustls::pki_types::CertificateDer<'static>]>,
    /// The client's address.
    pub peer_address: Option<std::net::SocketAddr>,
}

/// The bounds of [`serve`].
#[derive(Clone, Debug)]
pub struct ServingConfig {
    /// Longest wait for a complete request head (and, on HTTP/1, for the next request).
    pub read_header_timeout: Duration,
}

/// The shutdown stages [`serve`] follows (kube's `lifecycleSignals`).
#[derive(Clone, Debug)]
pub struct Lifecycle {
    /// `NotAcceptingNewRequest`: `true` once the shutdown delay has elapsed.
    pub not_accepting: tokio::sync::watch::Receiver<bool>,
    /// `InFlightRequestsDrained`: `true` once the requests in flight are done (or the drain
    /// bound passed).
    pub drained: tokio::sync::watch::Receiver<bool>,
    /// `--shutdown-send-retry-after`: keep listening until drained.
    pub listen_until_drained: bool,
}

/// Idle connections closed when `accept` runs out of descriptors.
const ROOM_ON_EMFILE: usize = 16;

/// The errno values of a process or system out of descriptors (Linux).
mod libc_emfile {
    pub const ENFILE: i32 = 23;
    pub const EMFILE: i32 = 24;
}

/// How long connections may take to close once the requests in flight are drained (the last
/// answers flushed, HTTP/2 GOAWAY exchanged; Go's HTTP/2 server waits 1 s for the peer).
pub const CONNECTION_GRACE: Duration = Duration::from_secs(1);

/// The largest request head accepted, bytes (kube's `MaxHeaderBytes`, 1 MiB).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Serve `router` on `listener` (over TLS when `tls` is given) through the shutdown stages of
/// `lifecycle`: connections are asked to close when the server stops accepting; the listener
/// closes then (or once drained, with `listen_until_drained`); once drained, open connections
/// get [`CONNECTION_GRACE`]. Every accepted connection is registered in `connections` (one
/// table for both ports: they share the descriptors), which closes the idle ones near the
/// limit. Returns the number of connections still open at the end, which are dropped when the
/// process exits.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    config: ServingConfig,
    lifecycle: Lifecycle,
    connections: Arc<Connections>,
) -> usize {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.read_header_timeout)
        .max_buf_size(MAX_HEADER_BYTES);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20))
        .max_concurrent_streams(100)
        .max_header_list_size(MAX_HEADER_BYTES as u32);
    let open = Arc::new(tokio::sync::watch::Sender::new(0usize));
    let mut stop_listening = if lifecycle.listen_until_drained {
        lifecycle.drained.clone()
    } else {
        lifecycle.not_accepting.clone()
    };
    let stop = async move {
        let _ = stop_listening.wait_for(|stop| *stop).await;
    };
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of descriptors: close the connections idle longest and accept again.
                Err(e) if matches!(e.raw_os_error(), Some(libc_emfile::EMFILE | libc_emfile::ENFILE))
                    && connections.make_room(ROOM_ON_EMFILE) > 0 =>
                {
                    tracing::debug!(error = %e, open = connections.open(), "accept: out of descriptors; idle connections closed");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        let registered = connections.register();
        let router = router.clone();
        let builder = builder.clone();
        // A connection accepted while draining (`listen_until_drained`) serves its requests
        // — each answered 429 with `Connection: close` — and is asked to close once drained.
        let closing = if *lifecycle.not_accepting.borrow() {
            lifecycle.drained.clone()
        } else {
            lifecycle.not_accepting.clone()
        };
        let open = open.clone();
        let deadline = config.read_header_timeout;
        let tls = tls.clone();
        open.send_modify(|n| *n += 1);
        tokio::spawn(async move {
            let connection = registered.connection.clone();
            let room = connection.clone();
            let serving = connection_task(
                stream, peer, tls, router, builder, closing, deadline, connection,
            );
            tokio::pin!(serving);
            // Told to make room near the descriptor limit: dropped at once if still idle (a
            // request that began since it was chosen keeps it).
            loop {
                tokio::select! {
                    _ = &mut serving => break,
                    _ = room.closed() => if room.is_idle() { break },
                }
            }
            drop(registered);
            open.send_modify(|n| *n -= 1);
        });
    }
    drop(listener);
    tracing::info!(connections = *open.borrow(), "listener closed");
    let mut drained = lifecycle.drained.clone();
    let _ = drained.wait_for(|d| *d).await;
    let mut left = open.subscribe();
    if tokio::time::timeout(CONNECTION_GRACE, left.wait_for(|n| *n == 0))
        .await
        .is_err()
    {
        tracing::info!(
            connections = *open.borrow(),
            "requests drained; connections still open (idle or stalled) are dropped"
        );
    }
    let left = *open.borrow();
    left
}

/// Serve one accepted connection: the protocol picked (plain) or the TLS handshake done
/// within `deadline`, then hyper until the connection ends, asked to finish once `closing`.
#[allow(clippy::too_many_arguments)]
async fn connection_task(
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    tls: Option<TlsAcceptor>,
    router: Router,
    builder: auto::Builder<TokioExecutor>,
    closing: tokio::sync::watch::Receiver<bool>,
    deadline: Duration,
    connection: Arc<Connection>,
) {
    match tls {
        None => {
            if protocol_bytes_within(&stream, deadline).await {
                let info = ConnectionInfo {
                    peer_address: Some(peer),
                    ..Default::default()
                };
                let service = with_connection_info(router, info, connection);
                let conn = builder
                    .serve_connection_with_upgrades(TokioIo::new(stream), service)
                    .into_owned();
                tokio::pin!(conn);
                let ended = until_closed(conn.as_mut(), closing, |c| c.graceful_shutdown()).await;
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            }
        }
        Some(acceptor) => match tokio::time::timeout(deadline, acceptor.accept(stream)).await {
            Ok(Ok(stream)) => {
                let session = stream.get_ref().1;
                let info = ConnectionInfo {
                    peer_certificates: session
                        .peer_certificates()
                        .map(|c| c.to_vec().into())
                        .unwrap_or_default(),
                    peer_address: Some(peer),
                };
                let h2 = session.alpn_protocol() == Some(b"h2");
                let builder = if h2 {
                    builder.http2_only()
                } else {
                    builder.http1_only()
                };
                let service = with_connection_info(router, info, connection);
                let conn = builder.serve_connection(TokioIo::new(stream), service);
                tokio::pin!(conn);
                let ended = until_closed(conn.as_mut(), closing, |c| c.graceful_shutdown()).await;
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            }
            Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
            Err(_) => tracing::debug!("TLS handshake timed out"),
        },
    }
}

/// Drive `conn` to its end, asking it to finish (`graceful`) once `closing` turns `true`.
async fn until_closed<C, T, E>(
    mut conn: std::pin::Pin<&mut C>,
    mut closing: tokio::sync::watch::Receiver<bool>,
    graceful: impl FnOnce(std::pin::Pin<&mut C>),
) -> Result<T, E>
where
    C: Future<Output = Result<T, E>>,
{
    tokio::select! {
        ended = conn.as_mut() => return ended,
        _ = closing.wait_for(|c| *c) => {}
    }
    graceful(conn.as_mut());
    conn.await
}

/// `router` as a hyper service that attaches `info` to every request and counts each request
/// on `connection` until its answer's body is written (a connection with none is idle).
fn with_connection_info(
    router: Router,
    info: ConnectionInfo,
    connection: Arc<Connection>,
) -> TowerToHyperService<
    impl tower::Service<
            axum::http::Request<hyper::body::Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
            Future = impl Future<Output = Result<axum::response::Response, std::convert::Infallible>>
                         + Send,
        > + Clone,
> {
    use tower::ServiceExt;
    TowerToHyperService::new(tower::service_fn(
        move |mut req: axum::http::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(info.clone());
            let guard = connection.request_started();
            let answer = router.clone().oneshot(req);
            async move {
                let (parts, body) = answer.await?.into_parts();
                Ok(axum::response::Response::from_parts(
                    parts,
                    holding(body, guard),
                ))
            }
        },
    ))
}

/// The HTTP/2 connection preface; hyper's protocol detection reads up to its length.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Wait, at most `deadline`, until the client has sent enough for hyper to pick HTTP/1 or
/// HTTP/2 (a byte that leaves the HTTP/2 preface, or the whole preface) — hyper's protocol
/// detection has no timer of its own. `false`: the client sent nothing usable in time, or
/// closed the connection.
async fn protocol_bytes_within(stream: &tokio::net::TcpStream, deadline: Duration) -> bool {
    let wait = async {
        let mut buf = [0u8; 24];
        loop {
            match stream.peek(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) if n >= H2_PREFACE.len() || buf[..n] != H2_PREFACE[..n] => return true,
                // Part of the preface: wait for more.
                Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    };
    tokio::time::timeout(deadline, wait).await.unwrap_or(false)
}

/// Raise the open-files soft limit to the hard limit (Go's runtime does this for every Go
/// program since 1.19, kube-apiserver included). Returns the limit in force afterwards; a
/// failure is logged and leaves the limit as it was.
pub fn raise_open_files_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot raise the open files limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE)
                .map(|(soft, _)| soft)
                .unwrap_or(0)
        }
    }
}

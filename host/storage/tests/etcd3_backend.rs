//! The etcd3 backend against a real etcd (Debian's etcd 3.4): the `Backend` conformance cases
//! every backend runs (`testing::backend_tests`), then what is this backend's own — cancelling
//! the etcd watch when a receiver is dropped, the compactor, TLS, and faults (etcd unreachable at
//! start, etcd going away mid-watch). Each test starts its own etcd through `testing::etcd::EtcdServer`.

mod common;

use std::time::{Duration, Instant};
use wasm_apiserver_storage::backend::{prefix_end, Backend, KvEvent, WatchReceiver, WatchResponse};
use wasm_apiserver_storage::etcd3::{Etcd3, Etcd3Config, COMPACT_REV_KEY};
use wasm_apiserver_storage::testing::backend_tests;
use wasm_apiserver_storage::testing::etcd::{EtcdServer, EtcdTls};
use wasm_apiserver_storage::BackendError;

fn config(server: &EtcdServer) -> Etcd3Config {
    let mut cfg = Etcd3Config::new([server.endpoint.clone()]);
    cfg.dial_timeout = Duration::from_secs(5);
    cfg.request_timeout = Duration::from_secs(5);
    cfg.compaction_interval = None;
    cfg
}

async fn connect(server: &EtcdServer) -> Etcd3 {
    Etcd3::connect(config(server))
        .await
        .expect("connect to etcd")
}

/// Receive one watch message within `secs` seconds (panics on timeout).
async fn recv(rx: &mut WatchReceiver, secs: u64) -> Option<WatchResponse> {
    tokio::time::timeout(Duration::from_secs(secs), rx.recv())
        .await
        .expect("watch message in time")
}

/// Collect `n` events (skipping progress notifications).
async fn events(rx: &mut WatchReceiver, n: usize) -> Vec<KvEvent> {
    let mut out = Vec::new();
    while out.len() < n {
        match recv(rx, 10).await {
            Some(WatchResponse::Events(evs)) => out.extend(evs),
            Some(WatchResponse::Progress(_)) => {}
            other => panic!("expected events, got {other:?}"),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn primitives_compare_and_revisions() {
    let server = EtcdServer::start();
    backend_tests::run_compare_and_revisions(&connect(&server).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn range_limit_count_more_and_past_revisions() {
    let server = EtcdServer::start();
    backend_tests::run_range_limit_count_more_and_past_revisions(&connect(&server).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn compaction() {
    let server = EtcdServer::start();
    let etcd = connect(&server).await;
    backend_tests::run_compaction(&etcd).await;
    // etcd replays a watch from the compaction revision itself (the embedded store refuses
    // it, see its tests).
    let compacted = etcd.compacted_revision();
    let mut rx = etcd.watch("/c/", true, compacted, false).await.unwrap();
    let evs = events(&mut rx, 1).await;
    assert_eq!(evs[0].kv.mod_revision, compacted);
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_with_prev_kv() {
    let server = EtcdServer::start();
    backend_tests::run_watch_with_prev_kv(&connect(&server).await).await;
}

/// etcd's `etcd_debugging_mvcc_watcher_total` gauge, from its `/metrics` on the client port.
fn etcd_watchers(server: &EtcdServer) -> i64 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", server.client_port)).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).unwrap();
    body.lines()
        .find_map(|l| l.strip_prefix("etcd_debugging_mvcc_watcher_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .expect("watcher gauge in /metrics") as i64
}

/// Wait until etcd reports `n` watchers.
async fn wait_for_watchers(server: &EtcdServer, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = etcd_watchers(server);
        if now == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "etcd has {now} watchers, expected {n}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_receiver_cancels_the_etcd_watch() {
    let server = EtcdServer::start();
    let etcd = connect(&server).await;
    wait_for_watchers(&server, 0).await;
    let idle = etcd.watch("/d/", true, 0, false).await.unwrap();
    let busy = etcd.watch("/d/", true, 0, false).await.unwrap();
    let kept = etcd.watch("/d/", true, 0, false).await.unwrap();
    wait_for_watchers(&server, 3).await;

    // An idle watch: dropping the receiver drops the gRPC stream.
    drop(idle);
    wait_for_watchers(&server, 2).await;

    // A watch with unread events buffered (nobody reads): dropping it ends it all the same.
    for i in 0..150 {
        etcd.put_if(&format!("/d/{i}"), 0, b"x".to_vec(), 0)
            .await
            .unwrap();
    }
    drop(busy);
    wait_for_watchers(&server, 1).await;
    drop(kept);
    wait_for_watchers(&server, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_notify() {
    let server = EtcdServer::start_with_args(common::ETCD_ARGS);
    backend_tests::run_progress_notify(&connect(&server).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ttl_expiry() {
    let server = EtcdServer::start();
    backend_tests::run_ttl_expiry(&connect(&server).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn compactor_rounds_and_loop() {
    let server = EtcdServer::start();
    let etcd = connect(&server).await;

    // Rounds by hand: the first only records the revision, the second compacts it.
    let mut compactor = etcd.compactor();
    let round1 = compactor.run_once().await.unwrap();
    assert!(round1.won);
    assert_eq!(round1.compacted, None);
    for i in 0..3 {
        etcd.put_if(&format!("/k/{i}"), 0, b"x".to_vec(), 0)
            .await
            .unwrap();
    }
    let round2 = compactor.run_once().await.unwrap();
    assert!(round2.won);
    assert_eq!(round2.compacted, Some(round1.next_revision));
    assert_eq!(etcd.compacted_revision(), round1.next_revision);
    assert!(matches!(
        etcd.range("/k/", &prefix_end("/k/"), 0, round1.next_revision - 1)
            .await,
        Err(BackendError::Compacted(_))
    ));
    let stored = etcd
        .range(COMPACT_REV_KEY, "", 0, 0)
        .await
        .unwrap()
        .kvs
        .remove(0);
    assert_eq!(stored.value, round1.next_revision.to_string().into_bytes());
    assert_eq!(stored.version, 2);

    // A second apiserver's compactor loses its first round and adopts the key's version and
    // the compacted revision; it wins the round after.
    let other = Etcd3::connect(config(&server)).await.unwrap();
    let mut rival = other.compactor();
    let lost = rival.run_once().await.unwrap();
    assert!(!lost.won);
    assert_eq!(other.compacted_revision(), round1.next_revision);
    let won = rival.run_once().await.unwrap();
    assert!(won.won);
    assert_eq!(won.compacted, Some(lost.next_revision));
    // ... and now the first compactor is the one out of date.
    assert!(!compactor.run_once().await.unwrap().won);

    // The loop with a short interval compacts on its own.
    let before = etcd.compacted_revision();
    let handle = etcd.start_compactor(Duration::from_millis(150));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut i = 0;
    while etcd.compacted_revision() <= before {
        assert!(Instant::now() < deadline, "compactor loop did not compact");
        etcd.put_if(&format!("/loop/{i}"), 0, b"x".to_vec(), 0)
            .await
            .unwrap();
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    handle.stop();
    let compacted = etcd.compacted_revision();
    assert!(matches!(
        etcd.range("/loop/", &prefix_end("/loop/"), 0, compacted - 1)
            .await,
        Err(BackendError::Compacted(_))
    ));

    // connect() with compaction_interval starts one by itself.
    let mut cfg = config(&server);
    cfg.compaction_interval = Some(Duration::from_millis(150));
    let auto = Etcd3::connect(cfg).await.unwrap();
    let start = auto.compacted_revision();
    let deadline = Instant::now() + Duration::from_secs(10);
    while auto.compacted_revision() <= start {
        assert!(
            Instant::now() < deadline,
            "connect's compactor did not compact"
        );
        auto.put_if(&format!("/auto/{i}"), 0, b"x".to_vec(), 0)
            .await
            .unwrap();
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn etcd_unreachable_at_start_fails_fast() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut cfg = Etcd3Config::new([endpoint.clone()]);
    cfg.dial_timeout = Duration::from_secs(2);
    let started = Instant::now();
    let result = Etcd3::connect(cfg).await;
    let elapsed = started.elapsed();
    match result {
        Err(BackendError::Unreachable(msg)) => {
            assert!(msg.contains(&endpoint), "message names the endpoint: {msg}")
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");

    // A peer that accepts TCP connections but never answers (a hung etcd) also ends within
    // the dial timeout: connections queue in the listener's backlog, nothing is accepted.
    let black_hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hung = format!("http://{}", black_hole.local_addr().unwrap());
    let mut cfg = Etcd3Config::new([hung.clone()]);
    cfg.dial_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let result = Etcd3::connect(cfg).await;
    assert!(
        matches!(&result, Err(BackendError::Unreachable(m)) if m.contains(&hung)),
        "expected Unreachable, got {result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    drop(black_hole);

    // Bad configuration is not "unreachable".
    assert!(matches!(
        Etcd3::connect(Etcd3Config::new(Vec::<String>::new())).await,
        Err(BackendError::Other(_))
    ));
    let mut cfg = Etcd3Config::new([endpoint]);
    cfg.cert_file = Some("/nonexistent/cert.pem".into());
    cfg.key_file = Some("/nonexistent/key.pem".into());
    assert!(matches!(
        Etcd3::connect(cfg).await,
        Err(BackendError::Other(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn etcd_going_away_mid_watch() {
    let mut server = EtcdServer::start();
    let mut cfg = config(&server);
    cfg.request_timeout = Duration::from_secs(3);
    cfg.health_timeout = Duration::from_secs(1);
    let etcd = Etcd3::connect(cfg).await.unwrap();
    let mut rx = etcd.watch("/g/", true, 0, false).await.unwrap();
    etcd.put_if("/g/a", 0, b"1".to_vec(), 0).await.unwrap();
    assert_eq!(events(&mut rx, 1).await[0].kv.key, "/g/a");

    server.stop();
    let started = Instant::now();
    match recv(&mut rx, 30).await {
        Some(WatchResponse::Error(BackendError::Unreachable(_))) => {}
        other => panic!("expected an Unreachable error, got {other:?}"),
    }
    assert!(recv(&mut rx, 5).await.is_none(), "nothing after the error");
    let detected = started.elapsed();
    eprintln!("watch error after {detected:?}");
    assert!(detected < Duration::from_secs(15), "took {detected:?}");

    // Requests fail within their bounds while etcd is down.
    let started = Instant::now();
    let down = etcd.range("/g/", &prefix_end("/g/"), 0, 0).await;
    eprintln!("range while down after {:?}: {down:?}", started.elapsed());
    assert!(matches!(
        down,
        Err(BackendError::Unreachable(_) | BackendError::Timeout(_))
    ));
    assert!(etcd.health().await.is_err());
    assert!(matches!(
        etcd.watch("/g/", true, 0, false).await,
        Err(BackendError::Unreachable(_))
    ));
    assert!(started.elapsed() < Duration::from_secs(12));

    // After a restart (same data), the same client serves again and a new watch works.
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut rx = loop {
        match etcd.watch("/g/", true, 0, false).await {
            Ok(rx) => break rx,
            Err(e) => {
                eprintln!("watch after restart: {e}");
                assert!(Instant::now() < deadline, "no watch after restart: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let kv = etcd.range("/g/a", "", 0, 0).await.unwrap().kvs.remove(0);
    assert_eq!(kv.value, b"1", "data survived the restart");
    etcd.put_if("/g/b", 0, b"2".to_vec(), 0).await.unwrap();
    assert_eq!(events(&mut rx, 1).await[0].kv.key, "/g/b");
    etcd.health().await.unwrap();
}

/// Generate a CA, an etcd serving certificate for 127.0.0.1 and a client certificate with
/// the `openssl` CLI. `None` when openssl is missing.
fn make_certs(dir: &std::path::Path) -> Option<()> {
    let run = |args: &[&str]| {
        let status = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then_some(())
    };
    let key = |name: &str| {
        run(&[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            name,
        ])
    };
    key("ca.key")?;
    run(&[
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-subj",
        "/CN=test-ca",
        "-days",
        "2",
        "-out",
        "ca.crt",
    ])?;
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n",
    )
    .ok()?;
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
    .ok()?;
    for (name, cn) in [("server", "etcd"), ("client", "kube-apiserver")] {
        key(&format!("{name}.key"))?;
        run(&[
            "req",
            "-new",
            "-key",
            &format!("{name}.key"),
            "-subj",
            &format!("/CN={cn}"),
            "-out",
            &format!("{name}.csr"),
        ])?;
        run(&[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
            "-out",
            &format!("{name}.crt"),
        ])?;
    }
    Some(())
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_with_client_certificates() {
    let certs = tempfile::tempdir().unwrap();
    if make_certs(certs.path()).is_none() {
        eprintln!("openssl not available: skipping the TLS test");
        return;
    }
    let p = |name: &str| certs.path().join(name);
    let server = EtcdServer::start_tls(EtcdTls {
        cert_file: p("server.crt"),
        key_file: p("server.key"),
        client_ca_file: p("ca.crt"),
    });
    assert!(server.endpoint.starts_with("https://"));

    let mut cfg = config(&server);
    cfg.ca_file = Some(p("ca.crt"));
    cfg.cert_file = Some(p("client.crt"));
    cfg.key_file = Some(p("client.key"));
    let etcd = Etcd3::connect(cfg.clone()).await.expect("TLS connect");
    let r = etcd.put_if("/tls/a", 0, b"x".to_vec(), 0).await.unwrap();
    assert!(r.succeeded);
    let mut rx = etcd.watch("/tls/", true, r.revision, false).await.unwrap();
    assert_eq!(events(&mut rx, 1).await[0].kv.key, "/tls/a");

    // Without a client certificate etcd refuses the handshake.
    let mut no_client_cert = cfg.clone();
    no_client_cert.cert_file = None;
    no_client_cert.key_file = None;
    no_client_cert.dial_timeout = Duration::from_secs(2);
    assert!(Etcd3::connect(no_client_cert).await.is_err());
    // TLS files with an http:// URL are a configuration error.
    let mut plain = cfg;
    plain.endpoints = vec![server.endpoint.replace("https://", "http://")];
    assert!(matches!(
        Etcd3::connect(plain).await,
        Err(BackendError::Other(_))
    ));
}

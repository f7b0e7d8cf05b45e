//! `--authentication-config` (kube-apiserver's structured authentication configuration,
//! `pkg/kubeapiserver/options/authentication.go`): the file is read at start — one that does
//! not validate refuses the start, every field error named — its issuers' keys fetched in the
//! background, and the file read again every second: a changed file that validates replaces
//! the JWT authenticators once its issuers' keys are fetched (at most a minute, kube's
//! `UpdateAuthenticationConfigTimeout`; kube's automatic reload, 1.30+), so a reload does not
//! refuse tokens meanwhile; one that does not validate is logged and the last good one kept.

use crate::authentication::jwt::{JwtAuthenticators, SharedJwt};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How often the file is read for changes.
const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// How long a reloaded configuration's keys are waited for before it replaces the last one.
const RELOAD_READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Load `path` (no issuer may be one of `service_account_issuers`), start its key fetchers
/// and its reloader. Errors: the file does not load ([`JwtAuthenticators::load`]).
pub fn start(path: &Path, service_account_issuers: &[String]) -> anyhow::Result<SharedJwt> {
    let disallowed = service_account_issuers.to_vec();
    let first = JwtAuthenticators::load(path, &disallowed)?;
    first.start();
    tracing::info!(issuers = ?first.issuers(), "authentication configuration loaded");
    let shared: SharedJwt = Arc::new(arc_swap::ArcSwap::from_pointee(first));
    let (cell, path) = (shared.clone(), path.to_path_buf());
    let mut loaded = std::fs::read(&path).ok();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(RELOAD_INTERVAL).await;
            let now = std::fs::read(&path).ok();
            if now.is_none() || now == loaded {
                continue;
            }
            loaded = now;
            match JwtAuthenticators::load(&path, &disallowed) {
                Ok(next) => {
                    next.start();
                    if !next.ready_within(RELOAD_READY_TIMEOUT).await {
                        tracing::warn!(issuers = ?next.issuers(), "authentication configuration reloaded before every issuer's keys could be fetched");
                    }
                    tracing::info!(issuers = ?next.issuers(), "authentication configuration reloaded");
                    cell.store(Arc::new(next));
                }
                Err(e) => {
                    tracing::error!(error = %e, "authentication configuration not reloaded; the last good one stays")
                }
            }
        }
    });
    Ok(shared)
}

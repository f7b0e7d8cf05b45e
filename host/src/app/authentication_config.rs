//! `--authentication-config` (kube-apiserver's structured authentication configuration,
//! `pkg/kubeapiserver/options/authentication.go`): the file is read at start — one that does
//! not validate refuses the start, every field error named — its issuers' keys fetched in the
//! background, and the file read again every second: a changed file that validates replaces
//! the JWT authenticators at once (kube's automatic reload, 1.30+), one that does not is logged
//! and the last good one kept serving.

use crate::authentication::jwt::{JwtAuthenticators, SharedJwt};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How often the file is read for changes.
const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// Load `path`, start its key fetchers and its reloader. Errors: the file does not load
/// ([`JwtAuthenticators::load`]).
pub fn start(path: &Path) -> anyhow::Result<SharedJwt> {
    let first = JwtAuthenticators::load(path)?;
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
            match JwtAuthenticators::load(&path) {
                Ok(next) => {
                    next.start();
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

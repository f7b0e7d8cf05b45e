//! The system namespaces (`pkg/controlplane/controller/systemnamespaces/
//! system_namespaces_controller.go`, which ensures `kube-system`, `kube-public` and
//! `kube-node-lease` every minute, and the `kubernetes` service controller, which ensures
//! `default`): created when missing, at start and then every minute — so a deleted `default`
//! comes back, as on kube.

use crate::registry::{Served, Store};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// The namespaces kept in existence.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// How often they are checked.
pub const INTERVAL: Duration = Duration::from_secs(60);

/// Create the missing system namespaces through `namespaces`.
pub async fn ensure(namespaces: &Store) {
    for name in SYSTEM_NAMESPACES {
        match namespaces.get_shared("", name, "0").await {
            Ok(_) => continue,
            Err(e) if e.code != 404 => continue,
            Err(_) => {}
        }
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match namespaces
            .create("", ns, &crate::registry::CreateOptions::host())
            .await
        {
            Ok(_) => tracing::info!(namespace = name, "created system namespace"),
            Err(e) if e.code == 409 => {}
            Err(e) => {
                tracing::warn!(namespace = name, error = %e, "cannot create system namespace")
            }
        }
    }
}

/// Run [`ensure`] now (once namespaces are served) and every [`INTERVAL`].
pub fn start(served: Arc<Served>) {
    tokio::spawn(async move {
        loop {
            if let Some(namespaces) = served.load().resources.get("", "v1", "namespaces") {
                ensure(&namespaces).await;
                tokio::time::sleep(INTERVAL).await;
            } else {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    });
}

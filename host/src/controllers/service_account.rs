//! The ServiceAccounts controller (`pkg/controller/serviceaccount/serviceaccounts_controller.go`,
//! kube-controller-manager's `serviceaccount-controller`): every namespace that is not
//! terminating has a `default` ServiceAccount, created when missing and again when deleted.
//!
//! Driven by watches of namespaces and ServiceAccounts (whichever changes first), like the
//! namespace controller.

use crate::registry::{CreateOptions, ListOptions, Served, Store};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// The controller's name (`--controllers`, kube-controller-manager's).
pub const NAME: &str = "serviceaccount-controller";

/// The ServiceAccount every namespace gets.
pub const DEFAULT: &str = "default";

/// Start the controller; abort the returned task to stop it.
pub fn start(served: Arc<Served>) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        loop {
            let snapshot = served.load();
            let (Some(namespaces), Some(accounts)) = (
                snapshot.resources.get("", "v1", "namespaces"),
                snapshot.resources.get("", "v1", "serviceaccounts"),
            ) else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let (ns_list, sa_list) = match (
                namespaces.list("", &ListOptions::default()).await,
                accounts.list("", &ListOptions::default()).await,
            ) {
                (Ok(n), Ok(s)) => (n, s),
                (Err(e), _) | (_, Err(e)) => {
                    tracing::warn!(error = %e, "{NAME}: cannot list");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            let have: std::collections::HashSet<String> = accounts
                .decode_items(&sa_list)
                .unwrap_or_default()
                .iter()
                .filter(|sa| sa["metadata"]["name"] == DEFAULT)
                .filter_map(|sa| sa["metadata"]["namespace"].as_str().map(String::from))
                .collect();
            for ns in namespaces.decode_items(&ns_list).unwrap_or_default() {
                let name = ns["metadata"]["name"].as_str().unwrap_or_default();
                let terminating = ns["metadata"].get("deletionTimestamp").is_some()
                    || ns["status"]["phase"] == "Terminating";
                if terminating || name.is_empty() || have.contains(name) {
                    continue;
                }
                create_default(&accounts, name).await;
            }
            let (ns_rv, sa_rv) = (
                ns_list.resource_version.to_string(),
                sa_list.resource_version.to_string(),
            );
            tokio::select! {
                _ = super::wait_for_change(&namespaces, &ns_rv) => {}
                _ = super::wait_for_change(&accounts, &sa_rv) => {}
            }
        }
    })
    .abort_handle()
}

async fn create_default(accounts: &Store, namespace: &str) {
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": DEFAULT, "namespace": namespace}});
    match accounts.create(namespace, sa, &CreateOptions::host()).await {
        Ok(_) => tracing::info!(namespace, "{NAME}: created the default ServiceAccount"),
        // Created meanwhile, or the namespace went away: the next round sees it.
        Err(e) if matches!(e.code, 403 | 404 | 409) => {}
        Err(e) => {
            tracing::warn!(namespace, error = %e, "{NAME}: cannot create the default ServiceAccount")
        }
    }
}

//! This server's identity Lease, as each kube-apiserver keeps one (KEP-1965 "apiserver
//! identity"; `pkg/controlplane/apiserver/server.go`: `IdentityLeaseComponentLabelKey`,
//! `IdentityLeaseDurationSeconds` 3600, `IdentityLeaseRenewIntervalPeriod` 10 s; renewed as
//! `k8s.io/component-helpers/apimachinery/lease/controller.go` does; expired ones deleted as
//! `pkg/controlplane/controller/apiserverleasegc` does): `kube-system/apiserver-<hash>`,
//! labelled `apiserver.kubernetes.io/identity: kube-apiserver` and `kubernetes.io/hostname`,
//! `holderIdentity` this server's id. Every replica runs it (not elected), so
//! `kubectl get leases -n kube-system -l apiserver.kubernetes.io/identity=kube-apiserver`
//! lists the replicas of one store.
//!
//! Beyond kube, the lease says which encryption configuration the replica has loaded
//! ([`CONFIG_HASH`]), whether it reloads the file ([`AUTOMATIC_RELOAD`]) and why it refused
//! the file it read last ([`RELOAD_ERROR`]): what `wasm-apiserver encryption rotate` waits
//! on before each step. A change is written at once, not at the next renewal.

use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{CreateOptions, ListOptions, Served, Store, UpdateOptions};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// The label naming a lease an apiserver identity (`IdentityLeaseComponentLabelKey`).
pub const IDENTITY_LABEL: &str = "apiserver.kubernetes.io/identity";

/// That label's value (`KubeAPIServer`): clients select kube-apiserver's leases by it.
pub const IDENTITY_VALUE: &str = "kube-apiserver";

/// Namespace of the identity leases.
pub const NAMESPACE: &str = "kube-system";

/// Annotation: `sha256:<hex>` of the encryption configuration file this replica has loaded.
pub const CONFIG_HASH: &str = "encryption.wasm-apiserver.dev/config-hash";

/// Annotation: `"true"` when this replica reloads its encryption configuration.
pub const AUTOMATIC_RELOAD: &str = "encryption.wasm-apiserver.dev/automatic-reload";

/// Annotation: why the file this replica read last was not loaded (absent when it was).
pub const RELOAD_ERROR: &str = "encryption.wasm-apiserver.dev/reload-error";

/// How long a lease lasts without renewal (`IdentityLeaseDurationSeconds`).
pub const LEASE_DURATION: Duration = Duration::from_secs(3600);

/// Between two renewals (`IdentityLeaseRenewIntervalPeriod`).
pub const RENEW_INTERVAL: Duration = Duration::from_secs(10);

/// What this replica has loaded of its encryption configuration, for its lease.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EncryptionStatus {
    /// `sha256:<hex>` of the configuration file's bytes in use.
    pub config_hash: String,
    /// Whether the file is read again when it changes.
    pub automatic_reload: bool,
    /// Why the file read last was refused, if it was.
    pub reload_error: Option<String>,
}

/// The lease name of the server `server_id`: `apiserver-` and 32 hex digits of its SHA-256
/// (kube hashes the host name; replicas here may share a host).
pub fn lease_name(server_id: &str) -> String {
    format!(
        "apiserver-{}",
        &hex::encode(Sha256::digest(server_id.as_bytes()))[..32]
    )
}

/// Keep this server's identity lease for ever: created at once, renewed every
/// [`RENEW_INTERVAL`] and whenever `encryption` changes; other replicas' leases expired for
/// [`LEASE_DURATION`] are deleted. Waits for a served `leases` resource.
pub fn start(
    served: Arc<Served>,
    server_id: String,
    mut encryption: tokio::sync::watch::Receiver<EncryptionStatus>,
) {
    tokio::spawn(async move {
        let name = lease_name(&server_id);
        let holder = format!("{name}_{}", uuid::Uuid::new_v4());
        loop {
            let leases = served
                .load()
                .resources
                .get("coordination.k8s.io", "v1", "leases");
            if let Some(leases) = leases {
                let status = encryption.borrow_and_update().clone();
                if let Err(e) = renew(&leases, &name, &holder, &status).await {
                    tracing::warn!(error = %e, lease = %name, "identity lease: cannot renew");
                }
                collect_expired(&leases).await;
            }
            tokio::select! {
                _ = tokio::time::sleep(RENEW_INTERVAL) => {}
                changed = encryption.changed() => {
                    if changed.is_err() {
                        // The sender is gone: renew on the interval only.
                        tokio::time::sleep(RENEW_INTERVAL).await;
                    }
                }
            }
        }
    });
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Create or renew the lease with `status` in its annotations.
async fn renew(
    leases: &Store,
    name: &str,
    holder: &str,
    status: &EncryptionStatus,
) -> crate::status::ApiResult<()> {
    let now = wasm_apiserver_apimachinery::time::now_micro();
    let mut annotations = serde_json::Map::new();
    if !status.config_hash.is_empty() {
        annotations.insert(CONFIG_HASH.into(), json!(status.config_hash));
    }
    annotations.insert(
        AUTOMATIC_RELOAD.into(),
        json!(status.automatic_reload.to_string()),
    );
    if let Some(e) = &status.reload_error {
        annotations.insert(RELOAD_ERROR.into(), json!(e));
    }
    let spec = json!({
        "holderIdentity": holder,
        "leaseDurationSeconds": LEASE_DURATION.as_secs(),
        "acquireTime": now,
        "renewTime": now,
    });
    let labels = json!({IDENTITY_LABEL: IDENTITY_VALUE, "kubernetes.io/hostname": host_name()});
    match leases.get(NAMESPACE, name, "").await {
        Ok(mut lease) => {
            // This process's earlier acquisition stays; another's (a restart) is replaced.
            let ours = lease["spec"]["holderIdentity"] == holder;
            let acquire = lease["spec"]["acquireTime"].clone();
            lease["spec"] = spec;
            if ours && !acquire.is_null() {
                lease["spec"]["acquireTime"] = acquire;
            }
            lease["metadata"]["labels"] = labels;
            lease["metadata"]["annotations"] = Value::Object(annotations);
            leases
                .update(
                    NAMESPACE,
                    name,
                    UpdatedObject::Replace(lease),
                    &UpdateOptions::host(Subresource::Main),
                )
                .await
                .map(|_| ())
        }
        Err(e) if e.code == 404 => {
            let lease = json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": NAMESPACE,
                             "labels": labels, "annotations": annotations},
                "spec": spec,
            });
            leases
                .create(NAMESPACE, lease, &CreateOptions::host())
                .await
                .map(|_| ())
        }
        Err(e) => Err(e),
    }
}

/// Delete the identity leases not renewed for their duration (`apiserverleasegc`), each
/// with its resourceVersion as precondition so a renewal in between wins.
async fn collect_expired(leases: &Store) {
    let Ok(list) = leases.list(NAMESPACE, &ListOptions::default()).await else {
        return;
    };
    let now = chrono::Utc::now();
    for lease in leases.decode_items(&list).unwrap_or_default() {
        if lease["metadata"]["labels"][IDENTITY_LABEL] != IDENTITY_VALUE || !expired(&lease, now) {
            continue;
        }
        let name = lease["metadata"]["name"].as_str().unwrap_or_default();
        let rv = lease["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        let opts = crate::registry::deletion::DeleteOptions {
            preconditions: wasm_apiserver_storage::Preconditions {
                uid: None,
                resource_version: Some(rv.to_string()),
            },
            ..Default::default()
        };
        if leases.delete(NAMESPACE, name, &opts).await.is_ok() {
            tracing::info!(lease = name, "identity lease expired: deleted");
        }
    }
}

/// Whether `lease` was last renewed more than its duration before `now`.
pub fn expired(lease: &Value, now: chrono::DateTime<chrono::Utc>) -> bool {
    let duration = lease["spec"]["leaseDurationSeconds"].as_u64().unwrap_or(0);
    expired_after(lease, Duration::from_secs(duration), now)
}

/// Whether `lease` was last renewed more than `after` before `now` (true without a
/// `renewTime`).
pub fn expired_after(lease: &Value, after: Duration, now: chrono::DateTime<chrono::Utc>) -> bool {
    // No renewal time: never renewed, so expired (kube's apiserverleasegc deletes it too).
    let Some(renew) = lease["spec"]["renewTime"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    else {
        return true;
    };
    let after = chrono::Duration::from_std(after).unwrap_or(chrono::Duration::MAX);
    renew.with_timezone(&chrono::Utc) + after < now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_expiry() {
        let n = lease_name("host_1");
        assert!(n.starts_with("apiserver-") && n.len() == 42, "{n}");
        assert_ne!(n, lease_name("host_2"));
        let now = chrono::Utc::now();
        let at = |secs_ago: i64| {
            json!({"spec": {"renewTime": (now - chrono::Duration::seconds(secs_ago)).to_rfc3339(),
                            "leaseDurationSeconds": 3600}})
        };
        assert!(!expired(&at(10), now));
        assert!(expired(&at(3601), now));
        assert!(expired(&json!({"spec": {}}), now));
    }
}

//! Leader election for the server's controllers, as kube-controller-manager does it with
//! client-go's `tools/leaderelection` over a `coordination.k8s.io/v1` Lease
//! (`leaderelection.go`: `tryAcquireOrRenew`, `acquire`, `renew`): among servers sharing one
//! etcd, the holder of [`LEASE_NAMESPACE`]/[`LEASE_NAME`] runs the controllers; the others
//! retry every `retry_period` and take the lease over once its holder has not renewed it for
//! `lease_duration` — measured on this server's clock from when it last saw the record change,
//! never from the record's timestamps (clock skew between servers does not matter). A holder
//! that cannot renew within `renew_deadline` stops its controllers and goes back to
//! acquiring.
//!
//! Without a served `leases` resource this server leads alone (a warning says so) until one
//! appears; from then on it never leads without the lease. Every replica must serve the
//! `leases` plugin, or a replica without it runs the controllers too.
//!
//! The Lease goes through the registry (the `leases` standard plugin's strategy, optimistic
//! concurrency on `resourceVersion`), so two servers can never both win one round.

use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{Served, Store};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Namespace of the controllers' lease (kube-controller-manager's is there too).
pub const LEASE_NAMESPACE: &str = "kube-system";

/// Name of the controllers' lease.
pub const LEASE_NAME: &str = "wasm-apiserver-controllers";

/// The election's timing (kube-controller-manager's `--leader-elect-*` flags; defaults 15 s,
/// 10 s, 2 s) and this server's identity.
#[derive(Clone, Debug)]
pub struct LeaderElectionConfig {
    /// How long a lease not renewed stays its holder's.
    pub lease_duration: Duration,
    /// How long the holder keeps leading without a successful renewal.
    pub renew_deadline: Duration,
    /// Between two attempts to acquire or renew.
    pub retry_period: Duration,
    /// `holderIdentity` of this server (`<hostname>_<uuid>`, as client-go's default).
    pub identity: String,
}

impl LeaderElectionConfig {
    /// The checks of client-go's `NewLeaderElector`: `lease_duration` > `renew_deadline` >
    /// 1.2 × `retry_period` > 0; and the lease at least 1 s (the Lease records whole seconds).
    /// Errors: the rule broken.
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_duration <= self.renew_deadline {
            return Err(
                "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
                    .into(),
            );
        }
        if self.renew_deadline.as_secs_f64() <= 1.2 * self.retry_period.as_secs_f64() {
            return Err("--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period".into());
        }
        if self.retry_period.is_zero() {
            return Err("--leader-elect-retry-period must be greater than zero".into());
        }
        if self.lease_duration < Duration::from_secs(1) {
            return Err("--leader-elect-lease-duration must be at least 1s".into());
        }
        Ok(())
    }
}

/// The identity client-go's leader election uses: host name, `_`, a new UUID.
pub fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "wasm-apiserver".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// What leading starts: the controllers, as abort handles (stopped when leadership is lost).
pub type OnStartedLeading = Box<dyn Fn() -> Vec<tokio::task::AbortHandle> + Send + Sync>;

/// Run the election for ever: lead (calling `on_started_leading`) while holding the lease.
pub fn run(
    served: Arc<Served>,
    config: LeaderElectionConfig,
    on_started_leading: OnStartedLeading,
) {
    tokio::spawn(async move {
        let mut elector = Elector {
            config,
            observed: None,
            warned: false,
            leases_seen: false,
        };
        loop {
            // acquire
            loop {
                if elector.try_acquire_or_renew(&served).await {
                    break;
                }
                tokio::time::sleep(jitter(elector.config.retry_period)).await;
            }
            tracing::info!(identity = %elector.config.identity, lease = %format!("{LEASE_NAMESPACE}/{LEASE_NAME}"), "leading: controllers started");
            leader_metric(LEASE_NAME, true);
            let running = on_started_leading();
            // renew: each attempt bounded by what is left of the renew deadline (client-go's
            // PollUntilContextTimeout), a renewal counted from when its attempt started.
            let mut last_renew = Instant::now();
            loop {
                tokio::time::sleep(elector.config.retry_period).await;
                let left = elector
                    .config
                    .renew_deadline
                    .saturating_sub(last_renew.elapsed());
                let started = Instant::now();
                match tokio::time::timeout(left, elector.try_acquire_or_renew(&served)).await {
                    Ok(true) => last_renew = started,
                    _ if last_renew.elapsed() >= elector.config.renew_deadline => break,
                    _ => {}
                }
            }
            for task in running {
                task.abort();
            }
            leader_metric(LEASE_NAME, false);
            tracing::warn!(identity = %elector.config.identity, "leadership lost: controllers stopped");
        }
    });
}

/// client-go's `wait.Jitter(period, 1.2)`: up to 120% more, so candidates do not retry in step.
fn jitter(period: Duration) -> Duration {
    period + period.mul_f64(1.2 * rand_fraction())
}

fn rand_fraction() -> f64 {
    (uuid::Uuid::new_v4().as_u128() % 1_000_000) as f64 / 1_000_000.0
}

struct Elector {
    config: LeaderElectionConfig,
    /// The lease record (holder, renewTime) last seen and when this server first saw it.
    observed: Option<((String, String), Instant)>,
    /// Whether the missing leases resource was reported.
    warned: bool,
    /// Whether a leases resource was ever served.
    leases_seen: bool,
}

impl Elector {
    /// `tryAcquireOrRenew`: true when this server holds the lease after the call.
    async fn try_acquire_or_renew(&mut self, served: &Served) -> bool {
        let Some(leases) = served
            .load()
            .resources
            .get("coordination.k8s.io", "v1", "leases")
        else {
            // Nothing to elect with: lead alone, as a single server would, until a leases
            // resource has been seen; after that, never without the lease (a plugin being
            // reloaded or removed must not make a second leader).
            if self.leases_seen {
                return false;
            }
            if !self.warned {
                tracing::warn!("leader election: no coordination.k8s.io/v1 leases served; running the controllers without a lease");
                self.warned = true;
            }
            return true;
        };
        self.leases_seen = true;
        let now = wasm_apiserver_apimachinery::time::now_micro();
        let id = self.config.identity.clone();
        let existing = match leases.get(LEASE_NAMESPACE, LEASE_NAME, "").await {
            Ok(l) => l,
            Err(e) if e.code == 404 => {
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE},
                    "spec": self.spec(&id, &now, &now, 0),
                });
                return match leases
                    .create(
                        LEASE_NAMESPACE,
                        lease,
                        &crate::registry::CreateOptions::host(),
                    )
                    .await
                {
                    Ok(_) => {
                        self.observe(&id, &now);
                        true
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "leader election: cannot create the lease");
                        false
                    }
                };
            }
            Err(e) => {
                tracing::debug!(error = %e, "leader election: cannot read the lease");
                return false;
            }
        };
        let spec = &existing["spec"];
        let holder = spec["holderIdentity"].as_str().unwrap_or("").to_string();
        let renew = spec["renewTime"].as_str().unwrap_or("").to_string();
        let record = (holder.clone(), renew);
        let observed_at = match &self.observed {
            Some((r, at)) if *r == record => *at,
            _ => {
                let at = Instant::now();
                self.observed = Some((record, at));
                at
            }
        };
        let duration = spec["leaseDurationSeconds"]
            .as_u64()
            .map_or(self.config.lease_duration, Duration::from_secs);
        if !holder.is_empty() && holder != id && observed_at.elapsed() < duration {
            return false;
        }
        let (acquire, transitions) = if holder == id {
            (
                spec["acquireTime"].as_str().unwrap_or(&now).to_string(),
                spec["leaseTransitions"].as_i64().unwrap_or(0),
            )
        } else {
            (
                now.clone(),
                spec["leaseTransitions"].as_i64().unwrap_or(0) + 1,
            )
        };
        let mut updated = existing.clone();
        updated["spec"] = self.spec(&id, &acquire, &now, transitions);
        // Optimistic concurrency: the update carries the resourceVersion read above.
        match update(&leases, updated).await {
            Ok(()) => {
                self.observe(&id, &now);
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "leader election: cannot update the lease");
                false
            }
        }
    }

    fn spec(&self, id: &str, acquire: &str, renew: &str, transitions: i64) -> Value {
        json!({
            "holderIdentity": id,
            "leaseDurationSeconds": self.config.lease_duration.as_secs().max(1),
            "acquireTime": acquire,
            "renewTime": renew,
            "leaseTransitions": transitions,
        })
    }

    fn observe(&mut self, holder: &str, renew: &str) {
        self.observed = Some(((holder.to_string(), renew.to_string()), Instant::now()));
    }
}

async fn update(leases: &Store, lease: Value) -> crate::status::ApiResult<()> {
    leases
        .update(
            LEASE_NAMESPACE,
            LEASE_NAME,
            UpdatedObject::Replace(lease),
            &crate::registry::UpdateOptions::host(Subresource::Main),
        )
        .await
        .map(|_| ())
}

/// `leader_election_master_status{name}` (client-go's `leaderelection/metrics.go`): 1 while
/// this server leads the lease named `lease`, 0 otherwise (one label value per lease).
fn leader_metric(lease: &str, leading: bool) {
    static LEADER: std::sync::LazyLock<prometheus::IntGaugeVec> = std::sync::LazyLock::new(|| {
        crate::metrics::gauge_vec(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            &["name"],
        )
    });
    LEADER.with_label_values(&[lease]).set(leading as i64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(lease: u64, renew: u64, retry: u64) -> LeaderElectionConfig {
        LeaderElectionConfig {
            lease_duration: Duration::from_millis(lease),
            renew_deadline: Duration::from_millis(renew),
            retry_period: Duration::from_millis(retry),
            identity: "a".into(),
        }
    }

    #[test]
    fn timing_is_checked_as_client_go_does() {
        assert!(config(15_000, 10_000, 2_000).validate().is_ok());
        assert!(config(3_000, 2_000, 250).validate().is_ok());
        assert!(config(15_000, 30_000, 2_000).validate().is_err());
        assert!(config(15_000, 2_000, 2_000).validate().is_err());
        assert!(config(15_000, 10_000, 0).validate().is_err());
        assert!(config(900, 500, 100).validate().is_err());
    }
}

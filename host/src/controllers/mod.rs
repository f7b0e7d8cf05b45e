//! The controllers kube-controller-manager (and kube-apiserver's own bootstrap controllers)
//! run, here inside the server process, over the registry — so delete hooks, finalizers and
//! the watch cache apply as for any client. `--controllers` chooses them (`*` all, `-name` off,
//! the first explicit word deciding, as kube-controller-manager's flag).
//!
//! - `apiserver_identity.rs`: this server's identity Lease, with the encryption configuration
//!   it has loaded (kube-apiserver's `APIServerIdentity`); every server keeps its own, whatever
//!   `--controllers` says.
//! - `system_namespaces.rs`: `default`, `kube-system`, `kube-public`, `kube-node-lease`
//!   exist (`pkg/controlplane/controller/systemnamespaces`, the `kubernetes` service
//!   controller for `default`).
//! - `namespace.rs`: the namespace controller (`pkg/controller/namespace`).
//! - `garbage_collector/`: the garbage collector (`pkg/controller/garbagecollector`):
//!   dependents deleted or orphaned after their owners, from `ownerReferences`.
//! - `service_account.rs`: a `default` ServiceAccount in every namespace
//!   (`pkg/controller/serviceaccount`).
//! - `validating_admission_policy_status.rs`: a ValidatingAdmissionPolicy's status, its
//!   type checking (`pkg/controller/validatingadmissionpolicystatus`).
//! - `storage_version_migrator.rs`: every object of a resource rewritten for a
//!   `StorageVersionMigration` (`pkg/controller/storageversionmigrator`).
//! - `leader_election.rs`: one server per store runs the last five, the holder of a Lease
//!   (kube-controller-manager's `--leader-elect`).

pub mod apiserver_identity;
pub mod garbage_collector;
pub mod leader_election;
pub mod namespace;
pub mod service_account;
pub mod storage_version_migrator;
pub mod system_namespaces;
pub mod validating_admission_policy_status;

use crate::registry::Served;
use std::sync::Arc;

/// Wait until `store` has a change after `resource_version` (a watch from the watch cache),
/// at most 5 s — a controller then looks again, also to pick up a new snapshot; 1 s when the
/// watch cannot start.
pub(crate) async fn wait_for_change(store: &crate::registry::Store, resource_version: &str) {
    let opts = crate::registry::ListOptions {
        resource_version: resource_version.to_string(),
        ..Default::default()
    };
    match store.watch("", &opts).await {
        Ok(mut events) => {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), events.recv()).await;
        }
        Err(_) => tokio::time::sleep(std::time::Duration::from_secs(1)).await,
    }
}

/// Every controller, by its `--controllers` name.
pub const ALL: [&str; 6] = [
    "garbagecollector",
    "namespace",
    service_account::NAME,
    storage_version_migrator::NAME,
    "system-namespaces",
    validating_admission_policy_status::NAME,
];

/// Whether `name` is enabled by the `--controllers` list (kube-controller-manager's
/// `IsControllerEnabled`: the first `name` or `-name` decides; otherwise `*` enables every
/// controller, none of which is off by default here).
pub fn enabled(list: &[String], name: &str) -> bool {
    let mut star = false;
    for item in list {
        if item == name {
            return true;
        }
        if item.strip_prefix('-') == Some(name) {
            return false;
        }
        star |= item == "*";
    }
    star
}

/// How the controllers run: which ones (`--controllers`) and whether they are elected
/// (`--leader-elect`, with its timing and this server's identity).
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// `--controllers`.
    pub list: Vec<String>,
    /// `Some`: run the elected controllers only while holding their lease.
    pub leader_election: Option<leader_election::LeaderElectionConfig>,
    /// The admission chain the garbage collector's deletes go through (as kube's go through
    /// the API).
    pub admission: crate::admission::Chain,
}

/// Start the enabled controllers. The system namespaces are ensured by every server (as each
/// kube-apiserver does); the namespace controller, the garbage collector, the ServiceAccounts
/// controller and the ValidatingAdmissionPolicy status controller run on one server per store, the one holding the lease, unless leader election is off.
pub fn start(served: Arc<Served>, opts: &ControllerOptions) {
    if enabled(&opts.list, "system-namespaces") {
        system_namespaces::start(served.clone());
    }
    let list = opts.list.clone();
    let admission = opts.admission.clone();
    let elected = {
        let served = served.clone();
        move || {
            let mut tasks = Vec::new();
            if enabled(&list, "garbagecollector") {
                tasks.extend(garbage_collector::start(served.clone(), admission.clone()));
            }
            if enabled(&list, "namespace") {
                tasks.push(namespace::start(served.clone()));
            }
            if enabled(&list, service_account::NAME) {
                tasks.push(service_account::start(served.clone()));
            }
            if enabled(&list, validating_admission_policy_status::NAME) {
                tasks.push(validating_admission_policy_status::start(served.clone()));
            }
            if enabled(&list, storage_version_migrator::NAME) {
                tasks.push(storage_version_migrator::start(served.clone()));
            }
            tasks
        }
    };
    if ![
        "garbagecollector",
        "namespace",
        service_account::NAME,
        validating_admission_policy_status::NAME,
        storage_version_migrator::NAME,
    ]
    .iter()
    .any(|c| enabled(&opts.list, c))
    {
        return;
    }
    match &opts.leader_election {
        Some(config) => leader_election::run(served, config.clone(), Box::new(elected)),
        None => {
            elected();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controllers_flag() {
        let l = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(enabled(&l(&["*"]), "namespace"));
        assert!(!enabled(&l(&["*", "-namespace"]), "namespace"));
        assert!(enabled(&l(&["namespace"]), "namespace"));
        assert!(!enabled(&l(&[]), "namespace"));
        // The first explicit word decides, wherever `*` is.
        assert!(!enabled(&l(&["-namespace", "*"]), "namespace"));
        assert!(enabled(&l(&["namespace", "-namespace"]), "namespace"));
    }
}

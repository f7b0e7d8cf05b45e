//! The controllers kube-controller-manager (and kube-apiserver's own bootstrap controllers)
//! run, here inside the server process, over the registry — so delete hooks, finalizers and
//! the watch cache apply as for any client. `--controllers` chooses them (`*` all, `-name` off,
//! as kube-controller-manager's flag).
//!
//! - `system_namespaces.rs`: `default`, `kube-system`, `kube-public`, `kube-node-lease`
//!   exist (`pkg/controlplane/controller/systemnamespaces`, the `kubernetes` service
//!   controller for `default`).
//! - `namespace.rs`: the namespace controller (`pkg/controller/namespace`).
//! - `garbage_collector.rs`: the garbage collector (`pkg/controller/garbagecollector`):
//!   dependents deleted or orphaned after their owners, from `ownerReferences`.

pub mod garbage_collector;
pub mod namespace;
pub mod system_namespaces;

use crate::registry::Served;
use std::sync::Arc;

/// Every controller, by its `--controllers` name.
pub const ALL: [&str; 3] = ["garbagecollector", "namespace", "system-namespaces"];

/// Whether `name` is enabled by the `--controllers` list (kube-controller-manager's rules:
/// `*` enables the defaults, `foo` enables, `-foo` disables; the last word wins).
pub fn enabled(list: &[String], name: &str) -> bool {
    let mut on = false;
    for item in list {
        if item == "*" || item == name {
            on = true;
        } else if item.strip_prefix('-') == Some(name) {
            on = false;
        }
    }
    on
}

/// Start the enabled controllers.
pub fn start(served: Arc<Served>, list: &[String]) {
    if enabled(list, "system-namespaces") {
        system_namespaces::start(served.clone());
    }
    if enabled(list, "garbagecollector") {
        garbage_collector::start(served.clone());
    }
    if enabled(list, "namespace") {
        namespace::start(served);
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
    }
}

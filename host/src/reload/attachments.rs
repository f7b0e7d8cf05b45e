//! Strategy plugins attached to CustomResourceDefinitions: a `StrategyPlugin` whose
//! `spec.extends` names a CRD does not serve a resource of its own; its hooks run around the
//! CRD's ([`AttachedStrategy`] gives the order). The plugin must describe the CRD's resource
//! (group, plural, kind, scope); deleting the object detaches it and the CRD serves alone again
//! over the same stored objects.

use super::strategyplugins::{PluginState, PluginStatus};
use crate::plugin::WasmStrategy;
use crate::strategy::attached::AttachedStrategy;
use crate::strategy::{ResourceDescription, Strategy};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// An attached plugin's status as this server serves it: `Failed` with the reason while
/// `detached` says why it serves nothing (its CRD is not served, or no longer matches it;
/// the `sha256` stays the version that serves again once the CRD does), else `status`.
pub fn status_while(status: &PluginStatus, detached: &Option<String>) -> PluginStatus {
    let mut st = status.clone();
    if let (Some(why), PluginState::Active) = (detached, &st.state) {
        st.state = PluginState::Failed;
        st.last_error = Some(format!("not attached: {why}"));
    }
    st
}

/// Why a plugin describing `plugin` may not attach to the CRD named `crd_name`, which serves
/// `crd` (`None`: not served now). Errors: the text for the plugin's status.
pub fn check(
    crd_name: &str,
    plugin: &ResourceDescription,
    crd: Option<&ResourceDescription>,
) -> Result<(), String> {
    let gr = plugin.group_resource();
    if format!("{}.{}", plugin.plural, plugin.group) != crd_name {
        return Err(format!(
            "it serves {gr}, not the resource of the CustomResourceDefinition {crd_name:?} it extends"
        ));
    }
    let Some(crd) = crd else {
        return Err(format!(
            "the CustomResourceDefinition {crd_name:?} it extends is not served (create it, or wait until it is Established)"
        ));
    };
    let scope = |d: &ResourceDescription| {
        if d.namespaced {
            "namespaced"
        } else {
            "cluster-scoped"
        }
    };
    if plugin.kind != crd.kind || plugin.namespaced != crd.namespaced {
        return Err(format!(
            "it describes {} ({}), the CustomResourceDefinition {crd_name:?} serves {} ({})",
            plugin.kind,
            scope(plugin),
            crd.kind,
            scope(crd)
        ));
    }
    // The hooks see the storage version, and a converting plugin must know every version.
    let versions = |d: &ResourceDescription| {
        let mut names: Vec<String> = d.versions.iter().map(|v| v.name.clone()).collect();
        if names.is_empty() {
            names.push(d.version.clone());
        }
        names.sort();
        (d.version.clone(), names)
    };
    let (p, c) = (versions(plugin), versions(crd));
    if p != c {
        return Err(format!(
            "it describes versions {:?} stored in {}, the CustomResourceDefinition {crd_name:?} has {:?} stored in {}",
            p.1, p.0, c.1, c.0
        ));
    }
    Ok(())
}

/// The attached strategies built so far, by CRD name: the same strategy (the same `Arc`) as
/// long as neither the CRD's configuration nor the plugin changes, so that the published
/// snapshot keeps its Stores ([`crate::registry::ResourceMap::reuse`]).
#[derive(Default)]
pub struct Attachments {
    built: Mutex<BTreeMap<String, Built>>,
}

struct Built {
    crd: Arc<WasmStrategy>,
    plugin: Arc<WasmStrategy>,
    strategy: Arc<dyn Strategy>,
}

impl Attachments {
    /// The strategy serving the CRD `name`: `crd` alone, or with `plugin` attached.
    pub fn strategy(
        &self,
        name: &str,
        crd: &Arc<WasmStrategy>,
        plugin: Option<&Arc<WasmStrategy>>,
    ) -> Arc<dyn Strategy> {
        let mut built = self.built.lock().unwrap();
        let Some(plugin) = plugin else {
            built.remove(name);
            return crd.clone();
        };
        if let Some(b) = built.get(name) {
            if Arc::ptr_eq(&b.crd, crd) && Arc::ptr_eq(&b.plugin, plugin) {
                return b.strategy.clone();
            }
        }
        let strategy: Arc<dyn Strategy> =
            Arc::new(AttachedStrategy::new(crd.clone(), plugin.clone()));
        built.insert(
            name.to_string(),
            Built {
                crd: crd.clone(),
                plugin: plugin.clone(),
                strategy: strategy.clone(),
            },
        );
        strategy
    }

    /// Forget the CRDs not in `served` (deleted, or no longer served).
    pub fn retain(&self, served: &[&str]) {
        self.built
            .lock()
            .unwrap()
            .retain(|name, _| served.contains(&name.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_attaches_only_to_the_crd_of_its_resource() {
        let d = ResourceDescription::new("example.dev", "v1", "Widget", "widgets");
        assert_eq!(check("widgets.example.dev", &d, Some(&d)), Ok(()));
        assert_eq!(
            check("gadgets.example.dev", &d, Some(&d)),
            Err("it serves widgets.example.dev, not the resource of the CustomResourceDefinition \"gadgets.example.dev\" it extends".into())
        );
        assert!(check("widgets.example.dev", &d, None)
            .unwrap_err()
            .contains("is not served"));
        let mut other = d.clone();
        other.kind = "Gizmo".into();
        assert_eq!(
            check("widgets.example.dev", &d, Some(&other)),
            Err("it describes Widget (namespaced), the CustomResourceDefinition \"widgets.example.dev\" serves Gizmo (namespaced)".into())
        );
        let other = ResourceDescription::new("example.dev", "v2", "Widget", "widgets");
        assert_eq!(
            check("widgets.example.dev", &d, Some(&other)),
            Err("it describes versions [\"v1\"] stored in v1, the CustomResourceDefinition \"widgets.example.dev\" has [\"v2\"] stored in v2".into())
        );
    }
}

//! The host-side strategies of `validatingadmissionpolicies`,
//! `validatingadmissionpolicybindings`, `mutatingadmissionpolicies`,
//! `mutatingadmissionpolicybindings`, `validatingwebhookconfigurations` and
//! `mutatingwebhookconfigurations.admissionregistration.k8s.io/v1`, as kube's
//! (`k8s.io/kubernetes/pkg/registry/admissionregistration/{validatingadmissionpolicy,
//! validatingadmissionpolicybinding,mutatingadmissionpolicy,mutatingadmissionpolicybinding,
//! validatingwebhookconfiguration,mutatingwebhookconfiguration}/strategy.go`):
//! cluster-scoped; a validating policy's status (its type checking) is written through its
//! status subresource; a policy's `generation` counts spec changes, a webhook configuration's
//! changes of its `webhooks`; a binding has neither, nor has a mutating policy or a webhook
//! configuration a status. Their validation is [`super::compiled`]'s,
//! [`super::mutating::compiled`]'s and [`crate::admission::webhook::configuration`]'s. Each Store runs
//! an [`AfterWrite`] hook that hands the written object to the [`PolicySource`], so a policy
//! is enforced on this server before its create returns.

use super::compiled::{validate_binding, validate_policy};
use super::mutating::compiled::{validate_mutating_binding, validate_mutating_policy};
use super::source::{Kind, PolicySource};
use crate::admission::webhook::configuration::{self as webhooks, validate_configuration};
use crate::registry::after_write::AfterWrite;
use crate::registry::Store;
use crate::strategy::{
    with_status_of, Attributes, FieldError, PrinterColumn, ResourceDescription, Strategy,
    StrategyResult,
};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_apiserver_apimachinery::meta::{accessor, accessor_mut};
use wasm_apiserver_storage::factory::StorageFactory;

/// The group of admission policies.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// The strategy of one of the two kinds.
pub struct PolicyStrategy {
    kind: Kind,
    description: ResourceDescription,
}

impl PolicyStrategy {
    /// kube's resource for `kind`: category `api-extensions`, kube's columns.
    pub fn new(kind: Kind) -> PolicyStrategy {
        let (k, plural) = match kind {
            Kind::Policy => ("ValidatingAdmissionPolicy", "validatingadmissionpolicies"),
            Kind::Binding => (
                "ValidatingAdmissionPolicyBinding",
                "validatingadmissionpolicybindings",
            ),
            Kind::MutatingPolicy => ("MutatingAdmissionPolicy", "mutatingadmissionpolicies"),
            Kind::MutatingBinding => (
                "MutatingAdmissionPolicyBinding",
                "mutatingadmissionpolicybindings",
            ),
            Kind::ValidatingWebhooks => (
                "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations",
            ),
            Kind::MutatingWebhooks => (
                "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations",
            ),
        };
        let mut d = ResourceDescription::new(GROUP, "v1", k, plural);
        d.namespaced = false;
        d.categories = vec!["api-extensions".into()];
        d.printer_columns = vec![PrinterColumn::name()];
        if is_webhooks(kind) {
            // kube's printer (`printValidatingWebhook`): NAME, WEBHOOKS, AGE.
            d.printer_columns
                .push(PrinterColumn::new("Webhooks", "integer", ""));
            d.printer_columns.push(PrinterColumn::age());
        }
        if kind == Kind::Policy {
            d.subresources = vec!["status".into()];
        }
        // The object's own rules are `compiled`'s; its schema is kept open but for kube's
        // one merged list, a policy's `matchConditions` (`+listType=map`, `+patchMergeKey=name`
        // in k8s.io/api/admissionregistration/v1/types.go), which strategic merge patches and
        // server-side apply merge by name; the other lists are atomic.
        d.openapi_schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        if matches!(kind, Kind::Policy | Kind::MutatingPolicy) {
            d.openapi_schema["properties"] = json!({"spec": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"matchConditions": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge",
                    "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}}}}}}});
        }
        if is_webhooks(kind) {
            // `webhooks` (`+listType=map`, `+listMapKey=name`, `patchMergeKey=name`) and each
            // webhook's `matchConditions` merge by name.
            let by_name = |items: Value| {
                json!({"type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge",
                    "items": items})
            };
            let condition = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "required": ["name"], "properties": {"name": {"type": "string"}}});
            let webhook = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "required": ["name"], "properties": {"name": {"type": "string"},
                    "matchConditions": by_name(condition)}});
            d.openapi_schema["properties"] = json!({"webhooks": by_name(webhook)});
        }
        PolicyStrategy {
            kind,
            description: d,
        }
    }

    fn errors(&self, obj: &Value) -> Vec<FieldError> {
        match self.kind {
            Kind::Policy => validate_policy(obj),
            Kind::Binding => validate_binding(obj),
            Kind::MutatingPolicy => validate_mutating_policy(obj),
            Kind::MutatingBinding => validate_mutating_binding(obj),
            Kind::ValidatingWebhooks => validate_configuration(obj, false),
            Kind::MutatingWebhooks => validate_configuration(obj, true),
        }
    }
}

/// `SetDefaults_ValidatingAdmissionPolicySpec`, `SetDefaults_MutatingAdmissionPolicySpec` and
/// their bindings' (`pkg/apis/admissionregistration/v1/defaults.go`): `failurePolicy: Fail`,
/// `matchPolicy: Equivalent`, empty namespace and object selectors, each rule's `scope: "*"`
/// (a mutating policy's `reinvocationPolicy` has no default: it is required).
fn set_defaults(obj: &mut Value, kind: Kind) {
    if is_webhooks(kind) {
        return webhooks::set_defaults(obj, kind == Kind::MutatingWebhooks);
    }
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let policy = matches!(kind, Kind::Policy | Kind::MutatingPolicy);
    if policy && spec.get("failurePolicy").is_none_or(Value::is_null) {
        spec.insert("failurePolicy".into(), json!("Fail"));
    }
    let key = if policy {
        "matchConstraints"
    } else {
        "matchResources"
    };
    if let Some(m) = spec.get_mut(key).and_then(Value::as_object_mut) {
        m.entry("matchPolicy")
            .or_insert_with(|| json!("Equivalent"));
        m.entry("namespaceSelector").or_insert_with(|| json!({}));
        m.entry("objectSelector").or_insert_with(|| json!({}));
        for rules in ["resourceRules", "excludeResourceRules"] {
            for r in m
                .get_mut(rules)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(r) = r.as_object_mut() {
                    r.entry("scope").or_insert_with(|| json!("*"));
                }
            }
        }
    }
}

impl Strategy for PolicyStrategy {
    fn name(&self) -> &str {
        "wasm-apiserver"
    }
    fn description(&self) -> &ResourceDescription {
        &self.description
    }
    fn allow_create_on_update(&self) -> bool {
        false
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, obj: &Value) -> StrategyResult<Value> {
        let mut obj = obj.clone();
        if let Some(m) = obj.as_object_mut() {
            m.remove("status");
        }
        set_defaults(&mut obj, self.kind);
        accessor_mut(&mut obj).set("generation", 1);
        Ok(obj)
    }
    fn validate(&self, obj: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(self.errors(obj))
    }
    fn warnings_on_create(&self, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn canonicalize(&self, obj: &Value) -> StrategyResult<Value> {
        Ok(obj.clone())
    }
    fn prepare_for_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut new = new.clone();
        with_status_of(&mut new, old);
        set_defaults(&mut new, self.kind);
        let generation = accessor(old).generation().unwrap_or(1);
        if self.kind != Kind::Policy {
            // No status subresource: an update may not write one either.
            if let Some(m) = new.as_object_mut() {
                m.remove("status");
            }
        }
        let field = if is_webhooks(self.kind) {
            "webhooks"
        } else {
            "spec"
        };
        let changed = new.get(field) != old.get(field);
        accessor_mut(&mut new).set("generation", generation + i64::from(changed));
        Ok(new)
    }
    fn validate_update(&self, new: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(self.errors(new))
    }
    fn warnings_on_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn prepare_for_status_update(&self, new: &Value, old: &Value) -> StrategyResult<Value> {
        let mut out = old.clone();
        with_status_of(&mut out, new);
        Ok(out)
    }
    fn validate_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn warnings_on_status_update(&self, _: &Value, _: &Value) -> StrategyResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn check_graceful_delete(&self, _: &Value, _: Option<i64>) -> StrategyResult<Option<i64>> {
        Ok(None)
    }
    fn validate_delete(&self, _: &Value) -> StrategyResult<Vec<FieldError>> {
        Ok(Vec::new())
    }
    fn printer_cells(&self, obj: &Value) -> StrategyResult<Vec<Value>> {
        if !is_webhooks(self.kind) {
            return Ok(Vec::new());
        }
        let n = obj["webhooks"].as_array().map_or(0, Vec::len);
        Ok(vec![json!(n)])
    }
    fn get_attrs(&self, obj: &Value) -> StrategyResult<Attributes> {
        Ok(Attributes::labels_only(obj))
    }
}

/// Whether `kind` is one of the two webhook configurations.
fn is_webhooks(kind: Kind) -> bool {
    matches!(kind, Kind::ValidatingWebhooks | Kind::MutatingWebhooks)
}

/// Hands each written policy or binding to the source.
struct Observe {
    source: Arc<PolicySource>,
    kind: Kind,
}

impl AfterWrite for Observe {
    fn after_write<'a>(&'a self, stored: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move { self.source.observe(self.kind, stored) })
    }
}

/// The six resources' Stores over `factory`'s storage (in [`Kind::ALL`]'s order), each
/// telling `source` what it wrote.
pub fn stores(factory: &StorageFactory, source: &Arc<PolicySource>) -> Vec<Store> {
    Kind::ALL
        .into_iter()
        .map(|kind| {
            let strategy = Arc::new(PolicyStrategy::new(kind));
            let d = strategy.description().clone();
            let storage = factory.storage_for(&d.group, &d.plural, &d.api_version(), &d.kind);
            let mut store = Store::new(strategy, storage);
            store.after_write = Some(Arc::new(Observe {
                source: source.clone(),
                kind,
            }));
            store
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_apimachinery::strategic_merge_patch::strategic_merge;

    #[test]
    fn match_conditions_merge_by_name_other_lists_are_replaced() {
        let d = PolicyStrategy::new(Kind::Policy).description;
        let current = json!({"spec": {
            "matchConditions": [{"name": "a", "expression": "true"}, {"name": "b", "expression": "true"}],
            "validations": [{"expression": "x"}, {"expression": "y"}]}});
        let patch = json!({"spec": {
            "matchConditions": [{"name": "b", "expression": "false"}],
            "validations": [{"expression": "z"}]}});
        let merged = strategic_merge(&current, &patch, &d.openapi_schema).unwrap();
        assert_eq!(
            merged["spec"]["matchConditions"],
            json!([{"name": "a", "expression": "true"}, {"name": "b", "expression": "false"}])
        );
        assert_eq!(merged["spec"]["validations"], json!([{"expression": "z"}]));
    }
}

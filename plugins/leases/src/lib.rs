//! `leases` (`coordination.k8s.io/v1` `Lease`, namespaced): the standard strategy plugin, a
//! port of kube-apiserver's
//! - `pkg/registry/coordination/lease/strategy.go` (`AllowCreateOnUpdate` true,
//!   `AllowUnconditionalUpdate` false, no status subresource, no generation; `strategy` and
//!   `preferredHolder` dropped while the `CoordinatedLeaderElection` gate is off, as it is by
//!   default in 1.33, unless the stored object already has them);
//! - `pkg/apis/coordination/validation/validation.go` (`ValidateLease`, `ValidateLeaseSpec`,
//!   `ValidateCoordinatedLeaseStrategy`);
//! - `pkg/printers/internalversion/printers.go` (`printLease`: NAME, HOLDER, AGE).
//!
//! Leases are what leader election is made of: the server's own controllers hold one
//! (`kube-system/wasm-apiserver-controllers`), as kube-controller-manager does.

use wasm_apiserver_sdk::k8s_openapi::api::coordination::v1::Lease;
use wasm_apiserver_sdk::prelude::*;
use wasm_apiserver_sdk::validation::NameRule;

/// The strategies `ValidateCoordinatedLeaseStrategy` accepts without a domain prefix.
const VALID_LEASE_STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// The strategy of `leases`.
pub struct Leases;

impl Strategy for Leases {
    type Object = Lease;

    /// Leases have no `metadata.generation` in kube-apiserver.
    const TRACKS_GENERATION: bool = false;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            subresources: vec![],
            printer_columns: vec![
                PrinterColumn::name(),
                PrinterColumn::computed("Holder", "string").describe(HOLDER_DESCRIPTION),
                PrinterColumn::age(),
            ],
            openapi_schema: schema(),
            example: Some(json!({
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "example", "namespace": "default"},
                "spec": {"holderIdentity": "server-a", "leaseDurationSeconds": 15}
            })),
            ..ResourceDescription::new("coordination.k8s.io", "v1", "Lease", "leases")
        }
    }

    /// `PrepareForCreate`: the gated fields go.
    fn prepare_for_create(lease: &mut Lease) {
        if let Some(spec) = lease.spec.as_mut() {
            spec.strategy = None;
            spec.preferred_holder = None;
        }
    }

    /// `PrepareForUpdate`: the gated fields go unless the stored lease has them.
    fn prepare_for_update(new: &mut Lease, old: &Lease) {
        let old_spec = old.spec.as_ref();
        if let Some(spec) = new.spec.as_mut() {
            if old_spec.is_none_or(|s| s.strategy.is_none()) {
                spec.strategy = None;
            }
            if old_spec.is_none_or(|s| s.preferred_holder.is_none()) {
                spec.preferred_holder = None;
            }
        }
    }

    /// `ValidateLease`.
    fn validate(lease: &Lease) -> ErrorList {
        validate_lease(lease)
    }

    /// `AllowCreateOnUpdate`: true (leader election creates its lease with a PUT).
    fn allow_create_on_update() -> bool {
        true
    }

    /// `AllowUnconditionalUpdate`: false.
    fn allow_unconditional_update() -> bool {
        false
    }

    /// `ValidateLeaseUpdate`: the same rules on the new object.
    fn validate_update(new: &Lease, _old: &Lease) -> ErrorList {
        validate_lease(new)
    }

    /// `printLease`: HOLDER is `spec.holderIdentity`, empty when unset.
    fn printer_cells(lease: &Lease) -> Vec<Value> {
        let holder = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.clone())
            .unwrap_or_default();
        vec![json!(holder)]
    }
}

export_strategy!(Leases);

/// `ValidateLease`: the name is a DNS-1123 subdomain, then `ValidateLeaseSpec`:
/// `leaseDurationSeconds` > 0, `leaseTransitions` ≥ 0, a `strategy` Kubernetes defines or a
/// qualified name, `preferredHolder` only with a `strategy`.
pub fn validate_lease(lease: &Lease) -> ErrorList {
    let mut errs = validation::validate_name(
        lease.metadata.name.as_deref().unwrap_or_default(),
        NameRule::Dns1123Subdomain,
        &Path::new("metadata").child("name"),
    );
    let Some(spec) = lease.spec.as_ref() else {
        return errs;
    };
    let path = Path::new("spec");
    if let Some(d) = spec.lease_duration_seconds.filter(|d| *d <= 0) {
        errs.push(field::invalid(
            &path.child("leaseDurationSeconds"),
            d,
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec.lease_transitions.filter(|t| *t < 0) {
        errs.push(field::invalid(
            &path.child("leaseTransitions"),
            t,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(strategy) = &spec.strategy {
        // kube passes `spec.strategy` to ValidateCoordinatedLeaseStrategy, which adds
        // `strategy` again: its errors are at `spec.strategy.strategy`.
        let p = path.child("strategy").child("strategy");
        if !strategy.contains('/') {
            if !VALID_LEASE_STRATEGIES.contains(&strategy.as_str()) {
                errs.push(field::not_supported(&p, strategy, VALID_LEASE_STRATEGIES));
            }
        } else {
            for msg in validation::is_qualified_name(strategy) {
                errs.push(field::invalid(&p, strategy, msg));
            }
        }
    }
    if spec
        .preferred_holder
        .as_deref()
        .is_some_and(|h| !h.is_empty())
        && spec.strategy.as_deref().unwrap_or("").is_empty()
    {
        errs.push(field::forbidden(
            &path.child("preferredHolder"),
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}

/// `coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]`, the HOLDER column's.
const HOLDER_DESCRIPTION: &str = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.";

/// The OpenAPI v3 schema of `io.k8s.api.coordination.v1.Lease` (descriptions from
/// staging/src/k8s.io/api/coordination/v1/types.go).
fn schema() -> Value {
    json!({
        "type": "object",
        "description": "Lease defines a lease concept.",
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object", "description": "Standard object's metadata."},
            "spec": {
                "type": "object",
                "description": "spec contains the specification of the Lease.",
                "properties": {
                    "holderIdentity": {"type": "string", "description": HOLDER_DESCRIPTION},
                    "leaseDurationSeconds": {"type": "integer", "format": "int32", "description": "leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime."},
                    "acquireTime": {"type": "string", "format": "date-time", "description": "acquireTime is a time when the current lease was acquired."},
                    "renewTime": {"type": "string", "format": "date-time", "description": "renewTime is a time when the current holder of a lease has last updated the lease."},
                    "leaseTransitions": {"type": "integer", "format": "int32", "description": "leaseTransitions is the number of transitions of a lease between holders."},
                    "strategy": {"type": "string", "description": "Strategy indicates the strategy for picking the leader for coordinated leader election. If the field is not specified, there is no active coordination for this lease. (Alpha) Using this field requires the CoordinatedLeaderElection feature gate to be enabled."},
                    "preferredHolder": {"type": "string", "description": "PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up. This field can only be set if Strategy is also set."}
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_apiserver_sdk::testing;

    fn lease(spec: Value) -> Value {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "l", "namespace": "kube-system"}, "spec": spec})
    }

    #[test]
    fn describe_matches_kube_apiserver() {
        let d = Leases::describe();
        assert_eq!(d.api_version(), "coordination.k8s.io/v1");
        assert_eq!((d.kind.as_str(), d.plural.as_str()), ("Lease", "leases"));
        assert!(d.namespaced && d.subresources.is_empty() && d.short_names.is_empty());
        let cols: Vec<&str> = d.printer_columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(cols, vec!["Name", "Holder", "Age"]);
        assert!(Leases::allow_create_on_update());
        assert!(!Leases::allow_unconditional_update());
    }

    #[test]
    fn example_is_valid() {
        let out = testing::create::<Leases>(Leases::describe().example.unwrap());
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert!(out.object["metadata"].get("generation").is_none());
    }

    #[test]
    fn gated_fields_are_dropped_on_create() {
        let out = testing::create::<Leases>(lease(json!({
            "holderIdentity": "a", "strategy": "OldestEmulationVersion", "preferredHolder": "b"
        })));
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.object["spec"], json!({"holderIdentity": "a"}));
    }

    #[test]
    fn printer_shows_the_holder() {
        let l: Lease = serde_json::from_value(lease(json!({"holderIdentity": "a"}))).unwrap();
        assert_eq!(Leases::printer_cells(&l), vec![json!("a")]);
        let l: Lease = serde_json::from_value(lease(json!({}))).unwrap();
        assert_eq!(Leases::printer_cells(&l), vec![json!("")]);
    }

    #[test]
    fn fixtures() {
        wasm_apiserver_sdk::testing::run_fixtures::<Leases>(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures"
        ));
    }
}

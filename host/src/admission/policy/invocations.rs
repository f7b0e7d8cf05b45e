//! Which policies and bindings apply to a request, with their params: kube's generic policy
//! dispatcher (`k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go`
//! `Dispatch`), shared by the validating and the mutating member. For each policy (by name)
//! whose `matchConstraints` match, each of its bindings whose `matchResources` match, with the
//! params of its `paramRef` ([`super::params::collect`]); what cannot be decided (a selector
//! that does not parse, a missing namespace, a param not found) is a configuration error of
//! the policy or binding, decided later by the policy's `failurePolicy`.

use super::compiled::{CompiledBinding, CompiledPolicy};
use super::matching::{MatchRequest, MatchResources};
use super::mutating::compiled::CompiledMutatingPolicy;
use super::params::{self, ParamKind, Params};
use crate::admission::interface::Attributes;
use std::sync::Arc;

/// What matching needs of a policy of either kind.
pub trait MatchedPolicy {
    /// `metadata.name`.
    fn name(&self) -> &str;
    /// `spec.matchConstraints`.
    fn match_constraints(&self) -> &MatchResources;
    /// `spec.paramKind`.
    fn param_kind(&self) -> Option<&ParamKind>;
}

impl MatchedPolicy for CompiledPolicy {
    fn name(&self) -> &str {
        &self.name
    }
    fn match_constraints(&self) -> &MatchResources {
        &self.match_constraints
    }
    fn param_kind(&self) -> Option<&ParamKind> {
        self.param_kind.as_ref()
    }
}

impl MatchedPolicy for CompiledMutatingPolicy {
    fn name(&self) -> &str {
        &self.name
    }
    fn match_constraints(&self) -> &MatchResources {
        &self.match_constraints
    }
    fn param_kind(&self) -> Option<&ParamKind> {
        self.param_kind.as_ref()
    }
}

/// A policy that matched, and the bindings that apply to the request (kube's
/// `PolicyInvocation`s of one policy).
pub struct Invocation<P> {
    pub policy: Arc<P>,
    /// The version it matched in (the request's or, for `Equivalent`, the storage version).
    pub version: String,
    /// The bindings that apply, with their params.
    pub bindings: Vec<(Arc<CompiledBinding>, Params)>,
    /// A configuration error (a selector, a missing namespace, a param): decided by
    /// `failurePolicy` for the policy (`None`) or the binding it names, whatever the
    /// binding's actions (kube's `addConfigError`).
    pub config_errors: Vec<(Option<String>, String)>,
}

/// The invocations of `policies` (with `bindings_of` each) for the request `a` as `request`
/// (its storage version `storage_version`); `namespace_error` replaces a selector's error when
/// the namespace could not be read.
pub async fn invocations<'p, P: MatchedPolicy + 'p>(
    policies: impl Iterator<Item = &'p Arc<P>>,
    bindings_of: impl Fn(&str) -> Vec<Arc<CompiledBinding>>,
    a: &Attributes<'_>,
    request: &MatchRequest<'_>,
    storage_version: &str,
    namespace_error: &Option<String>,
) -> Vec<Invocation<P>> {
    let config_error = |e: String| namespace_error.clone().unwrap_or(e);
    let mut matched = Vec::new();
    for policy in policies {
        let bindings = bindings_of(policy.name());
        if bindings.is_empty() {
            continue;
        }
        let version = match policy
            .match_constraints()
            .matches_equivalent(request, storage_version)
        {
            Ok(None) => continue,
            Ok(Some(v)) => v.to_string(),
            Err(e) => {
                matched.push(Invocation {
                    policy: policy.clone(),
                    version: String::new(),
                    bindings: Vec::new(),
                    config_errors: vec![(
                        None,
                        format!("failed to configure policy: {}", config_error(e)),
                    )],
                });
                continue;
            }
        };
        let mut m = Invocation {
            policy: policy.clone(),
            version,
            bindings: Vec::new(),
            config_errors: Vec::new(),
        };
        for binding in bindings {
            let matches = match &binding.error {
                Some(e) => Err(e.clone()),
                None => binding
                    .match_resources
                    .matches_equivalent(request, storage_version),
            };
            let collected = match matches {
                Ok(None) => continue,
                Ok(Some(_)) => {
                    params::collect(
                        policy.param_kind(),
                        binding.param_ref.as_ref(),
                        a.namespace,
                        a.resources,
                    )
                    .await
                }
                Err(e) => Err(config_error(e)),
            };
            match collected {
                Ok(params) => m.bindings.push((binding, params)),
                Err(e) => m.config_errors.push((
                    Some(binding.name.clone()),
                    format!("failed to configure binding: {e}"),
                )),
            }
        }
        matched.push(m);
    }
    matched
}

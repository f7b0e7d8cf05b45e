//! The admission chain (`k8s.io/apiserver/pkg/admission/chain.go` `chainAdmissionHandler`):
//! the members in order, built once at start ([`super::plugins::Plugins::chain`]); every
//! member that handles the operation runs its mutating stage in order — once more if a member
//! asks for it (`reinvocation.go`, [`super::reinvocation`]) —, then, after the strategy, its
//! validating stage in order; the first refusal is the answer.
//!
//! [`Chain::bind`] ties the chain to one request, as the
//! [`WriteAdmission`] the registry Store runs at kube's points; no handler calls a member.

use super::interface::{Admission, Attributes, Operation};
use super::reinvocation::ReinvocationContext;
use crate::authentication::UserInfo;
use crate::registry::{Snapshot, Store, WriteAdmission};
use crate::status::ApiResult;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The members, in order.
#[derive(Clone, Default)]
pub struct Chain {
    members: Arc<[Arc<dyn Admission>]>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Chain {
    /// A chain of `members`, run in this order.
    pub fn new(members: Vec<Arc<dyn Admission>>) -> Chain {
        Chain {
            members: members.into(),
        }
    }

    /// The members' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.members.iter().map(|m| m.name()).collect()
    }

    /// Every member's mutating stage that handles the operation, in order; all of them again
    /// when one asked for it (kube's `reinvoker.Admit`: at most one second run).
    pub async fn admit(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
    ) -> ApiResult<()> {
        for m in self.members.iter() {
            if m.handles(attributes.operation) {
                m.admit(attributes, object.as_deref_mut()).await?;
            }
        }
        let again = {
            let mut r = attributes.reinvocation.lock().unwrap();
            let again = r.should_reinvoke() && !r.is_reinvoke();
            if again {
                r.set_is_reinvoke();
            }
            again
        };
        if again {
            for m in self.members.iter() {
                if m.handles(attributes.operation) {
                    m.admit(attributes, object.as_deref_mut()).await?;
                }
            }
        }
        Ok(())
    }

    /// Every member's validating stage that handles the operation, in order.
    pub async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<()> {
        for m in self.members.iter() {
            if m.handles(attributes.operation) {
                m.validate(attributes, object).await?;
            }
        }
        Ok(())
    }

    /// The chain for one write request to `store` in `namespace`/`name` (`""` for a create)
    /// and `subresource` by `user`, with the request's `snapshot` (what members look up);
    /// `None` when the chain is empty.
    pub fn bind(&self, request: AdmissionRequest) -> Option<Arc<dyn WriteAdmission>> {
        if self.members.is_empty() {
            return None;
        }
        Some(Arc::new(Bound {
            chain: self.clone(),
            request,
            warnings: Default::default(),
        }))
    }
}

/// What admission knows of a write request besides its objects.
pub struct AdmissionRequest {
    /// The resource, in the request's version.
    pub store: Arc<Store>,
    /// The snapshot the request is served from.
    pub snapshot: Arc<Snapshot>,
    /// Namespace.
    pub namespace: String,
    /// Name from the URL (`""` for a create).
    pub name: String,
    /// `""` or `status`.
    pub subresource: String,
    /// Who asks.
    pub user: UserInfo,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The request's audit annotations, when it is audited.
    pub audit: Option<super::interface::AuditSink>,
}

/// A chain bound to one request.
struct Bound {
    chain: Chain,
    request: AdmissionRequest,
    /// What members asked to warn of.
    warnings: std::sync::Mutex<Vec<String>>,
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.request;
        f.debug_struct("Admission")
            .field("chain", &self.chain)
            .field("resource", &r.store.gr)
            .field("namespace", &r.namespace)
            .field("name", &r.name)
            .field("user", &r.user.name)
            .finish()
    }
}

impl Bound {
    fn attributes<'a>(
        &'a self,
        operation: Operation,
        old: Option<&'a Value>,
        reinvocation: &'a Mutex<ReinvocationContext>,
    ) -> Attributes<'a> {
        let r = &self.request;
        Attributes {
            operation,
            store: &r.store,
            namespace: &r.namespace,
            name: &r.name,
            subresource: &r.subresource,
            old_object: old,
            user: &r.user,
            dry_run: r.dry_run,
            resources: &r.snapshot.resources,
            snapshot: &r.snapshot,
            audit: r.audit.as_ref(),
            warnings: &self.warnings,
            reinvocation,
        }
    }
}

/// The operation of a write: a create when there is no current object.
fn write_operation(old: Option<&Value>) -> Operation {
    if old.is_some() {
        Operation::Update
    } else {
        Operation::Create
    }
}

impl WriteAdmission for Bound {
    fn admit<'a>(
        &'a self,
        object: &'a mut Value,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            // A fresh state per pass: an update's retries run the stage again from the start.
            let reinvocation = Mutex::default();
            let a = self.attributes(write_operation(old), old, &reinvocation);
            self.chain.admit(&a, Some(object)).await
        })
    }

    fn validate<'a>(
        &'a self,
        object: &'a Value,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            let reinvocation = Mutex::default();
            let a = self.attributes(write_operation(old), old, &reinvocation);
            self.chain.validate(&a, Some(object)).await
        })
    }

    fn warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap())
    }

    fn admit_delete<'a>(&'a self, old: &'a Value) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            let reinvocation = Mutex::default();
            let a = self.attributes(Operation::Delete, Some(old), &reinvocation);
            self.chain.admit(&a, None).await?;
            self.chain.validate(&a, None).await
        })
    }
}

//! What an admission member is (`k8s.io/apiserver/pkg/admission/interfaces.go`): it
//! [`Admission::handles`] some operations, may change the object in the mutating stage
//! ([`Admission::admit`], kube's `MutationInterface`) and may refuse it in the validating
//! stage ([`Admission::validate`], `ValidationInterface`), given the request's
//! [`Attributes`]. Members see objects in the storage version (every hook does).

use crate::authentication::UserInfo;
use crate::registry::{ResourceMap, Store};
use crate::status::ApiResult;
use futures::future::BoxFuture;
use serde_json::Value;

/// The operation a request makes (`admission.Operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// POST, and an update or patch that creates.
    Create,
    /// PUT and PATCH of an existing object (and their `/status`).
    Update,
    /// DELETE.
    Delete,
    /// Connect subresources (exec, attach, proxy): none is served yet.
    Connect,
}

impl Operation {
    /// kube's name (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// A request as admission sees it (`admission.Attributes`): the operation, the resource (its
/// Store: group, version, kind, scope), namespace, name (empty for a create with
/// `generateName`), subresource, the current object of an update or delete, the user, dry run —
/// and the served resources of the request's snapshot, where members look up other objects
/// (as kube's read their informers).
#[derive(Clone, Copy)]
pub struct Attributes<'a> {
    /// What is done.
    pub operation: Operation,
    /// The resource, in the request's version.
    pub store: &'a Store,
    /// Namespace (`""` for cluster-scoped resources).
    pub namespace: &'a str,
    /// Object name from the URL (`""` for a create).
    pub name: &'a str,
    /// `""` or `status`.
    pub subresource: &'a str,
    /// The current object of an update or delete.
    pub old_object: Option<&'a Value>,
    /// Who asks.
    pub user: &'a UserInfo,
    /// `dryRun=All`: members must not have side effects.
    pub dry_run: bool,
    /// The served resources (the request's snapshot).
    pub resources: &'a ResourceMap,
    /// The request's snapshot (what a member that reads later, off the request's task, keeps).
    pub snapshot: &'a std::sync::Arc<crate::registry::Snapshot>,
    /// `Warning` headers members add for the answer ([`Attributes::warn`]).
    pub warnings: &'a std::sync::Mutex<Vec<String>>,
    /// The request's audit event's annotations ([`Attributes::annotate`]); `None` when the
    /// request is not audited.
    pub audit: Option<&'a AuditSink>,
    /// The mutating stage's reinvocation state (`GetReinvocationContext`), one per pass of
    /// the chain over the request.
    pub reinvocation: &'a std::sync::Mutex<super::reinvocation::ReinvocationContext>,
}

/// Adds `key: value` to the request's audit event (`audit.AddAuditAnnotation`; a key already
/// there keeps its first value).
pub type AuditSink = std::sync::Arc<dyn Fn(&str, String) + Send + Sync>;

impl Attributes<'_> {
    /// Add an annotation to the request's audit event (`audit.AddAuditAnnotation`).
    pub fn annotate(&self, key: &str, value: String) {
        if let Some(audit) = self.audit {
            audit(key, value);
        }
    }

    /// Add a `Warning: 299` header to the answer (kube's `warning.AddWarning`).
    /// A warning already added is not added again (an update's retries run the validating
    /// stage again; kube's recorder drops duplicates too).
    pub fn warn(&self, warning: String) {
        let mut w = self.warnings.lock().unwrap();
        if !w.contains(&warning) {
            w.push(warning);
        }
    }
}

/// A future of a member's answer.
pub type AdmissionFuture<'a> = BoxFuture<'a, ApiResult<()>>;

/// One admission member (`admission.Interface` with `MutationInterface` and
/// `ValidationInterface`; a member implements the stages it has). Errors are the request's
/// answer (a Status: 403 Forbidden, 404, 422 …).
pub trait Admission: Send + Sync {
    /// The member's name (`NamespaceLifecycle`, …), as `--enable-admission-plugins` names them.
    fn name(&self) -> &'static str;

    /// Whether the member runs for `operation` (`Handles`).
    fn handles(&self, operation: Operation) -> bool;

    /// The mutating stage: may change `object` (`None` for a delete). By default nothing.
    fn admit<'a>(
        &'a self,
        _attributes: &'a Attributes<'a>,
        _object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async { Ok(()) })
    }

    /// The validating stage, after the strategy: `object` as it will be written (`None` for a
    /// delete). By default nothing.
    fn validate<'a>(
        &'a self,
        _attributes: &'a Attributes<'a>,
        _object: Option<&'a Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}

/// Wait until `ready()` holds, at most [`READY_WAIT`]: a policy member's source is loaded
/// (kube's `WaitForReady` before a policy or webhook plugin handles a request). Errors: still
/// not ready — kube's `not yet ready to handle request`, a 403 for `a`'s object.
pub async fn wait_ready(a: &Attributes<'_>, name: &str, ready: impl Fn() -> bool) -> ApiResult<()> {
    let deadline = tokio::time::Instant::now() + READY_WAIT;
    while !ready() {
        if tokio::time::Instant::now() >= deadline {
            return Err(crate::status::ApiError::forbidden(
                &a.store.gr,
                name,
                "not yet ready to handle request",
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

/// How long a request waits for a policy member's source to be loaded.
pub const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

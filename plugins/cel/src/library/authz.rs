//! kube's authorization library (`k8s.io/apiserver/pkg/cel/library/authz.go`, with the
//! selectors of kube 1.31): an admission expression asks the server's authorizer about the
//! requesting user (or a service account) through the `authorizer` variable, which the caller
//! binds to its [`Authorizer`] ([`crate::Expression::evaluate_authorized`]).
//!
//! - `authorizer.path(<string>) <PathCheck>`, `authorizer.group(<string>) <GroupCheck>`,
//!   `authorizer.serviceAccount(<namespace>, <name>) <Authorizer>`;
//! - `<GroupCheck>.resource(<string>) <ResourceCheck>`; `<ResourceCheck>.subresource`,
//!   `.namespace`, `.name`, `.fieldSelector`, `.labelSelector` (`<string>`) `<ResourceCheck>`;
//! - `<PathCheck>.check(<verb>)`, `<ResourceCheck>.check(<verb>)` `<Decision>` (each costs
//!   350,000: two per expression within the per-call limit);
//! - `<Decision>.allowed() <bool>`, `.reason() <string>`, `.errored() <bool>`,
//!   `.error() <string>`.

use cel::common::types::{CelBool, CelString, Type};
use cel::{DeclarationError, Env};
use std::fmt;
use std::sync::Arc;

/// What one authorization check asks (kube's `authorizer.AttributesRecord`): a non-resource
/// `path`, or a resource by group, resource, subresource, namespace and name, with the
/// verb; for the request's user, or the service account `namespace/name` when set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Attributes {
    pub service_account: Option<(String, String)>,
    pub verb: String,
    pub path: Option<String>,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub field_selector: String,
    pub label_selector: String,
}

/// An authorizer's answer: allowed or not, why, and an error when it could not decide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
    pub error: Option<String>,
}

/// The server's authorizer as an expression sees it.
pub trait Authorizer: Send + Sync {
    /// Decide `attributes` for the request's user (or `attributes.service_account`).
    fn authorize(&self, attributes: &Attributes) -> Decision;
}

/// `kubernetes.authorization.Authorizer`.
pub static AUTHORIZER_TYPE: Type =
    Type::new_unspecified_type("kubernetes.authorization.Authorizer");
/// `kubernetes.authorization.PathCheck`.
pub static PATH_CHECK_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.PathCheck");
/// `kubernetes.authorization.GroupCheck`.
pub static GROUP_CHECK_TYPE: Type =
    Type::new_unspecified_type("kubernetes.authorization.GroupCheck");
/// `kubernetes.authorization.ResourceCheck`.
pub static RESOURCE_CHECK_TYPE: Type =
    Type::new_unspecified_type("kubernetes.authorization.ResourceCheck");
/// `kubernetes.authorization.Decision`.
pub static DECISION_TYPE: Type = Type::new_unspecified_type("kubernetes.authorization.Decision");

/// The `authorizer` variable's value.
#[derive(Clone)]
pub struct AuthorizerVal {
    authorizer: Arc<dyn Authorizer>,
    service_account: Option<(String, String)>,
}

impl AuthorizerVal {
    /// The value of `authorizer` for `authorizer`.
    pub fn new(authorizer: Arc<dyn Authorizer>) -> AuthorizerVal {
        AuthorizerVal {
            authorizer,
            service_account: None,
        }
    }
}

impl fmt::Debug for AuthorizerVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizerVal")
            .field("service_account", &self.service_account)
            .finish()
    }
}

/// A check being built: the attributes so far and who asks.
#[derive(Clone, Debug)]
pub struct CheckVal {
    authz: AuthorizerVal,
    attributes: Attributes,
}

/// `PathCheck`, `GroupCheck` and `ResourceCheck` are the same value under three types.
#[derive(Clone, Debug)]
pub struct PathCheckVal(CheckVal);
#[derive(Clone, Debug)]
pub struct GroupCheckVal(CheckVal);
#[derive(Clone, Debug)]
pub struct ResourceCheckVal(CheckVal);
/// A check's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionVal(pub Decision);

super::opaque_val!(
    AuthorizerVal,
    AUTHORIZER_TYPE,
    |a: &AuthorizerVal, b: &AuthorizerVal| {
        Arc::ptr_eq(&a.authorizer, &b.authorizer) && a.service_account == b.service_account
    }
);
super::opaque_val!(
    PathCheckVal,
    PATH_CHECK_TYPE,
    |a: &PathCheckVal, b: &PathCheckVal| a.0.attributes == b.0.attributes
);
super::opaque_val!(
    GroupCheckVal,
    GROUP_CHECK_TYPE,
    |a: &GroupCheckVal, b: &GroupCheckVal| a.0.attributes == b.0.attributes
);
super::opaque_val!(
    ResourceCheckVal,
    RESOURCE_CHECK_TYPE,
    |a: &ResourceCheckVal, b: &ResourceCheckVal| a.0.attributes == b.0.attributes
);
super::opaque_val!(DecisionVal, DECISION_TYPE);

/// Register the authorization library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    for t in [
        &AUTHORIZER_TYPE,
        &PATH_CHECK_TYPE,
        &GROUP_CHECK_TYPE,
        &RESOURCE_CHECK_TYPE,
        &DECISION_TYPE,
    ] {
        env.add_type(t.to_owned())?;
    }
    cel::add_member_overload!(env, fn path: (AuthorizerVal, CelString) -> PathCheckVal)?;
    cel::add_member_overload!(env, fn group: (AuthorizerVal, CelString) -> GroupCheckVal)?;
    cel::add_member_overload!(env, fn service_account:
        (AuthorizerVal, CelString, CelString) -> AuthorizerVal, name = "serviceAccount")?;
    cel::add_member_overload!(env, fn resource: (GroupCheckVal, CelString) -> ResourceCheckVal)?;
    cel::add_member_overload!(env, fn subresource:
        (ResourceCheckVal, CelString) -> ResourceCheckVal)?;
    cel::add_member_overload!(env, fn namespace:
        (ResourceCheckVal, CelString) -> ResourceCheckVal)?;
    cel::add_member_overload!(env, fn name: (ResourceCheckVal, CelString) -> ResourceCheckVal)?;
    cel::add_member_overload!(env, fn field_selector:
        (ResourceCheckVal, CelString) -> ResourceCheckVal, name = "fieldSelector")?;
    cel::add_member_overload!(env, fn label_selector:
        (ResourceCheckVal, CelString) -> ResourceCheckVal, name = "labelSelector")?;
    cel::add_member_overload!(env, fn check_path: (PathCheckVal, CelString) -> DecisionVal,
        name = "check")?;
    cel::add_member_overload!(env, fn check_resource:
        (ResourceCheckVal, CelString) -> DecisionVal, name = "check")?;
    cel::add_member_overload!(env, fn allowed: (DecisionVal) -> CelBool)?;
    cel::add_member_overload!(env, fn reason: (DecisionVal) -> CelString)?;
    cel::add_member_overload!(env, fn errored: (DecisionVal) -> CelBool)?;
    cel::add_member_overload!(env, fn error: (DecisionVal) -> CelString)?;
    Ok(())
}

fn check(a: &AuthorizerVal) -> CheckVal {
    CheckVal {
        authz: a.clone(),
        attributes: Attributes {
            service_account: a.service_account.clone(),
            ..Attributes::default()
        },
    }
}

fn path(a: &AuthorizerVal, p: &CelString<'_>) -> PathCheckVal {
    let mut c = check(a);
    c.attributes.path = Some(p.inner().to_string());
    PathCheckVal(c)
}

fn group(a: &AuthorizerVal, g: &CelString<'_>) -> GroupCheckVal {
    let mut c = check(a);
    c.attributes.group = g.inner().to_string();
    GroupCheckVal(c)
}

fn service_account(a: &AuthorizerVal, ns: &CelString<'_>, name: &CelString<'_>) -> AuthorizerVal {
    AuthorizerVal {
        authorizer: a.authorizer.clone(),
        service_account: Some((ns.inner().to_string(), name.inner().to_string())),
    }
}

fn resource(g: &GroupCheckVal, r: &CelString<'_>) -> ResourceCheckVal {
    let mut c = g.0.clone();
    c.attributes.resource = r.inner().to_string();
    ResourceCheckVal(c)
}

impl ResourceCheckVal {
    /// `authorizer.requestResource`: a check of the request's own resource (kube's
    /// `plugin/cel/compile.go` `RequestResourceAuthorizerVarName`), its verb still to be given
    /// to `check`.
    pub fn for_request(authorizer: AuthorizerVal, request: Attributes) -> ResourceCheckVal {
        ResourceCheckVal(CheckVal {
            authz: authorizer,
            attributes: request,
        })
    }
}

/// The resource check with one attribute set by `set`.
fn with(r: &ResourceCheckVal, set: impl FnOnce(&mut Attributes)) -> ResourceCheckVal {
    let mut c = r.0.clone();
    set(&mut c.attributes);
    ResourceCheckVal(c)
}

fn subresource(r: &ResourceCheckVal, s: &CelString<'_>) -> ResourceCheckVal {
    with(r, |a| a.subresource = s.inner().to_string())
}

fn namespace(r: &ResourceCheckVal, s: &CelString<'_>) -> ResourceCheckVal {
    with(r, |a| a.namespace = s.inner().to_string())
}

fn name(r: &ResourceCheckVal, s: &CelString<'_>) -> ResourceCheckVal {
    with(r, |a| a.name = s.inner().to_string())
}

fn field_selector(r: &ResourceCheckVal, s: &CelString<'_>) -> ResourceCheckVal {
    with(r, |a| a.field_selector = s.inner().to_string())
}

fn label_selector(r: &ResourceCheckVal, s: &CelString<'_>) -> ResourceCheckVal {
    with(r, |a| a.label_selector = s.inner().to_string())
}

fn decide(c: &CheckVal, verb: &CelString<'_>) -> DecisionVal {
    let mut attributes = c.attributes.clone();
    attributes.verb = verb.inner().to_string();
    DecisionVal(c.authz.authorizer.authorize(&attributes))
}

fn check_path(p: &PathCheckVal, verb: &CelString<'_>) -> DecisionVal {
    decide(&p.0, verb)
}

fn check_resource(r: &ResourceCheckVal, verb: &CelString<'_>) -> DecisionVal {
    decide(&r.0, verb)
}

fn allowed(d: &DecisionVal) -> CelBool {
    CelBool::from(d.0.allowed)
}

fn reason(d: &DecisionVal) -> CelString<'static> {
    CelString::from(d.0.reason.clone())
}

fn errored(d: &DecisionVal) -> CelBool {
    CelBool::from(d.0.error.is_some())
}

fn error(d: &DecisionVal) -> CelString<'static> {
    CelString::from(d.0.error.clone().unwrap_or_default())
}

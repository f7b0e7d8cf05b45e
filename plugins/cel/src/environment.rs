//! The variables each use of CEL declares, as kube declares them, and the result type each use
//! requires:
//!
//! - CRD validation rules (`apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go`):
//!   `self`, and `oldSelf` for a transition rule; a rule must give `bool`
//!   (`cel expression must evaluate to a bool`), a `messageExpression` `string`;
//! - admission policies (`k8s.io/apiserver/pkg/admission/plugin/cel/compile.go`): `object`,
//!   `oldObject`, `request` (`kubernetes.AdmissionRequest`), `params`, `namespaceObject`,
//!   `variables`; an expression must give its declared type (`must evaluate to bool`);
//! - structured authentication (`k8s.io/apiserver/pkg/authentication/cel/compile.go`):
//!   `claims` for claim mappings and validation rules, `user` for user validation rules.
//!
//! `authorizer` is the library's opaque authorizer ([`crate::library::authz`]), bound with
//! [`Expression::evaluate_authorized`]. `namespaceObject` is `dyn` here (kube types it as a
//! Namespace), which accepts what kube accepts and more.

use crate::types::{Field, ObjectType, Type};
use crate::{CompileError, Expression, Variables};
use std::sync::Arc;

fn object(name: &str, fields: Vec<(&str, Type)>) -> Type {
    let fields = fields
        .into_iter()
        .map(|(n, ty)| {
            let field = Field {
                ty,
                required: false,
            };
            (n.to_string(), field)
        })
        .collect();
    Type::Object(Arc::new(ObjectType {
        name: name.to_string(),
        fields,
    }))
}

/// The variables of a CRD validation rule on a value of type `self_type`; `oldSelf` too for
/// a transition rule.
pub fn crd_rule(self_type: Type, transition: bool) -> Variables {
    let vars = Variables::new().with("self", self_type.clone());
    if transition {
        vars.with("oldSelf", self_type)
    } else {
        vars
    }
}

/// `kubernetes.UserInfo`: `username`, `uid`, `groups`, `extra`.
pub fn user_info_type() -> Type {
    object(
        "kubernetes.UserInfo",
        vec![
            ("username", Type::STRING),
            ("uid", Type::STRING),
            ("groups", Type::list(Type::STRING)),
            ("extra", Type::map(Type::STRING, Type::list(Type::STRING))),
        ],
    )
}

/// `kubernetes.AdmissionRequest` (kube's `buildRequestType`).
pub fn request_type() -> Type {
    let gvk = || {
        object(
            "kubernetes.GroupVersionKind",
            vec![
                ("group", Type::STRING),
                ("version", Type::STRING),
                ("kind", Type::STRING),
            ],
        )
    };
    let gvr = || {
        object(
            "kubernetes.GroupVersionResource",
            vec![
                ("group", Type::STRING),
                ("version", Type::STRING),
                ("resource", Type::STRING),
            ],
        )
    };
    object(
        "kubernetes.AdmissionRequest",
        vec![
            ("kind", gvk()),
            ("resource", gvr()),
            ("subResource", Type::STRING),
            ("requestKind", gvk()),
            ("requestResource", gvr()),
            ("requestSubResource", Type::STRING),
            ("name", Type::STRING),
            ("namespace", Type::STRING),
            ("operation", Type::STRING),
            ("userInfo", user_info_type()),
            ("dryRun", Type::Bool),
            ("options", Type::Dyn),
        ],
    )
}

/// The variables of an admission policy's expressions: the objects as `dyn`, `request`, and
/// `variables` with the policy's composited variables by name and type.
pub fn admission(variables: &[(&str, Type)]) -> Variables {
    let composited = object(
        "kubernetes.variables",
        variables.iter().map(|(n, t)| (*n, t.clone())).collect(),
    );
    Variables::new()
        .with("object", Type::Dyn)
        .with("oldObject", Type::Dyn)
        .with("params", Type::Dyn)
        .with("namespaceObject", Type::Dyn)
        .with("request", request_type())
        .with("variables", composited)
        .with(
            "authorizer",
            Type::Opaque("kubernetes.authorization.Authorizer"),
        )
        .with(
            "authorizer.requestResource",
            Type::Opaque("kubernetes.authorization.ResourceCheck"),
        )
}

/// The variables of a claim mapping or claim validation rule: `claims`.
pub fn claims() -> Variables {
    Variables::new().with("claims", Type::map(Type::STRING, Type::Dyn))
}

/// The variables of a user validation rule: `user`.
pub fn user() -> Variables {
    Variables::new().with("user", user_info_type())
}

/// Require that `e` (compiled checked) gives `want` exactly — kube compares output types, so
/// `dyn` is not `bool` — else [`CompileError`] with `message` (kube's text for the use:
/// `cel expression must evaluate to a bool`, `must evaluate to string`, …).
pub fn expect_output(e: &Expression, want: &Type, message: &str) -> Result<(), CompileError> {
    match e.checked() {
        Some(c) if c.output == *want => Ok(()),
        _ => Err(CompileError(message.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_use_declares_kube_s_variables() {
        let rule =
            |src: &str, vars: &Variables| Expression::compile_checked(src, vars).map_err(|e| e.0);
        let admission = admission(&[("replicas", Type::Int)]);
        for ok in [
            "request.operation == 'CREATE' && request.userInfo.groups.exists(g, g == 'a')",
            "object.spec.replicas <= variables.replicas",
            "request.kind.kind == 'Deployment' && has(request.dryRun)",
        ] {
            rule(ok, &admission).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        rule(
            "authorizer.group('').resource('x').check('get').allowed()",
            &admission,
        )
        .unwrap();
        let e = rule("authorizer.resource('x')", &admission);
        assert!(e
            .err()
            .unwrap()
            .contains("found no matching overload for 'resource'"));
        rule("claims.sub + ':' + claims.email", &claims()).unwrap();
        rule("user.username.startsWith('system:')", &user()).unwrap();
        assert!(rule("self == oldSelf", &crd_rule(Type::Int, false)).is_err());
        rule("self == oldSelf", &crd_rule(Type::Int, true)).unwrap();
    }

    #[test]
    fn a_use_requires_its_result_type() {
        let vars = admission(&[]);
        let want = "must evaluate to bool";
        let e = Expression::compile_checked("object.spec.enabled", &vars).unwrap();
        assert_eq!(
            expect_output(&e, &Type::Bool, want),
            Err(CompileError(want.into()))
        );
        let e = Expression::compile_checked("object.spec.enabled == true", &vars).unwrap();
        assert_eq!(expect_output(&e, &Type::Bool, want), Ok(()));
    }
}

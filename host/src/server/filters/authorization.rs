//! The authorization filter (`k8s.io/apiserver/pkg/endpoints/filters/authorization.go`
//! `WithAuthorization`): the request's [`Attributes`] — from its
//! [`RequestInfo`](crate::server::request_info::RequestInfo) and the (possibly impersonated)
//! user — are put to the [`Authorizer`]; anything but `Allow` is answered 403 with kube's
//! message ([`crate::authorization::authorizer::forbidden`]). When the request is audited, the
//! decision is recorded as kube's `authorization.k8s.io/decision` and `…/reason` audit
//! annotations.

use crate::authorization::authorizer::forbidden;
use crate::authorization::{Authorizer, Decision};
use crate::server::context::{request_info, user_ref, AuditAnnotations, RequestAttributes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Authorize `req`; run the rest of the chain only when allowed.
pub async fn with_authorization(
    State(authorizer): State<Authorizer>,
    req: Request,
    next: Next,
) -> Response {
    // The user may have been replaced by impersonation since the audit filter ran.
    let attrs = match req.extensions().get::<RequestAttributes>() {
        Some(a) if a.0.user == *user_ref(&req) => a.0.clone(),
        _ => Arc::new(request_info(&req).attributes(user_ref(&req).into_owned())),
    };
    let (decision, reason) = authorizer.authorize(&attrs);
    let allowed = decision == Decision::Allow;
    AUTHORIZATION_DECISIONS
        .with_label_values(&[if allowed { "allowed" } else { "denied" }])
        .inc();
    if let Some(annotations) = req.extensions().get::<AuditAnnotations>() {
        annotations.add(
            "authorization.k8s.io/decision",
            if allowed { "allow" } else { "forbid" },
        );
        annotations.add("authorization.k8s.io/reason", reason.clone());
    }
    if allowed {
        next.run(req).await
    } else {
        tracing::debug!(user = %attrs.user.name, verb = %attrs.verb, path = %attrs.path, %reason, "forbidden");
        forbidden(&attrs, &reason).into_response()
    }
}

/// `apiserver_authorization_decisions_total{decision}` (`allowed`, `denied`: denied or no
/// opinion), the authorizer chain's terminal decisions
/// (`pkg/endpoints/filters/metrics.go` `authorizationAttemptsCounter`'s successor).
static AUTHORIZATION_DECISIONS: std::sync::LazyLock<prometheus::IntCounterVec> =
    std::sync::LazyLock::new(|| {
        crate::metrics::counter_vec(
            "apiserver_authorization_decisions_total",
            "Total number of terminal decisions made by the authorizer chain.",
            &["decision"],
        )
    });

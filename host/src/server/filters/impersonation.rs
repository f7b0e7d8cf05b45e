//! The impersonation filter (`k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`
//! `WithImpersonation`): `Impersonate-User`, `Impersonate-Group` (repeatable),
//! `Impersonate-Uid` and `Impersonate-Extra-<key>` make the request act as another user, each
//! part authorized for the requester with the `impersonate` verb — on `users` (or
//! `serviceaccounts` for `system:serviceaccount:<ns>:<name>`), `groups`, `uids`
//! (`authentication.k8s.io`) and `userextras/<key>`. The impersonated user gets
//! `system:authenticated` (or, for service accounts, their groups) as kube adds them. The
//! headers are removed before the request goes on. Errors: 400 for groups, uid or extras
//! without a user; 403 with kube's message when a part is not allowed.

use crate::authentication::user::{ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS};
use crate::authentication::UserInfo;
use crate::authorization::authorizer::forbidden;
use crate::authorization::{Attributes, Authorizer, Decision};
use crate::server::context::user_of;
use crate::status::ApiError;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// What a request asks to impersonate, if anything.
struct Requested {
    user: Option<String>,
    groups: Vec<String>,
    uid: Option<String>,
    extra: BTreeMap<String, Vec<String>>,
}

fn requested(headers: &HeaderMap) -> Option<Requested> {
    let text = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect()
    };
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            // Extra keys are percent-encoded in the header name (`unescapeExtraKey`).
            // kube lower-cases the header name, then unescapes it (`unescapeExtraKey`).
            let key = percent_decode(&key.to_lowercase());
            if let Ok(v) = value.to_str() {
                extra.entry(key).or_default().push(v.to_string());
            }
        }
    }
    let r = Requested {
        user: text(USER).into_iter().next(),
        groups: text(GROUP),
        uid: text(UID).into_iter().next(),
        extra,
    };
    (r.user.is_some() || !r.groups.is_empty() || r.uid.is_some() || !r.extra.is_empty())
        .then_some(r)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Act as the impersonated user when asked and allowed.
pub async fn with_impersonation(
    State(authorizer): State<Authorizer>,
    mut req: Request,
    next: Next,
) -> Response {
    let Some(asked) = requested(req.headers()) else {
        return next.run(req).await;
    };
    let requester = user_of(&req);
    let Some(username) = asked.user.clone() else {
        return ApiError::bad_request(format!(
            "requested {:?} without impersonating a user",
            asked.groups
        ))
        .into_response();
    };
    let check = |resource: &str, group: &str, subresource: &str, ns: &str, name: &str| {
        let attrs = Attributes {
            user: requester.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            namespace: ns.into(),
            api_group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            name: name.into(),
            ..Default::default()
        };
        let (decision, reason) = authorizer.authorize(&attrs);
        if decision == Decision::Allow {
            Ok(())
        } else {
            Err(forbidden(&attrs, &reason))
        }
    };
    let mut groups = asked.groups.clone();
    // `serviceaccount.SplitUsername`: exactly `system:serviceaccount:<ns>:<name>`, both parts
    // non-empty; anything else is a plain user.
    let service_account = username
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
        .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains(':'));
    let mut checks = Vec::new();
    match service_account {
        Some((ns, name)) => {
            checks.push(check("serviceaccounts", "", "", ns, name));
            if groups.is_empty() {
                groups = vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{ns}"),
                ];
            }
        }
        None => checks.push(check("users", "", "", "", &username)),
    }
    for g in &asked.groups {
        checks.push(check("groups", "", "", "", g));
    }
    if let Some(uid) = &asked.uid {
        checks.push(check("uids", "authentication.k8s.io", "", "", uid));
    }
    for (key, values) in &asked.extra {
        for v in values {
            checks.push(check("userextras", "authentication.k8s.io", key, "", v));
        }
    }
    if let Some(Err(e)) = checks.into_iter().find(Result::is_err) {
        return e.into_response();
    }
    if username != ANONYMOUS {
        if !groups
            .iter()
            .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
        {
            groups.push(ALL_AUTHENTICATED.into());
        }
    } else if !groups.iter().any(|g| g == ALL_UNAUTHENTICATED) {
        groups.push(ALL_UNAUTHENTICATED.into());
    }
    let user = UserInfo {
        name: username,
        uid: asked.uid.unwrap_or_default(),
        groups,
        extra: asked.extra,
    };
    let headers = req.headers_mut();
    let names: Vec<_> = headers
        .keys()
        .filter(|n| n.as_str().starts_with("impersonate-"))
        .cloned()
        .collect();
    for n in names {
        headers.remove(n);
    }
    req.extensions_mut().insert(user);
    next.run(req).await
}

//! The `authorizer` and `authorizer.requestResource` variables of admission policy
//! expressions: the server's [`Authorizer`] asked about the requesting user (or, through `authorizer.serviceAccount(ns, name)`, about a
//! service account: `system:serviceaccount:<ns>:<name>` in the groups `system:serviceaccounts`
//! and `system:serviceaccounts:<ns>`, as kube's `serviceaccount.UserInfo`), with each decision
//! cached for the request (kube's `admission/plugin/authorizer.NewCachingAuthorizer`).

use crate::authentication::UserInfo;
use crate::authorization::authorizer::{Attributes, Decision};
use crate::authorization::Authorizer;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use wasm_apiserver_cel::library::authz;

/// The server's authorizer for one request's expressions.
pub struct RequestAuthorizer {
    authorizer: Authorizer,
    user: UserInfo,
    /// The request's resource, as `authorizer.requestResource` checks it.
    pub request: authz::Attributes,
    cache: Mutex<HashMap<authz::Attributes, authz::Decision>>,
}

impl RequestAuthorizer {
    /// `authorizer` deciding for the user of the request `a` (named `name`).
    pub fn for_request(
        authorizer: Authorizer,
        a: &crate::admission::interface::Attributes<'_>,
        name: &str,
    ) -> Arc<RequestAuthorizer> {
        let d = &a.store.description;
        Arc::new(RequestAuthorizer {
            authorizer,
            user: a.user.clone(),
            request: authz::Attributes {
                group: d.group.clone(),
                resource: d.plural.clone(),
                subresource: a.subresource.to_string(),
                namespace: a.namespace.to_string(),
                name: name.to_string(),
                ..Default::default()
            },
            cache: Mutex::default(),
        })
    }
}

impl authz::Authorizer for RequestAuthorizer {
    fn authorize(&self, a: &authz::Attributes) -> authz::Decision {
        if let Some(d) = self.cache.lock().unwrap().get(a) {
            return d.clone();
        }
        let user = match &a.service_account {
            None => self.user.clone(),
            Some((ns, name)) => UserInfo {
                name: format!("system:serviceaccount:{ns}:{name}"),
                uid: String::new(),
                // `serviceaccount.MakeGroupNames` only, as kube's `ServiceAccountInfo.UserInfo`.
                groups: vec![
                    "system:serviceaccounts".to_string(),
                    format!("system:serviceaccounts:{ns}"),
                ],
                extra: Default::default(),
            },
        };
        let attributes = Attributes {
            user,
            verb: a.verb.clone(),
            resource_request: a.path.is_none(),
            namespace: a.namespace.clone(),
            api_group: a.group.clone(),
            api_version: "*".to_string(),
            resource: a.resource.clone(),
            subresource: a.subresource.clone(),
            name: a.name.clone(),
            path: a.path.clone().unwrap_or_default(),
        };
        let (decision, reason) = self.authorizer.authorize(&attributes);
        let d = authz::Decision {
            allowed: decision == Decision::Allow,
            reason,
            error: None,
        };
        self.cache.lock().unwrap().insert(a.clone(), d.clone());
        d
    }
}

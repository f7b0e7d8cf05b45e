//! `RequestInfo`: what a request addresses and how, read once from its method, path and query
//! by the outermost filter (`filters/request_info.rs`) and then read by every later filter and
//! the handler from the request's extensions — kube-apiserver's `RequestInfoFactory.NewRequestInfo`
//! (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`) for resource paths, plus the query
//! decoded once ([`Query`]) and the long-running check (`BasicLongRunningRequestCheck` with
//! the `watch` verb).

use super::options::{query_bool, Query};
use crate::authentication::UserInfo;
use crate::authorization::Attributes;
use axum::http::{Method, Uri};

/// What a request addresses, and how.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// Whether the path is an API resource path (`/api/v1/…`, `/apis/<g>/<v>/…` with a
    /// resource); `false` for discovery, `/healthz`, `/metrics` and the like.
    pub is_resource_request: bool,
    /// The URL path.
    pub path: String,
    /// kube's verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection` for resource requests; the lower-cased method otherwise.
    pub verb: String,
    /// `api` or `apis` (`""` for non-resource paths).
    pub api_prefix: String,
    /// API group (`""` for `/api`).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace from the path (`""` when none).
    pub namespace: String,
    /// Plural resource.
    pub resource: String,
    /// Object name from the path (`""` for collections).
    pub name: String,
    /// Subresource, e.g. `status`.
    pub subresource: String,
    /// The legacy `/watch/` path prefix was used.
    pub watch_path: bool,
    /// A watch: `?watch=` true (kube's bool rule, [`query_bool`]) or a `/watch/` path. Watches
    /// are the server's long-running requests: exempt from the request timeout and the
    /// in-flight limits.
    pub long_running: bool,
    /// The query, decoded once (the last value of a repeated key wins).
    pub query: Query,
}

#[cfg(test)]
thread_local! {
    /// How many times this thread built a `RequestInfo` (the chain test counts one per request).
    pub static PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl RequestInfo {
    /// Read a request's method, path and query (`NewRequestInfo`). Never fails: a path that is
    /// not a resource path gives `is_resource_request: false`.
    pub fn new(method: &Method, uri: &Uri) -> RequestInfo {
        #[cfg(test)]
        PARSED.with(|p| p.set(p.get() + 1));
        // A `HashMap<String, String>` always decodes (bad escapes are decoded lossily).
        let query = axum::extract::Query::<Query>::try_from_uri(uri)
            .map(|q| q.0)
            .unwrap_or_default();
        let path = uri.path();
        let Some(mut info) = parse(path) else {
            return RequestInfo {
                path: path.to_string(),
                verb: method.as_str().to_ascii_lowercase(),
                query,
                ..Default::default()
            };
        };
        info.is_resource_request = true;
        info.path = path.to_string();
        info.long_running = info.watch_path || query_bool(&query, "watch").unwrap_or(false);
        info.verb = match *method {
            // The handler serves a watch for these, named or not.
            Method::GET | Method::HEAD if info.long_running => "watch",
            Method::GET | Method::HEAD if !info.name.is_empty() => "get",
            Method::GET | Method::HEAD => "list",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if info.name.is_empty() => "deletecollection",
            Method::DELETE => "delete",
            _ => "",
        }
        .to_string();
        if info.verb.is_empty() {
            info.verb = method.as_str().to_ascii_lowercase();
        }
        info.query = query;
        info
    }

    /// The authorization attributes of this request by `user` (`GetAuthorizerAttributes`): a
    /// list or watch with `fieldSelector=metadata.name=<n>` is authorized for that name, and a
    /// namespace object is in its own namespace, as kube's `RequestInfo` has them.
    pub fn attributes(&self, user: UserInfo) -> Attributes {
        if !self.is_resource_request {
            return Attributes {
                user,
                verb: self.verb.clone(),
                path: self.path.clone(),
                ..Default::default()
            };
        }
        let mut name = self.name.clone();
        if (self.verb == "list" || self.verb == "watch") && name.is_empty() {
            // `RequiresExactMatch("metadata.name")` of the selector the handler will apply.
            if let Some(selector) = self.query.get("fieldSelector") {
                if let Ok(parsed) =
                    wasm_apiserver_apimachinery::fields::FieldSelector::parse(selector)
                {
                    if let Some(n) = parsed.requires_exact_match("metadata.name") {
                        name = n.to_string();
                    }
                }
            }
        }
        let namespace = if self.resource == "namespaces" && !self.name.is_empty() {
            self.name.clone()
        } else {
            self.namespace.clone()
        };
        Attributes {
            user,
            verb: self.verb.clone(),
            resource_request: true,
            namespace,
            api_group: self.group.clone(),
            api_version: self.version.clone(),
            resource: self.resource.clone(),
            subresource: self.subresource.clone(),
            name,
            path: self.path.clone(),
        }
    }
}

/// Subresources of `namespaces` addressed as `/api/v1/namespaces/{name}/{sub}`.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// Parse `/api/v1/...` or `/apis/<group>/<version>/...`. `None` when the path is not a
/// resource path (discovery, health, …) or has too many segments.
fn parse(path: &str) -> Option<RequestInfo> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (prefix, group, version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => ("api", "", *version, rest),
        ["apis", group, version, rest @ ..] => ("apis", *group, *version, rest),
        _ => return None,
    };
    let mut info = RequestInfo {
        api_prefix: prefix.into(),
        group: group.into(),
        version: version.into(),
        ..Default::default()
    };
    let mut rest: Vec<&str> = rest.to_vec();
    if rest.first() == Some(&"watch") {
        info.watch_path = true;
        rest.remove(0);
    }
    if rest.is_empty() || rest.iter().any(|p| p.is_empty()) {
        return None;
    }
    if rest[0] == "namespaces" && rest.len() > 1 {
        info.namespace = rest[1].into();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest.drain(..2);
        }
    }
    // `/namespaces`, `/namespaces/{name}`, `/namespaces/{name}/status` address the
    // namespaces resource itself.
    match rest.as_slice() {
        [resource] => info.resource = (*resource).into(),
        [resource, name] => {
            info.resource = (*resource).into();
            info.name = (*name).into();
        }
        [resource, name, sub] => {
            info.resource = (*resource).into();
            info.name = (*name).into();
            info.subresource = (*sub).into();
        }
        _ => return None,
    }
    if info.resource == "namespaces" {
        // The namespace segment named the object, not a scope.
        info.namespace = String::new();
    }
    Some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(path: &str) -> RequestInfo {
        parse(path).unwrap()
    }

    fn info(method: Method, uri: &str) -> RequestInfo {
        RequestInfo::new(&method, &uri.parse().unwrap())
    }

    #[test]
    fn verbs_and_watches() {
        let verb = |m: Method, uri: &str| info(m, uri).verb;
        assert_eq!(verb(Method::GET, "/api/v1/namespaces/d/pods/a"), "get");
        assert_eq!(verb(Method::GET, "/api/v1/namespaces/d/pods"), "list");
        assert_eq!(verb(Method::GET, "/api/v1/pods?watch=1"), "watch");
        assert_eq!(
            verb(Method::GET, "/api/v1/watch/namespaces/d/pods/a"),
            "watch"
        );
        assert_eq!(verb(Method::POST, "/api/v1/namespaces/d/pods"), "create");
        assert_eq!(
            verb(Method::DELETE, "/api/v1/namespaces/d/pods"),
            "deletecollection"
        );
        assert_eq!(verb(Method::PATCH, "/api/v1/namespaces/d/pods/a"), "patch");
        assert_eq!(verb(Method::GET, "/healthz"), "get");
        assert!(!info(Method::GET, "/apis").is_resource_request);
        let long = |uri: &str| info(Method::GET, uri).long_running;
        assert!(long("/api/v1/pods?a=1&watch=True"));
        assert!(long("/api/v1/pods?watch"));
        assert!(!long("/api/v1/pods?watch=false&x=1"));
        assert!(!long("/api/v1/pods?watcher=1"));
        // The handler's rule: the last value counts.
        assert!(!long("/api/v1/pods?watch=1&watch=0"));
        assert!(long("/api/v1/watch/pods"));
    }

    #[test]
    fn attributes_as_kube_reads_them() {
        let a = info(
            Method::GET,
            "/api/v1/namespaces/d/pods?fieldSelector=metadata.name%3Dweb",
        )
        .attributes(UserInfo::anonymous());
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("list", "web"));
        let a = info(Method::PUT, "/api/v1/namespaces/x").attributes(UserInfo::anonymous());
        assert_eq!((a.namespace.as_str(), a.name.as_str()), ("x", "x"));
        let a = info(Method::POST, "/version").attributes(UserInfo::anonymous());
        assert!(!a.resource_request);
        assert_eq!((a.verb.as_str(), a.path.as_str()), ("post", "/version"));
    }

    #[test]
    fn core_and_group_paths() {
        let i = p("/api/v1/namespaces/default/pods/web");
        assert_eq!(
            (
                i.group.as_str(),
                i.namespace.as_str(),
                i.resource.as_str(),
                i.name.as_str()
            ),
            ("", "default", "pods", "web")
        );
        let i = p("/apis/example.dev/v1/namespaces/ns/widgets/w/status");
        assert_eq!(
            (i.group.as_str(), i.version.as_str(), i.subresource.as_str()),
            ("example.dev", "v1", "status")
        );
        let i = p("/api/v1/pods");
        assert_eq!((i.namespace.as_str(), i.resource.as_str()), ("", "pods"));
    }

    #[test]
    fn namespaces_themselves() {
        let i = p("/api/v1/namespaces");
        assert_eq!((i.resource.as_str(), i.name.as_str()), ("namespaces", ""));
        let i = p("/api/v1/namespaces/kube-system");
        assert_eq!(
            (i.resource.as_str(), i.name.as_str(), i.namespace.as_str()),
            ("namespaces", "kube-system", "")
        );
        let i = p("/api/v1/namespaces/x/status");
        assert_eq!(
            (i.resource.as_str(), i.name.as_str(), i.subresource.as_str()),
            ("namespaces", "x", "status")
        );
    }

    #[test]
    fn watch_prefix_and_non_resource_paths() {
        assert!(p("/api/v1/watch/namespaces/d/pods").watch_path);
        assert!(parse("/api").is_none());
        assert!(parse("/apis/example.dev/v1").is_none());
        assert!(parse("/healthz").is_none());
        assert!(parse("/api/v1/namespaces/d/pods/a/b/c").is_none());
    }
}

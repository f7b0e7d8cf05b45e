//! `RequestInfo` from a URL path: kube-apiserver's `RequestInfoFactory.NewRequestInfo`
//! (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`) for resource paths.

/// What a resource request addresses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// API group (`""` for `/api`).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace from the path (`""` when none).
    pub namespace: String,
    /// Plural resource.
    pub resource: String,
    /// Object name (`""` for collections).
    pub name: String,
    /// Subresource, e.g. `status`.
    pub subresource: String,
    /// The legacy `/watch/` path prefix was used.
    pub watch_path: bool,
}

/// Subresources of `namespaces` addressed as `/api/v1/namespaces/{name}/{sub}`.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// Parse `/api/v1/...` or `/apis/<group>/<version>/...`. `None` when the path is not a
/// resource path (discovery, health, …) or has too many segments.
pub fn parse(path: &str) -> Option<RequestInfo> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let mut info = RequestInfo {
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

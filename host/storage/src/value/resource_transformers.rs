//! The transformer of each GroupResource (`k8s.io/apiserver/pkg/server/options/encryptionconfig/config.go`,
//! `transformerFromOverrides`).

use crate::store::{IdentityTransformer, ValueTransformer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Which transformer stores each resource: the one configured for the exact GroupResource,
/// else for `*.<group>` (`(group, "*")`), else for `*.*` (`("*", "*")`), else the fallback —
/// plain [`IdentityTransformer`] when no encryption is configured, the encrypt-checking
/// identity when it is (so a resource dropped from the configuration refuses its encrypted
/// objects instead of handing out ciphertext).
#[derive(Clone)]
pub struct ResourceTransformers {
    by_resource: BTreeMap<(String, String), Arc<dyn ValueTransformer>>,
    fallback: Arc<dyn ValueTransformer>,
    kms: Vec<Arc<crate::value::kmsv2::KmsV2>>,
}

impl Default for ResourceTransformers {
    fn default() -> Self {
        ResourceTransformers::new(BTreeMap::new(), Arc::new(IdentityTransformer))
    }
}

impl ResourceTransformers {
    /// Transformers by `(group, resource)` (`""` the core group, `"*"` a wildcard), and the
    /// fallback for everything else.
    pub fn new(
        by_resource: BTreeMap<(String, String), Arc<dyn ValueTransformer>>,
        fallback: Arc<dyn ValueTransformer>,
    ) -> ResourceTransformers {
        ResourceTransformers {
            by_resource,
            fallback,
            kms: Vec::new(),
        }
    }

    /// The same, with the `kms` providers its transformers use (started, probed and
    /// health-checked by whoever loads the configuration).
    pub fn with_kms(mut self, kms: Vec<Arc<crate::value::kmsv2::KmsV2>>) -> ResourceTransformers {
        self.kms = kms;
        self
    }

    /// The `kms` providers of this configuration.
    pub fn kms_providers(&self) -> &[Arc<crate::value::kmsv2::KmsV2>] {
        &self.kms
    }

    /// The transformer of `group`/`resource` (plural).
    pub fn for_resource(&self, group: &str, resource: &str) -> Arc<dyn ValueTransformer> {
        let get = |g: &str, r: &str| self.by_resource.get(&(g.to_string(), r.to_string()));
        get(group, resource)
            .or_else(|| get(group, "*"))
            .or_else(|| get("*", "*"))
            .unwrap_or(&self.fallback)
            .clone()
    }

    /// Whether an entry of the configuration names `group`/`resource` (exactly, by `*.group`
    /// or by `*.*`); a resource it does not name gets the fallback.
    pub fn configures(&self, group: &str, resource: &str) -> bool {
        let has = |g: &str, r: &str| {
            self.by_resource
                .contains_key(&(g.to_string(), r.to_string()))
        };
        has(group, resource) || has(group, "*") || has("*", "*")
    }

    /// Whether any resource is configured (encryption at rest is on).
    pub fn is_configured(&self) -> bool {
        !self.by_resource.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::EncryptCheckTransformer;

    struct Tag(&'static str);
    impl ValueTransformer for Tag {
        fn to_storage(&self, _: Vec<u8>, _: &str) -> crate::errors::Result<Vec<u8>> {
            Ok(self.0.as_bytes().to_vec())
        }
        fn from_storage(&self, d: &[u8], _: &str) -> crate::errors::Result<(Vec<u8>, bool)> {
            Ok((d.to_vec(), false))
        }
    }

    #[test]
    fn exact_then_group_wildcard_then_all_then_fallback() {
        let tag = |s: &'static str| -> Arc<dyn ValueTransformer> { Arc::new(Tag(s)) };
        let by: BTreeMap<_, _> = [
            (("".to_string(), "secrets".to_string()), tag("secrets")),
            (("apps".to_string(), "*".to_string()), tag("apps")),
        ]
        .into_iter()
        .collect();
        let t = ResourceTransformers::new(by.clone(), Arc::new(EncryptCheckTransformer));
        let out = |g, r| t.for_resource(g, r).to_storage(Vec::new(), "k").unwrap();
        assert_eq!(out("", "secrets"), b"secrets");
        assert_eq!(out("apps", "deployments"), b"apps");
        assert_eq!(out("", "configmaps"), b"");
        let mut all = by;
        all.insert(("*".into(), "*".into()), tag("all"));
        let t = ResourceTransformers::new(all, Arc::new(EncryptCheckTransformer));
        assert_eq!(
            t.for_resource("", "configmaps")
                .to_storage(vec![], "k")
                .unwrap(),
            b"all"
        );
        assert!(t.is_configured());
        assert!(t.configures("", "configmaps"));
        assert!(!ResourceTransformers::default().is_configured());
        assert!(!ResourceTransformers::default().configures("", "secrets"));
    }
}

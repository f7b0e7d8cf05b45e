//! What answers an admission policy's context reads (`get-object`, `list-objects` of
//! `wit/admission/0.1.0/admission.wit`) during one call: the [`ContextReads`] the caller
//! hands to [`WasmAdmissionPlugin::admit`](super::WasmAdmissionPlugin::admit), kept in the
//! instance's [`HostState`](super::HostState) for the call.

/// A resource a policy reads (`group-version-resource`; an empty version is the preferred
/// one).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionResource {
    /// API group (`""` for the core group).
    pub group: String,
    /// Version; `""` for the preferred one.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl std::fmt::Display for GroupVersionResource {
    /// `resource.group` (`configmaps` for the core group), with `/version` when one is named.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.resource)?;
        if !self.group.is_empty() {
            write!(f, ".{}", self.group)?;
        }
        if !self.version.is_empty() {
            write!(f, "/{}", self.version)?;
        }
        Ok(())
    }
}

/// Why a context read failed (`read-error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Not among the policy's declared reads.
    Forbidden(String),
    /// Not served, or a bad selector.
    Invalid(String),
    /// The cache is not ready.
    Unavailable(String),
}

/// What answers a policy's context reads during one call: objects as JSON text, from the
/// watch cache, refused outside the policy's declared reads. Called on the thread running the
/// policy (a blocking one).
pub trait ContextReads: Send + Sync {
    /// `get-object`: `None` when the object does not exist.
    fn get(
        &self,
        gvr: &GroupVersionResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<String>, ReadError>;
    /// `list-objects`: every object of the resource in `namespace` (all when empty) matching
    /// `label_selector` (kube's syntax).
    fn list(
        &self,
        gvr: &GroupVersionResource,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<String>, ReadError>;
}

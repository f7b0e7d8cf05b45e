//! What a write asks of the Store besides its object: `metav1.CreateOptions`,
//! `UpdateOptions` / `PatchOptions` as far as the Store uses them (dry run, field manager, the
//! subresource, forced create-on-update) and the request's admission
//! ([`WriteAdmission`]). The delete's options are the delete path's (`deletion.rs`).

use super::write_admission::WriteAdmission;
use std::sync::Arc;

/// Which strategy an update goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// The main resource.
    Main,
    /// `/status`: the status strategy; create-on-update never applies.
    Status,
}

impl Subresource {
    /// Its name in the request path and in `managedFields` (`""` for the object itself).
    pub fn name(self) -> &'static str {
        match self {
            Subresource::Main => "",
            Subresource::Status => "status",
        }
    }
}

/// `metav1.CreateOptions` as far as the Store uses them, with the request's admission.
#[derive(Clone, Debug, Default)]
pub struct CreateOptions<'a> {
    /// `dryRun=All`: everything but the write.
    pub dry_run: bool,
    /// Who the write is recorded under in `managedFields` (`None`: not tracked).
    pub field_manager: Option<&'a str>,
    /// The request's admission (`None`: the host's own writes, which kube makes through a
    /// loopback client without admission plugins that concern them).
    pub admission: Option<Arc<dyn WriteAdmission>>,
}

impl CreateOptions<'static> {
    /// The host's own create (system namespaces, leases, bootstrap RBAC, plugin status):
    /// written, tracked as [`crate::fieldmanager::HOST_MANAGER`], without admission.
    pub fn host() -> Self {
        CreateOptions {
            dry_run: false,
            field_manager: Some(crate::fieldmanager::HOST_MANAGER),
            admission: None,
        }
    }
}

/// `metav1.UpdateOptions` (and `PatchOptions`) as far as the Store uses them, with the
/// request's admission.
#[derive(Clone, Debug)]
pub struct UpdateOptions<'a> {
    /// The object itself or its `/status`.
    pub subresource: Subresource,
    /// Create when missing even if the strategy does not allow create-on-update (server-side
    /// apply, `patch.go`'s `forceAllowCreate`).
    pub force_allow_create: bool,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Who the write is recorded under in `managedFields` (`None`: not tracked here — apply
    /// records in the patch).
    pub field_manager: Option<&'a str>,
    /// The request's admission.
    pub admission: Option<Arc<dyn WriteAdmission>>,
}

impl Default for UpdateOptions<'_> {
    fn default() -> Self {
        UpdateOptions {
            subresource: Subresource::Main,
            force_allow_create: false,
            dry_run: false,
            field_manager: None,
            admission: None,
        }
    }
}

impl UpdateOptions<'static> {
    /// The host's own update of `subresource`: written, tracked as
    /// [`crate::fieldmanager::HOST_MANAGER`], without admission.
    pub fn host(subresource: Subresource) -> Self {
        UpdateOptions {
            subresource,
            field_manager: Some(crate::fieldmanager::HOST_MANAGER),
            ..UpdateOptions::default()
        }
    }
}

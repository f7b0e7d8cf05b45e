//! The options of a list or watch as the registry receives them
//! (`k8s.io/apimachinery/pkg/apis/meta/internalversion` `ListOptions`: selectors already
//! parsed, query already validated by the HTTP layer). The [`Store`](super::store::Store)
//! derives the storage options from them (`Store.List` / `Store.Watch` →
//! `Store.PredicateFunc` in `k8s.io/apiserver/pkg/registry/generic/registry/store.go`).

use wasm_apiserver_storage::selection::FieldRequirement;
use wasm_apiserver_storage::{FieldSelector, LabelSelector, ResourceVersionMatch};

/// `metainternalversion.ListOptions`: what a list or a watch asks for.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// `labelSelector`, parsed.
    pub label_selector: LabelSelector,
    /// `fieldSelector`, parsed (only fields the resource supports).
    pub field_selector: FieldSelector,
    /// `resourceVersion` (`""`, `"0"` or a revision).
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: ResourceVersionMatch,
    /// `limit` (0 = no limit).
    pub limit: i64,
    /// `continue`.
    pub continue_token: String,
    /// Watch: `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// Watch: `sendInitialEvents` (after `SetListOptionsDefaults`).
    pub send_initial_events: Option<bool>,
    /// Watch: when it ends (`timeoutSeconds` or the server's default), so the watch cache can
    /// send a bookmark before it.
    pub watch_deadline: Option<tokio::time::Instant>,
}

impl ListOptions {
    /// Restrict to the object named `name` (a watch on one object: kube's `ListResource` adds
    /// `metadata.name=<name>` to the field selector).
    pub fn with_name(mut self, name: &str) -> ListOptions {
        if !name.is_empty() {
            self.field_selector.requirements.push(FieldRequirement {
                field: "metadata.name".into(),
                equals: true,
                value: name.into(),
            });
        }
        self
    }
}

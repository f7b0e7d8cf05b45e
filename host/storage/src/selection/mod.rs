//! `storage.SelectionPredicate` (`k8s.io/apiserver/pkg/storage/selection_predicate.go`) over
//! the label and field selectors of [`wasm_apiserver_apimachinery`] (re-exported here).

pub use wasm_apiserver_apimachinery::fields::{FieldRequirement, FieldSelector};
pub use wasm_apiserver_apimachinery::labels::{
    LabelSelector, Operator, Requirement, SelectorError,
};

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Labels and fields of one object (what `GetAttrs` returns). Fields always include
/// `metadata.name` and, for namespaced resources, `metadata.namespace`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs {
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// Selectable fields by path, e.g. `spec.nodeName`.
    pub fields: BTreeMap<String, String>,
}

/// `GetAttrs`: computes an object's [`Attrs`]. Errors are reported as a message.
pub type AttrsFunc = Arc<dyn Fn(&Value) -> Result<Attrs, String> + Send + Sync>;

/// The default `GetAttrs`: labels, `metadata.name`, `metadata.namespace`, and each listed
/// field path read from the object (`DefaultClusterScopedAttr`/`DefaultNamespaceScopedAttr`
/// plus a CRD's selectable fields).
pub fn default_attrs(selectable_fields: Vec<String>) -> AttrsFunc {
    Arc::new(move |obj: &Value| {
        let (labels, fields) =
            wasm_apiserver_apimachinery::fields::object_attrs(obj, &selectable_fields);
        Ok(Attrs { labels, fields })
    })
}

/// `storage.SelectionPredicate`: which objects a list or watch returns, plus paging.
#[derive(Clone, Default)]
pub struct SelectionPredicate {
    /// Label selector.
    pub label: LabelSelector,
    /// Field selector.
    pub field: FieldSelector,
    /// `GetAttrs`; `None` = labels, `metadata.name` and `metadata.namespace` only.
    pub get_attrs: Option<AttrsFunc>,
    /// Page size (0 = no limit).
    pub limit: i64,
    /// Continue token of the previous page (`""` = first page).
    pub continue_token: String,
    /// Watch: the client accepts bookmarks.
    pub allow_watch_bookmarks: bool,
    /// `get_attrs` reads the object converted to another version than the stored one (a
    /// request in a version other than the storage version), whose labels may differ: the
    /// attributes a cache computed from the stored object do not apply.
    pub converted: bool,
}

impl fmt::Debug for SelectionPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectionPredicate")
            .field("label", &self.label.to_string())
            .field("field", &self.field.to_string())
            .field("limit", &self.limit)
            .field("continue", &self.continue_token)
            .field("allow_watch_bookmarks", &self.allow_watch_bookmarks)
            .finish()
    }
}

impl SelectionPredicate {
    /// `Empty()`: no label and no field filter.
    pub fn is_empty(&self) -> bool {
        self.label.is_empty() && self.field.is_empty()
    }

    /// `Matches(obj)`. Errors: `GetAttrs` failed.
    pub fn matches(&self, obj: &Value) -> Result<bool, String> {
        if self.is_empty() {
            return Ok(true);
        }
        let attrs = match &self.get_attrs {
            Some(f) => f(obj)?,
            None => default_attrs(Vec::new())(obj)?,
        };
        Ok(self.label.matches(&attrs.labels) && self.field.matches(&attrs.fields))
    }
}

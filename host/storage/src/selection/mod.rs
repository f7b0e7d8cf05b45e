//! `storage.SelectionPredicate` (`k8s.io/apiserver/pkg/storage/selection_predicate.go`) with
//! label selectors (`k8s.io/apimachinery/pkg/labels/selector.go`) and field selectors
//! (`k8s.io/apimachinery/pkg/fields/selector.go`).

mod parse;

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
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let mut fields = BTreeMap::new();
        for path in ["metadata.name", "metadata.namespace"]
            .into_iter()
            .chain(selectable_fields.iter().map(String::as_str))
        {
            let ptr = format!("/{}", path.replace('.', "/"));
            let v = match obj.pointer(&ptr) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            fields.insert(path.to_string(), v);
        }
        Ok(Attrs { labels, fields })
    })
}

/// One requirement's operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key=value` / `key==value` / `key in (…)`.
    In,
    /// `key!=value` / `key notin (…)` (also true when the key is absent).
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>N` (integer comparison).
    GreaterThan,
    /// `key<N`.
    LessThan,
}

/// One label requirement (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// Operator.
    pub operator: Operator,
    /// Values (sorted, deduplicated); one for `>`/`<`, none for exists.
    pub values: Vec<String>,
}

/// A parsed label selector: the AND of its requirements; empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Requirements, sorted by key as apimachinery sorts them.
    pub requirements: Vec<Requirement>,
}

/// A parse error of a selector, worded as apimachinery words it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

impl LabelSelector {
    /// Parse the `labelSelector` syntax: `a=b,c!=d,e in (f,g),h notin (i),j,!k,l>3`.
    /// Errors: a syntax error, or an invalid label key or value.
    pub fn parse(s: &str) -> Result<LabelSelector, SelectorError> {
        parse::parse_label_selector(s)
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// `Selector.Matches(labels)`.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| {
            let v = labels.get(&r.key);
            match r.operator {
                Operator::In => v.is_some_and(|v| r.values.contains(v)),
                Operator::NotIn => v.is_none_or(|v| !r.values.contains(v)),
                Operator::Exists => v.is_some(),
                Operator::DoesNotExist => v.is_none(),
                Operator::GreaterThan | Operator::LessThan => {
                    let (Some(v), Some(bound)) = (v, r.values.first()) else {
                        return false;
                    };
                    match (v.parse::<i64>(), bound.parse::<i64>()) {
                        (Ok(v), Ok(b)) if r.operator == Operator::GreaterThan => v > b,
                        (Ok(v), Ok(b)) => v < b,
                        _ => false,
                    }
                }
            }
        })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| match r.operator {
                Operator::In if r.values.len() == 1 => format!("{}={}", r.key, r.values[0]),
                Operator::NotIn if r.values.len() == 1 => format!("{}!={}", r.key, r.values[0]),
                Operator::In => format!("{} in ({})", r.key, r.values.join(",")),
                Operator::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
                Operator::GreaterThan => format!("{}>{}", r.key, r.values[0]),
                Operator::LessThan => format!("{}<{}", r.key, r.values[0]),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// One field requirement: `field=value`, `field==value` or `field!=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Field path, e.g. `metadata.name`.
    pub field: String,
    /// `true` for `=`/`==`, `false` for `!=`.
    pub equals: bool,
    /// The value.
    pub value: String,
}

/// A parsed field selector: the AND of its requirements; empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// Requirements, in the order given.
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parse the `fieldSelector` syntax (`fields.ParseSelector`): comma-separated
    /// `field=value`, `field==value`, `field!=value`, with `\` escaping `,`, `=` and `!`.
    pub fn parse(s: &str) -> Result<FieldSelector, SelectorError> {
        parse::parse_field_selector(s)
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// `Selector.Matches(fields)`: an absent field reads as `""`.
    pub fn matches(&self, fields: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| {
            let v = fields.get(&r.field).map(String::as_str).unwrap_or("");
            (v == r.value) == r.equals
        })
    }

    /// The value required for `field` by an `=` requirement (`RequiresExactMatch`), used to
    /// narrow `metadata.name` / `metadata.namespace` lookups and cache indexes.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.equals && r.field == field)
            .map(|r| r.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| {
                format!(
                    "{}{}{}",
                    r.field,
                    if r.equals { "=" } else { "!=" },
                    r.value
                )
            })
            .collect();
        f.write_str(&parts.join(","))
    }
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

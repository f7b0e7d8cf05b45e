//! What a resource is, as both sides of the plugin boundary name it: [`GroupResource`] and
//! [`GroupKind`] (`k8s.io/apimachinery/pkg/runtime/schema`), the self-description a plugin
//! gives ([`ResourceDescription`], [`PrinterColumn`]) and an object's selectable
//! [`Attributes`] (`GetAttrs`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// `schema.GroupResource`: a resource in a group (the core group is empty). Displayed as
/// Kubernetes names it in messages: `plural` or `plural.group`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupResource {
    /// API group; empty for the core group.
    pub group: String,
    /// Plural resource name.
    pub resource: String,
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// `schema.GroupKind`: a kind in a group. Displayed as Kubernetes names it in messages:
/// `Kind` or `Kind.group`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupKind {
    /// API group; empty for the core group.
    pub group: String,
    /// Kind.
    pub kind: String,
}

impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// One printer column (CRD `additionalPrinterColumns`, `metav1.TableColumnDefinition` plus
/// the JSONPath that fills it). Serialized in camelCase (`type`, `jsonPath`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrinterColumn {
    /// Header, e.g. `Ready`.
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Format hint, e.g. `name`; may be empty.
    pub format: String,
    /// Description; may be empty.
    pub description: String,
    /// 0 = always shown; >0 = only with `-o wide`.
    pub priority: i32,
    /// kubectl-style JSONPath (`.status.phase`), or `@name` / `@age`; empty = computed by
    /// the strategy's `printer-cells` hook.
    pub json_path: String,
}

impl PrinterColumn {
    /// A priority-0 column.
    pub fn new(name: &str, type_: &str, json_path: &str) -> PrinterColumn {
        PrinterColumn {
            name: name.into(),
            type_: type_.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: json_path.into(),
        }
    }

    /// The NAME column (`@name`, format `name`), as kube-apiserver's default table has.
    pub fn name() -> PrinterColumn {
        PrinterColumn {
            format: "name".into(),
            description: "Name must be unique within a namespace.".into(),
            ..PrinterColumn::new("Name", "string", "@name")
        }
    }

    /// The AGE column (`@age`).
    pub fn age() -> PrinterColumn {
        PrinterColumn::new("Age", "date", "@age")
    }

    /// Shown only with `-o wide`.
    pub fn wide(mut self) -> PrinterColumn {
        self.priority = 1;
        self
    }

    /// A column computed by the strategy's `printer-cells` hook (empty JSONPath).
    pub fn computed(name: &str, type_: &str) -> PrinterColumn {
        PrinterColumn::new(name, type_, "")
    }

    /// With a description.
    pub fn describe(mut self, description: &str) -> PrinterColumn {
        self.description = description.into();
        self
    }
}

/// One version of a resource served in several (an entry of a CRD's `spec.versions`,
/// `served-version` in `wit/0.2.0/strategy.wit`). Serialized in camelCase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionDescription {
    /// The version, e.g. `v1alpha1`.
    pub name: String,
    /// Served through the REST API.
    pub served: bool,
    /// The version objects are stored in (exactly one).
    pub storage: bool,
    /// Deprecated: responses carry a `Warning: 299` header.
    pub deprecated: bool,
    /// The warning text of a deprecated version; `None` for kube's default text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    /// OpenAPI v3 schema of an object in this version.
    pub openapi_schema: serde_json::Value,
    /// Printer columns of this version.
    pub printer_columns: Vec<PrinterColumn>,
    /// Selectable fields of this version besides `metadata.name` / `metadata.namespace`.
    pub selectable_fields: Vec<String>,
}

/// What a plugin serves: the self-description read once at load (see `describe` in
/// `wit/0.2.0/strategy.wit`) — a CustomResourceDefinition's names, scope, subresources,
/// printer columns, selectable fields and schema in one record. Serialized in camelCase.
///
/// `version`, `printer_columns`, `selectable_fields` and `openapi_schema` are the storage
/// version's: the version every hook but `convert` sees. A resource served in several versions
/// lists them all, the storage version included, in `versions`; empty `versions` means
/// `version` alone (every WIT 0.1 plugin).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDescription {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Widget`.
    pub kind: String,
    /// List kind, e.g. `WidgetList`.
    pub list_kind: String,
    /// Plural resource name, e.g. `widgets`.
    pub plural: String,
    /// Singular resource name, e.g. `widget`.
    pub singular: String,
    /// Short names, e.g. `["wd"]`.
    pub short_names: Vec<String>,
    /// Categories, e.g. `["all"]`.
    pub categories: Vec<String>,
    /// Namespace-scoped (true) or cluster-scoped.
    pub namespaced: bool,
    /// Subresources, e.g. `["status"]`.
    pub subresources: Vec<String>,
    /// Printer columns for server-side Tables.
    pub printer_columns: Vec<PrinterColumn>,
    /// Selectable fields besides `metadata.name` / `metadata.namespace`, e.g. `spec.nodeName`.
    pub selectable_fields: Vec<String>,
    /// OpenAPI v3 schema of the object.
    pub openapi_schema: serde_json::Value,
    /// An example object, used by the host's load-time smoke test.
    pub example: Option<serde_json::Value>,
    /// `ReturnDeletedObject` of kube's generic `Store`
    /// (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`; true for pods, service
    /// accounts, …): a DELETE that removes the object answers with the object rather than a
    /// `Success` Status. WIT 0.1 has no field for it: it travels as
    /// [`RETURN_DELETED_OBJECT_EXTENSION`]` = true` at the root of `openapi_schema`, which the
    /// host removes before publishing the schema.
    #[serde(default)]
    pub return_deleted_object: bool,
    /// Every version when there is more than `version` (see the type's docs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionDescription>,
}

/// The schema-root extension by which a WIT 0.1 plugin declares
/// [`ResourceDescription::return_deleted_object`].
pub const RETURN_DELETED_OBJECT_EXTENSION: &str = "x-wasm-apiserver-return-deleted-object";

impl ResourceDescription {
    /// A namespaced resource with conventional names derived from `kind` and `plural`
    /// (`listKind = <Kind>List`, `singular = lower(kind)`), NAME and AGE columns, a `status`
    /// subresource, and an open schema. Adjust fields with struct update syntax or the builders.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> ResourceDescription {
        ResourceDescription {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: true,
            subresources: vec!["status".into()],
            printer_columns: vec![PrinterColumn::name(), PrinterColumn::age()],
            selectable_fields: Vec::new(),
            openapi_schema: serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            example: None,
            return_deleted_object: false,
            versions: Vec::new(),
        }
    }

    /// The versions served through the REST API, in kube's version priority (`v1` before
    /// `v1beta1` before `v1alpha1` before other names; `version.CompareKubeAwareVersionStrings`):
    /// the first is the preferred version. Just `version` when `versions` is empty.
    pub fn served_versions(&self) -> Vec<&str> {
        if self.versions.is_empty() {
            return vec![self.version.as_str()];
        }
        let mut v: Vec<&str> = self
            .versions
            .iter()
            .filter(|v| v.served)
            .map(|v| v.name.as_str())
            .collect();
        v.sort_by(|a, b| crate::version::compare_kube_aware(b, a));
        v
    }

    /// The description of version `name`, if it is one of this resource's.
    pub fn version_description(&self, name: &str) -> Option<&VersionDescription> {
        self.versions.iter().find(|v| v.name == name)
    }

    /// The resource as served in version `name`: `version`, `openapi_schema`,
    /// `printer_columns` and `selectable_fields` are that version's (everything else, `versions`
    /// included, is the resource's). `None` when `name` is not served.
    pub fn at_version(&self, name: &str) -> Option<ResourceDescription> {
        if self.versions.is_empty() {
            return (name == self.version).then(|| self.clone());
        }
        let v = self.version_description(name).filter(|v| v.served)?;
        Some(ResourceDescription {
            version: v.name.clone(),
            openapi_schema: v.openapi_schema.clone(),
            printer_columns: v.printer_columns.clone(),
            selectable_fields: v.selectable_fields.clone(),
            ..self.clone()
        })
    }

    /// The `Warning` text sent with every response in version `name` when it is deprecated:
    /// the plugin's own text, else kube's default `"<group>/<version> <Kind> is deprecated"`
    /// with `"; use <group>/<newest> <Kind>"` naming the served, non-deprecated version of
    /// highest priority above it (`defaultDeprecationWarning` in apiextensions-apiserver's
    /// `pkg/apiserver/customresource_handler.go`). `None` when the version is not deprecated.
    pub fn deprecation_warning(&self, name: &str) -> Option<String> {
        let v = self.version_description(name).filter(|v| v.deprecated)?;
        if let Some(w) = &v.deprecation_warning {
            return Some(w.clone());
        }
        let mut msg = format!("{}/{} {} is deprecated", self.group, name, self.kind);
        let newer = self
            .versions
            .iter()
            .filter(|o| {
                o.served
                    && !o.deprecated
                    && crate::version::compare_kube_aware(name, &o.name).is_lt()
            })
            .max_by(|a, b| crate::version::compare_kube_aware(&a.name, &b.name));
        if let Some(n) = newer {
            msg += &format!("; use {}/{} {}", self.group, n.name, self.kind);
        }
        Some(msg)
    }

    /// Whether the resource has a `status` subresource.
    pub fn has_status(&self) -> bool {
        self.subresources.iter().any(|s| s == "status")
    }

    /// `apiVersion` as it appears in objects: `v1` for core, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The resource's [`GroupKind`].
    pub fn group_kind(&self) -> GroupKind {
        GroupKind {
            group: self.group.clone(),
            kind: self.kind.clone(),
        }
    }

    /// The resource's [`GroupResource`].
    pub fn group_resource(&self) -> GroupResource {
        GroupResource {
            group: self.group.clone(),
            resource: self.plural.clone(),
        }
    }
}

/// Labels and selectable field values of an object (`GetAttrs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Attributes {
    /// `metadata.labels`.
    pub labels: Vec<(String, String)>,
    /// (field path, value) for each selectable field.
    pub fields: Vec<(String, String)>,
}

impl Attributes {
    /// The attributes of a resource with no selectable fields beyond `metadata`: its
    /// `metadata.labels` (string values; any other value skipped), no fields.
    pub fn labels_only(obj: &serde_json::Value) -> Attributes {
        let labels = crate::meta::accessor(obj)
            .labels()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        Attributes {
            labels,
            fields: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str, storage: bool, deprecated: bool) -> VersionDescription {
        VersionDescription {
            name: name.into(),
            served: true,
            storage,
            deprecated,
            deprecation_warning: None,
            openapi_schema: serde_json::json!({"type": "object", "title": name}),
            printer_columns: Vec::new(),
            selectable_fields: vec![format!("spec.{name}")],
        }
    }

    #[test]
    fn a_version_view_and_its_deprecation_warning() {
        let mut d = ResourceDescription::new("example.dev", "v1", "Widget", "widgets");
        d.versions = vec![
            v("v1", true, false),
            v("v1alpha1", false, true),
            v("v1beta1", false, true),
        ];
        let old = d.at_version("v1alpha1").unwrap();
        assert_eq!(old.version, "v1alpha1");
        assert_eq!(old.openapi_schema["title"], "v1alpha1");
        assert_eq!(old.selectable_fields, vec!["spec.v1alpha1"]);
        assert!(d.at_version("v2").is_none());
        d.versions[1].served = false;
        assert!(d.at_version("v1alpha1").is_none(), "not served");
        // apiextensions-apiserver's defaultDeprecationWarning: the newest served,
        // non-deprecated version above it.
        assert_eq!(
            d.deprecation_warning("v1beta1").unwrap(),
            "example.dev/v1beta1 Widget is deprecated; use example.dev/v1 Widget"
        );
        assert_eq!(d.deprecation_warning("v1"), None);
        d.versions[0].deprecated = true;
        assert_eq!(
            d.deprecation_warning("v1beta1").unwrap(),
            "example.dev/v1beta1 Widget is deprecated"
        );
        d.versions[2].deprecation_warning = Some("gone soon".into());
        assert_eq!(d.deprecation_warning("v1beta1").unwrap(), "gone soon");
        // One version only (WIT 0.1): itself.
        let one = ResourceDescription::new("example.dev", "v1", "Widget", "widgets");
        assert_eq!(one.at_version("v1").unwrap(), one);
    }
}

//! The generic strategy of a custom resource of one CRD version: what kube-apiserver does to
//! every custom resource (`apiextensions-apiserver/pkg/registry/customresource/strategy.go`,
//! `status_strategy.go`, `validator.go`, and the decoding of `pkg/apiserver/
//! customresource_handler.go`), from the CRD's JSON — for the strategy plugin that serves
//! CRDs to call from its hooks.
//!
//! - [`CustomResource::decode`]: a written object pruned (unknown fields by `fieldValidation`:
//!   `Strict` refuses them, `Warn` warns, `Ignore` drops them), its non-nullable `null`s
//!   dropped and its defaults filled in; [`CustomResource::read`] prunes and defaults a stored
//!   object for an answer.
//! - [`CustomResource::prepare_for_create`], [`…_for_update`](CustomResource::prepare_for_update),
//!   [`…_for_status_update`](CustomResource::prepare_for_status_update): `generation`, and
//!   `status` kept to the status subresource when it is enabled.
//! - [`CustomResource::validate`]: `apiVersion` and `kind`, the schema, the CEL rules.

use crate::cel_validation::{CompileReport, Rules};
use crate::structural::Structural;
use crate::{defaulting, listtype, pruning, validation};
use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};

/// `fieldValidation` (`metav1.FieldValidation*`): what unknown fields in a write do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValidation {
    Strict,
    Warn,
    Ignore,
}

/// One version of a CRD, ready to handle its custom resources.
pub struct CustomResource {
    api_version: String,
    kind: String,
    schema: Structural,
    rules: Rules,
    /// `spec.preserveUnknownFields` (v1: always false) or a root that preserves them.
    preserve_unknown_fields: bool,
    status_subresource: bool,
}

/// Why a write was refused before validation: `fieldValidation=Strict` found unknown fields
/// (kube: 400 BadRequest, `strict decoding error: unknown field "spec.x", …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictDecodingError(pub String);

impl CustomResource {
    /// The custom resources of `version` of `crd` (a CustomResourceDefinition's JSON), and
    /// what compiling its rules reported. `None`: the CRD has no such version.
    pub fn new(crd: &Json, version: &str) -> Option<(CustomResource, CompileReport)> {
        let spec = crd.get("spec")?;
        let v = spec
            .get("versions")?
            .as_array()?
            .iter()
            .find(|v| v.get("name").and_then(Json::as_str) == Some(version))?;
        let schema_json = v
            .get("schema")
            .and_then(|s| s.get("openAPIV3Schema"))
            .cloned()
            .unwrap_or(Json::Null);
        let schema = Structural::from_json(&schema_json);
        let (rules, report) = Rules::compile(&schema_json);
        let group = spec.get("group").and_then(Json::as_str).unwrap_or("");
        let kind = spec
            .get("names")
            .and_then(|n| n.get("kind"))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let status_subresource = v
            .get("subresources")
            .and_then(|s| s.get("status"))
            .is_some();
        let preserve_unknown_fields =
            spec.get("preserveUnknownFields").and_then(Json::as_bool) == Some(true);
        let cr = CustomResource {
            api_version: format!("{group}/{version}"),
            kind,
            schema,
            rules,
            preserve_unknown_fields,
            status_subresource,
        };
        Some((cr, report))
    }

    /// A written object as kube decodes it: pruned, then defaulted. Returns the warnings
    /// (`unknown field "spec.x"` under `Warn`). Errors: unknown fields under `Strict`.
    pub fn decode(
        &self,
        obj: &mut Json,
        field_validation: FieldValidation,
    ) -> Result<Vec<String>, StrictDecodingError> {
        let mut warnings = Vec::new();
        if !self.preserve_unknown_fields {
            let unknown = pruning::prune(obj, Some(&self.schema), true);
            let quoted: Vec<String> = unknown
                .iter()
                .map(|p| format!("unknown field \"{p}\""))
                .collect();
            match field_validation {
                FieldValidation::Strict if !quoted.is_empty() => {
                    return Err(StrictDecodingError(format!(
                        "strict decoding error: {}",
                        quoted.join(", ")
                    )));
                }
                FieldValidation::Warn => warnings = quoted,
                _ => {}
            }
        }
        defaulting::prune_non_nullable_nulls_without_defaults(obj, &self.schema);
        defaulting::default(obj, &self.schema);
        Ok(warnings)
    }

    /// A stored object as kube answers it: pruned and defaulted by the current schema, so a
    /// schema change applies to objects written before it.
    pub fn read(&self, obj: &mut Json) {
        if !self.preserve_unknown_fields {
            pruning::prune(obj, Some(&self.schema), true);
        }
        defaulting::prune_non_nullable_nulls_without_defaults(obj, &self.schema);
        defaulting::default(obj, &self.schema);
    }

    /// An object converted to this version from the one it is stored in, as kube answers it:
    /// pruned by this version's schema, without defaulting (`schemaCoercingConverter` in
    /// apiextensions-apiserver/pkg/apiserver/customresource_handler.go prunes after every
    /// conversion; defaults apply on decode from storage, in the storage version).
    pub fn prune_converted(&self, obj: &mut Json) {
        if !self.preserve_unknown_fields {
            pruning::prune(obj, Some(&self.schema), true);
        }
        defaulting::prune_non_nullable_nulls_without_defaults(obj, &self.schema);
    }

    /// A create: `generation` 1, and no `status` when the status subresource is enabled.
    pub fn prepare_for_create(&self, obj: &mut Json) {
        if let (true, Some(o)) = (self.status_subresource, obj.as_object_mut()) {
            o.remove("status");
        }
        if let Some(meta) = obj.get_mut("metadata").and_then(Json::as_object_mut) {
            meta.insert("generation".into(), Json::from(1));
        }
    }

    /// An update: `status` kept as it was when the status subresource is enabled, and
    /// `generation` + 1 when anything but `metadata` changed.
    pub fn prepare_for_update(&self, new: &mut Json, old: &Json) {
        if self.status_subresource {
            if let Some(n) = new.as_object_mut() {
                match old.get("status") {
                    Some(s) => {
                        n.insert("status".into(), s.clone());
                    }
                    None => {
                        n.remove("status");
                    }
                }
            }
        }
        fn non_metadata(o: &Json) -> Option<Vec<(&String, &Json)>> {
            let m = o.as_object()?;
            Some(m.iter().filter(|(k, _)| k.as_str() != "metadata").collect())
        }
        let generation = |o: &Json| {
            o.get("metadata")
                .and_then(|m| m.get("generation"))
                .and_then(Json::as_i64)
                .unwrap_or(0)
        };
        let next = if non_metadata(new) != non_metadata(old) {
            generation(old) + 1
        } else {
            generation(old)
        };
        if let Some(meta) = new.get_mut("metadata").and_then(Json::as_object_mut) {
            meta.insert("generation".into(), Json::from(next));
        }
    }

    /// A status update: the old object with the new `status` (and the new managed fields).
    pub fn prepare_for_status_update(&self, new: &mut Json, old: &Json) {
        let status = new.get("status").cloned();
        let managed = new
            .get("metadata")
            .and_then(|m| m.get("managedFields"))
            .cloned();
        *new = old.clone();
        if let Some(o) = new.as_object_mut() {
            match status {
                Some(s) => {
                    o.insert("status".into(), s);
                }
                None => {
                    o.remove("status");
                }
            }
        }
        if let (Some(mf), Some(meta)) = (
            managed,
            new.get_mut("metadata").and_then(Json::as_object_mut),
        ) {
            meta.insert("managedFields".into(), mf);
        }
    }

    /// `apiVersion` and `kind`, the schema and the CEL rules (`old`: on an update, when the
    /// values equal to their old ones are not validated again: kube's ratcheting).
    pub fn validate(&self, obj: &Json, old: Option<&Json>) -> ErrorList {
        let mut errors = Vec::new();
        let kind = obj.get("kind").and_then(Json::as_str).unwrap_or("");
        if kind != self.kind {
            let detail = format!("must be {}", self.kind);
            errors.push(field::invalid(&Path::new("kind"), kind, detail));
        }
        let api_version = obj.get("apiVersion").and_then(Json::as_str).unwrap_or("");
        if api_version != self.api_version {
            let detail = format!("must be {}", self.api_version);
            errors.push(field::invalid(
                &Path::new("apiVersion"),
                api_version,
                detail,
            ));
        }
        errors.extend(match old {
            Some(old) => validation::validate_update(obj, old, &self.schema),
            None => validation::validate(obj, &self.schema),
        });
        errors.extend(self.rules.validate(&self.schema, obj, old));
        // kube's strategy checks set and map uniqueness on every create, and on an update only
        // when the old object passed (strategy.go `ValidateUpdate`).
        let root = Path::new("");
        let old_ok = old.is_none_or(|o| {
            listtype::validate_list_sets_and_maps(&root, &self.schema, o).is_empty()
        });
        if old_ok {
            errors.extend(listtype::validate_list_sets_and_maps(
                &root,
                &self.schema,
                obj,
            ));
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Json {
        json!({"spec": {"group": "example.com", "names": {"kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.replicas <= 5", "message": "at most 5"}],
                        "properties": {"replicas": {"type": "integer", "default": 1, "minimum": 0}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}})
    }

    fn widget(spec: Json) -> Json {
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
    }

    #[test]
    fn a_write_is_decoded_prepared_and_validated_as_kube_does() {
        let (cr, report) = CustomResource::new(&crd(), "v1").unwrap();
        assert!(report.errors.is_empty());
        let mut obj = widget(json!({"extra": 1}));
        assert_eq!(
            cr.decode(&mut obj, FieldValidation::Strict),
            Err(StrictDecodingError(
                "strict decoding error: unknown field \"spec.extra\"".into()
            ))
        );
        let mut obj = widget(json!({"extra": 1}));
        let warnings = cr.decode(&mut obj, FieldValidation::Warn).unwrap();
        assert_eq!(warnings, ["unknown field \"spec.extra\""]);
        assert_eq!(obj["spec"], json!({"replicas": 1}));
        obj["status"] = json!({"ready": true});
        cr.prepare_for_create(&mut obj);
        assert_eq!(obj["metadata"]["generation"], 1);
        assert!(obj.get("status").is_none());
        assert!(cr.validate(&obj, None).is_empty());

        // An update of the spec bumps the generation; status stays the old one.
        let old = obj.clone();
        let mut new = obj.clone();
        new["spec"]["replicas"] = json!(7);
        new["status"] = json!({"ready": true});
        cr.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert!(new.get("status").is_none());
        let errors: Vec<String> = cr
            .validate(&new, Some(&old))
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect();
        assert_eq!(errors, ["spec: Invalid value: \"object\": at most 5"]);

        // A status update keeps everything but the status.
        let mut status = new.clone();
        status["status"] = json!({"ready": true});
        status["spec"]["replicas"] = json!(3);
        cr.prepare_for_status_update(&mut status, &old);
        assert_eq!(status["spec"], old["spec"]);
        assert_eq!(status["status"], json!({"ready": true}));

        let mut wrong = widget(json!({}));
        wrong["kind"] = json!("Gadget");
        let e = cr.validate(&wrong, None);
        assert_eq!(e[0].body(), "Invalid value: \"Gadget\": must be Widget");
    }
}

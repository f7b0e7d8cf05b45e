//! OpenAPI v3 (`/openapi/v3` and one document per group-version), built from the plugins'
//! schemas with what kubectl needs (`k8s.io/kube-openapi/pkg/handler3`,
//! `k8s.io/apiserver/pkg/endpoints/openapi`): every operation carries `x-kubernetes-action` and
//! `x-kubernetes-group-version-kind`; PATCH carries an operation-level `fieldValidation`
//! parameter and the patch content types the server accepts; each schema lists its GVK.

use super::store::Store;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";

/// The patch content types the server accepts (kept in step with the PATCH handler).
pub const PATCH_TYPES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// The schema name of a kind: `io.k8s.api.core.v1.Pod` for core, `dev.example.v1.Widget` (the
/// group reversed) otherwise, as kube-apiserver names CRD schemas.
pub fn schema_name(group: &str, version: &str, kind: &str) -> String {
    if group.is_empty() {
        format!("io.k8s.api.core.{version}.{kind}")
    } else {
        let rev: Vec<&str> = group.split('.').rev().collect();
        format!("{}.{version}.{kind}", rev.join("."))
    }
}

/// The key of a group-version in the root document: `api/v1` or `apis/<group>/<version>`.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// One group-version's document, serialized once when built (a snapshot serves it many
/// times), with the hash `/openapi/v3` lists for it.
#[derive(Clone)]
pub struct OpenApiDocument {
    /// The document's JSON.
    pub body: bytes::Bytes,
    /// The first 16 bytes of the body's SHA-256, upper-case hex (kube-openapi's handler3
    /// hashes each document for its `serverRelativeURL`).
    pub hash: String,
}

impl OpenApiDocument {
    /// The document of the group-version `gv` ([`gv_path`]) serving `resources`.
    pub fn new(gv: &str, resources: &[&Store]) -> OpenApiDocument {
        let body = bytes::Bytes::from(document(gv, resources).to_string());
        let hash = hex::encode(&Sha256::digest(&body)[..16]).to_uppercase();
        OpenApiDocument { body, hash }
    }
}

/// The root `/openapi/v3`: one entry per group-version (`docs` by [`gv_path`]) with its
/// document's hash in the URL.
pub fn root<'a>(docs: impl Iterator<Item = (&'a String, &'a OpenApiDocument)>) -> Value {
    let paths: Map<String, Value> = docs
        .map(|(gv, doc)| {
            (
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={}", doc.hash)}),
            )
        })
        .collect();
    json!({"paths": paths})
}

fn gvk(r: &Store) -> Value {
    json!({"group": r.description.group, "version": r.description.version, "kind": r.description.kind})
}

fn op(r: &Store, action: &str, id: &str, response: &Value, extra: Value) -> Value {
    let mut o = json!({
        "operationId": id,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(r),
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": response}}},
                      "401": {"description": "Unauthorized"}},
    });
    if let (Some(o), Some(e)) = (o.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    o
}

fn query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

fn document(gv: &str, resources: &[&Store]) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert(OBJECT_META.into(), object_meta_schema());
    schemas.insert(LIST_META.into(), json!({"type": "object", "description": "ListMeta describes metadata that synthetic resources must have, including lists.",
        "properties": {"continue": {"type": "string"}, "remainingItemCount": {"type": "integer", "format": "int64"},
                       "resourceVersion": {"type": "string"}}}));
    schemas.insert(STATUS.into(), json!({"type": "object", "description": "Status is a return value for calls that don't return other objects.",
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "reason": {"type": "string"},
                       "status": {"type": "string"}, "details": {"type": "object"}}}));
    let field_validation = query(
        "fieldValidation",
        "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.",
    );
    let dry_run = query(
        "dryRun",
        "When present, indicates that modifications should not be persisted. Valid values are: All",
    );
    let field_manager = query(
        "fieldManager",
        "fieldManager is a name associated with the actor or entity that is making these changes.",
    );
    for r in resources {
        let d = &r.description;
        let name = schema_name(&d.group, &d.version, &d.kind);
        let list_name = schema_name(&d.group, &d.version, &d.list_kind);
        let obj_ref = json!({"$ref": format!("#/components/schemas/{name}")});
        let list_ref = json!({"$ref": format!("#/components/schemas/{list_name}")});
        let mut schema = d.openapi_schema.clone();
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert(
                "metadata".into(),
                json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}], "default": {},
                       "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}),
            );
        }
        schema["x-kubernetes-group-version-kind"] = json!([gvk(r)]);
        schemas.insert(name.clone(), schema);
        schemas.insert(
            list_name.clone(),
            json!({"type": "object", "description": format!("{} is a list of {}.", d.list_kind, d.kind),
                   "required": ["items"],
                   "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                  "items": {"type": "array", "items": obj_ref.clone()},
                                  "metadata": {"allOf": [{"$ref": format!("#/components/schemas/{LIST_META}")}], "default": {}}},
                   "x-kubernetes-group-version-kind": [{"group": d.group, "version": d.version, "kind": d.list_kind}]}),
        );
        let base = format!("/{gv}");
        let (collection, item) = if d.namespaced {
            (
                format!("{base}/namespaces/{{namespace}}/{}", d.plural),
                format!("{base}/namespaces/{{namespace}}/{}/{{name}}", d.plural),
            )
        } else {
            (
                format!("{base}/{}", d.plural),
                format!("{base}/{}/{{name}}", d.plural),
            )
        };
        let id = |verb: &str| {
            format!(
                "{verb}{}{}",
                d.kind,
                if d.namespaced { "Namespaced" } else { "" }
            )
        };
        let patch_body = {
            let content: Map<String, Value> = PATCH_TYPES
                .iter()
                .map(|t| (t.to_string(), json!({"schema": {"type": "object"}})))
                .collect();
            json!({"content": content, "required": true})
        };
        let write_params = json!([dry_run, field_manager, field_validation]);
        let mut item_ops = json!({
            "get": op(r, "get", &format!("read{}", &id("")[..]), &obj_ref, json!({})),
            "put": op(r, "put", &id("replace"), &obj_ref, json!({"parameters": write_params,
                       "requestBody": {"content": {"application/json": {"schema": obj_ref}}, "required": true}})),
            "patch": op(r, "patch", &id("patch"), &obj_ref, json!({"parameters": write_params, "requestBody": patch_body})),
            "delete": op(r, "delete", &id("delete"), &json!({"$ref": format!("#/components/schemas/{STATUS}")}), json!({"parameters": [dry_run]})),
        });
        item_ops["parameters"] =
            json!([{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}]);
        paths.insert(item.clone(), item_ops);
        paths.insert(
            collection.clone(),
            json!({
                "get": op(r, "list", &id("list"), &list_ref, json!({})),
                "post": op(r, "post", &id("create"), &obj_ref, json!({"parameters": write_params,
                            "requestBody": {"content": {"application/json": {"schema": obj_ref}}, "required": true}})),
                "delete": op(r, "deletecollection", &id("deleteCollection"), &json!({"$ref": format!("#/components/schemas/{STATUS}")}), json!({})),
            }),
        );
        if d.has_status() {
            paths.insert(
                format!("{item}/status"),
                json!({
                    "get": op(r, "get", &id("read").replacen("read", "readStatus", 1), &obj_ref, json!({})),
                    "put": op(r, "put", &id("replaceStatus"), &obj_ref, json!({"parameters": write_params})),
                    "patch": op(r, "patch", &id("patchStatus"), &obj_ref, json!({"parameters": write_params, "requestBody": patch_body})),
                }),
            );
        }
        if d.namespaced {
            paths.insert(
                format!("{base}/{}", d.plural),
                json!({"get": op(r, "list", &format!("list{}ForAllNamespaces", d.kind), &list_ref, json!({}))}),
            );
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "wasm-apiserver", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// kube's `ObjectMeta` (`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`) as an OpenAPI v3
/// schema, inlined: what every resource's `metadata` is.
pub fn object_meta_schema() -> Value {
    let s = |d: &str| json!({"type": "string", "description": d});
    let map = |d: &str| json!({"type": "object", "additionalProperties": {"type": "string", "default": ""}, "description": d});
    json!({
        "type": "object",
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "properties": {
            "name": s("Name must be unique within a namespace."),
            "generateName": s("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
            "namespace": s("Namespace defines the space within which each name must be unique."),
            "uid": s("UID is the unique in time and space value for this object. Populated by the system. Read-only."),
            "resourceVersion": s("An opaque value that represents the internal version of this object. Populated by the system. Read-only."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only."},
            "creationTimestamp": s("CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only."),
            "deletionTimestamp": s("DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Populated by the system. Read-only."),
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description": "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system."},
            "labels": map("Map of string keys and values that can be used to organize and categorize (scope and select) objects."),
            "annotations": map("Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."),
            "finalizers": {"type": "array", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "set",
                           "description": "Must be empty before the object is deleted from the registry."},
            "ownerReferences": {"type": "array", "items": {"type": "object"}, "description": "List of objects depended by this object."},
            "managedFields": {"type": "array", "items": {"type": "object"}, "description": "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow."}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_follow_kube_apiserver() {
        assert_eq!(schema_name("", "v1", "Pod"), "io.k8s.api.core.v1.Pod");
        assert_eq!(
            schema_name("example.dev", "v1", "Widget"),
            "dev.example.v1.Widget"
        );
    }
}

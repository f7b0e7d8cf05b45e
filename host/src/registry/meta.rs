//! System metadata handled by the host around the strategy hooks, as kube-apiserver's REST
//! layer does: `WipeObjectMetaSystemFields` / `FillObjectMetaSystemFields`
//! (`k8s.io/apiserver/pkg/registry/rest/meta.go`), the namespace check of `BeforeCreate`, the
//! fields `BeforeUpdate` restores from the old object, and `ValidateObjectMetaAccessor(Update)`
//! with the generic path-segment name rule.

use crate::strategy::{ErrorType, FieldError};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{json, Value};
use wasm_apiserver_apimachinery::field::Path;
use wasm_apiserver_apimachinery::validation::{self, NameRule};

use wasm_apiserver_apimachinery::meta::accessor_mut;
use wasm_apiserver_apimachinery::time::now;

/// `WipeObjectMetaSystemFields`: a client may not set these on create.
pub fn wipe_system_fields(obj: &mut Value) {
    let m = accessor_mut(obj).into_map();
    for f in [
        "creationTimestamp",
        "uid",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        m.remove(f);
    }
}

/// `FillObjectMetaSystemFields`: a new uid and `creationTimestamp = now`.
pub fn fill_system_fields(obj: &mut Value) {
    let m = accessor_mut(obj).into_map();
    m.insert("creationTimestamp".into(), json!(now()));
    m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
}

/// `names.SimpleNameGenerator`: `base` (cut to 58 characters) + 5 random characters from
/// `bcdfghjklmnpqrstvwxz2456789` (`k8s.io/apiserver/pkg/storage/names/generate.go`).
pub fn generate_name(base: &str) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let base: String = base.chars().take(58).collect();
    let mut rng = rand::rng();
    let suffix: String = (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{base}{suffix}")
}

/// The namespace check of `BeforeCreate`/`BeforeUpdate`
/// (`EnsureObjectNamespaceMatchesRequestNamespace` and `ExpectedNamespaceForScope`):
/// cluster-scoped objects lose any namespace; namespaced ones take the request's when empty.
/// Errors: a mismatch (400 at the edge), with kube-apiserver's message.
pub fn ensure_namespace(obj: &mut Value, namespaced: bool, request_ns: &str) -> Result<(), String> {
    let m = accessor_mut(obj).into_map();
    if !namespaced {
        m.remove("namespace");
        return Ok(());
    }
    let ns = m
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if ns.is_empty() {
        m.insert("namespace".into(), json!(request_ns));
        Ok(())
    } else if ns != request_ns {
        Err(
            "the namespace of the provided object does not match the namespace sent on the request"
                .into(),
        )
    } else {
        Ok(())
    }
}

pub use wasm_apiserver_apimachinery::meta::restore_from_old;

fn object_meta(obj: &Value) -> Result<ObjectMeta, Vec<FieldError>> {
    serde_json::from_value(obj.get("metadata").cloned().unwrap_or(json!({}))).map_err(|e| {
        vec![FieldError {
            error_type: ErrorType::Invalid,
            field: "metadata".into(),
            bad_value: None,
            detail: format!("invalid object metadata: {e}"),
        }]
    })
}

/// `ValidateObjectMetaAccessor(meta, namespaced, path.ValidatePathSegmentName, "metadata")`.
pub fn validate_create(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    match object_meta(obj) {
        Ok(m) => validation::validate_object_meta(
            &m,
            namespaced,
            NameRule::PathSegment,
            &Path::new("metadata"),
        ),
        Err(e) => e,
    }
}

/// `ValidateObjectMetaAccessorUpdate` + `ValidateObjectMetaAccessor` on the new object.
pub fn validate_update(new: &Value, old: &Value, namespaced: bool) -> Vec<FieldError> {
    match (object_meta(new), object_meta(old)) {
        (Ok(n), Ok(o)) => {
            let mut errs = validation::validate_object_meta(
                &n,
                namespaced,
                NameRule::PathSegment,
                &Path::new("metadata"),
            );
            errs.extend(validation::validate_object_meta_update(
                &n,
                &o,
                &Path::new("metadata"),
            ));
            errs
        }
        (Err(e), _) | (_, Err(e)) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_follow_kubernetes() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        let long = generate_name(&"x".repeat(80));
        assert_eq!(long.len(), 63);
    }

    #[test]
    fn namespace_rules() {
        let mut o = json!({"metadata": {"namespace": "a"}});
        assert!(ensure_namespace(&mut o, true, "b").is_err());
        let mut o = json!({"metadata": {}});
        ensure_namespace(&mut o, true, "b").unwrap();
        assert_eq!(o["metadata"]["namespace"], "b");
        let mut o = json!({"metadata": {"namespace": "a"}});
        ensure_namespace(&mut o, false, "").unwrap();
        assert!(o["metadata"].get("namespace").is_none());
    }

    #[test]
    fn path_segment_names_are_enforced() {
        let errs = validate_create(&json!({"metadata": {"name": "a/b"}}), false);
        assert_eq!(errs[0].field, "metadata.name");
    }
}

//! `__PLURAL__.__GROUP__/v1`: a wasm-apiserver strategy plugin (written by `wasm-apiserver
//! plugin new`). One rule to start from: `spec.message` is required.

use wasm_apiserver_sdk::prelude::*;

pub struct __KIND__Strategy;

impl Strategy for __KIND__Strategy {
    type Object = Value;

    fn describe() -> ResourceDescription {
        ResourceDescription {
            openapi_schema: json!({
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": {
                        "type": "object",
                        "properties": {"message": {"type": "string", "description": "What it says."}}
                    },
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            }),
            example: Some(json!({
                "apiVersion": "__GROUP__/v1", "kind": "__KIND__",
                "metadata": {"name": "example", "namespace": "default"},
                "spec": {"message": "hello"}
            })),
            ..ResourceDescription::new("__GROUP__", "v1", "__KIND__", "__PLURAL__")
        }
    }

    fn validate(obj: &Value) -> ErrorList {
        match obj.pointer("/spec/message").and_then(Value::as_str) {
            Some(m) if !m.is_empty() => Vec::new(),
            _ => vec![field::required(
                &Path::new("spec").child("message"),
                "a __SINGULAR__ must say something",
            )],
        }
    }

    fn validate_update(new: &Value, _old: &Value) -> ErrorList {
        Self::validate(new)
    }
}

export_strategy!(__KIND__Strategy);

#[cfg(test)]
mod tests {
    /// The fixtures `wasm-apiserver plugin test` runs against the component, natively.
    #[test]
    fn fixtures() {
        wasm_apiserver_sdk::testing::run_fixtures::<super::__KIND__Strategy>(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures"
        ));
    }
}

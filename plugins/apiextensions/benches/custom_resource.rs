//! What the CRD layer costs per custom resource write, natively (issue 32's first figure; the
//! same inside the CRD strategy component comes with it): compiling a CRD version (its schema and
//! CEL rules, once per CRD), decoding a write (pruning by `fieldValidation=Strict`, nulls,
//! defaults) and validating it (apiVersion/kind, the schema, three CEL rules, one a transition
//! rule). The object has 10 containers of 6 fields each (~1.6 KB of JSON). Medians of 15
//! batches, µs.
//!
//! Run: `cargo bench -p wasm-apiserver-apiextensions --bench custom_resource`

use serde_json::json;
use std::time::Instant;
use wasm_apiserver_apiextensions::custom_resource::{CustomResource, FieldValidation};

fn median_us<F: FnMut()>(per_batch: usize, mut f: F) -> f64 {
    let mut samples: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_batch {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / per_batch as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[samples.len() / 2]
}

fn main() {
    let container = json!({"type": "object", "required": ["name", "image"], "properties": {
        "name": {"type": "string", "maxLength": 63, "pattern": "^[a-z0-9-]+$"},
        "image": {"type": "string", "maxLength": 253},
        "cpu": {"x-kubernetes-int-or-string": true},
        "memory": {"type": "string", "default": "128Mi"},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "env": {"type": "object", "maxProperties": 16, "additionalProperties": {"type": "string"}}}});
    let crd = json!({"spec": {"group": "example.com", "names": {"kind": "App"},
        "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "self.replicas <= self.maxReplicas", "message": "replicas over maxReplicas"},
                    {"rule": "self.containers.all(c, c.image.startsWith('registry.example.com/'))"},
                    {"rule": "self.mode == oldSelf.mode", "message": "mode is immutable"}],
                "properties": {
                    "replicas": {"type": "integer", "default": 1},
                    "maxReplicas": {"type": "integer", "default": 10},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "containers": {"type": "array", "maxItems": 32,
                                   "x-kubernetes-list-type": "map",
                                   "x-kubernetes-list-map-keys": ["name"], "items": container}}}}}}}]}});
    let containers: Vec<_> = (0..10)
        .map(|i| {
            json!({"name": format!("c{i}"), "image": format!("registry.example.com/app:{i}"),
                        "cpu": "500m", "port": 8000 + i, "env": {"A": "1", "B": "2"}})
        })
        .collect();
    let object = json!({"apiVersion": "example.com/v1", "kind": "App",
                        "metadata": {"name": "app", "namespace": "default"},
                        "spec": {"replicas": 3, "containers": containers}});
    let compile = median_us(20, || {
        std::hint::black_box(CustomResource::new(&crd, "v1").unwrap());
    });
    let (cr, _) = CustomResource::new(&crd, "v1").unwrap();
    let mut decoded = object.clone();
    cr.decode(&mut decoded, FieldValidation::Strict).unwrap();
    assert!(cr.validate(&decoded, None).is_empty());
    let decode = median_us(500, || {
        let mut o = object.clone();
        std::hint::black_box(cr.decode(&mut o, FieldValidation::Strict).unwrap());
    });
    let clone = median_us(500, || {
        std::hint::black_box(object.clone());
    });
    let validate_create = median_us(500, || {
        std::hint::black_box(cr.validate(&decoded, None));
    });
    let mut updated = decoded.clone();
    updated["spec"]["replicas"] = json!(4);
    let validate_update = median_us(500, || {
        std::hint::black_box(cr.validate(&updated, Some(&decoded)));
    });
    println!("| step | µs |");
    println!("|---|---:|");
    println!("| compile the CRD version (schema, 3 rules) | {compile:.1} |");
    println!("| decode a write (prune, defaults), clone included | {decode:.1} |");
    println!("| (the object clone alone) | {clone:.1} |");
    println!("| validate a create (schema + 2 rules) | {validate_create:.1} |");
    println!("| validate an update (schema + 3 rules, ratcheting) | {validate_update:.1} |");
}

//! Compile and evaluation times of typical rules (issue 31's benchmark), natively or — built
//! for `wasm32-wasip2` — inside a component (`host/benches/cel_component.rs` runs both and
//! prints the ratio). Each rule is compiled checked against a CRD-like schema (parse, type
//! check, cost estimate) and evaluated with the run-time cost budget on. Prints one table row
//! per rule: µs per compile, µs per evaluation (medians of 15 batches), the evaluation's cost.
//!
//! Run: `cargo run --release -p wasm-apiserver-cel --example rules`
//! (or `cargo bench -p wasm-apiserver-cel --bench rules`, the same program).

use serde_json::json;
use std::time::Instant;
use wasm_apiserver_cel::schema::schema_type;
use wasm_apiserver_cel::{Expression, Variables};

fn median_us(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[samples.len() / 2]
}

fn time<F: FnMut()>(per_batch: usize, mut f: F) -> f64 {
    let samples = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_batch {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / per_batch as f64
        })
        .collect();
    median_us(samples)
}

pub fn main() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "hosts": {"type": "array", "maxItems": 100,
                  "items": {"type": "string", "maxLength": 253}},
        "replicas": {"type": "integer"},
        "resources": {"type": "object", "properties": {
            "requests": {"type": "string"}, "limits": {"type": "string"}}}}}}});
    let self_type = schema_type(&schema, "selfType", true).expect("an object schema");
    let vars = Variables::new()
        .with("self", self_type.clone())
        .with("oldSelf", self_type);
    let hosts: Vec<String> = (0..100).map(|i| format!("host-{i}.example.com")).collect();
    let object = json!({"spec": {"hosts": hosts, "replicas": 5,
                                 "resources": {"requests": "500Mi", "limits": "1Gi"}}});
    let old = json!({"spec": {"replicas": 3}});
    let rules = [
        (
            "regex over a list of 100",
            "self.spec.hosts.all(h, h.matches('^[a-z0-9-]+(\\\\.[a-z0-9-]+)*$'))",
        ),
        (
            "quantity comparison",
            "quantity(self.spec.resources.requests).isLessThan(quantity(self.spec.resources.limits))",
        ),
        (
            "transition rule",
            "self.spec.replicas >= oldSelf.spec.replicas",
        ),
    ];
    println!("| rule | compile µs | evaluate µs | cost |");
    println!("|---|---:|---:|---:|");
    for (name, rule) in rules {
        let compile = time(200, || {
            std::hint::black_box(Expression::compile_checked(rule, &vars).unwrap());
        });
        let e = Expression::compile_checked(rule, &vars).unwrap();
        let out = e
            .evaluate_with_limit(&[("self", &object), ("oldSelf", &old)], 1_000_000)
            .unwrap();
        assert_eq!(out.value, wasm_apiserver_cel::Value::Bool(true), "{rule}");
        let evaluate = time(200, || {
            std::hint::black_box(e.evaluate(&[("self", &object), ("oldSelf", &old)]).unwrap());
        });
        println!("| {name} | {compile:.1} | {evaluate:.1} | {} |", out.cost);
    }
}

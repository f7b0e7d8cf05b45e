//! Compile and evaluation times of typical rules, native (issue 31's benchmark; the same rules
//! inside a component come with the CRD strategy plugin). Prints µs per compile and per
//! evaluation, the median of 15 batches.
//!
//! Run: `cargo bench -p wasm-apiserver-cel --bench rules`

use serde_json::json;
use std::time::Instant;
use wasm_apiserver_cel::Expression;

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

fn main() {
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
    println!("| rule | compile µs | evaluate µs |");
    println!("|---|---:|---:|");
    for (name, rule) in rules {
        let compile = time(200, || {
            std::hint::black_box(Expression::compile(rule).unwrap());
        });
        let e = Expression::compile(rule).unwrap();
        assert_eq!(
            e.evaluate(&[("self", &object), ("oldSelf", &old)]),
            Ok(wasm_apiserver_cel::Value::Bool(true)),
            "{rule}"
        );
        let evaluate = time(200, || {
            std::hint::black_box(e.evaluate(&[("self", &object), ("oldSelf", &old)]).unwrap());
        });
        println!("| {name} | {compile:.1} | {evaluate:.1} |");
    }
}

//! The rules benchmark, natively: the program of `examples/rules.rs`.
//!
//! Run: `cargo bench -p wasm-apiserver-cel --bench rules`

#[path = "../examples/rules.rs"]
mod rules;

fn main() {
    rules::main();
}

#!/usr/bin/env bash
# Build every strategy plugin for wasm32-wasip2 (release) and lay them out:
#   target/plugins/       the standard plugins + examples/widgets (what the server loads)
#   target/test-plugins/  test-only components (misbehaving, and its bad-describe / wit-next builds)
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target list --installed 2>/dev/null | grep -q '^wasm32-wasip2$' || rustup target add wasm32-wasip2
out=target/wasm32-wasip2/release
cargo build --release --target wasm32-wasip2 -p pods -p configmaps -p namespaces -p widgets -p misbehaving
mkdir -p target/plugins target/test-plugins
for p in pods configmaps namespaces widgets; do cp "$out/$p.wasm" "target/plugins/$p.wasm.tmp" && mv "target/plugins/$p.wasm.tmp" "target/plugins/$p.wasm"; done
cp "$out/misbehaving.wasm" target/test-plugins/misbehaving.wasm
for f in bad-describe wit-next strict trap-describe other-plural; do
  cargo build --release --target wasm32-wasip2 -p misbehaving --features "$f"
  cp "$out/misbehaving.wasm" "target/test-plugins/misbehaving-$f.wasm"
done
# Leave the default build in place so that later incremental builds start from it.
cargo build --release --target wasm32-wasip2 -p misbehaving
ls -l target/plugins target/test-plugins

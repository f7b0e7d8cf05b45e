#!/usr/bin/env bash
# Build __NAME__.wasm (a WebAssembly component) with cargo for wasm32-wasip2.
set -euo pipefail
cd "$(dirname "$0")"
rustup target list --installed 2>/dev/null | grep -q '^wasm32-wasip2$' || rustup target add wasm32-wasip2
cargo build --release --target wasm32-wasip2
cp "${CARGO_TARGET_DIR:-target}/wasm32-wasip2/release/__CRATE__.wasm" __NAME__.wasm
echo "built __NAME__.wasm"

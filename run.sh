#!/usr/bin/env bash
# The README's first command: set up, build, and run the server on the embedded store with the
# standard plugins (pods, configmaps, secrets, serviceaccounts, namespaces, leases, RBAC) and the widgets example loaded, serving HTTPS
# on :6443; the first start writes data/admin.kubeconfig (export KUBECONFIG=$PWD/data/admin.kubeconfig).
# Extra arguments go to wasm-apiserver (e.g. ./run.sh --secure-port 7443).
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
bash plugins/build.sh
cargo build --release -p wasm-apiserver
mkdir -p plugins.d/configured
cp target/plugins/*.wasm plugins.d/
cp target/plugins/configured/customresources.wasm plugins.d/configured/
exec ./target/release/wasm-apiserver --plugin-dir plugins.d --data-dir data --plugin-cache-dir data/plugin-cache "$@"

#!/usr/bin/env bash
# Build every strategy plugin for wasm32-wasip2 (release) and lay them out:
#   target/plugins/       the standard plugins (pods, configmaps, secrets, serviceaccounts, namespaces, leases, events (core/v1 and events.k8s.io/v1), the four RBAC
#                         resources) + examples/widgets (what the server loads); configured/customresources.wasm,
#                         the configured plugin that serves CustomResourceDefinitions
#   target/policies/      the example wasm admission policies (examples/policies/)
#   target/test-plugins/  test-only components (misbehaving, and its bad-describe / wit-next builds)
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target list --installed 2>/dev/null | grep -q '^wasm32-wasip2$' || rustup target add wasm32-wasip2
out=target/wasm32-wasip2/release
# Components are built with fat LTO and one codegen unit: every hook is one call into a single
# module, and inlining across the SDK, the plugin and k8s-openapi makes the create sequence of a
# pod ~10% faster (BENCHMARKS.md, "Strategy hooks"). Only the wasm32 artifacts are affected; the
# workspace's native release profile (incremental, for edit-build loops) is left alone.
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
cargo build --release --target wasm32-wasip2 -p pods -p configmaps -p secrets -p serviceaccounts -p namespaces -p leases -p widgets -p misbehaving -p customresources
# The CEL crate must build for components too (a CRD strategy plugin evaluates rules inside one),
# and its unit tests run inside one (host/tests/it/cel_in_component.rs): their WASI command.
cargo build --release --target wasm32-wasip2 -p wasm-apiserver-cel -p wasm-apiserver-apiextensions
mkdir -p target/plugins target/test-plugins
# So do the CRD crate's (the ported apiextensions-apiserver cases: pruning, defaulting, schema
# and CEL validation, list types, CRD validation, conversion).
for crate in cel apiextensions; do
  tests=$(cargo test --release --target wasm32-wasip2 -p "wasm-apiserver-$crate" --lib --no-run --message-format=json \
    | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])')
  cp "$tests" "target/test-plugins/$crate-tests.wasm"
done
for p in pods configmaps secrets serviceaccounts namespaces leases widgets; do cp "$out/$p.wasm" "target/plugins/$p.wasm.tmp" && mv "target/plugins/$p.wasm.tmp" "target/plugins/$p.wasm"; done
# The configured plugin serving every CustomResourceDefinition: not a plugin-folder resource of
# its own, so it lives beside them (the folder scan does not descend).
mkdir -p target/plugins/configured
cp "$out/customresources.wasm" target/plugins/configured/customresources.wasm.tmp && mv target/plugins/configured/customresources.wasm.tmp target/plugins/configured/customresources.wasm
# The Event plugins: one crate, one component per API (core/v1, events.k8s.io/v1).
for f in core events-k8s-io; do
  cargo build --release --target wasm32-wasip2 -p events --features "$f"
  name=$([ "$f" = core ] && echo events || echo "$f")
  cp "$out/events.wasm" "target/plugins/$name.wasm.tmp" && mv "target/plugins/$name.wasm.tmp" "target/plugins/$name.wasm"
done
# The RBAC plugins: one crate, one component per resource, chosen by feature.
for r in roles clusterroles rolebindings clusterrolebindings; do
  cargo build --release --target wasm32-wasip2 -p rbac --features "$r"
  cp "$out/rbac.wasm" "target/plugins/$r.wasm.tmp" && mv "target/plugins/$r.wasm.tmp" "target/plugins/$r.wasm"
done
cp "$out/misbehaving.wasm" target/test-plugins/misbehaving.wasm
for f in bad-describe wit-next strict trap-describe other-plural; do
  cargo build --release --target wasm32-wasip2 -p misbehaving --features "$f"
  cp "$out/misbehaving.wasm" "target/test-plugins/misbehaving-$f.wasm"
done
# Wasm admission policies (wit/admission/): the examples, served through AdmissionPlugin objects.
cargo build --release --target wasm32-wasip2 -p configmap-references
mkdir -p target/policies
cp "$out/configmap_references.wasm" target/policies/configmap-references.wasm.tmp && mv target/policies/configmap-references.wasm.tmp target/policies/configmap-references.wasm
# The test-only policy, validating and mutating.
cargo build --release --target wasm32-wasip2 -p misbehaving-policy --features mutating
cp "$out/misbehaving_policy.wasm" target/test-plugins/misbehaving-policy-mutating.wasm
cargo build --release --target wasm32-wasip2 -p misbehaving-policy
cp "$out/misbehaving_policy.wasm" target/test-plugins/misbehaving-policy.wasm
# Leave the default build in place so that later incremental builds start from it.
cargo build --release --target wasm32-wasip2 -p misbehaving
ls -l target/plugins target/test-plugins

#!/usr/bin/env bash
# Install what building and testing wasm-apiserver needs on a fresh Debian + rustup machine.
# Idempotent: installs only what is missing. Used by run.sh and test.sh.
#   - the wasm32-wasip2 Rust target (plugins)
#   - protobuf-compiler (etcd-client's build), etcd-server (etcd integration tests; with --test)
#   - the official Python client, `kubernetes` from PyPI, in a venv at target/pyenv (client
#     tests; with --test; python3 and python3-venv from Debian if missing)
#   - Node.js and npm (with --test; from Debian if missing), which plugins/build-languages.sh
#     uses to install componentize-js and the SDK tests run on
set -euo pipefail
want_etcd=0
[ "${1:-}" = "--test" ] && want_etcd=1

if ! rustup target list --installed 2>/dev/null | grep -q '^wasm32-wasip2$'; then
  rustup target add wasm32-wasip2
fi

pkgs=()
command -v protoc >/dev/null 2>&1 || pkgs+=(protobuf-compiler)
if [ "$want_etcd" = 1 ] && ! command -v etcd >/dev/null 2>&1; then pkgs+=(etcd-server); fi
if [ "$want_etcd" = 1 ] && ! command -v npm >/dev/null 2>&1; then pkgs+=(nodejs npm); fi
if [ "${#pkgs[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}"
fi

if [ "$want_etcd" = 1 ]; then
  venv="$(cd "$(dirname "$0")" && pwd)/target/pyenv"
  if ! "$venv/bin/python" -c "import kubernetes" >/dev/null 2>&1; then
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      sudo=""
      [ "$(id -u)" = 0 ] || sudo="sudo"
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3 python3-venv
      python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "kubernetes>=31,<38"
  fi
fi

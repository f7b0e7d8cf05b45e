#!/usr/bin/env bash
# Build __NAME__.wasm (a WebAssembly component, world __WORLD__) with componentize-py from
# PyPI, installed once in .venv (set COMPONENTIZE_PY to use another componentize-py).
set -euo pipefail
cd "$(dirname "$0")"
cpy=${COMPONENTIZE_PY:-.venv/bin/componentize-py}
if [ -z "${COMPONENTIZE_PY:-}" ] && ! "$cpy" --version >/dev/null 2>&1; then
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "componentize-py==__PY_VERSION__"
fi
"$cpy" -d wit -w __WORLD__ componentize app -o __NAME__.wasm >/dev/null
echo "built __NAME__.wasm"

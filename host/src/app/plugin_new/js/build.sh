#!/usr/bin/env bash
# Build __NAME__.wasm (a WebAssembly component, world __WORLD__) with componentize-js from
# npm, installed once in node_modules (set COMPONENTIZE_JS to use another componentize-js).
set -euo pipefail
cd "$(dirname "$0")"
if [ -n "${COMPONENTIZE_JS:-}" ]; then
  "$COMPONENTIZE_JS" app.js -w wit -n __WORLD__ -d http fetch-event -o __NAME__.wasm >/dev/null
else
  [ -x node_modules/.bin/componentize-js ] || npm install --no-audit --no-fund --loglevel=error
  npm run --silent build >/dev/null
fi
echo "built __NAME__.wasm"

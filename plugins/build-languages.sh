#!/usr/bin/env bash
# Build the strategy plugins written in Python and JavaScript, with the Bytecode Alliance
# toolchains from their package registries (pinned), against wit/0.2.0:
#   componentize-py  (PyPI)  in a venv at target/toolchains/python
#   componentize-js  (npm)   in target/toolchains/js/node_modules
# and lay them out in target/lang-plugins/ (not target/plugins: each serves the same resource
# as the Rust widgets, so the server does not load them by default):
#   widgets-python.wasm   examples/widgets-python + plugins/sdk-python
#   widgets-js.wasm       examples/widgets-js + plugins/sdk-js
#   required-labels-python.wasm  examples/policies/required-labels-python (an admission policy)
#   no-latest-js.wasm            examples/policies/no-latest-js (an admission policy)
# Each project is staged in target/lang-build/<name>/ with its SDK beside it (componentize-js
# reads modules only under the source's directory). Idempotent; toolchains are installed once.
set -euo pipefail
cd "$(dirname "$0")/.."
COMPONENTIZE_PY_VERSION=0.25.1
COMPONENTIZE_JS_VERSION=0.23.0
root=$(pwd)
tools=$root/target/toolchains
out=$root/target/lang-plugins
mkdir -p "$tools" "$out"

# Python: a venv with componentize-py.
py=$tools/python
if ! "$py/bin/componentize-py" --version 2>/dev/null | grep -q " $COMPONENTIZE_PY_VERSION\$"; then
  python3 -m venv "$py"
  "$py/bin/python" -m pip install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION"
fi
# JavaScript: componentize-js in a private node_modules.
js=$tools/js
if [ "$(cat "$js/node_modules/@bytecodealliance/componentize-js/package.json" 2>/dev/null | sed -n 's/.*"version": "\(.*\)".*/\1/p')" != "$COMPONENTIZE_JS_VERSION" ]; then
  mkdir -p "$js"
  (cd "$js" && [ -f package.json ] || echo '{"private": true}' > package.json)
  (cd "$js" && npm install --no-audit --no-fund --loglevel=error "@bytecodealliance/componentize-js@$COMPONENTIZE_JS_VERSION")
fi

stage() { # name, source dir, sdk dir, sdk name in the stage
  rm -rf "target/lang-build/$1" && mkdir -p "target/lang-build/$1"
  cp -r "$2"/. "target/lang-build/$1/"
  cp -r "$3" "target/lang-build/$1/$4"
}

start=$(date +%s%N)
stage widgets-python examples/widgets-python plugins/sdk-python/wasm_apiserver wasm_apiserver
(cd target/lang-build/widgets-python && "$py/bin/componentize-py" -d "$root/wit/0.2.0" -w strategy-plugin \
  componentize app -o "$out/widgets-python.wasm.tmp" >/dev/null)
mv "$out/widgets-python.wasm.tmp" "$out/widgets-python.wasm"
mid=$(date +%s%N)
stage widgets-js examples/widgets-js plugins/sdk-js sdk
"$js/node_modules/.bin/componentize-js" target/lang-build/widgets-js/app.js -w "$root/wit/0.2.0" -n strategy-plugin \
  -d http fetch-event -o "$out/widgets-js.wasm.tmp" >/dev/null
mv "$out/widgets-js.wasm.tmp" "$out/widgets-js.wasm"
end=$(date +%s%N)
# A wasm admission policy in Python (wit/admission/0.1.0).
stage required-labels-python examples/policies/required-labels-python plugins/sdk-python/wasm_apiserver wasm_apiserver
(cd target/lang-build/required-labels-python && "$py/bin/componentize-py" -d "$root/wit/admission/0.1.0" -w admission-plugin \
  componentize app -o "$out/required-labels-python.wasm.tmp" >/dev/null)
mv "$out/required-labels-python.wasm.tmp" "$out/required-labels-python.wasm"
# And one in JavaScript.
stage no-latest-js examples/policies/no-latest-js plugins/sdk-js sdk
"$js/node_modules/.bin/componentize-js" target/lang-build/no-latest-js/app.js -w "$root/wit/admission/0.1.0" -n admission-plugin \
  -d http fetch-event -o "$out/no-latest-js.wasm.tmp" >/dev/null
mv "$out/no-latest-js.wasm.tmp" "$out/no-latest-js.wasm"
echo "built widgets-python in $(( (mid - start) / 1000000 )) ms, widgets-js in $(( (end - mid) / 1000000 )) ms"
ls -l "$out"

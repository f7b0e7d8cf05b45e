#!/usr/bin/env bash
# The README's second command: set up everything needed and run the whole test suite —
# plugins built for wasm32-wasip2 (release), the Python and JavaScript plugins built with
# componentize-py (PyPI) and componentize-js (npm), their native unit tests, the host's unit and
# integration tests (release, the profile the plugins were built in), all in one target dir.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --test
bash plugins/build.sh
bash plugins/build-languages.sh
cargo test --release --workspace

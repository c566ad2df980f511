#!/usr/bin/env bash
# Build (Debug, ASan/UBSan, warnings are errors) and run the whole test suite:
# cmocka unit tests and the end-to-end tests against real Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$(nproc)"
ctest --preset ci -j1 "$@"

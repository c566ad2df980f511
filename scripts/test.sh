#!/usr/bin/env bash
# Build (Debug, ASan/UBSan, warnings are errors) and run the whole test suite:
# cmocka unit tests and the end-to-end tests against real Chromium and Firefox.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$(nproc)"
# Long tests (label "long": the task suite on Firefox) run with TV_LONG_TESTS=1.
long=(-LE long)
[ "${TV_LONG_TESTS:-0}" = 1 ] && long=()
ctest --preset ci -j1 "${long[@]}" "$@"

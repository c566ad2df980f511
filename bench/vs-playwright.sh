#!/bin/sh
# bench/vs-playwright.sh - tabvisor against @playwright/mcp on the same pages
# and the same Chromium, in one run (bench/vs-playwright.mjs).
#
#   ./bench/vs-playwright.sh               install @playwright/mcp into bench/
#                                          if needed, build the release preset,
#                                          run
#   SKIP_BUILD=1 ./bench/vs-playwright.sh  run against build-release/ as it is
#
# @playwright/mcp goes into bench/node_modules (bench/package.json), never the
# repository root. Exits with the benchmark's status, or 1 if any process of
# the run was left alive.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ ! -d tests/e2e/node_modules/@modelcontextprotocol/sdk ]; then
    echo "vs-playwright.sh: tests/e2e/node_modules is missing; run ./deploy/install-deps.sh" >&2
    exit 1
fi
if [ ! -f bench/node_modules/@playwright/mcp/cli.js ]; then
    (cd bench && npm install --no-audit --no-fund >/dev/null)
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ ! -f build-release/CMakeCache.txt ]; then
        cmake --preset release >/dev/null
    fi
    cmake --build --preset release -j"$(nproc)" >/dev/null
fi

# Both servers' scratch directories (profiles, runtime dirs) live under $tmp,
# so whatever still mentions $tmp afterwards was left behind.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tvvspw.XXXXXX")
status=0
TVBENCH_TMP="$tmp" node bench/vs-playwright.mjs || status=$?

left=$(pgrep -f "$tmp" || true)
if [ -n "$left" ]; then
    echo "vs-playwright.sh: processes left behind:" >&2
    ps -o pid,args -p "$(echo $left | tr ' ' ',')" >&2 || true
    kill -KILL $left 2>/dev/null || true
    status=1
fi
rm -rf "$tmp"
exit "$status"

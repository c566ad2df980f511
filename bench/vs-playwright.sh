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

. "$(dirname "$0")/common.sh"
need_e2e_clients
if [ ! -f bench/node_modules/@playwright/mcp/cli.js ]; then
    (cd bench && npm install --no-audit --no-fund >/dev/null)
fi
build_release

# Both servers' scratch directories (profiles, runtime dirs) live under $tmp.
tmp=$(run_tmp tvvspw)
status=0
TVBENCH_TMP="$tmp" node bench/vs-playwright.mjs || status=$?

reap_leftovers "$tmp"
exit "$status"

#!/bin/sh
# bench/browsers.sh - build the optimised tabvisor if needed and run
# bench/browsers.mjs: tabvisor on Chromium beside tabvisor on Firefox and
# @playwright/mcp on the same Firefox (issue 23).
# SKIP_BUILD=1 uses build-release/ as it is; BENCH_ROUNDS sets calls per figure.
set -eu

. "$(dirname "$0")/common.sh"
need_e2e_clients
# @playwright/mcp for its column (bench/package.json), never the repository root.
if [ ! -f bench/node_modules/@playwright/mcp/cli.js ]; then
    (cd bench && npm install --no-audit --no-fund >/dev/null)
fi
build_release
need_release_binaries

tmp=$(run_tmp tvbrowsers)
status=0
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" node bench/browsers.mjs || status=$?

reap_leftovers "$tmp"
exit "$status"

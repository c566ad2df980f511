#!/bin/sh
# bench/memory.sh - memory per process kind and per extra session, tabvisor
# beside @playwright/mcp, and the supervisor after large outputs
# (bench/memory.mjs).
#
#   ./bench/memory.sh                  install @playwright/mcp into bench/ if
#                                      needed, build the release preset, run
#   SKIP_BUILD=1 ./bench/memory.sh     run against build-release/ as it is
#
# Never point it at a sanitizer build (ASan's quarantine alone is 256 MB).
# Exits with the benchmark's status (1 if the supervisor kept the memory of
# large outputs), or 1 if any process of the run was left alive.
set -eu

. "$(dirname "$0")/common.sh"
need_e2e_clients
if [ ! -f bench/node_modules/@playwright/mcp/cli.js ]; then
    (cd bench && npm install --no-audit --no-fund >/dev/null)
fi
build_release
need_release_binaries

tmp=$(run_tmp tvmem)
status=0
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" \
    timeout -k 10 900 node bench/memory.mjs || status=$?

sleep 1
reap_leftovers "$tmp"
exit "$status"

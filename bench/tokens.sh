#!/bin/sh
# bench/tokens.sh - bytes an agent reads per task, tabvisor against
# @playwright/mcp, on e2e.tasks' third-party pages (bench/tokens.mjs).
#
#   ./bench/tokens.sh               build the release preset if needed, run
#   SKIP_BUILD=1 ./bench/tokens.sh  run against build-release/ as it is
#
# Needs what e2e.tasks needs (./deploy/install-deps.sh: the Debian doc
# packages and tests/e2e/node_modules, which pins @playwright/mcp). Exits
# with the benchmark's status, or 1 if any process of the run was left alive.
set -eu

. "$(dirname "$0")/common.sh"
need_e2e_clients
build_release
need_release_binaries

tmp=$(run_tmp tvtokens)
status=0
TVBENCH_TMP="$tmp" TMPDIR="$tmp" node bench/tokens.mjs || status=$?

reap_leftovers "$tmp"
exit "$status"

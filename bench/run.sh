#!/bin/sh
# bench/run.sh - build the optimised tabvisor (release preset) if needed, run
# bench/bench.mjs against it, then check that no process of the run is left.
#
#   ./bench/run.sh               configure if needed, build incrementally, run
#   SKIP_BUILD=1 ./bench/run.sh  run against build-release/ as it is
#
# Needs node (from PATH), cmake and the e2e test clients in tests/e2e/node_modules
# (./deploy/install-deps.sh installs all three). Prints the table and the
# BENCH_JSON line; exits with the benchmark's status, or 1 if anything of the
# run was still alive afterwards.
set -eu

. "$(dirname "$0")/common.sh"
need_e2e_clients
build_release
need_release_binaries

# Every runtime directory of the run lives under $tmp (see run_tmp).
tmp=$(run_tmp tvbench)
status=0
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" node bench/bench.mjs || status=$?

reap_leftovers "$tmp"
exit "$status"

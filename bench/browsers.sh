#!/bin/sh
# bench/browsers.sh - build the optimised tabvisor if needed and run
# bench/browsers.mjs: tabvisor on Chromium beside tabvisor on Firefox (issue 23).
# SKIP_BUILD=1 uses build-release/ as it is; BENCH_ROUNDS sets calls per figure.
set -eu

. "$(dirname "$0")/common.sh"
need_e2e_clients
build_release
need_release_binaries

tmp=$(run_tmp tvbrowsers)
status=0
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" node bench/browsers.mjs || status=$?

reap_leftovers "$tmp"
exit "$status"

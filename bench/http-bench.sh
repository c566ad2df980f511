#!/bin/sh
# bench/http-bench.sh - build the optimised tabvisor (release preset) if needed,
# run bench/http-bench.mjs against it (many MCP clients over Streamable HTTP on
# 127.0.0.1), then check that no process the run started is still alive.
#
#   ./bench/http-bench.sh                     configure if needed, build, run
#   SKIP_BUILD=1 ./bench/http-bench.sh        run against build-release/ as it is
#   HTTP_BENCH_CLIENTS=1,4 HTTP_BENCH_SECONDS=5 ./bench/http-bench.sh
#
# Needs node, cmake and the e2e test clients in tests/e2e/node_modules
# (./deploy/install-deps.sh installs all three). Prints a table per
# concurrency level and an HTTP_BENCH_JSON line; exits with the benchmark's
# status, or 1 if it overran its time limit or left anything running.
set -eu

. "$(dirname "$0")/common.sh"
need_e2e_clients
build_release
need_release_binaries

# Every runtime directory of the run lives under $tmp (see run_tmp).
tmp=$(run_tmp tvhttpbench)
status=0
# The script bounds itself; this is the backstop (15 min, then KILL 10 s later).
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" \
    timeout -k 10 900 node bench/http-bench.mjs || status=$?

sleep 1
reap_leftovers "$tmp"
if [ "$status" -ne 0 ]; then
    echo "http-bench.sh: failed (status $status)" >&2
fi
exit "$status"

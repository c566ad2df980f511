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

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ ! -d tests/e2e/node_modules/@modelcontextprotocol/sdk ]; then
    echo "run.sh: tests/e2e/node_modules is missing; run ./deploy/install-deps.sh" >&2
    exit 1
fi

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ ! -f build-release/CMakeCache.txt ]; then
        cmake --preset release >/dev/null
    fi
    cmake --build --preset release -j"$(nproc)" >/dev/null
fi
if [ ! -x build-release/tabvisor ] || [ ! -x build-release/tabvisor-worker ]; then
    echo "run.sh: build-release/tabvisor or tabvisor-worker is missing" >&2
    exit 1
fi

# Every runtime directory of this run lives under $tmp, so whatever still
# mentions $tmp afterwards is ours and was left behind.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tvbench.XXXXXX")
status=0
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" node bench/bench.mjs || status=$?

left=$(pgrep -f "$tmp" || true)
if [ -n "$left" ]; then
    echo "run.sh: processes left behind:" >&2
    ps -o pid,args -p "$(echo $left | tr ' ' ',')" >&2 || true
    kill -KILL $left 2>/dev/null || true
    status=1
fi
rm -rf "$tmp"
exit "$status"

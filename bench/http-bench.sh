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

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ ! -d tests/e2e/node_modules/@modelcontextprotocol/sdk ]; then
    echo "http-bench.sh: tests/e2e/node_modules is missing; run ./deploy/install-deps.sh" >&2
    exit 1
fi

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ ! -f build-release/CMakeCache.txt ]; then
        cmake --preset release >/dev/null
    fi
    cmake --build --preset release -j"$(nproc)" >/dev/null
fi
if [ ! -x build-release/tabvisor ] || [ ! -x build-release/tabvisor-worker ]; then
    echo "http-bench.sh: build-release/tabvisor or tabvisor-worker is missing" >&2
    exit 1
fi

# Every runtime directory of the run is made under $tmp, and tabvisor, its
# workers and Chromium all carry theirs on their command lines: whatever
# still mentions $tmp afterwards was started by this run and left behind.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tvhttpbench.XXXXXX")
status=0
# The script bounds itself; this is the backstop (15 min, then KILL 10 s later).
TVBENCH_TMP="$tmp" TABVISOR_BIN="$root/build-release/tabvisor" \
    timeout -k 10 900 node bench/http-bench.mjs || status=$?

sleep 1
left=$(pgrep -f "$tmp" || true)
if [ -n "$left" ]; then
    echo "http-bench.sh: processes left behind:" >&2
    ps -o pid,args -p "$(echo $left | tr ' ' ',')" >&2 || true
    # Only these pids, which mention this run's private directory.
    kill -KILL $left 2>/dev/null || true
    status=1
fi
rm -rf "$tmp"
if [ "$status" -ne 0 ]; then
    echo "http-bench.sh: failed (status $status)" >&2
fi
exit "$status"

# bench/common.sh - steps the bench/*.sh wrappers share. Sourced, not run:
#
#   . "$(dirname "$0")/common.sh"
#
# On sourcing: sets $root (the repository) and $me (the wrapper's name, for
# messages), and changes into $root. Then the wrapper calls, as it needs:
#
#   need_e2e_clients       exit 1 unless tests/e2e/node_modules has the MCP SDK
#   build_release          configure if needed and build the release preset,
#                          unless SKIP_BUILD=1
#   need_release_binaries  exit 1 unless build-release/tabvisor and
#                          tabvisor-worker exist
#   run_tmp PREFIX         make and print a private scratch directory
#   reap_leftovers TMP     kill whatever still mentions TMP (setting
#                          status=1 if anything did), then remove TMP

root=$(cd "$(dirname "$0")/.." && pwd)
me=$(basename "$0")
cd "$root"

need_e2e_clients() {
    if [ ! -d tests/e2e/node_modules/@modelcontextprotocol/sdk ]; then
        echo "$me: tests/e2e/node_modules is missing; run ./deploy/install-deps.sh" >&2
        exit 1
    fi
}

build_release() {
    if [ "${SKIP_BUILD:-0}" != 1 ]; then
        if [ ! -f build-release/CMakeCache.txt ]; then
            cmake --preset release >/dev/null
        fi
        cmake --build --preset release -j"$(nproc)" >/dev/null
    fi
}

need_release_binaries() {
    if [ ! -x build-release/tabvisor ] || [ ! -x build-release/tabvisor-worker ]; then
        echo "$me: build-release/tabvisor or tabvisor-worker is missing" >&2
        exit 1
    fi
}

# Every runtime directory and profile of a run lives under this directory,
# and tabvisor, its workers and Chromium carry it on their command lines, so
# whatever still mentions it afterwards was started by the run and left behind.
run_tmp() {
    mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX"
}

reap_leftovers() {
    left=$(pgrep -f "$1" || true)
    if [ -n "$left" ]; then
        echo "$me: processes left behind:" >&2
        ps -o pid,args -p "$(echo $left | tr ' ' ',')" >&2 || true
        # Only these pids, which mention this run's private directory.
        kill -KILL $left 2>/dev/null || true
        status=1
    fi
    rm -rf "$1"
}

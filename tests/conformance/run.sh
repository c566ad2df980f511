#!/usr/bin/env bash
# Run the official MCP conformance suite (server mode, active scenarios)
# against tabvisor --http on 127.0.0.1. Fails on any unexpected failure and
# on an expected failure (expected-failures.yml) that now passes.
# Usage: tests/conformance/run.sh [path/to/tabvisor]   (default build/tabvisor)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-$here/../../build/tabvisor}") # before the cd below
cd "$here"
if [ ! -x node_modules/.bin/conformance ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
# The suite needs Node 22; the node package puts one in node_modules.
export PATH="$here/node_modules/node/bin:$PATH"

work=$(mktemp -d)
log="$work/tabvisor.log"
"$bin" --http 127.0.0.1:0 --runtime-dir "$work/rt" --output-dir "$work/out" </dev/null 2>"$log" &
pid=$!
cleanup() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "conformance: tabvisor did not start"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$log"; echo "conformance: no 'Listening on' line"; exit 1; }
echo "conformance: suite $(node -p "require('./node_modules/@modelcontextprotocol/conformance/package.json').version") against $url"
status=0
node_modules/.bin/conformance server --url "$url" --expected-failures "$here/expected-failures.yml" \
  -o "$work/results" >"$work/suite.log" 2>&1 || status=$?
sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
kill -TERM "$pid"
wait "$pid" || { echo "conformance: tabvisor exited with status $?"; status=1; }
if grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
  echo "conformance: sanitizer report from tabvisor"; status=1
fi
if [ "$status" -ne 0 ]; then
  tail -n 60 "$work/suite.log"
  echo "conformance: FAILED (unexpected failure, or an expected failure that now passes)"
fi
exit "$status"

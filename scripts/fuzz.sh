#!/usr/bin/env bash
# Build the libFuzzer targets with clang-14 and run each for N seconds
# (default 60) from its seed corpus. Fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for bin in build-fuzz/tests/fuzz/fuzz_*; do
  name=$(basename "$bin")
  corpus="$work/$name"
  mkdir -p "$corpus"
  seeds="tests/fuzz/corpus/${name#fuzz_}"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
  echo "== $name"
  status=0
  "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/" "$corpus" >"$work/$name.log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done)' "$work/$name.log" || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $name failed (exit $status):"; tail -n 40 "$work/$name.log"; exit 1
  fi
done
echo "fuzz: no findings"

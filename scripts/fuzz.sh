#!/usr/bin/env bash
# Build the libFuzzer targets (preset fuzz: clang-14, ASan/UBSan) and run
# each from its seed corpus (tests/fuzz/corpus/<name>), one after another.
#
#   scripts/fuzz.sh [SECONDS]              each target for SECONDS (default 60; CI)
#   scripts/fuzz.sh --runs N [TARGET...]   each target for N executions
#   scripts/fuzz.sh --time S [TARGET...]   the same as SECONDS, with a target list
#
# TARGET is a name like fuzz_catalog (default: every target). Prints, per
# target, executions, exec/s, peak RSS and findings, then a summary; exits 1
# when anything was found. Findings (crash-*, leak-*, timeout-*, oom-*) are
# kept in build-fuzz/findings/<target>/ with its log. For a long run on a
# shared machine: nice -n 19 scripts/fuzz.sh --runs 10000000; a target
# stopped with SIGINT (kill -INT <its pid>) reports what it reached and the
# script goes on with the next one.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=60)
what="60 s"
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) limit=(-runs="$2"); what="$2 runs"; shift 2 ;;
    --time) limit=(-max_total_time="$2"); what="$2 s"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    [0-9]*) limit=(-max_total_time="$1"); what="$1 s"; shift ;;
    *) targets+=("$1"); shift ;;
  esac
done

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
if [ ${#targets[@]} -eq 0 ]; then
  for bin in build-fuzz/tests/fuzz/fuzz_*; do targets+=("$(basename "$bin")"); done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }
summary=()
failed=0
for name in "${targets[@]}"; do
  bin="build-fuzz/tests/fuzz/$name"
  [ -x "$bin" ] || { echo "fuzz: no target $name" >&2; exit 2; }
  corpus="$work/$name"
  art="$work/$name-artifacts"
  mkdir -p "$corpus" "$art"
  seeds="tests/fuzz/corpus/${name#fuzz_}"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
  echo "== $name ($what)"
  status=0
  start=$(date +%s%N)
  "$bin" "${limit[@]}" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$art/" "$corpus" >"$work/$name.log" 2>&1 || status=$?
  ms=$((($(date +%s%N) - start) / 1000000 + 1))
  execs=$(stat number_of_executed_units "$work/$name.log")
  rss=$(stat peak_rss_mb "$work/$name.log")
  findings=$(find "$art" -type f | wc -l)
  rate=$(( ${execs:-0} * 1000 / ms ))
  note=""
  if [ "$findings" -eq 0 ] && grep -q 'libFuzzer: run interrupted' "$work/$name.log"; then
    status=0 # stopped with SIGINT (e.g. a long run cut short): not a finding
    note=" (interrupted)"
  elif [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then
    findings=1 # died without an artifact (e.g. a sanitizer abort in the harness)
  fi
  line=$(printf '%-18s %11s execs %7s exec/s %5s MB peak RSS %6s s  findings: %s%s' \
    "$name" "${execs:-?}" "$rate" "${rss:-?}" "$((ms / 1000))" "$findings" "$note")
  echo "$line"
  summary+=("$line")
  if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ]; then
    failed=1
    found="build-fuzz/findings/$name"
    mkdir -p "$found"
    cp -r "$art"/. "$found"/
    cp "$work/$name.log" "$found"/
    echo "fuzz: $name failed (exit $status), artifacts in $found/:"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz_)' "$work/$name.log" | head -n 10 || true
    tail -n 40 "$work/$name.log"
  fi
done

echo "== summary ($what per target)"
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings (see build-fuzz/findings/)"
  exit 1
fi
echo "fuzz: no findings"

#!/usr/bin/env bash
# Run the test suite (scripts/test.sh) N times in a row with every core kept
# busy by CPU hogs this script starts and stops itself, as CI's busy machine
# does: a test that waits on wall time instead of an event fails here.
#
#   scripts/test-under-load.sh [-n RUNS] [-j HOGS] [ctest args...]
#
# RUNS defaults to 3, HOGS to twice the number of cores (hogs run at normal
# priority, as other jobs on a shared machine do). Extra arguments go to
# ctest, e.g. `-R e2e.badinput` for one suite. Stops at the first failing
# run; prints each run's result and time, and the load average it ran at.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
hogs=$(($(nproc) * 2))
# -n and -j first; everything after them is ctest's (getopts would take
# ctest's -R for ours).
while [ $# -ge 2 ] && { [ "$1" = -n ] || [ "$1" = -j ]; }; do
  case "$1" in
    -n) runs=$2 ;;
    -j) hogs=$2 ;;
  esac
  shift 2
done
case "$runs$hogs" in
  *[!0-9]*) echo "usage: $0 [-n RUNS] [-j HOGS] [ctest args...]" >&2; exit 2 ;;
esac

pids=()
stop_hogs() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT INT TERM

# A hog is a shell loop: nothing to install, killed with its pid.
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  pids+=("$!")
done
echo "test-under-load: $hogs CPU hogs on $(nproc) cores (pids ${pids[*]})"

for i in $(seq "$runs"); do
  start=$(date +%s)
  if scripts/test.sh "$@"; then
    status=passed
  else
    status=FAILED
  fi
  echo "test-under-load: run $i/$runs $status in $(($(date +%s) - start)) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$status" = passed ] || exit 1
done

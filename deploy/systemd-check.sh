#!/usr/bin/env bash
# systemd-check.sh [BUILD_DIR] - check deploy/systemd/tabvisor.service as installed: copy
# the install tree of BUILD_DIR (default build-release-ci) and the host's system units into
# a scratch root, enable the unit there, then
#   systemd-analyze verify   must print nothing (an unknown key is only a warning there,
#                            so any output fails) and exit 0;
#   systemd-analyze security --offline prints the exposure table; above MAX_EXPOSURE
#                            (tenths, default 25 = 2.5) fails, so hardening cannot slip.
# Offline on purpose: CI has no systemd as PID 1. Takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-release-ci}
max=${MAX_EXPOSURE:-25}
root=$(mktemp -d /tmp/tv-unitroot-XXXXXX)
trap 'rm -rf "$root"' EXIT

DESTDIR=$root cmake --install "$build" --prefix /usr >/dev/null
mkdir -p "$root/usr/lib/systemd" "$root/etc/systemd/system"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
cp "$root/usr/share/tabvisor/systemd/tabvisor.service" "$root/etc/systemd/system/"

out=$(systemd-analyze verify --root="$root" tabvisor.service 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
  echo "systemd-check: systemd-analyze verify failed (rc $rc):" >&2
  echo "$out" >&2
  exit 1
fi
echo "systemd-check: systemd-analyze verify: clean"

rc=0
systemd-analyze security --offline=yes --root="$root" --threshold="$max" --no-pager \
  tabvisor.service >"$root/security.txt" 2>&1 || rc=$?
grep -E '^✗' "$root/security.txt" || true
score=$(grep -o 'Overall exposure level for tabvisor.service: .*' "$root/security.txt")
echo "systemd-check: $score"
if [ "$rc" -ne 0 ]; then
  echo "systemd-check: exposure above $max/10 (or systemd-analyze failed, rc $rc)" >&2
  tail -5 "$root/security.txt" >&2
  exit 1
fi

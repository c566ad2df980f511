#!/usr/bin/env bash
# Firefox over WebDriver BiDi beside Chromium over CDP, at the protocol level
# (bench/firefox_bidi.c): cold start, per-call latency and memory per extra session, on an
# optimised build without sanitizers (build-bench/). Needs firefox-esr and chromium
# (deploy/install-deps.sh).
#
#   bench/firefox.sh            BENCH_ROUNDS=N for calls per figure (default 50)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTV_SANITIZE=OFF -DTV_TESTS=ON \
  >/dev/null
cmake --build build-bench -j"$(nproc)" --target tabvisor-bench-firefox >/dev/null
# Chromium as tabvisor runs it by default: the headless shell when installed.
if [ -z "${TV_CHROMIUM:-}" ] && [ -x /usr/lib/chromium/chromium-headless-shell ]; then
  export TV_CHROMIUM=/usr/lib/chromium/chromium-headless-shell
fi
echo "firefox-esr $(firefox-esr --version 2>/dev/null | awk '{print $NF}'), $(nproc) cores"
exec build-bench/tests/tabvisor-bench-firefox

#!/usr/bin/env bash
# Install everything tabvisor needs to build, run and test on Debian 12.
# Idempotent: packages already present are not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake pkg-config clang-14 clang-format libclang-rt-14-dev
  libnng-dev libmsgpack-dev libwebsockets-dev libjansson-dev libcmocka-dev libssl-dev
  chromium nodejs npm procps
)
# gdb: tests/e2e/confine.test.mjs makes a live worker try what its confinement denies.
APT_PACKAGES+=(gdb)
# chromium-headless-shell: the browser tabvisor runs by default when installed; about 10 MB
# less per session than the full chromium (docs/memory.md).
APT_PACKAGES+=(chromium-headless-shell)
# firefox-esr: Firefox over WebDriver BiDi, in a network namespace of its own
# (supervisor/firefox.c, tests/unit/test_firefox_bidi.c, docs/firefox.md).
APT_PACKAGES+=(firefox-esr)
# python3-doc: Python's Sphinx-built documentation, a real site we did not write, for
# tests/e2e/corpus.test.mjs (names, tables and links on third-party pages).
# util-linux: setpriv, for tests/e2e/isolation.test.mjs (tabvisor as another user).
APT_PACKAGES+=(python3-doc util-linux)
# Third-party pages for tests/e2e/tasks.test.mjs (snapshot, find by role and name, act by
# ref, check): jQuery UI's demos (libjs-jquery-ui-docs; it pulls in jQuery, jQuery UI and
# RequireJS), the pdf.js viewer (libjs-pdf) on the shared MIME-info spec PDF that
# shared-mime-info ships, and jsTree's demo (libjs-jquery-jstree).
APT_PACKAGES+=(libjs-jquery-ui-docs libjs-pdf shared-mime-info libjs-jquery-jstree)
# More of them: Spectre.css's documentation (a CSS-only framework: accordions and modals
# without script) and LMDB's Doxygen documentation (a search box answering in an iframe).
APT_PACKAGES+=(libjs-spectre-docs lmdb-doc)
# CodeMirror 5's demos and manual: a source kept out of all tuning (issue 37's held-out
# tasks in tests/e2e/tasks.test.mjs: a code editor, its add-ons, a long manual).
APT_PACKAGES+=(libjs-codemirror)
# Three more held out the same way (issue 37, second round): json-editor's examples
# (forms built from a JSON schema), Pikaday's examples (a date picker) and markItUp!'s
# example (a markup editor's toolbar over a textarea).
APT_PACKAGES+=(libjs-json-editor node-pikaday libjs-jquery-markitup)
# nginx: tests/e2e/scaleout.test.mjs runs its binary (as its own unprivileged foreground
# process, on 127.0.0.1) in front of two replicas with deploy/nginx/tabvisor.conf.
APT_PACKAGES+=(nginx)
# deploy/package-test.sh and deploy/systemd-check.sh: readelf (binutils) on the packaged
# binaries, systemd-analyze (systemd) on the unit.
APT_PACKAGES+=(binutils systemd)
# xvfb: a virtual X display, so tests/e2e/config.test.mjs runs Chromium headed (--headed).
APT_PACKAGES+=(xvfb)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm may come from elsewhere (e.g. nodesource); do not fight them.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}")
  missing=("${missing[@]/npm}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # Only nginx's binary is wanted: a service its package started (where policy-rc.d
  # allows it) would serve Debian's default site on port 80 of every address.
  if [[ " ${missing[*]} " == *" nginx "* ]]; then
    if [ -d /run/systemd/system ]; then
      $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
    elif command -v service >/dev/null; then
      $SUDO service nginx stop >/dev/null 2>&1 || true
    fi
  fi
else
  echo "install-deps: Debian packages present"
fi

# promtool, Prometheus's own checker of the /metrics text (tests/e2e/promtext.mjs): only
# that binary, taken from Debian's prometheus package into a cache. Installing the package
# would also start a Prometheus server on every address.
promdir="${XDG_CACHE_HOME:-$HOME/.cache}/tabvisor/promtool"
if [ ! -x "$promdir/usr/bin/promtool" ]; then
  echo "install-deps: promtool from Debian's prometheus package"
  dl=$(mktemp -d)
  chmod 777 "$dl" # apt's download user must write there
  if ! (cd "$dl" && apt-get download -qq prometheus 2>/dev/null); then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    (cd "$dl" && apt-get download -qq prometheus)
  fi
  mkdir -p "$promdir"
  dpkg-deb --fsys-tarfile "$dl"/prometheus_*.deb | tar -x -C "$promdir" ./usr/bin/promtool
  rm -rf "$dl"
else
  echo "install-deps: promtool present"
fi

# Test clients from npm (the official MCP SDK client, the MCP Inspector CLI), pinned by
# tests/e2e/package-lock.json; reinstalled only when the lock file changed.
# A node_modules that is a symlink (a git worktree sharing another tree's) is left alone:
# npm ci would empty the directory it points to.
if [ -L tests/e2e/node_modules ]; then
  echo "install-deps: tests/e2e/node_modules is a symlink; not reinstalling it"
elif ! cmp -s tests/e2e/package-lock.json tests/e2e/node_modules/.tabvisor-lock 2>/dev/null; then
  echo "install-deps: npm packages for tests/e2e"
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.tabvisor-lock)
else
  echo "install-deps: npm packages present"
fi

# The official MCP conformance suite and the Node 22 it needs, pinned by
# tests/conformance/package-lock.json (tests/conformance/run.sh).
if [ -L tests/conformance/node_modules ]; then
  echo "install-deps: tests/conformance/node_modules is a symlink; not reinstalling it"
elif ! cmp -s tests/conformance/package-lock.json tests/conformance/node_modules/.tabvisor-lock 2>/dev/null; then
  echo "install-deps: npm packages for tests/conformance"
  (cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.tabvisor-lock)
else
  echo "install-deps: conformance packages present"
fi

#!/usr/bin/env bash
# package-test.sh [BUILD_DIR] - build the .deb from an optimised build directory (default
# build-release-ci, the one .ci/run makes), unpack it into a clean root with dpkg -x, and
# check it: the layout, that Depends names the Debian package of every shared library the
# binaries load, `tabvisor --version` from there, and one real navigate
# (deploy/package-navigate.mjs). Takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-release-ci}
root=$(mktemp -d /tmp/tv-pkgroot-XXXXXX)
trap 'rm -rf "$root"' EXIT

echo "== package: cpack -G DEB in $build"
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls -t "$build"/tabvisor_*.deb | head -1)
for f in Package Version Depends; do echo "  $f: $(dpkg-deb -f "$deb" $f)"; done
dpkg -x "$deb" "$root"

for f in usr/bin/tabvisor usr/libexec/tabvisor/tabvisor-worker usr/libexec/tabvisor/tabvisor-relay \
  usr/share/tabvisor/extension/manifest.json usr/share/doc/tabvisor/README.md; do
  [ -e "$root/$f" ] || { echo "package-test: $f missing from $deb" >&2; exit 1; }
done

# Every library a binary names (DT_NEEDED; what those pull in is their packages' business)
# must belong to a package Depends names; a new link dependency without a Depends entry
# fails here.
depends=$(dpkg-deb -f "$deb" Depends)
checked=0
for bin in "$root"/usr/bin/tabvisor "$root"/usr/libexec/tabvisor/*; do
  needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $(ldd "$bin" | awk -v n=" $(echo $needed) " 'index(n, " " $1 " ") && $3 ~ /^\// {print $3}'); do
    # dpkg knows a file by the path its package ships (/lib or /usr/lib: merged /usr).
    real=$(readlink -f "$lib")
    pkg=""
    for p in "$lib" "$real" "${real#/usr}" "/usr$real"; do
      pkg=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$pkg" ] && break
    done
    [ -n "$pkg" ] || { echo "package-test: no Debian package owns $lib ($bin)" >&2; exit 1; }
    grep -qE "(^|[ ,|])$pkg( |,|$)" <<<"$depends" ||
      { echo "package-test: $bin loads $lib of $pkg, not in Depends: $depends" >&2; exit 1; }
    checked=$((checked + 1))
  done
done
((checked >= 3)) || { echo "package-test: only $checked libraries seen; ldd or readelf failed" >&2; exit 1; }
echo "package-test: Depends covers the $checked linked libraries of the three binaries"

v=$("$root/usr/bin/tabvisor" --version)
echo "package-test: $v"
[ "$v" = "tabvisor $(dpkg-deb -f "$deb" Version)" ] || { echo "package-test: version mismatch" >&2; exit 1; }

node deploy/package-navigate.mjs "$root"
echo "package-test: ok"

#!/usr/bin/env bash
# scripts/docs.sh - write the README's generated sections from what the code
# already knows: the tools table from the tool catalog (proto/catalog*.c) and
# the options table from the options table (supervisor/options.c), both
# printed by tv-docs-md (supervisor/gen/docs_md.c).
#
#   scripts/docs.sh [--check] [TV_DOCS_MD]
#
# Each section sits between a line `<!-- BEGIN GENERATED NAME ... -->` and a
# line `<!-- END GENERATED NAME -->`; what is between them is replaced.
# --check changes nothing and fails, showing the difference, when README.md
# is not what it would write (the test docs.generated runs it in CI).
# TV_DOCS_MD defaults to build/tv-docs-md (cmake --preset ci builds it).
set -euo pipefail

check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
gen=${1:-$root/build/tv-docs-md}
readme=$root/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for name in tools options; do
  "$gen" "$name" > "$tmp/$name"
  if [ "$(grep -c "^<!-- BEGIN GENERATED $name " "$readme")" != 1 ] ||
     [ "$(grep -c "^<!-- END GENERATED $name -->" "$readme")" != 1 ]; then
    echo "docs.sh: README.md needs one BEGIN and one END GENERATED $name line" >&2
    exit 1
  fi
done

awk -v dir="$tmp" '
  /^<!-- BEGIN GENERATED / {
    print
    file = dir "/" $4
    while ((getline line < file) > 0) print line
    close(file)
    skip = 1
    next
  }
  /^<!-- END GENERATED / { skip = 0 }
  !skip { print }
' "$readme" > "$tmp/README.md"

if [ "$check" = 1 ]; then
  if ! diff -u "$readme" "$tmp/README.md"; then
    echo "docs.sh: README.md differs from the catalog and the options table: run scripts/docs.sh" >&2
    exit 1
  fi
  exit 0
fi
cp "$tmp/README.md" "$readme"

#!/usr/bin/env bash
# Checks that a libydbview.so exports exactly the functions include/ydbview.h
# declares: every global symbol starts with ydb_ and is declared in the
# header, and every function the header declares is exported.
#
#   bash scripts/check-symbols.sh [path/to/libydbview.so] [path/to/ydbview.h]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$root/build/libydbview.so}
header=${2:-$root/include/ydbview.h}

[ -f "$lib" ] || { echo "check-symbols: no library at $lib" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Global (upper-case type letter) defined dynamic symbols, without versions.
nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
# Function declarations: the preprocessor drops the comments, then every
# ydb_ name followed by "(" is a function (typedef'd function pointers are
# written "(*ydb_..._fn)", so the name is followed by ")").
${CC:-cc} -E -P -x c "$header" | grep -oE '\bydb_[a-z0-9_]+[[:space:]]*\(' \
  | sed -E 's/[[:space:]]*\($//' | sort -u >"$tmp/declared"

status=0
foreign=$(grep -v '^ydb_' "$tmp/exported" || true)
if [ -n "$foreign" ]; then
  echo "exported but not ydb_ symbols:"; echo "$foreign" | sed 's/^/  /'; status=1
fi
undeclared=$(comm -23 "$tmp/exported" "$tmp/declared" | grep '^ydb_' || true)
if [ -n "$undeclared" ]; then
  echo "exported but not declared in $(basename "$header"):"; echo "$undeclared" | sed 's/^/  /'; status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared" || true)
if [ -n "$missing" ]; then
  echo "declared in $(basename "$header") but not exported:"; echo "$missing" | sed 's/^/  /'; status=1
fi

exported=$(wc -l <"$tmp/exported"); declared=$(wc -l <"$tmp/declared")
if [ $status -eq 0 ]; then
  echo "symbols: $exported exported = $declared declared, all ydb_"
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
fi
exit $status

#!/usr/bin/env bash
# Installs a CMake build into a scratch prefix, then compiles and runs the C
# demo the way a user would: with nothing but pkg-config's flags.
#
#   bash scripts/check-install.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name ydbview.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir"
flags=$(pkg-config --cflags --libs ydbview)
echo "pkg-config --cflags --libs ydbview: $flags"
libdir=$(pkg-config --variable=libdir ydbview)

cc -std=c99 -Wall -Wextra -Werror -pedantic "$root/bindings/c/examples/store_demo.c" \
   $flags -o "$prefix/store_demo"
LD_LIBRARY_PATH="$libdir" "$prefix/store_demo" >"$prefix/out.txt"
grep -q "the UI catches up over 2 commits" "$prefix/out.txt"
test -f "$prefix/include/ydbview.h"
echo "installed to a scratch prefix; demo built with pkg-config and ran"
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# Installs a CMake build into a scratch prefix, then configures, builds and
# runs cmake/consumer the way a CMake user would: find_package(ydbview
# CONFIG REQUIRED) and the imported target ydbview::ydbview, with only
# CMAKE_PREFIX_PATH pointing at the prefix (no LD_LIBRARY_PATH: the imported
# library's directory must reach the program's rpath).
#
#   bash scripts/check-find-package.sh build-dir version [c-compiler [generator]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
version=$2
cc=${3:-cc}
generator=${4:-Ninja}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
config=$(find "$prefix" -name ydbviewConfig.cmake)
echo "installed: ${config#$prefix/} and $(ls "$(dirname "$config")" | grep -v '^ydbviewConfig.cmake$' | tr '\n' ' ')"

cmake -S "$root/cmake/consumer" -B "$work/consumer" -G "$generator" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.txt" 2>&1 \
  || { cat "$work/configure.txt"; exit 1; }
# The version comes from the project: the consumer prints what it found.
grep -q "found ydbview $version\$" "$work/configure.txt" \
  || { cat "$work/configure.txt"; echo "expected ydbview $version"; exit 1; }
cmake --build "$work/consumer" >"$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
env -u LD_LIBRARY_PATH "$work/consumer/app"

# A consumer asking for a later major version is refused.
mkdir "$work/too-new"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(too_new LANGUAGES NONE)\nfind_package(ydbview %s CONFIG REQUIRED)\n' \
  "$(( ${version%%.*} + 1 )).0" >"$work/too-new/CMakeLists.txt"
if cmake -S "$work/too-new" -B "$work/too-new/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
  echo "find_package accepted version $(( ${version%%.*} + 1 )).0 of ydbview $version"; exit 1
fi
echo "installed to a scratch prefix; consumer built with find_package(ydbview) and ran"
echo "1 passed, 0 failed"

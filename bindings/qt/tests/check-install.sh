#!/usr/bin/env bash
# Installs a CMake build into a scratch prefix, then builds tests/consumer
# against it twice, as users would: with find_package(ydbview-qt CONFIG)
# (CMAKE_PREFIX_PATH only) and with pkg-config (PKG_CONFIG_PATH only). Each
# program runs with no LD_LIBRARY_PATH: the rpaths must find the libraries.
#
#   bash check-install.sh build-dir version [c++-compiler [generator]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
version=$2
cxx=${3:-c++}
generator=${4:-Ninja}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
export QT_QPA_PLATFORM=offscreen

cmake --install "$build" --prefix "$prefix" >/dev/null
for file in include/ydbview-qt/models.h lib*/libydbview-qt.so lib*/pkgconfig/ydbview-qt.pc \
            lib*/cmake/ydbview-qt/ydbview-qtConfig.cmake; do
  compgen -G "$prefix/$file" >/dev/null || { echo "not installed: $file"; exit 1; }
done

cmake -S "$here/consumer" -B "$work/cmake" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.txt" 2>&1 || { cat "$work/configure.txt"; exit 1; }
grep -q "found ydbview-qt $version\$" "$work/configure.txt" || { cat "$work/configure.txt"; exit 1; }
cmake --build "$work/cmake" >"$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
env -u LD_LIBRARY_PATH "$work/cmake/app"

pc_path=$(dirname "$(compgen -G "$prefix/lib*/pkgconfig/ydbview-qt.pc")")
flags=$(PKG_CONFIG_PATH=$pc_path pkg-config --cflags --libs ydbview-qt)
"$cxx" -std=c++17 -Wall -Wextra -Werror "$here/consumer/main.cpp" -o "$work/pc-app" $flags
env -u LD_LIBRARY_PATH "$work/pc-app"
echo "installed to a scratch prefix; built with find_package(ydbview-qt) and with pkg-config; both ran"

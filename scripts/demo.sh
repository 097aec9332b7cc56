#!/usr/bin/env bash
# Builds ydbview and shows the store at work: rows written and read, commit
# notifications printed by an observer, and a long-lived read transaction
# that keeps its snapshot and then catches up -- from C, then from Python.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null

echo "=== building (cmake -G Ninja, build/)"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build >/dev/null

echo
echo "=== C: bindings/c/examples/store_demo.c"
./build/store_demo

echo
echo "=== Python: bindings/python/examples/store_demo.py"
YDBVIEW_LIBRARY="$PWD/build/libydbview.so" "$PYTHON" bindings/python/examples/store_demo.py

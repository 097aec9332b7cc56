#!/usr/bin/env bash
# Builds what Benchmarks/floors.py runs, then runs it: issue 42's
# performance floors in one table (see the docstring of floors.py).
#
#   Benchmarks/floors.sh [--with-swift] [--quick] [--skip-python] [--skip-swift] [--skip-valgrind]
#
# --with-swift also builds the Swift benchmark (ydbview-bench, a release
# build of its own in .build-bench: several minutes the first time);
# without it floors.py uses the one already built, or says it is missing.
# The other options go to floors.py. Run from anywhere: paths are the
# checkout's, found from this file. Expects a configured build folder
# (cmake -S . -B build -G Ninja) and .venv (scripts/setup.sh).
set -euo pipefail

checkout="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$checkout"

with_swift=0
options=()
for argument in "$@"; do
    if [[ "$argument" == --with-swift ]]; then with_swift=1; else options+=("$argument"); fi
done

cmake --build build --target ydbview ydbview-c-bench ydbview-registration-stalls ydbview-many-views
if [[ $with_swift == 1 ]]; then
    swift build -c release --scratch-path .build-bench --product ydbview-bench
fi
# bench.py's SortedKeyList baseline; without it those rows have no baseline.
if ! .venv/bin/python -c "import sortedcontainers" 2>/dev/null; then
    .venv/bin/python -m pip install sortedcontainers
fi

exec .venv/bin/python Benchmarks/floors.py "${options[@]}"

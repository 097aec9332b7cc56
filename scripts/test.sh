#!/usr/bin/env bash
# Builds everything and runs every test suite; exits non-zero if any fails.
#   swift build, swift test         (SwiftPM; scratch path $YDBVIEW_SWIFT_SCRATCH, default .build)
#   cmake configure + build         (build/: libydbview.so, C tests, demo)
#   ctest --output-on-failure       (C tests, header compile, symbols, install + pkg-config;
#                                    the GTK and Qt components' tests: ctest -R 'gtk|qt')
#   pytest                          (Python package against build/libydbview.so, from .venv)
#   fresh machine                   (README's C and Python examples against an installed
#                                    library and a wheel, with no Swift toolchain reachable)
#   swiftpm release library         (swift build -c release's libydbview.so is self-contained, loads,
#                                    and runs the README's C examples)
#   api docs                        (scripts/api-docs.sh: the C, Python, Swift, GTK and Qt API reference
#                                    into build/api, failing on any generator warning)
#   swift 6 package                 (the README's Swift examples + two committing threads, in a
#                                    Swift 6 package outside the checkout, warnings as errors)
set -uo pipefail
cd "$(dirname "$0")/.."
# setup.sh runs with errexit (a failed install stops everything); the steps
# below run with it off so that every suite runs and the summary is complete.
set -e
source scripts/setup.sh
set +e

scratch=${YDBVIEW_SWIFT_SCRATCH:-.build}
results=()
failures=0

# The process `$1` and all its descendants, parents first.
process_tree() {
  echo "$1"
  local child
  for child in $(pgrep -P "$1"); do process_tree "$child"; done
}

# Prints every thread's stack of the processes named (gdb, when present),
# so that a step that hangs says where.
dump_threads() {
  local pid
  for pid in "$@"; do
    echo "--- threads of $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)"
    command -v gdb >/dev/null && timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt 30" 2>/dev/null \
      | grep -E '^(Thread|#)' | cut -c1-240
  done
}

# Runs a command, at most `$1` seconds: a step that hangs fails with its
# threads' stacks instead of holding CI until its limit.
limited() {
  local limit=$1; shift
  "$@" &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$limit" ]; do
    sleep 1; waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "!!! still running after ${limit}s: $*"
    local tree; tree=$(process_tree "$pid")
    dump_threads $tree
    kill -KILL $tree 2>/dev/null
    wait "$pid" 2>/dev/null
    return 124
  fi
  wait "$pid"
}

step() {
  local name=$1 limit=$2; shift 2
  echo
  echo "=== $name: $*"
  local start=$SECONDS
  if limited "$limit" "$@"; then
    results+=("PASS  $name ($((SECONDS - start))s)")
  else
    results+=("FAIL  $name ($((SECONDS - start))s)")
    failures=$((failures + 1))
  fi
}

# Each step's limit is several times what it takes on a 2-core machine;
# the XCTest run is line-buffered so that its log shows the last test begun.
step "swift build" 1200 swift build --scratch-path "$scratch"
step "swift test" 1200 stdbuf -oL -eL swift test --scratch-path "$scratch"
step "cmake configure" 300 cmake -S . -B build -G Ninja -DYDBVIEW_REQUIRE_TOOLKITS=ON
step "cmake build" 1500 cmake --build build
step "ctest" 1200 ctest --test-dir build --output-on-failure --timeout 600
step "pytest" 1200 env YDBVIEW_LIBRARY="$PWD/build/libydbview.so" PYTHONPATH="$PWD/bindings/python" \
  "$PYTHON" -m pytest bindings/python/tests -q -p no:cacheprovider
step "fresh machine" 1200 bash scripts/check-fresh-machine.sh build
step "api docs" 600 env YDBVIEW_SWIFT_SCRATCH="$scratch" bash scripts/api-docs.sh build/api
step "swift 6 package" 900 bash scripts/check-swift6-package.sh
step "swiftpm release library" 1200 bash scripts/check-swiftpm-library.sh .build-release

echo
echo "=== summary"
printf '  %s\n' "${results[@]}"
echo "steps: $(( ${#results[@]} - failures )) passed, $failures failed"
[ "$failures" -eq 0 ]

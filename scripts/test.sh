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

step() {
  local name=$1; shift
  echo
  echo "=== $name: $*"
  local start=$SECONDS
  if "$@"; then
    results+=("PASS  $name ($((SECONDS - start))s)")
  else
    results+=("FAIL  $name ($((SECONDS - start))s)")
    failures=$((failures + 1))
  fi
}

step "swift build" swift build --scratch-path "$scratch"
step "swift test" swift test --scratch-path "$scratch"
step "cmake configure" cmake -S . -B build -G Ninja -DYDBVIEW_REQUIRE_TOOLKITS=ON
step "cmake build" cmake --build build
step "ctest" ctest --test-dir build --output-on-failure
step "pytest" env YDBVIEW_LIBRARY="$PWD/build/libydbview.so" PYTHONPATH="$PWD/bindings/python" \
  "$PYTHON" -m pytest bindings/python/tests -q -p no:cacheprovider
step "fresh machine" bash scripts/check-fresh-machine.sh build
step "api docs" env YDBVIEW_SWIFT_SCRATCH="$scratch" bash scripts/api-docs.sh build/api
step "swift 6 package" bash scripts/check-swift6-package.sh
step "swiftpm release library" bash scripts/check-swiftpm-library.sh .build-release

echo
echo "=== summary"
printf '  %s\n' "${results[@]}"
echo "steps: $(( ${#results[@]} - failures )) passed, $failures failed"
[ "$failures" -eq 0 ]

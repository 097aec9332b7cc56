#!/usr/bin/env bash
# Fails unless the shared library needs nothing but SQLite and the C/C++
# runtime: no Swift, Foundation, ICU or dispatch library, no library the
# loader cannot find, no rpath into a Swift toolchain; and its SONAME is
# libydbview.so.0 (or, for the wheel's copy, libydbview.so).
#
#   bash scripts/check-self-contained.sh LIBRARY
set -euo pipefail
library=$1
needs=$(ldd "$library")
if grep -E -i 'swift|foundation|icu|dispatch|blocksruntime|not found' <<<"$needs"; then
  echo "FAIL: $library is not self-contained:"; echo "$needs"; exit 1
fi
if readelf -d "$library" | grep -E 'R(UN)?PATH' | grep -i swift; then
  echo "FAIL: $library has a path into the Swift toolchain"; exit 1
fi
readelf -d "$library" | grep -q -E 'SONAME.*\[libydbview\.so(\.0)?\]' || { echo "FAIL: $library: SONAME"; exit 1; }
echo "ok: $library ($(stat -L -c %s "$library") bytes) needs only: $(awk '{print $1}' <<<"$needs" | grep -v vdso | tr '\n' ' ')"

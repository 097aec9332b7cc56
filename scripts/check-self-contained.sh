#!/usr/bin/env bash
# Fails unless the shared library needs nothing but SQLite and the C/C++
# runtime: no Swift, Foundation, ICU or dispatch library, no library the
# loader cannot find, no rpath into a Swift toolchain; its SONAME is
# libydbview.so.0 (or, for the wheel's copy, libydbview.so); and it loads:
# a small C program dlopens it with every symbol bound at once (RTLD_NOW)
# and calls it. ldd alone does not see a symbol no library defines.
#
#   bash scripts/check-self-contained.sh LIBRARY
set -euo pipefail
library=$(readlink -f "$1")
needs=$(ldd "$library")
if grep -E -i 'swift|foundation|icu|dispatch|blocksruntime|not found' <<<"$needs"; then
  echo "FAIL: $library is not self-contained:"; echo "$needs"; exit 1
fi
if readelf -d "$library" | grep -E 'R(UN)?PATH' | grep -i swift; then
  echo "FAIL: $library has a path into the Swift toolchain"; exit 1
fi
readelf -d "$library" | grep -q -E 'SONAME.*\[libydbview\.so(\.0)?\]' || { echo "FAIL: $library: SONAME"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/load.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) { fprintf(stderr, "FAIL: dlopen: %s\n", dlerror()); return 1; }
    int (*number)(void) = (int (*)(void))dlsym(library, "ydb_libversion_number");
    if (number == NULL || number() <= 0) { fprintf(stderr, "FAIL: ydb_libversion_number\n"); return 1; }
    return 0;
}
C
cc "$work/load.c" -o "$work/load" -ldl
env -i PATH=/usr/bin:/bin "$work/load" "$library"
echo "ok: $library ($(stat -L -c %s "$library") bytes) loads and needs only: $(awk '{print $1}' <<<"$needs" | grep -v vdso | tr '\n' ' ')"

#!/usr/bin/env bash
# The library `swift build -c release` makes, used as a C program would:
# self-contained and loadable (check-self-contained.sh), then every ```c
# example of README.md compiled against it and run with no Swift toolchain
# on PATH.
#
#   bash scripts/check-swiftpm-library.sh [scratch-path]   (default .build-release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=${1:-$root/.build-release}
swift build -c release --scratch-path "$scratch" --product ydbview >/dev/null
library=$scratch/release/libydbview.so
bash "$root/scripts/check-self-contained.sh" "$library"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The SONAME is libydbview.so.0: the loader looks for that name.
mkdir "$work/lib" && cp "$library" "$work/lib/libydbview.so.0" && ln -s libydbview.so.0 "$work/lib/libydbview.so"
for source in $(python3 "$root/scripts/readme_examples.py" c "$work/c"); do
  program=${source%.c}
  cc "$source" -I "$root/include" -L "$work/lib" -lydbview -Wl,-rpath,"$work/lib" -o "$program"
  (cd "$work" && env -i PATH=/usr/bin:/bin "$program" >"$program.out")
  echo "ok: $(basename "$source") ran against the SwiftPM library: $(head -c 60 "$program.out" | tr '\n' ' ')"
done

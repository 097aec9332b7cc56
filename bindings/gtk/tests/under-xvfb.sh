#!/usr/bin/env bash
# Runs a GTK program under a private X server (xvfb-run -a), for the tests
# and the screenshot script. Exits 77 (ctest's SKIP_RETURN_CODE) with a
# message when no X server can be started; otherwise exits as the program.
#
#   bash bindings/gtk/tests/under-xvfb.sh PROGRAM [ARGUMENTS...]
set -u
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "skipped: xvfb-run is not installed (Debian: apt-get install xvfb xauth)"
  exit 77
fi
if ! xvfb-run -a true >/dev/null 2>&1; then
  echo "skipped: xvfb-run cannot start an X server here"
  exit 77
fi
# X11 only: a Wayland compositor the session may name is not the one started here.
unset WAYLAND_DISPLAY
export GDK_BACKEND=x11
exec xvfb-run -a -s "-screen 0 1280x1024x24" "$@"

#!/usr/bin/env bash
# Takes the GTK example's screenshot for the docs: runs live_list (a live
# grouped list that another thread changes) under Xvfb with the cairo
# renderer; the program saves its own window after six catch-ups.
#
#   bash scripts/screenshot-gtk.sh [build-dir]     (default: build)
#   -> docs/images/gtk-live-list.png
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
program=$build/bindings/gtk/live_list
[ -x "$program" ] || { echo "no $program: build first (cmake -S . -B build -G Ninja && cmake --build build)" >&2; exit 1; }
mkdir -p "$root/docs/images"
GSK_RENDERER=cairo bash "$root/bindings/gtk/tests/under-xvfb.sh" "$program" --screenshot "$root/docs/images/gtk-live-list.png"

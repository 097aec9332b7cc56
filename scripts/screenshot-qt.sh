#!/usr/bin/env bash
# Takes the QML example's screenshot for the docs: runs
# ydbview-qt-live-list under Xvfb (xvfb-run -a; Qt's offscreen platform
# when xvfb-run is missing), which saves its own window after 12 commits
# from its writer thread.
#
#   bash scripts/screenshot-qt.sh [build-dir] [output.png]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/docs/images/qt-live-list.png}
app=$build/bindings/qt/ydbview-qt-live-list
[ -x "$app" ] || { echo "no $app: build with Qt 6 Qml/Quick (qt6-declarative-dev) first"; exit 1; }
# The software scene graph: no GPU or GL needed, the same pixels anywhere.
export QT_QUICK_BACKEND=software
if command -v xvfb-run >/dev/null; then
  xvfb-run -a -s "-screen 0 1024x768x24" env QT_QPA_PLATFORM=xcb "$app" --screenshot "$out"
else
  QT_QPA_PLATFORM=offscreen "$app" --screenshot "$out"
fi

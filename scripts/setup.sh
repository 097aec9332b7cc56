#!/usr/bin/env bash
# Installs what building and testing ydbview needs, only when it is missing,
# and says what it installs:
#   apt: cmake ninja-build libsqlite3-dev pkg-config gcc g++ binutils
#        doxygen (the C API reference, scripts/api-docs.sh)
#        (python3-venv when Python cannot make a virtual environment)
#   pip: pytest, hypothesis, mypy, pyright, pdoc and gi-docgen (the Python
#        and GTK API references) and
#        PySide6-Essentials (the Qt model tests),
#        into .venv in this checkout -- never into the system's or the
#        user's Python.
#   apt, for the toolkit components (ydbview-gtk, ydbview-qt) and their
#        tests: libgtk-4-dev gobject-introspection libgirepository1.0-dev
#        gir1.2-gtk-4.0 python3-gi qt6-base-dev qt6-declarative-dev, the QML
#        modules the QML example loads, xvfb xauth (a display for the
#        window tests and screenshots)
#   apt, for Qt (its wheel ships Qt but not the system libraries Qt loads,
#        which a minimal Debian 12 lacks): libegl1 libgl1 libx11-6
#        libdbus-1-3 libfontconfig1 libfreetype6 libglib2.0-0 libxkbcommon0
# Swift itself is expected on PATH (a swift.org toolchain).
#
#   source scripts/setup.sh           # system packages and .venv
#   source scripts/setup.sh system    # system packages only (the demo)
#
# Sourced, it leaves PYTHON set to .venv's interpreter.
set -euo pipefail

YDB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ydb_log() { echo "setup: $*"; }

ydb_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "setup: need root for: $*" >&2; return 1; fi
}

# Another apt (unattended-upgrades on a fresh machine, a second setup) holds
# dpkg's lock for minutes at a time; apt-get would fail at once. Wait for it,
# saying so, up to YDB_APT_WAIT seconds (10 minutes), through apt's own
# DPkg::Lock::Timeout (apt >= 1.9) and, for the lists' lock that option does
# not cover, by retrying the update.
YDB_APT_WAIT=${YDB_APT_WAIT:-600}

ydb_apt_locked() {
  command -v fuser >/dev/null || return 1   # cannot tell: let apt-get say
  ydb_as_root fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock \
    >/dev/null 2>&1
}

ydb_apt_get() {
  local waited=0
  while ydb_apt_locked; do
    if [ "$waited" -ge "$YDB_APT_WAIT" ]; then
      echo "setup: apt is still locked by another process after ${YDB_APT_WAIT}s; giving up" >&2
      return 1
    fi
    [ "$waited" -eq 0 ] && ydb_log "apt is locked by another process; waiting for it (up to ${YDB_APT_WAIT}s)"
    sleep 5; waited=$((waited + 5))
  done
  local deadline=$((SECONDS + YDB_APT_WAIT)) said=""
  local errors; errors=$(mktemp)
  until ydb_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$YDB_APT_WAIT" "$@" \
      2> >(tee "$errors" >&2); do
    # Only a lock is worth waiting for (told by fuser, or by apt's own
    # message where fuser is missing); any other failure is final.
    ydb_apt_locked || grep -q "Could not get lock\|Unable to acquire" "$errors" || { rm -f "$errors"; return 1; }
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "setup: apt is still locked by another process after ${YDB_APT_WAIT}s; giving up" >&2
      return 1
    fi
    [ -n "$said" ] || ydb_log "apt is locked by another process; waiting for it (up to ${YDB_APT_WAIT}s)"
    said=1; sleep 5
  done
  rm -f "$errors"
}

ydb_apt_install() {
  [ $# -gt 0 ] || return 0
  ydb_log "installing with apt-get: $*"
  ydb_apt_get update -qq
  ydb_apt_get install -y -qq --no-install-recommends "$@" >/dev/null
}

ydb_setup_system() {
  local missing=()
  command -v swift >/dev/null || { echo "setup: swift is not on PATH; install a Swift toolchain" >&2; return 1; }
  command -v cmake >/dev/null || missing+=(cmake)
  command -v ninja >/dev/null || missing+=(ninja-build)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  { command -v pkg-config >/dev/null && pkg-config --exists sqlite3; } || missing+=(libsqlite3-dev)
  command -v cc >/dev/null || missing+=(gcc)
  command -v c++ >/dev/null || missing+=(g++)
  command -v nm >/dev/null || missing+=(binutils)
  command -v doxygen >/dev/null || missing+=(doxygen)
  command -v python3 >/dev/null || missing+=(python3 python3-venv)
  ydb_apt_install "${missing[@]}"
}

# ydbview-gtk and ydbview-qt (CMake turns each off when its packages are
# missing): the development packages, checked one by one with dpkg-query.
ydb_setup_toolkits() {
  command -v dpkg-query >/dev/null || return 0   # not Debian: nothing apt could add
  local missing=() package
  for package in libgtk-4-dev gobject-introspection libgirepository1.0-dev gir1.2-gtk-4.0 \
                 python3-gi qt6-base-dev qt6-declarative-dev qml6-module-qtquick \
                 qml6-module-qtquick-controls qml6-module-qtquick-templates \
                 qml6-module-qtquick-window qml6-module-qtqml-workerscript xvfb xauth; do
    dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null | grep -qx installed ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] || ydb_log "the GTK and Qt components need these packages"
  ydb_apt_install "${missing[@]}"
}

# The project's own Python: .venv in the checkout, with the test tools. The
# package itself is not installed there: tests import it from
# bindings/python (PYTHONPATH) with the library from build/.
ydb_setup_python() {
  local venv=$YDB_ROOT/.venv
  if [ ! -x "$venv/bin/python" ]; then
    ydb_log "creating the virtual environment $venv"
    python3 -m venv "$venv" 2>/dev/null || { ydb_apt_install python3-venv; python3 -m venv "$venv"; }
  fi
  PYTHON=$venv/bin/python
  export PYTHON
  if ! "$PYTHON" -c 'import pytest, hypothesis, mypy, pyright' 2>/dev/null; then
    # mypy and pyright: test_step_types.py type-checks the documented steps
    # loop with both. pyright's nodejs extra brings Node as a wheel, so
    # nothing is fetched from npm.
    ydb_log "installing pytest, hypothesis, mypy and pyright into $venv"
    "$PYTHON" -m pip install -q --disable-pip-version-check "pytest>=7" "hypothesis>=6" "mypy>=1.0" \
      "pyright[nodejs]>=1.1.380"
  fi
  # scripts/api-docs.sh: the Python API reference
  if ! "$PYTHON" -c 'import pdoc, gidocgen' 2>/dev/null; then
    ydb_log "installing pdoc and gi-docgen (the Python and GTK API references) into $venv"
    "$PYTHON" -m pip install -q --disable-pip-version-check "pdoc>=14" "gi-docgen>=2023.1"
  fi
  # ydbview.qt's tests: Qt's model tester, headless. Pinned below 6.12: in
  # 6.12.0 every void call (beginInsertRows, endMoveRows, ...) and every
  # signal emit drops a reference to None or True, which aborts Python 3.11.
  if ! "$PYTHON" -c 'import PySide6.QtTest' 2>/dev/null; then
    ydb_log "installing PySide6-Essentials (Qt, for the Qt model tests) into $venv"
    "$PYTHON" -m pip install -q --disable-pip-version-check "PySide6-Essentials>=6.5,<6.12"
  fi
  ydb_setup_qt_libraries
}

# The system libraries that QtCore/QtGui/QtWidgets/QtTest and the offscreen
# platform plugin link against and a minimal Debian 12 does not have (found
# with ldd on a fresh bookworm: libEGL, libGL, libX11, libdbus-1,
# libfontconfig, libfreetype, libglib-2.0, libxkbcommon), by Debian package,
# installed only when missing. libfontconfig1 brings a font with it.
ydb_setup_qt_libraries() {
  command -v dpkg-query >/dev/null || return 0   # not Debian: nothing apt could add
  local missing=() package
  for package in libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 libfreetype6 \
                 libglib2.0-0 libxkbcommon0; do
    dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null | grep -qx installed ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] || ydb_log "Qt needs these system libraries"
  ydb_apt_install "${missing[@]}"
}

ydb_setup_system
if [ "${1:-all}" != system ]; then
  ydb_setup_toolkits
  ydb_setup_python
  ydb_log "ready (python: $PYTHON)"
else
  ydb_log "ready"
fi

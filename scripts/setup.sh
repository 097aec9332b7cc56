#!/usr/bin/env bash
# Installs what building and testing ydbview needs, only when it is missing:
#   apt: cmake ninja-build libsqlite3-dev pkg-config gcc g++ binutils (and
#        python3 + venv when there is no Python)
#   pip: the Python package (editable, from bindings/python) and pytest +
#        hypothesis.
# Swift itself is expected on PATH (swift.org toolchain or Docker image).
#
# Run it, or source it: it leaves PYTHON set to the interpreter to use (a
# .venv in the checkout when the system Python is "externally managed").
set -euo pipefail

YDB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ydb_log() { echo "setup: $*"; }

ydb_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "setup: need root for: $*" >&2; return 1; fi
}

ydb_apt_install() {
  [ $# -gt 0 ] || return 0
  ydb_log "installing $*"
  ydb_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  ydb_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
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
  command -v python3 >/dev/null || missing+=(python3 python3-venv)
  ydb_apt_install "${missing[@]}"
}

# Picks the Python to use: $PYTHON, else python3; a venv when pip may not
# install into the system Python (PEP 668).
ydb_setup_python() {
  PYTHON=${PYTHON:-python3}
  local managed
  managed=$("$PYTHON" - <<'PY'
import os, sys, sysconfig
in_venv = sys.prefix != sys.base_prefix
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
print("yes" if os.path.exists(marker) and not in_venv else "no")
PY
)
  if [ "$managed" = yes ]; then
    if [ ! -x "$YDB_ROOT/.venv/bin/python" ]; then
      "$PYTHON" -m venv "$YDB_ROOT/.venv" 2>/dev/null || { ydb_apt_install python3-venv; "$PYTHON" -m venv "$YDB_ROOT/.venv"; }
    fi
    PYTHON=$YDB_ROOT/.venv/bin/python
  fi
  "$PYTHON" -m pip --version >/dev/null 2>&1 || { ydb_apt_install python3-pip; }
  export PYTHON

  local pip=("$PYTHON" -m pip install -q --disable-pip-version-check)
  if ! "$PYTHON" -c 'import pytest, hypothesis' 2>/dev/null; then
    ydb_log "installing pytest and hypothesis"
    "${pip[@]}" "pytest>=7" "hypothesis>=6"
  fi
  # The package must be the editable install of this checkout (find_spec
  # does not import it, so this works before the library is built).
  local origin
  origin=$("$PYTHON" -c 'import importlib.util as u; s = u.find_spec("ydbview"); print(s.origin if s else "")' 2>/dev/null || true)
  if [ "$origin" != "$YDB_ROOT/bindings/python/ydbview/__init__.py" ]; then
    ydb_log "installing the Python package (editable) from bindings/python"
    # Build offline with the local setuptools when it can (>= 64 and wheel
    # present); otherwise let pip fetch a build backend.
    if "$PYTHON" -c 'import setuptools, wheel, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 64)' 2>/dev/null; then
      "${pip[@]}" --no-build-isolation -e "$YDB_ROOT/bindings/python"
    else
      "${pip[@]}" -e "$YDB_ROOT/bindings/python"
    fi
  fi
}

ydb_setup_system
ydb_setup_python
ydb_log "ready (python: $PYTHON)"

#!/usr/bin/env bash
# Runs a link command (CMakeLists.txt sets this as libydbview.so's
# RULE_LAUNCH_LINK) and passes its output on, minus the one warning glibc
# attaches to mktemp, which the statically linked Swift Foundation
# references: GNU ld, gold and lld have no option to silence one symbol's
# warning (only -w, which silences all of them). Every other line, and the
# linker's exit status, go through unchanged. GNU ld prints the warning
# after an "in function" line of its own; that line goes with it.
"$@" 2>&1 | awk -v warning="warning: the use of \`mktemp' is dangerous" -v context=": in function " '
  index($0, warning) { held = ""; next }
  held != "" { print held; held = "" }
  index($0, context) { held = $0; next }
  { print }
  END { if (held != "") print held }'
exit "${PIPESTATUS[0]}"

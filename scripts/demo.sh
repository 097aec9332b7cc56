#!/usr/bin/env bash
# Builds the ydbview tool and runs `ydbview-cli demo`: a catalogue of a few
# thousand books in a temporary database, a view by genre sorted by rank,
# mappings showing the top 10 of two genres plus a dynamic section, and a
# stream of random commits printed as the changesets a table view would
# animate (each changeset, and the narration, checked against the tables
# before and after). Needs only the Swift toolchain; installs nothing into
# any Python. Arguments go to the demo: --seed N, --commits N, --quiet, --help.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "=== checking the build tools (scripts/setup.sh system)"
source scripts/setup.sh system

echo "=== building ydbview with swift build (debug; the first build takes a minute or two)"
swift build --product ydbview-cli 2>&1 | grep -E --line-buffered '^\[|error|warning: unre|Compiling|Build' || true
bin="$(swift build --product ydbview-cli --show-bin-path)/ydbview-cli"
[ -x "$bin" ] || { echo "demo: the build failed" >&2; exit 1; }

echo
echo "=== ydbview-cli demo $*"
"$bin" demo "$@"

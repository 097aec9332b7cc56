#!/usr/bin/env bash
# Builds the ydbview tool and runs `ydbview demo`: a catalogue of a few
# thousand books in a temporary database, a view by genre sorted by rank,
# mappings showing the top 10 of two genres plus a dynamic section, and a
# stream of random commits printed as the changesets a table view would
# animate (each one checked against the tables before and after).
# Arguments go to the demo: --seed N, --commits N, --quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh system

echo "=== building ydbview (swift build, debug)"
swift build --product ydbview-cli >/dev/null
bin="$(swift build --product ydbview-cli --show-bin-path)/ydbview-cli"

echo
echo "=== ydbview demo $*"
"$bin" demo "$@"

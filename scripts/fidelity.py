#!/usr/bin/env python3
"""Replays Tests/Fidelity/yapdatabase-vectors.jsonl through `ydbview-cli replay`
and counts the histories whose answers equal YapDatabase's (see
Tests/Fidelity/README.md for the comparison and the two deliberate
differences).

    python3 scripts/fidelity.py build/ydbview-cli [--at-least N] [--verbose]

Prints "M of 120 match" and, per kind, where the first difference of each
other history lies; exits 1 when fewer than N match (or a replay fails).
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

VECTORS = Path(__file__).resolve().parent.parent / "Tests" / "Fidelity" / "yapdatabase-vectors.jsonl"


def table(state: Dict[str, Any]) -> Dict[str, Any]:
    """A table state without what only one engine numbers (snapshots) or
    reports (getters)."""
    return {name: value for name, value in state.items() if name not in ("snapshot", "getters")}


def moves_for_readded_rows(changes: List[Dict[str, Any]], ours: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """YapDatabase reports a row removed and set again under its key as a
    delete and an insert; ydbview as one move. Rewrites such pairs of
    YapDatabase's as the move ydbview reports. The delete is found by key,
    or -- after a remove-all, where YapDatabase's deletes name no key -- by
    the original index path of ydbview's move of that key."""
    moved_from = {(c.get("collection"), c.get("key")): c["index_path"] for c in ours if c["type"] == "move"}
    merged, replaced = [], set()
    for back in changes:
        if back["type"] != "insert" or back.get("key") is None:
            continue
        name = (back.get("collection"), back["key"])
        gone = next((c for c in changes if c["type"] == "delete" and id(c) not in replaced
                     and (c.get("collection"), c.get("key")) == name), None)
        if gone is None and name in moved_from:
            gone = next((c for c in changes if c["type"] == "delete" and id(c) not in replaced
                         and c.get("key") is None and c["index_path"] == moved_from[name]), None)
        if gone is None:
            continue
        replaced.update((id(gone), id(back)))
        merged.append({"type": "move", "index_path": gone["index_path"], "new_index_path": back["new_index_path"],
                       "original_group": gone.get("original_group"), "final_group": back.get("final_group"),
                       "collection": name[0], "key": name[1], "changes": back.get("changes")})
    return [c for c in changes if id(c) not in replaced] + merged


def signature(change: Dict[str, Any], with_key: bool) -> str:
    fields = {name: change.get(name) for name in ("type", "index_path", "new_index_path", "original_group",
                                                   "final_group")}
    fields["changes"] = sorted(change.get("changes") or [])
    if with_key:
        fields["row"] = [change.get("collection"), change.get("key")]
    return json.dumps(fields, sort_keys=True)


def same_row_changes(ours: List[Dict[str, Any]], theirs: List[Dict[str, Any]]) -> bool:
    """As multisets; a change of ours may name a row where YapDatabase's names none."""
    wanted = collections.Counter(signature(c, c.get("key") is not None) for c in moves_for_readded_rows(theirs, ours))
    for change in ours:
        named, unnamed = signature(change, True), signature(change, False)
        if wanted[named] > 0:
            wanted[named] -= 1
        elif wanted[unnamed] > 0:
            wanted[unnamed] -= 1
        else:
            return False
    return sum(wanted.values()) == 0


def first_difference(ours: Dict[str, Any], theirs: Dict[str, Any]) -> Optional[str]:
    if table(ours["initial"]) != table(theirs["initial"]):
        return "initial table"
    if len(ours["changes"]) != len(theirs["changes"]):
        return "number of changesets"
    for number, (mine, yours) in enumerate(zip(ours["changes"], theirs["changes"])):
        sections = collections.Counter(json.dumps(c, sort_keys=True) for c in mine["section_changes"])
        if sections != collections.Counter(json.dumps(c, sort_keys=True) for c in yours["section_changes"]):
            return f"section changes (changeset {number})"
        if not same_row_changes(mine["row_changes"], yours["row_changes"]):
            return f"row changes (changeset {number})"
        if table(mine["state"]) != table(yours["state"]):
            return f"table after changeset {number}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ydbview", help="the ydbview-cli executable (build/ydbview-cli)")
    parser.add_argument("--at-least", type=int, default=0, help="fail when fewer histories match")
    parser.add_argument("--verbose", action="store_true", help="name every history that differs")
    args = parser.parse_args()
    vectors = [json.loads(line) for line in VECTORS.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds: collections.Counter = collections.Counter()
    matching = 0
    for vector in vectors:
        replay = subprocess.run([args.ydbview, "replay", "-"], input=json.dumps(vector["scenario"]),
                                capture_output=True, text=True)
        if replay.returncode != 0:
            sys.exit(f"{vector['name']}: ydbview-cli replay failed ({replay.returncode}): {replay.stderr.strip()}")
        difference = first_difference(json.loads(replay.stdout), vector["yapdatabase"])
        if difference is None:
            matching += 1
        else:
            kinds[difference.split(" (")[0]] += 1
            if args.verbose:
                print(f"{vector['name']}: {difference}")
    print(f"{matching} of {len(vectors)} match YapDatabase"
          + "".join(f"; {count} differ first in {kind}" for kind, count in kinds.most_common()))
    if matching < args.at_least:
        sys.exit(f"fewer than {args.at_least} histories match: a change moved ydbview away from YapDatabase")


if __name__ == "__main__":
    main()

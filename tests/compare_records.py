"""Same seed, same numbers: compare the campaign records of two folders unit by unit, all but their timings.

    git worktree add --detach /tmp/old <commit before the change>
    .venv/bin/python tests/compare_records.py /tmp/old/results/campaign/default results/campaign/default

A change that moves a unit's code version makes its record stale, and the campaign records it again; this says
whether the new record holds the numbers of the old one. For each unit (kind and name) recorded in both folders it
compares the newest record of each side: every field of the payload counts except wall-clock timings (TIMING_KEYS,
at any depth), and the parameters may differ only in run-only settings (campaign.units.RUN_ONLY: threads,
workers, progress). The exit status is 1 when any unit differs.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from imbalanced_cl.campaign.units import differing

TIMING_KEYS = ("seconds", "wall_s", "resumed_s")


def newest(folder: str | Path) -> dict[str, dict]:
    """{kind/name: the newest record of that unit} of every *.json under a campaign profile folder."""
    out = {}
    for path in sorted(Path(folder).rglob("*.json")):
        rec = json.loads(path.read_text())
        unit = f"{rec['kind']}/{rec['name']}"
        if unit not in out or rec["provenance"]["recorded"] > out[unit]["provenance"]["recorded"]:
            out[unit] = rec
    return out


def untimed(value):
    """A payload with every timing key removed, at any depth."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def compare(before: dict, after: dict) -> list[str]:
    """One line per unit recorded on both sides whose parameters or numbers differ."""
    out = []
    for unit in sorted(set(before) & set(after)):
        a, b = before[unit], after[unit]
        params = differing(a["params"], b["params"])
        if params:
            out.append(f"{unit}: parameters differ: {', '.join(params)}")
        elif untimed(a["payload"]) != untimed(b["payload"]):
            keys = [k for k in a["payload"] if untimed(a["payload"].get(k)) != untimed(b["payload"].get(k))]
            out.append(f"{unit}: numbers differ in {', '.join(keys) or 'the payload'}")
    return out


def main(argv: list[str]) -> int:
    """Print the differences, or one line saying how many units hold the same numbers."""
    before, after = newest(argv[0]), newest(argv[1])
    diffs = compare(before, after)
    both = sorted(set(before) & set(after))
    only = sorted(set(before) ^ set(after))
    print("\n".join(diffs) if diffs else f"identical but for timings: {len(both)} units")
    if only:
        print(f"recorded on one side only: {', '.join(only)}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

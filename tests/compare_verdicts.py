"""Same seed, same numbers: compare the glued verdict rows of two executed books, row by row (issue 26).

    .venv/bin/python -m imbalanced_cl book --profile ci --no-build --out /tmp/before --jobs 2   # on the old code
    .venv/bin/python -m imbalanced_cl book --profile ci --no-build --out /tmp/after --jobs 2    # on the new code
    .venv/bin/python tests/compare_verdicts.py /tmp/before /tmp/after

Run the old code from a clean worktree (git worktree add --detach /tmp/old <commit>) with PYTHONPATH=/tmp/old/src,
so that both books see the same profiles and the same commits of everything else. Every field of every row counts
(claim, measured value, interval, verdict, rule, premise); the exit status is 1 when any notebook differs.
"""
from __future__ import annotations

import sys
from pathlib import Path

from imbalanced_cl.book.records.glued import rows_of
from imbalanced_cl.verdict import to_json


def verdict_rows(out_dir: str | Path) -> dict[str, list[dict]]:
    """{executed notebook, relative to _build/executed: its glued verdict rows, as JSON (verdict.to_json: NaN as
    None, so that two missing numbers compare equal)} of a book executed into out_dir."""
    executed = Path(out_dir) / "_build" / "executed"
    return {str(p.relative_to(executed)): [to_json(r) for r in rows_of(p)] for p in sorted(executed.rglob("*.ipynb"))}


def compare(before: dict, after: dict) -> list[str]:
    """One line per difference: a notebook missing on one side, a row count that changed, or a row that differs."""
    out = []
    for nb in sorted(set(before) | set(after)):
        a, b = before.get(nb), after.get(nb)
        if a is None or b is None:
            out.append(f"{nb}: only {'after' if a is None else 'before'}")
        elif len(a) != len(b):
            out.append(f"{nb}: {len(a)} rows before, {len(b)} after")
        else:
            out += [f"{nb}: row {k} ({x.get('claim')!r}): before {x}, after {y}"
                    for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return out


def main(argv: list[str]) -> int:
    """Print the differences, or one line saying how many rows in how many notebooks are identical."""
    before, after = verdict_rows(argv[0]), verdict_rows(argv[1])
    diffs = compare(before, after)
    print("\n".join(diffs) if diffs else f"identical: {sum(map(len, before.values()))} rows in "
          f"{sum(1 for rows in before.values() if rows)} notebooks")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

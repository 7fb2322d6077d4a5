"""Seed stability on recorded units: the same units under other base seeds (`campaign run --seed S`), and the
verdicts of the recorded ones compared across seeds with book.records.stability's rule (issue 29, item 5)."""
from __future__ import annotations

import json
from pathlib import Path

from ..book.records.record import read_rows
from ..book.records.stability import compare
from . import record
from .units import Unit

# A change between these is a conclusive flip: conclusive one way under one seed and the other way under the other.
FLIPS = ({"holds", "does not hold"}, {"partly", "does not hold"})


def with_seed(unit: Unit, seed: int) -> Unit | None:
    """The unit under base seed `seed` (None when it has no seed parameter). The default seed keeps the unit as is,
    so a plain run and `--seed <default>` share their records."""
    if unit.seed is None:
        return None
    if seed == unit.seed and "seed" not in unit.params:
        return unit
    return Unit(unit.kind, unit.name, unit.profile, {**unit.params, "seed": seed}, unit.code, seed)


def rows_by_seed(units: list[Unit], seeds: list[int], results: Path,
                 corrupt: list | None = None) -> tuple[dict, list[str]]:
    """({seed: verdict rows (Verdict) of the notebook units recorded under it}, notebooks recorded under every
    seed); the unreadable records found (a file, or rows that are not verdict rows) are appended to `corrupt` as
    (path, why)."""
    sc = record.scan(results)
    have = sc.records
    if corrupt is not None:
        corrupt += sc.corrupt
    by_seed, names = {}, None
    for s in seeds:
        found = {}
        for u in units:
            v = with_seed(u, s) if u.kind == "notebook" else None
            if v is not None and v.key in have:
                try:
                    found[u.name] = read_rows(have[v.key]["payload"].get("rows", []))
                except ValueError as e:
                    if corrupt is not None:
                        corrupt.append((sc.paths[v.key], str(e)))
        by_seed[s] = found
        names = set(found) if names is None else names & set(found)
    names = sorted(names or [])
    return {s: [r for n in names for r in by_seed[s][n]] for s in seeds}, names


NOTHING = "no notebook is recorded under every seed"    # how report's answer begins when there is nothing to compare


def report(units: list[Unit], seeds: list[int], results: Path, out: Path | None = None) -> list[str]:
    """Lines comparing the recorded verdicts across seeds (and the result written to `out`, when given)."""
    corrupt: list = []
    by_seed, names = rows_by_seed(units, seeds, results, corrupt)
    # a record that cannot be read is named, with what its absence leaves out, never dropped without a word
    bad = [f"corrupt record {p}: {why}; left out of the comparison (its notebook counts as not recorded under "
           "that seed)" for p, why in corrupt]
    if not names:
        return bad + [f"{NOTHING} {seeds} in {results}: run `campaign run --seed S` for each seed first"]
    res = compare(by_seed)
    flips = [c for c in res["changed"] if set(c["verdicts"].values()) in FLIPS]
    lines = [f"{res['unchanged']} of {res['rows']} rows kept their verdict across seeds {res['seeds']} "
             f"({res['share_unchanged']:.1%}; target >= 95%), on the recorded units of {', '.join(names)}",
             f"rows whose measured value moves with the seed (the rest are closed forms or settings): "
             f"{res['seed_dependent']}, of which {res['seed_dependent_unchanged']} kept their verdict",
             f"conclusive flips (holds <-> does not hold, partly <-> does not hold): {len(flips)} (target 0)"]
    lines += [f"  {c['notebook']}: {c['claim']}: {c['verdicts']}" for c in res["changed"]]
    lines = bad + lines
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"notebooks": names, "flips": len(flips), **res}, indent=1) + "\n")
    return lines

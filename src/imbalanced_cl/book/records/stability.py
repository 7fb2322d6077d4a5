"""Seed stability: re-execute the claim notebooks with other base seeds and count the verdicts that survive.

`python -m imbalanced_cl stability --profile default --seeds 0 1` runs every claim notebook that has a `seed`
parameter once per seed (into _build/stability/<profile>/seed-<s>/), then writes results/stability/<profile>.json:
the share of rows whose verdict is the same under every seed, and the rows that changed. The scoreboard reads it,
and marks a row that flips as inconclusive: a verdict that depends on the seed is not a finding.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...verdict import Verdict
from .glued import collect


def key(r: Verdict) -> tuple[str, str]:
    """A row's identity across seeds: its notebook and its stable id (verdict rows keep their id when reworded)."""
    if not r.id:
        raise ValueError(f"{r.notebook or '?'}: a verdict row without an id cannot be matched across seeds")
    return r.notebook, r.id


def compare(by_seed: dict[int, list[Verdict]]) -> dict:
    """Rows matched by (notebook, id) across seeds: which verdicts stayed, which changed, and the stable share."""
    seeds = sorted(by_seed)
    keyed = {s: {key(r): r for r in by_seed[s]} for s in seeds}
    common = set.intersection(*(set(k) for k in keyed.values())) if keyed else set()
    changed = [{"notebook": nb, "id": rid, "claim": keyed[seeds[0]][(nb, rid)].claim,
                "verdicts": {str(s): keyed[s][(nb, rid)].verdict for s in seeds}}
               for nb, rid in sorted(common) if len({keyed[s][(nb, rid)].verdict for s in seeds}) > 1]
    n = len(common)
    # A row that no seed can move (a closed form, a setting) keeps its verdict trivially: count the rows whose
    # measured value does differ between the seeds, and how many of those kept their verdict.
    value = {s: {k: json.dumps(r.measured) for k, r in keyed[s].items()} for s in seeds}
    moving = [k for k in common if len({value[s][k] for s in seeds}) > 1]
    flipped_keys = {(c["notebook"], c["id"]) for c in changed}
    return {"seeds": seeds, "rows": n, "unchanged": n - len(changed),
            "share_unchanged": (n - len(changed)) / n if n else float("nan"), "changed": changed,
            "seed_dependent": len(moving), "seed_dependent_unchanged": sum(k not in flipped_keys for k in moving)}


def run(profile: str, seeds: list[int], root: Path, only: list[str] | None = None, out: Path | None = None) -> dict:
    """Execute the claim notebooks once per seed, compare their verdicts, write <out>/results/stability/<profile>.json
    (out defaults to the repository root)."""
    out_root = Path(out or root)
    from ...parts import fields_of
    from ..build.cells import config_class
    from ..build.runner import run_book, toc_notebooks
    names = [nb.stem for nb in toc_notebooks(root) if nb.parent.name == "notebooks"
             and (cls := config_class(nb)) is not None and "seed" in {f.name for f, _ in fields_of(cls)}
             and (not only or nb.stem in only)]
    by_seed = {}
    for s in seeds:
        where = out_root / "_build" / "stability" / profile / f"seed-{s}"
        rc = run_book(profile, out_root=where, only=names, build=False, overrides={"seed": s})
        if rc != 0:
            raise RuntimeError(f"stability: the notebooks failed at seed {s} (exit {rc})")
        by_seed[s] = collect(where / "_build" / "executed" / "notebooks")
    result = {"profile": profile, "notebooks": names, **compare(by_seed)}
    target = out_root / "results" / "stability" / f"{profile}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=1) + "\n")
    return result


def _load(p: Path) -> dict | None:
    """A stored stability result, or None; one that cannot be read is named in a warning (what it leaves out), and
    one written before rows had ids comes back with the reason it is stale under "stale"."""
    if not p.exists():
        return None
    try:
        out = json.loads(p.read_text())
        if not isinstance(out, dict):
            raise ValueError("not a JSON object")
    except (ValueError, OSError) as e:
        import warnings
        warnings.warn(f"{p}: unreadable ({e}); its seed-stability result is left out", stacklevel=3)
        return None
    if predates_ids(out):     # matched by sentence, before rows had ids: it cannot be matched to today's rows
        out["stale"] = "it was written before verdict rows had ids, so its rows cannot be matched to today's"
    return out


def load(root: Path, profile: str) -> dict | None:
    """The stored stability result of a profile, or None (a warning names an unreadable one)."""
    return _load(Path(root) / "results" / "stability" / f"{profile}.json")


def load_campaign(root: Path, profile: str = "paper") -> dict | None:
    """The stability of a profile's recorded campaign units (`campaign stability`), or None (a warning names an
    unreadable one)."""
    return _load(Path(root) / "results" / "stability" / f"campaign-{profile}.json")


def flipped(result: dict | None) -> set[tuple[str, str]]:
    """(notebook, id) of every row whose verdict changed with the seed (none from a stale result)."""
    if (result or {}).get("stale"):
        return set()
    return {(c["notebook"], c["id"]) for c in (result or {}).get("changed", [])}


def predates_ids(result: dict | None) -> bool:
    """Whether a stored result was written before rows had ids (its changed rows name only a sentence): such a
    result cannot be matched to today's rows, and is stale."""
    return any("id" not in c for c in (result or {}).get("changed", []))

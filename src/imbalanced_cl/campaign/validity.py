"""Which record answers for a planned unit: found by kind, name and seed, then judged by its parameters and by the
numbers its code computes (campaign/probe.py), never by the spelling of that code (issue 47)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..paths import repo_root
from . import probe, record
from .units import Unit, measures


@dataclass(frozen=True)
class Judged:
    """A record found for a unit: where it is, what it holds, whether it answers for the unit, and why (or why not)."""

    path: Path
    rec: dict
    valid: bool
    why: str        # "" for a record made under today's code; else how it was found valid, or why it is stale


def seed_of(rec: dict):
    """The base seed a record was made under (its provenance's, else its parameters', else None: a record that does
    not say answers for any seed its parameters allow)."""
    prov = rec.get("provenance") if isinstance(rec.get("provenance"), dict) else {}
    params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
    return prov.get("seed", params.get("seed"))


def kept_stages(path: Path, rec: dict) -> Path:
    """The stages folder beside a record file: <name>-<key>.stages/ (kinds.stages_of at record time)."""
    return Path(path).with_name(f"{rec['name']}-{rec['key']}.stages")


def to_rerecord(j: Judged | None) -> bool:
    """Whether a valid notebook record kept no measurement stages (made before records did): today's verdict code
    cannot judge it, so a campaign runs its unit again. Until the new record replaces it in place (same key), it still
    answers, with its rows as judged then."""
    if j is None or not j.valid or j.rec.get("kind") != "notebook":
        return False
    return not ((j.rec.get("payload") or {}).get("stages") and kept_stages(j.path, j.rec).is_dir())


def judge(rec: dict, unit: Unit, root: Path | None = None, cache: probe.Cache | None = None) -> tuple[bool, str]:
    """(valid, why) of one record of the unit's kind and name.

    A parameter that changes what is measured (units.measures: run-only settings and judging tolerances aside) and
    that both sides have with another value makes it stale, named. Otherwise the same code digest makes it
    valid; other code (or a parameter added or removed since) is decided by the kind's probe."""
    mine = {k: v for k, v in unit.params.items() if measures(k)}
    theirs = {k: v for k, v in (rec.get("params") or {}).items() if measures(k)}
    changed = sorted(k for k in set(mine) & set(theirs) if mine[k] != theirs[k])
    if changed:
        return False, f"parameters differ in {', '.join(changed)}"
    moved = sorted(set(mine) ^ set(theirs))
    if rec.get("code") == unit.code and not moved:
        return True, ""
    ok, why = probe.same_numbers(probe.probe_for(unit.kind, unit.name) or unit.kind, rec, unit.params, unit.code,
                                 root, cache)
    if moved:
        why += f" (parameters added or removed since: {', '.join(moved)})"
    return ok, why


def find(folder: Path, unit: Unit, root: Path | None = None, scan: record.Scan | None = None,
         cache: probe.Cache | None = None) -> Judged | None:
    """The record that answers for `unit` in a campaign folder: a valid one (today's code first, then the newest),
    else the newest stale one with why, else None (never recorded)."""
    root = Path(root or repo_root())
    scan = scan or record.scan(folder)
    cache = cache or probe.Cache(probe.cache_path(root))
    found = [(scan.paths[k], r) for k, r in scan.records.items()
             if r.get("kind") == unit.kind and r.get("name") == unit.name and seed_of(r) in (None, unit.seed)]
    newest_first = sorted(found, key=lambda pr: str((pr[1].get("provenance") or {}).get("recorded", "")), reverse=True)
    found = sorted(newest_first, key=lambda pr: pr[1].get("code") != unit.code)     # today's code first (stable)
    stale = None
    for path, rec in found:
        ok, why = judge(rec, unit, root, cache)
        if ok:
            return Judged(path, rec, True, why)
        stale = stale or Judged(path, rec, False, why)
    return stale


def first_valid(unit: Unit, root: Path | None = None) -> tuple[Judged | None, list[Judged]]:
    """The first valid record of `unit` in any profile folder of results/campaign (the parameters say what was run,
    not the folder), and the stale records of it met before that one."""
    root = Path(root or repo_root())
    stale = []
    for folder in sorted((root / "results" / "campaign").glob("*/")):
        j = find(folder, unit, root)
        if j is not None and j.valid:
            return j, stale
        if j is not None:
            stale.append(j)
    return None, stale


def note(j: Judged) -> str:
    """One line on a stale record for a page's notes: its commit, why, and that it is not used."""
    commit = str((j.rec.get("provenance") or {}).get("commit", "?"))[:7]
    return f"record from commit {commit}: {j.why}; stale, not used"


def made_by(prov: dict) -> str:
    """Which commit, device and date made a record: 'commit 0ef50ea on cpu, 2026-11-26'."""
    return (f"commit {str(prov.get('commit', '?'))[:7]} on {prov.get('device', '?')}, "
            f"{str(prov.get('recorded', '?'))[:10]}")


def fresh() -> bool:
    """Whether this run must compute everything itself (`book --fresh`), reading no campaign record."""
    import os

    from ..book.build.cache import FRESH_ENV
    return os.environ.get(FRESH_ENV, "") not in ("", "0")

"""Verdicts computed again from recorded measurements (issue 47, item 1).

A notebook unit's record keeps its measurement stages beside it (kinds.stages_of). Judging the record executes the
notebook at the record's parameters with every stage read back (stages.py, "replay"): nothing is trained, and the
rows come from today's verdict code, so a changed threshold, a new rule or a reworded row reaches recorded results
without measuring them again. The judged rows are kept in _build/judged/<profile>/<notebook>.json under a key of
the record's bytes, its stages and today's package and notebook, and book/records/record.py shows them in the paper
column. A record made before records kept measurements shows its stored rows, and says so.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from .. import verdict as V
from ..book.records.glued import rows_of
from ..book.records.provenance import RECORDED_ENV
from ..book.build.cache import package_digest, records_digest
from ..book.build.execution import execute
from . import record, stages, typed
from .kinds import notebook_file, pages, plan_notebooks
from .validity import kept_stages


def _recorded(path: Path, where: Path):
    """A sha256 over a record file and its stages' files (names and bytes), to be updated further or read."""
    h = hashlib.sha256(Path(path).read_bytes())
    for p in sorted(Path(where).glob("*")):
        h.update(p.name.encode() + p.read_bytes())
    return h


def _key(root: Path, path: Path, rec: dict, where: Path) -> str:
    """What judged rows depend on: the record file, its stages' files, today's package, the notebook and the campaign
    records it reads besides (cache.RECORDS_READ: notebook 04's sweeps, 10's cells), so a sweep recorded after the
    notebook's record is judged with it."""
    h = _recorded(path, where)
    h.update(package_digest(root).encode())
    h.update(notebook_file(root, rec["name"]).read_bytes())
    h.update(records_digest(root, notebook_file(root, rec["name"])).encode())
    return h.hexdigest()


def judge(root: Path, path: Path, rec: dict, out: Path) -> tuple[list[V.Verdict] | None, str]:
    """(rows, "") of one notebook record, judged by today's code from its stages, the executed copy at `out`; or
    (None, why) where it cannot be: no stages kept (an older record), or a stage or field today's notebook needs."""
    where = kept_stages(path, rec)
    if not (rec.get("payload") or {}).get("stages") or not where.is_dir():
        return None, "kept no measurements (recorded before records did): its rows as judged then are shown"
    env = {stages.STAGES_ENV: str(where), stages.STAGES_MODE_ENV: "replay", "IMBALANCED_CL_PROFILE": rec["profile"]}
    ok, msg = execute(notebook_file(root, rec["name"]), out, rec["params"], root,
                      {"profile": rec["profile"], "judged_from": rec["key"]}, root, env=env)
    if not ok:
        return None, msg.split(": ", 2)[-1] if "needs re-measuring" in msg else f"could not be judged: {msg}"
    return rows_of(out), ""


def judge_all(root: Path, profile: str, results: Path | None = None, quiet: bool = False) -> dict[str, dict]:
    """Judge every current notebook record of a profile with today's code (cached): {notebook: {"rows", "why",
    "record"}} (rows as JSON: verdict.to_json), also written to _build/judged/<profile>/<notebook>.json for the book
    to read."""
    from .validity import find
    root = Path(root)
    results = Path(results or root / "results" / "campaign" / profile)
    folder = root / "_build" / "judged" / profile
    out, sc = {}, record.scan(results)
    rowless = pages(root)       # the regime page's record keeps stages and no rows: nothing for the paper column
    for unit in plan_notebooks(profile, root):
        j = find(results, unit, root, sc) if unit.name not in rowless else None
        if j is None or not j.valid:
            continue
        key = _key(root, j.path, j.rec, kept_stages(j.path, j.rec))
        target = folder / f"{unit.name}.json"
        try:
            done = json.loads(target.read_text())
            if done.get("key") == key:
                out[unit.name] = done
                continue
        except (OSError, ValueError):
            pass
        rows, why = judge(root, j.path, j.rec, folder / f"{unit.name}.ipynb")
        done = {"key": key, "record": j.rec["key"], "rows": None if rows is None else [V.to_json(r) for r in rows],
                "why": why}
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(done, default=str) + "\n")
        out[unit.name] = done
        if not quiet:
            said = f"{len(rows)} rows by today's verdict code" if rows is not None else why
            # stdout: a record kept without measurements is a state, not an error (stderr carries only the one line
            # of a stop or a mistake)
            print(f"[judged]  {unit.name} ({profile} record of {str(j.rec['provenance'].get('commit', '?'))[:7]}): "
                  f"{said}", flush=True)
    return out


def replays(root: Path, profile: str, results: Path | None = None) -> dict[str, dict]:
    """The notebooks of a profile that the book can build from a valid campaign record instead of measuring again:
    {notebook: {"params", "env", "digest", "made_by"}}.

    A record qualifies when it answers for the profile's own unit (its parameters and seed, and code that computes
    the same numbers: validity.find) and kept its measurement stages. The book then executes the notebook with those
    stages read back (nothing is trained; today's verdict code judges them), under `env`, and its cache key follows
    `digest` (the record's and its stages' bytes), so a new or mended record re-executes exactly its notebook."""
    from .validity import find, made_by
    root = Path(root)
    results = Path(results or root / "results" / "campaign" / profile)
    out, sc = {}, record.scan(results)
    for unit in plan_notebooks(profile, root):
        j = find(results, unit, root, sc)
        if j is None or not j.valid:
            continue
        where = kept_stages(j.path, j.rec)
        kept = (j.rec.get("payload") or {}).get("stages") or []
        if not kept or not all((where / f"{name}.json").exists() for name in kept):
            continue
        try:           # a damaged stage file is named, and the notebook measures for itself
            for name in kept:
                typed.load(where / name)
        except (ValueError, KeyError) as e:
            print(f"[record]  {unit.name}: a stage of its {profile} record is unreadable ({e}); measured again",
                  file=sys.stderr, flush=True)
            continue
        by = made_by(j.rec.get("provenance") or {})
        out[unit.name] = {"params": unit.params, "made_by": by, "digest": _recorded(j.path, where).hexdigest(),
                          "env": {stages.STAGES_ENV: str(where), stages.STAGES_MODE_ENV: "replay", RECORDED_ENV: by}}
    return out

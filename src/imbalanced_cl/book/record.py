"""Recorded results: each executed notebook's verdict rows with their provenance, stored as small JSON files.

After a paper-profile run on a GPU, `python -m imbalanced_cl record --profile paper` writes
results/paper/<notebook>.json (commit, device, date, parameters, wall time, rows). The scoreboard shows those rows
in a column of their own beside the book's own (default-profile) verdicts, without re-running anything.
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import nbformat

from .glued import rows_of


def _provenance(nb) -> dict:
    """What papermill and the provenance cell recorded about an executed notebook."""
    pm = nb.metadata.get("papermill", {})
    out = {"parameters": pm.get("parameters", {}), "wall_s": pm.get("duration"), "date": pm.get("end_time")}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            rec = data.get("application/vnd.imbalanced-cl.provenance+json")
            if rec:
                out.update({k: rec[k] for k in ("commit", "device", "torch", "threads") if k in rec})
    return out


def record(executed_dir: Path, profile: str, out_dir: Path) -> list[Path]:
    """Write <out_dir>/<notebook>.json for every executed notebook that glued verdict rows; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(Path(executed_dir).glob("*.ipynb")):
        rows = rows_of(path)
        if not rows:
            continue
        nb = nbformat.read(path, as_version=4)
        rec = {"notebook": path.stem, "profile": profile, "recorded": _dt.datetime.now(_dt.timezone.utc).isoformat(),
               **_provenance(nb), "rows": rows}
        target = out_dir / f"{path.stem}.json"
        target.write_text(json.dumps(rec, indent=1, default=str) + "\n")
        written.append(target)
    return written


def load(out_dir: Path) -> dict[str, dict]:
    """{notebook: record} of every results/<profile>/*.json (empty when the folder does not exist)."""
    folder = Path(out_dir)
    if not folder.is_dir():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def column(rows: list[dict], records: dict[str, dict]) -> list[dict]:
    """For each book row, the recorded row with the same (notebook, claim), or a 'not yet run' marker."""
    out = []
    for r in rows:
        rec = records.get(r["notebook"])
        if rec is None:
            out.append({"status": "not yet run at paper scale"})
            continue
        match = next((x for x in rec["rows"] if x["claim"] == r["claim"]), None)
        if match is None:
            out.append({"status": "no such row in the paper-scale record"})
            continue
        out.append({"status": "ok", "verdict": match["verdict"], "measured": match["measured"], "lo": match["lo"],
                    "hi": match["hi"], "device": rec.get("device", "?"), "commit": str(rec.get("commit", "?"))[:7],
                    "differs": match["verdict"] != r["verdict"]})
    return out

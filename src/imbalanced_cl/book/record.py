"""Recorded results: each executed notebook's verdict rows with their provenance, stored as small JSON files.

After a paper-profile run on a GPU, `python -m imbalanced_cl record --profile paper` writes
results/paper/<notebook>.json (commit, device, date, parameters, wall time, rows). The scoreboard shows those rows
in a column of their own beside the book's own (default-profile) verdicts, without re-running anything.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
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
            md = data.get("text/markdown", "")
            md = "".join(md) if isinstance(md, list) else md
            if "Provenance" in md:   # the table provenance.show prints: | field | `value` |
                for key in ("commit", "device", "torch", "threads"):
                    m = re.search(rf"\| {key} \| `([^`]*)`", md)
                    if m:
                        out[key] = m.group(1)
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
                    "differs": match["verdict"] != r["verdict"], "units": rec.get("units")})
    return out


# The package's layers that compute a measurement. book/ (rendering, tables) and campaign/ (scheduling) are left out:
# editing them never changes a result, so it must not make every recorded campaign unit stale.
SCIENCE = ("__init__.py", "validate.py", "stats.py", "verdict.py", "paths.py", "sim", "claims", "lt")


def code_digest(root: Path, paths: list[Path], versions: dict | None = None) -> str:
    """sha256 (16 hex digits) over files (relative name and bytes; folders walked for *.py) and package versions."""
    h = hashlib.sha256()
    files = []
    for p in map(Path, paths):
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else []
    for p in sorted(set(files)):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    h.update(json.dumps(versions or {}, sort_keys=True).encode())
    return h.hexdigest()[:16]


def notebook_code(root: Path, notebook: Path) -> str:
    """The code version of one notebook's results: its source, the package's science layers, the result packages."""
    from .runner import dependency_versions
    pkg = Path(root) / "src" / "imbalanced_cl"
    return code_digest(Path(root), [Path(notebook)] + [pkg / s for s in SCIENCE], dependency_versions())


def load_campaign(root: Path, profile: str) -> dict[str, dict]:
    """{notebook: record} of the campaign's `notebook` units at a profile that match today's code and parameters.

    Each record is shaped like a results/<profile>/ record (rows, device, commit, wall time) plus `units`
    ("1 of 1"). A unit recorded under other code or parameters is stale and left out (`campaign status` lists it);
    a file that does not parse is skipped.
    """
    from .profiles import params as profile_params
    folder = Path(root) / "results" / "campaign" / profile / "notebook"
    out = {}
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = json.loads(p.read_text())
            nb = Path(root) / "notebooks" / f"{rec['name']}.ipynb"
            current = (nb.exists() and rec["code"] == notebook_code(root, nb)
                       and rec["params"] == profile_params(profile, rec["name"]))
        except (ValueError, KeyError, OSError):
            continue
        if current:
            prov = rec["provenance"]
            out[rec["name"]] = {"notebook": rec["name"], "profile": profile, **prov,
                                "date": prov.get("recorded"), "parameters": rec["params"],
                                "rows": rec["payload"].get("rows", []), "units": "1 of 1"}
    return out

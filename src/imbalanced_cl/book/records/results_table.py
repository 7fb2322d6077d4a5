"""The downloadable results table: every verdict row of the executed claim notebooks, with its notebook, profile and
commit, as CSV and JSON. The Sphinx extension writes it into the HTML build (results/verdicts.csv and .json) when the
book is built; the scoreboard links to it."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import nbformat

from ... import verdict as V
from . import glued
# the commit and device the provenance cell recorded (one reader, in record.py)
from .record import recorded_provenance

FIELDS = ("notebook", "profile", "commit", "id", "kind", "claim", "source", "predicted", "band", "measured", "lo", "hi",
          "verdict", "rule", "premise", "n")
NAME = "verdicts"   # results/verdicts.csv and results/verdicts.json in the built HTML


def rows(executed_dir: Path) -> list[dict]:
    """Every glued verdict row of the executed notebooks in `executed_dir`, each with its notebook's profile and
    commit, in the FIELDS order."""
    out = []
    for path in sorted(Path(executed_dir).glob("*.ipynb")):
        found = glued.rows_of(path)
        if not found:
            continue
        nb = nbformat.read(path, as_version=4)
        profile = nb.metadata.get("imbalanced_cl", {}).get("profile", "")
        commit = recorded_provenance(nb).get("commit", "")
        for r in found:      # each row as JSON (verdict.to_json: its band in words, null for no number)
            row = {**V.to_json(r), "notebook": r.notebook or path.stem, "profile": profile, "commit": commit}
            out.append({k: row[k] for k in FIELDS})
    return out


def to_csv(table: list[dict]) -> str:
    """The table as CSV text (a header line, then one line per row; NaN as an empty cell)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    for r in table:
        w.writerow({k: ("" if isinstance(v, float) and v != v else v) for k, v in r.items()})
    return buf.getvalue()


def write(executed_dir: Path, out_dir: Path) -> list[Path]:
    """Write <out_dir>/verdicts.csv and verdicts.json from the executed notebooks; the paths written."""
    table = rows(executed_dir)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / f"{NAME}.csv", out_dir / f"{NAME}.json"
    csv_path.write_text(to_csv(table), encoding="utf8")
    clean = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in table]
    json_path.write_text(json.dumps({"fields": list(FIELDS), "rows": clean}, indent=1, ensure_ascii=False) + "\n",
                         encoding="utf8")
    return [csv_path, json_path]

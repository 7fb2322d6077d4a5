"""Reading glued verdict rows out of executed notebooks (myst-nb glue under '<notebook>_verdicts')."""
from __future__ import annotations

import json
from pathlib import Path

from ...verdict import Verdict, from_json


def tables_of(path: Path) -> list[dict]:
    """The glued verdict tables of one executed notebook, as stored: {"notebook", "rows", and "recorded" if any}."""
    import nbformat
    tables = []
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name", "")
            mime = [k for k in out.get("data", {}) if k.endswith("application/json")]
            if name.endswith("_verdicts") and mime:
                payload = out["data"][mime[0]]
                tables.append(json.loads(payload) if isinstance(payload, str) else payload)
    return tables


def rows_of(path: Path) -> list[Verdict]:
    """The glued verdict rows of one executed notebook, read back as Verdict rows (verdict.from_json)."""
    return [from_json(r) for t in tables_of(path) for r in t["rows"]]


def recorded_of(path: Path) -> str:
    """What an executed notebook's verdicts took from campaign records ("" when nothing)."""
    return "; ".join(t["recorded"] for t in tables_of(path) if t.get("recorded"))


def collect(executed_dir) -> list[Verdict]:
    """Gather the glued verdict rows of every executed notebook under executed_dir (for the scoreboard)."""
    return [r for path in sorted(Path(executed_dir).glob("*.ipynb")) for r in rows_of(path)]

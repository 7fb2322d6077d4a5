"""An executed notebook's verdict table in the terminal (`python -m imbalanced_cl show OUT.ipynb`), read from the
verdict rows the notebook glued into its outputs, so that a papermill run needs no JupyterLab to be read."""
from __future__ import annotations

import json
import shutil
import textwrap
from collections import Counter
from pathlib import Path

from .. import verdict as V
from . import glued
from .tables import fmt


def _interval(r: dict) -> str:
    """The measured value with its 95% interval, or a dash when there is no finite measurement."""
    m = fmt(r.get("measured"))
    if m == "–":
        return "–"
    lo, hi = fmt(r.get("lo")), fmt(r.get("hi"))
    return m if lo == hi == "–" else f"{m} [{lo}, {hi}]"


def _run_line(path: Path) -> str:
    """The parameters the run was given (papermill's record in the notebook's metadata), in one line."""
    meta = json.loads(path.read_text()).get("metadata", {})
    params = meta.get("papermill", {}).get("parameters") or {}
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if not str(k).startswith("_"))
    return f"run with: {shown}" if shown else "run with the notebook's defaults"


def render(path: Path, width: int | None = None) -> str:
    """The verdict table of one executed notebook as plain text, `width` columns wide (the terminal's by default)."""
    path = Path(path)
    rows = glued.rows_of(path)
    width = max(60, width or shutil.get_terminal_size((100, 24)).columns)
    if not rows:
        return (f"{path}: no verdict rows in its outputs (was it executed to the end? A notebook glues its verdict "
                f"table in its last cells).")
    tally = Counter(r["verdict"] for r in rows)
    first = f"{path.name}: {len(rows)} verdict rows: " + ", ".join(f"{tally[v]} {v}" for v in V.VERDICTS if tally[v])
    head = [*textwrap.wrap(first, width, subsequent_indent="  "),
            *textwrap.wrap(_run_line(path), width, subsequent_indent="  "), ""]
    wv = max(len("verdict"), *(len(r["verdict"]) for r in rows))
    wm = min(32, max(len("measured [95% interval]"), *(len(_interval(r)) for r in rows)))
    wp = min(30, max(len("predicted"), *(len(V.predicted_with_band(r)) for r in rows)))
    wc = max(20, width - wv - wm - wp - 6)
    out = head + [f"{'verdict':<{wv}}  {'measured [95% interval]':<{wm}}  {'predicted':<{wp}}  claim (source)",
                  "-" * min(width, wv + wm + wp + 6 + wc)]
    for r in rows:
        claim = f"{r['claim']} ({r['source']})" if r.get("source") else r["claim"]
        left = [r["verdict"], _interval(r), V.predicted_with_band(r)]
        cols = [textwrap.wrap(t, w) or [""] for t, w in zip(left + [claim], (wv, wm, wp, wc))]
        for i in range(max(len(c) for c in cols)):
            cells = [c[i] if i < len(c) else "" for c in cols]
            out.append(f"{cells[0]:<{wv}}  {cells[1]:<{wm}}  {cells[2]:<{wp}}  {cells[3]}".rstrip())
    return "\n".join(out)


def main(paths: list[str], width: int | None = None) -> int:
    """Print the verdict table of each executed notebook; 0 if every one had rows, 1 if one had none, 2 if missing."""
    code = 0
    for i, p in enumerate(paths):
        path = Path(p)
        if not path.is_file():
            print(f"error: {p}: no such file (give the output notebook of a papermill run, e.g. out.ipynb)")
            return 2
        text = render(path, width)
        print(("\n" if i else "") + text)
        code = code or (0 if glued.rows_of(path) else 1)
    return code

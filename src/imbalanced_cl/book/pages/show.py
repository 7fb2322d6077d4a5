"""An executed notebook's verdict table in the terminal (`python -m imbalanced_cl show OUT.ipynb`), read from the
verdict rows the notebook glued into its outputs, so that a papermill run needs no JupyterLab to be read."""
from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections import Counter
from pathlib import Path

from ... import verdict as V
from ..records import glued
from .render import measured_text


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
    tally = Counter(r.verdict for r in rows)
    first = f"{path.name}: {len(rows)} verdict rows: " + ", ".join(f"{tally[v]} {v}" for v in V.VERDICTS if tally[v])
    head = [*textwrap.wrap(first, width, subsequent_indent="  "),
            *textwrap.wrap(_run_line(path), width, subsequent_indent="  "), ""]
    wv = max(len("verdict"), *(len(r.verdict) for r in rows))
    wm = min(32, max(len("measured [95% interval]"), *(len(measured_text(r)) for r in rows)))
    wp = min(30, max(len("predicted"), *(len(V.predicted_with_band(r)) for r in rows)))
    wc = max(20, width - wv - wm - wp - 6)
    out = head + [f"{'verdict':<{wv}}  {'measured [95% interval]':<{wm}}  {'predicted':<{wp}}  claim (source)",
                  "-" * min(width, wv + wm + wp + 6 + wc)]
    for r in rows:
        claim = f"{r.claim} ({r.source})" if r.source else r.claim
        left = [r.verdict, measured_text(r), V.predicted_with_band(r)]
        cols = [textwrap.wrap(t, w) or [""] for t, w in zip(left + [claim], (wv, wm, wp, wc), strict=True)]
        for i in range(max(len(c) for c in cols)):
            cells = [c[i] if i < len(c) else "" for c in cols]
            out.append(f"{cells[0]:<{wv}}  {cells[1]:<{wm}}  {cells[2]:<{wp}}  {cells[3]}".rstrip())
    return "\n".join(out)


def problem(path: Path) -> str:
    """Why `path` cannot be shown, in one line ('' when it can): missing, or not a notebook."""
    if not path.is_file():
        return "no such file (give the output notebook of a papermill run, e.g. out.ipynb)"
    try:
        nb = json.loads(path.read_text())
    except (UnicodeDecodeError, ValueError) as e:      # truncated, or not text: never a 58-line traceback
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        return f"not a notebook: it does not read as JSON ({why}); was it copied or written only in part?"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "not a notebook: its JSON has no list of cells"
    return ""


def main(paths: list[str], width: int | None = None) -> int:
    """Print the verdict table of each executed notebook; 0 if every one had rows, 1 if one had none, 2 if one is
    missing or not a notebook (errors on stderr, one line each)."""
    for p in paths:         # every file checked before any table is printed
        why = problem(Path(p))
        if why:
            print(f"error: {p}: {why}", file=sys.stderr)
            return 2
    code = 0
    for i, p in enumerate(paths):
        path = Path(p)
        text = render(path, width)
        has_rows = bool(glued.rows_of(path))
        print(("\n" if i and has_rows else "") + text, file=sys.stdout if has_rows else sys.stderr)
        code = code or (0 if has_rows else 1)
    return code

"""The claims scoreboard: every claim notebook's glued verdict rows, gathered into one table.

Nothing here is written by hand: `gather` reads the executed notebooks (verdict.collect) and reports,
for every claim notebook of the book's table of contents, whether its verdicts were found. A claim
notebook is a notebook under notebooks/ in _toc.yml that does not collect others and does not say
{"imbalanced_cl": {"verdicts": false}} in its metadata (the explorer says so).
"""
from __future__ import annotations

import html
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import verdict as V
from . import tables as T
from .runner import collects, toc_notebooks
from .profiles import repo_root

ENV = "IMBALANCED_CL_EXECUTED"


def claim_notebooks(root: Path | None = None) -> list[str]:
    """Names of the toc notebooks expected to record verdicts, in reading order."""
    root = Path(root or repo_root())
    out = []
    for nb in toc_notebooks(root):
        if nb.parent.name != "notebooks" or collects(nb):
            continue
        meta = json.loads(nb.read_text()).get("metadata", {}).get("imbalanced_cl", {})
        if meta.get("verdicts", True):
            out.append(nb.stem)
    return out


@dataclass
class Board:
    """Rows found, and the status of every expected notebook ("ok", or why its verdicts are missing)."""

    executed_dir: str
    rows: list = field(default_factory=list)
    status: dict = field(default_factory=dict)

    @property
    def missing(self) -> dict:
        """{notebook: reason} for every claim notebook whose verdicts are not in the table."""
        return {k: v for k, v in self.status.items() if v != "ok"}

    def counts(self) -> Counter:
        """How many rows have each verdict."""
        return Counter(r["verdict"] for r in self.rows)


def resolve_dir(executed_dir: str = "") -> str:
    """The folder of executed notebooks: the argument, else $IMBALANCED_CL_EXECUTED, else ''."""
    return executed_dir or os.environ.get(ENV, "")


def gather(executed_dir: str = "", root: Path | None = None) -> Board:
    """Collect the verdict rows of every claim notebook from the executed copies."""
    folder = resolve_dir(executed_dir)
    expected = claim_notebooks(root)
    board = Board(folder)
    if not folder or not Path(folder).is_dir():
        why = (f"no executed notebooks: ${ENV} is not set" if not folder
               else f"no executed notebooks: {folder} does not exist")
        board.status = {nb: why for nb in expected}
        return board
    rows = collect(folder)
    by_nb: dict[str, list] = {}
    for r in rows:
        by_nb.setdefault(r.get("notebook", ""), []).append(r)
    for nb in expected:
        if not (Path(folder) / f"{nb}.ipynb").exists():
            board.status[nb] = "not executed (no executed copy found)"
        elif not by_nb.get(nb):
            board.status[nb] = f"executed, but it recorded no verdicts (no glue key '{nb}_verdicts')"
        else:
            board.status[nb] = "ok"
            board.rows.extend(by_nb[nb])
    return board


def _interval(r: dict) -> str:
    return f'{T.fmt(r["measured"])} <span class="sb-ci">[{T.fmt(r["lo"])}, {T.fmt(r["hi"])}]</span>'


def render(board: Board, base: str = "../notebooks/") -> str:
    """HTML: a summary line, a warning for missing verdicts, and the table; evidence links to base + NN.html."""
    colours = T._COLOURS
    out = []
    c = board.counts()
    summary = ", ".join(f'<b style="color:{colours[v]}">{c.get(v, 0)} {v}</b>' for v in V.VERDICTS)
    n_ok = sum(1 for s in board.status.values() if s == "ok")
    out.append(f'<p class="sb-summary">{len(board.rows)} claims from {n_ok} of {len(board.status)} claim '
               f"notebooks: {summary}.</p>")
    if board.missing:
        items = "".join(f'<li><a href="{base}{html.escape(nb)}.html">{html.escape(nb)}</a>: '
                        f"{html.escape(why)}</li>" for nb, why in board.missing.items())
        out.append('<div class="admonition warning sb-missing"><p class="admonition-title">Missing verdicts</p>'
                   f"<p>These notebooks are in the book but their verdicts are not in the table:</p><ul>{items}</ul>"
                   "</div>")
    head = ["claim", "paper", "predicted", "measured [95% interval]", "verdict"]
    out.append('<table class="verdict-table scoreboard" style="width:100%"><thead><tr>'
               + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>")
    for r in board.rows:
        nb = html.escape(r["notebook"])
        colour = colours.get(r["verdict"], "#000")
        cells = [f'{html.escape(r["claim"])}<br><small>evidence: <a href="{base}{nb}.html">{nb}</a></small>',
                 html.escape(r["source"]), html.escape(r["predicted"]), _interval(r),
                 f'<b style="color:{colour}">{html.escape(r["verdict"])}</b>'
                 f'<br><small style="color:#57606a">{html.escape(r.get("rule", ""))}</small>']
        out.append(f'<tr data-notebook="{nb}">' + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    if not board.rows:
        out.append(f'<tr class="sb-empty"><td colspan="{len(head)}">No verdicts were found.</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


class Scoreboard:
    """Displayable scoreboard (HTML in the book, plain text elsewhere)."""

    def __init__(self, board: Board, base: str = "../notebooks/"):
        self.board, self.base = board, base

    def _repr_html_(self):
        return render(self.board, self.base)

    def __repr__(self):
        lines = [f"{len(self.board.rows)} claims; missing: {self.board.missing or 'none'}"]
        lines += [f"[{r['verdict']}] {r['notebook']}: {r['claim']}" for r in self.board.rows]
        return "\n".join(lines)

def rows_of(path: Path) -> list[dict]:
    """The glued verdict rows of one executed notebook."""
    import nbformat
    rows = []
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name", "")
            mime = [k for k in out.get("data", {}) if k.endswith("application/json")]
            if name.endswith("_verdicts") and mime:
                payload = out["data"][mime[0]]
                payload = json.loads(payload) if isinstance(payload, str) else payload
                rows.extend(payload["rows"])
    return rows


def collect(executed_dir) -> list[dict]:
    """Gather the glued verdict rows of every executed notebook under executed_dir (for the scoreboard)."""
    return [r for path in sorted(Path(executed_dir).glob("*.ipynb")) for r in rows_of(path)]

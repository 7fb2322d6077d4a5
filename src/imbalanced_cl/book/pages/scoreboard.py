"""The claims scoreboard: every claim notebook's glued verdict rows, gathered into one table.

Nothing here is written by hand: `gather` reads the executed notebooks (verdict.collect) and reports,
for every claim notebook of the book's table of contents, whether its verdicts were found. A claim
notebook is a notebook under notebooks/ in _toc.yml that does not collect others and does not say
{"imbalanced_cl": {"verdicts": false}} in its metadata (the explorer says so).
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from ... import verdict as V
from ..build.cache import collects
from ..build.profiles import PROFILES, repo_root
from ..build.runner import toc_notebooks
from ..records import glued, provenance, record, stability
from ..records.glued import collect
from . import answers, claim_summary, summary
from .render import badge, colour, details, esc, fmt, header_cells, interval, row, tag

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
    rows: list = field(default_factory=list)      # Verdict rows (glued.collect)
    status: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)  # {notebook: profile its executed copy was run at}
    profile: str = ""                             # the profile the runner ran this book at
    commit: str = ""                              # the commit the scoreboard was built from
    date: str = ""                                # when the scoreboard was built (UTC)
    paper: dict = field(default_factory=dict)     # {notebook: record} from results/paper/ (book.records.record)
    stability: dict | None = None                 # results/stability/<profile>.json (book.records.stability), or None
    paper_stability: dict | None = None           # results/stability/campaign-paper.json (campaign stability), or None
    recorded: dict = field(default_factory=dict)  # {notebook: what its verdicts took from campaign records}
    seed_verdicts: dict = field(default_factory=dict)  # {(notebook, id): the verdict at this seed} of a row that
    #                                                    changes with the seed, shown inconclusive in `rows`

    @property
    def missing(self) -> dict:
        """{notebook: reason} for every claim notebook whose verdicts are not in the table."""
        return {k: v for k, v in self.status.items() if v != "ok"}

    def counts(self, notebook: str | None = None, kind: str = "claims") -> Counter:
        """How many rows have each verdict (of one notebook, or of all): claim rows, or premise ("regime") rows,
        by answers.is_claim_row / is_premise_row, the one definition every count of the book uses."""
        test = answers.is_premise_row if kind == "regime" else answers.is_claim_row
        return Counter(r.verdict for r in self.rows if (notebook is None or r.notebook == notebook) and test(r))

    def summaries(self) -> list:
        """(this build's, the paper scale's) summary of every claim (claim_summary.summaries): what every page shows."""
        return claim_summary.summaries(self.rows, self.book_profile or "this build", self.paper)

    @property
    def book_profile(self) -> str:
        """The runner's profile; outside the runner, the one profile every executed notebook shares (or "")."""
        if self.profile in PROFILES:
            return self.profile
        found = set(self.profiles.values())
        return found.pop() if len(found) == 1 else ""

    @property
    def mixed(self) -> dict:
        """{notebook: profile} for executed claim notebooks not run at the book's profile (all, when none is)."""
        want = self.book_profile
        return {nb: p for nb, p in self.profiles.items() if p != want} if self.profiles else {}


def resolve_dir(executed_dir: str = "") -> str:
    """The folder of executed notebooks: the argument, else $IMBALANCED_CL_EXECUTED, else ''."""
    return executed_dir or os.environ.get(ENV, "")


def gather(executed_dir: str = "", root: Path | None = None) -> Board:
    """Collect the verdict rows of every claim notebook from the executed copies."""
    folder = resolve_dir(executed_dir)
    expected = claim_notebooks(root)
    board = Board(folder, profile=provenance.profile(), commit=provenance.commit_label(),
                  date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    if not folder or not Path(folder).is_dir():
        why = (f"no executed notebooks: ${ENV} is not set" if not folder
               else f"no executed notebooks: {folder} does not exist")
        board.status = {nb: why for nb in expected}
        return board
    rows = collect(folder)
    by_nb: dict[str, list] = {}
    for r in rows:
        by_nb.setdefault(r.notebook, []).append(r)
    for nb in expected:
        path = Path(folder) / f"{nb}.ipynb"
        if not path.exists():
            board.status[nb] = "not executed (no executed copy found)"
            continue
        meta = json.loads(path.read_text()).get("metadata", {}).get("imbalanced_cl", {})
        board.profiles[nb] = meta.get("profile", "unknown (not run by the book runner)")
        if not by_nb.get(nb):
            board.status[nb] = f"executed, but it recorded no verdicts (no glue key '{nb}_verdicts')"
        else:
            board.status[nb] = "ok"
            board.rows.extend(by_nb[nb])
            note = glued.recorded_of(path)
            if note:
                board.recorded[nb] = note
    here = Path(root or repo_root())
    # campaign units (python -m imbalanced_cl campaign) of today's code and parameters win over `record` files
    board.paper = record.paper_records(here, "paper")
    board.stability = stability.load(here, board.book_profile or "default")
    board.paper_stability = stability.load_campaign(here, "paper")
    flips = stability.flipped(board.stability)
    for i, r in enumerate(board.rows):   # a verdict that changes with the seed is not a finding (methods page)
        if (r.notebook, r.id) in flips and r.verdict != V.INCONCLUSIVE:
            board.seed_verdicts[(r.notebook, r.id)] = r.verdict
            board.rows[i] = replace(r, verdict=V.INCONCLUSIVE)
    return board


def _interval(r: V.Verdict) -> str:
    """HTML: a row's measured value, its interval in a span of its own (the page's CSS sets it apart)."""
    return f'{fmt(r.measured)} <span class="sb-ci">[{fmt(r.lo)}, {fmt(r.hi)}]</span>'


def _built_line(board: Board) -> str:
    prof = (f"at the <b>{esc(board.book_profile)}</b> profile" if board.book_profile
            else "from notebooks run at different profiles")
    return (f'<p class="sb-built">Built {prof} from commit <code>{esc(board.commit or "unknown")}</code> '
            f"on {esc(board.date or 'an unknown date')}. Every verdict row, with its notebook, profile, commit and "
            f'value, to download: <a href="../results/verdicts.csv" download>CSV</a> · '
            f'<a href="../results/verdicts.json" download>JSON</a>.</p>')


def _changed_items(s: dict) -> str:
    """The rows whose verdict changed with the seed, as list items: notebook, claim, each seed's verdict."""
    return "".join(f"<li>{esc(c['notebook'])}: {esc(c['claim'])}: "
                   f"{esc(', '.join(f'seed {k}: {v}' for k, v in c['verdicts'].items()))}</li>" for c in s["changed"])


def _moving(s: dict) -> str:
    """' (N of them move with the seed, ...: K of those kept their verdict)', or '' for a record made before that was
    counted."""
    if "seed_dependent" not in s:
        return ""
    return (f" ({s['seed_dependent']} of them move with the seed, the rest being closed forms or settings: "
            f"{s['seed_dependent_unchanged']} of those kept their verdict)")


def _paper_stability(board: Board) -> str:
    """One paragraph: the seed stability of the recorded paper-scale units (campaign stability), if measured."""
    s = board.paper_stability
    if not s:
        return ""
    items = _changed_items(s)
    return (f'<p class="sb-stability">At the <b>paper</b> scale (recorded campaign units of '
            f'{esc(", ".join(s["notebooks"]))}, base seeds {esc(s["seeds"])}): <b>{s["unchanged"]} of {s["rows"]} '
            f'rows</b> ({100 * s["share_unchanged"]:.0f}%) keep their verdict{esc(_moving(s))}; '
            'conclusive flips (holds ↔ does not '
            f'hold, partly ↔ does not hold): {s["flips"]}.</p><ul>{items}</ul>')


def stability_section(board: Board) -> str:
    """The seed-stability table (book.records.stability) and the paper-scale units' (campaign stability), or how to
    produce them."""
    s = board.stability
    if not s:
        return ('<h2>Seed stability</h2><p class="sb-stability">Not yet measured for this profile: run '
                '<code>python -m imbalanced_cl stability --profile default --seeds 0 1</code> (results/stability/).</p>'
                + _paper_stability(board))
    if s.get("stale"):
        return (f'<h2>Seed stability</h2><p class="sb-stability">The stored result for the {esc(s["profile"])} '
                f'profile is stale: {esc(s["stale"])}. Run <code>python -m imbalanced_cl stability --profile '
                f'{esc(s["profile"])} --seeds 0 1</code> to measure it again.</p>' + _paper_stability(board))
    items = _changed_items(s)
    return (f'<h2>Seed stability</h2><p class="sb-stability">Re-executed with base seeds {esc(s["seeds"])} at the '
            f'{esc(s["profile"])} profile: <b>{s["unchanged"]} of {s["rows"]} rows</b> '
            f'({100 * s["share_unchanged"]:.0f}%) keep their verdict{esc(_moving(s))}. Rows that change are shown as '
            f'inconclusive above.'
            f'</p><ul>{items}</ul>' + _paper_stability(board))


def summary_table(board: Board, base: str) -> str:
    """One line per claim notebook: its verdict counts (the page opens on this)."""
    head = header_cells([esc(v) for v in V.VERDICTS])
    out = ['<div class="sb-scroll" style="overflow-x:auto" tabindex="0" role="region" aria-label="Verdicts per claim '
           'notebook (scrolls sideways on narrow screens)">'
           '<table class="verdict-table sb-summary-table" style="margin-bottom:1em">'
           '<caption>Verdicts per claim notebook</caption>'
           f'<thead><tr><th scope="col">notebook</th>{head}<th scope="col">claims</th>'
           f'<th scope="col">premise rows not holding</th><th scope="col">paper scale</th></tr></thead><tbody>']
    for nb, status in board.status.items():
        c, reg = board.counts(nb), board.counts(nb, kind="regime")
        cells = "".join(f'<td style="color:{colour(v)}">{c.get(v, 0) or ""}</td>' for v in V.VERDICTS)
        note = "" if status == "ok" else f' <small>({esc(status)})</small>'
        if any(r.kind == "companion" for r in board.rows if r.notebook == nb):
            note += " <small>(companion claims, not the paper's)</small>"
        if nb in board.recorded:
            note += f' <small class="sb-recorded">(with {esc(board.recorded[nb])})</small>'
        rec = board.paper.get(nb) or {}
        paper = ("record unreadable" if rec.get("unreadable") else record.not_judged(rec) if record.not_judged(rec)
                 else "recorded" + (f", {rec['units']} units" if rec.get("units") else "") if nb in board.paper
                 else "not yet run at paper scale")
        prem = f"{sum(reg.values()) - reg.get(V.HOLDS, 0)} of {sum(reg.values())}" if reg else ""
        out.append(f'<tr data-summary="{esc(nb)}"><th scope="row"><a href="{base}{esc(nb)}.html">{esc(nb)}</a>'
                   f"{note}</th>{cells}<td>{sum(c.values())}</td><td>{prem}</td><td><small>{paper}</small></td></tr>")
    total = board.counts()
    cells = "".join(f"<td>{total.get(v, 0)}</td>" for v in V.VERDICTS)
    out.append(f'</tbody><tfoot><tr><th scope="row">all</th>{cells}<td class="sb-table-total">{sum(total.values())}'
               '</td><td></td><td></td></tr></tfoot></table></div>')
    return "".join(out)


def _paper_cell(p: dict) -> str:
    """The paper-scale column of one row: its verdict with the device, commit and date that recorded it, or why there
    is none."""
    if p["status"] != "ok":
        return f'<small>{esc(p["status"])}</small>'
    return (f'{badge(p["verdict"])}<br>{interval(p["row"])}<br><small>{esc(p["device"])}, commit {esc(p["commit"])}, '
            f'{esc(p.get("date", "?"))}'
            + (f', {esc(p["units"])} units' if p.get("units") else "") + "</small>")


def _rows_table(rows: list[V.Verdict], base: str, paper: dict | None = None, profile: str = "",
               seed_verdicts: dict | None = None, pairs: list | None = None) -> str:
    """HTML: one notebook's verdict rows, each with its evidence link, its rule and its paper-scale record (and, for
    a row that changes with the seed, its verdict at this seed: Board.seed_verdicts); a row that decides a claim's
    verdict (claim_summary) is marked ★ with the claim."""
    cols = record.column(rows, paper or {})
    head = ["claim", "source", "predicted", "measured [95% interval]", f"verdict ({profile or 'this book'})",
            "paper scale"]
    out = ['<table class="verdict-table scoreboard" style="width:100%"><thead><tr>' + header_cells(head)
           + "</tr></thead><tbody>"]
    for r, p in zip(rows, cols, strict=True):
        nb = esc(r.notebook)
        was = (seed_verdicts or {}).get((r.notebook, r.id))
        flip = f" <small>(was {esc(was)} at this seed; it changes with the seed)</small>" if was else ""
        kind = f" <small>[{esc(r.kind)}]</small>" if r.kind not in ("", "paper") else ""
        star = claim_summary.star(r, pairs or [])
        cells = [f'{star}{esc(r.claim)}{kind}<br><small>evidence: <a href="{base}{nb}.html">{nb}</a></small>',
                 esc(r.source), esc(V.predicted_with_band(r)), _interval(r),
                 f'{badge(r.verdict)}{flip}<br><small style="color:#57606a">{esc(details(r))}</small>',
                 _paper_cell(p)]
        mark = ' class="sb-differs" style="background:#fff8c5"' if p.get("differs") else ""
        out.append(row(cells, f' data-notebook="{nb}"{mark}'))
    out.append("</tbody></table>")
    return "\n".join(out)


def render(board: Board, base: str = "../notebooks/") -> str:
    """HTML: who built it, a one-line-per-notebook summary, warnings, then every row folded per notebook.

    Evidence links point to base + NN.html. Each notebook's rows sit in a <details> element, closed, so
    the page opens on the summary.
    """
    pairs = board.summaries()
    out = [_built_line(board), summary.answers_table(pairs, base)]
    c, premises = board.counts(), board.counts(kind="regime")
    tally = ", ".join(badge(v, f"{c.get(v, 0)} {v}") for v in V.VERDICTS)
    n_ok = sum(1 for s in board.status.values() if s == "ok")
    out.append(f'<p class="sb-summary"><span class="sb-total">{sum(c.values())}</span> claim rows from {n_ok} of '
               f"{len(board.status)} claim notebooks: {tally}; and {sum(premises.values())} premise rows "
               f"({premises.get(V.HOLDS, 0)} hold), counted apart.</p>")
    if board.mixed:
        items = "".join(f"<li>{esc(nb)}: {esc(p)}</li>" for nb, p in board.mixed.items())
        out.append('<div class="admonition warning sb-mixed"><p class="admonition-title">Mixed profiles</p>'
                   f"<p>These executed notebooks were not run at the {esc(board.book_profile or 'same')} profile:</p>"
                   f"<ul>{items}</ul></div>")
    if board.missing:
        items = "".join(f'<li><a href="{base}{esc(nb)}.html">{esc(nb)}</a>: {esc(why)}</li>'
                        for nb, why in board.missing.items())
        out.append('<div class="admonition warning sb-missing"><p class="admonition-title">Missing verdicts</p>'
                   f"<p>These notebooks are in the book but their verdicts are not in the table:</p><ul>{items}</ul>"
                   "</div>")
    out.append(summary_table(board, base))
    if not board.rows:
        out.append('<p class="sb-empty">No verdicts were found.</p>')
    for nb in board.status:
        rows = [r for r in board.rows if r.notebook == nb]
        if rows:
            c = board.counts(nb)
            counts = ", ".join(f"{c[v]} {v}" for v in V.VERDICTS if c[v])
            out.append(f'<details class="sb-rows" data-rows="{esc(nb)}"><summary><b>{esc(nb)}</b>: '
                       f"{len(rows)} rows ({esc(counts)})</summary>"
                       f"{_rows_table(rows, base, board.paper, board.book_profile, board.seed_verdicts, pairs)}"
                       "</details>")
    out.append(stability_section(board))
    return "\n".join(out)


class Scoreboard:
    """Displayable scoreboard (HTML in the book, plain text elsewhere)."""

    def __init__(self, board: Board, base: str = "../notebooks/"):
        self.board, self.base = board, base

    def _repr_html_(self):
        return render(self.board, self.base)

    def __repr__(self):
        b = self.board
        lines = [f"built at the {b.book_profile or 'mixed'} profile from commit {b.commit} on {b.date}",
                 f"{len(b.rows)} claims; missing: {b.missing or 'none'}"]
        lines += [f"{tag(r.verdict)} {r.notebook}: {r.claim}" for r in b.rows]
        return "\n".join(lines)

"""Verdict tables as a reader sees them: HTML and JSON renderings, and the myst-nb glue the scoreboard reads."""
from __future__ import annotations

from dataclasses import replace

from ... import premises as P
from ...stats import RANGES
from ...verdict import (FAILS, HOLDS, INCONCLUSIVE, Verdict, VerdictError, from_json, gate, is_premise_row,
                        is_required_premise, predicted_with_band, to_json)
from .render import badge, ci_text, details, esc, fmt, header_cells, interval, row, tag

ANCHOR = "verdict-table"     # the id of a notebook's verdict table: every "verdict table" link lands on it


class VerdictTable:
    """A list of Verdict rows with HTML and JSON representations (JSON is what glue stores).

    Building one checks the rows (verdict.gate): every row has an id, unique here; every premise it depends on exists;
    and the table's premise rows are applied by id to the rows that depend on them. An interval that leaves the range
    of its quantity is refused too. Each failure is one VerdictError line naming the notebook and the row.
    """

    def __init__(self, notebook: str, rows: list[Verdict], recorded: str = ""):
        self.notebook = notebook
        self.rows = [replace(r, notebook=notebook) for r in gate(list(rows), notebook)]
        for r in self.rows:
            if not r.interval_in_range():
                lo, hi = RANGES[r.quantity]
                raise VerdictError(f"{notebook}: row {r.claim[:70]!r}: interval [{r.lo:.4g}, {r.hi:.4g}] leaves the "
                                   f"range [{lo:g}, {hi:g}] of a {r.quantity}")
        self.recorded = recorded    # what of the rows comes from campaign records (the scoreboard shows it), or ""

    def to_json(self) -> list[dict]:
        """Rows as plain dicts (verdict.to_json: NaN and ±inf become None so the JSON is valid, the band in words)."""
        return [to_json(r) for r in self.rows]

    def _repr_json_(self):
        return {"notebook": self.notebook, "rows": self.to_json(),
                **({"recorded": self.recorded} if self.recorded else {})}

    def _repr_html_(self):
        # the id is what every "verdict table" link lands on (ANCHOR), whatever the body; the book marks each row that
        # decides a claim (pages/sphinxext.py reads data-row, the row's id)
        return f'<div id="{ANCHOR}" class="vt">' + self._body() + "</div>"

    def _body(self) -> str:
        """The table's HTML inside its anchor: the premise note, what comes from records, the rows (folded_html)."""
        note = f'<p class="vt-recorded">Includes {esc(self.recorded)}.</p>' if self.recorded else ""
        shown = [from_json(d) for d in self.to_json()]     # the rows as glued, as every reader of the glue sees them
        return premises_note(shown) + note + folded_html(shown)

    def __repr__(self):
        return "\n".join(f"{tag(r.verdict)} {r.claim}: predicted {predicted_with_band(r)}; measured "
                         f"{ci_text(r.measured, r.lo, r.hi)}" for r in self.rows)

    def glue(self, key: str | None = None) -> None:
        """Show the table and record it with myst-nb glue as '<notebook>_verdicts' (HTML shown, JSON kept).

        Returns None on purpose: a returned table, last in a cell, would be echoed as a second copy.
        """
        glue_shown(key or f"{self.notebook}_verdicts", self)


def glue_shown(name: str, obj) -> None:
    """Display `obj` and name its output `name` for myst-nb's {glue} and for the records (book/records/glued.py).

    The output is what myst_nb.glue(name, obj, display=True) writes (its mime bundle, plain mime types, and
    metadata {"scrapbook": {"name": name, "mime_prefix": ""}}), made here so that a kernel without the book
    toolchain (a lent GPU machine, a cluster node) still records its verdict rows.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display
    bundle, metadata = format_display_data(obj)
    metadata["scrapbook"] = {"name": name, "mime_prefix": ""}
    display(bundle, raw=True, metadata=metadata)


def premises_note(rows: list[Verdict], map_page: str = "10_premise_map.html") -> str:
    """One paragraph above a notebook's table: which required premises of the theorems this run meets and which it
    does not (with numbers), pointing to the premise map for where they hold ('' when there are no premise rows). A
    premise checked once per case (scoped rows: per d, per ρ, per cell) is one entry: met where every case meets it,
    else "met in k of n cases"."""
    req = [r for r in rows if is_required_premise(r)]
    if not req:
        return ""
    groups: dict[str, list[Verdict]] = {}
    for r in req:
        groups.setdefault(P.premise_of(r.id), []).append(r)
    met, not_met, unchecked = [], [], []
    for pid, rs in groups.items():
        judged = [r for r in rs if r.verdict in (HOLDS, FAILS, INCONCLUSIVE)]
        if len(rs) == 1:                                          # one row: its own words and numbers
            r = rs[0]
            name = r.claim.removeprefix("regime: ")
            detail = f"{name} ({fmt(r.measured)} vs {r.predicted}: {r.verdict})"
        else:
            name = P.name(pid)
            k = sum(r.verdict == HOLDS for r in judged)
            detail = f"{name} (met in {k} of {len(judged)} cases checked)"
        if not judged:
            unchecked.append(name)
        elif all(r.verdict == HOLDS for r in judged):
            met.append(name)
        else:
            not_met.append(detail)
    parts = [f"met: {'; '.join(met)}" if met else "", f"not met: {'; '.join(not_met)}" if not_met else "",
             f"not tested here: {'; '.join(unchecked)}" if unchecked else ""]
    where = (f' The <a href="{map_page}">premise map</a> shows where they hold together and what happens there.'
             if not_met else "")
    return (f'<p class="vt-premises"><b>Premises of the theorems at this run</b> ({len(met)} of {len(groups)} met) — '
            + esc(". ".join(p for p in parts if p)) + "." + where + "</p>")


# A table with more premise rows than this (notebook 10: one per premise and cell) shows them folded, above its
# claim rows, so a reader reaches the claims without scrolling past the premises; every row stays in the table.
FOLD_PREMISES = 12


def folded_html(rows: list[Verdict]) -> str:
    """A notebook's table as HTML: its rows in order, or, past FOLD_PREMISES premise rows, the premise rows folded in
    a <details> (with how many hold) above the claim rows."""
    prem = [r for r in rows if is_premise_row(r)]
    if len(prem) <= FOLD_PREMISES:
        return render_html(rows)
    held = sum(r.verdict == HOLDS for r in prem)
    return (f'<details class="vt-premise-rows"><summary>{len(prem)} premise rows, one per premise and case '
            f'({held} hold): show</summary>' + render_html(prem) + "</details>"
            + render_html([r for r in rows if not is_premise_row(r)]))


def render_html(rows: list[Verdict], link: bool = False) -> str:
    """An HTML table of verdict rows; with link=True the notebook column links to its page."""
    head = ["claim", "source", "predicted", "measured [interval]", "verdict", "rule"]
    if link:
        head.append("evidence")
    out = ['<table class="verdict-table"><thead><tr>' + header_cells(head, scoped=False) + "</tr></thead><tbody>"]
    for r in rows:
        cells = [esc(r.claim), esc(r.source), esc(predicted_with_band(r)), interval(r),
                 badge(r.verdict) + (f"<br><small>measured: {esc(r.would_be)}</small>" if r.would_be else ""),
                 esc(details(r))]
        if link:
            nb = esc(r.notebook)
            cells.append(f'<a href="notebooks/{nb}.html">{nb}</a>')
        out.append(row(cells, f' data-row="{esc(r.id)}"' if r.id else ""))
    return "\n".join(out) + "</tbody></table>"

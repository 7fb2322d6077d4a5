"""Verdict tables as a reader sees them: HTML and JSON renderings, and the myst-nb glue the scoreboard reads."""
from __future__ import annotations

import html
import math
from dataclasses import asdict, replace

from ...stats import RANGES
from ...verdict import (FAILS, HOLDS, INCONCLUSIVE, NOT_COMPARABLE, PARTLY, UNTESTED, Verdict, VerdictError, band_text,
                       gate, is_required_premise, predicted_with_band)



def esc(x) -> str:
    """`x` as text safe inside HTML: the one escaper every page, table and answer of the book uses."""
    return html.escape(str(x))

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
        """Rows as plain dicts (NaN and ±inf become None so the JSON is valid), each with its band in words."""
        def clean(v):
            return None if isinstance(v, float) and not math.isfinite(v) else v
        return [{**{k: clean(v) for k, v in asdict(r).items()}, "band": band_text(r)} for r in self.rows]

    def _repr_json_(self):
        return {"notebook": self.notebook, "rows": self.to_json(),
                **({"recorded": self.recorded} if self.recorded else {})}

    def _repr_html_(self):
        note = f'<p class="vt-recorded">Includes {html.escape(self.recorded)}.</p>' if self.recorded else ""
        return premises_note(self.to_json()) + note + render_html(self.to_json())

    def __repr__(self):
        return "\n".join(f"[{r.verdict}] {r.claim}: predicted {predicted_with_band(r)}; measured {fmt(r.measured)} "
                         f"[{fmt(r.lo)}, {fmt(r.hi)}]" for r in self.rows)

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


def fmt(x) -> str:
    """Compact number formatting for tables."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    x = float(x)
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x) < 100 else f"{x:.1f}"


COLOURS = {HOLDS: "#1a7f37", PARTLY: "#9a6700", FAILS: "#cf222e", INCONCLUSIVE: "#57606a",
            NOT_COMPARABLE: "#8250df", UNTESTED: "#57606a"}


def details(r: dict) -> str:
    """The rule of a row, its premises, and for an inconclusive row the replicates that would settle it."""
    parts = [r.get("rule", "")]
    if r.get("would_be"):
        parts.insert(0, f"measured on its own: {r['would_be']}")
    if r.get("premise"):
        parts.append(f"premises {r['premise']}")
    if r.get("sensitivity"):
        parts.append(f"sensitivity: {r['sensitivity']}")
    need = r.get("n_needed")
    if need is not None and not (isinstance(need, float) and math.isnan(need)):
        parts.append(f"about {int(need)} replicates (now {r.get('n', 0)}) would settle it")
    return ". ".join(p for p in parts if p)


def premises_note(rows: list[dict], map_page: str = "10_premise_map.html") -> str:
    """One paragraph above a notebook's table: which required premises of the theorems this run meets and which it
    does not (with numbers), pointing to the premise map for where they hold ('' when there are no premise rows)."""
    req = [r for r in rows if is_required_premise(r)]
    if not req:
        return ""
    def name(r):
        return r["claim"].removeprefix("regime: ")
    met = [name(r) for r in req if r["verdict"] == HOLDS]
    not_met = [f'{name(r)} ({fmt(r["measured"])} vs {r["predicted"]}: {r["verdict"]})'
               for r in req if r["verdict"] in (FAILS, INCONCLUSIVE)]
    unchecked = [name(r) for r in req if r["verdict"] not in (HOLDS, FAILS, INCONCLUSIVE)]
    parts = [f"met: {'; '.join(met)}" if met else "", f"not met: {'; '.join(not_met)}" if not_met else "",
             f"not tested here: {'; '.join(unchecked)}" if unchecked else ""]
    where = (f' The <a href="{map_page}">premise map</a> shows where they hold together and what happens there.'
             if not_met else "")
    return (f'<p class="vt-premises"><b>Premises of the theorems at this run</b> ({len(met)} of {len(req)} met) — '
            + html.escape(". ".join(p for p in parts if p)) + "." + where + "</p>")


def render_html(rows: list[dict], link: bool = False) -> str:
    """An HTML table of verdict rows; with link=True the notebook column links to its page."""
    head = ["claim", "source", "predicted", "measured [interval]", "verdict", "rule"]
    if link:
        head.append("evidence")
    out = ['<table class="verdict-table"><thead><tr>' + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        cells = [html.escape(r["claim"]), html.escape(r["source"]), html.escape(predicted_with_band(r)),
                 f'{fmt(r["measured"])} [{fmt(r["lo"])}, {fmt(r["hi"])}]',
                 f'<b style="color:{COLOURS[r["verdict"]]}">{r["verdict"]}</b>' + (
                     f'<br><small>measured: {html.escape(r["would_be"])}</small>' if r.get("would_be") else ""),
                 html.escape(details(r))]
        if link:
            nb = html.escape(r["notebook"])
            cells.append(f'<a href="notebooks/{nb}.html">{nb}</a>')
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join(out) + "</tbody></table>"

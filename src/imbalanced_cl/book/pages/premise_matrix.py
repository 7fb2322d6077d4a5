"""A verdict table whose premise rows read as one matrix: cases (a cell of a grid, or this run) against premises, each
entry met or not with its value, each premise named once. Its claim rows name only the premises they miss (the
matrix holds the numbers), and claim rows of one kind over many cases (notebook 10's gain per cell and arm) can read
as a matrix of their own, their shared prediction and rule stated once. Claim rows not tested at the run are one
line each below the table.

Only the HTML differs from tables.VerdictTable: the rows glued (JSON, what records and the book's answers read) are
the same rows, with the same ids, verdicts and values.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from ... import premises as P
from ...verdict import (UNTESTED, Verdict, band_text, from_json, is_premise_row, is_required_premise, premise_met,
                        predicted_with_band)
from .render import badge, colour, esc, fmt, header_cells, interval, row
from .tables import VerdictTable, render_html

# An entry of the premise matrix: a mark a reader sees, the word a screen reader and a tooltip give
MARKS = {True: ("✓", "met"), False: ("✗", "not met"), None: ("–", "not checked")}
HOLDS_COLOUR, FAILS_COLOUR = colour("holds"), colour("does not hold")


def split_cases(ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """{premise row id: (premise id, case, sub-case)}. A scoped id names its case ("<premise>__<case>"); an unscoped
    one belongs to the run itself (case ""). A case that is another case with a prefix ("alg1_d_10_…" beside
    "d_10_…": one arm of a cell) is that case's sub-case, the prefix."""
    split = {i: (P.premise_of(i), i.split(P.SCOPE, 1)[1] if P.SCOPE in i else "") for i in ids}
    cases = {c for _, c in split.values() if c}
    out = {}
    for i, (pid, case) in split.items():
        parents = [b for b in cases if b != case and case.endswith("_" + b)]
        parent = max(parents, key=len, default="")
        out[i] = (pid, parent, case[:-len(parent) - 1]) if parent else (pid, case, "")
    return out


def needs(r: Verdict) -> str:
    """What a premise row needs, in its own words (its prediction, with the numbers that decide it), or its band."""
    return r.predicted or band_text(r)


def _mark(r: Verdict) -> tuple[str, str]:
    """One premise row as a matrix entry: (its tooltip: met or not, and what it needs; its HTML: ✓ or ✗ in colour,
    and the measured value)."""
    met = premise_met(r)
    mark, word = MARKS[met]
    style = f' style="color:{HOLDS_COLOUR if met else FAILS_COLOUR}"' if met is not None else ""
    value = "" if met is None else " " + esc(fmt(r.measured))
    return f"{word}; needs {needs(r)}", f"<b{style}>{mark}</b>{value}"


def premise_name(pid: str, labels: dict[str, str]) -> str:
    """A premise as a matrix names it: its label, else premises.name, marked where the book only reports it (a
    condition no row depends on being met, premises.Condition.required)."""
    name = labels.get(pid, P.name(pid))
    return name if P.condition(pid).required else f"{name} (reported only)"


def _entry(r: Verdict | None) -> str:
    """A premise matrix's cell for one premise row (empty where the case has no such premise)."""
    if r is None:
        return "<td></td>"
    tip, html = _mark(r)
    return f'<td title="{esc(tip)}">{html}</td>'


LEGEND = ('<p class="vt-matrix-legend">Each premise of the theorems, checked on this run: <b>✓</b> met, <b>✗</b> not '
          "met, – not checked, beside the measured value{}.</p>")
TOOLTIP = "; what a premise needs is in each entry's tooltip"


def _grid_html(lines: dict[str, dict[str, Verdict]], labels: dict[str, str], first: str, count: str) -> str:
    """One matrix: a line per {line label: {premise id: row}}, a column per premise (headed `first` over the labels),
    and a last line (`count`) counting the lines that meet each premise."""
    columns = list(dict.fromkeys(pid for line in lines.values() for pid in line))
    body = "".join(f'<tr><th scope="row">{esc(name)}</th>' + "".join(_entry(line.get(pid)) for pid in columns)
                   + "</tr>" for name, line in lines.items())
    met = [[premise_met(line[pid]) for line in lines.values() if pid in line] for pid in columns]
    counts = "".join(f"<td>{sum(m is True for m in ms)} of {sum(m is not None for m in ms)}</td>" for ms in met)
    head = header_cells([first] + [esc(premise_name(pid, labels)) for pid in columns])
    return (f'<table class="vt-matrix"><thead><tr>{head}</tr></thead><tbody>{body}'
            f'<tr><th scope="row">{esc(count)}</th>{counts}</tr></tbody></table>')


def premise_matrix_html(rows: list[Verdict], labels: dict[str, str] | None = None) -> str:
    """The premise rows of `rows` as HTML matrices: a line per case, a column per premise, each entry ✓ met or ✗ not
    met with the measured value, and a last line counting the cases that meet each premise; sub-cases (split_cases:
    the arms of a cell) get a matrix of their own, a line per case and sub-case. A table of one case (no scoped
    rows) lists its premises instead, one line each, with its source and what it needs. `labels` names cases,
    sub-cases and premises for a reader ("d_10_lam_book_r_0_3" → "d=10 λ=book ρ=0.3"; premise_name); '' with no
    premise rows."""
    prem = [r for r in rows if is_premise_row(r)]
    if not prem:
        return ""
    labels = labels or {}
    where = split_cases([r.id for r in prem])
    if all(case == "" for _, case, _ in where.values()):
        head = header_cells(["premise", "source", "needs", "measured"])
        body = "".join(row([esc(premise_name(r.id, labels)), esc(r.source), esc(needs(r)), _mark(r)[1]])
                       for r in prem)
        return (LEGEND.format("")
                + f'<table class="vt-matrix"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    cells: dict[str, dict[str, Verdict]] = {}
    subs: dict[str, dict[str, Verdict]] = {}
    for r in prem:
        pid, case, sub = where[r.id]
        name = labels.get(case, case) or "this run"
        if sub:
            subs.setdefault(f"{name} · {labels.get(sub, sub)}", {})[pid] = r
        else:
            cells.setdefault(name, {})[pid] = r
    return (LEGEND.format(TOOLTIP) + (_grid_html(cells, labels, "case", "cases meeting it") if cells else "")
            + (_grid_html(subs, labels, "case · part", "parts meeting it") if subs else ""))


def common_unmet(rows: list[Verdict]) -> tuple[str, ...]:
    """The premises not met that most claim rows share (at least two rows), named once above the table; () if
    none."""
    sets = Counter(r.unmet for r in rows if r.unmet and not is_premise_row(r))
    common, n = max(sets.items(), key=lambda kv: kv[1], default=((), 0))
    return common if n > 1 else ()


def unmet_names(ids: tuple[str, ...]) -> str:
    """The premises of `ids` by their few words, each once."""
    return ", ".join(dict.fromkeys(P.name(u) for u in ids))


def shown_premise(r: Verdict, own: str = "", common: tuple[str, ...] = ()) -> str:
    """The premise text a claim row shows beside the matrix: the premises it misses by name ("see above" where they
    are the `common` ones named above the table; the matrix gives their values, and those met are not listed), then
    the row's own note `own`."""
    unmet = ["not met: " + ("see above" if r.unmet == common else unmet_names(r.unmet))
             ] if r.unmet else []
    return "; ".join(unmet + ([own] if own else []))


def _case_entry(r: Verdict | None, why: list[str]) -> str:
    """A case matrix's cell: the measured value [95% interval] and the verdict (and the verdict measured on its own
    where a premise fails); "not tested" with the number of its reason in the notes below; empty without a row."""
    if r is None:
        return "<td></td>"
    if r.verdict == UNTESTED:
        return f'<td title="{esc(r.rule)}">{badge(r.verdict)}<sup>{why.index(r.rule) + 1}</sup></td>'
    own = f"<br><small>measured: {esc(r.would_be)}</small>" if r.would_be else ""
    return f"<td>{esc(interval(r))}<br>{badge(r.verdict)}{own}</td>"


def _shared(rows: list[Verdict], statement: str) -> str:
    """What the judged rows of a case matrix share, said once above it: the claim, the prediction and source, the
    rule (each distinct text once)."""
    judged = [r for r in rows if r.verdict != UNTESTED]
    said = "; ".join(dict.fromkeys(f"{predicted_with_band(r)} ({r.source})" for r in judged))
    rule = "; ".join(dict.fromkeys(r.rule for r in judged))
    return (f'<p class="vt-matrix-legend"><b>{esc(statement)}</b>: one verdict row per case and column. Predicted: '
            f"{esc(said)}. Rule: {esc(rule)}.</p>")


def _untested(why: list[str], idle: list[str]) -> str:
    """The note below a case matrix: each reason a row was not tested, numbered, and the columns tested nowhere."""
    if not why:
        return ""
    notes = "; ".join(f"<sup>{n}</sup> {esc(w)}" for n, w in enumerate(why, 1))
    none = f" Not tested in any case: {esc('; '.join(idle))}." if idle else ""
    return f'<p class="vt-matrix-notes">Not tested: {notes}.{none}</p>'


def case_matrix_html(rows: list[Verdict], key: Callable[[Verdict], tuple[str, str]], statement: str,
                     labels: dict[str, str] | None = None) -> str:
    """Claim rows of one kind over many cases (`key(row)` = (case, column)) as one HTML matrix, an entry per row
    (_case_entry). What the rows share is stated once above it (_shared: `statement`, the claim); the reason a row
    was not tested is a note below it, once per reason, and a column not tested in any case is named there instead
    of drawn."""
    labels = labels or {}
    grid = {key(r): r for r in rows}
    cases = list(dict.fromkeys(c for c, _ in grid))
    columns = list(dict.fromkeys(k for _, k in grid))
    drawn = [k for k in columns if any(r.verdict != UNTESTED for (_, kk), r in grid.items() if kk == k)]
    why = list(dict.fromkeys(r.rule for r in rows if r.verdict == UNTESTED))
    lines = "".join(f'<tr><th scope="row">{esc(labels.get(c, c))}</th>'
                    + "".join(_case_entry(grid.get((c, k)), why) for k in drawn) + "</tr>" for c in cases)
    head = header_cells(["case"] + [esc(labels.get(k, k)) for k in drawn])
    return (_shared(rows, statement) + f'<table class="vt-matrix"><thead><tr>{head}</tr></thead><tbody>{lines}'
            "</tbody></table>" + _untested(why, [labels.get(k, k) for k in columns if k not in drawn]))


def untested_html(rows: list[Verdict]) -> str:
    """Claim rows not tested at this run, one clause each below the table (the claim, its source, why): '' if none."""
    if not rows:
        return ""
    return ('<div class="vt-untested"><b>Not tested at this run:</b><ul>'
            + "".join(f"<li>{esc(r.claim)} ({esc(r.source)}): {esc(r.rule)}</li>" for r in rows) + "</ul></div>")


MAP_PAGE = "10_premise_map.html"    # where the premises are mapped (tables.premises_note points there too)


class MatrixTable(VerdictTable):
    """A VerdictTable (same gate, same glue and JSON) whose HTML shows its judged claim rows as the table, those not
    tested one line each below it, and its premise rows as one premise matrix; the claim rows name only the premises
    they miss, the set most of them share named once above. Claim rows with a place in `matrix(row)` = (case,
    column) read as a case matrix of their own (with `statement`); `rules` gives the rule a row shows where the page
    states its full rule elsewhere (id: text). `labels` names cases and premises, `columns` the case matrix's
    columns."""

    def __init__(self, notebook: str, rows: list[Verdict], recorded: str = "", labels: dict[str, str] | None = None,
                 matrix: Callable[[Verdict], tuple[str, str] | None] | None = None, statement: str = "",
                 rules: dict[str, str] | None = None, columns: dict[str, str] | None = None):
        self.own = {r.id: r.premise for r in rows}    # each row's own note, before gate adds its premise list
        super().__init__(notebook, rows, recorded)
        self.labels, self.matrix, self.statement, self.rules = labels or {}, matrix, statement, rules or {}
        self.columns = columns or {}

    def _above(self, common: tuple[str, ...]) -> str:
        """What the page says above the table: the records it includes, and the premises most rows miss."""
        note = f'<p class="vt-recorded">Includes {esc(self.recorded)}.</p>' if self.recorded else ""
        if common:
            note += (f'<p class="vt-premises"><b>Premises not met</b> for the rows that say "see above": '
                     f"{esc(unmet_names(common))} (their values are in the matrix below).</p>")
        return note

    def _map_link(self, shown: list[Verdict]) -> str:
        """A pointer to the premise map below the matrix, where a required premise is not met (not on the map)."""
        unmet = any(is_required_premise(r) and premise_met(r) is False for r in shown)
        return (f'<p class="vt-premises">The <a href="{MAP_PAGE}">premise map</a> shows where the premises hold '
                "together, and what happens there.</p>" if unmet and MAP_PAGE != f"{self.notebook}.html" else "")

    def _body(self) -> str:
        """The table's HTML inside its anchor (VerdictTable._repr_html_): the note above, the judged claim rows, those
        not tested, the case matrix and the premise matrix."""
        shown = [from_json(d) for d in self.to_json()]     # the rows as glued, as every reader of the glue sees them
        claims = [r for r in shown if not is_premise_row(r)]
        keyed = {r.id for r in claims if self.matrix and self.matrix(r)}
        rest = [r for r in claims if r.id not in keyed and r.verdict != UNTESTED]
        idle = [r for r in claims if r.id not in keyed and r.verdict == UNTESTED]
        common = common_unmet(rest)
        rest = [replace(r, premise=shown_premise(r, self.own.get(r.id, ""), common),
                        rule=self.rules.get(r.id, r.rule)) for r in rest]
        grid = (case_matrix_html([r for r in claims if r.id in keyed], self.matrix, self.statement,
                                 {**self.labels, **self.columns}) if keyed else "")
        return (self._above(common) + render_html(rest) + untested_html(idle) + grid
                + premise_matrix_html(shown, self.labels) + self._map_link(shown))

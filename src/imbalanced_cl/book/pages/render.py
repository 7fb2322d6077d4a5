"""How a verdict row and a claim's answer read, in HTML, Markdown and the terminal: the one home of the pieces every
page builds them from. HTML escaping (`esc`), numbers and intervals (`fmt`, `ci_text`, `interval`, `value`,
`measured_text`), a verdict's colour, its HTML badge and its plain-text tag, a row's rule in words (`details`), and
the cells of an HTML or Markdown table row.

What the band of a row says ("holds at ≥ 0.8") is part of the row itself, glued and recorded with it: it lives with
the verdict rules (verdict.band_text, verdict.predicted_with_band), and every page shows it from there.
"""
from __future__ import annotations

import html
import math
import re
from pathlib import Path

from ...paths import repo_root
from ...verdict import FAILS, HOLDS, INCONCLUSIVE, NOT_COMPARABLE, PARTLY, UNTESTED, Verdict


def esc(x) -> str:
    """`x` as text safe inside HTML: the one escaper every page, table and answer of the book uses."""
    return html.escape(str(x))


def fmt(x) -> str:
    """Compact number formatting for tables."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    x = float(x)
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x) < 100 else f"{x:.1f}"


def ci_text(m, lo, hi) -> str:
    """A value with its interval, each compact: '13.6 [1.09, 26.2]'."""
    return f"{fmt(m)} [{fmt(lo)}, {fmt(hi)}]"


def interval(r: Verdict) -> str:
    """A row's measured value with its 95% interval: '13.6 [1.09, 26.2]' (a dash for a missing number)."""
    return ci_text(r.measured, r.lo, r.hi)


def value(r: Verdict | None) -> str:
    """A row's measured value with its interval, or '' when there is no row or no finite measurement."""
    if r is None or fmt(r.measured) == "–":
        return ""
    return interval(r)


def lower_first(text: str) -> str:
    """`text` to follow a colon mid-sentence: its first letter lower-cased ("Majority/minority ..." -> "majority/...",
    "A neuron" -> "a neuron"), unless its first word is an acronym, a symbol or a formula ("SDCLR-style", "A_maj",
    "K-pair", "Pr[B_i]", "Stage-1": a word that is not letters alone, capitalised)."""
    word = text.split(" ", 1)[0].split("/", 1)[0]
    if not (word.isalpha() and word[:1].isupper() and (len(word) == 1 or word[1:].islower())):
        return text
    return text[:1].lower() + text[1:]


def measured_text(r: Verdict) -> str:
    """The measured value with its 95% interval, the value alone when it has no interval, or a dash when there is no
    finite measurement (the terminal's column)."""
    m = fmt(r.measured)
    if m == "–":
        return "–"
    lo, hi = fmt(r.lo), fmt(r.hi)
    return m if lo == hi == "–" else f"{m} [{lo}, {hi}]"


def plural(n: int, noun: str) -> str:
    """A count with its noun: "1 premise row", "3 premise rows" (the noun given in the singular)."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


DASH = "–"        # a number that is not there, in every table of the book (fmt writes it too)
_NAN = re.compile(r"(?<![\w.])nan(?![\w.])", re.IGNORECASE)


def dash_nan(lines: list[str], why: str) -> list[str]:
    """A printed table's lines with each bare "nan" written as a dash, right-aligned in its column's width, and, where
    one was, a last line that says why a dash stands there ("–: why"). The numbers themselves are not touched."""
    out = [_NAN.sub(lambda m: DASH.rjust(len(m.group(0))), line) for line in lines]
    return out + ([f"{DASH}: {why}"] if out != list(lines) else [])


def numbers(xs, why: str) -> str:
    """Numbers for a printed line, "[0.423, –, 0.61]": each compact (fmt), a missing one (NaN, None) as a dash, and
    after the list, where one is, what a dash means ("(–: why)")."""
    cells = [fmt(x) for x in xs]
    return f"[{', '.join(cells)}]" + (f" ({DASH}: {why})" if DASH in cells else "")


def repo_relative(text: str, root: Path | str | None = None) -> str:
    """`text` with each absolute path inside the repository, or beside it, named relative to the repository root
    ("<root>/results/x" -> "results/x", "<root>/../shared/data/p.npz" -> "../shared/data/p.npz"): a page shows no
    folder of the machine that built it. Other text is left as it is."""
    base = Path(root) if root is not None else repo_root()
    for r in dict.fromkeys((base, base.resolve())):      # as given and with its links resolved
        text = text.replace(f"{r}/", "")
        if r.parent != r.parent.parent:                   # never the file system's root itself
            text = text.replace(f"{r.parent}/", "../")
    return text


COLOURS = {HOLDS: "#1a7f37", PARTLY: "#9a6700", FAILS: "#cf222e", INCONCLUSIVE: "#57606a",
           NOT_COMPARABLE: "#8250df", UNTESTED: "#57606a"}


def colour(verdict: str) -> str:
    """The colour a verdict word is shown in; black for a word this book does not use (an older record's)."""
    return COLOURS.get(verdict, "#000")


def badge(verdict: str, text: str | None = None) -> str:
    """HTML: the verdict word (or `text`, already HTML) in bold, in the verdict's colour."""
    return f'<b style="color:{colour(verdict)}">{esc(verdict) if text is None else text}</b>'


def tag(verdict: str) -> str:
    """The verdict as plain text opens a line: '[holds]'."""
    return f"[{verdict}]"


def details(r: Verdict) -> str:
    """The rule of a row, its premises, and for an inconclusive row the replicates that would settle it."""
    parts = [r.rule]
    if r.would_be:
        parts.insert(0, f"measured on its own: {r.would_be}")
    if r.premise:
        parts.append(f"premises {r.premise}")
    if r.sensitivity:
        parts.append(f"sensitivity: {r.sensitivity}")
    if not math.isnan(r.n_needed):
        parts.append(f"about {int(r.n_needed)} replicates (now {r.n}) would settle it")
    return ". ".join(p for p in parts if p)


def header_cells(head: list[str], scoped: bool = True) -> str:
    """HTML: a table's header cells (already HTML), each a column header for screen readers unless scoped=False."""
    scope = ' scope="col"' if scoped else ""
    return "".join(f"<th{scope}>{h}</th>" for h in head)


def row(cells: list[str], attrs: str = "") -> str:
    """HTML: one table row of cells (already HTML); `attrs` is written into the <tr> tag as given."""
    return f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def md_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: its pipes escaped."""
    return text.replace("|", chr(92) + "|")


def md_table(head: list, rows: list[list]) -> str:
    """A Markdown table: the header, the separator, one line per row (each cell as str(), already Markdown)."""
    lines = ["| " + " | ".join(str(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)

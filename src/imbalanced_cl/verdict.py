"""Verdicts: each claim, what the paper predicts, what we measured (± interval), and holds / partly / does not hold.

A notebook builds its rows from data with the judge_* functions, shows the table, and records it with
myst-nb glue under "<notebook>_verdicts" so the book's scoreboard can collect every notebook's rows.
The tolerances are arguments chosen before looking at results and printed in the table.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import asdict, dataclass

HOLDS, PARTLY, FAILS = "holds", "partly", "does not hold"
INCONCLUSIVE, UNTESTED = "inconclusive", "not tested"
VERDICTS = (HOLDS, PARTLY, FAILS, INCONCLUSIVE, UNTESTED)


@dataclass
class Verdict:
    """One row of a verdict table."""

    claim: str          # the paper's statement, short
    source: str         # where the paper says it ("Lemma 3.1, eq. (7)")
    predicted: str      # the predicted value, as text
    measured: float     # point estimate
    lo: float           # interval over replicates
    hi: float
    verdict: str        # one of VERDICTS
    rule: str = ""      # how the verdict was decided, e.g. "holds if |slope-1| <= 0.15"
    notebook: str = ""  # filled by VerdictTable

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def _overlap(lo: float, hi: float, a: float, b: float) -> bool:
    return lo <= b and a <= hi


def judge_target(lo: float, hi: float, target: float, tol_holds: float, tol_partly: float,
                 relative: bool = False) -> tuple[str, str]:
    """Holds if the interval [lo, hi] meets target ± tol_holds, partly if it meets target ± tol_partly.

    An interval wider than the partly band (half-width > tol_partly) cannot tell the outcomes apart, so
    the verdict is 'inconclusive' rather than a 'holds' won by noise.
    """
    scale = abs(target) if relative else 1.0
    th, tp = tol_holds * scale, tol_partly * scale
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    unit = "×|target|" if relative else ""
    rule = (f"holds if the interval meets {target:g} ± {tol_holds:g}{unit}; partly if ± {tol_partly:g}{unit}; "
            f"inconclusive if its half-width exceeds {tol_partly:g}{unit}")
    if (hi - lo) / 2 > tp:
        return INCONCLUSIVE, rule
    if _overlap(lo, hi, target - th, target + th):
        return HOLDS, rule
    if _overlap(lo, hi, target - tp, target + tp):
        return PARTLY, rule
    return FAILS, rule


def judge_bound(lo: float, hi: float, bound: float, at_least: bool, tol_holds: float,
                tol_partly: float) -> tuple[str, str]:
    """For 'x >= bound' (at_least) or 'x <= bound' claims: holds if the whole interval satisfies the bound
    relaxed by tol_holds, does not hold if the whole interval violates it relaxed by tol_partly, partly
    in between; inconclusive if the interval's half-width exceeds tol_partly."""
    op = "≥" if at_least else "≤"
    sgn = 1.0 if at_least else -1.0
    rule = (f"holds if the whole interval is {op} {bound:g} {'-' if at_least else '+'} {tol_holds:g}; does not hold "
            f"if it is wholly beyond {bound:g} {'-' if at_least else '+'} {tol_partly:g}; inconclusive if its "
            f"half-width exceeds {tol_partly:g}")
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    if (hi - lo) / 2 > tol_partly:
        return INCONCLUSIVE, rule
    worst, best = (lo, hi) if at_least else (hi, lo)
    if sgn * (worst - bound) >= -tol_holds:
        return HOLDS, rule
    if sgn * (best - bound) < -tol_partly:
        return FAILS, rule
    return PARTLY, rule


def judge_positive(lo: float, hi: float, name: str = "effect") -> tuple[str, str]:
    """Holds if the whole interval is > 0, does not hold if it is wholly <= 0, partly if it straddles 0."""
    rule = f"holds if the interval of the {name} lies above 0; partly if it contains 0"
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    if lo > 0:
        return HOLDS, rule
    return (PARTLY, rule) if hi > 0 else (FAILS, rule)


def judge_fraction(frac: float, holds_at: float = 0.9, partly_at: float = 0.5) -> tuple[str, str]:
    """For 'every neuron satisfies the bound' claims: judged on the fraction that does."""
    rule = f"holds if ≥ {holds_at:.0%} satisfy it; partly if ≥ {partly_at:.0%}"
    if math.isnan(frac):
        return UNTESTED, "no finite measurement"
    return (HOLDS if frac >= holds_at else PARTLY if frac >= partly_at else FAILS), rule


def judge_count(k: float, n: float, holds_at: float = 0.9, partly_at: float = 0.5) -> tuple[str, str]:
    """judge_fraction on k of n cases, but 'inconclusive' when the 95% Wilson interval of k/n reaches both
    the holds level and below the partly level (2 of 2 is not evidence that every neuron satisfies a bound)."""
    from .census import binom_ci
    if n <= 0:
        return UNTESTED, "no case to count"
    lo, hi = binom_ci(k, n)
    verdict, rule = judge_fraction(k / n, holds_at, partly_at)
    rule += f"; inconclusive if the 95% interval of the fraction spans [< {partly_at:.0%}, ≥ {holds_at:.0%}] (n = {n:g})"
    return (INCONCLUSIVE if lo < partly_at and hi >= holds_at else verdict), rule


class VerdictTable:
    """A list of Verdict rows with HTML and JSON representations (JSON is what glue stores)."""

    def __init__(self, notebook: str, rows: list[Verdict]):
        self.notebook = notebook
        self.rows = [Verdict(**{**asdict(r), "notebook": notebook}) for r in rows]

    def to_json(self) -> list[dict]:
        """Rows as plain dicts (NaN becomes None so the JSON is valid)."""
        clean = lambda v: None if isinstance(v, float) and math.isnan(v) else v
        return [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows]

    def _repr_json_(self):
        return {"notebook": self.notebook, "rows": self.to_json()}

    def _repr_html_(self):
        return render_html(self.to_json())

    def __repr__(self):
        return "\n".join(f"[{r.verdict}] {r.claim}: predicted {r.predicted}; measured {fmt(r.measured)} "
                         f"[{fmt(r.lo)}, {fmt(r.hi)}]" for r in self.rows)

    def glue(self, key: str | None = None):
        """Show the table and record it with myst-nb glue as '<notebook>_verdicts' (HTML shown, JSON kept)."""
        try:
            from myst_nb import glue
        except ImportError:  # outside the book toolchain the table is still shown
            from IPython.display import display
            display(self)
            return self
        # display=True keeps the mime type plain "application/json", which nbformat accepts as a dict.
        glue(key or f"{self.notebook}_verdicts", self, display=True)
        return self


def fmt(x) -> str:
    """Compact number formatting for tables."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    x = float(x)
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x) < 100 else f"{x:.1f}"


_COLOURS = {HOLDS: "#1a7f37", PARTLY: "#9a6700", FAILS: "#cf222e", INCONCLUSIVE: "#57606a", UNTESTED: "#57606a"}


def render_html(rows: list[dict], link: bool = False) -> str:
    """An HTML table of verdict rows; with link=True the notebook column links to its page."""
    head = ["claim", "source", "predicted", "measured [interval]", "verdict", "rule"]
    if link:
        head.append("evidence")
    out = ['<table class="verdict-table"><thead><tr>' + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        cells = [html.escape(r["claim"]), html.escape(r["source"]), html.escape(r["predicted"]),
                 f'{fmt(r["measured"])} [{fmt(r["lo"])}, {fmt(r["hi"])}]',
                 f'<b style="color:{_COLOURS[r["verdict"]]}">{r["verdict"]}</b>', html.escape(r.get("rule", ""))]
        if link:
            nb = html.escape(r["notebook"])
            cells.append(f'<a href="notebooks/{nb}.html">{nb}</a>')
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join(out) + "</tbody></table>"


def collect(executed_dir) -> list[dict]:
    """Gather the glued verdict rows of every executed notebook under executed_dir (for the scoreboard)."""
    from pathlib import Path
    import nbformat
    rows = []
    for path in sorted(Path(executed_dir).glob("*.ipynb")):
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

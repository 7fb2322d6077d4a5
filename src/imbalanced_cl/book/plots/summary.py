"""The intro's one-figure summary: one small figure per claim, stacked on a phone and side by side on a laptop. Each
shows the measurement that decided the claim's verdict at this build and at the paper's scale (the row the claim's
sentence quotes: pages/claim_summary.py) against the band its verdict rule judged it by (the row's own band:
verdict.Verdict.band_lo and band_hi, never read back from its `predicted` text).

The layout is planned in inches, one text block under the other, so no two labels can overlap, and its sizes keep
every letter at least MIN_PX tall when the figure is shown PHONE_COLUMN_PX wide (tests/test_summary_figure.py checks
both with matplotlib's renderer). What to draw comes in through a small interface (Panel, Lane), built by `panels`
from the claims' summaries.
"""
from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ticker import MaxNLocator

from ... import verdict as V
from ..pages import claim_summary as CS
from ..pages.render import colour, esc, value

# A phone 390 px wide shows the article column 1rem in from each edge (sphinx-book-theme); 340 px leaves room to
# spare. A figure WIDTH inches wide shown that wide draws a font of s points s / 72 * PHONE_COLUMN_PX / WIDTH px tall.
PHONE_PX = 390
PHONE_COLUMN_PX = 340
MIN_PX = 10.0
WIDTH = 4.8                     # inches; every font below is at least MIN_PT
MIN_PT = 11.0
TITLE_PT, TEXT_PT, TICK_PT = 12.0, MIN_PT, MIN_PT
DPI = 144                       # 691 px natural width: sharp on a phone's 2x screen at 340 CSS px
MARGIN = 0.14                   # inches left and right
STRIP = 0.34                    # inches: the strip a lane's measurement and band are drawn in
GAP = 0.08                      # inches between blocks
TICKS = 0.26                    # inches under the last strip for its tick labels
LEADING = 1.25                  # line height over font size (matplotlib's linespacing 1.2, plus its padding)
SLACK = 0.97                    # a wrapped line fills at most this share of the width
GREY, BAND = "#57606a", "#0969da"


def px_at_phone(points: float, width_in: float = WIDTH, column_px: float = PHONE_COLUMN_PX) -> float:
    """The height in CSS px of a `points` font in a figure `width_in` inches wide shown `column_px` wide (the dpi
    cancels: the image is scaled to the column)."""
    return points / 72.0 * column_px / width_in


@dataclass(frozen=True)
class Lane:
    """One row drawn in a claim's panel: its label ("default", "paper scale"), its verdict row, or why there is none."""

    label: str
    row: V.Verdict | None
    why: str = ""


@dataclass(frozen=True)
class Panel:
    """What one claim's figure draws: the claim, what its rows measure, its verdict at this build, and its lanes."""

    key: str
    what: str
    verdict: str
    profile: str
    lanes: tuple[Lane, ...]


def panels(pairs: list) -> list[Panel]:
    """One Panel per claim from its summaries (pages/claim_summary: this build's and the paper scale's): each lane
    draws the row that decided the claim's verdict there (ClaimSummary.figure_row), or says why there is none. The one
    place that says which rows the figure draws, the same the intro's sentence and table quote."""
    out = []
    for b, p in pairs:
        lanes = tuple(Lane(s.profile or "this build", s.figure_row, "" if s.figure_row is not None else
                           (s.status or "no row decided it")) for s in (b, p))
        drawn = b.figure_row
        what = CS.name(drawn) if drawn is not None else b.claim.unit
        out.append(Panel(b.claim.key, what, b.verdict, b.profile, lanes))
    return out


def _finite(*xs) -> list[float]:
    return [float(x) for x in xs if x is not None and math.isfinite(float(x))]


def has_band(r: V.Verdict) -> bool:
    """Whether a row carries a band to draw (both ends NaN: its rule judged no interval against a band)."""
    return not (math.isnan(r.band_lo) and math.isnan(r.band_hi))


def band(r: V.Verdict) -> tuple[float, float]:
    """A row's band, an end not given read as open (verdict.band_text reads it so)."""
    lo, hi = r.band_lo, r.band_hi
    return (-math.inf if math.isnan(lo) else lo), (math.inf if math.isnan(hi) else hi)


def _drawable(r: V.Verdict | None) -> bool:
    return r is not None and (bool(_finite(r.measured)) or has_band(r))


def lane_lines(lane: Lane) -> list[tuple[str, str]]:
    """A lane's text, (line, colour): what was measured and that row's own verdict; then the band shaded, or that the
    row has none (said, not guessed)."""
    r = lane.row
    if r is None:
        return [(f"{lane.label}: {lane.why or 'no row'}", GREY)]
    own = f" (on its own: {r.would_be})" if r.would_be else ""
    out = [(f"{lane.label}: {value(r) or 'no finite measurement'}; this row: {r.verdict}{own}", colour(r.verdict))]
    if not has_band(r):
        words = f" ({r.band_words})" if r.band_words else ""
        out.append((f"this row carries no band{words}: nothing shaded", GREY))
    else:
        lo, hi = band(r)
        kind = "dashed" if lo == hi else "shaded"
        out.append((f"{kind}: the rule's band, {V.band_text(r)}", GREY))
    return out


def text_width(text: str, points: float, bold: bool = False) -> float:
    """The width in inches that matplotlib's renderer gives `text` at `points` (the figure's own font)."""
    prop = FontProperties(size=points, weight="bold" if bold else "normal")
    return _RENDERER.get_text_width_height_descent(text, prop, ismath=False)[0] / 72.0


_RENDERER = RendererAgg(10, 10, 72)    # measures text only: at 72 dpi a pixel is a point


def wrap(text: str, points: float, bold: bool = False, width_in: float = WIDTH - 2 * MARGIN) -> list[str]:
    """`text` broken at spaces into lines that the renderer measures no wider than `width_in` (SLACK to spare); a
    word wider than a line on its own is cut."""
    room, lines, line = width_in * SLACK, [], ""
    for word in text.split():
        while text_width(word, points, bold) > room:          # a word longer than a line: cut where it fits
            cut = max(1, max(i for i in range(1, len(word) + 1) if text_width(word[:i], points, bold) <= room))
            lines += [line] if line else []
            lines.append(word[:cut])
            word, line = word[cut:], ""
        trial = f"{line} {word}" if line else word
        if line and text_width(trial, points, bold) > room:
            lines.append(line)
            trial = word
        line = trial
    return lines + ([line] if line else []) or [""]


def _plan(p: Panel) -> list[tuple]:
    """The figure, top to bottom: ("text", lines, points, colour, bold) and ("strip", row) blocks."""
    out = [("text", wrap(f"Claim {p.key} · {p.what}", TITLE_PT, True), TITLE_PT, "#1f2328", True),
           ("text", wrap(f"its verdict at {p.profile or 'this build'}: {p.verdict}", TITLE_PT), TITLE_PT,
            colour(p.verdict), False)]
    for lane in p.lanes:
        for line, c in lane_lines(lane):
            out.append(("text", wrap(line, TEXT_PT), TEXT_PT, c, False))
        if _drawable(lane.row):
            out.append(("strip", lane.row))
    strips = [i for i, b in enumerate(out) if b[0] == "strip"]
    if strips:                          # the shared x axis's tick labels, under the last strip, before any text
        out.insert(strips[-1] + 1, ("ticks",))
    return out


def _height(block: tuple) -> float:
    if block[0] in ("strip", "ticks"):
        return STRIP if block[0] == "strip" else TICKS
    return len(block[1]) * block[2] * LEADING / 72.0


def xlim(rows: list[V.Verdict]) -> tuple[float, float]:
    """The x range that shows every measurement, interval and finite band end of `rows`, with a margin."""
    xs = [x for r in rows for x in _finite(r.measured, r.lo, r.hi, *(band(r) if has_band(r) else ()))]
    if not xs:
        return -1.0, 1.0
    lo, hi = min(xs), max(xs)
    pad = 0.12 * (hi - lo) if hi > lo else max(abs(lo) * 0.1, 1.0)
    lo, hi = lo - pad, hi + pad
    for r in rows:              # an open band shows a stretch beyond its edge, so its shading is seen to go on
        b_lo, b_hi = band(r) if has_band(r) else (math.nan, math.nan)
        if b_hi == math.inf and math.isfinite(b_lo):
            hi = max(hi, b_lo + 2 * pad)
        if b_lo == -math.inf and math.isfinite(b_hi):
            lo = min(lo, b_hi - 2 * pad)
    return lo, hi


def _draw_band(ax, r: V.Verdict, left: float, right: float) -> None:
    """The row's band: a dashed line at a single value, else shading with its finite edges drawn; none without one."""
    if not has_band(r):
        return
    lo, hi = band(r)
    if lo == hi:
        ax.axvline(lo, color=BAND, ls="--", lw=2)
        return
    ax.axvspan(max(lo, left), min(hi, right), color=BAND, alpha=0.14, lw=0)
    for edge in _finite(lo, hi):
        ax.axvline(edge, color=BAND, lw=1.2)


def _draw_row(ax, r: V.Verdict) -> None:
    """The measurement and its 95% interval, coloured by the row's verdict (a dot alone without an interval)."""
    if not _finite(r.measured):
        return
    m, c = float(r.measured), colour(r.verdict)
    lo, hi = (float(r.lo), float(r.hi)) if len(_finite(r.lo, r.hi)) == 2 else (m, m)
    ax.errorbar([m], [0.0], xerr=[[max(m - lo, 0.0)], [max(hi - m, 0.0)]], fmt="o", color=c, capsize=5, ms=7, lw=2)


def figure(p: Panel):
    """One claim's figure: the title, its verdict, and per lane its text over a strip with the band and the
    measurement; the strips share one x axis, whose tick labels sit under the last."""
    plan = _plan(p)
    strips = [b[1] for b in plan if b[0] == "strip"]
    height = sum(_height(b) for b in plan) + GAP * (len(plan) + 1)
    fig = Figure(figsize=(WIDTH, height), dpi=DPI)     # no pyplot: the notebook's own backend stays as it is
    FigureCanvasAgg(fig)
    left, right = xlim(strips)
    top, last = height - GAP, None
    for b in plan:
        h = _height(b)
        if b[0] == "text":
            fig.text(MARGIN / WIDTH, top / height, "\n".join(b[1]), va="top", ha="left", fontsize=b[2], color=b[3],
                     fontweight="bold" if b[4] else "normal", linespacing=1.2)
        elif b[0] == "strip":
            ax = fig.add_axes((MARGIN / WIDTH, (top - h) / height, 1 - 2 * MARGIN / WIDTH, h / height))
            ax.set_xlim(left, right)
            ax.set_ylim(-1, 1)
            _draw_band(ax, b[1], left, right)
            _draw_row(ax, b[1])
            ax.set_yticks([])
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
            ax.tick_params(axis="x", labelsize=TICK_PT, labelbottom=False, length=3)
            ax.grid(axis="x", color="#d0d7de", lw=0.6)
            for side in ("top", "right", "left"):
                ax.spines[side].set_visible(False)
            last = ax
        top -= h + GAP
    if last is not None:
        last.tick_params(axis="x", labelbottom=True)
    return fig


def figures(pairs: list) -> list:
    """One figure per claim, in the order of `pairs`."""
    return [figure(p) for p in panels(pairs)]


def alt_text(p: Panel) -> str:
    """A panel's alt text: the claim, its verdict, and each lane's measurement and band in words."""
    lanes = "; ".join(", ".join(line for line, _ in lane_lines(lane)) for lane in p.lanes)
    return f"Claim {p.key}, {p.what}: its verdict at {p.profile or 'this build'} is {p.verdict}. {lanes}."


def png(fig) -> str:
    """A figure as a base64 PNG at DPI, in a palette of 64 colours (a third of the bytes: the intro carries six)."""
    from PIL import Image             # matplotlib's own dependency
    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=DPI)
    buf = io.BytesIO()
    Image.open(raw).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(buf, "PNG", optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


# One column on a phone, two or three on a laptop: each image fills its grid cell, and a cell is never wider than the
# figure's column (min(100%, ...)), so on a 390 px phone every image is the column's width.
GRID = "display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,22rem),1fr));gap:0.6em 1.2em"


class SummaryFigure:
    """The one-figure summary as HTML: one PNG per claim (with its alt text) in a grid, and a caption."""

    def __init__(self, pairs: list, profile: str):
        self.pairs, self.profile = pairs, profile

    def _repr_html_(self):
        imgs = "".join(f'<img src="data:image/png;base64,{png(figure(p))}" style="width:100%;height:auto" '
                       f'alt="{esc(alt_text(p))}">' for p in panels(self.pairs))
        return (f'<figure class="sb-summary-figure"><div class="sb-summary-panels" style="{GRID}">{imgs}</div>'
                f"<figcaption>Every claim at once: for each claim, the measurement that decided its verdict, with its "
                f"95% interval, at the {esc(self.profile or 'mixed')} profile (and at the paper's scale where a "
                f"record exists), "
                f"coloured by that row's own verdict, against the band its verdict rule judged it by (shaded; a "
                f"dashed line where the band is one value). Each panel has its own scale and unit.</figcaption>"
                f"</figure>")

    def __repr__(self):
        return "\n".join(alt_text(p) for p in panels(self.pairs))

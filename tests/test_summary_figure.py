"""The intro's one-figure summary (book/plots/summary.py) on hand-made answers: each panel shades the band its row was
judged by (never one read from the `predicted` text), no two labels overlap by matplotlib's own text boxes, and on a
390 px phone every panel stands alone with its text at least 10 px tall."""
from __future__ import annotations

import base64
import io
import itertools
import math
import re
from dataclasses import replace

import pytest
from PIL import Image

from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages import answers as A
from imbalanced_cl.book.pages import claim_summary as CS
from imbalanced_cl.book.plots import summary as F

INF, NAN = math.inf, math.nan
CLAIM1 = A.CLAIMS[0]


def _row(measured=10.5, lo=9.7, hi=11.3, band=(9.0, 11.0), verdict=V.INCONCLUSIVE, predicted="10", **kw):
    """A claim-1 headline row whose predicted text says one thing and whose band says another, as in the book."""
    return V.Verdict(id=CLAIM1.headline[0], claim="majority/minority rate ratio", source="eq. (7)",
                     predicted=predicted, measured=measured, lo=lo, hi=hi, verdict=verdict, rule="band",
                     notebook="01_stage1_growth", band_lo=band[0], band_hi=band[1], **kw)


def _panel(*lanes, what="majority/minority Stage-1 growth-rate ratio", verdict=V.PARTLY):
    return F.Panel("1", what, verdict, "default", tuple(lanes))


def _spans(fig) -> list[tuple[float, float]]:
    """The shaded x ranges (data units) of every strip of a figure."""
    return [(p.get_x(), p.get_x() + p.get_width()) for ax in fig.axes for p in ax.patches]


def _lines(fig, style: str) -> list[float]:
    """The x of every vertical line of a style ('--' dashed, '-' solid) drawn in a figure's strips."""
    return [ln.get_xdata()[0] for ax in fig.axes for ln in ax.lines
            if ln.get_linestyle() == style and len(set(ln.get_xdata())) == 1 and len(ln.get_xdata()) == 2]


@pytest.mark.parametrize("predicted, band, shaded, edges", [
    ("10", (9.0, 11.0), (9.0, 11.0), [9.0, 11.0]),                 # claim 1: a line at 10 was drawn; the rule: 10 ± 1
    ("exponent ≥ 0.28", (0.18125, INF), (0.18125, None), [0.18125]),  # claim 2: shading from 0.28; the rule: 0.181
    ("slope 1", (0.8, 1.2), (0.8, 1.2), [0.8, 1.2]),               # claim 3: a line at 1; the rule: 1 ± 0.2
    ("> 0 (pruned - control)", (0.02, INF), (0.02, None), [0.02]),  # claim 4: shading from 0; the rule: 0.02
    ("Spearman ρ > 0, monotone", (0.8, INF), (0.8, None), [0.8]),   # A.2: shading from 0; the rule: 0.8
])
def test_each_panel_shades_the_band_its_row_was_judged_by_not_its_predicted_text(predicted, band, shaded, edges):
    """The five mismatches of issue 62's table, each on a row whose predicted text differs from its band."""
    fig = F.figure(_panel(F.Lane("default", _row(0.5, 0.3, 0.7, band, predicted=predicted))))
    (ax,) = fig.axes
    ((lo, hi),) = _spans(fig)
    assert lo == pytest.approx(shaded[0])
    assert hi == pytest.approx(shaded[1] if shaded[1] is not None else ax.get_xlim()[1])   # open: to the edge
    assert sorted(_lines(fig, "-")) == pytest.approx(edges)
    assert _lines(fig, "--") == []                      # no line at the value the predicted text names


def test_a_band_of_one_value_is_a_dashed_line_and_a_row_without_a_band_says_so():
    point = F.figure(_panel(F.Lane("default", _row(1.0, 0.9, 1.0, (1.0, 1.0), predicted="all 3 cases"))))
    assert _lines(point, "--") == [1.0] and _spans(point) == []
    bare = _row(band=(NAN, NAN), band_words="a trend with no gap at any d")
    fig = F.figure(_panel(F.Lane("default", bare)))
    assert _spans(fig) == [] and _lines(fig, "--") == [] and _lines(fig, "-") == []
    text = " ".join(" ".join(t.get_text() for t in fig.texts).split())
    assert "carries no band (a trend with no gap at any d): nothing shaded" in text
    assert "shaded" not in text.replace("nothing shaded", "")


def test_each_lane_shades_its_own_rows_band():
    """A paper-scale row judged with another tolerance gets its own band in its own strip."""
    fig = F.figure(_panel(F.Lane("default", _row()), F.Lane("paper scale", _row(10.1, 9.95, 10.2, (9.5, 10.5)))))
    assert [s for s in _spans(fig)] == [pytest.approx((9.0, 11.0)), pytest.approx((9.5, 10.5))]


def _texts(fig):
    """Every visible, non-empty text of a drawn figure: its own texts and every strip's tick labels."""
    fig.canvas.draw()
    out = [t for t in fig.texts if t.get_text().strip()]
    for ax in fig.axes:       # the tick labels matplotlib draws: those of ticks inside the view
        lo, hi = ax.get_xlim()
        locs = ax.xaxis.get_majorticklocs()
        ticks = [t.label1 for t, x in zip(ax.xaxis.get_major_ticks(len(locs)), locs, strict=True) if lo <= x <= hi]
        out += [t for t in ticks + ax.texts if t.get_visible() and t.get_text().strip()]
    return out


LONG = "a quantity whose name runs on and on and on " * 3
STRESS = [
    _panel(F.Lane("default", _row()), F.Lane("paper scale", None, "not yet run at paper scale")),
    # long labels, a paper-scale row, measurements at the band's edge on both lanes
    _panel(F.Lane("default", _row(11.0, 10.0, 11.0)), F.Lane("paper scale", _row(9.0, 9.0, 9.5, verdict=V.HOLDS)),
           what=LONG + "Supercalifragilisticexpialidocious_with_no_space_anywhere_in_it_at_all_x"),
    # gated rows with their own verdicts, long numbers, an open band far from the data
    _panel(F.Lane("a-profile-with-a-long-name", _row(-0.0150568, -0.0286481, -0.0014655, (0.02, INF), V.NOT_COMPARABLE,
                                                     would_be=V.FAILS)),
           F.Lane("paper scale", _row(-123456.7, -234567.8, -12345.6, (0.02, INF), V.FAILS)), verdict=V.NOT_COMPARABLE),
    # no finite measurement, a one-value band, a why in many words
    _panel(F.Lane("default", _row(NAN, NAN, NAN, (1.0, 1.0), V.UNTESTED)),
           F.Lane("paper scale", None, "record unreadable (" + LONG + ")"), verdict=V.UNTESTED),
]


@pytest.mark.parametrize("panel", STRESS, ids=["plain", "long-edge-paper", "gated-far", "no-measurement"])
def test_no_two_labels_overlap_and_none_leaves_the_figure_or_covers_a_strip(panel):
    fig = F.figure(panel)
    renderer = fig.canvas.get_renderer()
    texts = _texts(fig)
    boxes = [(t.get_text()[:30], t.get_window_extent(renderer)) for t in texts]
    assert len(boxes) >= 4
    for (a, ba), (b, bb) in itertools.combinations(boxes, 2):
        assert not ba.overlaps(bb), f"{a!r} overlaps {b!r}"
    whole = fig.bbox
    for name, box in boxes:
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0 and box.y1 <= whole.y1, name
    strips = [ax.get_window_extent(renderer) for ax in fig.axes]
    for t in fig.texts:                                       # no label lies over a plot
        assert not any(t.get_window_extent(renderer).overlaps(s) for s in strips), t.get_text()[:30]


def test_px_at_phone_is_points_scaled_to_the_column():
    assert F.px_at_phone(72.0, 1.0, 340) == pytest.approx(340.0)          # one inch of font, one inch of figure
    assert F.px_at_phone(11.0, 4.8, 390) == pytest.approx(11 / 72 * 390 / 4.8)


@pytest.mark.parametrize("panel", STRESS, ids=["plain", "long-edge-paper", "gated-far", "no-measurement"])
def test_on_a_phone_every_text_is_at_least_10_px(panel):
    """Shown PHONE_COLUMN_PX wide (a 390 px phone, less the page's padding), the smallest text is >= 10 px."""
    fig = F.figure(panel)
    width = fig.get_size_inches()[0]
    assert width == F.WIDTH and F.PHONE_COLUMN_PX < F.PHONE_PX
    smallest = min(t.get_fontsize() for t in _texts(fig))
    assert F.px_at_phone(smallest, width) >= F.MIN_PX == 10.0
    assert F.px_at_phone(smallest, width, F.PHONE_PX) >= 10.0


def _pairs(paper=None):
    rows = [_row(10.2, 9.8, 10.6, (9.0, 11.0), V.HOLDS),
            V.Verdict(id="lucky_exponent_0p8", claim="lucky", source="eq. (9)", predicted="exponent ≥ 0.28",
                      measured=0.5, lo=0.3, hi=0.7, verdict=V.HOLDS, notebook="02_lucky_neurons", band_lo=0.18,
                      band_hi=INF)]
    return CS.summaries(rows, "default", paper)


def test_panels_draw_the_row_that_decided_each_claim_and_the_paper_scale_claims_with_its_verdict():
    paper = {"01_stage1_growth": {"rows": [_row(10.1, 9.9, 10.3, (9.0, 11.0), V.HOLDS)], "device": "cuda"}}
    pairs = _pairs(paper)
    ps = F.panels(pairs)
    assert [p.key for p in ps] == [c.key for c in A.CLAIMS]
    one = ps[0]
    assert one.verdict == pairs[0][0].verdict == V.HOLDS and one.lanes[0].row is pairs[0][0].figure_row
    assert one.lanes[0].row.id == CLAIM1.headline[0] and one.what == "majority/minority rate ratio"
    assert one.lanes[1].row.measured == 10.1 and one.lanes[1].label == "paper scale"
    assert ps[1].lanes[1].row is None and ps[1].lanes[1].why == "not yet run at paper scale"
    assert ps[2].lanes[0].row is None and ps[2].lanes[0].why == "no row decided it"       # claim 3: no rows here


def test_the_html_shows_one_image_per_claim_each_the_columns_width_with_its_alt_text():
    html = F.SummaryFigure(_pairs(), "ci")._repr_html_()
    assert html.startswith('<figure class="sb-summary-figure"><div class="sb-summary-panels"')
    imgs = re.findall(r'<img src="data:image/png;base64,[^"]+" style="width:100%;height:auto" alt="([^"]+)">', html)
    assert len(imgs) == len(A.CLAIMS)
    assert imgs[0].startswith("Claim 1, majority/minority rate ratio: its verdict at default is holds. "
                              # the row's band in words, from the row
                              "default: 10.2 [9.8, 10.6]; this row: holds, shaded: the rule&#x27;s band, "
                              "holds within [9, 11]")
    assert "minmax(min(100%," in html                     # a grid cell never wider than the column: one per row
    first = re.search(r'base64,([^"]+)"', html).group(1)
    assert Image.open(io.BytesIO(base64.b64decode(first))).size[0] == round(F.WIDTH * F.DPI)
    assert repr(F.SummaryFigure(_pairs(), "ci")).count("\n") == len(A.CLAIMS) - 1


def test_wrap_keeps_every_line_within_the_width_by_the_renderers_measure():
    lines = F.wrap(LONG + "Supercalifragilisticexpialidocious" * 3, F.TEXT_PT)
    room = F.WIDTH - 2 * F.MARGIN
    assert len(lines) > 2 and all(F.text_width(s, F.TEXT_PT) <= room for s in lines)
    assert "".join(lines).replace(" ", "") == (LONG + "Supercalifragilisticexpialidocious" * 3).replace(" ", "")
    assert F.wrap("short", F.TEXT_PT) == ["short"]


def test_a_gated_row_shows_its_own_verdict_beside_not_comparable():
    r = replace(_row(verdict=V.NOT_COMPARABLE), would_be=V.FAILS)
    (line, _), _ = F.lane_lines(F.Lane("default", r))
    assert line == "default: 10.5 [9.7, 11.3]; this row: not comparable (on its own: does not hold)"

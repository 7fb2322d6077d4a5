"""book.plots.pruning: every figure kind draws on tiny inputs, and what it draws is what the data say."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from imbalanced_cl.book.plots import pruning as pp

T975_1 = 12.7062047  # Student t, df = 1 (tan(0.475 pi)): two replicates


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_band_draws_the_mean_and_the_t_interval_of_two_replicates():
    x = torch.tensor([0.0, 1.0, 2.0])
    Y = torch.tensor([[1.0, 3.0], [2.0, 2.0], [0.0, 4.0]])          # (T, R): means 2, 2, 2
    ax = pp.band(plt.subplots()[1], x, Y, "k", "loss")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [2.0, 2.0, 2.0])
    # half-width = t(1) * sd / sqrt(2) with sd = |a - b| / sqrt(2): 12.706 * |a - b| / 2
    ys = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert ys.max() == pytest.approx(2.0 + T975_1 * 2.0) and ys.min() == pytest.approx(2.0 - T975_1 * 2.0)


def test_bands_over_steps_control_black_and_branch_marked():
    s = torch.arange(5.0)
    curves = {"control": (s, torch.ones(5, 2)), "alpha=0.1": (s, 2 * torch.ones(5, 2))}
    ax = pp.bands_over_steps(curves, mark=2.0, xmin=1.0)
    data_lines = [ln for ln in ax.lines if len(ln.get_xdata()) == 5]
    assert matplotlib.colors.to_rgb(data_lines[0].get_color()) == (0.0, 0.0, 0.0)
    assert data_lines[1].get_color() != data_lines[0].get_color()
    assert any(list(ln.get_xdata()) == [2.0, 2.0] for ln in ax.lines)   # the dotted branch line
    assert ax.get_xlim()[0] == 1.0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["control", "alpha=0.1"]


def test_per_alpha_error_bars_are_the_replicate_intervals():
    Y = torch.tensor([[1.0, 10.0], [3.0, 10.0]])                     # (R, k): column 2 has zero spread
    ax = pp.per_alpha(plt.subplots()[1], [0.1, 0.2], {"minority j*": Y}, logx=True, zero=True)
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_ydata(), [2.0, 10.0])
    assert matplotlib.colors.to_hex(line.get_color()) == matplotlib.colors.to_hex(pp.MINORITY)
    segs = ax.collections[0].get_segments()                          # one vertical bar per x
    np.testing.assert_allclose([np.ptp(s[:, 1]) / 2 for s in segs], [T975_1 * 1.0, 0.0], atol=1e-5)
    assert ax.get_xscale() == "log" and any(list(ln.get_ydata()) == [0, 0] for ln in ax.lines)


def test_loglog_reference_has_the_predicted_slope_and_skips_negative_points():
    x = torch.tensor([0.1, 0.2, 0.4])
    Y = torch.tensor([[-1.0, 2.0, 4.0], [-1.0, 2.0, 4.0]])            # the first mean is negative
    ax = pp.loglog_reference(plt.subplots()[1], x, Y, 2.0, "excess", "slope 2")
    data, ref = ax.lines
    np.testing.assert_allclose(data.get_xdata(), [0.2, 0.4])
    lx, ly = np.log(ref.get_xdata()), np.log(ref.get_ydata())
    assert np.polyfit(lx, ly, 1)[0] == pytest.approx(2.0)
    assert ref.get_ydata()[1] == pytest.approx(2.0)                   # passes through the first positive point
    assert ax.get_xscale() == "log" == ax.get_yscale()


def test_loglog_reference_says_when_nothing_is_positive():
    ax = pp.loglog_reference(plt.subplots()[1], [0.1, 0.2], -torch.ones(2, 2), 1.0, "excess", "slope 1")
    assert not ax.lines and "not positive" in ax.texts[0].get_text()


def test_feature_scatter_separates_minority_from_majority():
    share = torch.arange(8.0).view(2, 4)
    y = -share
    ax = pp.feature_scatter(plt.subplots()[1], share, y, [3], "share", "rise")
    maj, mino = ax.collections
    assert maj.get_offsets().shape == (6, 2) and mino.get_offsets().shape == (2, 2)
    np.testing.assert_allclose(mino.get_offsets(), [[3.0, -3.0], [7.0, -7.0]])


def test_level_curves_one_curve_per_level():
    V = np.stack([np.ones((3, 2)), 2 * np.ones((3, 2))])            # (levels, x, R)
    ax = pp.level_curves(plt.subplots()[1], [0.1, 0.2, 0.3], V, ["a", "b"])
    np.testing.assert_allclose([ln.get_ydata()[0] for ln in ax.lines], [1.0, 2.0])
    assert len(ax.collections) == 2


def test_ci_table_formats_tensors_numbers_and_text():
    md = pp.ci_table({"row": {"x": torch.tensor([1.0, 3.0]), "n": 0.5, "word": "helps"},
                      "other": {"x": torch.tensor([2.0, 2.0])}}, first="run").data
    lines = md.splitlines()
    assert lines[0] == "| run | x | n | word |"
    assert lines[2] == f"| row | 2 [{2 - T975_1:.3f}, {2 + T975_1:.3f}] | 0.5 | helps |"
    assert lines[3] == "| other | 2 [2, 2] |  |  |"
    assert pp.ci_table({"r": {"x": torch.tensor([1.0, 3.0])}}, mean_only=True).data.splitlines()[2] == "| r | 2 |"

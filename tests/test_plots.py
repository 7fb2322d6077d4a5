"""book/plots/common.py: every figure kind draws on a tiny input (Agg backend) and shows what its docstring says."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from imbalanced_cl import stats
from imbalanced_cl.book.plots import common as plots


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_band_spans_the_interval_and_draws_the_mean(ax):
    # two replicates 0 and 2 at every step: mean 1, half-width t975(1) * sqrt(2 / 2) = 12.7062047
    Y = np.array([[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])
    mean, lo, hi = plots.band(ax, [0, 1, 2], Y, color="C1")
    assert np.allclose(mean, 1.0) and np.allclose(lo, 1 - 12.7062047) and np.allclose(hi, 1 + 12.7062047)
    poly = ax.collections[0].get_paths()[0].vertices
    assert poly[:, 1].min() == pytest.approx(1 - 12.7062047) and poly[:, 1].max() == pytest.approx(1 + 12.7062047)
    assert poly[:, 0].min() == 0 and poly[:, 0].max() == 2
    assert np.allclose(ax.lines[0].get_ydata(), 1.0)


def test_errorbars_use_the_replicate_interval(ax):
    Y = torch.tensor([[1.0, 4.0], [3.0, 8.0], [2.0, 6.0]])
    mean, lo, hi = plots.errorbars(ax, [1, 2], Y)
    m, l, h = stats.mean_ci(Y)
    assert np.allclose(mean, m) and np.allclose(lo, l) and np.allclose(hi, h)
    assert np.allclose(ax.lines[0].get_ydata(), [2.0, 6.0])


def test_measured_vs_predictions_is_log_log_with_one_curve_per_prediction(ax):
    x = [1.0, 10.0, 100.0]
    Y = np.array([[1.0, 10.0, 100.0], [1.2, 12.0, 120.0]])
    lines = {"slope 1": (np.array(x), "k-"), "slope 0": (np.ones(3), "C3--")}
    plots.measured_vs_predictions(ax, x, Y, lines, xlabel="x", ylabel="y")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert set(labels) == {"measured (95% CI over replicates)", "slope 1", "slope 0"}
    assert len(ax.lines) == 1 + len(lines)        # the error-bar marker line plus the two predictions


def test_shape_through_keeps_the_shape_and_meets_the_anchor(ax):
    plots.shape_through(ax, [2.0, 4.0, 8.0], [1.0, 2.0, 4.0], 5.0, "k--")
    y = ax.lines[0].get_ydata()
    assert y[0] == pytest.approx(5.0) and y[2] / y[0] == pytest.approx(4.0)


def test_trajectories_one_line_per_neuron_and_T1(ax):
    steps = np.arange(5)
    a, b = np.exp(np.outer(steps, [0.1, 0.2])), -np.exp(np.outer(steps, [0.05, 0.0, 0.3]))
    plots.trajectories(ax, steps, {"maj": (a, "C0"), "min": (b, "C3")}, T1=3)
    assert ax.get_yscale() == "log"
    assert len(ax.lines) == 2 + 3 + 1
    assert (ax.lines[2].get_ydata() > 0).all()      # magnitudes |<w_i, M_j>| are drawn
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["maj", "min", "$T_1$ (eq. 34)"]
    assert list(ax.lines[-1].get_xdata()) == [3, 3]


def test_slopes_vs_claim_draws_each_interval_and_the_diagonal(ax):
    fits = {"final": [stats.SlopeFit(0.1, 0.0, 0.2, 0.0, 3), stats.SlopeFit(0.5, 0.3, 0.7, 0.0, 3)],
            "init": [stats.SlopeFit(0.0, -0.1, 0.1, 0.0, 3), stats.SlopeFit(0.9, 0.8, 1.0, 0.0, 3)]}
    plots.slopes_vs_claim(ax, [0.0, 0.75], fits, "x", "exponent", "claim", zero_label="O(1)")
    assert len(ax.containers) == 2
    segs = ax.containers[0].lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in segs] == [(0.0, 0.2), (0.3, 0.7)]
    diag = [ln for ln in ax.lines if ln.get_label() == "claim"][0]
    assert list(diag.get_xdata()) == [0, 1] and list(diag.get_ydata()) == [0, 1]


def test_hist_with_line_counts_and_marks_the_bound(ax):
    plots.hist_with_line(ax, np.arange(10.0), 4.5, "t", bins=5)
    assert len(ax.patches) == 5 and sum(p.get_height() for p in ax.patches) == 10
    assert list(ax.lines[0].get_xdata()) == [4.5, 4.5]
    fig, ax2 = plt.subplots()
    plots.hist_with_line(ax2, np.array([]), 1.0, "empty")
    assert len(ax2.patches) == 0 and ax2.get_title() == "empty"
    plt.close(fig)


def test_series_one_coloured_interval_series_per_grid_value(ax):
    Ys = {"d=10": np.array([[1.0, 2.0], [3.0, 4.0]]), "d=20": np.array([[5.0, 5.0], [7.0, 9.0]])}
    colours = plots.series(ax, [0.5, 1.0], Ys)
    assert colours == ["C0", "C1"] and len(ax.containers) == 2
    assert np.allclose(ax.lines[1].get_ydata(), [6.0, 7.0])       # second series: the replicate means
    assert [ln.get_color() for ln in ax.lines[:2]] == ["C0", "C1"]


def test_pure_and_mixed_bars_stack_mixed_on_pure(ax):
    pure, mixed = np.array([[3.0, 1.0], [2.0, 0.5]]), np.array([[2.0, 3.0], [1.0, 1.5]])
    plots.pure_and_mixed_bars(ax, ["ρ=1", "ρ=0.5"], pure, mixed)
    bars = ax.patches
    assert len(bars) == 8                                       # 2 ratios x 2 groups x (pure, mixed)
    tops = sorted(round(b.get_y() + b.get_height(), 6) for b in bars)
    assert tops == sorted([3.0, 2.0, 1.0, 0.5, 5.0, 3.0, 4.0, 2.0])  # pure heights, then pure + mixed
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ρ=1", "ρ=0.5"]


def test_fit_errorbars_draws_the_interval_of_each_fit(ax):
    plots.fit_errorbars(ax, [0.3, 0.5], [stats.SlopeFit(1.0, 0.5, 2.0, 0.0, 3), stats.SlopeFit(0.0, -1.0, 0.5, 0.0, 3)])
    segs = ax.containers[0].lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in segs] == [(0.5, 2.0), (-1.0, 0.5)]


def _tiny_census():
    ds, R = np.array([10, 100]), 2
    ones = np.ones((2, 1))
    return {"ds": ds, "rhos": np.array([1.0, 0.5]), "m": np.stack([ds ** 2.0] * 2, 1),
            "exact": {"p_ord": 0.1 * ones.repeat(2, 1), "p_lucky": np.array([[1e-3, 0.0], [1e-4, 0.0]]),
                      "rse_lucky": np.array([[0.1, 0.0], [0.5, 0.0]]), "Ni": ones.repeat(2, 1),
                      "paper_B": np.array([[1.0, 0.5], [1.0, 1e-3]]), "B": np.array([[1.0, 0.2], [1.0, 0.0]])},
            "mc": {"p_ord": np.full((2, 2, R), 0.1), "p_lucky": np.zeros((2, 2, R)), "Ni": np.ones((2, 2, R)),
                   "B": np.full((2, 2, R), 0.5)}}


def test_census_panels_three_log_log_panels_and_marked_unresolved_points():
    fig, axes = plt.subplots(1, 3)
    plots.census_panels(axes, _tiny_census(), {1.0: {"ordinary": 1.1, "lucky": 0.9, "Ni": 0.1},
                                               0.5: {"ordinary": 1.8, "lucky": -2.4, "Ni": 0.8}}, rse_max=0.3)
    assert all(a.get_xscale() == "log" and a.get_yscale() == "log" for a in axes)
    crosses = [ln for ln in axes[1].lines if ln.get_marker() == "x"]
    assert [list(ln.get_xdata()) for ln in crosses] == [[100], []]   # rho = 1 at d = 100: rse 0.5 > 0.3
    assert "30%" in fig._suptitle.get_text()
    plt.close(fig)


def test_pr_b_curves_draw_paper_exact_and_the_level_one(ax):
    plots.pr_b_curves(ax, _tiny_census())
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(dashed) == 2 and list(dashed[1].get_ydata()) == [0.5, 1e-3]
    exact = [ln for ln in ax.lines if ln.get_label().startswith("exact")]
    assert exact[1].get_ydata()[1] == 1e-300                        # a zero probability stays on the log axis
    assert ax.get_ylim()[1] == 2 and ax.get_yscale() == "log"


def test_cos2_heatmaps_one_panel_per_run_first_neurons_and_split_line():
    fig, axes = plt.subplots(1, 2)
    c = torch.rand(2, 6, 5)
    im = plots.cos2_heatmaps(axes, {"vanilla": c, "pruned": c.flip(1)}, n_major=3, n_neurons=4)
    assert im.get_array().shape == (4, 5) and im.get_clim() == (0, 1)
    assert np.allclose(axes[0].images[0].get_array(), c[0, :4].numpy())
    assert list(axes[1].lines[0].get_xdata()) == [2.5, 2.5] and axes[1].get_title() == "pruned"
    plt.close(fig)


def test_regime_verdict_table_matches_rows_and_survives_missing_measurements():
    """Hand-made rows: a stored record keeps NaN as null; such a row shows a dash, and changes are counted and
    marked."""
    from imbalanced_cl.book.plots import regime as plots_regime
    from imbalanced_cl.claims import regime_compare as RC
    fresh = [{"notebook": "03_Ni_scaling", "claim": "a", "verdict": "holds", "measured": 0.5},
             {"notebook": "03_Ni_scaling", "claim": "b", "verdict": "not tested", "measured": float("nan")},
             # not a claim notebook 01-05
             {"notebook": "08_scale", "claim": "a", "verdict": "holds", "measured": 1.0},
             # no fixed row
             {"notebook": "04_pruning_gains", "claim": "c", "verdict": "holds", "measured": 2.0}]
    fixed = [{"notebook": "03_Ni_scaling", "claim": "a", "verdict": "does not hold", "measured": 0.25},
             {"notebook": "03_Ni_scaling", "claim": "b", "verdict": "not tested", "measured": None}]
    rows = RC.verdict_changes(_rows(fresh), _rows(fixed))
    assert [(r["claim"], r["fresh"], r["fixed"]) for r in rows] == [("a", "holds", "does not hold"),
                                                                    ("b", "not tested", "not tested")]
    md = plots_regime.verdict_table(rows, len(fixed))
    assert md.startswith("**1 of 2 rows change their verdict")
    assert "| 03 | a | holds (0.5) | does not hold (0.25) ⟵ |" in md
    assert "| 03 | b | not tested (–) | not tested (–) |" in md
    assert "No fixed-pairs record" in plots_regime.verdict_table([], 0)
    # rows with ids match by id, even when a sentence was reworded; a record without ids falls back to the sentence
    fresh = [{"notebook": "01_stage1_growth", "claim": "new words", "id": "rate_ratio", "verdict": "holds",
              "measured": 1.0}]
    fixed = [{"notebook": "01_stage1_growth", "claim": "old words", "id": "rate_ratio", "verdict": "partly",
              "measured": 2.0}]
    assert [(r["fresh"], r["fixed"]) for r in RC.verdict_changes(_rows(fresh), _rows(fixed))] == [("holds", "partly")]


def _rows(dicts: list[dict]) -> list:
    """Stored rows (JSON) read back as verdict rows, as the book reads them."""
    from imbalanced_cl.verdict import from_json
    return [from_json(d) for d in dicts]

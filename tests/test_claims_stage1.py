"""Notebook 01's claim module: rate measurements against the linear theory, T1 exponents, and the verdict rows."""
import math

import pytest
import torch

from imbalanced_cl.claims import stage1
from imbalanced_cl.sim.train import train
from imbalanced_cl.verdict import FAILS, HOLDS, PARTLY, UNTESTED

NAN3 = (float("nan"),) * 3


def _results(**kw):
    base = {"slope": (1.02, 0.95, 1.1), "ratio": (1.0, 0.95, 1.05), "maj_min": (9.5, 9.0, 10.2),
            "perp": (1.0, 0.99, 1.01), "d1": (0.1, 0.0, 0.2)}
    return {**base, **kw}


def test_verdict_rows_on_hand_made_results():
    cfg = stage1.Stage1Config(eps_max=1.0, eps_min=0.1, progress=False)
    rows = stage1.verdict_rows(_results(ratio=(0.5, 0.45, 0.55), perp=NAN3), cfg)
    # slope inside 1 ± 0.15; ratio wholly below 1 ± 10% but > 0 (a real effect, size off); maj/min inside 10 ± 10%;
    # no T1 ratio; d1 exponent [0, 0.2] reaches 0 and misses 1 ± 0.25; the same interval lies inside 0 ± 0.25
    assert {r.id: r.verdict for r in rows} == {"rate_slope": HOLDS, "rate_vs_linear": PARTLY, "rate_ratio": HOLDS,
                                               "perp_decay": UNTESTED, "t1_d1_exponent": FAILS,
                                               "t1_d1_workshop": HOLDS}
    rows = {r.id: r for r in rows}
    # eps_max / eps_min, the target of the ratio row
    assert rows["rate_ratio"].predicted == "10"
    # both T1 rows judge the d1 exponent
    assert (rows["t1_d1_exponent"].measured, rows["t1_d1_exponent"].lo, rows["t1_d1_exponent"].hi) == (0.1, 0.0, 0.2)
    assert rows["t1_d1_exponent"].source == "eq. (33)" and rows["t1_d1_workshop"].source == "workshop eq. (40)"


def test_verdict_tolerances_come_from_the_config():
    res = _results(slope=(1.1, 1.09, 1.11))
    def slope_row(**kw):
        return {r.id: r for r in stage1.verdict_rows(res, stage1.Stage1Config(progress=False, **kw))}["rate_slope"]
    loose, tight = slope_row(), slope_row(tol_slope=0.01)
    assert loose.verdict == HOLDS and tight.verdict == PARTLY     # wholly outside 1 ± 0.01, but > 0
    assert "1 ± 0.01" in tight.rule


def test_t1_fits_and_curves_recover_known_exponents():
    """T1 = 3 x^0.5 in every replicate: the measured exponent is 0.5 with a zero-width interval; the formula
    curves keep their own exponents and the shapes pass through the first measured mean."""
    x = [10, 20, 40, 80]
    T1 = torch.tensor([[3.0 * v ** 0.5 for v in x]] * 3, dtype=torch.float64)
    sw = {"x": x, "T1": T1, "linear": [2.0 * math.log(v) for v in x], "main": [v * 1.0 for v in x],
          "workshop": [7.0] * 4}
    fits = stage1.t1_fits({"d1": sw, "d": sw})
    assert fits["d1"] == pytest.approx((0.5, 0.5, 0.5), abs=1e-5)
    assert fits["d1_main"] == pytest.approx(1.0) and fits["d1_workshop"] == pytest.approx(0.0, abs=1e-9)
    curves = stage1.t1_curves(sw)
    main = curves["main formula (shape)"][0]
    assert float(main[0]) == pytest.approx(3.0 * 10 ** 0.5, rel=1e-5)
    assert float(main[-1] / main[0]) == pytest.approx(8.0, rel=1e-5)
    assert "0.50 [0.50, 0.50]" in stage1.t1_report(fits)[0]


def test_rate_results_follow_the_linear_theory_and_order_majority_over_minority():
    """Stage 1 with b = 0: measured/predicted rate near 1 (the linear theory of eq. 7 without O~ terms), and the
    majority/minority ratio of the measured rates equals that of the predicted rates (not its inverse)."""
    cfg = stage1.Stage1Config(d=10, d1=60, m=20, L=4, R=4, n_pairs=256, steps=25, record_every=1, bias="none",
                              progress=False, eps_profile="two_level", eps_min=0.25, n_minority=5, fit_start=3,
                              kappa_samples=5000)
    res = stage1.rate_results(train(cfg), cfg)
    assert res["ratio"][0] == pytest.approx(1.0, abs=0.25)
    pred = float(res["y_pred"][0] / res["y_pred"][-1])
    assert pred > 1.5
    assert res["maj_min"][0] == pytest.approx(pred, rel=0.25)
    assert res["y"].shape == (4, 10)


def test_each_row_reads_as_written_and_the_rate_ratio_is_judged_within_a_relative_band():
    """The six rows' ids, labels, sources and predictions as a reader sees them; the majority/minority ratio's band is
    ε_max/ε_min × (1 ± tol_ratio) (relative: an absolute ± tol_ratio around 10 would be ten times narrower)."""
    cfg = stage1.Stage1Config(progress=False, eps_max=1.0, eps_min=0.1)
    rows = stage1.verdict_rows(_results(maj_min=(10.6, 10.5, 10.7)), cfg)
    assert [(r.id, r.claim, r.source, r.predicted) for r in rows] == [
        ("rate_slope", "Stage-1 rate/η+λ ∝ ε_j (log-log slope)", "Lemma 3.1, eq. (7)", "1"),
        ("rate_vs_linear", "Measured rate equals the parameter-free linear prediction (ratio)",
         "eq. (7) with κ_j by Monte Carlo", "ratio 1"),
        ("rate_ratio", "Majority/minority rate ratio equals ε_max/ε_min", "Lemma 3.1, eq. (7)", "10"),
        ("perp_decay", "Non-feature part only decays, ||P⊥w(T1)|| / decay-only", "eq. (8), Lemma C.1(c)", "ratio 1"),
        ("t1_d1_exponent", "T1 grows linearly in d1 (exponent of d1)", "eq. (33)", "1"),
        ("t1_d1_workshop", "T1 does not depend on d1 (exponent of d1)", "workshop eq. (40)", "0")]
    ratio = {r.id: r for r in rows}["rate_ratio"]
    tol = cfg.tol_ratio
    assert (ratio.band_lo, ratio.band_hi) == (pytest.approx(10 * (1 - tol)), pytest.approx(10 * (1 + tol)))
    assert ratio.verdict == HOLDS                                # 10.5-10.7 lies inside 10 ± 10·tol
    assert all(r.depends == rows[0].depends and r.depends for r in rows)

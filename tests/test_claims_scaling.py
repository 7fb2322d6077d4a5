"""Notebook 03's claim module on hand-made grids with known scaling: exponents, ratios, overlaps, verdict rows."""
import math

import numpy as np
import pytest

from imbalanced_cl import stats
from imbalanced_cl.claims import scaling
from imbalanced_cl import verdict as V
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, NOT_COMPARABLE, UNTESTED

R, M = 3, 8


def _point(d, rho, r_noise):
    """Measurements of one grid point built so that |N_i| = 2 d^0.5 (final) and 1 (init), A_min/A_maj = rho,
    F_min/F_maj = rho^2, with the last 2 features minority; replicates differ by a common factor only."""
    minority = np.arange(d) >= d - 2
    A = np.where(minority, rho, 1.0)[None, :] * r_noise[:, None]
    alpha = np.full((R, M, d), 0.5)
    alpha[:, 0, 0] = np.nan                                   # j in N_i: not an off-set coefficient
    return {"Ni_final": 2.0 * d ** 0.5 * r_noise, "Ni_init": np.ones(R), "precision": np.full(R, 0.5),
            "recall": np.array([0.2, 0.4, 0.6]), "minority": minority, "A": A, "F": A ** 2,
            "single_per_feat": np.where(minority, 1.0, 3.0)[None, :].repeat(R, 0),
            "neurons_per_feat": np.where(minority, 4.0, 5.0)[None, :].repeat(R, 0),
            "pure_per_feat": np.where(minority, 1.0, 3.0)[None, :].repeat(R, 0),
            "alpha_p_scaled": alpha, "beta_scaled": np.full((R, M, 5), 2.0),
            "alpha_p_scaled_init": alpha * 4, "beta_scaled_init": np.full((R, M, 5), 0.5)}


@pytest.fixture
def grid():
    cfg = scaling.ScalingConfig(ds=(10, 20, 40), ratios=(1.0, 0.5), m=M, progress=False)
    noise = np.array([0.9, 1.0, 1.1])
    return cfg, {(d, r): _point(d, r, noise) for d in cfg.ds for r in cfg.ratios}


def test_ni_fits_recover_the_built_exponents(grid):
    cfg, res = grid
    fits = scaling.ni_fits(res, cfg)
    for r in cfg.ratios:
        assert fits["Ni_final"][r].slope == pytest.approx(0.5) and fits["Ni_init"][r].slope == pytest.approx(0.0)
    assert scaling.ni_array(res, cfg).shape == (R, 2, 3)
    assert "claim ≤ 0.75" in scaling.ni_report(fits)[1]


def test_feature_ratios_take_minority_over_majority(grid):
    cfg, res = grid
    fr = scaling.feature_ratios(res, cfg)
    assert fr["fitA"].slope == pytest.approx(1.0) and fr["fitF"].slope == pytest.approx(2.0)
    assert np.allclose(fr["single"][20], 1.0)                 # the minority count, not the majority 3
    # the bound m d^(-1/rho^2): 8/d <= 1 only for d >= 8 at rho = 1; at rho = 0.5, 8 d^-4 is tiny
    assert fr["single_ok"].all() and fr["single_ok"].size == 3 * 2 * R


def test_overlap_mixing_and_offsets(grid):
    cfg, res = grid
    ov = scaling.set_overlap(res)
    assert ov["precision"][0] == pytest.approx(0.5) and ov["recall"][0] == pytest.approx(0.4)
    assert ov["recall"][1] < 0.4 < ov["recall"][2]
    mix = scaling.mixing(res, cfg)
    assert (mix["dmax"] == 40 and np.allclose(mix["pure"], [[3, 1], [3, 1]])
            and np.allclose(mix["mixed"], [[2, 3], [2, 3]]))
    ap, be = scaling.offset_coefs(res)
    assert ap.size == sum(R * M * d - R for d, _ in res)      # one NaN (j in N_i) per replicate dropped
    assert np.isfinite(ap).all() and (be == 2.0).all()


def _fit(s, lo, hi):
    return stats.SlopeFit(s, lo, hi, 0.0, 3)


def _results(**kw):
    base = {"fits": {"Ni_final": {1.0: _fit(0.05, -0.1, 0.2), 0.5: _fit(1.2, 1.0, 1.4),
                                  0.3: _fit(0.5, math.nan, math.nan)}},
            "overlap": {"precision": (0.7, 0.6, 0.8)},
            "track": {"final (dominant set)": _fit(0.1, -0.1, 0.3), "init (Def. B.1)": _fit(0.95, 0.8, 1.1)},
            "ratios": {"fitA": _fit(0.95, 0.8, 1.1), "fitF": _fit(2.0, 1.0, 3.0),
                       "single_ok": np.array([True] * 9 + [False])},
            "offset": (np.array([0.1, 0.2, 2.0]), np.array([0.5, 0.5])),
            "offset_null": (np.array([0.5, 2.0, 2.0]), np.array([0.5, 2.0]))}
    return {**base, **kw}


def test_verdict_rows_on_hand_made_results():
    cfg = scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False)
    rows = V.gate(scaling.verdict_rows(_results(), cfg), "03_Ni_scaling")
    # |N_i| bounds e = 0, 0.75, 0.91 with band (-inf, e + 0.1]: [-0.1, 0.2] straddles 0.1; [1.0, 1.4] lies above 0.85
    assert {r.id: r.verdict for r in rows} == {
        "ni_exponent_1": INCONCLUSIVE, "ni_exponent_0p5": FAILS, "ni_exponent_0p3": UNTESTED,
        "dominant_set_precision": INCONCLUSIVE,                      # precision [0.6, 0.8] straddles the band edge 0.8
        "ni_tracking_final": FAILS, "ni_tracking_init": HOLDS,       # tracking slopes 0.1 and 0.95 against 1
        "a_j_slope": HOLDS, "f_j_slope": INCONCLUSIVE,               # A slope 0.95; F interval too wide
        "singleton_neurons": INCONCLUSIVE, "offset_alpha_bound": INCONCLUSIVE,   # 9/10 single, 2/3 alpha': Wilson
                                                                     # intervals [0.60, 0.98], [0.21, 0.94] straddle 0.9
        "offset_beta_bound": NOT_COMPARABLE,                         # beta: the null's 1/2 reaches 0.91 ≥ 0.9
        "null_below_band__offset_alpha_bound": HOLDS, "null_below_band__offset_beta_bound": INCONCLUSIVE}
    by = {r.id: r for r in rows}
    single = by["singleton_neurons"]
    assert single.measured == pytest.approx(0.9) and (single.lo, single.hi) == pytest.approx(stats.binom_ci(9, 10))
    assert by["ni_exponent_0p5"].predicted == "exponent ≤ 0.75"


def test_for_all_bounds_need_a_margin_over_the_untrained_null():
    """The null is a premise row of its own (scoped to its bound); the bound depends on it, and gate applies it."""
    def rows(trained, untrained):
        null, bound = V.gate(scaling.bound_rows("b", "b", "eq. 13", "< 1", trained, untrained, 0.9), "03")
        assert null.id == "null_below_band__b" and null.kind == "premise" and null.id in bound.depends
        return null, bound
    trained = np.full(1000, 0.3)                                   # every entry below 1: Wilson [0.996, 1]
    null, row = rows(trained, np.r_[np.full(683, 0.5), np.full(317, 2.0)])
    assert null.verdict == HOLDS and null.measured == pytest.approx(0.683)
    assert row.verdict == HOLDS and "null" in row.rule and row.premise.startswith("met")
    # the untrained weights meet the band too (970/1000 below 1): the bound says nothing about training
    null, row = rows(trained, np.r_[np.full(970, 0.5), np.full(30, 2.0)])
    assert null.verdict == FAILS and (null.lo, null.hi) == pytest.approx(stats.binom_ci(970, 1000))
    assert row.verdict == NOT_COMPARABLE and "0.97" in row.premise and row.would_be == HOLDS
    assert row.unmet == ("null_below_band__b",)
    # a null whose interval straddles the band's edge is not shown to stay below it: the bound is not comparable
    null, row = rows(trained, np.r_[np.full(88, 0.5), np.full(12, 2.0)])
    assert null.verdict == INCONCLUSIVE and row.verdict == NOT_COMPARABLE
    null, row = rows(np.r_[np.full(500, 0.5), np.full(500, 2.0)], np.full(100, 2.0))
    assert row.verdict == FAILS and row.measured == pytest.approx(0.5)


def test_untrained_null_of_beta_is_the_gaussian_share_below_one():
    """Oracle (first principles): for a random direction w in R^d1, sqrt(d1) <w, u>/||w|| for a fixed unit u is
    close to N(0, 1), so the share of sqrt(d1)|beta_ij|/||w_i|| below 1 is about erf(1/sqrt 2) = 0.683."""
    import torch
    from types import SimpleNamespace
    from imbalanced_cl.sim import data as D
    from imbalanced_cl.sim.config import SimConfig
    cfg = SimConfig(d=10, d1=200, m=100, R=2, progress=False)
    M = D.make_dictionaries(cfg, range(cfg.R))
    g = torch.Generator().manual_seed(0)
    W0 = torch.randn(cfg.R, cfg.m, cfg.d1, generator=g)
    hist = SimpleNamespace(get=lambda k: torch.zeros(1, cfg.R, cfg.m, cfg.d) if k == "coef" else torch.zeros(1, cfg.R))
    run = SimpleNamespace(cfg=cfg, W=W0 * 3.0, W0=W0, M=M, history=hist)
    out = scaling.stage3(run, 0.5, 0.1)
    share = float((out["beta_scaled_init"] < 1).mean())
    assert share == pytest.approx(math.erf(2 ** -0.5), abs=0.01)
    # alpha' of a random direction: sqrt(d) |<w, M_j>|/||w|| ~ sqrt(d/d1) |N(0,1)|, below 1 for ~100% at d1 = 20 d
    assert float((out["alpha_p_scaled_init"][np.isfinite(out["alpha_p_scaled_init"])] < 1).mean()) > 0.99
    assert np.allclose(out["beta_scaled"], out["beta_scaled_init"], atol=1e-5)   # the statistic is scale-free


def test_verdict_tolerances_come_from_the_config():
    loose = scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False, tol_ni=0.5, precision_min=0.6)
    def judged(cfg):
        return {r.id: r for r in scaling.verdict_rows(_results(), cfg)}
    rows = judged(loose)
    ni = rows["ni_exponent_0p5"]
    assert ni.verdict == INCONCLUSIVE and "≤ 1.25" in ni.rule   # [1.0, 1.4] straddles 0.75 + 0.5
    assert judged(loose.replace(tol_ni=0.7))["ni_exponent_0p5"].verdict == HOLDS   # inside (-inf, 1.45]
    assert rows["dominant_set_precision"].verdict == HOLDS
    tight = judged(scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False, tol_A=0.01))["a_j_slope"]
    assert tight.verdict == INCONCLUSIVE and "1 ± 0.01" in tight.rule   # A slope [0.8, 1.1] straddles 1 ± 0.01


@pytest.mark.parametrize("kw", [{"tol_A": -0.2}, {"tol_F": 0}, {"tol_tracking": (0.2, 0.5)}, {"precision_min": 0.0},
                                {"precision_min": 1.2}, {"forall_min": (0.9, 0.5)}, {"tol_ni": 0.0},
                                {"tol_ni": (0.3, 0.1)}, {"tol_share": 0.0}])
def test_bad_tolerances_name_the_parameter(kw):
    from imbalanced_cl.validate import ParameterError
    with pytest.raises(ParameterError, match=list(kw)[0]):
        scaling.ScalingConfig(progress=False, **kw)


def test_the_push_tests_lemma_b1_by_its_effect_on_every_trained_row(grid):
    """Notebook 03's push: the whole grid re-judged at 4 × K. An unmoved grid meets k_poly for a row whose change's
    interval fits its tolerance (the tracking slopes' band 1 ± 0.2; an exponent bound is held to tol_ni, a share to
    tol_share), and is named "not shown" where it does not; a grid whose |N_i| grows as d^0.9 instead of d^0.5 moves
    the exponent rows by +0.4, which no tolerance forgives; a push measured at another K is refused."""
    cfg, res = grid
    cfg = cfg.replace(n_pairs=32, tol_share=0.07)           # apart from tol_ni = 0.1, so each row shows whose it is
    rows = scaling.verdict_rows(scaling.summarise(res, cfg), cfg)
    assert scaling.with_push(rows, None, cfg) is rows
    same = {r.id: r for r in scaling.with_push(rows, {"n_pairs": 128, "grid": res}, cfg)}
    assert all("moved by +0" in same[r.id].premise for r in rows if "k_poly" in r.depends)
    assert "within its tolerance ±0.1: met" in same["ni_exponent_1"].premise      # tol_ni, not the open band
    assert same["ni_exponent_1"].met_by_effect == ("k_poly",)
    assert "±0.07" in same["dominant_set_precision"].premise                       # tol_share
    steeper = {k: {**v, "Ni_final": v["Ni_final"] * k[0] ** 0.4} for k, v in res.items()}
    moved = {r.id: r for r in scaling.with_push(rows, {"n_pairs": 128, "grid": steeper}, cfg)}
    assert moved["ni_exponent_1"].met_by_effect == () and "moved by +0.4" in moved["ni_exponent_1"].premise
    assert moved["a_j_slope"].met_by_effect == same["a_j_slope"].met_by_effect      # A_j did not move
    with pytest.raises(ValueError, match="measured with K = 64 pairs a step, the effect test asks for K = 128"):
        scaling.with_push(rows, {"n_pairs": 64, "grid": res}, cfg)


def test_the_push_trains_the_whole_grid_at_four_times_k_under_its_own_point_names():
    """measure_push runs train_grid at premises.push_pairs(K), all else equal, through the runner it is given, with
    the points named apart from the main grid's ("push_"), and says its K."""
    cfg = scaling.ScalingConfig(ds=(10, 20), ratios=(1.0,), n_pairs=24, progress=False)
    seen = {}

    def run_grid(fn, c, axes, prefix):
        seen.update(fn=fn, c=c, axes=axes, prefix=prefix)
        return {"grid": True}
    out = scaling.measure_push(cfg, run_grid)
    assert out == {"n_pairs": 96, "grid": {"grid": True}}
    assert seen["fn"] is scaling.train_grid and seen["axes"] == ("ds", "ratios") and seen["prefix"] == "push_"
    assert seen["c"] == cfg.replace(n_pairs=96)


# Every row of notebook 03 written out from the paper's statements (Thm 3.1, eqs. (12)-(14); claim 3), on the hand-made
# results: (claim, source, predicted, quantity, band). The band is the prediction with the config's tolerance.
ROWS_03 = {
    "ni_exponent_1": ("|N_i| = O(d^(1-ρ²)) after training, ρ=1.0: exponent of d in |N_i|", "Thm 3.1, eq. (14)",
                      "exponent ≤ 0.00", "real", (-math.inf, 0.1)),
    "ni_exponent_0p5": ("|N_i| = O(d^(1-ρ²)) after training, ρ=0.5: exponent of d in |N_i|", "Thm 3.1, eq. (14)",
                        "exponent ≤ 0.75", "real", (-math.inf, 0.85)),
    "ni_exponent_0p3": ("|N_i| = O(d^(1-ρ²)) after training, ρ=0.3: exponent of d in |N_i|", "Thm 3.1, eq. (14)",
                        "exponent ≤ 0.91", "real", (math.nan, math.nan)),
    "dominant_set_precision": ("final dominant set ⊆ set at initialisation: precision (share of the final set)",
                               "Thm 3.1", "precision ≈ 1", "fraction", (0.8, math.inf)),
    "ni_tracking_final": ("|N_i| exponent follows 1-ρ² — final (dominant set): slope of the exponent on 1 − ρ²",
                          "claim 3; eq. (14) as a scaling law", "slope 1", "real", (0.8, 1.2)),
    "ni_tracking_init": ("|N_i| exponent follows 1-ρ² — init (Def. B.1): slope of the exponent on 1 − ρ²",
                         "claim 3; eq. (14) as a scaling law", "slope 1", "real", (0.8, 1.2)),
    "a_j_slope": ("A_j ∝ eps_j/eps_max: log-log slope of A_j on eps_j/eps_max", "Thm 3.1, eq. (13)", "log-log slope 1",
                  "real", (0.8, 1.2)),
    "f_j_slope": ("F_j ∝ (eps_j/eps_max)²: log-log slope of F_j on eps_j/eps_max", "Thm 3.1, eqs. (12)-(13)",
                  "log-log slope 2", "real", (1.7, 2.3)),
    "singleton_neurons": ("≥ m d^(-(eps_max/eps_min)²) neurons with N_i = {j} (minority j): share of (d, ρ, replicate) "
                          "cells", "Thm 3.1", "fraction of (d, ρ, replicate) cells = 1", "fraction", (0.9, math.inf)),
    "null_below_band__offset_alpha_bound": ("the untrained weights (the null) stay below the band ≥ 0.9 of "
                                            "offset_alpha_bound: share of untrained entries below 1",
                                            "the book's test design (no paper source)", "share < 0.9", "fraction",
                                            (-math.inf, 0.9)),
    "offset_alpha_bound": ("α'_ij ≤ o(1/√d)||w_i||: share of entries with √d α'/||w|| < 1", "Thm 3.1, eq. (13)",
                           "√d α'/||w|| < 1 for all", "fraction", (0.9, math.inf)),
    "null_below_band__offset_beta_bound": ("the untrained weights (the null) stay below the band ≥ 0.9 of "
                                           "offset_beta_bound: share of untrained entries below 1",
                                           "the book's test design (no paper source)", "share < 0.9", "fraction",
                                           (-math.inf, 0.9)),
    "offset_beta_bound": ("|β_ij| ≤ o(1/√d1)||w_i||: share of entries with √d1 |β|/||w|| < 1", "Thm 3.1, eq. (13)",
                          "√d1 β/||w|| < 1 for all", "fraction", (0.9, math.inf)),
}


def test_every_row_of_notebook_03_in_full():
    cfg = scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False)
    rows = scaling.verdict_rows(_results(), cfg)
    assert [r.id for r in rows] == list(ROWS_03)
    for r in rows:
        claim, source, predicted, quantity, band = ROWS_03[r.id]
        assert (r.claim, r.source, r.predicted, r.quantity) == (claim, source, predicted, quantity), r.id
        assert (r.band_lo, r.band_hi) == pytest.approx(band, nan_ok=True), r.id
    by = {r.id: r for r in rows}
    assert by["ni_exponent_0p3"].rule == "fewer than two replicates; N_i: |<w,M_j>| ≥ 0.5·max"
    assert by["ni_exponent_1"].rule.endswith("; N_i: |<w,M_j>| ≥ 0.5·max")
    assert by["dominant_set_precision"].rule == ("holds if the interval of the precision lies wholly at or above 0.8; "
                                                 "does not hold if wholly below; inconclusive if it straddles 0.8")
    assert by["singleton_neurons"].rule.endswith("inconclusive if it straddles 0.9; constant of Ω taken as 1")
    assert by["offset_alpha_bound"].rule.endswith("; null (untrained weights: share 0.333 [0.061, 0.792])")
    assert by["null_below_band__offset_beta_bound"].rule == "holds when the null's whole 95% interval lies below 0.9"
    thm31 = ("k_poly", "no_memorisation", "lambda_range", "step_window")     # Theorem 3.1's premises, by id
    assert all(r.depends == thm31 for r in rows if r.kind != "premise" and "offset" not in r.id)
    assert by["offset_beta_bound"].depends == (*thm31, "null_below_band__offset_beta_bound")


def test_tracking_needs_two_ratios_and_two_replicates():
    nan_fit = {"final (dominant set)": _fit(0.9, math.nan, math.nan), "init (Def. B.1)": _fit(1.0, 0.9, 1.1)}
    two = scaling.ScalingConfig(ratios=(1.0, 0.5), progress=False)
    rows = {r.id: r for r in scaling.verdict_rows(_results(track=nan_fit), two)}
    assert rows["ni_tracking_final"].verdict == UNTESTED
    assert rows["ni_tracking_final"].rule == "needs two ratios and two replicates"
    assert rows["ni_tracking_init"].verdict == HOLDS                   # two ratios are enough with an interval


@pytest.mark.parametrize("untrained, at_least, verdict", [
    (np.array([2.0]), 0.9, HOLDS),              # one entry, not below 1: Wilson [0, 0.79] lies below 0.9
    (np.array([0.5]), 0.1, FAILS),              # one entry below 1: Wilson [0.21, 1] lies above 0.1
    (np.array([2.0]), stats.binom_ci(0, 1)[1], INCONCLUSIVE),   # the interval's top exactly at the band: not below
    (np.array([0.5]), stats.binom_ci(1, 1)[0], FAILS),          # the interval's bottom exactly at it: in the band
    (np.array([1.0, 1.0]), 0.9, HOLDS),         # exactly 1 is not below 1
    (np.array([]), 0.9, INCONCLUSIVE),          # no untrained entry: nothing shows the null stays below
])
def test_the_null_premise_at_the_edges_of_its_band(untrained, at_least, verdict):
    null, bound = scaling.bound_rows("b", "b", "eq. 13", "< 1", np.array([0.5]), untrained, at_least)
    assert null.verdict == verdict and null.quantity == "fraction" and bound.quantity == "fraction"
    k0, n0 = float((untrained < 1).sum()), untrained.size
    if n0:
        assert null.measured == pytest.approx(k0 / n0)
        assert bound.rule.endswith(f"; null (untrained weights: share {k0 / n0:.3f} "
                                   f"[{null.lo:.3f}, {null.hi:.3f}])")
    else:
        assert math.isnan(null.measured)


def test_a_bound_counts_entries_strictly_below_one():
    _, bound = scaling.bound_rows("b", "b", "eq. 13", "< 1", np.array([1.0, 0.5, 1.5]), np.array([2.0]), 0.9)
    assert bound.measured == pytest.approx(1 / 3)
    _, one = scaling.bound_rows("b", "b", "eq. 13", "< 1", np.array([0.5]), np.array([2.0]), 0.9)
    assert one.measured == 1.0 and (one.source, one.predicted) == ("eq. 13", "< 1")

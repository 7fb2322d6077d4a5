"""Notebook 02's claim modules (lucky, census/grid) on hand-made census grids and results: fits, reports, verdicts."""
import math

import numpy as np
import pytest

from imbalanced_cl import premises, stats
from imbalanced_cl.claims import lucky
from imbalanced_cl.claims.census import grid as census_grid
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, UNTESTED

NAN = float("nan")
DS = np.array([10, 100, 1000])


def _census():
    """A census grid built by hand: E|M_j| = d^1.5 and E|M_j*| = 0.1 d^0.5 (m = d^2), MC |N_i| = c_r d^0.25 per
    replicate; (1 - p2)^(d-1) falls from 0.9 to 0.6 at rho = 0.5 and is 1 at rho = 1."""
    m = np.stack([DS ** 2.0] * 2, 1)
    p_ord = np.stack([DS ** 1.5 / DS ** 2.0] * 2, 1)
    p_lucky = np.stack([0.1 * DS ** 0.5 / DS ** 2.0] * 2, 1)
    rse = np.array([[0.1, 0.1], [0.1, 0.1], [0.9, 0.1]])            # rho = 1: the largest d is unresolved
    Ni = np.stack([np.stack([c * DS ** 0.25 for c in (1.0, 2.0)], -1)] * 2, 1)   # (nd, rho, R)
    p_lucky_mc = np.zeros((3, 2, 2))
    p_lucky_mc[0, 0, 0] = 1e-3
    return {"ds": DS, "rhos": np.array([1.0, 0.5]), "m": m,
            "exact": {"p_ord": p_ord, "p_lucky": p_lucky, "rse_lucky": rse,
                      "paper_B": np.array([[1.0, 0.9], [1.0, 0.8], [1.0, 0.6]]),
                      "B": np.array([[1.0, 0.5], [1.0, 0.2], [1.0, 0.1]])},
            "mc": {"Ni": Ni, "p_lucky": p_lucky_mc}}


def test_census_fits_recover_the_built_exponents_and_drop_unresolved_points():
    fits = census_grid.census_fits(_census(), rse_max=0.3)
    (fl1, fo1, fn1), (fl5, _, _) = fits[1.0], fits[0.5]
    assert fo1.slope == pytest.approx(1.5) and fl5.slope == pytest.approx(0.5)
    assert fl1.n == 2 and fl5.n == 3                                 # the rse = 0.9 point is not fitted
    assert fn1.slope == pytest.approx(0.25) and fn1.lo == pytest.approx(0.25)


def test_census_and_pr_b_reports_read_the_numbers():
    cen = _census()
    cfg = census_grid.CensusConfig(census_ds=tuple(DS.tolist()), census_ratios=(1.0, 0.5))
    lines = census_grid.census_report(cen, census_grid.census_fits(cen, 0.3), cfg)
    assert lines[0].split() == ["rho", "omega1", "fit", "lucky", "omega2", "fit", "ord", "Ni", "claim", "fit", "Ni"]
    assert "rises from" in lines[3] and "at 1 of 3 values of d" in lines[3]
    assert "at 0 of 3 values of d" in lines[4]
    brief = census_grid.pr_b_trend_report(cen)
    assert "falls with d and is at most 0.6" in brief[0] and "is not confirmed here" in brief[0]   # 0.6 is not < 0.5
    assert "ranges 1.00–1.00" in brief[1]


def _results(**kw):
    fits = {1.0: (stats.SlopeFit(NAN, NAN, NAN, NAN, 0), stats.SlopeFit(0.5, 0.4, 0.6, 0, 3),
                  stats.SlopeFit(0.5, 0.45, 0.55, 0, 2)),
            0.5: (stats.SlopeFit(3.0, NAN, NAN, 0, 2), stats.SlopeFit(0.5, 0.4, 0.6, 0, 3),
                  stats.SlopeFit(0.85, 0.8, 0.9, 0, 2))}
    base = {"census": _census(), "census_fits": fits, "t2": {"fit": stats.SlopeFit(1.05, 0.9, 1.15, 0, 2)},
            "lemma32": {"a_ratio": np.array([2.0, 3.0, 0.5]), "b_ratio": np.array([]),
                        "top_hit_major": np.array([0.5, 0.6, 0.55]), "top_hit_minor": np.array([1.0]), "chance": 0.01},
            "workshop": {"gap": (0.2, 0.1, 0.3)}}
    return {**base, **kw}


def _cfg(**kw):
    return lucky.LuckyConfig(census_ds=tuple(DS.tolist()), census_ratios=(1.0, 0.5), progress=False, **kw)


def test_verdict_rows_on_hand_made_results():
    rows = lucky.verdict_rows(_results(), _cfg())
    assert [r.verdict for r in rows] == [
        FAILS, HOLDS, FAILS,          # rho = 1: no finite lucky fit although ω1 = 0.9 > 0; |M_j| ≤ d^1.1;
                                      # |N_i| 0.5 » 0.1
        HOLDS, HOLDS, INCONCLUSIVE,   # rho = 0.5: 3.0 ≥ ω1 = -2.4; 0.5 ≤ ω2 = 1.775;
                                      # N_i [0.8, 0.9] straddles 0.775 + 0.1
        FAILS,                        # Pr[B_i]: (1-p2)^(d-1) = 0.6 at the largest d, a closed form below 0.9
        HOLDS,                        # the census's premise m = d^C_m (by construction)
        HOLDS,                        # T2 - T1 slope [0.9, 1.15] inside 1 ± 0.2
        INCONCLUSIVE, UNTESTED,       # 2 of 3 lucky pairs; no ordinary/lucky pair
        HOLDS,                        # majority hit rate above chance (minority has a single replicate: no row)
        HOLDS]                        # workshop gap above 0
    by = {r.id: r for r in rows}
    assert math.isnan(by["lucky_exponent_1"].measured)
    assert (by["lucky_exponent_0p5"].lo, by["lucky_exponent_0p5"].hi) == (3.0, 3.0)
    assert by["m_poly"].kind == "premise"
    census = [r for r in rows if r.id.endswith(("exponent_1", "exponent_0p5"))]
    assert len(census) == 6 and all(r.depends == ("m_poly",) for r in census)
    assert len({r.id for r in rows}) == len(rows)
    pb = by["pr_b_0p5"]
    # a closed form has no interval: the row shows the value itself, and the rule the exact Pr[B_i] and the smallest d
    assert (pb.measured, pb.lo, pb.hi) == (0.6, 0.6, 0.6) and "d=1000" in pb.rule
    assert "exact Pr[B_i] at d=1000: 0.1" in pb.rule and ": 0.9" in pb.rule
    none = by["lemma32_ordinary_bound"]          # no feature with a lucky neuron: not tested, and says so
    assert (none.rule, none.verdict, none.claim, none.source, none.predicted) == (
        "no feature with a lucky neuron", UNTESTED, "ordinary ≤ C · lucky at T2", "Lemma 3.2(b), eq. (10)",
        "fraction 1")
    assert math.isnan(none.measured) and none.depends == by["t2_minus_t1"].depends


def test_verdict_levels_and_tolerances_come_from_the_config():
    rows = {r.id: r for r in lucky.verdict_rows(_results(), _cfg(pr_b_min=0.5, tol_t2=0.01))}
    assert rows["pr_b_0p5"].verdict == HOLDS and "at or above 0.5" in rows["pr_b_0p5"].rule
    assert rows["t2_minus_t1"].verdict == INCONCLUSIVE   # [0.9, 1.15] straddles 1 ± 0.01


@pytest.mark.parametrize("kw", [{"tol_omega": -0.1}, {"tol_t2": 0.0}, {"pr_b_min": 1.5}, {"forall_min": 0.0},
                                {"rse_max": 0.0}, {"tol_ni_init": "0.1"},
                                {"tol_share": 0.0}])
def test_bad_tolerances_name_the_parameter(kw):
    with pytest.raises(ParameterError, match=list(kw)[0]):
        _cfg(**kw)


def test_the_push_tests_lemma_b1_by_its_effect_on_the_trained_rows_only():
    """Notebook 02's push (issue 49): the trained rows re-judged from the same trainings with 4 × K pairs. A row that
    moves less than its tolerance meets k_poly by its effect (T2 - T1: slope 1.05 [0.9, 1.15] against 1.06 [0.95,
    1.17], a change of 0.01 ± 0.08 inside ±0.2); one that moves more does not (slope 1.6 in the push); the census rows
    and the workshop row are untouched; a share row, whose band has an open end (top hit: above chance), is held to
    tol_share: an unmoved share of interval ±0.17 is not shown within ±0.1 but is within ±0.5; a row untested in both
    runs says its change cannot be shown; no push (a record made before the stage) leaves the rows as they were."""
    cfg, res = _cfg(), _results()
    rows = lucky.verdict_rows(res, cfg)
    assert lucky.with_push(rows, res, None, cfg) is rows
    near = {"n_pairs": premises.push_pairs(cfg.n_pairs), "t2": {"fit": stats.SlopeFit(1.06, 0.95, 1.17, 0, 2)},
            "lemma32": res["lemma32"]}
    by_id = {r.id: r for r in lucky.with_push(rows, res, near, cfg)}
    assert by_id["t2_minus_t1"].met_by_effect == ("k_poly",) and "moved by +0.01" in by_id["t2_minus_t1"].premise
    top = by_id["top_hit_majority"]
    assert top.met_by_effect == () and "moved by +0 [-0.172, +0.172], not shown within ±0.1" in top.premise
    wide = {r.id: r for r in lucky.with_push(rows, res, near, cfg.replace(tol_share=0.5))}["top_hit_majority"]
    assert wide.met_by_effect == ("k_poly",) and "within its tolerance ±0.5: met for this row" in wide.premise
    assert "its change cannot be shown" in by_id["lemma32_ordinary_bound"].premise
    assert all(by_id[r.id] == r for r in rows if "k_poly" not in r.depends)
    far = {**near, "t2": {"fit": stats.SlopeFit(1.6, 1.5, 1.7, 0, 2)}}
    moved = {r.id: r for r in lucky.with_push(rows, res, far, cfg)}["t2_minus_t1"]
    assert moved.met_by_effect == () and "not shown within ±0.2" in moved.premise
    with pytest.raises(ValueError, match="needs re-measuring \\(stage push: measured with K = 7"):
        lucky.with_push(rows, res, {**near, "n_pairs": 7}, cfg)


def test_the_push_trains_with_four_times_the_pairs_and_the_same_seed():
    """measure_push is measure_t2 at push_pairs(cfg) = 4 × K (premises.EFFECTS), all else equal, and says its K."""
    cfg = _cfg(n_pairs=24)
    assert premises.push_pairs(cfg.n_pairs) == 96
    seen = []
    orig = lucky.protocol.measure_t2
    try:
        lucky.protocol.measure_t2 = lambda c: seen.append(c) or {"t2": {}, "lemma32": {}, "regime": None}
        out = lucky.measure_push(cfg)
    finally:
        lucky.protocol.measure_t2 = orig
    assert out["n_pairs"] == 96 and seen == [cfg.replace(n_pairs=96)]


def test_census_rows_read_as_written_on_hand_made_fits():
    """Lemma B.2's census rows from hand-made fits: every row's id, label, prediction, band and verdict, each bound at
    the edge of its tolerance, a lucky fit with no finite expectation (fails where ω1 > 0), the closed-form Pr[B_i]
    row (ρ < 1 only), and the census premise last."""
    from imbalanced_cl import verdict as V
    from imbalanced_cl.claims.census.grid import paper_exponents
    from imbalanced_cl.claims.lucky import verdicts as LVD
    from imbalanced_cl.stats import SlopeFit
    cfg = lucky.LuckyConfig(census_ratios=(1.0, 0.5))
    exps = paper_exponents(cfg.census())
    w1, w2, e = exps[0.5]["lucky"], exps[0.5]["ordinary"], exps[0.5]["Ni"]
    def fit(slope, lo=None, hi=None):
        return SlopeFit(slope, slope if lo is None else lo, slope if hi is None else hi, 0.0, 5)
    nan = float("nan")
    fits = {1.0: (fit(nan, nan, nan), fit(exps[1.0]["ordinary"] + 0.11), fit(exps[1.0]["Ni"] + 0.1)),
            0.5: (fit(w1, nan, nan), fit(w2 - 0.5, w2 - 0.6, w2 + 0.1), fit(e, e - 0.2, e + 0.3))}
    cen = {"ds": np.array([10, 100]), "rhos": [1.0, 0.5],
           "exact": {"paper_B": np.array([[1.0, 0.97], [1.0, 0.93]]), "B": np.array([[1.0, 0.96], [1.0, 0.91]])}}
    rows = LVD.census_rows(cen, fits, cfg)
    by = {r.id: r for r in rows}
    assert [r.id for r in rows] == ["lucky_exponent_1", "ordinary_exponent_1", "ni_init_exponent_1",
                                    "lucky_exponent_0p5", "ordinary_exponent_0p5", "ni_init_exponent_0p5", "pr_b_0p5",
                                    "m_poly"]
    assert all(r.depends == ("m_poly",) for r in rows if r.id != "m_poly" and not r.id.startswith("pr_b"))
    none = by["lucky_exponent_1"]
    assert none.claim == "|M_j*| ≥ Ω(d^ω1), ρ=1.0: exponent of d in E|M_j*|"
    assert none.verdict == (V.FAILS if exps[1.0]["lucky"] > 0 else V.UNTESTED) and math.isnan(none.measured)
    assert (none.band_lo, none.band_hi) == (pytest.approx(exps[1.0]["lucky"] - 0.1), math.inf)
    assert none.rule == "the exact expectation is 0 (a = c1 log d / d ≥ 1) or unresolved on the whole grid"
    lk = by["lucky_exponent_0p5"]                     # no interval: the slope itself, exactly on the bound
    assert (lk.measured, lk.lo, lk.hi, lk.verdict) == (w1, w1, w1, V.HOLDS)
    assert lk.predicted == f"exponent ≥ {w1:.2f}" and lk.rule.startswith("fit of exact E|M_j*| over d; ")
    assert by["ordinary_exponent_1"].verdict == V.FAILS                # 0.11 above the bound: past tol_omega
    assert by["ni_init_exponent_1"].verdict == V.HOLDS                 # 0.1 above: within tol_ni_init
    ordinary = by["ordinary_exponent_0p5"]
    assert (ordinary.claim, ordinary.source, ordinary.predicted) == (
        "|M_j| ≤ O(d^ω2), ρ=0.5: exponent of d in E|M_j|", "Lemma B.2(c)", f"exponent ≤ {w2:.2f}")
    assert ordinary.verdict == V.HOLDS and ordinary.rule.startswith("fit of exact E|M_j| over d; ")
    ni = by["ni_init_exponent_0p5"]
    assert (ni.claim, ni.source, ni.predicted) == (
        "|N_i| ≤ O(d^(1-ρ²(1-γ))) at init, ρ=0.5: exponent of d in |N_i|", "Lemma B.2(d)", f"exponent ≤ {e:.2f}")
    assert ni.verdict == V.INCONCLUSIVE and ni.rule.startswith("MC slope over replicates; ")
    pr = by["pr_b_0p5"]
    assert (pr.claim, pr.source, pr.predicted, pr.quantity) == (
        "Pr[B_i] = (1-p2)^(d-1) = 1 (ρ=0.5): its value at the largest d", "proof of Lemma B.2(c), App. G.3",
        "1 for all d", "fraction")
    assert (pr.measured, pr.lo, pr.hi, pr.verdict) == (0.93, 0.93, 0.93, V.HOLDS)      # pr_b_min 0.9
    assert pr.rule.endswith("; exact Pr[B_i] at d=100: 0.91; (1-p2)^(d-1) at d=10: 0.97")
    assert "closed form (1-p2)^(d-1) at d=100" in pr.rule
    low = LVD.census_rows({**cen, "exact": {**cen["exact"], "paper_B": cen["exact"]["paper_B"] * 0.9}}, fits, cfg)
    assert {r.id: r for r in low}["pr_b_0p5"].verdict == V.FAILS      # 0.837 < 0.9
    premise = by["m_poly"]
    assert (premise.claim, premise.source, premise.predicted, premise.kind, premise.verdict) == (
        "regime: m = d^C_m neurons in the census (C_m = 2 at every d)", "Lemma B.2", "m = d^C_m", "premise", V.HOLDS)
    assert (premise.measured, premise.quantity, premise.band_words) == (2.0, "positive", "holds by construction")
    assert premise.rule == "holds by construction: the census draws m = d^C_m neurons at each d"


def test_the_trained_rows_read_as_written_and_count_their_edges():
    """Notebook 02's rows after the census, as a reader sees them; the counts include their edge (a lucky pair at
    exactly the eq. (9) level, a feature at exactly C), a top-hit share of two features is judged, and its excess is
    over chance (band from 1/m upward)."""
    res = _results()
    res["lemma32"] = {"a_ratio": np.array([1.0, 1.5, 0.5]), "b_ratio": np.array([0.5, 3.0, 9.0]),
                      "top_hit_major": np.array([0.45, 0.5, 0.55]), "top_hit_minor": np.array([0.2, 0.3]),
                      "chance": 0.5}
    rows = {r.id: r for r in lucky.verdict_rows(res, _cfg())}
    assert [(i, r.claim, r.source, r.predicted) for i, r in rows.items() if i in (
        "t2_minus_t1", "lemma32_lucky_level", "lemma32_ordinary_bound", "top_hit_majority", "top_hit_minority",
        "workshop_fig1_gap")] == [
        ("t2_minus_t1", "T2 - T1 ∝ 1/eps_max: log-log slope of T2 - T1 on 1/eps_max", "Thm D.1, eq. (60)", "slope 1"),
        ("lemma32_lucky_level", "lucky neurons reach |<w,M_j>|² ≥ 2(eps_j/eps_max)||w(T1)||² at T2: share of lucky "
         "pairs", "Lemma 3.2(a), eq. (9)", "fraction 1"),
        ("lemma32_ordinary_bound", "ordinary ≤ C · lucky at T2 (C = 3): share of features", "Lemma 3.2(b), eq. (10)",
         "fraction 1"),
        ("top_hit_majority", "the luckiest-at-init neuron is the majority feature's top neuron at T2: share of "
         "features", "Remark 2; Thm D.1(c)", "well above chance"),
        ("top_hit_minority", "the luckiest-at-init neuron is the minority feature's top neuron at T2: share of "
         "features", "Remark 2; Thm D.1(c)", "well above chance"),
        ("workshop_fig1_gap", "majority atoms are learned better than minority ones (Fig. 1): majority − minority "
         "best cos²", "workshop §4, Fig. 1", "majority best cos² > minority")]
    assert rows["t2_minus_t1"].rule.endswith("; T2 rule: ||w||² ≥ 20·||w(T1)||² (eq. 61)")   # t2_factor 0: d = 20
    assert rows["lemma32_lucky_level"].measured == pytest.approx(2 / 3)        # 1.0 counts, 0.5 does not
    assert rows["lemma32_lucky_level"].rule.endswith("; 3 lucky (i,j) pairs")
    assert rows["lemma32_ordinary_bound"].measured == pytest.approx(2 / 3)     # 3.0 = C counts, 9.0 does not
    major = rows["top_hit_majority"]
    assert major.band_lo == 0.5 and major.verdict != HOLDS                    # 0.45-0.55 around chance 0.5
    assert major.rule.startswith("holds if the interval of the excess over chance 1/m lies wholly above 0")
    assert major.rule.endswith(" (share of features; 95% interval on the logit scale)")
    assert rows["top_hit_minority"].measured == pytest.approx(0.25)          # two features are enough to judge
    gap = rows["workshop_fig1_gap"]
    assert gap.rule.startswith("holds if the interval of the majority − minority best cos² lies wholly above 0")
    assert gap.rule.endswith(" (95% interval on Fisher's z scale)") and gap.verdict == HOLDS
    assert "top_hit_minority" not in {r.id for r in lucky.verdict_rows(
        {**res, "lemma32": {**res["lemma32"], "top_hit_minor": np.array([0.3])}}, _cfg())}   # one feature: no row

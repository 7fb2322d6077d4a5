"""Notebook 08's verdict rows on a hand-made grid: each premise row counted over the d's at its edge, each quantity
written out from the paper's statement, each trend word at the edge of its band, and the rows' labels and ids."""
from __future__ import annotations

import math

import numpy as np
import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.claims import scale as S
from imbalanced_cl.claims.scale import verdicts as SV

DS, R = (20, 40, 80), 3


def _point(d: int, **over) -> dict:
    """One grid point that meets every premise at its edge (ratios 1 and 0.5 from ScaleConfig(); R = 3)."""
    p = {"d": d, "q_max": np.float64(0.3),                         # sparsity_max = 0.3: met at equality
         "T1": np.array([[5, 5, 5], [0, 0, 0]]),                   # the last group (rho = 0.5) reached T1 at step 0
         "window": (2, 5),                                          # 3 steps: the least the fit window needs
         "T2": np.array([[0, 4, 9], [1, 1, 1]]), "stage3": True,
         "lucky_pairs": np.array([[0, 1, 2], [0, 0, 0]]),          # 2 replicates of the first group have lucky pairs
         "m": 40, "dominant": np.array([3.0, 4.0, 5.0]),            # alpha m = 0.1 * 40 = 4 = mean dominant
         "rate_ratio": np.full(R, 2.0 + 0.4 * math.log2(d / 20)),   # gap 0, 2, 4 tolerances: 2 per doubling
         "lucky_frac": np.array([[1.0, 0.9, 0.8], [0.0, 0.0, 0.0]]),
         "alignment": np.array([0.1, 0.2, 0.3]),
         "Ni": np.stack([np.full(R, 3.0 * d ** 0.0), np.full(R, 3.0 * d ** 0.75)]),   # |N_i| = 3 d^(1 - rho^2)
         "share": np.array([1.0, 0.9, 0.95]), "gain": np.array([0.5, 0.4, 0.6])}
    p.update(over)
    return p


def _res(over_at: dict | None = None) -> S.ScaleResult:
    """A ScaleResult over DS; over_at = {d: {key: value}} changes one point."""
    cfg = S.ScaleConfig()
    return S.ScaleResult(cfg, [_point(d, **(over_at or {}).get(d, {})) for d in cfg.ds])


PREMISE_IDS = ["sparse_data", "stage_reached__t1", "stage_reached__stage1_window", "stage_reached__t2", "convergence",
               "lucky_exist", "alpha_bound_extended"]


def test_every_premise_row_holds_at_its_edge_with_its_claim_and_source():
    rows = SV.premise_rows(_res())
    assert [r.id for r in rows] == PREMISE_IDS
    assert all(r.kind == V.PREMISE_KIND and r.verdict == V.HOLDS and r.measured == 1.0 for r in rows)
    assert all(r.predicted == "all 3 d's" and r.claim.endswith(": share of d's that meet it") for r in rows)
    assert [r.claim.split(": share")[0] for r in rows] == [
        "data sparse at every d (largest q_j = 1 - (1 - p_j)^L <= 0.3, Def. 3.1)",
        "T1 reached in every replicate at every d (ρ=0.5)",
        "Stage-1 fit window [fit_start, T1) holds >= 3 steps at every d",
        "T2 reached in every replicate at every d",
        "Stage 3 reached at every d (loss fell by >= 0.1 of its start and changed by < 0.02 of it over 0.5 τ_d, "
        "before t3_cap τ_d)",
        "lucky pairs in >= 2 replicates at every d (ρ=1)",
        "Remark 1: alpha m <= minority-dominant neurons at T_a at every d (mean over replicates)"]
    assert rows[0].source == "Def. 3.1" and rows[-1].source.startswith("Remark 1")


# one point, just past each premise's edge: exactly that premise fails, at one d of three
JUST_PAST = {
    "sparse_data": {"q_max": np.float64(0.3001)},
    "stage_reached__t1": {"T1": np.array([[-1, -1, -1], [0, -1, 0]])},   # the first group is not this row's
    "stage_reached__stage1_window": {"window": (2, 4)},
    "stage_reached__t2": {"T2": np.array([[0, 4, 9], [1, -1, 1]])},
    "convergence": {"stage3": False},
    "lucky_exist": {"lucky_pairs": np.array([[0, 0, 2], [5, 5, 5]])},  # only the first group counts
    "alpha_bound_extended": {"dominant": np.array([3.0, 4.0, 4.997])},
}


@pytest.mark.parametrize("pid", PREMISE_IDS)
def test_a_premise_failing_at_one_d_alone_fails_its_row_with_the_count(pid):
    rows = {r.id: r for r in SV.premise_rows(_res({40: JUST_PAST[pid]}))}
    assert rows[pid].verdict == V.FAILS and rows[pid].measured == pytest.approx(2 / 3)
    assert rows[pid].rule == "holds when all 3 d's meet it (2 do)"
    assert all(r.verdict == V.HOLDS for k, r in rows.items() if k != pid)


@pytest.mark.parametrize("pid", PREMISE_IDS)
def test_a_premise_failing_alone_makes_exactly_its_dependent_rows_not_comparable(pid):
    table = V.gate(SV.verdict_rows(_res({40: JUST_PAST[pid]})), "08_scale")
    for r in table:
        if r.kind == V.PREMISE_KIND:
            continue
        assert (r.verdict == V.NOT_COMPARABLE) == (pid in r.depends), (pid, r.id, r.verdict)


def _quantities(over_at=None):
    return {q.key: q for q in SV.quantities(_res(over_at))}


def test_each_quantity_is_the_papers_statement_with_its_band_and_premises():
    q = _quantities()
    assert list(q) == ["rate_ratio", "lucky_fraction", "alignment", "Ni_exponent_1", "Ni_exponent_0.5",
                       "Ni_tracking", "mask_share", "pruning_gain"]
    ds, mid = np.array(DS, float), np.sqrt([20 * 40, 40 * 80])
    later, pruned = SV.LATER, (*SV.LATER, "alpha_bound_extended")
    want = {  # key: (claim, source, predicted, at, target, tol, one_sided, depends)
        "rate_ratio": ("Stage-1 majority/minority rate ratio (ρ=0.5)", "Lemma 3.1, eq. (7)", "eps_max/eps_min = 2",
                       ds, 2.0, 0.2, False, ("sparse_data", SV.STAGE_T1, SV.FIT_WINDOW)),
        "lucky_fraction": ("lucky pairs reaching eq. (9) at T2 (ρ=1)", "Lemma 3.2(a), eq. (9)", "fraction 1", ds,
                           1.0, 0.1, False, ("sparse_data", SV.STAGE_T2, "lucky_exist")),
        "alignment": ("majority − minority best cos² at T_a (ρ=0.5)", "workshop §4, Fig. 1", "> 0.05", ds, 0.05,
                      0.05, True, later),
        "Ni_exponent_1": ("local exponent of |N_i| in d at T_a (ρ=1)", "Thm 3.1, eq. (14)", "1 − ρ² = 0", mid, 0.0,
                          0.2, False, later),
        "Ni_exponent_0.5": ("local exponent of |N_i| in d at T_a (ρ=0.5)", "Thm 3.1, eq. (14)", "1 − ρ² = 0.75", mid,
                            0.75, 0.2, False, later),
        "Ni_tracking": ("slope of the local |N_i| exponent on 1 − ρ²", "claim 3; eq. (14) as a scaling law", "1", mid,
                        1.0, 0.3, False, later),
        "mask_share": ("share of the mask on minority-dominant neurons at T_a (α=0.1)", "Remark 1; Thm F.1", "1", ds,
                       1.0, 0.1, False, pruned),
        "pruning_gain": ("pruning gain in A_j*/A_maj after the branch (ρ=0.5)", "Thm 3.1 eq. (13) vs Thm 3.2(c)",
                         "1 − ρ = 0.5", ds, 0.5, 0.1, False, pruned),
    }
    for key, (claim, source, predicted, at, target, tol, one_sided, depends) in want.items():
        got = q[key]
        assert (got.claim, got.source, got.predicted, got.one_sided, tuple(got.depends)) == (
            claim, source, predicted, one_sided, depends), key
        np.testing.assert_allclose(got.at, at, err_msg=key)
        np.testing.assert_allclose(got.target, np.full(len(at), target), err_msg=key)
        assert got.tol == pytest.approx(tol), key


def test_each_quantity_reads_its_own_measurement_over_the_grid():
    q = _quantities()
    np.testing.assert_allclose(q["rate_ratio"].x, np.array([[2.0, 2.4, 2.8]] * 3))
    np.testing.assert_allclose(q["lucky_fraction"].x, np.array([[1.0, 0.9, 0.8]] * 3).T)     # the first group's
    np.testing.assert_allclose(q["alignment"].x, np.array([[0.1, 0.2, 0.3]] * 3).T)
    np.testing.assert_allclose(q["mask_share"].x, np.array([[1.0, 0.9, 0.95]] * 3).T)
    np.testing.assert_allclose(q["pruning_gain"].x, np.array([[0.5, 0.4, 0.6]] * 3).T)
    # |N_i| = 3 d^(1 - rho^2) at every d: the local exponents are exactly 0 and 0.75, and their slope on 1 - rho^2 is 1
    np.testing.assert_allclose(q["Ni_exponent_1"].x, np.zeros((R, 2)), atol=1e-12)
    np.testing.assert_allclose(q["Ni_exponent_0.5"].x, np.full((R, 2), 0.75))
    np.testing.assert_allclose(q["Ni_tracking"].x, np.ones((R, 2)))
    # a local exponent is the slope between neighbouring d's only: doubling |N_i| at d = 80 moves the second alone
    q2 = _quantities({80: {"Ni": np.stack([np.full(R, 6.0), np.full(R, 6.0 * 80 ** 0.75)])}})
    np.testing.assert_allclose(q2["Ni_exponent_1"].x, np.array([[0.0, 1.0]] * R), atol=1e-12)


def test_a_grid_of_one_d_has_no_local_exponents():
    one = S.ScaleResult.__new__(S.ScaleResult)
    one.cfg, one.points, one.seconds = _OneD(), [_point(20)], 0.0
    keys = [q.key for q in SV.quantities(one)]
    assert keys == ["rate_ratio", "lucky_fraction", "alignment", "mask_share", "pruning_gain"]


class _OneD:
    """A config stand-in with one d (ScaleConfig refuses it; quantities must still not fit exponents)."""

    def __getattr__(self, name):
        return (20,) if name == "ds" else getattr(S.ScaleConfig(), name)


def test_one_ratio_has_exponents_but_no_tracking_slope():
    one = S.ScaleResult.__new__(S.ScaleResult)
    one.cfg = _OneRatio()
    one.points = [_point(d, Ni=_point(d)["Ni"][1:], lucky_frac=_point(d)["lucky_frac"][1:]) for d in DS]
    one.seconds = 0.0
    keys = [q.key for q in SV.quantities(one)]
    assert "Ni_exponent_0.5" in keys and "Ni_tracking" not in keys and "Ni_exponent_1" not in keys


def test_a_grid_of_two_d_has_one_local_exponent_per_ratio():
    two = S.ScaleResult.__new__(S.ScaleResult)
    two.cfg, two.points, two.seconds = _TwoD(), [_point(20), _point(40)], 0.0
    q = {q.key: q for q in SV.quantities(two)}
    assert q["Ni_exponent_0.5"].x.shape == (R, 1) and q["Ni_tracking"].x.shape == (R, 1)
    np.testing.assert_allclose(q["Ni_exponent_0.5"].x, 0.75)


class _TwoD:
    """A config stand-in with two d's."""

    def __getattr__(self, name):
        return (20, 40) if name == "ds" else getattr(S.ScaleConfig(), name)


def test_premise_rows_read_the_smallest_ratio_as_the_last_of_three_groups():
    cfg = S.ScaleConfig(ratios=(1.0, 0.75, 0.5))
    t1 = np.array([[0, 0, 0], [-1, -1, -1], [0, 0, 0]])        # the middle group never reached T1: not this row's
    res = S.ScaleResult(cfg, [_point(d, T1=t1) for d in cfg.ds])
    row = next(r for r in SV.premise_rows(res) if r.id == "stage_reached__t1")
    assert row.verdict == V.HOLDS and "(ρ=0.5)" in row.claim
    res.points[1]["T1"] = np.array([[0, 0, 0], [0, 0, 0], [0, -1, 0]])
    assert next(r for r in SV.premise_rows(res) if r.id == "stage_reached__t1").verdict == V.FAILS


class _OneRatio:
    """A config stand-in with the ratio 0.5 alone."""

    def __getattr__(self, name):
        if name in ("ratios", "groups"):
            return [0.5]
        return getattr(S.ScaleConfig(), name)


# ---- the trend rule at its edges -------------------------------------------------------------------------------
AT = np.array([20.0, 40.0, 80.0])


def _slopes(*per_replicate):
    """Gaps (R, 3) in tolerance units with the given exact slopes per doubling, starting at 10 (far outside)."""
    return np.array([[10.0, 10.0 + s, 10.0 + 2 * s] for s in per_replicate])


def _quantity(gaps, one_sided=False):
    gaps = np.asarray(gaps, float)
    x = 1.0 + 0.1 * gaps if not one_sided else 1.0 - 0.1 * gaps
    return SV.Quantity("q", "toy", "none", "1", AT, x, np.ones(3), 0.1, one_sided)


def _centred(slope, half):
    """Two replicate slopes whose 95% interval is slope ± half (t(1) sd / sqrt 2 = half)."""
    d = half / 12.706204736174707
    return _slopes(slope - d, slope + d)


# Each word at the edge of its band: the smallest slope of interest set exactly at the interval's end (the rule is
# closed there), then a hair beyond it, where the interval straddles the edge and the trend is inconclusive.
EDGES = {  # case: (centre, half-width, the word, the edge read off the fit)
    "closes": (-1.0, 0.75, S.CLOSES, lambda f: -f.hi),
    "stays, low end": (-0.01, 0.25, S.STAYS, lambda f: -f.lo),
    "stays, high end": (0.01, 0.25, S.STAYS, lambda f: f.hi),
    "grows": (1.0, 0.75, S.GROWS, lambda f: f.lo),
}


@pytest.mark.parametrize("case", list(EDGES))
def test_each_trend_word_at_the_edge_of_its_band(case):
    centre, half, word, edge = EDGES[case]
    q = _quantity(_centred(centre, half))
    fit = SV.trend_slope(AT, SV.oriented(q))            # the fit judge_trend makes, to the last bit
    assert (fit.lo, fit.hi) == pytest.approx((centre - half, centre + half))
    s = edge(fit)
    assert s == pytest.approx(0.25 + abs(centre) if word == S.STAYS else 0.25)
    got, _, (verdict, rule) = SV.judge_trend(q, s)
    assert got == word and verdict == S.TREND_VERDICT[word]
    beyond = s * (1 - 1e-9) if word == S.STAYS else s * (1 + 1e-9)
    got, _, (verdict, _) = SV.judge_trend(q, beyond)
    assert got == S.TREND_INCONCLUSIVE and verdict == V.INCONCLUSIVE
    assert rule.startswith(f"slope over log2 d of the gap in tolerance units (+ = away from the prediction): closes "
                           f"if its 95% interval lies below -{s:g} per doubling, stays if inside ±{s:g}, grows if "
                           f"above +{s:g}")


def test_the_row_band_is_the_closing_side_and_none_for_no_gap():
    _, _, (_, rule) = SV.judge_trend(_quantity(_centred(-1.0, 0.1)), 0.25)
    assert rule.band == (-math.inf, -0.25)
    _, _, (_, rule) = SV.judge_trend(_quantity(np.zeros((2, 3))), 0.25)
    assert all(math.isnan(b) for b in rule.band)
    assert rule.endswith("holds = closes or no gap at any d; does not hold = stays, grows or overshoots")


def test_one_replicate_is_not_tested_with_the_reason():
    word, fit, (verdict, rule) = SV.judge_trend(_quantity(_slopes(-2.0)), 0.25)
    assert word == S.TREND_INCONCLUSIVE and verdict == V.UNTESTED and fit.n == 1
    assert rule.startswith("fewer than 2 replicates with 2 grid points: slope over log2 d")


def _exact(gaps, one_sided=False):
    """A Quantity with identical replicates (zero-width intervals) at these gaps, exact in binary: tol 0.5."""
    x = 1.0 + 0.5 * np.array([gaps, gaps], float)
    return SV.Quantity("q", "toy", "none", "1", AT, x, np.ones(3), 0.5, one_sided)


@pytest.mark.parametrize("gaps, word", [
    ([0.0, 0.0, 0.0], S.NO_GAP), ([0.0, 2.0, 0.5], S.NO_GAP),          # one-sided: met at every d (x >= target)
    ([0.0, -1e-6, 0.0], S.STAYS),                                     # short by a hair at one d
])
def test_no_gap_for_a_one_sided_claim_starts_at_zero_shortfall(gaps, word):
    assert SV.judge_trend(_exact(gaps, one_sided=True), 0.25)[0] == word


@pytest.mark.parametrize("gaps, word", [
    ([1.0, -1.0, 1.0], S.NO_GAP),                                     # every d inside one tolerance, at its edges
    ([1.0, -1.0 - 1e-6, 1.0], S.STAYS), ([1.0 + 1e-6, 1.0, 1.0], S.STAYS),
])
def test_no_gap_for_a_two_sided_claim_is_every_interval_inside_one_tolerance(gaps, word):
    assert SV.judge_trend(_exact(gaps), 0.25)[0] == word


@pytest.mark.parametrize("gaps, word", [
    ([1.5, 0.0, -1.5], S.OVERSHOOTS), ([-1.5, 0.0, 1.5], S.OVERSHOOTS),   # from above to below, and back
    ([1.0, 0.0, -1.5], S.GROWS), ([1.5, 0.0, -1.0], S.CLOSES),            # an end exactly at the band: no overshoot
    ([-1.5, 0.0, 1.0], S.CLOSES), ([-1.0, 0.0, 1.5], S.GROWS),
])
def test_overshoot_needs_the_first_d_outside_on_one_side_and_the_last_on_the_other(gaps, word):
    assert SV.judge_trend(_exact(gaps), 0.25)[0] == word


def test_overshoot_on_a_grid_of_two_d():
    q = SV.Quantity("q", "toy", "none", "1", AT[:2], 1.0 + 0.5 * np.array([[1.5, -1.5]] * 2), np.ones(2), 0.5)
    assert SV.judge_trend(q, 0.25)[0] == S.OVERSHOOTS


def test_overshoot_is_read_at_the_ends_even_when_a_middle_d_has_no_interval():
    # the middle d has one finite replicate (no interval there); the ends overshoot, so the word must not need it
    x = 1.0 + 0.5 * np.array([[1.5, 0.0, -1.5], [1.5, np.nan, -1.5]])
    q = SV.Quantity("q", "toy", "none", "1", AT, x, np.ones(3), 0.5)
    assert SV.judge_trend(q, 0.25)[0] == S.OVERSHOOTS


def test_no_gap_reads_the_lower_end_of_each_interval():
    # at d = 20 the mean gap's interval is [-1.2, 0.8]: its lower end lies outside one tolerance, so there is a gap
    h = 1.0 / 12.706204736174707                              # two replicates: t(1) sd / sqrt 2 = 1
    gaps = np.array([[-0.2 - h, 0.0, 0.0], [-0.2 + h, 0.0, 0.0]])
    q = SV.Quantity("q", "toy", "none", "1", AT, 1.0 + 0.5 * gaps, np.ones(3), 0.5)
    assert q.per_d()[0][6:] == pytest.approx((-1.2, 0.8))
    assert SV.judge_trend(q, 0.25)[0] != S.NO_GAP


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_the_side_of_the_gap_is_the_mean_over_the_ds_of_each_ds_mean():
    # d-means 1, -2 (the third d has none): their mean -0.5 flips the sign; the mean of all entries (0.25) would not
    g = np.array([[1.0, -2.0, np.nan], [1.0, np.nan, np.nan], [1.0, np.nan, np.nan]])
    np.testing.assert_allclose(SV.oriented(_exact_gaps(g)), -g)
    zero = np.array([[-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]])     # a mean of exactly 0: the sign is kept
    np.testing.assert_allclose(SV.oriented(_exact_gaps(zero)), zero)


def _exact_gaps(g):
    """A two-sided Quantity whose gaps are exactly g (tol 0.5, target 1)."""
    return SV.Quantity("q", "toy", "none", "1", AT, 1.0 + 0.5 * np.asarray(g, float), np.ones(3), 0.5)


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_oriented_gap_points_away_from_the_prediction():
    g = np.array([[-3.0, -2.0, -1.0], [-2.0, -1.0, 0.0]])
    np.testing.assert_allclose(SV.oriented(_quantity(g)), -g)         # below the prediction: flipped
    np.testing.assert_allclose(SV.oriented(_quantity(-g)), -g)        # above: kept
    np.testing.assert_allclose(SV.oriented(_quantity(g, one_sided=True)), g)    # the shortfall, whatever its side
    with_nan = np.array([[np.nan, -2.0, -1.0]])
    np.testing.assert_allclose(SV.oriented(_quantity(with_nan)), -with_nan)     # NaN ignored when reading the side
    all_nan = np.full((1, 3), np.nan)
    assert np.isnan(SV.oriented(_quantity(all_nan))).all()


def test_trend_slope_skips_a_replicate_with_fewer_than_two_finite_points_or_one_d():
    G = np.array([[0.0, 1.0, 2.0], [np.nan, np.nan, 5.0], [0.0, 2.0, 4.0], [np.nan] * 3])
    fit = SV.trend_slope(AT, G)
    assert fit.n == 2 and fit.slope == pytest.approx(1.5)
    same_d = SV.trend_slope(np.array([20.0, 20.0, 20.0]), G)
    assert same_d.n == 0 and math.isnan(same_d.slope)
    # a slope per doubling: the gap 0, 1, 2 over d = 20, 40, 80 is exactly 1 per doubling whatever the base d
    assert SV.trend_slope(np.array([5.0, 10.0, 20.0]), G[:1]).slope == pytest.approx(1.0)


def test_per_d_gives_the_mean_interval_and_its_gap_in_tolerance_units():
    x = np.array([[1.1, 1.3, 0.9], [1.3, 1.5, 0.9]])
    q = SV.Quantity("q", "toy", "none", "1", AT, x, np.ones(3), 0.1)
    rows = q.per_d()
    d, m, lo, hi, target, g, glo, ghi = rows[0]
    h = 12.706204736174707 * math.sqrt(0.02) / math.sqrt(2)          # sd of (1.1, 1.3) = 0.1414
    assert (d, m, target) == pytest.approx((20.0, 1.2, 1.0))
    assert (lo, hi) == pytest.approx((1.2 - h, 1.2 + h))
    assert (g, glo, ghi) == pytest.approx((2.0, (0.2 - h) / 0.1, (0.2 + h) / 0.1))
    assert rows[2][1:4] == pytest.approx((0.9, 0.9, 0.9))


# ---- the rows ----------------------------------------------------------------------------------------------------
def test_each_row_names_its_quantity_and_the_slope_it_shows_with_id_band_and_premises():
    res = _res()
    rows = SV.verdict_rows(res)
    assert [r.id for r in rows] == [*PREMISE_IDS, "rate_ratio", "lucky_fraction", "alignment", "ni_exponent_1",
                                    "ni_exponent_0p5", "ni_tracking", "mask_share", "pruning_gain"]
    qs = SV.quantities(res)
    for r, q in zip(rows[len(PREMISE_IDS):], qs, strict=True):
        word, fit, (verdict, rule) = SV.judge_trend(q, 0.25)
        assert r.claim == f"{q.claim}: {SV.GAP_LABEL}"
        assert r.predicted == f"{q.predicted} at every d; the gap's slope ≤ −0.25 per doubling of d"
        assert r.source == q.source and r.depends == tuple(q.depends) and r.kind == "paper"
        assert (r.verdict, r.rule) == (verdict, f"{word}: {rule}")
        assert (r.measured, r.lo, r.hi, r.n) == pytest.approx((fit.slope, fit.lo, fit.hi, fit.n), nan_ok=True)
        assert r.band_words == ("holds: no gap at any d (every d's interval inside the quantity's band)"
                                if word == S.NO_GAP else "")
    rr = rows[len(PREMISE_IDS)]
    assert rr.rule.startswith(S.GROWS + ": ")             # the rate ratio 2, 4, 8 runs away from 2
    assert (rr.band_lo, rr.band_hi) == (-math.inf, -0.25)


def test_rows_use_the_given_smallest_slope_of_interest():
    res = _res()
    r = next(r for r in SV.verdict_rows(res, res.cfg.replace(trend_sesoi=5.0)) if r.id == "rate_ratio")
    assert r.predicted.endswith("the gap's slope ≤ −5 per doubling of d")
    assert (r.band_lo, r.band_hi) == (-math.inf, -5.0)
    assert r.rule.startswith(S.STAYS + ": ")            # 2 per doubling, exactly: grows past 0.25, stays inside ±5


def test_an_inconclusive_row_says_how_many_replicates_would_settle_it():
    # rate ratios at d = 80 of 2.8, 2.0, 3.6: gaps 4, 0, 8 -> slopes 2, 0, 4 per doubling, interval 2 ± t(2) 2/sqrt 3
    res = _res({80: {"rate_ratio": np.array([2.8, 2.0, 3.6])}})
    r = next(r for r in SV.verdict_rows(res) if r.id == "rate_ratio")
    h = 4.302652729911275 * 2 / math.sqrt(3)
    assert r.verdict == V.INCONCLUSIVE and (r.measured, r.lo, r.hi) == pytest.approx((2.0, 2.0 - h, 2.0 + h))
    assert r.n_needed == math.ceil(3 * (h / 0.25) ** 2)

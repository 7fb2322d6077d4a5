"""Notebook 04 (claims.pruning): config validation, feature statistics, rates, mechanism, census, verdict rows."""
from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from imbalanced_cl.claims import pruning as pa
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.sim.train import train
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, PARTLY, UNTESTED
from imbalanced_cl import stats

TINY = dict(d=4, d1=8, L=2, m=6, n_pairs=16, R=2, record_every=5, progress=False, vanilla_steps=20,
            prune_steps=20, rate_window=10, top_k=2, alpha_grid=(0.2, 0.5), alpha_main=0.2,
            eps_min_grid=(0.5, 1.0))


@pytest.mark.parametrize("field,value", [
    ("alpha_grid", (0.1, 1.0)), ("alpha_grid", (0.0,)), ("alpha_grid", ()), ("alpha_main", 0.0),
    ("alpha_main", 1.2), ("eps_min_grid", (0.5, 1.5)), ("rate_window", 100), ("rate_window", 1),
    ("vanilla_steps", 0), ("top_k", 7), ("tol_slope", (0.5, 0.2)), ("tol_slope", 0.0), ("tol_factor", (3.0,)),
    ("tol_factor", 1.0),
    ("cos_threshold", 0.0), ("degrade_tol", 1.0), ("n_minority", 0), ("prune_alpha", 1.0),
    ("mask_control", "yes"), ("effect_tol", 0.0), ("effect_tol", 1.0), ("prune_mask", "smallest"),
    ("prune_schedule", "once"),
])
def test_config_rejects_bad_values_naming_the_parameter(field, value):
    with pytest.raises(ParameterError, match=field):
        pa.PruningConfig(**{**TINY, field: value})


def test_config_from_namespace_and_protocol_configs():
    cfg = pa.PruningConfig.from_namespace({**TINY, "alpha_grid": [0.2, 0.5]})
    assert cfg.alpha_grid == (0.2, 0.5)
    v = cfg.vanilla()
    assert (v.steps, v.prune_alpha) == (20, 0.0)
    b = cfg.branch(0.3, "literal")
    assert (b.steps, b.prune_alpha, b.prune_start, b.prune_backward) == (40, 0.3, 20, "literal")
    s = cfg.from_start(0.3)
    assert (s.steps, s.prune_start) == (40, 0)


def test_feature_statistics_on_constructed_weights():
    M = torch.eye(5, 3).unsqueeze(0)                     # features = first 3 coordinates
    W = torch.tensor([[[1.0, 0.0, 0.0, 0.0, 0.0],        # pure feature 0
                       [0.6, 0.8, 0.0, 0.0, 0.0],        # mixed 0/1 (N_i = {0, 1})
                       [0.0, 0.0, 0.2, 1.0, 0.0],        # weak feature 2 (cos ~ 0.196)
                       [0.0, 0.0, 0.0, 0.0, 1.0]]])      # no feature
    cfg = pa.PruningConfig(d=3, d1=5, m=4, n_minority=1, top_k=1, **{k: v for k, v in TINY.items()
                                                                      if k not in ("d", "d1", "m", "top_k")})
    assert pa.aligned_counts(W, M, 0.3).tolist() == [[2.0, 1.0, 0.0]]
    torch.testing.assert_close(pa.max_cosine(W, M), torch.tensor([[1.0, 0.8, 0.2 / math.sqrt(1.04)]]))
    # neuron 3 has all-zero coefficients: every feature ties at 0, so N_i is all features, not a single one
    assert pa.single_feature_counts(W, M, 0.5).tolist() == [[1.0, 0.0, 1.0]]
    A = pa.amplitudes(W, M)
    torch.testing.assert_close(A, torch.tensor([[1.0, 0.8, 0.2]]))
    torch.testing.assert_close(pa.amplitude_ratio(W, M, cfg), torch.tensor([0.2 / 0.9]))
    assert pa.minority_index(cfg) == [2]


def test_gap_by_feature_means():
    gap = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    S = torch.tensor([[[1, 0], [1, 1], [0, 0], [0, 1]]], dtype=torch.bool)
    w, wo = pa.gap_by_feature(gap, S)
    torch.testing.assert_close(w, torch.tensor([[1.5, 3.0]]))
    torch.testing.assert_close(wo, torch.tensor([[3.5, 2.0]]))


def test_degradation_threshold():
    maj = torch.tensor([[1.0, 0.95, 0.8, 0.5], [1.0, 1.0, 1.0, 1.0]])
    thr = pa.degradation_threshold([0.1, 0.2, 0.3, 0.4], maj, torch.tensor([1.0, 1.0]), 0.1)
    assert thr[0] == pytest.approx(0.3) and math.isnan(float(thr[1]))


@pytest.fixture(scope="module")
def tiny_runs():
    cfg = pa.PruningConfig(**TINY)
    base = train(cfg.vanilla())
    return cfg, base, pa.run_branches(cfg, [0.5], base)


def test_excess_growth_is_zero_against_itself_and_finite_under_pruning(tiny_runs):
    cfg, base, runs = tiny_runs
    mi, ma = pa.excess_growth(runs[0.0], runs[0.0], cfg)
    assert torch.all(mi == 0) and torch.all(ma == 0)
    mi, ma = pa.excess_growth(runs[0.5], runs[0.0], cfg)
    assert mi.shape == (cfg.R,) and torch.isfinite(mi).all() and torch.isfinite(ma).all()
    assert not torch.equal(runs[0.5].W, runs[0.0].W)


def test_mechanism_and_mask_census_shapes_and_ranges(tiny_runs):
    cfg, base, _ = tiny_runs
    mech = pa.mechanism(base, 0.5)
    assert mech["rise_with"].shape == (cfg.R, cfg.d)
    assert int((mech["mask"] == 0).sum()) == cfg.R * 3
    assert torch.all(mech["gap_full"] > 0) and torch.all(mech["gap_full"] < 1)
    none = pa.positive_gap(base.W, base.bias, base, None)
    torch.testing.assert_close(none, mech["gap_full"])
    cen = pa.mask_census(base, 0.5, cfg)
    for key in ("minority_aligned", "minority_dominant", "dead", "lucky_init", "lucky_init_minority"):
        assert cen[key].shape == (cfg.R,) and torch.all((cen[key] >= 0) & (cen[key] <= 1)), key
    assert torch.equal(cen["pruned"], mech["mask"] == 0)


def test_mask_persistence_is_one_on_unchanged_weights(tiny_runs):
    cfg, base, _ = tiny_runs
    assert torch.all(pa.mask_persistence(base, cfg, 0.5, base.W) == 1)


def test_t5_elapsed_matches_formula():
    cfg = pa.PruningConfig(**{**TINY, "d": 20, "d1": 40, "m": 10}, eps_min=0.5)
    want = (2.0 - 1.0) * 20 / (cfg.lr * 0.1 * 0.25 * math.log(math.log(20)))
    assert pa.t5_elapsed(cfg, 0.1) == pytest.approx(want)




# ---------------------------------------------------------------- verdict rows (notebook 04)

def _results(cfg, alphas=(0.1, 0.2, 0.4), slope=1.0, R=3):
    """Hand-made Results: minority excess c * alpha^slope (c differs per replicate), majority excess a tenth of it,
    A_j*/A_maj 0.5 in the control and 0.6 when pruned, everything else chosen so each row has a known answer."""
    alphas = [float(a) for a in alphas]
    a = torch.tensor(alphas)
    c = torch.tensor([1.0, 1.1, 0.9]).unsqueeze(-1)
    mino = c * a ** slope                                           # (R, k)
    nan = torch.full((R,), float("nan"))                            # what no row reads
    feats = {k: pa.FeatureStats(aligned=pa.Split(torch.full((R,), 2.0 + (k > 0)), torch.full((R,), 5.0)),
                                max_cosine=pa.Split(nan, nan), amplitude=pa.Split(nan, nan),
                                single_feature=pa.Split(torch.full((R,), 3.0), torch.zeros(R)))
             for k in [0.0] + alphas}
    exc = pa.Excess(minority=mino, majority=mino / 10, slope=stats.loglog_slope_ci(a, mino),
                    k_main=pa.main_index(alphas, cfg), ratio_main=torch.tensor([10.0, 11.0, 9.0]))
    xr = torch.tensor([0.3, 0.6, 1.0])
    sweep = pa.Sweep(eps=[0.3, 0.6, 1.0], xr=xr, ar_ctl=xr.expand(R, 3) * c, ar_pr=torch.ones(R, 3) * c,
                     exc=xr.pow(2) * c, slope_ctl=(nan,) * 3, slope_pr=(nan,) * 3, slope_exc=(nan,) * 3, masks={})
    deg = pa.Degradation(A_maj=torch.ones(R, len(alphas)), A_maj0=torch.ones(R), N_maj=torch.ones(R, len(alphas)),
                         N_maj0=torch.ones(R), thr_A=nan, thr_N=nan, bound=torch.full((R,), 0.15))
    pruned = torch.tensor([0.6, 0.62, 0.58])
    ratios = pa.FinalRatios(by_alpha={0.0: torch.full((R,), 0.5), **{x: pruned for x in alphas}}, faithful=pruned,
                            literal=nan, from_start=torch.tensor([0.4, 0.42, 0.38]))
    return pa.Results(alphas, feats, exc, torch.tensor([0.01, 0.02, 0.015]), torch.ones(R), deg, ratios, sweep)


def test_verdict_rows_on_hand_made_results():
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2, "d": 10, "d1": 20, "m": 20})
    rows = pa.verdict_rows(_results(cfg), cfg)
    assert len({r.claim for r in rows}) == len(rows) == len({r.id for r in rows})
    by = {r.id: r for r in rows}
    assert all(by[i].verdict == UNTESTED for i in ("gain_oracle_lucky", "gain_oracle_dominant",   # no oracle arms
                                                    "control_magnitude_vs_random", "control_dynamic_vs_static"))
    # excess at alpha_main > 0
    assert by["excess_rate_positive"].verdict == HOLDS and by["excess_rate_positive"].measured == pytest.approx(0.2)
    # slope 1 in alpha
    assert by["excess_rate_alpha_slope"].verdict == HOLDS
    assert by["excess_rate_alpha_slope"].measured == pytest.approx(1.0)
    # slope 2 in eps
    assert by["excess_rate_eps_slope"].verdict == HOLDS and by["excess_rate_eps_slope"].measured == pytest.approx(2.0)
    # ratio about d = 10
    assert by["excess_ratio_d"].verdict == HOLDS and by["excess_ratio_d"].measured == pytest.approx(10.0)
    assert by["ratio_slope_vanilla"].measured == pytest.approx(1.0)
    assert by["ratio_slope_pruned"].measured == pytest.approx(0.0, abs=1e-6)
    # pruning raises the ratio
    assert by["gain_main"].measured == pytest.approx(0.1) and by["gain_main"].verdict == HOLDS
    # one more aligned neuron
    assert by["aligned_neurons_gain"].measured == pytest.approx(1.0) and by["aligned_neurons_gain"].verdict == HOLDS
    # 3 >= m/d = 2
    assert by["singleton_after_pruning"].verdict == HOLDS
    # the mask is all minority
    assert by["mask_share"].verdict == HOLDS
    # majority intact
    assert by["majority_intact"].measured == pytest.approx(0.0) and by["majority_intact"].verdict == HOLDS
    # nothing degraded
    assert by["degrade_threshold"].verdict == UNTESTED
    # slope 1 - slope 0
    assert by["slope_difference"].measured == pytest.approx(1.0) and by["slope_difference"].verdict == HOLDS
    # from t=0 lowers it
    assert by["alg1_from_t0"].measured == pytest.approx(-0.1) and by["alg1_from_t0"].verdict == FAILS


def test_a_failed_mask_share_is_judged_and_gates_no_row():
    """The mask's share (Remark 1, Thm F.1) is a prediction: a mask that holds no minority neuron reads "does not
    hold" on its own row, and every other row keeps the verdict it has with a full share."""
    from imbalanced_cl import verdict as V
    from imbalanced_cl.book.pages.tables import VerdictTable
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2, "d": 10, "d1": 20, "m": 20})
    full, empty = _results(cfg), _results(cfg)
    empty.mask_share = torch.zeros(3)
    a, b = pa.verdict_rows(full, cfg), pa.verdict_rows(empty, cfg)
    share = {r.id: r for r in b}["mask_share"]
    assert share.verdict == FAILS and share.measured == 0.0 and share.quantity == "fraction"
    assert [(r.id, r.verdict) for r in a if r.id != "mask_share"] == [(r.id, r.verdict) for r in b
                                                                       if r.id != "mask_share"]
    assert not any("mask_share" in r.depends for r in b)
    # in a table, premise rows gate by id: a failed Lemma B.1 makes the Thm 3.2 rows not comparable, keeping their
    # verdicts; the premise that Algorithm 1's own row does not depend on (the step window) leaves it alone
    def prem(id, v):
        return V.Verdict(
            claim=id, source="s", predicted="p", measured=1.0, lo=1.0, hi=1.0, verdict=v, kind="premise", id=id
        )

    table = VerdictTable("04_pruning_gains", b + [prem("k_poly", HOLDS), prem("step_window", FAILS)])
    rows = {r.id: r for r in table.rows}
    assert rows["gain_main"].verdict == V.NOT_COMPARABLE and rows["gain_main"].would_be == HOLDS
    assert rows["alg1_from_t0"].verdict == FAILS and rows["mask_share"].verdict == V.NOT_COMPARABLE
    assert rows["control_magnitude_vs_random"].verdict == UNTESTED


def test_verdict_rows_take_their_tolerances_from_the_config():
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2})
    res = _results(cfg, slope=1.4)
    # 1.4, outside the band 1 ± 0.25, above 0
    assert {r.id: r for r in pa.verdict_rows(res, cfg)}["excess_rate_alpha_slope"].verdict == PARTLY
    loose = cfg.replace(tol_slope=0.5)
    assert {r.id: r for r in pa.verdict_rows(res, loose)}["excess_rate_alpha_slope"].verdict == HOLDS


def test_verdict_rows_without_alpha_main_in_the_grid_say_not_tested():
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.3})
    by = {r.id: r for r in pa.verdict_rows(_results(cfg), cfg)}
    assert by["aligned_neurons_gain"].verdict == UNTESTED and by["singleton_after_pruning"].verdict == UNTESTED
    # the middle of the grid instead
    assert "alpha=0.2" in by["excess_rate_positive"].rule


def test_majority_change_within_bound_picks_the_largest_alpha_inside():
    A = torch.tensor([[0.9, 0.8, 0.5], [1.0, 1.0, 1.0]])
    out = pa.majority_change_within_bound([0.1, 0.2, 0.4], A, torch.tensor([1.0, 1.0]), torch.tensor([0.25, 0.05]))
    assert out[0] == pytest.approx(-0.2) and math.isnan(float(out[1]))


def test_the_notebook_pipeline_on_a_tiny_model(tiny_runs):
    cfg, base, _ = tiny_runs
    cfg = cfg.replace(eps_min_grid=(cfg.eps_min, 1.0))                          # the main eps_min is in the sweep
    alphas = sorted(cfg.alpha_grid)
    runs = pa.run_branches(cfg, alphas, base)
    tables = pa.feature_tables(runs, base, cfg)
    exc, mech = pa.excess_by_alpha(runs, alphas, cfg), pa.mechanism_summary(base, runs, cfg)
    cen = pa.census_by_alpha(base, alphas, cfg)
    var = pa.run_variants(cfg, base, runs)
    sw = pa.eps_sweep(cfg, base, runs[0.0], var.faithful)
    assert var.faithful is runs[cfg.alpha_main] and var.control is runs[0.0]  # reused, not retrained
    assert list(var.named()) == list(pa.VARIANTS) and var.named()["literal (branch)"] is var.literal
    main = sw["runs"][cfg.eps_min]
    assert (main.cfg, main.control, main.pruned) == (cfg, runs[0.0], var.faithful)
    assert sw["ar_pr"].shape == (cfg.R, len(cfg.eps_min_grid))
    oracles = {name: {"size": o["size"], "gain": o["gain"]} for name, o in pa.run_oracles(cfg, base, runs).items()}
    meas = {"tables": tables, "excess": exc, "mechanism": mech, "mask_share": pa.mask_share(cen, base, cfg),
            "degradation": pa.degradation(runs, tables, cen, alphas, cfg), "ratios": pa.final_ratios(runs, var, cfg),
            "sweep": sw, "control": None, "premises": pa.theorem_premises(base, cfg), "oracles": oracles}
    res = pa.read(meas, cfg)                                                 # as the notebook reads its stage
    rows = pa.verdict_rows(res, cfg)
    # the same rows, by id and once each, as the hand-made table with its premises and oracle arms
    assert [r.id for r in rows] == [r.id for r in pa.verdict_rows(_premised(cfg), cfg)]
    assert len({r.id for r in rows}) == len(rows)
    for r in rows:
        assert r.interval_in_range(), (r.id, r.lo, r.hi)
        if not math.isnan(r.lo):
            assert r.lo <= r.measured <= r.hi, r.claim
    # row 7 is the paired change of A_j*/A_maj, computed here from the weights directly
    def A(run):
        return (run.W @ run.M).abs().amax(1)
    def ratio(run):
        return A(run)[:, -1] / A(run)[:, :-1].mean(-1)
    want = float((ratio(runs[cfg.alpha_main]) - ratio(runs[0.0])).mean())
    assert {r.id: r for r in rows}["gain_main"].measured == pytest.approx(want, rel=1e-5)
    # the typed results name the runs they came from: each ratio recomputed from that run's weights
    for got, run in ((res.ratios.faithful, var.faithful), (res.ratios.literal, var.literal),
                     (res.ratios.from_start, var.from_start), (res.ratios.control, runs[0.0])):
        torch.testing.assert_close(got, ratio(run))
    assert res.oracles.magnitude.size.tolist() == [round(cfg.alpha_main * cfg.m)] * cfg.R
    torch.testing.assert_close(res.oracles.lucky.size, pa.lucky_minority(base.W0, base.M, cfg).sum(-1).float())
    helps = pa.where_it_helps(res, cen, cfg)
    assert len(helps) == len(alphas) + len(cfg.eps_min_grid)


def test_every_claim_row_of_notebook_04_reads_as_written_with_its_verdict():
    """The hand-made results (each row with a known answer): ids, labels, sources, predictions and verdicts of the 16
    claim rows in order, then the oracle and control rows; a slope judged against the wrong target, or a count
    against the wrong bound, changes a verdict here."""
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2, "d": 10, "d1": 20, "m": 20})
    rows = [r for r in pa.verdict_rows(_results(cfg), cfg) if r.kind != "premise"]
    slope = "log-log slope of A_j*/A_maj on eps_min/eps_max"
    gain = "change in A_j*/A_maj, pruned − control"
    pc = "> 0 (pruned - control)"
    assert [(r.id, r.claim, r.source, r.predicted, r.verdict) for r in rows] == [
        ("excess_rate_positive", "Pruning adds growth along the minority feature: minority excess growth rate of "
         "log|<w, M_j*>| over the control, per step, at alpha=0.2", "Thm 3.2(a), eq. (15)", "> 0", HOLDS),
        ("excess_rate_alpha_slope", "Minority excess rate grows linearly in alpha: log-log slope of the excess rate "
         "on alpha", "Thm 3.2(a), eq. (15)", "log-log slope 1", HOLDS),
        ("excess_rate_eps_slope", "Minority excess rate grows like eps_j*^2: log-log slope of the excess rate on "
         "eps_j*/eps_max", "Thm 3.2(a), eq. (15)", "log-log slope 2", HOLDS),
        ("excess_ratio_d", "Minority excess is about d times the excess of other features: ratio of the minority "
         "excess rate to the others'", "Thm 3.2(a,b), eqs. (15)-(16)", "about d = 10", HOLDS),
        ("ratio_slope_vanilla", f"Without pruning, A_j*/A_maj scales like eps_min/eps_max: {slope}",
         "Thm 3.1, eq. (13)", "log-log slope 1", HOLDS),
        ("ratio_slope_pruned", f"With pruning, A_j*/A_maj no longer depends on eps_min/eps_max: {slope}",
         "Thm 3.2(c), eq. (18)", "log-log slope 0", HOLDS),
        ("gain_main", f"Pruning (alpha=0.2) raises A_j*/A_maj at eps_min/eps_max = 0.3: {gain}", "Thm 3.2(c), Remark 3",
         pc, HOLDS),
        ("gain_top_alpha", f"Pruning raises A_j*/A_maj at the largest alpha of the grid (0.4): {gain}",
         "Thm 3.2(c), Remark 3", pc, HOLDS),
        ("aligned_neurons_gain", "Pruning adds neurons aligned with j* (cos >= 0.3): change in their count per "
         "minority feature, pruned − control", "Thm 3.2, Remark 3; App. A.2 metric", pc, HOLDS),
        ("singleton_after_pruning", "At least m/d neurons with N_i = {j*} after pruning: their count per minority "
         "feature", "Thm 3.2(d)", ">= m/d = 2", HOLDS),
        ("lp_gap_mechanism", "Under the mask, 1 - l'_p rises more on pairs containing j*: its rise with j* minus "
         "without", "Remark 2, Lemma F.2, eq. (181)", "> 0 (rise with j* - rise without)", HOLDS),
        ("mask_share", "The mask removes minority-aligned neurons: share of the mask on minority-aligned neurons",
         "Remark 1, Thm F.1 (P ⊆ M*_j*)", "share 1", HOLDS),
        ("majority_intact", "Majority amplitude intact for alpha within |M_j*|/m: relative change of A_maj, "
         "pruned/control − 1", "Remark 1", "relative change 0", HOLDS),
        ("degrade_threshold", "Majority features degrade only beyond alpha = |M_j*|/m: the first alpha that lowers "
         "A_maj by more than 10%", "Remark 1 (implicit bound)", ">= |M_j*|/m ≈ 0.15", UNTESTED),
        ("slope_difference", f"Pruning removes the dependence on eps_min/eps_max: {slope}, control minus pruned",
         "Thm 3.1 eq. (13) vs Thm 3.2(c)", "slope(control) - slope(pruned) = 1", HOLDS),
        ("alg1_from_t0", "Algorithm 1 from t = 0 raises A_j*/A_maj over vanilla: change in A_j*/A_maj, pruned − "
         "vanilla", "Algorithm 1, Sec. 2 (K3)", "> 0 (pruned - vanilla, same steps)", FAILS),
        ("gain_oracle_lucky", "Pruning exactly P = M*_j* (Def. B.1) raises A_j*/A_maj (Thm 3.2 given its pruned "
         f"set): {gain}", "Thm 3.2(c), Thm F.1 (P ⊆ M*_j*)", "> 0.02", UNTESTED),
        ("gain_oracle_dominant", "Pruning exactly minority-dominant at T_a raises A_j*/A_maj (Thm 3.2 given its "
         f"pruned set): {gain}", "Thm 3.2(c), Thm F.1 (P ⊆ M*_j*)", "> 0.02", UNTESTED),
        ("control_magnitude_vs_random", "Magnitude beats random at equal alpha (dynamic masks, alpha=0.2): difference "
         "in A_j*/A_maj, magnitude − random", "Beyond the paper: random-mask control; Remark 2",
         "> 0.02 (magnitude - random)", UNTESTED),
        ("control_dynamic_vs_static", "The effect needs a dynamic mask (magnitude masks, alpha=0.2): difference in "
         "A_j*/A_maj, dynamic − static", "Beyond the paper: random-mask control; Remark 2",
         "> 0.02 (dynamic - static)", UNTESTED)]
    by = {r.id: r for r in rows}
    assert by["degrade_threshold"].rule == "no alpha in the grid lowered A_maj by more than 10%"
    assert (by["singleton_after_pruning"].quantity, by["mask_share"].quantity) == ("count", "fraction")
    assert by["alg1_from_t0"].depends == ("k_poly", "no_memorisation", "lambda_range")
    assert by["ratio_slope_vanilla"].depends != by["ratio_slope_pruned"].depends       # Thm 3.1's, not 3.2's
    assert by["gain_main"].band_lo == cfg.effect_tol and by["aligned_neurons_gain"].band_lo == 0.0


def _premised(cfg, strict=(4.0, 5.0, 6.0), extended=(3.0, 8.0, 9.0), sizes=((2.0, 3.0, 1.0), (2.0, 0.0, 1.0))):
    """The hand-made results with Theorem 3.2's premises and the two oracle arms measured."""
    from imbalanced_cl.claims.pruning.metrics import Convergence
    res = _results(cfg)
    res.premises = pa.TheoremPremises(
        convergence=Convergence(loss=1.5, ln_k=6.2, loss_max=3.1, pos_prob=0.8, lp_min=0.75, change=0.01,
                                change_max=0.02, step=100),
        T=37.5, strict=torch.tensor(strict), extended=torch.tensor(extended))
    lucky, dominant = (pa.OracleArm(size=torch.tensor(s), gain=torch.tensor([0.1, 0.2, 0.15])) for s in sizes)
    res.oracles = pa.Oracles(magnitude=pa.OracleArm(size=torch.full((3,), 4.0), gain=torch.zeros(3)), lucky=lucky,
                             dominant=dominant)
    return res


def test_theorem_3_2_premise_rows_in_full():
    """Each premise row as written (Thm 3.1 eq. (11) and App. F; Thm F.1 and App. F.4's T; Remark 1's two bounds),
    with the band it is judged against and the number it shows."""
    from imbalanced_cl.claims.pruning import verdicts as PV
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2, "d": 10, "d1": 20, "m": 20})
    rows = PV.premise_rows(_premised(cfg), cfg)
    remark1 = ("regime: alpha_main m = 4 within Remark 1's bound, {}, every replicate: the smallest bound over "
               "replicates, in neurons")
    assert [(r.id, r.claim, r.source, r.predicted, r.verdict, r.quantity, r.kind) for r in rows] == [
        ("convergence", "regime: the vanilla run converged at the branch point (InfoNCE well below ln K, l'_p near "
         "1 − Θ(1/τ), the loss flat): the worst replicate's InfoNCE, in nats", "Thm 3.1 eq. (11); App. F",
         "InfoNCE ≤ 3.1, l'_p ≥ 0.75, change ≤ 0.02", HOLDS, "positive", "premise"),
        ("prune_from_t4", "regime: pruned for App. F.4's T at alpha=0.2 (C_z = 1): the branch's length, in steps",
         "Thm F.1; App. F.4", "branch ≥ T = 37.5 steps", FAILS, "count", "premise"),       # 20 steps < 37.5
        ("alpha_bound", remark1.format("|M*_j*| (Def. B.1 on the initial weights; strict)"), "Remark 1",
         "α·m ≤ the bound in every replicate", HOLDS, "count", "premise"),                 # 4 <= 4, 5, 6
        ("alpha_bound_extended", remark1.format("the neurons with j* ∈ N_i at T_a (extended)"), "Remark 1",
         "α·m ≤ the bound in every replicate", FAILS, "count", "premise"),                 # 3 < 4
    ]
    assert [(r.measured, r.lo, r.hi, r.band_lo, r.band_hi) for r in rows] == [
        (1.5, 1.5, 1.5, 0.0, 3.1), (20.0, 20.0, 20.0, 37.5, math.inf), (4.0, 4.0, 6.0, 4.0, math.inf),
        (3.0, 3.0, 9.0, 4.0, math.inf)]
    by = {r.id: r for r in rows}
    assert by["convergence"].rule == ("worst replicate: InfoNCE 1.5 (ln K = 6.2), l'_p 0.8, change 0.01 over the "
                                      "last 100 steps")
    assert by["alpha_bound_extended"].rule == "bound per replicate [3, 8, 9] against α·m = 4"


@pytest.mark.parametrize("alpha, bound, verdict", [(0.05, 1.0, HOLDS),      # alpha m = 1 neuron, bound 1: met
                                                   (0.05, 0.0, FAILS),
                                                   (0.02, 5.0, FAILS)])     # alpha m rounds to 0: nothing pruned
def test_remark_1_bound_needs_at_least_one_pruned_neuron_within_it(alpha, bound, verdict):
    from imbalanced_cl.claims.pruning import verdicts as PV
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (alpha, 0.4), "alpha_main": alpha, "d": 10, "d1": 20, "m": 20})
    rows = {r.id: r for r in PV.premise_rows(_premised(cfg, strict=(bound,) * 3), cfg)}
    assert rows["alpha_bound"].verdict == verdict


def test_the_oracle_rows_in_full_and_an_empty_set_not_tested():
    from imbalanced_cl.claims.pruning import verdicts as PV
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2, "d": 10, "d1": 20, "m": 20})
    lucky, dominant = PV.oracle_rows(_premised(cfg), cfg)
    thm32 = ("k_poly", "no_memorisation", "lambda_range", "step_window", "convergence", "prune_from_t4")
    assert (lucky.id, lucky.claim, lucky.source, lucky.predicted, lucky.depends, lucky.n) == (
        "gain_oracle_lucky", "Pruning exactly P = M*_j* (Def. B.1) raises A_j*/A_maj (Thm 3.2 given its pruned set): "
        "change in A_j*/A_maj, pruned − control", "Thm 3.2(c), Thm F.1 (P ⊆ M*_j*)", "> 0.02 (pruned - control)",
        thm32, 3)
    assert (lucky.measured, lucky.lo, lucky.hi) == pytest.approx(stats.ci(torch.tensor([0.1, 0.2, 0.15])))
    assert (lucky.band_lo, lucky.band_hi) == (0.02, math.inf) and lucky.verdict == HOLDS
    assert (dominant.id, dominant.verdict, dominant.predicted, dominant.depends) == (
        "gain_oracle_dominant", UNTESTED, "> 0.02", thm32)
    assert dominant.claim.startswith("Pruning exactly minority-dominant at T_a raises A_j*/A_maj")
    assert dominant.rule == "the set is empty in 1 of 3 replicates: nothing to prune"
    assert math.isnan(dominant.measured) and math.isnan(dominant.lo) and math.isnan(dominant.hi)
    # a set of one neuron in some replicate is enough to prune; no oracle run at all says so
    one = PV.oracle_rows(_premised(cfg, sizes=((1.0, 1.0, 1.0), (1.0, 2.0, 1.0))), cfg)
    assert [r.verdict for r in one] == [HOLDS, HOLDS]
    res = _results(cfg)
    assert [(r.verdict, r.rule) for r in PV.oracle_rows(res, cfg)] == [(UNTESTED, "not run")] * 2


@pytest.mark.parametrize("bound, want", [
    ((0.2, 0.4), (0.8 / 2.0 - 1.0, 0.5 / 0.5 - 1.0)),      # alpha exactly at the bound counts as inside
    ((0.1, 0.05), (0.9 / 2.0 - 1.0, math.nan)),            # only the first alpha inside; none inside
])
def test_majority_change_reads_the_largest_alpha_inside_each_replicates_bound(bound, want):
    A = torch.tensor([[0.9, 0.8, 0.5], [0.3, 0.2, 0.5]])    # A_maj per replicate and alpha (0.1, 0.2, 0.4)
    A0 = torch.tensor([2.0, 0.5])                          # the control's A_maj (not 1, so a ratio is a ratio)
    out = pa.majority_change_within_bound([0.1, 0.2, 0.4], A, A0, torch.tensor(bound))
    assert out.tolist() == pytest.approx(list(want), nan_ok=True)


def test_every_claim_row_is_judged_on_its_whole_interval(monkeypatch):
    """Every interval made as wide as to straddle every band: each claim row must then be inconclusive. A row judged
    on one end of its interval (or on the point estimate) would read holds or does not hold here."""
    from imbalanced_cl.claims.pruning import verdicts as PV
    cfg = pa.PruningConfig(**{**TINY, "alpha_grid": (0.1, 0.2, 0.4), "alpha_main": 0.2, "d": 10, "d1": 20, "m": 20})
    res = _results(cfg)
    res.degradation = dataclasses.replace(res.degradation, thr_A=torch.full((3,), 0.3))   # measured in every replicate
    wide = (0.5, -1e6, 1e6)                                  # across every band's edge and across 0
    res.excess = dataclasses.replace(res.excess, slope=wide)
    for f in ("ci", "loglog_slope_ci", "mean_ci_in"):
        monkeypatch.setattr(PV.stats, f, lambda *a, **k: wide)
    rows = [r for r in PV.verdict_rows(res, cfg) if r.kind != "premise" and not r.id.startswith(("gain_oracle",
                                                                                               "control_"))]
    assert len(rows) == 16
    not_inconclusive = {r.id: r.verdict for r in rows if r.verdict != INCONCLUSIVE}
    assert not_inconclusive == {}
    assert {r.id: r.quantity for r in rows if r.quantity != "real"} == {
        "singleton_after_pruning": "count", "mask_share": "fraction", "degrade_threshold": "positive"}

"""The regime (sim/regime.py measures, claims/premise_rows.py judges): closed forms worked out by hand, and the rows
on hand-made reports."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from imbalanced_cl import premises as P
from imbalanced_cl.claims import premise_rows
from imbalanced_cl.sim import regime
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import gradient, train
from imbalanced_cl.verdict import FAILS, HOLDS, UNTESTED

TINY = dict(d=6, d1=12, m=5, L=3, n_pairs=16, R=2, steps=5, progress=False, sigma0=0.3, p_scale=3.0)


def test_windows_and_ranges_by_hand():
    cfg = SimConfig(d=20, lr=0.5, sigma_xi=0.05, d1=100)
    t3, t4 = regime.theorem_window(cfg)
    assert t3 == pytest.approx(20 ** 1.01 * 2) and t4 == pytest.approx(20 ** 1.99 * 2)   # about 41 and 780 (L277)
    lo, hi = regime.lambda_range(cfg)
    assert lo == pytest.approx(1 / 20 ** 1.49) and hi == pytest.approx(1 / 20 ** 1.01)
    assert regime.sigma_ratio(cfg) == pytest.approx(0.0025 / (math.sqrt(math.log(20)) / 20))


def test_population_gradient_is_the_mean_over_heldout_batches():
    cfg = SimConfig(**TINY, bias="none")
    run = train(cfg)
    b = torch.zeros(cfg.R, cfg.m)
    g = regime.population_gradient(run, b, 3)
    want = sum(gradient(run.W, b, run.heldout(extra=1000 + k), cfg)[0] for k in range(3)) / 3
    torch.testing.assert_close(g, want)
    # held-out pairs come from the test stream: never the pairs of the last training step
    assert not torch.equal(run.heldout().UX, run.pairs.UX)


def _report(share, dev, gap, sampling="fixed", dead=None):
    R = 4
    held = torch.full((R,), 5.0)
    return regime.Regime(share=torch.full((R,), share) + 0.001 * torch.arange(R), grad_dev=torch.full((R,), dev),
                         grad_rel=torch.full((R,), 0.5), loss_train=held * (1 - gap), loss_heldout=held, steps=500,
                         window=(41.0, 780.0), lam_range=(0.0115, 0.0486), sigma_ratio=1.0, sampling=sampling,
                         dead=dead)


def _rows(report, cfg):
    """The regime rows by id, as claims/premise_rows.py judges sim/regime.py's measurements."""
    return {r.id: r for r in premise_rows.rows(report, cfg, rates=False)}


def test_rows_turn_premises_into_verdicts():
    cfg = SimConfig(d=20, d1=100, weight_decay=0.02)
    good = {i: r.verdict for i, r in _rows(_report(0.97, 0.001, 0.0), cfg).items()}
    bad = {i: r.verdict for i, r in _rows(_report(0.6, 0.5, 0.5), cfg).items()}
    assert set(good) == {P.REGIME_IDS[k] for k in premise_rows.ROWS} and set(good.values()) == {HOLDS}
    assert bad["feature_span"] == FAILS and bad["no_memorisation"] == FAILS and bad["k_poly"] == FAILS
    assert (bad["step_window"], bad["lambda_range"], bad["noise_scale"]) == (HOLDS, HOLDS, HOLDS)   # settings


def test_a_settings_premise_holds_exactly_inside_its_band_and_never_reads_partly():
    """Steps, λ and the noise ratio are exact numbers: each holds inside its band and does not hold outside, on
    either side (a premise is met or not: the noise ratio far below 1 once read "partly", like a signed effect)."""
    cfg = SimConfig(d=20, d1=100, weight_decay=0.02)
    rep = _report(0.97, 0.001, 0.0)
    for ratio, verdict in ((0.1, HOLDS), (1.9, HOLDS), (0.029, FAILS), (0.099, FAILS), (1.91, FAILS)):
        row = _rows(replace(rep, sigma_ratio=ratio), cfg)["noise_scale"]
        assert (row.verdict, row.band_lo, row.band_hi) == (verdict, 0.1, 1.9), ratio
    for steps, verdict in ((41, HOLDS), (780, HOLDS), (40, FAILS), (781, FAILS)):
        assert _rows(replace(rep, steps=steps), cfg)["step_window"].verdict == verdict, steps
    lo, hi = rep.lam_range
    for lam, verdict in ((lo, HOLDS), (hi, HOLDS), (lo * 0.99, FAILS), (hi * 1.01, FAILS)):
        assert _rows(rep, SimConfig(d=20, d1=100, weight_decay=lam))["lambda_range"].verdict == verdict, lam


def test_the_memorisation_row_is_not_tested_under_fresh_sampling_and_fails_under_fixed():
    """Under fresh pairs no pair is seen twice, so the train/held-out row could not fail: it reads "not tested" and
    says why, whatever the numbers; under a fixed set the same gap fails it."""
    cfg = SimConfig(d=20, d1=100, weight_decay=0.02)
    fresh = _rows(_report(0.97, 0.001, 0.5, "fresh"), cfg)
    fixed = _rows(_report(0.97, 0.001, 0.5, "fixed"), cfg)
    assert fresh["no_memorisation"].verdict == UNTESTED and "could not fail" in fresh["no_memorisation"].rule
    assert fixed["no_memorisation"].verdict == FAILS and fixed["no_memorisation"].n == 4
    assert "what it cannot show" in fresh["k_poly"].rule


def test_a_dead_network_is_reported_dead_not_measured():
    """Every replicate's population gradient is exactly 0: every row reads "not tested" and says the network is
    dead; one live replicate is enough to measure."""
    cfg = SimConfig(d=20, d1=100, weight_decay=0.02)
    dead = _rows(_report(0.64, 0.0, 0.0, dead=torch.ones(4, dtype=torch.bool)), cfg)
    assert set(dead) == {P.REGIME_IDS[k] for k in premise_rows.ROWS}
    assert all(r.verdict == UNTESTED and "dead" in r.claim and "exactly 0" in r.rule for r in dead.values())
    assert dead["feature_span"].kind == "diagnostic" and dead["k_poly"].kind == "premise"
    alive = _rows(_report(0.97, 0.001, 0.0, dead=torch.tensor([True, False, False, False])), cfg)
    assert not any("dead" in r.claim for r in alive.values())


def test_measure_finds_a_dead_network():
    """All-zero weights: h = 0 on every input, so the gradient of eq. (21) is exactly 0; a trained run is alive."""
    cfg = SimConfig(**TINY)
    run = train(cfg)
    run.W = torch.zeros_like(run.W)                           # h = 0 for every pair: no gradient at all
    assert bool(regime.measure(run, 2).dead.all())
    run2 = train(cfg)
    assert not bool(regime.measure(run2, 2).dead.any())


def test_fixed_set_runs_fit_their_pairs_and_fresh_runs_do_not():
    """The finding behind the regime issue, at a tiny size: reusing 16 pairs for 300 steps opens a gap between
    training and held-out InfoNCE; drawing fresh pairs every step does not."""
    base = dict(TINY, steps=300, R=3, lr=1.0, sigma0=0.1)
    fixed = regime.measure(train(SimConfig(**base, sampling="fixed")), 4)
    fresh = regime.measure(train(SimConfig(**base, sampling="fresh")), 4)
    def gap(r):
        return float(((r.loss_heldout - r.loss_train) / r.loss_heldout).mean())
    assert gap(fixed) > 0.1 > abs(gap(fresh))


def test_measured_share_is_the_squared_norm_share_on_hand_made_weights():
    """regime.measure's share on weights set by hand: with M = the first three coordinates of R^6, the neuron
    (1, 1, 1, 1, 1, 1) has share 3/6 = 0.5 (an unsquared norm ratio would give 0.71), (3, 0, 0, 4, 0, 0) has
    9/25 = 0.36, and (0, 2, 0, 0, 0, 0) has 1; the replicate's share is their mean, 0.62."""
    cfg = SimConfig(d=3, d1=6, m=3, L=2, n_pairs=8, R=2, steps=1, progress=False, bias="none")
    run = train(cfg)
    run.M = torch.eye(6)[:, :3].unsqueeze(0).repeat(2, 1, 1)
    run.W = torch.tensor([[1.0, 1, 1, 1, 1, 1], [3, 0, 0, 4, 0, 0], [0, 2, 0, 0, 0, 0]]).unsqueeze(0).repeat(2, 1, 1)
    reg = regime.measure(run, batches=2)
    assert reg.share.tolist() == pytest.approx([(0.5 + 0.36 + 1.0) / 3] * 2)


def test_replicates_draw_independent_data_streams():
    """Two replicates of one run never draw the same pairs (each has its own stream, keyed by the replicate), and
    a replicate's pairs do not depend on which other replicates share its batch."""
    from imbalanced_cl.sim import data as D
    cfg = SimConfig(**TINY)
    M = D.make_dictionaries(cfg, [0, 1])
    both = D.make_pairs(cfg, M, [0, 1], extra=7)
    assert not torch.equal(both.ZX[0], both.ZX[1]) and not torch.equal(both.UX[0], both.UX[1])
    assert not torch.equal(M[0], M[1])
    alone = D.make_pairs(cfg, M[1:], [1], extra=7)
    assert torch.equal(alone.UX[0], both.UX[1]) and torch.equal(alone.ZX[0], both.ZX[1])
    later = D.make_pairs(cfg, M, [0, 1], extra=8)                 # and each step draws anew
    assert not torch.equal(later.UX[0], both.UX[0])


def test_the_regime_page_reports_a_dead_arm_instead_of_measuring_it():
    """An arm whose network is dead (all-zero weights: the gradient is exactly 0) shows "0 of R" alive and no
    measured values; a live arm shows R of R and numbers."""
    from imbalanced_cl.claims import regime_compare as RC
    cfg = RC.RegimeConfig(**{**TINY, "steps": 5})
    live, dead = train(cfg), train(cfg)
    dead.W = torch.zeros_like(dead.W)
    text = RC.table(RC.summary({"live": RC.measure_arm(live, cfg), "dead": RC.measure_arm(dead, cfg)}, cfg))
    assert "| replicates alive (population gradient ≠ 0) | 2 of 2 | 0 of 2 |" in text
    assert text.count("dead network: not measured") == 7 and "dead network" not in text.split("\n")[3].split("|")[2]


def test_the_regime_page_matches_rows_of_notebooks_01_to_05_by_id_then_by_sentence():
    """claims/regime_compare: each fresh row of 01-05 meets its fixed-pairs row by (notebook, id), else by (notebook,
    claim) for a record that predates ids; rows of other notebooks, or with no partner, are left out."""
    from imbalanced_cl.claims import regime_compare as RC
    from imbalanced_cl.verdict import from_json
    def r(nb, claim, verdict, measured, id=None):
        return from_json({"notebook": nb, "claim": claim, "verdict": verdict, "measured": measured,
                          **({"id": id} if id else {})})
    fresh = [r("01_stage1_growth", "new words", HOLDS, 1.0, "rate_ratio"),
             r("05_appendix_figures", "fig", HOLDS, 0.5),
             r("06_lt_benchmarks", "gain", HOLDS, 3.0),                 # not one of 01-05
             r("02_lucky_neurons", "alone", HOLDS, 2.0, "lonely"),       # no fixed partner
             r("03_Ni_scaling", "same words", FAILS, 0.1, "new_id")]     # the fixed row has another id: by sentence
    fixed = [r("01_stage1_growth", "old words", FAILS, 2.0, "rate_ratio"),
             r("01_stage1_growth", "new words", UNTESTED, 9.0, "other_id"),   # same sentence, but the id decides
             r("05_appendix_figures", "fig", FAILS, 0.25),
             r("06_lt_benchmarks", "gain", FAILS, 1.0),
             r("03_Ni_scaling", "same words", HOLDS, 0.2, "old_id")]
    assert RC.verdict_changes(fresh, fixed) == [
        {"notebook": "01_stage1_growth", "claim": "new words", "fresh": HOLDS, "fixed": FAILS,
         "fresh_measured": 1.0, "fixed_measured": 2.0},
        {"notebook": "05_appendix_figures", "claim": "fig", "fresh": HOLDS, "fixed": FAILS,
         "fresh_measured": 0.5, "fixed_measured": 0.25},
        {"notebook": "03_Ni_scaling", "claim": "same words", "fresh": FAILS, "fixed": HOLDS,
         "fresh_measured": 0.1, "fixed_measured": 0.2}]
    assert RC.verdict_changes(fresh, []) == [] and RC.verdict_changes([], fixed) == []


def test_the_regime_rows_read_as_written():
    """Each regime row's id, kind, label, source, prediction, quantity and replicate count on a fixed-pairs report,
    and a dead network's rows named by their condition and the paper's source."""
    cfg = SimConfig(d=20, d1=100, weight_decay=0.02)
    rows = premise_rows.rows(_report(0.97, 0.001, 0.01), cfg)
    assert [(r.id, r.kind, r.claim, r.source, r.predicted, r.quantity, r.n) for r in rows] == [
        ("feature_span", "diagnostic", "weight lies in the feature span (share at the end)",
         "Thm 3.1, β bound (eq. 13)", "→ 1; holds at ≥ 0.9", "fraction", 4),
        ("k_poly", "premise", "regime: K-pair gradient tracks the population gradient (fixed pairs): ||g_K − g_pop|| / "
         "||w||", "Lemma B.1", "||g_K − g_pop|| / ||w|| ≤ d1^-1 = 0.01 (relative to ||g_pop||: 0.5)", "positive", 4),
        ("no_memorisation", "premise", "regime: training InfoNCE equals held-out InfoNCE (no memorised pairs): "
         "relative gap, (held-out − training InfoNCE) / held-out", "Lemma B.1 (population loss)",
         "relative gap ≤ 0.05 (train 4.95, held-out 5)", "real", 4),
        ("step_window", "premise", "regime: steps inside Theorem 3.1's window [d^1.01/η, d^1.99/η]", "Thm 3.1",
         "[41, 780]", "positive", 0),
        ("lambda_range", "premise", "regime: weight decay λ inside the proof's range [d^-1.49, d^-1.01]",
         "App. E.3 (proof of Thm E.1)", "[0.011, 0.049]", "positive", 0),
        ("noise_scale", "premise", "regime: noise σ_ξ² on Assumption 3.3's scale √(log d)/d (this book follows App. "
         "A.2's σ): ratio σ_ξ² / (√(log d)/d)", "Assumption 3.3", "ratio Θ(1)", "positive", 0),
        ("tau_polylog", "premise", "regime: temperature τ = 1 = (log d)^0", "Thm 3.1", "τ = polylog(d)", "positive",
         0),
        ("eta_poly", "premise", "regime: learning rate η = 0.5 = d^-0.23", "Thm 3.1", "η = 1/poly(d)", "positive", 0)]
    by = {r.id: r for r in rows}
    assert by["no_memorisation"].measured == pytest.approx(0.01, abs=1e-6)
    assert by["no_memorisation"].rule.startswith("holds if the whole interval is ≤ 0.05")
    assert (by["step_window"].measured, by["lambda_range"].measured, by["noise_scale"].measured) == (500.0, 0.02, 1.0)
    assert by["step_window"].rule == "holds if the run's step count lies in the window"
    assert by["lambda_range"].rule == "holds if λ lies in the range"
    assert by["noise_scale"].rule == ("holds if the ratio lies within 1 ± 0.9 (an order-of-magnitude check; "
                                      "constants are free)")
    fresh = {r.id: r for r in premise_rows.rows(_report(0.97, 0.001, 0.01, "fresh"), cfg)}["no_memorisation"]
    assert (fresh.predicted, fresh.source, fresh.kind, fresh.n) == ("a check for sampling='fixed'",
                                                                    "Lemma B.1 (population loss)", "premise", 0)
    assert fresh.claim == by["no_memorisation"].claim and math.isnan(fresh.measured)
    dead = premise_rows.rows(_report(0.97, 0.001, 0.01, dead=torch.ones(4, dtype=torch.bool)), cfg, rates=False,
                             share_kind="paper")
    assert [(r.id, r.kind, r.claim, r.source, r.predicted) for r in dead[:2]] == [
        ("feature_span", "paper", "regime: weights in the feature span (the network is dead)",
         "Thm 3.1, β bound (eq. 13)", "an active network"),
        ("k_poly", "premise", "regime: Lemma B.1's gradient bound (K = poly(d1)) (the network is dead)", "Lemma B.1",
         "an active network")]
    assert all(math.isnan(r.measured) and r.rule == premise_rows.DEAD for r in dead)
    assert [r.id for r in premise_rows.rows(_report(0.97, 0.001, 0.01), cfg, ("lambda", "window"), rates=False)] \
        == ["lambda_range", "step_window"]                                   # the keys asked for, in that order

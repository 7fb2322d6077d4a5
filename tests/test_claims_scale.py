"""Notebook 08 (claims.scale): the scaling rule, batched ratio groups against separate runs, the trend rule on
hand-made gaps, and the verdict rows of a tiny end-to-end run."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from imbalanced_cl import verdict as V
from imbalanced_cl.claims import scale as S
from imbalanced_cl.claims.scaling import tracking_slopes
from imbalanced_cl.sim.train import train
from imbalanced_cl.validate import ParameterError


def test_scaling_rule_by_hand():
    cfg = S.ScaleConfig()
    p = cfg.point(20, 0.5)
    # 20^1.25 = 42.29, 80^1.25 = 239.3; d1 = 5 d; n_minority = 0.25 d; eps_min = rho eps_max
    assert (p.d, p.d1, p.m, p.n_minority, p.eps_min) == (20, 100, 42, 5, 0.5)
    q = cfg.point(80, 1.0)
    assert (q.d1, q.m, q.n_minority, q.eps_min) == (400, 239, 20, 1.0)
    # tau_20 = 20 ln 20 / (0.5 ln ln 20) = 59.915 / 0.54859 = 109.2
    assert S.clock(p) == pytest.approx(109.22, abs=0.01)
    plan = S.plan(cfg)
    assert plan[0]["T_a"] == (round(1.5 * 109.22), round(4.0 * 109.22))
    assert cfg.groups == [1.0, 0.5]


@pytest.mark.parametrize("bad, name", [({"d": 40}, "d="), ({"m": 10}, "m="), ({"steps": 10}, "steps="),
                                       ({"ds": (40, 20)}, "ds"), ({"ds": (20,)}, "ds"), ({"ratios": (1.0,)}, "ratios"),
                                       ({"ratios": (0.5, 0.5)}, "ratios"), ({"t2_cap": 5.0}, "t3_cap"),
                                       ({"t3_cap": 1.0}, "t3_cap"), ({"minority_share": 0.6}, "minority_share"),
                                       ({"trend_sesoi": 0.0}, "trend_sesoi")])
def test_config_refuses_bad_values(bad, name):
    with pytest.raises(ParameterError, match=name):
        S.ScaleConfig(**bad)


def test_derived_field_says_where_it_comes_from():
    with pytest.raises(ParameterError, match="set at every grid point from ds"):
        S.ScaleConfig(d=40)


def _tiny(**kw):
    base = dict(ds=(6, 8, 10), R=2, n_pairs=32, C_m=1.2, records_per_tau=10, t3_min=2.0, t3_cap=2.5, branch_tau=0.5,
                sigma0=1e-2, progress=False)
    base.update(kw)
    return S.ScaleConfig(**base)


def test_batched_groups_equal_separate_runs_and_stages_do_not_change_numbers():
    """Oracle: plain train() of each group alone, in one call. The batched, staged run must give the same weights."""
    cfg = _tiny()
    groups = [cfg.point(6, r) for r in cfg.groups]
    run, sample = S.start(groups, cfg.R)
    run = S.advance(run, 5, 1, sample)
    run = S.advance(run, 12, 3, sample)
    for k, g in enumerate(groups):
        alone = train(g.replace(steps=12, R=cfg.R))
        torch.testing.assert_close(run.W[k * cfg.R:(k + 1) * cfg.R], alone.W, rtol=1e-4, atol=1e-7)
        assert run.T1[k * cfg.R:(k + 1) * cfg.R].tolist() == alone.T1.tolist()
    part = S.take(run, [2, 3], groups[1], [0, 1])
    torch.testing.assert_close(part.W, run.W[2:4])
    assert part.history.steps == run.history.steps and part.history.coef[-1].shape[0] == 2


@pytest.mark.parametrize("slots", [[0, 1, 2, 3], [1, 2], [3]])
def test_the_groups_sampler_gives_each_slot_what_make_pairs_draws_for_its_group(slots):
    """One draw per replicate shared by the groups (common random numbers) must be, bit for bit, what data.make_pairs
    gives each group alone; also for a chunk of slots that cuts a group."""
    from imbalanced_cl.sim import data as D
    cfg = _tiny()
    groups = [cfg.point(6, r) for r in cfg.groups]
    M = D.make_dictionaries(groups[0], range(cfg.R)).repeat(len(groups), 1, 1)
    got = S.sampler(groups, cfg.R, M)(4, slots)
    for f in ("UX", "UY", "S", "ZX", "ZY"):
        want = torch.cat([getattr(D.make_pairs(g, M[[s for s in slots if s // cfg.R == k]],
                                               [s % cfg.R for s in slots if s // cfg.R == k], extra=5), f)
                          for k, g in enumerate(groups) if any(s // cfg.R == k for s in slots)])
        assert torch.equal(getattr(got, f), want), f


def test_control_branch_is_the_vanilla_continuation_and_pruning_changes_it():
    cfg = _tiny(prune_alpha=0.3)
    g = cfg.point(6, 0.5)
    vanilla = train(g.replace(steps=10, R=2))
    control, pruned = S.branches(cfg, vanilla, every=2, length=6)
    straight = train(g.replace(steps=16, R=2))            # the same stream, never branched
    torch.testing.assert_close(control.W, straight.W, rtol=1e-4, atol=1e-7)
    assert (pruned.W - control.W).abs().max() > 1e-6


def _q(gaps, one_sided=False, tol=0.1, target=1.0):
    """A Quantity whose per-replicate gaps (R, k) in tolerance units are given."""
    gaps = np.asarray(gaps, float)
    x = target + tol * gaps if not one_sided else target - tol * gaps   # one-sided: + gap = shortfall
    return S.Quantity("q", "toy", "none", "1", np.array([20.0, 40.0, 80.0]), x, np.full(3, target), tol, one_sided)


@pytest.mark.parametrize("gaps, word", [
    ([[4, 2, 0], [4.2, 2.1, 0.1], [3.9, 1.9, -0.1]], S.CLOSES),        # slope -2 per doubling
    ([[-4, -2, 0], [-4.1, -2, 0.1], [-3.9, -2.1, 0]], S.CLOSES),      # from below: the orientation flips the sign
    ([[3, 3, 3], [3.1, 3.0, 3.1], [2.9, 3.0, 2.9]], S.STAYS),
    ([[1, 3, 5], [1.1, 3.1, 5.0], [0.9, 2.9, 5.1]], S.GROWS),
    ([[0.1, -0.2, 0], [0.0, -0.1, 0.1], [0.1, -0.1, 0.0]], S.NO_GAP),
    ([[3, 0, -3], [3.1, 0, -3.1], [2.9, 0.1, -2.9]], S.OVERSHOOTS),
    ([[3, 1, 5], [3, 6, 0], [3, 2, 2]], S.TREND_INCONCLUSIVE),
])
def test_trend_words_on_hand_made_gaps(gaps, word):
    got, fit, (verdict, rule) = S.judge_trend(_q(gaps), 0.25)
    assert got == word
    assert verdict == S.TREND_VERDICT[word] and "per doubling" in rule


def test_trend_slope_interval_by_hand():
    # replicate slopes over log2 d = (4.32, 5.32, 6.32): exactly 1 and 3 -> mean 2, half-width t(1) * sd / sqrt(2)
    at = np.array([20.0, 40.0, 80.0])
    G = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 6.0]])
    fit = S.trend_slope(at, G)
    h = 12.7062047 * math.sqrt(2.0) / math.sqrt(2)
    assert (fit.slope, fit.lo, fit.hi, fit.n) == pytest.approx((2.0, 2.0 - h, 2.0 + h, 2))
    G[1, 1] = np.nan                       # a missing point: the slope of the two finite ones, still 3
    assert S.trend_slope(at, G).slope == pytest.approx(2.0)


def test_one_sided_claim_closes_when_the_shortfall_falls():
    # claim x >= 0.05 (unit 0.05): x = 0, 0.025, 0.05 -> shortfall 1, 0.5, 0 -> slope -0.5 per doubling
    x = np.array([[0.0, 0.025, 0.05], [0.001, 0.026, 0.049], [-0.001, 0.024, 0.051]])
    q = S.Quantity("a", "toy", "none", "> 0.05", np.array([20.0, 40.0, 80.0]), x, np.full(3, 0.05), 0.05, True)
    word, fit, _ = S.judge_trend(q, 0.25)
    assert word == S.CLOSES and fit.slope == pytest.approx(-0.5, abs=0.02)


def test_plateau_by_hand():
    steps = np.arange(0, 201, 10).astype(float)          # tau = 100: windows (175, 200] and (125, 150]
    fell = np.where(steps < 50, 5.0, 2.0)                 # dropped from 5 to 2, then flat
    loss = np.stack([fell, fell + 0.001 * steps], 1)
    ok, rel = S.plateau(steps, loss, 100.0, 0.02, 0.1)
    # column 1: mean of 2 + 0.001 t over t = 180..200 is 2.19, over t = 130..150 it is 2.14: change 0.05, start 5
    assert ok and rel[0] == 0 and rel[1] == pytest.approx(0.01)
    assert not S.plateau(steps, loss, 100.0, 0.005, 0.1)[0]
    assert not S.plateau(steps[:5], loss[:5], 100.0, 0.5, 0.1)[0]   # no record 0.5 tau back yet
    flat = np.full((steps.size, 1), 5.0)                  # flat but never fell: the start, not Stage 3
    assert not S.plateau(steps, flat, 100.0, 0.05, 0.1)[0]


def test_tracking_slopes_recover_the_scaling_law_by_hand():
    ds, ratios = np.array([20.0, 40.0]), [1.0, 0.5]
    Ni = np.stack([np.stack([3 * ds ** (1 - r ** 2) for r in ratios])] * 2)     # (R, ratios, ds)
    assert tracking_slopes(ds, ratios, Ni) == pytest.approx([1.0, 1.0])


def test_tiny_end_to_end_rows_and_premises():
    cfg = _tiny()
    res = S.run(cfg)
    table = V.gate(S.verdict_rows(res, cfg), "08_scale")
    premises = [r for r in table if r.kind == "premise"]
    rows = [r for r in table if r.kind != "premise"]
    assert [r.id for r in premises] == ["sparse_data", "stage_reached__t1", "stage_reached__stage1_window",
                                        "stage_reached__t2", "convergence", "lucky_exist", "alpha_bound_extended"]
    keys = [q.key for q in S.quantities(res)]
    assert keys == ["rate_ratio", "lucky_fraction", "alignment", "Ni_exponent_1", "Ni_exponent_0.5", "Ni_tracking",
                    "mask_share", "pruning_gain"]
    assert len(rows) == len(keys) and all(r.verdict in V.VERDICTS for r in rows)
    # each premise row counts the d's that meet it: an exact share, holding only when every d does
    assert all(r.lo == r.measured == r.hi and 0 <= r.measured <= 1 for r in premises)
    assert all((r.verdict == V.HOLDS) == (r.measured == 1) for r in premises)
    # a row is named by its quantity alone (the stability command matches rows by id across seeds); the trend
    # word is the start of its rule
    words = (S.CLOSES, S.NO_GAP, S.STAYS, S.GROWS, S.OVERSHOOTS, S.TREND_INCONCLUSIVE)
    assert [r.claim for r in rows] == [f"{q.claim}: {S.GAP_LABEL}" for q in S.quantities(res)]
    assert all(any(r.rule.startswith(w + ": ") for w in words) for r in rows)
    # at d = 6, p = loglog 6 / 6 = 0.097 and q = 1 - (1 - p)^4 = 0.33 > sparsity_max = 0.3: every row is not comparable
    assert premises[0].verdict == V.FAILS and premises[0].measured < 1          # d = 6 is not sparse
    assert all(r.verdict == V.NOT_COMPARABLE and "sparse" in r.premise and "sparse_data" in r.unmet for r in rows)
    p0 = res.points[0]
    assert p0["T1"].shape == (2, 2) and p0["Ni"].shape == (2, 2) and p0["gain"].shape == (2,)
    assert 0 <= p0["share"].min() and p0["share"].max() <= 1


def test_points_in_two_worker_processes_give_the_numbers_of_one_process():
    """The oracle is the grid computed here, one d after another: two one-thread workers must give the same points
    (every measured array), in grid order."""
    cfg = _tiny(ds=(6, 8))
    here, two = S.run(cfg.replace(workers=1)), S.run(cfg.replace(workers=2))
    assert [p["d"] for p in two.points] == [p["d"] for p in here.points] == [6, 8]
    for a, b in zip(here.points, two.points, strict=True):
        arrays = [k for k, v in a.items() if isinstance(v, np.ndarray)]
        assert arrays and all(np.array_equal(a[k], b[k], equal_nan=True) for k in arrays), a["d"]

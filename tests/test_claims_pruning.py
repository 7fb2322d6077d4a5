"""Notebook 04's random-mask control (claims.pruning.control, issue 14): the cells, their measurements, the rows."""
from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from imbalanced_cl.claims import pruning as pa
from imbalanced_cl.claims.pruning import control as pc
from imbalanced_cl.sim.train import train
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.verdict import FAILS, HOLDS, PARTLY, UNTESTED

TINY = dict(d=4, d1=8, L=2, m=6, n_pairs=16, R=2, record_every=5, progress=False, vanilla_steps=20,
            prune_steps=20, rate_window=10, top_k=2, alpha_grid=(0.2, 0.5), alpha_main=0.2,
            eps_min_grid=(0.3, 1.0))


@pytest.fixture(scope="module")
def tiny():
    cfg = pa.PruningConfig(**TINY)
    base = train(cfg.vanilla())
    alphas = sorted(cfg.alpha_grid)
    runs = pa.run_branches(cfg, alphas, base)
    return cfg, base, alphas, runs, pc.run_cells(cfg, base, runs, alphas)


def test_select_copies_and_takes_rows(tiny):
    cfg, base, _, runs, _ = tiny
    s = pa.select(base, [0, 1, 0, 1, 0, 1], history=False)
    assert s.W.shape[0] == 3 * cfg.R and s.replicates == base.replicates * 3 and s.history.steps == []
    back = pa.select(s, [4, 5], cfg.vanilla())
    for name in ("W", "M", "T1", "W0"):
        assert torch.equal(getattr(back, name), getattr(base, name)), name
    assert torch.equal(back.pairs.UX, base.pairs.UX) and back.cfg == cfg.vanilla()
    part = pa.select(runs[0.2], [1])
    assert torch.equal(part.history.coef[-1], runs[0.2].history.coef[-1][1:]) and part.replicates == [1]


@pytest.mark.parametrize("change", [{"t1_max": 5}, {"t1_max": 5, "prune_unit": "weight"},
                                    {"t1_max": 5, "sampling": "fixed"}, {"t1_max": 5, "prune_backward": "literal"},
                                    {"bias": "none"}, {}])
def test_branches_trained_in_one_batch_equal_each_branch_trained_alone(change):
    """The oracle is the plain loop, each branch resumed from the checkpoint on its own (its own draws of the same
    pairs): weights, T1, history (the vanilla part included) and last pairs must agree bit for bit. With t1_max = 5
    every replicate is past T1 at the branch point and the branches train as one batch; with no change no replicate
    is (TINY's 20 vanilla steps), and each branch trains alone."""
    cfg = pa.PruningConfig(**{**TINY, **change})
    base = train(cfg.vanilla())
    assert pa.rows_independent(base, cfg.branch(0.2)) == bool(change)
    backward = cfg.prune_backward
    runs = pa.run_branches(cfg, [0.2, 0.5], base, backward)
    alone = {0.0: train(cfg.branch(0.0), resume=base),
             **{a: train(cfg.branch(a, backward), resume=base) for a in (0.2, 0.5)}}
    assert list(runs) == [0.0, 0.2, 0.5]
    for a, r in alone.items():
        assert torch.equal(runs[a].W, r.W) and torch.equal(runs[a].T1, r.T1), a
        assert runs[a].history.steps == r.history.steps and runs[a].history.steps[0] == 0, a
        for name in ("coef", "loss", "bias"):
            assert all(torch.equal(x, y)
                       for x, y in zip(getattr(runs[a].history, name), getattr(r.history, name), strict=True))
        assert torch.equal(runs[a].pairs.UX, r.pairs.UX) and runs[a].cfg == r.cfg


@pytest.mark.parametrize("chunk", [0, 1])
def test_branches_draw_each_step_of_pairs_once(monkeypatch, chunk):
    """Three branches of R replicates: each replicate's pairs of a step (and of the evaluation after the last step)
    drawn once, not once per branch (the point of training them in one batch), also when memory cuts the batch
    into chunks (chunk = 1: a chunk per replicate, its three branches together)."""
    from imbalanced_cl.sim import data as D
    cfg = pa.PruningConfig(**{**TINY, "chunk": chunk, "t1_max": 5})
    base = train(cfg.vanilla())
    calls = []
    real = D.make_pairs
    monkeypatch.setattr(D, "make_pairs", lambda c, M, reps, *a, **k: calls.append((k.get("extra"), tuple(reps)))
                        or real(c, M, reps, *a, **k))
    runs = pa.run_branches(cfg, [0.2, 0.5], base)
    steps = range(cfg.vanilla_steps + 1, cfg.vanilla_steps + cfg.prune_steps + 2)
    per_step = [(0, 1)] if chunk == 0 else [(0,), (1,)]
    assert sorted(calls) == sorted((t, r) for t in steps for r in per_step)
    assert torch.equal(runs[0.5].W, train(cfg.branch(0.5), resume=base).W)


def test_rows_are_independent_only_when_no_replicate_can_switch_the_batch_path_by_hand():
    """A chunk takes the linear path until its first T1 (sim.train): a replicate before its T1 beside one past it
    would be computed on the other path (other rounding) than alone, so such a checkpoint is not batched."""
    cfg = pa.PruningConfig(**TINY)
    base = train(cfg.vanilla())
    for T1, want in (([3, 7], True), ([3, -1], False), ([-1, -1], False)):
        base.T1 = torch.tensor(T1)
        assert pa.rows_independent(base, cfg.branch(0.2)) == want, T1
        assert pa.rows_independent(base, cfg.branch(0.2, bias="none"))
        assert pa.rows_independent(base, cfg.branch(0.2, bias_coef=0.0))


def test_a_batch_of_branches_refuses_configs_that_differ_beyond_the_mask():
    cfg = pa.PruningConfig(**{**TINY, "t1_max": 5})
    base = train(cfg.vanilla())
    with pytest.raises(ValueError, match="differ only in their mask"):
        pa.train_branches(base, [cfg.branch(0.2), cfg.branch(0.5, lr=0.1)])
    with pytest.raises(ValueError, match="differ only in their mask"):
        pa.train_branches(base, [cfg.branch(0.2), cfg.branch(0.5, "literal")])
    # a control may differ in every pruning setting (it prunes nothing): notebook 08's control starts at 0
    ctl, pruned = pa.train_branches(base, [cfg.branch(0.0).replace(prune_start=0), cfg.branch(0.5)])
    assert torch.equal(ctl.W, train(cfg.branch(0.0), resume=base).W)


def test_every_cell_of_the_batch_equals_that_cell_trained_alone(tiny):
    cfg, base, alphas, runs, cells = tiny
    assert set(cells) == {(c, a) for c in pc.CELLS for a in alphas}
    for a in alphas:
        assert cells[("magnitude/dynamic", a)] is runs[a]                  # Algorithm 1: notebook 04's branch
        for c in pc.CELLS[1:]:
            alone = train(pc.cell_config(cfg, c, a), resume=base)
            torch.testing.assert_close(cells[(c, a)].W, alone.W, rtol=1e-5, atol=1e-7)
            rule, schedule = c.split("/")
            assert (cells[(c, a)].cfg.prune_mask, cells[(c, a)].cfg.prune_schedule) == (rule, schedule)
            assert cells[(c, a)].cfg.prune_alpha == a


def test_random_cells_differ_from_the_magnitude_cells_and_the_control(tiny):
    """(Magnitude static and dynamic may coincide: when the smallest neurons stay the smallest through the branch,
    the dynamic mask never changes.)"""
    cfg, _, alphas, runs, cells = tiny
    a = alphas[-1]
    for r in ("random/dynamic", "random/static"):
        for other in [cells[("magnitude/dynamic", a)], cells[("magnitude/static", a)], runs[0.0]]:
            assert not torch.equal(cells[(r, a)].W, other.W), r
    assert not torch.equal(cells[("random/dynamic", a)].W, cells[("random/static", a)].W)


def test_first_mask_on_minority_by_hand():
    """Neuron 0 is the only minority-aligned neuron and the smallest: the magnitude mask takes it (share 1);
    a random mask of one neuron out of m takes it with probability 1/m, so over many replicates the share is
    about 1/m."""
    cfg = pa.PruningConfig(**{**TINY, "d": 3, "d1": 3, "m": 4, "R": 400, "alpha_grid": (0.25,), "alpha_main": 0.25})
    M = torch.eye(3).expand(cfg.R, 3, 3)
    W = torch.tensor([[0.0, 0.0, 0.1], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.5, 1.5, 0.0]]).expand(cfg.R, 4, 3)
    base = type("Base", (), {"W": W, "M": M, "replicates": list(range(cfg.R))})()
    mag = pc.first_mask_on_minority(cfg, base, "magnitude/static", 0.25)
    assert torch.all(mag == 1.0)
    rnd = pc.first_mask_on_minority(cfg, base, "random/dynamic", 0.25)
    assert set(rnd.unique().tolist()) <= {0.0, 1.0}
    assert abs(float(rnd.mean()) - 0.25) < 0.07                            # 400 draws: sd of the mean 0.022


def test_cell_stats_agree_with_the_branch_measurements(tiny):
    cfg, base, alphas, runs, cells = tiny
    stored = pc.cell_stats(cells, runs[0.0], base, alphas, cfg)
    assert set(stored) == set(pc.CELLS) and all(set(v) == set(pa.CELL_STATS) for v in stored.values())
    cs = {c: pa.ControlCell.read(v) for c, v in stored.items()}          # as the verdict rows read the stage
    for c in pc.CELLS:
        for f in dataclasses.fields(pa.ControlCell):
            v = getattr(cs[c], f.name)
            assert v.shape == ((cfg.R,) if f.name == "first_degrading" else (cfg.R, len(alphas))), (c, f.name)
    md = cs["magnitude/dynamic"]
    for k, a in enumerate(alphas):
        want = pa.amplitude_ratio(runs[a].W, runs[a].M, cfg) - pa.amplitude_ratio(runs[0.0].W, runs[0.0].M, cfg)
        torch.testing.assert_close(md.change[:, k], want)
        torch.testing.assert_close(md.ratio[:, k], pa.amplitude_ratio(runs[a].W, runs[a].M, cfg))
        def Amaj(r):
            return (r.W @ r.M).abs().amax(1)[:, :-1].mean(-1)      # A_j by hand, majority mean
        torch.testing.assert_close(md.degradation[:, k], 1 - Amaj(runs[a]) / Amaj(runs[0.0]))
    assert torch.all((md.first_mask_minority >= 0) & (md.first_mask_minority <= 1))


def control_cell(ratio: torch.Tensor) -> pa.ControlCell:
    """A control cell with its A_j*/A_maj (R, k) given, and NaN for what the control rows do not read."""
    nan = torch.full_like(ratio, float("nan"))
    return pa.ControlCell(ratio=ratio, change=nan, minority_aligned=nan, degradation=nan, first_mask_minority=nan,
                          norm_ratio=nan, first_degrading=nan[:, 0])


def _made_stats(R=3, k=2, mag=(0.1, 0.12, 0.11), rand=(0.0, 0.01, -0.01), static=(0.1, 0.12, 0.11)):
    def col(v):
        return control_cell(torch.tensor(v).unsqueeze(-1).expand(R, k))
    return {"magnitude/dynamic": col(mag), "random/dynamic": col(rand), "magnitude/static": col(static),
            "random/static": col(rand)}


def test_control_rows_on_hand_made_statistics():
    cfg = pa.PruningConfig(**TINY)
    rows = pa.control_rows(_made_stats(), [0.2, 0.5], cfg)
    by = {r.id: r for r in rows}
    # magnitude beats random; static does as well
    assert (by["control_magnitude_vs_random"].verdict, by["control_dynamic_vs_static"].verdict) == (HOLDS, FAILS)
    assert by["control_magnitude_vs_random"].measured == pytest.approx(0.11)
    assert by["control_dynamic_vs_static"].measured == pytest.approx(0.0)
    assert "alpha=0.2" in by["control_magnitude_vs_random"].claim
    loose = cfg.replace(effect_tol=0.5)                           # the tolerance comes from the config
    assert pa.control_rows(_made_stats(), [0.2, 0.5], loose)[0].verdict == PARTLY  # real, but below the SESOI
    assert all(r.kind == "diagnostic" and r.n == 3 for r in rows)
    off = pa.control_rows(None, [0.2, 0.5], cfg)
    assert [r.verdict for r in off] == [UNTESTED, UNTESTED] and all(math.isnan(r.measured) for r in off)


def test_run_control_respects_the_switch(tiny):
    cfg, base, alphas, runs, _ = tiny
    assert pc.run_control(cfg.replace(mask_control=False), base, runs, alphas) is None
    assert pc.threshold_text(torch.tensor([0.2, float("nan")])) == "0.2, none"


def test_pruned_norm_ratio_by_hand():
    run = type("Run", (), {"W": torch.tensor([[[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]]])})()   # norms 5, 1, 2
    assert pc.pruned_norm_ratio(run, torch.tensor([[False, True, False]])).item() == pytest.approx(1 / 3.5)
    assert math.isnan(pc.pruned_norm_ratio(run, torch.zeros(1, 3, 2, dtype=torch.bool)).item())   # weight mask


def test_threshold_alphas_extend_the_curve_for_all_four_cells(tiny):
    """A ratio of threshold_alphas has no notebook-04 branch: the control trains Algorithm 1 (magnitude/dynamic)
    there too, and it equals that branch trained alone; the curve's grid keeps alpha_grid's indices first."""
    cfg, base, alphas, runs, _ = tiny
    assert pc.curve_alphas(alphas, cfg.replace(threshold_alphas=(0.8, 0.6))) == [0.2, 0.5, 0.6, 0.8]
    cells = pc.run_cells(cfg, base, runs, [0.7])
    assert set(cells) == {(c, 0.7) for c in pc.CELLS}
    alone = train(cfg.branch(0.7, cfg.prune_backward), resume=base)
    torch.testing.assert_close(cells[("magnitude/dynamic", 0.7)].W, alone.W, rtol=1e-5, atol=1e-7)
    with pytest.raises(ParameterError, match="threshold_alphas"):
        cfg.replace(threshold_alphas=(0.4,))        # not above alpha_grid's largest ratio, 0.5


def test_every_protocol_step_in_replicate_shards_equals_one_process():
    """The oracle is the protocol in this process (workers = 1): with two worker processes (branches and cells in
    replicate shards, the variants and the eps_min sweep as whole runs) every run must come back with the same
    weights, T1 and history, rows in replicate order."""
    one = pa.PruningConfig(**{**TINY, "R": 3, "workers": 1, "t1_max": 5})
    two = one.replace(workers=2)

    def everything(cfg):
        base = train(cfg.vanilla())
        runs = pa.run_branches(cfg, [0.2, 0.5], base)
        var = pa.run_variants(cfg, base, runs)
        sweep = pa.eps_sweep(cfg, base, runs[0.0], runs[0.2])
        cells = pc.run_cells(cfg, base, runs, [0.2])
        return [base, *runs.values(), *var.named().values(),
                *(r for e in sweep["eps"] for r in (sweep["runs"][e].control, sweep["runs"][e].pruned)),
                *cells.values()]

    here, shards = everything(one), everything(two)
    assert len(here) == len(shards) == 1 + 3 + 4 + 2 * 2 + 4
    for a, b in zip(here, shards, strict=True):
        assert a.replicates == b.replicates == [0, 1, 2] and a.cfg == b.cfg
        assert torch.equal(a.W, b.W) and torch.equal(a.T1, b.T1) and a.history.steps == b.history.steps
        assert all(torch.equal(x, y) for x, y in zip(a.history.coef, b.history.coef, strict=True))


def test_concat_puts_shards_back_in_order_by_hand():
    cfg = pa.PruningConfig(**{**TINY, "R": 3})
    base = train(cfg.vanilla())
    run = pa.concat([pa.select(base, [0]), pa.select(base, [1, 2])])
    assert run.replicates == [0, 1, 2]
    for name in ("W", "M", "T1", "W0"):
        assert torch.equal(getattr(run, name), getattr(base, name)), name
    assert torch.equal(run.pairs.ZY, base.pairs.ZY) and run.history.steps == base.history.steps
    assert torch.equal(run.history.norm2[-1], base.history.norm2[-1])

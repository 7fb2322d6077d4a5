"""Appendix A.2 (notebook 05): shared grid points trained once, the regression head, every metric by hand."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from imbalanced_cl.claims import appendix as A
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.stats import trend
from imbalanced_cl.rules import judge_trend
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, PARTLY
from imbalanced_cl.claims.appendix import metrics as AM
from imbalanced_cl import stats

TINY = dict(d=6, d1=24, m=6, L=2, n_pairs=16, steps=6, chunk=7, n_test=40, n_probe_train=30, threads=1,
            boot=50, progress=False)


def tiny_cfg(**kw) -> A.AppendixConfig:
    """Grids that overlap like the paper's: Figs. 1-2 and 3-4 share eps 0.2 and sigma 0.05 / 0.03."""
    base = dict(sigmas_12=(0.01, 0.05), eps_12=(0.2, 0.6), sigmas_3=(0.05, 0.1), sigmas_4=(0.03, 0.05),
                eps_34=(0.1, 0.2), repeats=2)
    return A.AppendixConfig(**{**TINY, **base, **kw})


# ---------------------------------------------------------------------------- grid and no recomputation

def test_paper_union_grid_has_60_points():
    cfg = A.AppendixConfig(progress=False)
    pts = A.grid_points(cfg)
    per_figure = sum(len(cfg.figure_grid(f)[0]) * len(cfg.figure_grid(f)[1]) for f in (1, 3, 4))
    assert per_figure == 90 and len(pts) == 60 == len(set(pts))
    assert (0.1, 0.05) in pts and (0.05, 0.1) in pts and (1.0, 0.01) in pts
    assert len({A.point_code(e, s) for e, s in pts}) == 60  # every point has its own data stream


def test_shared_points_are_trained_exactly_once():
    cfg = tiny_cfg()
    pts = A.grid_points(cfg)
    naive = sum(len(cfg.figure_grid(f)[0]) * len(cfg.figure_grid(f)[1]) for f in (1, 2, 3, 4))
    assert len(pts) < naive  # the grids do share points, so the test means something
    before = A.TRAINING_LOG.copy()
    res = A.run_appendix(cfg)
    done = A.TRAINING_LOG - before
    expected = {(e, s, r, a) for e, s in pts for r in range(cfg.repeats) for a in cfg.arms}
    assert set(done) == expected and set(done.values()) == {1}
    assert res.trained == done
    items = len(pts) * cfg.repeats
    assert res.train_calls == math.ceil(items / cfg.chunk)      # one batched call trains both arms of a batch
    for name, v in res.values.items():
        # the minority-coordinate diagnostic is NaN where a tiny test set never contains the minority feature
        finite = np.isfinite(v).all() if name in A.METRICS.values() else np.isfinite(v).any()
        assert v.shape == (2, len(pts), cfg.repeats) and finite, name


def test_batching_does_not_change_results():
    a = A.run_appendix(tiny_cfg(chunk=3, pruning=False))
    b = A.run_appendix(tiny_cfg(chunk=0, pruning=False))
    for name in a.values:
        np.testing.assert_allclose(a.values[name], b.values[name], rtol=2e-4, atol=1e-5, err_msg=name)


def test_an_interrupted_run_resumes_from_its_batches_with_the_same_numbers(tmp_path, monkeypatch):
    """Inside a campaign unit (campaign.checkpoint.memo), a run stopped at its third batch keeps the two batches it
    finished; the next run trains only the rest and gives exactly the uninterrupted run's numbers."""
    from imbalanced_cl.campaign import checkpoint
    from imbalanced_cl.claims.appendix import protocol as P
    cfg = tiny_cfg(chunk=3)
    plain = A.run_appendix(cfg)
    real, calls = P._measure_batch, []

    def counted(*args, fail_at=None):
        calls.append(1)
        if len(calls) == fail_at:
            raise KeyboardInterrupt("the budget ran out")
        return real(*args)
    monkeypatch.setenv(checkpoint.ENV, str(tmp_path / "ck"))
    monkeypatch.setattr(P, "_measure_batch", lambda *a: counted(*a, fail_at=3))
    with pytest.raises(KeyboardInterrupt):
        A.run_appendix(cfg, memo=checkpoint.memo(log=None))
    assert checkpoint.summary(tmp_path / "ck")["points"] == 2
    calls.clear()
    monkeypatch.setattr(P, "_measure_batch", counted)
    res = A.run_appendix(cfg, memo=checkpoint.memo(log=None))
    assert len(calls) == plain.train_calls - 2                  # the two kept batches are read back, not trained
    assert res.train_calls == plain.train_calls and res.trained == plain.trained
    assert res.t1_mean == plain.t1_mean
    for name in plain.values:
        np.testing.assert_array_equal(res.values[name], plain.values[name], err_msg=name)


def test_batches_in_worker_processes_give_the_numbers_of_one_process(tmp_path, monkeypatch):
    """workers=2 (issue 30): the batches run in two spawned processes of one thread each and give the numbers of the
    same batches run here on one thread, bit for bit; inside a campaign unit, batches kept by an interrupted run are
    read back, not sent to a worker."""
    from imbalanced_cl.campaign import checkpoint
    from imbalanced_cl.claims.appendix import protocol as P
    here = A.run_appendix(tiny_cfg(chunk=5, workers=1))
    assert here.train_calls >= 4                                    # enough batches to spread over two workers
    there = A.run_appendix(tiny_cfg(chunk=5, workers=2))
    assert (here.workers, there.workers) == (1, 2)
    assert there.train_calls == here.train_calls and there.trained == here.trained and there.t1_mean == here.t1_mean
    for name in here.values:
        np.testing.assert_array_equal(there.values[name], here.values[name], err_msg=name)

    real, calls = P._measure_batch, []

    def stop_at_third(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt("the budget ran out")
        return real(*args)
    monkeypatch.setenv(checkpoint.ENV, str(tmp_path / "ck"))
    monkeypatch.setattr(P, "_measure_batch", stop_at_third)
    with pytest.raises(KeyboardInterrupt):
        A.run_appendix(tiny_cfg(chunk=5, workers=1), memo=checkpoint.memo(log=None))
    monkeypatch.setattr(P, "_measure_batch", real)
    lines = []
    resumed = A.run_appendix(tiny_cfg(chunk=5, workers=2), memo=checkpoint.memo(log=lines.append))
    assert [s.split()[1] for s in lines] == ["batch0000", "batch0001"]   # kept, read back; the rest ran in workers
    assert checkpoint.summary(tmp_path / "ck")["points"] == here.train_calls
    for name in here.values:
        np.testing.assert_array_equal(resumed.values[name], here.values[name], err_msg=name)


def test_workers_plan_follows_the_threads_this_process_may_use():
    """0 means one process per torch thread (a campaign unit pinned to one thread stays one process), one on CUDA,
    never more than the pieces of work."""
    from imbalanced_cl import workers as W
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert W.plan(0, 10) == 1
        torch.set_num_threads(2)
        assert W.plan(0, 10) == min(2, W.cores())
        assert W.plan(0, 10, on_cuda=True) == 1 and W.plan(3, 10) == 3 and W.plan(3, 2) == 2 and W.plan(0, 0) == 1
    finally:
        torch.set_num_threads(threads)


def test_arms_trained_together_match_each_arm_trained_alone():
    """Both arms in one batch (rows interleaved, draws shared, a ratio per row) give each arm's own training: the
    oracle is the arm trained by itself, with Algorithm 1's mask from its config (issue 30: the draws made once).
    The literal backward freezes pruned neurons, so a ratio given to the wrong rows shows at once."""
    cfg = tiny_cfg(steps=12, prune_alpha=0.34, prune_backward="literal")
    items = [(p, r) for p in A.grid_points(cfg)[:3] for r in range(2)]
    start = A.protocol._start(cfg, items)
    together = A.protocol._train_arms(cfg, start, items)
    for arm, alpha in enumerate(cfg.arms):
        alone = A.protocol.train.train(cfg.point_cfg(*items[0][0], alpha=alpha), resume=start,
                                       sampler=A.protocol._fresh_sampler(cfg, start, items, list(range(len(items)))))
        torch.testing.assert_close(together[arm].W, alone.W, rtol=1e-5, atol=1e-6)
        assert torch.equal(together[arm].T1, alone.T1)
    assert (together[0].W - together[1].W).abs().max() > 0.1 * together[0].W.abs().max()    # pruning mattered


def test_curves_pick_the_figure_grid():
    res = A.run_appendix(tiny_cfg(repeats=1, pruning=False))
    sig, eps, v = res.curves(3, 0)
    assert sig == (0.05, 0.1) and eps == (0.1, 0.2) and v.shape == (2, 2, 1)
    k = res.points.index((0.2, 0.1))
    assert v[1, 1, 0] == res.values["test_cos"][0, k, 0]


# ---------------------------------------------------------------------------- regression head

def test_ridge_recovers_a_known_linear_map():
    g = torch.Generator().manual_seed(0)
    F = torch.randn(1000, 8, generator=g) * torch.linspace(0.1, 3, 8)
    B = torch.randn(8, 3, generator=g)
    c = torch.tensor([1.0, -2.0, 0.5])
    beta, icpt = AM.ridge_fit(F, F @ B + c, ridge=0.0)
    torch.testing.assert_close(beta.float(), B, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(icpt.float(), c, atol=1e-4, rtol=1e-4)
    Ft = torch.randn(5000, 8, generator=g)
    noise = 0.1 * torch.randn(5000, 3, generator=g)
    assert AM.ridge_mse(F, F @ B + c, Ft, Ft @ B + c + noise, 0.0) == pytest.approx(0.01, rel=0.05)


def test_ridge_handles_dead_features():
    F = torch.zeros(50, 4)
    Y = torch.arange(50.0).unsqueeze(1)
    beta, icpt = AM.ridge_fit(F, Y, 1e-6)
    assert torch.isfinite(beta).all() and float(icpt) == pytest.approx(24.5)


# ---------------------------------------------------------------------------- metrics on hand-made weights

def _hand_dictionary():
    """d1 = 5, d = 3: M = first three standard basis vectors; feature 3 (index 2) is the minority one."""
    return torch.eye(5)[:, :3].unsqueeze(0)


def test_alignment_count_and_max_by_hand():
    M = _hand_dictionary()
    e = torch.eye(5)
    W = torch.stack([e[2],                        # cos 1
                     e[2] + e[0],                 # cos 1/sqrt(2) = 0.707
                     -0.5 * e[2] + e[3],          # |cos| = 0.5/sqrt(1.25) = 0.447
                     0.2 * e[2] + e[1],           # cos 0.196 < 0.3
                     e[4]]).unsqueeze(0)          # cos 0
    assert A.align_count(W, M, 1, 0.3).tolist() == [3.0]
    assert A.align_count(W, M, 1, 0.5).tolist() == [2.0]
    assert A.align_max(W[:, 1:], M, 1).item() == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert A.align_max(W, M, 1).item() == pytest.approx(1.0, abs=1e-6)
    # two minority features: a neuron counts if it is aligned with either
    assert A.align_count(W[:, 3:4] * 0 + e[1], M, 2, 0.3).tolist() == [1.0]


def test_test_cosine_and_mse_by_hand():
    # W = I (m = d1 = 2), L = 1, b = 0: f(X) = u exactly
    W, b = torch.eye(2), torch.zeros(2)
    UX = torch.tensor([[1.0, 0.0], [0.0, 2.0]]).unsqueeze(1)
    UY = torch.tensor([[2.0, 0.0], [1.0, 1.0]]).unsqueeze(1)
    Z = torch.tensor([[1.0], [3.0]])
    cos, _, _, _ = A.eval_metrics(W, b, UX, UY, UX, Z, Z, 0.0)
    assert cos == pytest.approx((1 + 1 / math.sqrt(2)) / 2, abs=1e-6)
    # bias 0.5 (BReLU): u = (1, 0.3) gives f = (0.5, 0); the positive (0.2, 2) gives (0, 1.5): cosine 0
    cos_b, _, _, _ = A.eval_metrics(W, torch.full((2,), 0.5), torch.tensor([[[1.0, 0.3]], [[1.0, 0.0]]]),
                              torch.tensor([[[0.2, 2.0]], [[3.0, 0.1]]]), UX, Z, Z, 0.0)
    assert cos_b == pytest.approx(0.5, abs=1e-6)
    # features carry the target linearly: target = 2 f_1 - f_2 + 1
    g = torch.Generator().manual_seed(1)
    Utr, Ute = torch.randn(40, 1, 2, generator=g), torch.randn(30, 1, 2, generator=g)
    def tgt(U):
        return (2 * U[:, 0, 0] - U[:, 0, 1] + 1).unsqueeze(1)
    _, mse, nmse, _ = A.eval_metrics(W, b, Ute, Ute, Utr, tgt(Utr), tgt(Ute), 0.0)
    assert mse == pytest.approx(0.0, abs=1e-8) and nmse == pytest.approx(0.0, abs=1e-8)
    # a dead network (W = 0) predicts the training mean: MSE = mean (z - mean_tr)^2
    Ztr = torch.tensor([[0.0], [2.0]])
    Zte = torch.tensor([[0.0], [4.0]])
    _, mse0, nmse0, _ = A.eval_metrics(torch.zeros(2, 2), b, UX, UY, UX, Ztr, Zte, 1e-6)
    assert mse0 == pytest.approx((1 + 9) / 2, abs=1e-6)
    # test variance of (0, 4) is 4, so the normalised error is 5 / 4
    assert nmse0 == pytest.approx(5 / 4, abs=1e-6)
    # two target columns, the head explains the first exactly and the second not at all: last=1 scores only it
    Y2tr = torch.cat([tgt(Utr), torch.randn(40, 1, generator=g)], 1)
    Y2te = torch.cat([tgt(Ute), torch.randn(30, 1, generator=g) * 3], 1)
    _, _, n_all, n_last = A.eval_metrics(W, b, Ute, Ute, Utr, Y2tr, Y2te, 0.0, last=1)
    assert n_last > 0.9 and n_all == pytest.approx(n_last / 2, rel=1e-6)


def test_reg_target_choice():
    cfg = tiny_cfg(reg_target="minority", n_minority=2)
    Z = torch.arange(12.0).view(2, 6)
    assert A.reg_target(Z, cfg).tolist() == [[4.0, 5.0], [10.0, 11.0]]
    assert A.reg_target(Z, tiny_cfg()).shape == (2, 6)


# ---------------------------------------------------------------------------- trend and verdict

def test_spearman_matches_scipy_and_handles_ties():
    from scipy.stats import spearmanr
    x = np.arange(7.0)
    y = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    assert stats.spearman(x, y) == pytest.approx(spearmanr(x, y).statistic)
    assert stats.spearman(x, x ** 2) == pytest.approx(1.0)
    assert stats.spearman(x, -x) == pytest.approx(-1.0)
    assert stats.spearman(x, np.zeros(7)) == 0.0


def test_trend_interval_and_verdicts():
    eps = (0.1, 0.2, 0.3, 0.4)
    rng = np.random.default_rng(0)
    rising = np.array(eps)[None, :, None] + 0.001 * rng.standard_normal((2, 4, 20))
    rho, lo, hi, per = trend(eps, rising, 500, 0)
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0) and per.shape == (2,)
    assert judge_trend(lo, hi, +1, 0.8)[0] == HOLDS
    assert judge_trend(-hi, -lo, -1, 0.8)[0] == HOLDS
    assert judge_trend(lo, hi, -1, 0.8)[0] == FAILS
    noise = rng.standard_normal((2, 4, 20))
    rho, lo, hi, _ = trend(eps, noise, 500, 0)
    assert lo < rho < hi and lo < 0.8
    assert judge_trend(0.3, 0.7, +1, 0.8)[0] == PARTLY        # a real rise, smaller than the threshold
    assert judge_trend(-0.7, -0.3, -1, 0.8)[0] == PARTLY
    assert judge_trend(0.3, 0.9, +1, 0.8)[0] == INCONCLUSIVE  # straddles the threshold
    assert judge_trend(-0.2, 0.9, +1, 0.8)[0] == INCONCLUSIVE
    assert judge_trend(0.0, 0.0, +1, 0.8)[0] == FAILS  # a flat curve is no improvement
    again = trend(eps, noise, 500, 0)
    assert again[1:3] == (lo, hi)  # fixed bootstrap seed


# ---------------------------------------------------------------------------- validation

@pytest.mark.parametrize("kw,name", [
    (dict(eps_12=()), "eps_12"),
    (dict(eps_34=(0.0, 0.2)), "eps_34[0]"),
    (dict(eps_12=(0.5, 1.5)), "eps_12[1]"),
    (dict(sigmas_3=(0.05, -0.1)), "sigmas_3[1]"),
    (dict(sigmas_4=[]), "sigmas_4"),
    (dict(repeats=0), "repeats"),
    (dict(n_test=1), "n_test"),
    (dict(reg_target="z"), "reg_target"),
    (dict(align_threshold=1.5), "align_threshold"),
    (dict(n_minority=0), "n_minority"),
    (dict(prune_alpha=0.0), "prune_alpha"),
])
def test_config_rejects_bad_values(kw, name):
    with pytest.raises(ParameterError, match=re.escape(f"parameter {name}=")):
        tiny_cfg(**kw)


def test_from_namespace_turns_lists_into_tuples():
    ns = {**TINY, "eps_12": [0.2, 0.4], "repeats": 3}
    cfg = A.AppendixConfig.from_namespace(ns)
    assert cfg.eps_12 == (0.2, 0.4) and cfg.repeats == 3


# ---------------------------------------------------------------------------- the notebook's reports

def _made_result(cfg):
    """An AppendixResult without training: every metric equals eps_min (+ 0.5 in the pruned arm), the MSE
    diagnostics fall with eps_min while the raw MSE rises."""
    pts = A.grid_points(cfg)
    eps = np.array([e for e, _ in pts])[None, :, None]
    base = np.broadcast_to(eps, (1, len(pts), cfg.repeats)) + np.arange(cfg.repeats) * 1e-3
    arms = np.concatenate([base, base + 0.5])
    vals = {name: arms.copy() for name in A.METRICS.values()}
    vals["test_nmse"], vals["test_nmse_minority"] = -arms, -arms
    return A.AppendixResult(cfg, pts, vals)


def test_trend_report_reads_a_monotone_curve_and_the_paired_difference():
    res = _made_result(tiny_cfg(repeats=3, boot=20))
    text = A.trend_report(res, 1)
    assert "vanilla" in text and "pruned α=0.1" in text
    assert text.count("mean +1.00 [+1.00, +1.00]") == 2              # strictly increasing in both arms
    assert "pruned − vanilla, mean over the figure's grid: +0.5 [+0.5, +0.5]" in text
    assert A.verdict_rows(res)[0].measured == pytest.approx(1.0)     # the row the report describes


def test_diagnostic_report_names_the_variance_confound():
    res = _made_result(tiny_cfg(repeats=3, boot=20))
    text = A.diagnostic_report(res, {"test_nmse": "all", "test_nmse_minority": "minority"})
    assert "Spearman ρ of raw MSE with eps_min: +1.00" in text and "of minority with eps_min: -1.00" in text
    assert text.endswith("falls with eps_min; the raw MSE rises only because the target's variance does")


def _noisy_result(cfg, minority_sign=-1.0):
    """A made result whose curves are noisy (a seed-free bootstrap would move their intervals): a trend in eps_min
    plus fixed noise; the minority MSE follows `minority_sign`."""
    res = _made_result(cfg)
    gen = np.random.default_rng(5)
    for name in res.values:
        res.values[name] = res.values[name] + gen.normal(0.0, 0.3, res.values[name].shape)
    res.values["test_nmse_minority"] = minority_sign * np.abs(res.values["test_nmse_minority"])
    return res


def test_trend_report_reads_as_written_and_matches_the_rows():
    """The report's lines in full: each arm's per-NSR ρ and their mean with the row's own bootstrap interval (same
    seed), then the paired difference pruned − vanilla."""
    cfg = tiny_cfg(repeats=4, boot=30)
    res = _noisy_result(cfg)
    rows = {r.id: r for r in A.verdict_rows(res)}
    lines = A.trend_report(res, 2).split("\n")
    assert len(lines) == 3
    for line, label, row in ((lines[0], "        vanilla", rows["fig2_trend"]),
                             (lines[1], "   pruned α=0.1", rows["fig2_trend_alpha0p1"])):     # right-aligned in 15
        head = f"{label}: Spearman ρ(eps_min, mean curve) per NSR {cfg.nsr_of(0.01):.3g}: "
        assert line.startswith(head) and f"; {cfg.nsr_of(0.05):.3g}: ".replace(";", ",") in line, line
        assert line.endswith(f"; mean {row.measured:+.2f} [{row.lo:+.2f}, {row.hi:+.2f}]"), line
    diff = res.curves(2, 1)[2] - res.curves(2, 0)[2]
    per_repeat = diff.reshape(-1, diff.shape[-1]).mean(0)            # one mean per repeat over the grid
    m = per_repeat.mean()
    assert lines[2].startswith(f"pruned − vanilla, mean over the figure's grid: {m:+.4g} [")
    assert lines[2].endswith(f"] (95% t-interval over repeats); largest |difference| at any point and repeat: "
                             f"{np.abs(diff).max():.3g}")
    one = A.trend_report(_made_result(tiny_cfg(repeats=3, boot=20, pruning=False)), 1)
    assert one == (f"        vanilla: Spearman ρ(eps_min, mean curve) per NSR {cfg.nsr_of(0.01):.3g}: +1.00, "
                   f"{cfg.nsr_of(0.05):.3g}: +1.00; mean +1.00 [+1.00, +1.00]")


def test_diagnostic_report_says_which_way_the_minority_error_moves_and_names_the_confound_only_then():
    cfg = tiny_cfg(repeats=3, boot=20)
    metrics = {"test_nmse": "all", "test_nmse_minority": "minority"}
    falls = A.diagnostic_report(_made_result(cfg), metrics).split("\n")
    assert falls == ["vanilla, Spearman ρ of raw MSE with eps_min: +1.00 [+1.00, +1.00]",
                     "vanilla, Spearman ρ of all with eps_min: -1.00 [-1.00, -1.00]",
                     "vanilla, Spearman ρ of minority with eps_min: -1.00 [-1.00, -1.00]",
                     "the minority coordinate's 1 − R² falls with eps_min; the raw MSE rises only because the "
                     "target's variance does"]
    rising = _made_result(cfg)
    rising.values["test_nmse_minority"] = -rising.values["test_nmse_minority"]
    assert A.diagnostic_report(rising, metrics).split("\n")[-1] == \
        "the minority coordinate's 1 − R² rises with eps_min"
    flat = _made_result(cfg)
    flat.values["test_mse"] = -flat.values["test_mse"]     # the raw MSE falls too: no confound to name
    assert A.diagnostic_report(flat, metrics).split("\n")[-1] == "the minority coordinate's 1 − R² falls with eps_min"
    unsettled = _made_result(cfg)
    sig, eps = cfg.figure_grid(4)     # the error rises with eps_min at one noise level and falls at the other
    for k, (e, s) in enumerate(unsettled.points):
        sign = (1.0 if e == eps[0] else -1.0) * (1.0 if s == sig[0] else -1.0)
        unsettled.values["test_nmse_minority"][:, k, :] = sign
    assert A.diagnostic_report(unsettled, metrics).split("\n")[-1] == \
        "the minority coordinate's 1 − R² has no settled direction with eps_min"


def test_every_row_of_notebook_05_reads_as_written():
    """Ids, kinds, labels, sources, predictions and verdicts of every row on the made result (every metric equals
    eps_min, pruned + 0.5; the MSE diagnostics fall): the vanilla arm is the paper's, the pruned arm and the Fig. 4
    diagnostics are not; Fig. 4 predicts a fall, so its rising raw MSE does not hold; no row depends on a premise."""
    res = _made_result(tiny_cfg(repeats=3, boot=20))
    rows = A.verdict_rows(res)
    shown = ": Spearman ρ of the metric with eps_min, mean over NSR levels"
    up = "Spearman ρ(eps_min, mean curve) > 0, monotone (|ρ| → 1); mean over 2 NSR levels"
    down = up.replace("> 0", "< 0")
    pruned = " — with Alg. 1 pruning α=0.1 (not in the paper)"
    claims = {1: "# neurons with |cos(w_i, M_min)| ≥ 0.3 grows with eps_min",
              2: "max_i |cos(w_i, M_min)| grows with eps_min", 3: "test mean cos(f(X), f(Y)) grows with eps_min",
              4: "regression test MSE falls as eps_min grows"}
    want = ([(f"fig{f}_trend", "paper", claims[f] + shown, f"App. A.2, Fig. {f}", down if f == 4 else up,
              "does not hold" if f == 4 else "holds", 1.0) for f in (1, 2, 3, 4)]
            + [(f"fig{f}_trend_alpha0p1", "diagnostic", claims[f] + pruned + shown, f"App. A.2, Fig. {f}",
                down if f == 4 else up, "does not hold" if f == 4 else "holds", 1.0) for f in (1, 2, 3, 4)]
            + [(f"fig4_{m}", "diagnostic", f"{what} falls as eps_min grows — diagnostic, not in the paper" + shown,
                "App. A.2, Fig. 4 (normalised)", "Spearman ρ < 0; mean over 2 NSR levels", "holds", -1.0)
               for m, what in (("test_nmse", "variance-normalised regression MSE (1 - R²)"),
                               ("test_nmse_minority", "1 - R² of the minority coordinate alone"))])
    assert [(r.id, r.kind, r.claim, r.source, r.predicted, r.verdict, r.measured) for r in rows] == want
    assert all(r.rule.endswith(" (95% percentile bootstrap over 3 repeats, 20 resamples)") and r.depends == ()
               and r.quantity == "cosine" for r in rows)
    # the diagnostics read the vanilla arm: with the pruned arm's MSE rising, they still fall
    res.values["test_nmse"][1] = -res.values["test_nmse"][1]
    assert {r.id: r for r in A.verdict_rows(res)}["fig4_test_nmse"].verdict == "holds"

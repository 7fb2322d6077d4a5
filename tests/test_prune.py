"""Algorithm 1: magnitude masks, the faithful (eq. 5) and literal backward, and reduction to vanilla at alpha = 0."""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.sim import prune
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.data import Pairs
from imbalanced_cl.sim.train import History, Run, gradient, train

TINY = dict(d=4, d1=6, L=2, m=5, n_pairs=8, R=2, steps=30, record_every=5, progress=False)


# ---------------------------------------------------------------- masks

def test_neuron_mask_removes_round_alpha_m_smallest():
    g = torch.Generator().manual_seed(0)
    W = torch.randn(3, 10, 7, generator=g)
    norms = W.norm(dim=-1)
    for alpha in (0.0, 0.1, 0.25, 0.33, 0.5, 0.74, 0.9):
        keep = prune.neuron_mask(W, alpha)
        k = int(round(alpha * 10))
        assert keep.shape == (3, 10)
        assert torch.all((10 - keep.sum(-1)) == k)
        for r in range(3):
            pruned = set(torch.nonzero(keep[r] == 0).flatten().tolist())
            assert pruned == set(torch.argsort(norms[r])[:k].tolist())


def test_neuron_mask_ties_broken_by_lower_index():
    W = torch.ones(1, 6, 3)          # all norms equal
    W[0, 4] *= 0.5                   # one strictly smaller
    keep = prune.neuron_mask(W, 0.5)  # 3 pruned: neuron 4, then the tied ones with the lowest index
    assert torch.nonzero(keep[0] == 0).flatten().tolist() == [0, 1, 4]
    assert torch.equal(keep, prune.neuron_mask(W.clone(), 0.5))  # deterministic


def test_weight_mask_removes_smallest_entries():
    g = torch.Generator().manual_seed(1)
    W = torch.randn(2, 4, 5, generator=g)
    keep = prune.weight_mask(W, 0.3)
    k = int(round(0.3 * 20))
    for r in range(2):
        assert int((keep[r] == 0).sum()) == k
        thresh = W[r].abs().flatten().sort().values[k - 1]
        assert torch.all(W[r].abs()[keep[r] == 0] <= thresh)
        assert torch.all(W[r].abs()[keep[r] == 1] >= thresh)


def test_alpha_below_one_never_prunes_every_unit():
    W = torch.randn(1, 50, 4)
    assert int(prune.neuron_mask(W, 0.99).sum()) == 1  # round(49.5) = 50 would drop all of them


@pytest.mark.parametrize("alpha", [-0.1, 1.0, 1.5, float("nan"), "0.2"])
def test_alpha_outside_unit_interval_rejected(alpha):
    with pytest.raises(ParameterError, match="prune_alpha"):
        SimConfig(prune_alpha=alpha)


# ---------------------------------------------------------------- eq. (5) by hand

def _tiny_pairs(seed=0, R=1, n=4, L=2, d1=5, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    UX = torch.randn(R, n, L, d1, generator=g, dtype=dtype)
    UY = UX + 0.3 * torch.randn(R, n, L, d1, generator=g, dtype=dtype)
    S = torch.zeros(R, n, 3, dtype=torch.bool)
    Z = torch.zeros(R, n, 3, dtype=dtype)
    return Pairs(UX, UY, S, Z, Z)


def _eq5_by_hand(W, b, P, keep, tau, weight_keep=None):
    """g_i = (1/K) sum_k [(l'_p - 1) h_i(Y_k) + sum_s l'_s h_i(Y_s)] grad h_i(X_k), logits from the masked model."""
    R, m, d1 = W.shape
    n, L = P.UX.shape[1], P.UX.shape[2]
    g = torch.zeros_like(W)
    Wm = W * (weight_keep if weight_keep is not None else keep[..., None])
    for r in range(R):
        def h(Wr, U, i):  # h_i(X) = sum_t BReLU_b(<w_i, u^(t)>)  (eq. 4)
            pre = [float(Wr[i] @ U[t]) for t in range(L)]
            return sum(max(v - float(b[r, i]), 0.0) - max(-v - float(b[r, i]), 0.0) for v in pre)
        # (h(X) itself enters eq. (5) only through the logits, which use the masked fX below)
        hY = [[h(W[r], P.UY[r, k], i) for i in range(m)] for k in range(n)]
        fX = [[h(Wm[r], P.UX[r, k], i) for i in range(m)] for k in range(n)]
        fY = [[h(Wm[r], P.UY[r, k], i) for i in range(m)] for k in range(n)]
        for k in range(n):
            sims = [sum(fX[k][i] * fY[s][i] for i in range(m)) / tau for s in range(n)]
            mx = max(sims)
            den = sum(math.exp(v - mx) for v in sims)
            lp = [math.exp(v - mx) / den for v in sims]
            for i in range(m):
                coef = (lp[k] - 1.0) * hY[k][i]
                for s in range(n):
                    if s != k:
                        coef += lp[s] * hY[s][i]
                grad_h = sum((1.0 if abs(float(W[r, i] @ P.UX[r, k, t])) >= float(b[r, i]) else 0.0)
                             * P.UX[r, k, t] for t in range(L))
                g[r, i] += coef * grad_h / n
    return g


@pytest.mark.parametrize("bias", [0.0, 0.4])
def test_faithful_gradient_equals_eq5_by_hand(bias):
    P = _tiny_pairs()
    g = torch.Generator().manual_seed(3)
    W = torch.randn(1, 3, 5, generator=g, dtype=torch.float64)
    W[0, 1] *= 0.1  # the smallest neuron: the one alpha = 1/3 prunes
    b = torch.full((1, 3), bias, dtype=torch.float64)
    cfg = SimConfig(d=3, d1=5, L=2, m=3, n_pairs=4, tau=0.7, prune_alpha=0.34, progress=False)
    keep = prune.neuron_mask(W, cfg.prune_alpha)
    assert keep[0].tolist() == [1.0, 0.0, 1.0]
    got, _, _ = gradient(W, b, P, cfg, keep)
    want = _eq5_by_hand(W, b, P, keep, cfg.tau)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-12)
    assert float(got[0, 1].norm()) > 0  # the pruned neuron is still updated


def test_faithful_weight_mask_equals_eq5_by_hand():
    P = _tiny_pairs(seed=5)
    W = torch.randn(1, 3, 5, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    b = torch.full((1, 3), 0.2, dtype=torch.float64)
    cfg = SimConfig(d=3, d1=5, L=2, m=3, n_pairs=4, tau=1.3, prune_alpha=0.4, prune_unit="weight",
                    progress=False)
    wkeep = prune.weight_mask(W, cfg.prune_alpha)
    got, _, _ = gradient(W, b, P, cfg, wkeep)
    want = _eq5_by_hand(W, b, P, None, cfg.tau, weight_keep=wkeep)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- autograd equivalences

def _h(W, U, b):
    """eq. (4) written out: h_i(X) = sum_r ReLU(<w_i,u^(r)> - b_i) - ReLU(-<w_i,u^(r)> - b_i)."""
    s = torch.einsum("rid,rnld->rnli", W, U)
    bb = b[:, None, None, :]
    return (torch.relu(s - bb) - torch.relu(-s - bb)).sum(2)


def _autograd(W, b, P, tau, tau_scaled, mask=None):
    """Gradient of tau*InfoNCE (or InfoNCE) with StopGrad on f(Y), through theta ⊙ mask."""
    Wv = W.clone().requires_grad_(True)
    Wm = Wv if mask is None else Wv * (mask.unsqueeze(-1) if mask.dim() == 2 else mask)   # theta ⊙ M
    FX = _h(Wm, P.UX, b)
    FY = _h(Wm, P.UY, b).detach()  # StopGrad (eq. 2)
    lg = FX @ FY.transpose(-1, -2) / tau
    loss = (-(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)).mean(-1).sum()
            * (tau if tau_scaled else 1.0))
    (g,) = torch.autograd.grad(loss, Wv)
    return g


@pytest.mark.parametrize("bias,tau,tau_scaled", [(0.0, 1.0, True), (0.3, 0.5, True), (0.3, 2.0, False)])
def test_vanilla_gradient_is_autograd_of_infonce_with_stopgrad(bias, tau, tau_scaled):
    P = _tiny_pairs(seed=1, R=2, n=6, L=3, d1=7)
    W = torch.randn(2, 4, 7, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    b = torch.full((2, 4), bias, dtype=torch.float64)
    cfg = SimConfig(d=4, d1=7, L=3, m=4, n_pairs=6, tau=tau, tau_scaled=tau_scaled, progress=False)
    got, loss, _ = gradient(W, b, P, cfg, None)
    torch.testing.assert_close(got, _autograd(W, b, P, tau, tau_scaled), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("unit", ["neuron", "weight"])
@pytest.mark.parametrize("bias", [0.0, 0.3])
def test_literal_gradient_is_autograd_through_masked_weights(unit, bias):
    P = _tiny_pairs(seed=4, R=2, n=6, L=3, d1=7)
    W = torch.randn(2, 5, 7, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    b = torch.full((2, 5), bias, dtype=torch.float64)
    cfg = SimConfig(d=4, d1=7, L=3, m=5, n_pairs=6, tau=0.8, prune_alpha=0.4, prune_unit=unit,
                    prune_backward="literal", progress=False)
    keep = prune.mask_for(W, cfg.prune_alpha, unit)
    got, _, _ = gradient(W, b, P, cfg, keep)
    torch.testing.assert_close(got, _autograd(W, b, P, cfg.tau, True, keep), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("bias", [0.0, 0.3])
def test_pruned_neurons_gradient_faithful_nonzero_literal_zero(bias):
    P = _tiny_pairs(seed=9, R=2, n=6, L=3, d1=7)
    W = torch.randn(2, 5, 7, generator=torch.Generator().manual_seed(10), dtype=torch.float64)
    b = torch.full((2, 5), bias, dtype=torch.float64)
    base = SimConfig(d=4, d1=7, L=3, m=5, n_pairs=6, prune_alpha=0.4, progress=False)
    keep = prune.neuron_mask(W, base.prune_alpha)
    pruned = keep == 0
    assert int(pruned.sum()) == 2 * 2
    g_f, _, _ = gradient(W, b, P, base, keep)
    g_l, _, _ = gradient(W, b, P, base.replace(prune_backward="literal"), keep)
    assert torch.all(g_f.norm(dim=-1)[pruned] > 0)
    assert torch.all(g_l[pruned] == 0)
    # unpruned neurons differ between the two only through h(Y) of the pruned neurons, i.e. not at all
    torch.testing.assert_close(g_f[~pruned], g_l[~pruned])


# ---------------------------------------------------------------- training loop

def test_alpha_zero_is_bit_identical_to_vanilla():
    cfg = SimConfig(**TINY)
    W0 = train(cfg).W
    for unit in ("neuron", "weight"):
        for back in ("faithful", "literal"):
            W = train(cfg.replace(prune_alpha=0.0, prune_unit=unit, prune_backward=back)).W
            assert torch.equal(W, W0), (unit, back)


def test_branch_from_checkpoint_with_alpha_zero_is_bit_identical():
    cfg = SimConfig(**TINY)
    full = train(cfg)
    half = train(cfg.replace(steps=12))
    branch = train(cfg.replace(prune_alpha=0.0, prune_start=12), resume=half)
    assert torch.equal(branch.W, full.W)
    assert branch.history.steps[-1] == full.history.steps[-1] == cfg.steps
    assert torch.equal(branch.history.coef[-1], full.history.coef[-1])


def test_pruning_changes_training_only_from_prune_start():
    cfg = SimConfig(**TINY)
    vanilla = train(cfg)
    late = train(cfg.replace(prune_alpha=0.4, prune_start=cfg.steps))  # never takes effect
    assert torch.equal(late.W, vanilla.W)
    pruned = train(cfg.replace(prune_alpha=0.4, prune_start=10))
    assert not torch.equal(pruned.W, vanilla.W)
    k = cfg.record_every
    for t in range(0, 10, k):  # identical history before the mask starts
        i = pruned.history.steps.index(t)
        assert torch.equal(pruned.history.coef[i], vanilla.history.coef[i])


# The training loop against Algorithm 1 written out (gradient by autograd, not by train.gradient):
# tests/test_science_training.py::test_training_loop_matches_algorithm1_by_autograd.


# ---------------------------------------------------------------- the 2x2 mask control (issue 14)

def _masker(alpha, rule, schedule, reps=(0,), seed=0, start=0, every=1, unit="neuron"):
    n = len(reps)
    return prune.Masker([alpha] * n, [rule == "random"] * n, [schedule == "static"] * n, list(reps), seed, start,
                        every, unit)


def _hand_W():
    """Five neurons with norms 5, 1, 4, 2, 3 (one replicate, d1 = 2)."""
    return torch.tensor([[[3.0, 4.0], [1.0, 0.0], [0.0, 4.0], [0.0, 2.0], [3.0, 0.0]]])


def test_mask_for_dispatches_on_the_unit():
    """Hand-made: neuron norms 5, 1, 4, 2, 3; alpha = 0.4 drops 2 units: neurons 1 and 3 ("neuron"), or the
    4 zero weights of the 10 ("weight", ties broken by the lower flat index)."""
    W = _hand_W()
    assert prune.mask_for(W, 0.4, "neuron").tolist() == [[1.0, 0.0, 1.0, 0.0, 1.0]]
    assert prune.mask_for(W, 0.4, "weight").tolist() == [[[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]]


def test_config_random_rule_prunes_random_neurons_not_the_smallest():
    """prune_mask = "random" reaches the masker: over 8 replicates the 2 pruned neurons of _hand_W are not always the
    two smallest (the chance that 8 uniform draws of 2 of 5 all hit {1, 3} is 1e-8), and each row prunes exactly 2."""
    W = _hand_W().expand(8, 5, 2)
    cfg = SimConfig(d=3, d1=3, m=5, prune_alpha=0.4, prune_mask="random", prune_start=0, progress=False)
    keep = prune.Masker.from_config(cfg, range(8)).at(W, 0)
    magnitude = prune.Masker.from_config(cfg.replace(prune_mask="magnitude"), range(8)).at(W, 0)
    assert (keep == 0).sum(-1).tolist() == [2] * 8 and (magnitude == 0).sum(-1).tolist() == [2] * 8
    assert torch.equal(magnitude[:, [1, 3]], torch.zeros(8, 2)) and not torch.equal(keep, magnitude)


def test_magnitude_cells_on_hand_made_weights():
    W = _hand_W()
    dyn, sta = _masker(0.4, "magnitude", "dynamic", start=2), _masker(0.4, "magnitude", "static", start=2)
    assert dyn.at(W, 1) is None and sta.at(W, 1) is None                    # before the branch point
    for mk in (dyn, sta):
        assert mk.at(W, 2).tolist() == [[1.0, 0.0, 1.0, 0.0, 1.0]]          # norms 1 and 2 dropped
    W2 = W.clone()
    W2[0, 1] *= 10.0                                                        # neuron 1 grows to norm 10
    W2[0, 0] /= 10.0                                                        # neuron 0 shrinks to norm 0.5
    assert dyn.at(W2, 3).tolist() == [[0.0, 1.0, 1.0, 0.0, 1.0]]            # dynamic follows the weights
    assert sta.at(W2, 3).tolist() == [[1.0, 0.0, 1.0, 0.0, 1.0]]            # static stays fixed
    assert sta.final(W2, 9).tolist() == [[1.0, 0.0, 1.0, 0.0, 1.0]]
    # one masker with a dynamic and a static row (the 2x2 control batches its cells so): each row keeps its rule
    mixed = prune.Masker([0.4, 0.4], [False, False], [False, True], [0, 1], 0, 2, 1, "neuron")
    assert mixed.at(W.expand(2, 5, 2), 2).tolist() == [[1.0, 0.0, 1.0, 0.0, 1.0]] * 2
    assert mixed.at(W2.expand(2, 5, 2), 3).tolist() == [[0.0, 1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0, 1.0]]
    assert torch.equal(prune.Masker.from_config(SimConfig(d=3, d1=3, m=5, prune_alpha=0.4), [0]).at(W2, 0),
                       prune.neuron_mask(W2, 0.4))                          # Algorithm 1's mask


def test_magnitude_weight_unit_matches_weight_mask():
    W = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(11))
    mk = _masker(0.3, "magnitude", "dynamic", reps=(0, 1, 2), unit="weight")
    assert torch.equal(mk.at(W, 0), prune.weight_mask(W, 0.3))


def test_random_cells_drop_the_same_count_and_redraw_only_when_dynamic():
    W = _hand_W().expand(2, 5, 2).clone()
    dyn = _masker(0.4, "random", "dynamic", reps=(0, 1), start=3)
    sta = _masker(0.4, "random", "static", reps=(0, 1), start=3)
    masks_dyn = [dyn.at(W, t).clone() for t in range(3, 23)]
    masks_sta = [sta.at(W, t).clone() for t in range(3, 23)]
    for m_ in masks_dyn + masks_sta:
        assert torch.all((m_ == 0).sum(-1) == 2)                            # round(0.4 * 5) units, as Alg. 1
    assert all(torch.equal(m_, masks_sta[0]) for m_ in masks_sta)            # static: fixed at the branch point
    assert torch.equal(masks_sta[0], masks_dyn[0])                          # both drawn from (seed, rep, start)
    assert len({tuple(m_[0].tolist()) for m_ in masks_dyn}) > 1             # dynamic: redrawn
    assert not torch.equal(masks_dyn[0][0], masks_dyn[0][1])                # replicates draw independently
    # the draw ignores the weights: a magnitude ordering is not used
    assert torch.equal(_masker(0.4, "random", "dynamic", reps=(0, 1), start=3).at(-W * 7, 3), masks_dyn[0])


def test_random_masks_draw_the_same_under_the_same_seed_in_any_batch():
    W = torch.randn(4, 10, 3, generator=torch.Generator().manual_seed(0))
    a = _masker(0.3, "random", "dynamic", reps=(0, 1, 2, 3), seed=7)
    b = _masker(0.3, "random", "dynamic", reps=(0, 1, 2, 3), seed=7)
    alone = _masker(0.3, "random", "dynamic", reps=(2,), seed=7)
    other = _masker(0.3, "random", "dynamic", reps=(0, 1, 2, 3), seed=8)
    for t in range(5):
        ma = a.at(W, t)
        assert torch.equal(ma, b.at(W, t))
        assert torch.equal(ma[2:3], alone.at(W[2:3], t))                    # replicate 2 alone or in a batch
        assert not torch.equal(ma, other.at(W, t))


def test_rows_of_one_batch_may_differ_in_ratio_rule_and_schedule():
    W = _hand_W().expand(4, 5, 2).clone()
    mk = prune.Masker([0.0, 0.2, 0.4, 0.6], [False, True, False, True], [False, False, True, True],
                      [0, 0, 0, 0], 0, 0, 1, "neuron")
    keep = mk.at(W, 0)
    assert (keep == 0).sum(-1).tolist() == [0, 1, 2, 3]
    assert keep[2].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert torch.equal(mk.rows(2, 4).at(W[2:], 0), keep[2:])


def test_alpha_zero_gives_no_mask_in_every_cell():
    for rule in prune.MASK_RULES:
        for schedule in prune.SCHEDULES:
            mk = _masker(0.0, rule, schedule, reps=(0, 1))
            assert mk.at(_hand_W().expand(2, 5, 2), 0) is None and mk.final(_hand_W(), 1) is None


@pytest.mark.parametrize("rule", prune.MASK_RULES)
@pytest.mark.parametrize("schedule", prune.SCHEDULES)
def test_alpha_zero_is_bit_identical_to_no_pruning_in_every_cell(rule, schedule):
    cfg = SimConfig(**TINY)
    W0 = train(cfg).W
    for unit in ("neuron", "weight"):
        for back in ("faithful", "literal"):
            c = cfg.replace(prune_alpha=0.0, prune_mask=rule, prune_schedule=schedule, prune_unit=unit,
                            prune_backward=back)
            assert torch.equal(train(c).W, W0), (unit, back)
    # and an all-keep row inside a pruning batch (a mask of ones) changes nothing either
    mk = prune.Masker([0.0, 0.4], [rule == "random"] * 2, [schedule == "static"] * 2, [0, 1], 0, 0, 1, "neuron")
    two = train(cfg.replace(R=2), masker=mk)
    assert torch.equal(two.W[0], W0[0]) and not torch.equal(two.W[1], W0[1])


@pytest.mark.parametrize("rule", prune.MASK_RULES)
def test_static_mask_stays_fixed_through_a_literal_branch(rule):
    """Under the literal backward a pruned neuron gets no gradient, so over a branch with a static mask the
    neurons pruned at the branch point only decay: W_T = (1 - eta lambda)^T W_Ta, exactly those and no others."""
    cfg = SimConfig(**{**TINY, "steps": 30}, bias="none")     # no BReLU gate: every kept neuron gets gradient
    base = train(cfg.replace(steps=12))
    branch = cfg.replace(prune_alpha=0.4, prune_start=12, prune_backward="literal", prune_mask=rule,
                         prune_schedule="static")
    out = train(branch, resume=base)
    pruned = prune.Masker.from_config(branch, base.replicates).at(base.W, 12) == 0       # (R, m)
    decay = torch.full((), 1.0 - cfg.lr * cfg.weight_decay) ** 18
    torch.testing.assert_close(out.W[pruned], decay * base.W[pruned])
    moved = (out.W - decay * base.W).norm(dim=-1) > 1e-6 * base.W.norm(dim=-1)
    assert torch.equal(moved, ~pruned)


def test_one_batch_of_cells_equals_each_cell_trained_alone():
    cfg = SimConfig(**{**TINY, "steps": 24, "R": 2})
    base = train(cfg.replace(steps=10))
    cells = [(r, s, a) for r in prune.MASK_RULES for s in prune.SCHEDULES for a in (0.2, 0.6)]
    n = len(cells)
    def rep(x):
        return x.repeat(n, *[1] * (x.dim() - 1))                       # the checkpoint once per cell
    pairs = Pairs(*(rep(getattr(base.pairs, f)) for f in ("UX", "UY", "S", "ZX", "ZY")))
    stacked = Run(cfg, base.replicates * n, rep(base.M), rep(base.W), rep(base.T1), base.step, History(), pairs,
                  rep(base.W0))
    def per_row(f):
        return [f(c) for c in cells for _ in base.replicates]
    mk = prune.Masker(per_row(lambda c: c[2]), per_row(lambda c: c[0] == "random"),
                      per_row(lambda c: c[1] == "static"), stacked.replicates, cfg.seed, 10, 1, "neuron")
    big = train(cfg.replace(prune_start=10), resume=stacked, masker=mk)
    for k, (rule, schedule, a) in enumerate(cells):
        alone = train(cfg.replace(prune_alpha=a, prune_start=10, prune_mask=rule, prune_schedule=schedule),
                      resume=base)
        torch.testing.assert_close(big.W[2 * k:2 * k + 2], alone.W, rtol=1e-5, atol=1e-7)


def test_a_fixed_masker_keeps_its_mask_from_start_on_in_the_weights_dtype():
    """FixedMasker by hand: no mask before `start`, its keep-mask (as W's dtype) from `start` on and at the final
    evaluation, rows sliced as a chunk, and no mask at all when it keeps every neuron."""
    keep = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    fm = prune.FixedMasker(keep, start=5)
    W = torch.ones(2, 3, 4, dtype=torch.float64)
    assert fm.prunes and fm.at(W, 4) is None
    m = fm.at(W, 5)
    assert m.dtype == torch.float64 and torch.equal(m, keep.double())
    assert torch.equal(fm.final(W, 2), keep.double())             # evaluated as if at `start` at the latest
    assert torch.equal(fm.rows(1, 2).at(W[1:2], 9), keep[1:2].double())
    everyone = prune.FixedMasker(torch.ones(2, 3), start=0)
    assert not everyone.prunes and everyone.at(W, 3) is None and everyone.final(W, 3) is None


def test_a_fixed_masker_multiplies_the_inner_maskers_mask():
    """With an inner Masker (Algorithm 1's rows), the fixed rows' mask times the inner mask; before `start` the inner
    mask alone; a fixed mask that keeps everyone passes the inner mask through unchanged."""
    W = torch.tensor([[[3.0], [1.0], [2.0], [4.0]], [[1.0], [2.0], [3.0], [4.0]]])    # (2, 4, 1): norms per neuron
    inner = prune.Masker([0.25, 0.0], [False, False], [False, False], [0, 1], 0, start=0, every=1, unit="neuron")
    want_inner = torch.tensor([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])               # row 0 drops its smallest
    keep = torch.tensor([[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
    fm = prune.FixedMasker(keep, start=2, inner=inner)
    assert torch.equal(fm.at(W, 1), want_inner)
    assert torch.equal(fm.at(W, 2), keep * want_inner)
    inner2 = prune.Masker([0.25, 0.0], [False, False], [False, False], [0, 1], 0, start=0, every=1, unit="neuron")
    passthrough = prune.FixedMasker(torch.ones(2, 4), start=0, inner=inner2)
    assert torch.equal(passthrough.at(W, 3), want_inner)
    assert torch.equal(fm.rows(0, 1).at(W[:1], 2), (keep * want_inner)[:1])


@pytest.mark.parametrize("device, dtype", [("meta", torch.float32), ("cpu", torch.float64)])
def test_masks_are_made_on_the_weights_device_in_their_dtype(device, dtype):
    """Every mask is made where the weights live, in their dtype (on a GPU a mask made on the host would be copied at
    every step; the `meta` device stands in for one here: it has no data, only devices, shapes and dtypes)."""
    W = torch.randn(3, 6, 4, dtype=dtype).to(device)
    for mask in (prune.neuron_mask(W, 0.5), prune.weight_mask(W, 0.5), prune.mask_for(W, 0.5, "neuron")):
        assert mask.device == W.device and mask.dtype == dtype
    assert prune.magnitude_rank(W, "neuron").device == W.device
    for random, static in ((False, False), (True, False), (True, True), (False, True)):
        m = prune.Masker([0.5, 0.25, 0.0], [random] * 3, [static] * 3, [0, 1, 2], 0, start=0, every=1, unit="neuron")
        keep = m.draw(W, 3)
        assert keep.device == W.device and keep.dtype == dtype and keep.shape == (3, 6)
    mixed = prune.Masker([0.5, 0.5], [True, False], [False, False], [0, 1], 0, start=0, every=1, unit="weight")
    keep = mixed.draw(W[:2], 3)
    assert keep.device == W.device and keep.dtype == dtype and keep.shape == (2, 6, 4)


def test_random_masks_draw_from_their_own_stream():
    """A random mask's ranks are a permutation drawn from the stream (seed, replicate, STREAM_MASK, step): never the
    data's streams, and reproducible from those four numbers alone."""
    from imbalanced_cl.sim import data as D
    got = prune.random_rank(7, 3, [0, 2], 11)
    for row, r in zip(got, (0, 2), strict=True):
        assert torch.equal(row, torch.randperm(7, generator=D.generator(3, r, D.STREAM_MASK, 11)))
    assert sorted(got[0].tolist()) == list(range(7))


def test_a_maskers_drop_counts_follow_the_unit_count():
    """The cached drop counts are remade when the number of units changes (another W): n_pruned(alpha, count)."""
    m = prune.Masker([0.5], [False], [False], [0], 0, start=0, every=1, unit="neuron")
    assert int((m.draw(torch.randn(1, 4, 3), 0) == 0).sum()) == prune.n_pruned(0.5, 4) == 2
    assert int((m.draw(torch.randn(1, 10, 3), 0) == 0).sum()) == prune.n_pruned(0.5, 10) == 5


def test_one_chunks_history_concatenates_to_itself():
    """History.concat of a single chunk is that chunk (a run with one chunk), of two the replicates side by side."""
    a = History(steps=[0, 5], loss=[torch.ones(2), torch.zeros(2)])
    one = History.concat([a])
    assert one.steps == [0, 5] and all(torch.equal(x, y) for x, y in zip(one.loss, a.loss, strict=True))
    two = History.concat([a, History(steps=[0, 5], loss=[torch.full((3,), 2.0), torch.full((3,), 3.0)])])
    assert two.steps == [0, 5] and torch.equal(two.loss[1], torch.tensor([0.0, 0, 3, 3, 3]))


def test_a_fixed_maskers_final_mask_and_row_slices_include_the_inner_mask():
    """The evaluation after the last step uses the fixed mask times the inner Masker's final mask; a slice of rows
    slices the inner Masker too (rows 1:3 are not rows 0:3); and the device copy follows W's dtype if W changes."""
    W = torch.tensor([[[3.0], [1.0], [2.0], [4.0]], [[1.0], [2.0], [3.0], [4.0]], [[4.0], [3.0], [2.0], [1.0]]])
    inner = lambda: prune.Masker([0.0, 0.25, 0.5], [False] * 3, [False] * 3, [0, 1, 2], 0, start=0, every=1,  # noqa: E731
                                 unit="neuron")
    want_inner = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    keep = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]])
    fm = prune.FixedMasker(keep, start=0, inner=inner())
    fm.at(W, 6)                                                    # a mask in force during training
    assert torch.equal(fm.final(W.flip(1), 7), keep * want_inner.flip(1))   # the inner rows recomputed at the end
    sliced = prune.FixedMasker(keep, start=0, inner=inner()).rows(1, 3)
    assert torch.equal(sliced.at(W[1:3], 2), (keep * want_inner)[1:3])
    solo = prune.FixedMasker(keep, start=0)
    assert solo.at(W, 1).dtype == torch.float32
    assert solo.at(W.double(), 2).dtype == torch.float64 and solo.at(W, 3).dtype == torch.float32

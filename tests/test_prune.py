"""Algorithm 1: magnitude masks, the faithful (eq. 5) and literal backward, and reduction to vanilla at alpha = 0."""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.sim import prune
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.data import Pairs
from imbalanced_cl.sim.encoder import brelu, embed
from imbalanced_cl.sim.loss import infonce
from imbalanced_cl.sim.train import gradient, train

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
            return sum(float(brelu(Wr[i] @ U[t], b[r, i])) for t in range(L))
        hX = [[h(W[r], P.UX[r, k], i) for i in range(m)] for k in range(n)]
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

def _autograd(W, b, P, tau, tau_scaled, mask=None):
    """Gradient of tau*InfoNCE (or InfoNCE) with StopGrad on f(Y), through theta ⊙ mask."""
    Wv = W.clone().requires_grad_(True)
    Wm = Wv if mask is None else prune.apply_mask(Wv, mask)
    FX = embed(Wm, P.UX, b)[0]
    FY = embed(Wm, P.UY, b)[0].detach()  # StopGrad (eq. 2)
    loss = infonce(FX, FY, tau).sum() * (tau if tau_scaled else 1.0)
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


def _reference_loop(cfg):
    """Algorithm 1 written out with bias='none': mask every prune_every steps from prune_start, decay on full W."""
    from imbalanced_cl.sim import data as D
    from imbalanced_cl.sim.encoder import init_weights
    reps = list(range(cfg.R))
    M = D.make_dictionaries(cfg, reps)
    W = init_weights(cfg, reps)
    P = D.make_pairs(cfg, M, reps)
    b = torch.zeros(cfg.R, cfg.m)
    mask = None
    for t in range(cfg.steps):
        if t >= cfg.prune_start and (t - cfg.prune_start) % cfg.prune_every == 0:
            mask = prune.mask_for(W, cfg.prune_alpha, cfg.prune_unit)
        g, _, _ = gradient(W, b, P, cfg, mask)
        W = (1 - cfg.lr * cfg.weight_decay) * W - cfg.lr * g
    return W


@pytest.mark.parametrize("every,start", [(1, 0), (7, 4), (1000, 3)])
def test_training_loop_matches_algorithm1_written_out(every, start):
    cfg = SimConfig(**{**TINY, "steps": 20}, bias="none", prune_alpha=0.4, prune_every=every,
                    prune_start=start, sampling="fixed")
    torch.testing.assert_close(train(cfg).W, _reference_loop(cfg), rtol=1e-5, atol=1e-7)

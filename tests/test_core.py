"""The simulation core: gradients, StopGrad, data statistics, BReLU and bias, replicates, validation."""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.sim import data, encoder, loss, metrics, theory
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import gradient, train
from imbalanced_cl import stats

TINY = dict(d=6, d1=12, m=5, L=3, n_pairs=16, R=2, steps=5, progress=False, sigma0=0.3, p_scale=3.0)


def _setup(bias=0.0, **kw):
    cfg = SimConfig(**{**TINY, **kw})
    reps = list(range(cfg.R))
    M = data.make_dictionaries(cfg, reps).double()
    W = encoder.init_weights(cfg, reps).double()
    P = data.make_pairs(cfg, M.float(), reps)
    P = data.Pairs(P.UX.double(), P.UY.double(), P.S, P.ZX, P.ZY)
    b = torch.full((cfg.R, cfg.m), float(bias), dtype=torch.float64)
    return cfg, W, P, b


def _h(W, U, b):
    """eq. (4) written out: h_i(X) = sum_r BReLU_{b_i}(<w_i, u^(r)>), BReLU_b(s) = ReLU(s-b) - ReLU(-s-b)."""
    s = torch.einsum("rid,rnld->rnli", W, U)
    bb = b[:, None, None, :]
    return (torch.relu(s - bb) - torch.relu(-s - bb)).sum(2)


def _objective(W, P, b, cfg, mask=None, detach_y=True):
    """tau * InfoNCE (or InfoNCE) from eqs. (1)-(4) written out, StopGrad on f(Y) unless told otherwise."""
    Wm = W if mask is None else W * mask.unsqueeze(-1)
    FX = _h(Wm, P.UX, b)
    FY = _h(Wm, P.UY, b)
    FY = FY.detach() if detach_y else FY
    lg = FX @ FY.transpose(-1, -2) / cfg.tau
    ell = -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)).mean(-1)
    return (cfg.tau * ell if cfg.tau_scaled else ell).sum()


@pytest.mark.parametrize("bias", [0.0, 0.02])
@pytest.mark.parametrize("tau_scaled", [True, False])
def test_gradient_matches_autograd(bias, tau_scaled):
    cfg, W, P, b = _setup(bias=bias, tau=0.7, tau_scaled=tau_scaled)
    g, _, _ = gradient(W, b, P, cfg)
    Wg = W.clone().requires_grad_(True)
    _objective(Wg, P, b, cfg).backward()
    assert torch.allclose(g, Wg.grad, rtol=1e-8, atol=1e-10)


def test_gradient_matches_finite_differences():
    """eq. (21) against central differences of the loss with f(Y) held fixed (StopGrad)."""
    cfg, W, P, b = _setup(bias=0.0, tau=0.5)
    g, _, _ = gradient(W, b, P, cfg)
    FY = _h(W, P.UY, b)

    def f(Wp):
        lg = _h(Wp, P.UX, b) @ FY.transpose(-1, -2) / cfg.tau
        return (cfg.tau * -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)).mean(-1)).sum()

    h = 1e-6
    for idx in [(0, 0, 0), (1, 3, 7), (0, 4, 11)]:
        E = torch.zeros_like(W)
        E[idx] = h
        fd = (f(W + E) - f(W - E)) / (2 * h)
        assert abs(float(fd) - float(g[idx])) < 1e-6 * max(1.0, abs(float(fd)))


def test_stopgrad_blocks_positives_and_negatives():
    """With StopGrad the gradient differs from the one through f(Y) too, and f(Y) itself gets none."""
    cfg, W, P, b = _setup()
    g, _, _ = gradient(W, b, P, cfg)
    Wg = W.clone().requires_grad_(True)
    _objective(Wg, P, b, cfg, detach_y=False).backward()
    assert not torch.allclose(g, Wg.grad, rtol=1e-3)
    FX = encoder.embed(W, P.UX, b)[0].requires_grad_(True)
    FY = encoder.embed(W, P.UY, b)[0].requires_grad_(True)
    loss.infonce(FX, FY, cfg.tau).sum().backward()
    assert FY.grad is None and FX.grad is not None and FX.grad.abs().sum() > 0


def test_dictionary_is_column_orthonormal():
    M = data.haar_dictionary(50, 10, data.generator(0, 0, 0)).double()
    assert torch.allclose(M.T @ M, torch.eye(10, dtype=torch.float64), atol=1e-5)


def test_dictionary_is_gram_schmidt_of_its_gaussian_draw():
    """Oracle for exact Haar: the QR of a Gaussian matrix with a positive R diagonal is Gram-Schmidt of its columns,
    and that Q is Haar-distributed (Mezzadri 2007). Classical Gram-Schmidt by hand on the same draw must give the
    dictionary; a sign fix applied to rows instead of columns stays orthonormal but fails here."""
    d1, d = 12, 5
    M = data.haar_dictionary(d1, d, data.generator(3, 1, 0)).double()
    G = torch.randn(d1, d1, generator=data.generator(3, 1, 0), dtype=torch.float64)
    Q = []
    for k in range(d):
        v = G[:, k].clone()
        for q in Q:
            v -= (q @ G[:, k]) * q
        Q.append(v / v.norm())
    assert torch.allclose(M, torch.stack(Q, 1), atol=1e-6)


def test_kappa_matches_closed_form_under_mean_pooling():
    """With mean pooling U = sum_l x_l, so kappa_j = (L p_j E|z|)^2 / q_j exactly (noise independent across views)."""
    cfg = SimConfig(d=8, d1=16, L=4, attention="mean", p_scale=4.0, eps_profile="geometric", eps_min=0.3,
                    sigma_xi=0.05, progress=False)
    k = theory.kappa_mc(cfg, n=40000, replicates=2)
    # Def. 3.1 by hand: eps_j log-spaced from 1 to 0.3, p_j = 4 eps_j loglog 8 / 8, q_j = 1 - (1 - p_j)^4
    p = torch.tensor([4 * 0.3 ** (j / 7) * math.log(math.log(8)) / 8 for j in range(8)], dtype=torch.float64)
    q = 1 - (1 - p) ** 4
    exact = (cfg.L * p * 0.75) ** 2 / q                      # E|z| = 0.75 for U[0.5, 1]
    assert torch.allclose(k.double(), exact, rtol=0.08)


def test_brelu_and_gate():
    s = torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0])
    assert torch.equal(encoder.brelu(s, 1.0), torch.tensor([-1.0, 0.0, 0.0, 0.0, 1.0]))
    assert torch.equal(encoder.brelu(s, 0.0), s)
    assert torch.equal(encoder.brelu_gate(s, 1.0), torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0]))


def test_replicate_alone_equals_replicate_in_batch():
    cfg = SimConfig(**{**TINY, "R": 8, "steps": 30, "sigma0": 0.05})
    batch = train(cfg)
    alone = train(cfg.replace(R=1), replicates=[5])
    assert torch.equal(batch.M[5], alone.M[0]) and torch.equal(batch.W0[5], alone.W0[0])
    assert torch.equal(batch.pairs.UX[5], alone.pairs.UX[0])
    assert torch.allclose(batch.W[5], alone.W[0], rtol=1e-4, atol=1e-6)
    assert not torch.allclose(batch.W0[4], batch.W0[5])  # replicates really differ


def test_chunking_and_resume_do_not_change_numbers():
    cfg = SimConfig(**{**TINY, "R": 4, "steps": 20, "sigma0": 0.05})
    full = train(cfg)
    chunked = train(cfg.replace(chunk=3))
    assert torch.allclose(full.W, chunked.W, rtol=1e-5, atol=1e-7)
    half = train(cfg.replace(steps=10))
    resumed = train(cfg, resume=half)
    assert torch.allclose(full.W, resumed.W, rtol=1e-5, atol=1e-7)
    assert resumed.history.steps == full.history.steps


def test_same_seed_same_numbers_and_other_seed_differs():
    cfg = SimConfig(**{**TINY, "steps": 10})
    assert torch.equal(train(cfg).W, train(cfg).W)
    assert not torch.allclose(train(cfg).W, train(cfg.replace(seed=1)).W)


@pytest.mark.parametrize("bad, name", [
    (dict(eps_min=-0.1), "eps_min"), (dict(eps_max=0.0), "eps_max"), (dict(d=20, d1=10), "d1"),
    (dict(prune_alpha=1.0), "prune_alpha"), (dict(prune_alpha=-0.1), "prune_alpha"),
    (dict(attention="cosine"), "attention"), (dict(R=0), "R"), (dict(lr=float("nan")), "lr"),
    (dict(eps_min=2.0), "eps_min"), (dict(m=2.5), "m"),
])
def test_bad_parameters_name_the_parameter_and_range(bad, name):
    with pytest.raises(ParameterError) as err:
        SimConfig(**bad)
    assert f"parameter {name}=" in str(err.value) and "allowed" in str(err.value)


def test_metrics_on_hand_made_cases():
    m, lo, hi = stats.mean_ci(torch.tensor([1.0, 2.0, 3.0]))
    assert float(m) == pytest.approx(2.0) and float(hi - m) == pytest.approx(4.3026527 / math.sqrt(3))
    steps = torch.arange(0, 50)
    series = torch.exp(0.03 * steps.double()).unsqueeze(1) * torch.tensor([[1.0, 2.0]])
    assert torch.allclose(metrics.log_slope(series, steps, 0, 50), torch.tensor([0.03, 0.03]), atol=1e-6)
    W = torch.tensor([[[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]]])
    M = torch.eye(3)[:, :2].unsqueeze(0)
    cos = metrics.cosine_matrix(W, M)
    assert torch.allclose(cos, torch.tensor([[[0.6, 0.8], [0.0, 0.0]]]))
    assert torch.allclose(metrics.feature_share(W, M), torch.tensor([[1.0, 0.0]]))
    assert torch.allclose(metrics.perp_norm2(W, M), torch.tensor([[0.0, 4.0]]))
    x = torch.tensor([1.0, 2.0, 4.0, 8.0])
    assert stats.loglog_fit(x, 3 * x ** 1.7)[0] == pytest.approx(1.7)
    share = torch.tensor([[[0.1, 0.6]], [[0.7, 0.2]], [[0.8, 0.9]]])  # (T=3, R=1, m=2)
    assert metrics.stage_time(share, torch.tensor([0, 10, 20])).tolist() == [[10, 0]]


def test_linear_theory_predicts_stage1_rate():
    """In Stage 1 (b = 0) the measured growth follows the parameter-free rate within 25%."""
    cfg = SimConfig(d=10, d1=60, m=30, L=4, R=4, n_pairs=512, steps=25, record_every=1, bias="none",
                    progress=False, eps_profile="two_level", n_minority=0)
    run = train(cfg)
    E = run.history.get("coef").pow(2).sum(2).sqrt()
    rate = metrics.log_slope(E, run.history.get("steps"), 3, 25).mean()
    pred = theory.stage1_rate(cfg, theory.kappa_mc(cfg, n=20000)).mean()
    assert float(rate / pred) == pytest.approx(1.0, abs=0.25)


def test_one_pass_brelu_equals_definition():
    s = torch.randn(3, 4, 5)
    b = torch.rand(5) * 0.5
    act, gate = encoder.brelu_and_gate(s.clone(), b)
    assert torch.allclose(act, encoder.brelu(s, b)) and torch.equal(gate.float(), encoder.brelu_gate(s, b))


def test_perp_ratio_is_one_under_pure_decay_and_nan_without_t1():
    """A run whose perpendicular part only decays gives ratio 1; a replicate with no T1 gives NaN."""
    from imbalanced_cl.claims import stage1
    cfg = SimConfig(**{**TINY, "steps": 30, "record_every": 1, "weight_decay": 0.1, "lr": 0.5})
    run = train(cfg)
    decay = theory.perp_decay(cfg, run.history.get("steps")).float()
    run.history.norm2 = [n * 0 + (p ** 2) * d ** 2 for n, p, d in
                         zip(run.history.norm2, [run.history.norm2[0].sqrt()] * len(decay), decay, strict=True)]
    run.history.coef = [c * 0 for c in run.history.coef]
    ratio = stage1.perp_ratio(run, cfg, torch.tensor([10, -1]))
    assert torch.allclose(ratio[0], torch.tensor(1.0), atol=1e-5) and torch.isnan(ratio[1])


@pytest.mark.parametrize("tau", [1.0, 0.3])
def test_one_pass_loss_equals_definitions(tau):
    """infonce_and_grad (the training hot path): loss of eqs. (1)-(3) written out, eq. (21) = autograd w.r.t. f(X)."""
    g = torch.Generator().manual_seed(3)
    FX, FY, V = (torch.randn(2, 9, 5, generator=g, dtype=torch.float64) * 3 for _ in range(3))
    lo, G, pp = loss.infonce_and_grad(FX, FY, V, tau, tau_scaled=False)
    FXg = FX.clone().requires_grad_(True)
    lg = FXg @ FY.transpose(-1, -2) / tau
    want = -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)).mean(-1)
    (dF,) = torch.autograd.grad(want.sum(), FXg)                  # d InfoNCE / d f(X) with V = f(Y)
    assert torch.allclose(lo, want.detach())
    assert torch.allclose(loss.infonce_and_grad(FX, FY, FY, tau, tau_scaled=False)[1], dF)
    assert torch.allclose(loss.infonce_and_grad(FX, FY, FY, tau, tau_scaled=True)[1], tau * dF)
    assert torch.allclose(pp, torch.softmax(lg.detach(), -1).diagonal(dim1=-2, dim2=-1).mean(-1))
    # the readable definitions agree with the hot path, for any V (eq. 5 uses V = h(Y) of the full model)
    Q = loss.softmax_logits(FX, FY, tau)
    assert torch.allclose(lo, loss.infonce(FX, FY, tau))
    assert torch.allclose(G, loss.grad_features(Q, V, tau, tau_scaled=False))
    assert torch.allclose(loss.infonce_and_grad(FX, FY, V, tau, tau_scaled=True)[1], G * tau)


# ---------------------------------------------------------------------------- sampling, device, namespaces

def test_fresh_pairs_change_every_step_and_branches_share_them():
    """Fresh sampling: step t's pairs depend on (seed, replicate, t) only, so two runs and a resumed branch see the
    same stream; a fixed run reuses one set. Checked by training with lr = 0 (weights frozen) and comparing losses."""
    base = dict(TINY, steps=6, lr=1e-9, weight_decay=0.0, bias="none", record_every=1)
    fresh = train(SimConfig(**base, sampling="fresh")).history.get("loss")
    fixed = train(SimConfig(**base, sampling="fixed")).history.get("loss")
    assert torch.unique(fixed[:-1, 0]).numel() == 1          # one set, the same loss every step
    assert torch.unique(fresh[:, 0]).numel() == fresh.shape[0]  # a new set every step
    half = train(SimConfig(**{**base, "steps": 3}, sampling="fresh"))
    resumed = train(SimConfig(**base, sampling="fresh"), resume=half).history.get("loss")
    torch.testing.assert_close(resumed, fresh)


def test_fresh_replicate_stream_does_not_depend_on_batching():
    cfg = SimConfig(**{**TINY, "steps": 8}, sampling="fresh")
    together = train(cfg)
    alone = train(cfg.replace(R=1), replicates=[1])
    torch.testing.assert_close(alone.W[0], together.W[1], rtol=1e-5, atol=1e-7)


def test_views_have_independent_noise():
    """Assumption 3.3: each view's tokens carry their own noise. With no features (p_scale tiny) and mean attention,
    U_X and U_Y are pure noise averages; their correlation must vanish, while a view with itself correlates fully."""
    cfg = SimConfig(d=5, d1=50, L=1, p_scale=1e-9, sigma_xi=1.0, attention="mean", n_pairs=4000, R=1)
    M = data.make_dictionaries(cfg, [0])
    p = data.make_pairs(cfg, M, [0])
    ux, uy = p.UX[0, :, 0].flatten(), p.UY[0, :, 0].flatten()
    corr = float(torch.corrcoef(torch.stack([ux, uy]))[0, 1])
    assert abs(corr) < 4 / math.sqrt(ux.numel())


def test_training_step_creates_no_cpu_tensor():
    """Run one whole training step (bias, mask, gradient, update) on the `meta` device: any tensor made on the CPU
    inside it would make the mixed-device arithmetic fail."""
    from imbalanced_cl.sim.encoder import bias_at
    from imbalanced_cl.sim.prune import mask_for
    from imbalanced_cl.sim.train import step
    cfg = SimConfig(**TINY, prune_alpha=0.3)
    R, n, L, d1, m = 2, 8, cfg.L, cfg.d1, cfg.m
    meta = torch.device("meta")
    W = torch.empty(R, m, d1, device=meta)
    pairs = data.Pairs(torch.empty(R, n, L, d1, device=meta), torch.empty(R, n, L, d1, device=meta),
                       torch.empty(R, n, cfg.d, dtype=torch.bool, device=meta),
                       torch.empty(R, n, cfg.d, device=meta), torch.empty(R, n, cfg.d, device=meta))
    T1 = torch.zeros(R, dtype=torch.long, device=meta)
    b = bias_at(cfg, W, 5, T1)
    mask = mask_for(W, cfg.prune_alpha, "neuron")
    for linear in (True, False):
        W2, loss, pp = step(W, b, pairs, cfg, mask, None, linear)
        assert W2.device == meta and loss.device == meta and W2.shape == W.shape


def test_unknown_notebook_parameter_names_the_nearest_one():
    ns = {**TINY, "eps_minn": 0.05, "np": math, "_hidden": 1}
    with pytest.raises(ParameterError, match="unknown parameter 'eps_minn'.*did you mean eps_min"):
        SimConfig.from_namespace(ns)
    assert SimConfig.from_namespace(ns, strict=False).eps_min == SimConfig().eps_min


def test_cross_parameter_error_names_both():
    with pytest.raises(ParameterError, match=r"eps_min=0\.5 is invalid \(given eps_max=0\.4\)"):
        SimConfig(eps_max=0.4, eps_min=0.5)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cpu_and_cuda_runs_agree():
    cfg = SimConfig(**{**TINY, "steps": 30}, record_every=1, data_device="cpu")   # the CPU's pairs on both
    cpu, gpu = train(cfg.replace(device="cpu")), train(cfg.replace(device="cuda"))
    torch.testing.assert_close(gpu.history.get("loss"), cpu.history.get("loss"), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(gpu.W, cpu.W, rtol=1e-3, atol=1e-6)
    assert torch.equal(gpu.T1, cpu.T1)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_runs_repeat_exactly():
    cfg = SimConfig(**{**TINY, "steps": 30}, device="cuda")
    assert torch.equal(train(cfg).W, train(cfg).W)


def test_fixed_sampling_reproduces_the_numbers_of_the_first_version():
    """Regression: notebook 01's default size, 2 replicates, sampling = "fixed" on the CPU. The values were printed
    by the code before the device and sampling changes (commit c7daaf2); they must not move."""
    from imbalanced_cl.claims.stage1 import Stage1Config, measured_rates
    # lambda_rule="value": that version's lambda = 0.001 (notebook 01 now defaults to the proof's middle, issue 27)
    cfg = Stage1Config(R=2, d=20, d1=200, m=50, eps_min=0.1, eps_profile="geometric", steps=60, record_every=1,
                       progress=False, sampling="fixed", device="cpu", lambda_rule="value", weight_decay=1e-3)
    run = train(cfg)
    r = measured_rates(run, 5)
    want_first = [[0.06786873191595078, 0.05584501102566719, 0.054697953164577484, 0.05183163657784462],
                  [0.05749715119600296, 0.05400707200169563, 0.05698573216795921, 0.04670930281281471]]
    want_last = [[0.007194600533694029, 0.006915569305419922], [0.0043963962234556675, 0.00577807379886508]]
    torch.testing.assert_close(r[:, :4], torch.tensor(want_first, dtype=r.dtype), rtol=1e-6, atol=0)
    torch.testing.assert_close(r[:, -2:], torch.tensor(want_last, dtype=r.dtype), rtol=1e-5, atol=0)
    assert run.T1.tolist() == [38, 41]
    # The final norm (after T1) moved once, on purpose: the bias now starts at T1 + 1 as Lemma F.3 says (b = 0 for
    # t <= T1; the first version started it at T1, 0.34217506647109985). The Stage-1 rates above did not move.
    assert float(run.W.norm()) == pytest.approx(0.3555065095424652, rel=1e-6)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_pairs_drawn_on_the_gpu_follow_the_same_law():
    """data_device = "run" draws on the GPU: other numbers, the same distribution (support frequency, noise scale)."""
    cfg = SimConfig(d=8, d1=64, L=3, n_pairs=20000, R=1, p_scale=3.0, sigma_xi=0.3, attention="mean")
    M = data.make_dictionaries(cfg, [0])
    cpu = data.make_pairs(cfg, M, [0])
    gpu = data.make_pairs(cfg.replace(data_device="run"), M.cuda(), [0]).to("cpu")
    f_cpu, f_gpu = cpu.realised_frequency()[0], gpu.realised_frequency()[0]
    assert torch.allclose(f_cpu, f_gpu, atol=4 * math.sqrt(0.25 / cfg.n_pairs))
    assert float(cpu.UX.std()) == pytest.approx(float(gpu.UX.std()), rel=0.02)

"""The data model against the paper, with oracles written out here: Def. 3.1 frequencies, Assumptions 3.2-3.4, attention.

Nothing here calls the package's own formulas (token_prob, sample_prob, softmax_scale): every expected value is
computed by hand from the paper's definition, and every measured value comes from the sampler's output.
"""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.sim import data
from imbalanced_cl.sim.config import SimConfig

N = 20000  # samples per frequency check: binomial standard errors of about 0.002


def _latents(cfg, n=N, seed=0):
    return data.sample_latents(cfg, n, data.generator(seed, 0, data.STREAM_TRAIN))


def _def31_p(p_scale, eps, d):
    """Def. 3.1 written out: Pr(z_j^(l) != 0) = min(1, p_scale * eps_j * loglog d / d)."""
    return min(1.0, p_scale * eps * math.log(math.log(d)) / d)


def _within_binomial(freq, p, trials, z=4.5):
    """|freq - p| within z binomial standard errors (a Bernoulli(p) mean over `trials` draws)."""
    sd = math.sqrt(max(p * (1 - p), 0.0) / trials)
    return abs(freq - p) <= z * sd + 1e-9


# ---------------------------------------------------------------- Definition 3.1: token frequencies

@pytest.mark.parametrize("p_scale", [1.0, 3.0])
def test_token_and_sample_frequencies_follow_definition_3_1(p_scale):
    """Each token carries feature j with prob p_j = p_scale eps_j loglog d / d; a sample contains j w.p. 1-(1-p_j)^L."""
    d, L = 10, 4
    cfg = SimConfig(d=d, d1=20, L=L, eps_max=1.0, eps_min=0.3, n_minority=3, p_scale=p_scale, progress=False)
    eps = [1.0] * 7 + [0.3] * 3                          # two-level profile, minority features last
    S, _, zx, zy = _latents(cfg)
    for j in range(d):
        p = _def31_p(p_scale, eps[j], d)                 # p_scale=3: 0.2502 (majority), 0.0751 (minority)
        for z in (zx, zy):
            assert _within_binomial(float((z[:, :, j] != 0).float().mean()), p, N * L), (j, p)
        q = 1 - (1 - p) ** L                             # at least one of L independent tokens
        assert _within_binomial(float(S[:, j].float().mean()), q, N), (j, q)


def test_token_placement_is_independent_across_tokens():
    """Unconditionally the L token indicators of a feature are i.i.d. Bernoulli(p): Pr(two given tokens on) = p^2."""
    cfg = SimConfig(d=10, d1=20, L=4, p_scale=3.0, n_minority=0, progress=False)
    _, _, zx, _ = _latents(cfg)
    p = _def31_p(3.0, 1.0, 10)
    both = float(((zx[:, 0] != 0) & (zx[:, 3] != 0)).float().mean())
    assert _within_binomial(both, p * p, N * cfg.d)


def test_frequency_saturates_at_one():
    """p_scale large: min(1, .) caps majority features at 1, so every token and every sample carries them."""
    d, L = 10, 4
    cfg = SimConfig(d=d, d1=20, L=L, eps_max=1.0, eps_min=0.3, n_minority=5, p_scale=20.0, progress=False)
    S, _, zx, _ = _latents(cfg, n=4000)
    assert _def31_p(20.0, 1.0, d) == 1.0 and bool((zx[:, :, :5] != 0).all()) and bool(S[:, :5].all())
    p_min = _def31_p(20.0, 0.3, d)                       # 0.5004: not capped
    assert _within_binomial(float((zx[:, :, 5:] != 0).float().mean()), p_min, 4000 * L * 5)


def test_geometric_profile_frequencies():
    """eps_profile='geometric': eps_j = eps_max (eps_min/eps_max)^(j/(d-1)), log-spaced, then Def. 3.1."""
    d, L = 8, 3
    cfg = SimConfig(d=d, d1=16, L=L, eps_profile="geometric", eps_max=1.0, eps_min=0.2, p_scale=4.0,
                    progress=False)
    S, _, _, _ = _latents(cfg)
    for j in range(d):
        eps = 1.0 * (0.2 / 1.0) ** (j / (d - 1))
        q = 1 - (1 - _def31_p(4.0, eps, d)) ** L
        assert _within_binomial(float(S[:, j].float().mean()), q, N), j


def test_make_pairs_support_follows_definition_3_1():
    """The training pairs (make_pairs) carry the same frequencies: fraction of samples containing j is 1-(1-p_j)^L."""
    d, L = 10, 4
    cfg = SimConfig(d=d, d1=20, L=L, n_minority=3, eps_min=0.3, p_scale=3.0, n_pairs=8000, R=2, progress=False)
    M = data.make_dictionaries(cfg, [0, 1])
    P = data.make_pairs(cfg, M, [0, 1])
    freq = P.realised_frequency()                       # (R, d)
    for j in range(d):
        q = 1 - (1 - _def31_p(3.0, 1.0 if j < 7 else 0.3, d)) ** L
        assert _within_binomial(float(freq[:, j].mean()), q, 2 * 8000), j
    # the token-summed latents carry the support: Z_j != 0 exactly on S
    assert torch.equal(P.ZX != 0, P.S) and torch.equal(P.ZY != 0, P.S)


# ---------------------------------------------------------------- Assumptions 3.2 and 3.4: signs, magnitudes

def test_pair_structure_signs_and_magnitudes():
    """Both views share support and sign (Ass. 3.4); one sign on every token (Ass. 3.2(ii)); |z| ~ U[lo, hi]."""
    cfg = SimConfig(d=10, d1=20, L=4, p_scale=3.0, mag_lo=0.2, mag_hi=1.0, progress=False)
    S, sign, zx, zy = _latents(cfg)
    Zx, Zy = zx.sum(1), zy.sum(1)
    assert torch.equal(Zx != 0, S) and torch.equal(Zy != 0, S)
    assert torch.equal(torch.sign(Zx), torch.sign(Zy))
    assert bool((torch.sign(zx) * sign.unsqueeze(1) >= 0).all()) and bool((torch.sign(zy) * sign.unsqueeze(1) >= 0).all())
    mags = zx[zx != 0].abs().double()
    assert float(mags.min()) >= 0.2 and float(mags.max()) <= 1.0
    # U[0.2, 1.0]: mean 0.6, variance 0.8^2/12; signs balanced
    assert abs(float(mags.mean()) - 0.6) < 4.5 * math.sqrt(0.64 / 12 / mags.numel())
    s = sign[S].double()
    assert abs(float(s.mean())) < 4.5 / math.sqrt(s.numel())


def test_token_placement_differs_between_views():
    """Ass. 3.4: token placement is drawn per view, so some pairs place a shared feature on different tokens."""
    cfg = SimConfig(d=10, d1=20, L=4, p_scale=3.0, progress=False)
    S, _, zx, zy = _latents(cfg, n=2000)
    differ = ((zx != 0) != (zy != 0)).any(1) & S
    assert float(differ.float().sum()) > 0.2 * float(S.float().sum())


# ---------------------------------------------------------------- Assumption 3.3: noise, per token and per view

def _mean_pool_residuals(sigma, n=4000, d1=32, L=4, seed=0):
    """Under mean attention U = M (Z/L) + mean_l xi_l, so U - M Z/L is the token-averaged noise of each view."""
    cfg = SimConfig(d=8, d1=d1, L=L, attention="mean", sigma_xi=sigma, p_scale=3.0, n_pairs=n, R=1,
                    seed=seed, progress=False)
    M = data.make_dictionaries(cfg, [0])
    P = data.make_pairs(cfg, M, [0])
    M0 = M[0].double()
    RX = P.UX[0, :, 0].double() - (P.ZX[0].double() / L) @ M0.T
    RY = P.UY[0, :, 0].double() - (P.ZY[0].double() / L) @ M0.T
    return RX, RY


def test_noise_is_independent_between_the_two_views():
    """Ass. 3.3: xi and xi+ are drawn independently, so the views' residuals are uncorrelated (corr ~ N(0, 1/(n d1)))."""
    RX, RY = _mean_pool_residuals(0.1)
    a, b = RX.flatten(), RY.flatten()
    corr = float(((a - a.mean()) * (b - b.mean())).mean() / (a.std() * b.std()))
    assert abs(corr) < 5 / math.sqrt(a.numel()), corr


def test_noise_variance_is_sigma_squared_per_token():
    """Each token's xi ~ N(0, sigma^2 I), independent over tokens: the L-token average has variance sigma^2 / L."""
    sigma, L = 0.1, 4
    RX, RY = _mean_pool_residuals(sigma, L=L)
    for R_ in (RX, RY):
        var = float(R_.pow(2).mean())                   # mean zero by construction
        want = sigma ** 2 / L                           # 0.0025
        assert abs(var / want - 1) < 5 * math.sqrt(2 / R_.numel()), var
        assert abs(float(R_.mean())) < 5 * math.sqrt(want / R_.numel())


def test_noise_free_tokens_are_exactly_m_z():
    """sigma_xi = 0: x = M z (eq. 6), so the mean-pooled output is exactly M Z / L."""
    RX, RY = _mean_pool_residuals(0.0, n=500)
    assert float(RX.abs().max()) < 1e-5 and float(RY.abs().max()) < 1e-5


# ---------------------------------------------------------------- eq. (4): frozen identity attention by hand

def _two_tokens():
    x1, x2 = [2.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]   # <x1,x1> = 4, <x1,x2> = 2, <x2,x2> = 2
    return torch.tensor([[x1, x2]])                        # (n=1, L=2, d1=4)


def test_softmax_attention_by_hand_default_scale():
    """W_Q = W_K = W_V = I, s = 1/sqrt(d1) = 1/2: row 1 logits (2, 1), row 2 logits (1, 1)."""
    cfg = SimConfig(d=3, d1=4, L=2, attention="softmax", progress=False)
    a = math.e / (math.e + 1)                              # softmax(2, 1)[0] = 0.7311
    want = torch.tensor([[[2 * a + (1 - a), 1 - a, 0.0, 0.0],   # u1 = a x1 + (1-a) x2
                          [1.5, 0.5, 0.0, 0.0]]])               # u2 = (x1 + x2) / 2
    torch.testing.assert_close(data.attention(_two_tokens(), cfg), want, rtol=1e-6, atol=1e-6)


def test_softmax_attention_by_hand_explicit_scale():
    """attn_scale = 1 is used as given: row 1 logits (4, 2), so u1 = e^2/(e^2+1) x1 + 1/(e^2+1) x2."""
    cfg = SimConfig(d=3, d1=4, L=2, attention="softmax", attn_scale=1.0, progress=False)
    a = math.e ** 2 / (math.e ** 2 + 1)                    # 0.8808
    want = torch.tensor([[[2 * a + (1 - a), 1 - a, 0.0, 0.0], [1.5, 0.5, 0.0, 0.0]]])
    torch.testing.assert_close(data.attention(_two_tokens(), cfg), want, rtol=1e-6, atol=1e-6)


def test_softmax_scale_follows_d1():
    """d1 = 16: s = 1/4, so a token pair with <x1,x1> = 8, <x1,x2> = 4 gives row-1 logits (2, 1)."""
    cfg = SimConfig(d=3, d1=16, L=2, attention="softmax", progress=False)
    X = torch.zeros(1, 2, 16)
    X[0, 0, 0], X[0, 0, 1] = 2.0, 2.0                      # |x1|^2 = 8
    X[0, 1, 0] = 2.0                                       # <x1,x2> = 4, |x2|^2 = 4: row-2 logits (1, 1)
    a = math.e / (math.e + 1)
    u = data.attention(X, cfg)[0]
    torch.testing.assert_close(u[0], a * X[0, 0] + (1 - a) * X[0, 1], rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(u[1], 0.5 * (X[0, 0] + X[0, 1]), rtol=1e-6, atol=1e-6)


def test_mean_attention_by_hand():
    """attention='mean': every u^(r) is the token average (the proofs' approximation, eq. 98)."""
    cfg = SimConfig(d=3, d1=4, L=2, attention="mean", progress=False)
    want = torch.tensor([[[1.5, 0.5, 0.0, 0.0], [1.5, 0.5, 0.0, 0.0]]])
    torch.testing.assert_close(data.attention(_two_tokens(), cfg), want)


def test_dictionary_is_column_orthonormal_and_delocalised():
    """M is the first d columns of a Haar orthogonal matrix: M^T M = I and no coordinate dominates."""
    cfg = SimConfig(d=10, d1=100, R=2, progress=False)
    M = data.make_dictionaries(cfg, [0, 1]).double()
    for r in range(2):
        torch.testing.assert_close(M[r].T @ M[r], torch.eye(10, dtype=torch.float64), atol=1e-5, rtol=0)
    assert float(M.abs().max()) < 5 * math.sqrt(math.log(100) / 100)   # ||M_j||_inf = O~(1/sqrt(d1))
    assert not torch.allclose(M[0], M[1])                              # replicates own their dictionaries


def test_the_geometric_profile_spaces_eps_evenly_in_log_from_eps_max_to_eps_min():
    """eps_profile='geometric': eps_j = eps_max (eps_min / eps_max)^(j / (d - 1)), in float64, d of them."""
    cfg = SimConfig(d=5, eps_max=1.0, eps_min=0.01, eps_profile="geometric")
    eps = data.eps_vector(cfg)
    want = torch.tensor([1.0 * (0.01 / 1.0) ** (j / 4) for j in range(5)], dtype=torch.float64)
    assert eps.dtype == torch.float64 and eps.shape == (5,)
    assert torch.allclose(eps, want, rtol=1e-12)


def test_a_batch_generator_is_seeded_from_the_seed_sequence_of_its_whole_key():
    """The GPU's one-stream-per-batch generator: its seed is the first 64-bit word of numpy's SeedSequence over (seed,
    the batch tag, purpose, extra, the batch's length and replicates), reduced below 2^63 - 1 (torch's seed range);
    over eight seeds some words lie above 2^63, so the reduction is exercised."""
    import numpy as np
    seeds = []
    for seed in range(8):
        key = [seed, data._BATCH_TAG, 2, 1, 3, 0, 4, 5]
        word = int(np.random.SeedSequence(key).generate_state(1, dtype=np.uint64)[0])
        g = data.batch_generator(seed, [0, 4, 5], purpose=2, extra=1)
        assert g.initial_seed() == word % (2 ** 63 - 1)
        seeds.append(word)
    assert any(w >= 2 ** 63 for w in seeds)
    assert data.batch_generator(0, [0, 4], 2, 1).initial_seed() != data.batch_generator(0, [4, 0], 2, 1).initial_seed()

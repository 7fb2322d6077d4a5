"""The data model against the paper, with oracles written out here: Def. 3.1 frequencies, Assumptions 3.2-3.4,
attention.

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
    assert (bool((torch.sign(zx) * sign.unsqueeze(1) >= 0).all())
            and bool((torch.sign(zy) * sign.unsqueeze(1) >= 0).all()))
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
    """Ass. 3.3: xi and xi+ are drawn independently, so the views' residuals are uncorrelated
    (corr ~ N(0, 1/(n d1)))."""
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


# ---------------------------------------------------------------- the GPU's batched draw: Philox4x32-10 (issue 48)

# Random123's known answers for Philox4x32-10 (its kat_vectors file): (counter, key) -> the four output words.
PHILOX_KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
              ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
              ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
               (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


def test_philox_gives_random123s_known_answers_on_ints_and_on_a_batch_of_tensors():
    """philox4x32 against Random123's published known-answer vectors: on Python ints, and on the three counters
    stacked as int64 tensors (one vectorised call gives each counter its own answer); on `meta` only the shape."""
    from imbalanced_cl.sim import philox
    for ctr, key, want in PHILOX_KAT:
        assert tuple(philox.philox4x32(*ctr, *key)) == want
    for k in range(2):           # the key is a pair of ints: one call per key, a batch of counters each
        ctrs = [torch.tensor([c[w] for c, key, _ in PHILOX_KAT if key == PHILOX_KAT[k][1]]) for w in range(4)]
        got = philox.philox4x32(*ctrs, *PHILOX_KAT[k][1])
        assert [int(g[0]) for g in got] == list(PHILOX_KAT[k][2])
    wide = philox.philox4x32(torch.zeros(5, 1, dtype=torch.int64), 0, torch.zeros(1, 3, dtype=torch.int64), 0, 0, 0)
    assert all(w.shape == (5, 3) and bool((w == want).all()) for w, want in zip(wide, PHILOX_KAT[0][2], strict=True))
    meta = philox.philox4x32(torch.arange(7, device="meta"), 1, 2, 3, 4, 5)
    assert all(w.device.type == "meta" and w.shape == (7,) for w in meta)


def _batched(kind, n, replicates=(0, 7), extra=5, purpose=data.STREAM_TRAIN, seed=3):
    return data.batched_draws(seed, [(kind, (n,))], list(replicates), purpose, extra, "cpu")[0]


def test_batched_uniforms_follow_u01_by_mean_variance_and_ks():
    """400,000 uniforms from two replicates: on the 2^-24 grid in [0, 1), mean 1/2 and variance 1/12 within four
    standard errors (closed forms of U(0, 1)), a Kolmogorov-Smirnov test against U(0, 1) (scipy.stats) not rejected at
    0.1%, and no lag-1 correlation beyond four standard errors."""
    from scipy import stats
    u = _batched("u", 200_000).double()
    n = u.numel()
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
    assert torch.equal(u * 2 ** 24, (u * 2 ** 24).round())
    assert abs(float(u.mean()) - 0.5) < 4 * math.sqrt(1 / 12 / n)
    assert abs(float(u.var()) - 1 / 12) < 4 * math.sqrt(1 / 180 / n)      # Var((U - 1/2)^2) = 1/80 - 1/144 = 1/180
    assert stats.kstest(u.flatten().numpy(), "uniform").pvalue > 1e-3
    flat = u.flatten() - 0.5
    assert abs(float((flat[1:] * flat[:-1]).mean()) / (1 / 12)) < 4 / math.sqrt(n)


def test_batched_normals_follow_n01_and_box_mullers_pairs_are_independent():
    """400,002 normals (an odd count per replicate: the last Philox block is cut): mean 0 and variance 1 within four
    standard errors, fourth moment 3 within four, a KS test against N(0, 1) not rejected at 0.1%, and the two
    normals of each Box-Muller pair uncorrelated, their squares too (independent N(0, 1) pairs)."""
    from scipy import stats
    z = _batched("n", 200_001).double()
    n = z.numel()
    assert z.shape == (2, 200_001) and bool(torch.isfinite(z).all())
    assert abs(float(z.mean())) < 4 / math.sqrt(n)
    assert abs(float(z.var()) - 1.0) < 4 * math.sqrt(2 / n)
    assert abs(float(z.pow(4).mean()) - 3.0) < 4 * math.sqrt(96 / n)      # Var(Z^4) = 105 - 9
    assert stats.kstest(z.flatten().numpy(), "norm").pvalue > 1e-3
    a, b = z[:, :-1:2].flatten(), z[:, 1::2].flatten()
    assert abs(float((a * b).mean())) < 4 / math.sqrt(a.numel())
    assert abs(float(((a * a - 1) * (b * b - 1)).mean()) / 2.0) < 4 / math.sqrt(a.numel())


def test_batched_streams_of_other_replicates_steps_purposes_and_seeds_are_uncorrelated():
    """Replicate 0 against replicate 7, step 5 against step 6, the train against the test purpose, seed 3 against 4:
    each pair of streams is uncorrelated within four standard errors, so no two of them repeat one another."""
    base = _batched("n", 50_000, replicates=(0,))[0].double()
    others = [_batched("n", 50_000, replicates=(7,)), _batched("n", 50_000, replicates=(0,), extra=6),
              _batched("n", 50_000, replicates=(0,), purpose=data.STREAM_TEST),
              _batched("n", 50_000, replicates=(0,), seed=4)]
    for other in others:
        assert abs(float((base * other[0].double()).mean())) < 4 / math.sqrt(50_000)


def test_a_batched_draw_refuses_a_field_its_counter_cannot_hold_in_one_line():
    """Each field of the counter has its width (replicate and step 32 bits, purpose 16, seed 64): beyond, one line
    naming the field."""
    from imbalanced_cl.validate import ParameterError
    plan = [("u", (4,))]
    for kwargs, name in ((dict(seed=-1), "seed"), (dict(seed=2 ** 64), "seed"), (dict(extra=2 ** 32), "extra"),
                         (dict(purpose=2 ** 16), "purpose"), (dict(replicates=[0, 2 ** 32]), "replicate")):
        args = {"seed": 0, "plan": plan, "replicates": [0], "purpose": 2, "extra": 1, "where": "cpu", **kwargs}
        with pytest.raises(ParameterError, match=f"parameter {name}="):
            data.batched_draws(**args)


def test_a_batched_draw_runs_on_the_meta_device_without_reading_a_value(monkeypatch):
    """On `meta` (shapes, no values) the batched draw gives every plan entry its shape: no step of it reads a number
    back to the host (a meta tensor cannot be read), which is what lets a GPU's host run ahead of its draws."""
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cuda", "meta"))
    cfg = SimConfig(d=5, d1=12, L=3)
    plan = data.draw_plan(cfg, 7)
    out = data.raw_draws(0, plan, [2, 0, 9], data.STREAM_TRAIN, 4, "meta")
    assert [(t.device.type, tuple(t.shape)) for t in out] == [("meta", (3, *shape)) for _, shape in plan]


def test_a_batched_draw_in_small_slabs_gives_the_same_numbers(monkeypatch):
    """The slab bound (SLAB_BLOCKS, the memory of one pass) changes how many passes a draw takes, not its numbers:
    each number is a function of its counter alone."""
    plan = [("u", (5, 7)), ("n", (3, 11))]
    whole = data.batched_draws(1, plan, [0, 3, 4], data.STREAM_TEST, 2, "cpu")
    monkeypatch.setattr(data, "SLAB_BLOCKS", 4)          # over three replicates: one block a pass
    sliced = data.batched_draws(1, plan, [0, 3, 4], data.STREAM_TEST, 2, "cpu")
    assert all(torch.equal(a, b) for a, b in zip(whole, sliced, strict=True))


FUSED_CHECK = """
import torch
from imbalanced_cl.sim import data, philox_fused as PF
plan = [("u", (3, 1001)), ("n", (1001,)), ("u", (5,)), ("n", (7,)), ("n", (1, 4097))]
cases = ((3, [0, 7], 2, 5), (2**64 - 1, [2**32 - 1, 0, 5], 2**16 - 1, 2**32 - 1), (2**40 + 17, [1], 0, 0))
for seed, reps, purpose, extra in cases:
    PF.DEVICES = ("cpu",)
    fused = data.batched_draws(seed, plan, reps, purpose, extra, "cpu")
    PF.DEVICES = ()
    ops = data.batched_draws(seed, plan, reps, purpose, extra, "cpu")
    for (kind, _), a, b in zip(plan, fused, ops):
        assert a.shape == b.shape, (a.shape, b.shape)
        if kind == "u":
            assert torch.equal(a, b), float((a - b).abs().max())
        else:
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
print("fused draws agree")
"""


def test_the_fused_kernel_draws_the_torch_op_paths_numbers():
    """Issue 48, item 2: the fused Triton kernel (sim/philox_fused.py), run under Triton's interpreter on the CPU,
    gives the very words of the torch-op Philox path: the same uniforms exactly and the same normals within float32
    rounding, at the counter's extreme fields (seed 2^64 - 1, replicate and step 2^32 - 1, purpose 2^16 - 1) and for
    entries whose length is not a multiple of 4 (the last block is cut). Needs Triton, which torch's CUDA builds bring
    and the CPU build lacks: elsewhere the GPU check (`make gpu-check`) runs the compiled kernel against the same
    path."""
    import importlib.util
    import os
    import subprocess
    import sys
    if importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed (torch's CPU build): the fused draw is checked on a GPU")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", FUSED_CHECK], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "fused draws agree" in done.stdout, done.stderr[-2000:]

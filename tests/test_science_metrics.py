"""Measurements and predictions on hand-made cases: every expected number is worked out here, not by the package."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from imbalanced_cl.sim import data, metrics, theory
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.runtime import step_flops
from imbalanced_cl.sim.memory import auto_chunk

# ---------------------------------------------------------------- metrics


def test_pos_pair_cosine_by_hand():
    """App. A.2 Fig. 3: mean over pairs of cos(f(X_n), f(Y_n)), per replicate."""
    FX = torch.tensor([[[1.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 3.0]]])
    FY = torch.tensor([[[2.0, 0.0], [0.0, 1.0]], [[-2.0, 0.0], [0.0, 0.5]]])
    got = metrics.pos_pair_cosine(FX, FY)
    torch.testing.assert_close(got, torch.tensor([(1 + 1 / math.sqrt(2)) / 2, (-1 + 1) / 2]))
    small = metrics.pos_pair_cosine(torch.tensor([[[0.1, 0.0]]]), torch.tensor([[[0.2, 0.0]]]))
    assert torch.allclose(small, torch.ones(1))                  # small norms: still a cosine of 1
    zero = metrics.pos_pair_cosine(torch.zeros(1, 2, 3), torch.ones(1, 2, 3))
    assert torch.equal(zero, torch.zeros(1))                     # a zero embedding counts as cosine 0, not NaN


def test_dominant_sets_by_hand():
    """Empirical N_i: features with |<w_i,M_j>| >= rel * max_j |<w_i,M_j>|."""
    coef = torch.tensor([[[4.0, -2.0, 1.9, -3.0], [0.0, 0.0, 0.0, 0.0], [0.1, -0.05, 0.04, 0.0]]])
    assert metrics.dominant_sets(coef).tolist() == [[[True, True, False, True], [False, False, False, False],
                                                     [True, True, False, False]]]   # each neuron against its own max
    assert metrics.dominant_sets(coef, rel=0.8).tolist()[0][0] == [True, False, False, False]


def test_cosine_matrix_with_non_unit_columns():
    """|<w_i, M_j>| / (||w_i|| ||M_j||), also when the columns are not unit vectors and the norms are small."""
    M = torch.tensor([[2.0, 0.0], [0.0, 0.0], [0.0, 0.1]]).expand(2, 3, 2)            # ||M_1|| = 2, ||M_2|| = 0.1
    W = torch.tensor([[0.03, 0.04, 0.0], [0.0, 0.0, 0.02], [0.01, 0.0, 0.01]]).expand(2, 3, 3)
    want = torch.tensor([[0.6, 0.0], [0.0, 1.0], [1 / math.sqrt(2), 1 / math.sqrt(2)]]).expand(2, 3, 2)
    torch.testing.assert_close(metrics.cosine_matrix(W, M), want)


def test_perp_norm2_and_share_by_hand():
    """W = (3, 4, 0), M = e_1: ||w||^2 = 25, coefficient 3, so ||P_perp w||^2 = 16 and the share is 9/25."""
    W = torch.tensor([[[3.0, 4.0, 0.0]]])
    M = torch.tensor([[[1.0], [0.0], [0.0]]])
    assert metrics.perp_norm2(W, M).tolist() == [[16.0]]
    assert metrics.feature_share(W, M).tolist() == [[pytest.approx(0.36)]]


def test_log_slope_uses_exactly_the_window():
    """Least squares of log y on t over lo <= t < hi, checked against numpy on the same points."""
    steps = torch.arange(0, 20)
    logy = (steps.double() - 3) ** 2 / 10                      # curved: every point of the window matters
    series = torch.exp(logy).unsqueeze(1).repeat(1, 2)
    got = metrics.log_slope(series, steps, 5, 10)
    want = np.polyfit(np.arange(5, 10), ((np.arange(5, 10) - 3) ** 2) / 10, 1)[0]
    torch.testing.assert_close(got, torch.tensor([want, want], dtype=torch.float32))
    two = metrics.log_slope(series, steps, 5, 7)               # two points: the chord
    assert float(two[0]) == pytest.approx(((6 - 3) ** 2 - (5 - 3) ** 2) / 10, rel=1e-5)
    one = metrics.log_slope(series, steps, 5, 6)               # one point: undefined
    assert one.shape == (2,) and bool(torch.isnan(one).all())


# ---------------------------------------------------------------- theory: closed forms written out


def test_paper_scales_by_hand():
    """Def. 3.1 scale, eq. (7) rate, eq. (33) T1 and the workshop's W351 T1, at d = 100, d1 = 500, eta = 0.5."""
    cfg = SimConfig(d=100, d1=500, lr=0.5, weight_decay=0.001, progress=False)
    s = math.log(math.log(100)) / 100                                    # 0.0152718
    assert theory.loglog_over_d(100) == pytest.approx(0.0152718, rel=1e-5)
    rate = theory.paper_rate(cfg, torch.tensor([1.0, 0.3], dtype=torch.float64), C_z=2.0)
    torch.testing.assert_close(rate, torch.tensor([0.5 * (2 * s - 0.001), 0.5 * (0.6 * s - 0.001)],
                                                  dtype=torch.float64))
    torch.testing.assert_close(theory.paper_rate(cfg, torch.tensor([1.0], dtype=torch.float64)),
                               torch.tensor([0.5 * (s - 0.001)], dtype=torch.float64))     # C_z = 1 by default
    assert theory.t1_main(cfg) == pytest.approx(500 * math.log(100) / (0.5 * math.log(math.log(100))))
    assert theory.t1_workshop(cfg) == pytest.approx(100 * math.log(100) / (0.5 * math.log(math.log(100))))


@pytest.mark.parametrize("tau_scaled", [True, False])
def test_stage1_rate_by_hand(tau_scaled):
    """w <- (1 - eta lambda) w + eta (1 - 1/n) (1/tau if unscaled) kappa_j w along M_j: log of that factor per step."""
    cfg = SimConfig(lr=0.5, weight_decay=0.01, n_pairs=50, tau=0.5, tau_scaled=tau_scaled, progress=False)
    gain = (1 - 1 / 50) * (1.0 if tau_scaled else 2.0)
    assert theory.gain(cfg) == pytest.approx(gain)
    kappa = torch.tensor([0.1, 0.02], dtype=torch.float64)
    want = torch.log(1 - 0.5 * 0.01 + 0.5 * gain * kappa)
    torch.testing.assert_close(theory.stage1_rate(cfg, kappa), want)


def test_perp_decay_by_hand():
    cfg = SimConfig(lr=0.5, weight_decay=0.1, progress=False)
    got = theory.perp_decay(cfg, torch.tensor([0, 1, 2, 10]))
    torch.testing.assert_close(got, torch.tensor([1.0, 0.95, 0.9025, 0.95 ** 10], dtype=torch.float64))


def test_t1_linear_is_zero_when_the_share_starts_above_one_half():
    """d1 - d < d: the initial share d/d1 is already >= 1/2, so the linear T1 is 0."""
    cfg = SimConfig(d=8, d1=9, lr=0.5, weight_decay=0.01, n_pairs=100, progress=False)
    assert theory.t1_linear(cfg, torch.full((8,), 0.02, dtype=torch.float64)) == pytest.approx(0.0, abs=1e-6)


def test_t1_linear_is_infinite_when_no_feature_outgrows_the_decay():
    """kappa = 0: every direction decays at (1 - eta lambda)^t, the share stays d/d1 = 1/8 < 1/2 for ever."""
    cfg = SimConfig(d=8, d1=64, lr=0.5, weight_decay=0.01, n_pairs=100, progress=False)
    assert theory.t1_linear(cfg, torch.zeros(8, dtype=torch.float64)) == float("inf")


def test_kappa_uses_the_requested_sample_size_and_its_own_stream():
    """kappa_mc(n) draws n pairs per replicate from the theory stream, not the training pairs."""
    cfg = SimConfig(d=6, d1=12, L=3, p_scale=3.0, n_pairs=16, progress=False)
    a = theory.kappa_mc(cfg, n=3000, replicates=1)
    b = theory.kappa_mc(cfg, n=3000, replicates=1)
    assert torch.equal(a, b) and a.shape == (6,)
    assert not torch.equal(a, theory.kappa_mc(cfg, n=2000, replicates=1))     # n is the sample size used
    M = data.make_dictionaries(cfg, [0])
    P = data.make_pairs(cfg, M, [0], n=3000)                  # the training stream would give these numbers
    ax = P.UX.sum(2)[0] @ M[0]
    ay = P.UY.sum(2)[0] @ M[0]
    assert not torch.allclose(a, (ax * ay).mean(0))


# ---------------------------------------------------------------- data streams and sample probability


def test_sample_prob_by_hand():
    """q_j = 1 - (1 - p_j)^L with p_j from Def. 3.1 written out."""
    cfg = SimConfig(d=10, L=4, n_minority=3, eps_min=0.3, p_scale=3.0, progress=False)
    p = [3.0 * (1.0 if j < 7 else 0.3) * math.log(math.log(10)) / 10 for j in range(10)]
    torch.testing.assert_close(data.sample_prob(cfg), torch.tensor([1 - (1 - x) ** 4 for x in p], dtype=torch.float64))


def test_make_pairs_sample_size_and_streams():
    """n overrides n_pairs; train, test and extra-indexed streams give different pairs; the same stream repeats."""
    cfg = SimConfig(d=6, d1=12, L=3, p_scale=3.0, n_pairs=16, progress=False)
    M = data.make_dictionaries(cfg, [0, 1])
    assert data.make_pairs(cfg, M, [0, 1], n=37).UX.shape == (2, 37, 3, 12)
    train = data.make_pairs(cfg, M, [0, 1])
    assert train.UX.shape == (2, 16, 3, 12)
    assert torch.equal(train.UX, data.make_pairs(cfg, M, [0, 1]).UX)
    test = data.make_pairs(cfg, M, [0, 1], purpose=data.STREAM_TEST)
    other = data.make_pairs(cfg, M, [0, 1], extra=1)
    assert not torch.allclose(train.UX, test.UX) and not torch.allclose(train.UX, other.UX)
    assert not torch.allclose(test.UX, other.UX)


def test_random_streams_do_not_collide():
    """Every (seed, replicate, purpose, extra) owns its stream: 400 streams give 400 different first draws."""
    firsts = {float(torch.rand(1, generator=data.generator(s, r, p, e), dtype=torch.float64))
              for s in range(5) for r in range(5) for p in range(4) for e in range(4)}
    assert len(firsts) == 400


# ---------------------------------------------------------------- cost model of a training step, counted by hand


def test_step_flops_counted_by_hand():
    """Per step: forward f(X), f(Y) and the backward are 3 matmuls (n*tokens x d1) x (d1 x m), 2 flops per MAC;
    the logits and the E V product are 2 more of (n x m) x (m x n). Linear (b = 0) uses token sums: 1 token."""
    cfg = SimConfig(d=4, d1=7, m=5, L=3, n_pairs=8, progress=False)
    R = 2
    assert step_flops(cfg, R, linear=True) == 3 * 2 * R * (8 * 1) * 7 * 5 + 2 * 2 * R * 8 * 8 * 5
    assert step_flops(cfg, R, linear=False) == 3 * 2 * R * (8 * 3) * 7 * 5 + 2 * 2 * R * 8 * 8 * 5


def test_auto_chunk_by_hand():
    """64 MiB over 4 bytes x n L (2 d1 + 4 m) per replicate: 67108864 // 3276800 = 20 at n=512, L=4, d1=100, m=50."""
    assert auto_chunk(SimConfig(n_pairs=512, L=4, d1=100, m=50, progress=False)) == 20
    assert auto_chunk(SimConfig(n_pairs=100000, L=256, d1=1000, m=50, progress=False)) == 1


def test_grad_features_by_hand():
    """eq. (21): dL/df(X_k) = (1/n)[(l'_p - 1) f(Y_k) + sum_s l'_s f(Y_s)]; 1/tau more when not tau-scaled."""
    from imbalanced_cl.sim import loss
    Q = torch.tensor([[[0.75, 0.25], [0.5, 0.5]]], dtype=torch.float64)
    V = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]], dtype=torch.float64)
    want = torch.tensor([[[(0.75 - 1) * 1.0 / 2, 0.25 * 2.0 / 2], [0.5 * 1.0 / 2, (0.5 - 1) * 2.0 / 2]]],
                        dtype=torch.float64)
    torch.testing.assert_close(loss.grad_features(Q, V, 0.5, tau_scaled=True), want)
    torch.testing.assert_close(loss.grad_features(Q, V, 0.5, tau_scaled=False), want / 0.5)


def test_signs_are_independent_of_token_placement():
    """Ass. 3.2: the sign of z_j is symmetric and independent of where the feature sits: Pr(+ | on token 0) = 1/2."""
    cfg = SimConfig(d=10, d1=20, L=4, p_scale=3.0, progress=False)
    S, sign, zx, _ = data.sample_latents(cfg, 20000, data.generator(0, 0, data.STREAM_TRAIN))
    first_on = (zx[:, 0] != 0) & S
    later_only = (zx[:, 0] == 0) & S
    for sel in (first_on, later_only):
        frac = float((sign[sel] > 0).double().mean())
        assert abs(frac - 0.5) < 4.5 * math.sqrt(0.25 / int(sel.sum())), frac


def test_sample_pairs_one_is_eq6_then_attention():
    """One replicate's pairs: with mean attention and no noise every token output is M Z / L (x = M z, eq. 6)."""
    cfg = SimConfig(d=6, d1=12, L=3, p_scale=3.0, attention="mean", sigma_xi=0.0, progress=False)
    M = data.make_dictionaries(cfg, [0])[0]
    UX, UY, S, ZX, ZY = data.sample_pairs_one(cfg, M, 50, data.generator(0, 0, data.STREAM_TRAIN))
    assert UX.shape == UY.shape == (50, 3, 12) and S.shape == ZX.shape == (50, 6)
    for U, Z in ((UX, ZX), (UY, ZY)):
        torch.testing.assert_close(U, (Z @ M.T / 3).unsqueeze(1).expand(50, 3, 12), rtol=1e-5, atol=1e-6)
    assert torch.equal(ZX != 0, S) and torch.equal(ZY != 0, S)


def test_replicate_bytes_and_the_gpu_chunk_by_hand(monkeypatch):
    """One replicate's bytes: 4 n L (2 d1 + 4 m) on the CPU, plus 4 n L (4 d1 + 8 d + 2 L) on a GPU (raw draws, tokens
    before attention, attention weights); a GPU chunk is half the free memory over that, at least 1."""
    from imbalanced_cl.sim import memory as TR
    cfg = SimConfig(n_pairs=10, L=3, d1=20, m=7, d=5, progress=False)
    cpu = 4 * 10 * 3 * (2 * 20 + 4 * 7)
    assert TR.replicate_bytes(cfg) == cpu == 8160
    assert TR.replicate_bytes(cfg, on_gpu=True) == cpu + 4 * 10 * 3 * (4 * 20 + 8 * 5 + 2 * 3) == 23280
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (2 * 23280 * 9 + 5, 10 ** 9))
    assert TR.auto_chunk(cfg, "cuda") == 9                    # half of the free memory: 9 replicates and 2.5 bytes
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (100, 10 ** 9))
    assert TR.auto_chunk(cfg, "cuda") == 1                    # never below one replicate
    assert TR.auto_chunk(cfg) == TR.auto_chunk(cfg, "cpu") == 64 * 2 ** 20 // cpu


def test_t1_linear_is_zero_when_the_weight_starts_in_the_feature_span():
    """With d1 = d there is no complement: the feature share is 1 from t = 0, so T1 of the linear dynamics is 0."""
    assert theory.t1_linear(SimConfig(d=5, d1=5, m=4), torch.full((5,), 0.3)) == pytest.approx(0.0, abs=1e-6)


def test_token_probabilities_are_clamped_at_one():
    """Def. 3.1: p_j = min(1, p_scale eps_j loglog d / d); a large p_scale reaches the clamp."""
    cfg = SimConfig(d=5, p_scale=50.0, eps_max=1.0, eps_min=0.5, n_minority=1)
    p = data.token_prob(cfg)
    raw = 50.0 * data.eps_vector(cfg) * math.log(math.log(5)) / 5
    assert bool((raw > 1).all()) and torch.equal(p, torch.ones(5, dtype=torch.float64))

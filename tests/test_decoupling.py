"""Feature decoupling (notebook 09): view builders, measurements on hand-made weights, verdict rows on hand-made results."""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl import data as D
from imbalanced_cl import verdict as V
from imbalanced_cl.claims import decoupling as DC
from imbalanced_cl.config import ParameterError, SimConfig
from imbalanced_cl.sim import views as VW
from imbalanced_cl.train import train


@pytest.fixture(autouse=True)
def _one_thread():
    """These tensors are small: one torch thread beats two contending ones on a shared machine."""
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _basis(d1, d):
    """M = the first d standard basis vectors: M^T w reads the first d coordinates."""
    return torch.eye(d1)[:, :d]


# --- view builders ---

def test_random_mask_on_a_hand_made_mask():
    x = torch.tensor([[1.0, -2.0, 3.0, 4.0]])
    D_ = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    xp, xpp = VW.random_mask(x, D_)
    assert torch.equal(xp, torch.tensor([[2.0, 0.0, 0.0, 8.0]]))
    assert torch.equal(xpp, torch.tensor([[0.0, -4.0, 6.0, 0.0]]))


def test_random_mask_views_sum_to_2x_and_mask_is_bernoulli_half_per_coordinate():
    n, L, d, d1 = 4000, 2, 5, 30
    M = D.haar_dictionary(d1, d, _gen(1))
    zx = torch.randn(n, L, d)
    g1, g2 = _gen(7), _gen(7)
    X, Y = VW.make_views("random_mask", zx, zx, M, 0.3, g1)
    x = zx @ M.T + 0.3 * torch.randn(n, L, d1, generator=g2)   # the same sample, drawn independently of views.py
    assert torch.allclose(X + Y, 2 * x, atol=1e-5)
    kept = (X != 0).float()                                      # x != 0 almost surely, so X != 0 exactly where D = 1
    assert torch.equal(kept, (Y == 0).float())                   # complementary masks
    assert torch.equal(kept[:, 0], kept[:, 1])                   # one D per sample, shared by its tokens
    Dm = kept[:, 0]                                              # (n, d1)
    p = Dm.mean()
    assert abs(p - 0.5) < 4 * math.sqrt(0.25 / Dm.numel())
    per_coord = Dm.mean(0)                                       # each coordinate is Bernoulli(1/2)
    assert (per_coord - 0.5).abs().max() < 4.5 * math.sqrt(0.25 / n)
    pair = (Dm[:, :-1] * Dm[:, 1:]).mean()                       # independent coordinates: E[D_l D_l'] = 1/4
    assert abs(pair - 0.25) < 4 * math.sqrt(0.1875 / Dm[:, 1:].numel())


def test_identical_views_are_equal_copies_of_one_noisy_sample():
    n, d, d1 = 2000, 4, 50
    M = D.haar_dictionary(d1, d, _gen(2))
    zx = torch.randn(n, 1, d)
    X, Y = VW.make_views("identical", zx, torch.zeros_like(zx), M, 0.2, _gen(3))
    assert torch.equal(X, Y) and X.data_ptr() != Y.data_ptr()
    resid = X - zx @ M.T
    assert abs(resid.std() - 0.2) < 0.01


def test_paper_pairs_share_support_and_sign_with_independent_noise():
    cfg = SimConfig(d=8, d1=40, L=3, p_scale=3.0)
    n = 3000
    S, sign, zx, zy = D.sample_latents(cfg, n, _gen(4))
    M = D.haar_dictionary(cfg.d1, cfg.d, _gen(5))
    X, Y = VW.make_views("paper", zx, zy, M, 0.0, _gen(6))        # no noise: read the latents back through M
    sx, sy = (X @ M).sum(1), (Y @ M).sum(1)
    assert torch.equal(sx.abs() > 1e-6, S) and torch.equal(sy.abs() > 1e-6, S)
    assert torch.equal(torch.sign(sx[S]), torch.sign(sy[S]))
    assert not torch.allclose(X, Y)                              # token placement / magnitudes may differ
    X, Y = VW.make_views("paper", zx, zy, M, 0.5, _gen(6))
    ex, ey = (X - zx @ M.T).flatten(), (Y - zy @ M.T).flatten()
    assert abs(ex.std() - 0.5) < 0.01 and abs(ey.std() - 0.5) < 0.01
    corr = float((ex * ey).mean() / (ex.std() * ey.std()))
    assert abs(corr) < 4 / math.sqrt(ex.numel())


def test_default_views_keep_the_original_sampler_bit_for_bit():
    """The views hook must not change the main paper's pairs: compare with the sampler as it was written before."""
    cfg = SimConfig(d=12, d1=40, L=3)
    M = D.haar_dictionary(cfg.d1, cfg.d, _gen(8))
    UX, UY, S, ZX, ZY = D.sample_pairs_one(cfg, M, 64, _gen(9))
    g = _gen(9)
    S0, _, zx, zy = D.sample_latents(cfg, 64, g)
    us = [D.attention(z @ M.T + cfg.sigma_xi * torch.randn(64, cfg.L, cfg.d1, generator=g), cfg) for z in (zx, zy)]
    assert torch.equal(UX, us[0]) and torch.equal(UY, us[1]) and torch.equal(S, S0)
    assert torch.equal(ZX, zx.sum(1)) and torch.equal(ZY, zy.sum(1))


def test_views_field_builds_identical_and_masked_pairs_in_the_sampler():
    cfg = SimConfig(d=6, d1=20, L=1, views="identical")
    M = D.make_dictionaries(cfg, [0])
    P = D.make_pairs(cfg, M, [0], n=50)
    assert torch.equal(P.UX, P.UY) and torch.equal(P.ZX, P.ZY)
    P = D.make_pairs(cfg.replace(views="random_mask"), M, [0], n=50)
    assert torch.equal((P.UX != 0), (P.UY == 0))
    with pytest.raises(ParameterError):
        SimConfig(views="crop")


def test_signal_is_batched_over_replicates():
    M = torch.stack([D.haar_dictionary(10, 3, _gen(k)) for k in range(2)])
    z = torch.randn(2, 5, 1, 3)
    s = VW.signal(z, M)
    for r in range(2):
        assert torch.allclose(s[r], z[r] @ M[r].T, atol=1e-6)


def test_train_with_a_fixed_pair_source_equals_default_training():
    cfg = SimConfig(d=5, d1=15, m=6, n_pairs=32, steps=25, R=2, progress=False, t1_max=10)
    run0 = train(cfg)
    fixed = {}
    run1 = train(cfg, pairs_at=lambda M, reps, t: fixed.setdefault(tuple(reps), D.make_pairs(cfg, M, reps)))
    assert torch.equal(run0.W, run1.W) and torch.equal(run0.T1, run1.T1)


def test_grid_sampler_builds_each_cell_and_renews_fresh_pairs():
    cfg = DC.DecouplingConfig(d=6, d1=24, m=6, L=1, n_pairs=40, steps=5, R=2, ratios=(1.0, 0.1), n_minority=3,
                              progress=False)
    s = DC.GridSampler(cfg)
    reps = list(range(len(cfg.cells) * cfg.R))
    M = D.make_dictionaries(cfg, reps)
    P = s(M, reps, 0)
    for c, (kind, _) in enumerate(cfg.cells):
        ux, uy = P.UX[c * 2:(c + 1) * 2], P.UY[c * 2:(c + 1) * 2]
        if kind == "identical":
            assert torch.equal(ux, uy)
        elif kind == "random_mask":
            assert torch.equal(ux != 0, uy == 0)
        else:
            assert not torch.equal(ux != 0, uy == 0)
    assert s(M, reps, 0) is P                                    # asked twice for one step: the same pairs
    assert not torch.equal(s(M, reps, 1).UX, P.UX)               # fresh: a new draw every step
    fixed = DC.GridSampler(cfg.replace(sampling="fixed"))
    assert torch.equal(fixed(M, reps, 0).UX, fixed(M, reps, 3).UX)


# --- measurements on hand-made weights ---

def test_feature_share_of_hand_made_weights():
    M = _basis(5, 2)
    W = torch.tensor([[[3.0, 0.0, 4.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0]]])   # ||M^T w||^2: 9 and 2; ||w||^2: 25, 2
    assert torch.allclose(DC.feature_share(W, M), torch.tensor([11.0 / 27.0]))


def test_cosine_is_zero_for_a_zero_vector():
    a = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    b = torch.tensor([[2.0, 0.0], [1.0, -1.0], [1.0, 0.0]])
    assert torch.allclose(DC.cosine(a, b), torch.tensor([1.0, 0.0, 0.0]))


def test_singletons_count_neurons_with_one_dominant_feature():
    d1, d = 6, 3
    M = _basis(d1, d)
    W = torch.tensor([[
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],     # M_0 alone: singleton of atom 0
        [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],     # N_i = {0, 1}: not a singleton
        [0.0, 1.0, 0.3, 0.0, 0.0, 0.0],     # N_i = {1}, cos^2 = 1/1.09: singleton of atom 1
        [0.0, 0.0, 0.5, 1.0, 0.0, 0.0],     # N_i = {2} but cos^2 = 0.2: mostly noise, not counted
    ]])
    assert torch.equal(DC.singletons(W, M, rel=0.5, cos2_min=0.5), torch.tensor([[1, 1, 0]]))
    assert torch.equal(DC.singletons(W, M, rel=0.5, cos2_min=0.1), torch.tensor([[1, 1, 1]]))
    assert torch.allclose(DC.coverage(torch.tensor([[1, 1, 0]])), torch.tensor([2 / 3]))


def test_ridge_probe_matches_the_closed_form_for_a_noisy_copy():
    """z ~ N(0,1), f = z + e with e ~ N(0, s^2): the best linear MSE is s^2/(1+s^2)."""
    n, s = 20000, 0.5
    z = torch.randn(1, 2 * n, 1, generator=_gen(10))
    f = z + s * torch.randn(1, 2 * n, 1, generator=_gen(11))
    mse = DC.ridge_probe(f[:, :n], z[:, :n], f[:, n:], z[:, n:], 1e-6, torch.ones(1))
    assert abs(float(mse) - s * s / (1 + s * s)) < 0.02
    perfect = DC.ridge_probe(z[:, :n], z[:, :n], z[:, n:], z[:, n:], 1e-9, torch.ones(1))
    assert float(perfect) < 1e-6
    junk = torch.randn(1, 2 * n, 3, generator=_gen(12))          # features unrelated to z: the MSE of predicting 0
    assert abs(float(DC.ridge_probe(junk[:, :n], z[:, :n], junk[:, n:], z[:, n:], 1e-6, torch.ones(1))) - 1) < 0.05


def test_latent_energy_is_q_times_magnitude_squared():
    cfg = SimConfig(d=10, d1=20, L=1, mag_lo=1.0, mag_hi=1.0, eps_min=0.5, n_minority=5)
    q = D.sample_prob(cfg).float()
    assert torch.allclose(DC.latent_energy(cfg, 200_000), q, rtol=0.1)


def test_measure_on_noise_only_and_feature_only_weights():
    """Weights orthogonal to M see only xi: f(x) = f(xi) (alignment 1), f(Mz) = 0. Weights = M^T with a bias above
    the noise and below the signal: f(xi) = 0 (alignment 0), f(x) = f(Mz) (removal 1), share 1."""
    d, d1, R, n = 4, 12, 2, 2000
    cfg = DC.DecouplingConfig(d=d, d1=d1, m=d, n_minority=0, sigma_xi=0.02, p_scale=4.0, R=R, n_test=n, n_probe=n)
    M = torch.stack([_basis(d1, d)] * R)
    test, fit = (DC.raw_samples(cfg, M, n, _gen(k)) for k in (13, 14))
    energy = DC.latent_energy(cfg, 20_000)
    noise_W = torch.zeros(R, d, d1)
    noise_W[:, :, d:2 * d] = torch.eye(d)
    out = DC.measure(noise_W, torch.zeros(R, d), M, test, fit, energy, cfg)
    assert torch.allclose(out["share"], torch.zeros(R))
    assert torch.allclose(out["align"], torch.ones(R), atol=1e-5)
    assert torch.allclose(out["removal"], torch.zeros(R))
    assert (out["singles"] == 0).all()
    assert (out["probe"] > 0.8).all() and out["probe"].mean() > 0.9   # f carries nothing about z: about 1
    feat_W = M.transpose(1, 2).contiguous()
    out = DC.measure(feat_W, torch.full((R, d), 0.5), M, test, fit, energy, cfg)
    assert torch.allclose(out["share"], torch.ones(R))
    assert torch.allclose(out["align"], torch.zeros(R))
    assert (out["removal"] > 0.99).all()
    assert (out["singles"] == 1).all()
    assert (out["probe"] < 0.01).all()


# --- config, the batched grid, verdict rows ---

@pytest.mark.parametrize("bad", [{"ratios": (0.3, 0.1)}, {"kinds": ("identical", "crop")}, {"tol": (0.2, 0.1)},
                                 {"kinds": ("paper", "paper")}, {"sampling": "sometimes"}, {"probe_max": 0.0}])
def test_config_refuses_bad_values(bad):
    with pytest.raises(ParameterError):
        DC.DecouplingConfig(**bad)


def test_notebook_parameters_are_the_config_defaults():
    """One default: the notebook's parameters cell repeats DecouplingConfig's defaults (Wen & Li's values at d 20)."""
    import papermill as pm
    from imbalanced_cl.profiles import repo_root
    declared = pm.inspect_notebook(str(repo_root() / "notebooks" / "09_feature_decoupling.ipynb"))
    cfg = DC.DecouplingConfig()
    for name, p in declared.items():
        value = eval(p["default"])
        assert (tuple(value) if isinstance(value, list) else value) == getattr(cfg, name), name
    ref = DC.wen_li_scales(cfg.d, cfg.d1, cfg.lr)
    assert cfg.m == ref["m"] and abs(cfg.sigma_xi - ref["sigma_xi"]) < 1e-4 and round(ref["T1"]) == cfg.t1_max
    assert ref["weight_decay"][0] <= cfg.weight_decay <= ref["weight_decay"][1]


def test_run_grid_shapes_and_initial_share():
    cfg = DC.DecouplingConfig(d=6, d1=60, m=7, L=1, n_pairs=32, steps=6, R=2, ratios=(1.0, 0.3), n_minority=3,
                              record_every=2, checkpoints=2, n_test=50, n_probe=50, progress=False)
    res = DC.run_grid(cfg)
    C, T = len(cfg.cells), len(cfg.schedule())
    assert res.cells == cfg.cells and res.steps == [0, 1, 6]
    assert res.share.shape == (T, C, 2) and res.probe.shape == (T, C, 2, 6) and res.raw_probe.shape == (C, 2, 6)
    assert res.share_hist.shape[1:] == (C, 2) and res.T1.shape == (C, 2)
    assert abs(float(res.share[0].mean()) - 6 / 60) < 0.05   # a random start puts d/d1 of its weight on M (Haar)
    assert torch.equal(res.minority, torch.tensor([False] * 3 + [True] * 3))


def _result(final: dict, R: int = 4):
    """A hand-made result with one step; `final` maps (name, kind) to the per-replicate values."""
    cells = [(k, 1.0) for k in VW.KINDS]
    d = 4
    base = {"share": torch.zeros(1, 3, R), "align": torch.zeros(1, 3, R), "removal": torch.zeros(1, 3, R),
            "probe": torch.zeros(1, 3, R, d), "singles": torch.zeros(1, 3, R, d, dtype=torch.long)}
    for (name, kind), v in final.items():
        c = cells.index((kind, 1.0))
        v = torch.as_tensor(v, dtype=base[name].dtype)
        base[name][0, c] = v if v.dim() == base[name].dim() - 2 else v[:, None].expand(R, d)
    return DC.DecouplingResult(cells, [10], base["share"], base["align"], base["removal"], base["probe"],
                               base["singles"], torch.zeros(3, R, d), torch.tensor([False, False, True, True]),
                               torch.tensor([10]), torch.zeros(1, 3, R), torch.zeros(3, R), 0.0)


def test_verdict_rows_on_a_hand_made_result():
    cfg = DC.DecouplingConfig(ratios=(1.0,))
    ones = torch.ones(4, 4, dtype=torch.long)
    res = _result({("share", "random_mask"): [0.95, 0.96, 0.97, 0.96],        # holds: whole interval >= 0.88
                   ("align", "random_mask"): [0.8, 0.82, 0.81, 0.8],          # does not hold: wholly above 0.65
                   ("removal", "random_mask"): [0.95, 0.96, 0.95, 0.97],
                   ("singles", "random_mask"): ones,
                   ("probe", "random_mask"): [0.1, 0.12, 0.11, 0.1],
                   ("align", "identical"): [0.2, 0.9, 0.5, 0.99],             # interval too wide: inconclusive
                   ("probe", "identical"): [0.9, 0.92, 0.91, 0.9],
                   ("share", "paper"): [0.5, 0.51, 0.5, 0.52]})               # does not hold
    rows = {(r.claim.split(",")[0], r.source.split(", ")[1]): r for r in DC.verdict_rows(res, cfg)}
    assert len(rows) == 12 and all(r.source.startswith("Wen & Li 2021") for r in rows.values())
    share = rows[("With RandomMask", "Thm 3.4 (β = o(‖w‖/√d1))")]
    assert share.verdict == V.HOLDS and "0.9" in share.rule and share.predicted == "≥ 0.9"
    assert rows[("With RandomMask", "Thm 3.4 and Sec. 4")].verdict == V.FAILS
    assert rows[("With RandomMask", "Thm 3.4 (L238)")].verdict == V.HOLDS
    assert rows[("With RandomMask", "Cor. 3.5")].verdict == V.HOLDS
    assert rows[("Without augmentation", "Thm 3.2 (L210)")].verdict == V.INCONCLUSIVE
    assert rows[("Without augmentation", "Cor. 3.3")].verdict == V.HOLDS
    assert rows[("With the main paper's pairs", "Thm 3.4 (β = o(‖w‖/√d1))")].verdict == V.FAILS
    assert rows[("With the main paper's pairs", "Cor. 3.5")].verdict == V.HOLDS   # probe MSE 0 (the hand-made default)
    cov = rows[("With RandomMask", "Thm 3.4 (Ω(1) neurons per atom)")]
    assert cov.verdict == V.HOLDS and cov.measured == 1.0


def test_verdict_rows_follow_the_thresholds_in_the_config():
    res = _result({("probe", "random_mask"): [0.3, 0.31, 0.3, 0.32]})
    judge = lambda cfg: [r for r in DC.verdict_rows(res, cfg) if "RandomMask" in r.claim and "probe" in r.claim][0]
    assert judge(DC.DecouplingConfig(probe_max=0.5)).verdict == V.HOLDS
    assert judge(DC.DecouplingConfig(probe_max=0.1)).verdict == V.FAILS
    assert judge(DC.DecouplingConfig(probe_max=0.1)).predicted == "≤ 0.1"


def test_imbalance_answer_reads_the_minority_gap_from_the_intervals():
    cells = [(k, r) for r in (1.0, 0.1) for k in VW.KINDS]
    R, d = 4, 4
    probe = torch.full((1, 6, R, d), 0.2)
    probe[0, 4, :, 2:] = torch.tensor([0.8, 0.82, 0.81, 0.8])[:, None]       # RandomMask at 0.1: minority fails
    res = DC.DecouplingResult(cells, [10], torch.zeros(1, 6, R), torch.zeros(1, 6, R), torch.zeros(1, 6, R), probe,
                              torch.ones(1, 6, R, d, dtype=torch.long), torch.zeros(6, R, d),
                              torch.tensor([False, False, True, True]), torch.tensor([10]), torch.zeros(1, 6, R),
                              torch.zeros(6, R), 0.0)
    cfg = DC.DecouplingConfig(ratios=(1.0, 0.1), probe_max=0.5)
    lines = DC.imbalance_answer(res, cfg)
    assert len(lines) == 3
    rm = [x for x in lines if x.startswith("RandomMask")][0]
    assert "(not recovered at the threshold 0.5)" in rm and "worse than the majority" in rm
    ident = [x for x in lines if x.startswith("identical")][0]
    assert "(recovered at the threshold 0.5)" in ident and "not distinguishable" in ident
    table = DC.imbalance_table(res)
    row = [t for t in table if t["kind"] == "random_mask" and t["ratio"] == 0.1][0]
    assert row["probe_gap"][0] == pytest.approx(0.6075, abs=1e-4)


def test_contrast_config_and_final_table():
    cfg = DC.DecouplingConfig(ratios=(1.0, 0.3))
    c = cfg.contrast()
    assert c.kinds == ("identical", "random_mask") and c.ratios == (1.0,)
    assert (c.weight_decay, c.tau, c.steps) == (cfg.contrast_weight_decay, cfg.contrast_tau, cfg.contrast_steps)
    table = DC.final_table(_result({("share", "identical"): [0.1, 0.2, 0.3, 0.4]}))
    assert set(table) == set(VW.KINDS)
    m, lo, hi = table["identical"]["share"]
    assert m == pytest.approx(0.25) and lo < 0.25 < hi
    assert table["identical"]["coverage"] == (0.0, 0.0, 0.0)


def test_view_correlations_match_the_closed_forms():
    """E[<v,X><v,Y>] by hand: identical copies sigma^2 + q on atoms and sigma^2 on noise; the main paper's pairs
    (|z| = 1, one token) q and 0; RandomMask removes the diagonal of Cov(x): q + sigma^2 - sum_l M_lj^2 C_ll on atom
    j and -sum_l e_l^2 (M diag(q) M^T)_ll on a noise direction e."""
    cfg = DC.DecouplingConfig(d=6, d1=30, m=6, n_minority=0, sigma_xi=0.3, p_scale=3.0)
    vc = DC.view_correlations(cfg, n=200_000)
    q = D.sample_prob(cfg.cell_cfg("paper", 1.0)).double()          # E[z_j^2] with |z_j| = 1
    s2 = cfg.sigma_xi ** 2
    M = D.make_dictionaries(cfg, [0])[0].double()
    diag_sig = (M * M) @ q                                            # (M diag(q) M^T)_ll
    C_ll = s2 + diag_sig
    rm_f = float((q + s2 - (M * M).T @ C_ll).mean())
    rm_p = float(-((1 - (M * M).sum(1)) * diag_sig).sum() / (cfg.d1 - cfg.d))
    expect = {"identical": (float(q.mean()) + s2, s2), "paper": (float(q.mean()), 0.0), "random_mask": (rm_f, rm_p)}
    for kind, (f, p) in expect.items():
        assert vc[kind]["rho_F"] == pytest.approx(f, abs=0.01), kind
        assert vc[kind]["rho_perp"] == pytest.approx(p, abs=0.004), kind
    assert vc["identical"]["rate_perp"] > 0 > vc["random_mask"]["rate_perp"]

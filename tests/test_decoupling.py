"""Feature decoupling (notebook 09): view builders, measurements on hand-made weights, verdict rows on hand-made
results."""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl import verdict as V
from imbalanced_cl.claims import decoupling as DC
from imbalanced_cl.sim import data as D
from imbalanced_cl.sim import views as VW
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.validate import ParameterError


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


def test_make_views_on_hand_made_tensors():
    """One sample, one token, d = 1 atom in d1 = 3: every kind written out by hand."""
    M = torch.tensor([[[1.0], [0.0], [0.0]]])                      # (R=1, d1=3, d=1)
    zx, zy = torch.tensor([[[[1.0]]]]), torch.tensor([[[[0.5]]]])   # (1, n=1, L=1, d=1)
    xi_x, xi_y = torch.tensor([[[[1.0, 2.0, 3.0]]]]), torch.tensor([[[[-1.0, 0.0, 1.0]]]])
    u = torch.tensor([[[[0.1, 0.9, 0.3]]]])                        # D = diag(1, 0, 1)
    x = torch.tensor([[[[1.5, 1.0, 1.5]]]])                        # M zx + 0.5 xi_x
    X, Y = VW.make_views("identical", zx, zy, M, 0.5, xi_x, xi_y)
    assert torch.equal(X, x) and torch.equal(Y, x) and X.data_ptr() != Y.data_ptr()
    X, Y = VW.make_views("random_mask", zx, zy, M, 0.5, xi_x, xi_y, u)
    assert torch.equal(X, torch.tensor([[[[3.0, 0.0, 3.0]]]])) and torch.equal(Y, torch.tensor([[[[0.0, 2.0, 0.0]]]]))
    X, Y = VW.make_views("paper", zx, zy, M, 0.5, xi_x, xi_y)
    assert torch.equal(X, x) and torch.equal(Y, torch.tensor([[[[0.0, 0.0, 0.5]]]]))
    with pytest.raises(ValueError):
        VW.make_views("crop", zx, zy, M, 0.5, xi_x, xi_y)
    with pytest.raises(ValueError):
        VW.make_views("random_mask", zx, zy, M, 0.5, xi_x, xi_y)


def test_random_mask_pairs_sum_to_2x_with_a_bernoulli_half_mask_per_sample_and_coordinate():
    n, d1 = 3000, 30
    cfg = SimConfig(d=5, d1=d1, L=2, attention="mean", views="random_mask")
    M = D.make_dictionaries(cfg, [0])
    P = D.make_pairs(cfg, M, [0], n=n)
    same = D.make_pairs(cfg.replace(views="identical"), M, [0], n=n)       # the same draws, no mask
    assert torch.allclose(P.UX + P.UY, 2 * same.UX, atol=1e-5)            # x+ + x++ = 2x (mean attention is linear)
    kept = (P.UX[0, :, 0] != 0).float()                                    # x != 0 a.s., so X != 0 exactly where D = 1
    assert torch.equal(kept, (P.UY[0, :, 0] == 0).float())                # complementary masks
    assert abs(kept.mean() - 0.5) < 4 * math.sqrt(0.25 / kept.numel())
    assert (kept.mean(0) - 0.5).abs().max() < 4.5 * math.sqrt(0.25 / n)   # each coordinate Bernoulli(1/2)
    pair = (kept[:, :-1] * kept[:, 1:]).mean()                             # independent coordinates: E[D_l D_l'] = 1/4
    assert abs(pair - 0.25) < 4 * math.sqrt(0.1875 / kept[:, 1:].numel())
    across = (kept[:-1] * kept[1:]).mean()                                 # and independent samples
    assert abs(across - 0.25) < 4 * math.sqrt(0.1875 / kept[1:].numel())


def test_the_mask_is_shared_by_the_tokens_of_a_sample():
    cfg = SimConfig(d=4, d1=12, L=3, attention="mean", views="random_mask")
    M = D.make_dictionaries(cfg, [0])
    u = [t.unsqueeze(0) for t in D._draws(cfg, 50, _gen(1))]
    S, _, zx, _ = D.latents_from(cfg, u[0], u[1], [u[2:5], u[5:8]])
    X, _ = VW.make_views("random_mask", zx, zx, M, cfg.sigma_xi, u[8], u[9], u[10])
    kept = X != 0
    assert torch.equal(kept[:, :, 0], kept[:, :, 1]) and torch.equal(kept[:, :, 0], kept[:, :, 2])


def test_identical_views_are_equal_copies_of_one_noisy_sample():
    cfg = SimConfig(d=4, d1=50, L=1, views="identical", sigma_xi=0.2)
    M = D.make_dictionaries(cfg, [0])
    P = D.make_pairs(cfg, M, [0], n=2000)
    assert torch.equal(P.UX, P.UY) and torch.equal(P.ZX, P.ZY)
    resid = P.UX[0, :, 0] - P.ZX[0] @ M[0].T
    assert abs(resid.std() - 0.2) < 0.01


def test_paper_pairs_share_support_and_sign_with_independent_noise():
    cfg = SimConfig(d=8, d1=40, L=1, p_scale=3.0, sigma_xi=0.5)
    M = D.make_dictionaries(cfg, [0])
    P = D.make_pairs(cfg, M, [0], n=3000)
    S, zx, zy = P.S[0], P.ZX[0], P.ZY[0]
    assert torch.equal(zx != 0, S) and torch.equal(zy != 0, S)
    assert torch.equal(torch.sign(zx), torch.sign(zy))
    assert not torch.equal(zx, zy)                                  # magnitudes are drawn per view
    ex, ey = (P.UX[0, :, 0] - zx @ M[0].T).flatten(), (P.UY[0, :, 0] - zy @ M[0].T).flatten()
    assert abs(ex.std() - 0.5) < 0.01 and abs(ey.std() - 0.5) < 0.01
    assert abs(float((ex * ey).mean() / (ex.std() * ey.std()))) < 4 / math.sqrt(ex.numel())


def test_every_builder_sees_the_same_latents_and_noise():
    """Common random numbers: the X view of a pair is the same sample x for all three builders' streams."""
    cfg = SimConfig(d=6, d1=20, L=1)
    M = D.make_dictionaries(cfg, [0, 1])
    P = {k: D.make_pairs(cfg.replace(views=k), M, [0, 1], n=40) for k in VW.KINDS}
    assert torch.equal(P["paper"].UX, P["identical"].UX)
    assert torch.equal(P["random_mask"].UX + P["random_mask"].UY, 2 * P["identical"].UX)
    assert torch.equal(P["paper"].S, P["random_mask"].S)


def test_default_views_keep_the_pairs_as_written_before_the_hook():
    """Views 'paper' must not change the main paper's pairs: compare with the builder as it was (written out here)."""
    cfg = SimConfig(d=12, d1=40, L=3)
    M = D.make_dictionaries(cfg, [0, 1])
    P = D.make_pairs(cfg, M, [0, 1], n=64, extra=3)
    u = [torch.stack(t)
         for t in zip(*(D._draws(cfg, 64, D.generator(cfg.seed, r, D.STREAM_TRAIN, 3)) for r in (0, 1)), strict=True)]
    S, _, zx, zy = D.latents_from(cfg, u[0], u[1], [u[2:5], u[5:8]])
    us = []
    for z, xi in ((zx, u[8]), (zy, u[9])):
        tokens = torch.bmm(z.reshape(2, 64 * cfg.L, cfg.d), M.transpose(1, 2)).view(2, 64, cfg.L, cfg.d1)
        us.append(D.attention(tokens + cfg.sigma_xi * xi, cfg))
    # The package fuses M z + sigma xi into one baddbmm; the oracle above multiplies, then adds: two formulations,
    # which agree within float32 rounding (bit for bit on some CPUs, ~3e-8 apart on others).
    torch.testing.assert_close(P.UX, us[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(P.UY, us[1], rtol=1e-5, atol=1e-6)
    assert torch.equal(P.S, S)                                      # the latents are the same code path: exact
    assert torch.equal(P.ZX, zx.sum(-2)) and torch.equal(P.ZY, zy.sum(-2))
    with pytest.raises(ParameterError):
        SimConfig(views="crop")


# --- the grid sampler ---

def test_grid_sampler_builds_each_cell_from_common_draws_and_renews_fresh_pairs():
    cfg = DC.DecouplingConfig(d=6, d1=24, m=6, n_pairs=40, steps=5, R=2, ratios=(1.0, 0.1), n_minority=3)
    M = D.make_dictionaries(cfg, [0, 1])
    s = DC.GridSampler(cfg, M)
    reps = [0, 1] * len(cfg.cells)
    P = s(0, reps)
    for c, (kind, ratio) in enumerate(cfg.cells):
        ux, uy = P.UX[2 * c:2 * c + 2], P.UY[2 * c:2 * c + 2]
        assert torch.equal(ux, uy) == (kind == "identical")
        assert torch.equal(ux != 0, uy == 0) == (kind == "random_mask")
    ident = [c for c, cell in enumerate(cfg.cells) if cell == ("identical", 1.0)][0]
    paper = [c for c, cell in enumerate(cfg.cells) if cell == ("paper", 1.0)][0]
    assert torch.equal(P.UX[2 * ident:2 * ident + 2], P.UX[2 * paper:2 * paper + 2])   # the same samples
    rare = [c for c, cell in enumerate(cfg.cells) if cell == ("paper", 0.1)][0]
    assert P.S[2 * rare:2 * rare + 2, :, 3:].float().mean() < P.S[2 * paper:2 * paper + 2, :, 3:].float().mean()
    for c, cc in enumerate(s.cell_cfgs):                            # one draw for all cells: each cell's own pairs
        own = D.make_pairs(cc, M, [0, 1], extra=1)
        for f in ("UX", "UY", "S", "ZX", "ZY"):
            assert torch.equal(getattr(P, f)[2 * c:2 * c + 2], getattr(own, f)), (cfg.cells[c], f)
    assert not torch.equal(s(1, reps).UX, P.UX)                   # fresh: a new draw every step
    fixed = DC.GridSampler(cfg.replace(sampling="fixed"), M)
    assert fixed(0, reps) is fixed(3, reps)
    with pytest.raises(ValueError):
        s(0, reps[:2])


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
    M = _basis(6, 3)
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
    assert float(DC.ridge_probe(z[:, :n], z[:, :n], z[:, n:], z[:, n:], 1e-9, torch.ones(1))) < 1e-6
    junk = torch.randn(1, 2 * n, 3, generator=_gen(12))          # features unrelated to z: the MSE of predicting 0
    assert abs(float(DC.ridge_probe(junk[:, :n], z[:, :n], junk[:, n:], z[:, n:], 1e-6, torch.ones(1))) - 1) < 0.05


def test_latent_energy_is_q_times_magnitude_squared():
    cfg = SimConfig(d=10, d1=20, L=1, mag_lo=1.0, mag_hi=1.0, eps_min=0.5, n_minority=5)
    assert torch.allclose(DC.latent_energy(cfg, 200_000), D.sample_prob(cfg).float(), rtol=0.1)
    cfg = cfg.replace(mag_lo=0.5)                                  # |z| ~ U[0.5, 1]: E[|z|^2] = 7/12
    assert torch.allclose(DC.latent_energy(cfg, 200_000), D.sample_prob(cfg).float() * 7 / 12, rtol=0.1)


def test_raw_samples_are_signal_plus_noise_of_the_stated_size():
    cfg = SimConfig(d=5, d1=30, L=1, sigma_xi=0.3, mag_lo=1.0)
    M = D.make_dictionaries(cfg, [0, 1])
    raw = DC.raw_samples(cfg, M, [0, 1], 2000, DC.EXTRA_TEST)
    assert torch.allclose(raw.x, raw.signal + raw.xi)
    assert torch.allclose(raw.signal[:, :, 0], torch.bmm(raw.z, M.transpose(1, 2)), atol=1e-6)
    assert abs(raw.xi.std() - 0.3) < 0.01
    again = DC.raw_samples(cfg, M, [0, 1], 2000, DC.EXTRA_TEST)
    assert torch.equal(raw.x, again.x)                              # the same held-out samples at every call
    assert not torch.equal(raw.x, DC.raw_samples(cfg, M, [0, 1], 2000, DC.EXTRA_FIT).x)


def test_measure_on_noise_only_and_feature_only_weights():
    """Weights orthogonal to M see only xi: f(x) = f(xi) (alignment 1), f(Mz) = 0. Weights = M^T with a bias above
    the noise and below the signal: f(xi) = 0 (alignment 0), f(x) = f(Mz) (removal 1), share 1."""
    d, d1, R, n = 4, 12, 2, 2000
    cfg = DC.DecouplingConfig(d=d, d1=d1, m=d, n_minority=0, sigma_xi=0.02, p_scale=4.0, R=R, n_test=n, n_probe=n)
    M = torch.stack([_basis(d1, d)] * R)
    test, fit = (DC.raw_samples(cfg, M, [0, 1], n, e) for e in (DC.EXTRA_TEST, DC.EXTRA_FIT))
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
    rm_f = float((q + s2 - (M * M).T @ (s2 + diag_sig)).mean())
    rm_p = float(-((1 - (M * M).sum(1)) * diag_sig).sum() / (cfg.d1 - cfg.d))
    expect = {"identical": (float(q.mean()) + s2, s2), "paper": (float(q.mean()), 0.0), "random_mask": (rm_f, rm_p)}
    for kind, (f, p) in expect.items():
        assert vc[kind]["rho_F"] == pytest.approx(f, abs=0.01), kind
        assert vc[kind]["rho_perp"] == pytest.approx(p, abs=0.004), kind
    assert vc["identical"]["rate_perp"] > 0 > vc["random_mask"]["rate_perp"]


# --- config, the batched grid, verdict rows ---

@pytest.mark.parametrize("bad", [{"ratios": (0.3, 0.1)}, {"kinds": ("identical", "crop")}, {"tol_bound": 1.5},
                                 {"kinds": ("paper", "paper")}, {"sampling": "sometimes"}, {"probe_max": 0.0},
                                 {"contrast_weight_decay": 3.0}])
def test_config_refuses_bad_values(bad):
    with pytest.raises(ParameterError):
        DC.DecouplingConfig(**bad)


def test_defaults_are_wen_and_lis_scalings_at_d_20():
    cfg = DC.DecouplingConfig()
    ref = DC.wen_li_scales(cfg.d, cfg.d1, cfg.lr)
    assert cfg.d == 20 and cfg.L == 1 and cfg.mag_lo == cfg.mag_hi == 1.0
    assert cfg.m == ref["m"] and abs(cfg.sigma_xi - ref["sigma_xi"]) < 1e-4 and round(ref["T1"]) == cfg.t1_max
    assert ref["weight_decay"][0] <= cfg.weight_decay <= ref["weight_decay"][1]
    assert abs(cfg.weight_decay - cfg.d ** -1.25) < 1e-4 and abs(cfg.tau - math.log(cfg.d)) < 0.01


def test_run_grid_pairs_the_cells_and_has_the_stated_shapes():
    cfg = DC.DecouplingConfig(d=6, d1=60, m=7, n_pairs=32, steps=6, R=2, ratios=(1.0, 0.3), n_minority=3,
                              record_every=2, checkpoints=2, n_test=50, n_probe=50)
    res = DC.run_grid(cfg)
    C, T = len(cfg.cells), len(cfg.schedule())
    assert res.cells == cfg.cells and res.steps == [0, 1, 6]
    assert res.share.shape == (T, C, 2) and res.probe.shape == (T, C, 2, 6) and res.raw_probe.shape == (C, 2, 6)
    assert res.share_hist.shape[1:] == (C, 2) and res.T1.shape == (C, 2)
    assert abs(float(res.share[0].mean()) - 6 / 60) < 0.05   # a random start puts d/d1 of its weight on M (Haar)
    assert torch.equal(res.share[0, 0], res.share[0, 1])      # replicate r starts from the same weights in every cell
    assert not torch.equal(res.share[-1, 0], res.share[-1, 1])   # ... and the pair builders make them differ
    assert torch.equal(res.minority, torch.tensor([False] * 3 + [True] * 3))
    assert DC.paired_difference(res, "share", "paper", "paper") == (0.0, 0.0, 0.0)


def test_the_main_and_the_sensitivity_run_in_two_workers_give_the_numbers_of_each_run_here():
    """The oracle is run_grid of each config in this process: two worker processes must return the same results,
    in order."""
    cfg = DC.DecouplingConfig(d=6, d1=60, m=7, n_pairs=32, steps=6, R=2, ratios=(1.0, 0.3), n_minority=3,
                              record_every=2, checkpoints=2, n_test=50, n_probe=50, contrast_steps=4)
    cfgs = [cfg, cfg.contrast()]
    two = DC.run_grids(cfgs, workers=2)
    for c, got in zip(cfgs, two, strict=True):
        here = DC.run_grid(c)
        assert got.cells == here.cells and got.steps == here.steps
        for name in ("share", "align", "probe", "raw_probe", "T1"):
            assert torch.equal(getattr(got, name), getattr(here, name)), name


def _result(final: dict, R: int = 4, moved: float = 0.0, T1: int = 0):
    """A hand-made result with two checkpoints; `final` maps (name, kind) to the per-replicate values at both
    (the earlier one shifted by `moved`)."""
    cells = [(k, 1.0) for k in VW.KINDS]
    d = 4
    base = {"share": torch.zeros(2, 3, R), "align": torch.zeros(2, 3, R), "removal": torch.zeros(2, 3, R),
            "probe": torch.zeros(2, 3, R, d), "singles": torch.zeros(2, 3, R, d, dtype=torch.long)}
    for (name, kind), v in final.items():
        c = cells.index((kind, 1.0))
        v = torch.as_tensor(v, dtype=base[name].dtype)
        v = v if v.dim() == base[name].dim() - 2 else v[:, None].expand(R, d)
        base[name][1, c] = v
        base[name][0, c] = v - moved if name != "singles" else v
    return DC.DecouplingResult(cells, [5, 10], base["share"], base["align"], base["removal"], base["probe"],
                               base["singles"], torch.zeros(3, R, d), torch.tensor([False, False, True, True]),
                               torch.tensor([10]), torch.zeros(1, 3, R), torch.full((3, R), T1), 0.0)


def _rows(res, cfg):
    """The companion rows, gated by the table's premise rows (settling per row, the bias per pair type)."""
    return {r.id: r for r in V.gate(DC.verdict_rows(res, cfg), "09") if r.kind != "premise"}


def test_each_row_has_its_settling_premise_and_each_pair_type_its_bias_premise():
    cfg = DC.DecouplingConfig(ratios=(1.0,))
    rows = DC.verdict_rows(_result({}), cfg)
    premises = {r.id for r in rows if r.kind == "premise"}
    claims = [r for r in rows if r.kind != "premise"]
    assert {f"stage_reached__{r.id}" for r in claims} | {"companion_bias__random_mask", "companion_bias__paper"} \
        == premises
    assert all(f"stage_reached__{r.id}" in r.depends for r in claims)
    for kind in ("random_mask", "paper"):
        mine = [r for r in claims if r.id.startswith(kind + "_") or r.id == f"probe_gap_{kind}"]
        assert mine and all(f"companion_bias__{kind}" in r.depends for r in mine)
    ident = [r for r in claims if r.id.startswith("identical_")]
    assert ident and all(not any(d.startswith("companion_bias") for d in r.depends) for r in ident)   # footnote 3


def test_verdict_rows_on_a_hand_made_result():
    cfg = DC.DecouplingConfig(ratios=(1.0,))
    res = _result({("share", "random_mask"): [0.95, 0.96, 0.97, 0.96],        # holds: whole interval above 0.88
                   ("align", "random_mask"): [0.8, 0.82, 0.81, 0.8],          # does not hold: wholly above 0.52
                   ("removal", "random_mask"): [0.95, 0.96, 0.95, 0.97],
                   ("singles", "random_mask"): torch.ones(4, 4, dtype=torch.long),
                   ("probe", "random_mask"): [0.1, 0.12, 0.11, 0.1],
                   ("align", "identical"): [0.2, 0.9, 0.5, 0.99],             # interval straddles 0.88: inconclusive
                   ("probe", "identical"): [0.9, 0.92, 0.91, 0.9],
                   ("share", "paper"): [0.5, 0.51, 0.5, 0.52]})               # does not hold
    rows = _rows(res, cfg)
    assert set(rows) == {f"{pairs}_{what}" for pairs in ("random_mask", "paper")
                         for what in ("share", "align", "removal", "coverage", "probe")} | {
        "identical_align", "identical_probe", "probe_gap_random_mask", "probe_gap_paper"}
    assert all(r.source.startswith("Wen & Li 2021") and r.kind == "companion" and r.n == 4 for r in rows.values())
    share = rows["random_mask_share"]
    assert share.verdict == V.HOLDS and "0.88" in share.rule and share.predicted == "≥ 0.9"
    assert rows["random_mask_align"].verdict == V.FAILS
    assert rows["random_mask_removal"].verdict == V.HOLDS
    assert rows["random_mask_probe"].verdict == V.HOLDS
    cov = rows["random_mask_coverage"]
    assert cov.verdict == V.HOLDS and cov.measured == 1.0
    ident = rows["identical_align"]
    assert ident.verdict == V.INCONCLUSIVE and ident.n_needed > 4
    assert rows["identical_probe"].verdict == V.HOLDS
    assert rows["paper_share"].verdict == V.FAILS
    gap = rows["probe_gap_random_mask"]
    assert gap.verdict == V.HOLDS and gap.measured == pytest.approx(0.8, abs=1e-6) and gap.predicted == "> 0.1"


def test_the_paired_probe_gap_is_judged_against_its_smallest_effect():
    cfg = DC.DecouplingConfig(ratios=(1.0,), probe_gap_min=0.1)
    def gap(res):
        return {r.id: r for r in DC.verdict_rows(res, cfg)}["probe_gap_random_mask"]
    same = _result({("probe", "identical"): [0.5, 0.6, 0.7, 0.6], ("probe", "random_mask"): [0.5, 0.6, 0.7, 0.6]})
    assert gap(same).verdict == V.FAILS                       # exactly 0: a tight interval short of the effect
    small = _result({("probe", "identical"): [0.55, 0.66, 0.75, 0.65], ("probe", "random_mask"): [0.5, 0.6, 0.7, 0.6]})
    assert gap(small).verdict == V.PARTLY                     # a real positive gap, smaller than probe_gap_min
    big = _result({("probe", "identical"): [0.9, 0.95, 0.9, 0.92], ("probe", "random_mask"): [0.5, 0.6, 0.7, 0.6]})
    assert gap(big).verdict == V.HOLDS


def test_verdict_rows_are_not_comparable_before_convergence_or_without_the_bias():
    cfg = DC.DecouplingConfig(ratios=(1.0,), tol_converged=0.02)
    final = {("share", "random_mask"): [0.95, 0.96, 0.97, 0.96], ("align", "identical"): [0.95, 0.96, 0.95, 0.96]}
    moving = _rows(_result(final, moved=0.1), cfg)
    assert all(r.verdict == V.NOT_COMPARABLE for r in moving.values() if r.measured != 0.0)
    assert "0.1" in moving["random_mask_share"].premise
    no_bias = _rows(_result(final, T1=-1), cfg)
    assert no_bias["random_mask_share"].verdict == V.NOT_COMPARABLE
    assert no_bias["identical_align"].verdict == V.HOLDS   # footnote 3: any bias will do


def test_verdict_rows_follow_the_thresholds_in_the_config():
    res = _result({("probe", "random_mask"): [0.3, 0.31, 0.3, 0.32]})
    def judge(cfg):
        return {r.id: r for r in DC.verdict_rows(res, cfg)}["random_mask_probe"]
    assert judge(DC.DecouplingConfig(probe_max=0.5)).verdict == V.HOLDS
    assert judge(DC.DecouplingConfig(probe_max=0.1)).verdict == V.FAILS
    assert judge(DC.DecouplingConfig(probe_max=0.1)).predicted == "≤ 0.1"


def test_contrast_config_final_table_and_paired_difference():
    cfg = DC.DecouplingConfig(ratios=(1.0, 0.3))
    c = cfg.contrast()
    assert c.kinds == ("identical", "random_mask") and c.ratios == (1.0,)
    assert (c.weight_decay, c.tau, c.steps) == (cfg.contrast_weight_decay, cfg.contrast_tau, cfg.contrast_steps)
    res = _result({("share", "identical"): [0.1, 0.2, 0.3, 0.4], ("share", "paper"): [0.0, 0.1, 0.2, 0.3]})
    table = DC.final_table(res)
    assert set(table) == set(VW.KINDS)
    m, lo, hi = table["identical"]["share"]
    assert m == pytest.approx(0.25) and lo < 0.25 < hi
    assert table["identical"]["coverage"] == (0.0, 0.0, 0.0)
    m, lo, hi = DC.paired_difference(res, "share", "identical", "paper")   # a constant 0.1 apart: no spread
    assert m == pytest.approx(0.1) and lo == pytest.approx(0.1) and hi == pytest.approx(0.1)


def test_imbalance_answer_reads_the_minority_gap_from_the_intervals():
    cells = [(k, r) for r in (1.0, 0.1) for k in VW.KINDS]
    R, d = 4, 4
    probe = torch.full((1, 6, R, d), 0.2)
    rm = cells.index(("random_mask", 0.1))
    probe[0, rm, :, 2:] = torch.tensor([0.8, 0.82, 0.81, 0.8])[:, None]       # RandomMask at 0.1: minority fails
    res = DC.DecouplingResult(cells, [10], torch.zeros(1, 6, R), torch.zeros(1, 6, R), torch.zeros(1, 6, R), probe,
                              torch.ones(1, 6, R, d, dtype=torch.long), torch.zeros(6, R, d),
                              torch.tensor([False, False, True, True]), torch.tensor([10]), torch.zeros(1, 6, R),
                              torch.zeros(6, R), 0.0)
    lines = DC.imbalance_answer(res, DC.DecouplingConfig(ratios=(1.0, 0.1), probe_max=0.5))
    assert len(lines) == 3
    line = [x for x in lines if x.startswith("RandomMask")][0]
    assert "(not recovered at the threshold 0.5)" in line and "worse than the majority" in line
    ident = [x for x in lines if x.startswith("identical")][0]
    assert "(recovered at the threshold 0.5)" in ident and "not distinguishable" in ident
    row = [t for t in DC.imbalance_table(res) if t["kind"] == "random_mask" and t["ratio"] == 0.1][0]
    assert row["probe_gap"][0] == pytest.approx(0.6075, abs=1e-4)


def test_imbalance_answer_reads_as_written_for_each_way_the_minority_can_come_out():
    """At the smallest ratio, one sentence per pair type, in full: recovered or not or undecided against probe_max
    (its edge counts as recovered), and the minority better than, worse than or not distinguishable from the
    majority; intervals are 95% t-intervals over the 4 replicates (hand-computed with scipy's t)."""
    from scipy import stats as sps
    cells = [(k, r) for r in (1.0, 0.1) for k in VW.KINDS]
    R, d = 4, 4
    probe = torch.full((1, 6, R, d), 0.2)
    singles = torch.ones(1, 6, R, d, dtype=torch.long)
    at = {k: cells.index((k, 0.1)) for k in VW.KINDS}
    probe[0, at["identical"], :, :2], probe[0, at["identical"], :, 2:] = 0.3, 0.1
    probe[0, at["random_mask"], :, :2], probe[0, at["random_mask"], :, 2:] = 0.6, 0.8
    probe[0, at["paper"], :, :2] = 0.5
    probe[0, at["paper"], :, 2:] = torch.tensor([0.4, 0.6, 0.4, 0.6])[:, None]
    singles[0, at["identical"], :, 2:] = 0                                # the minority atoms uncovered
    res = DC.DecouplingResult(cells, [10], torch.zeros(1, 6, R), torch.zeros(1, 6, R), torch.zeros(1, 6, R), probe,
                              singles, torch.zeros(6, R, d), torch.tensor([False, False, True, True]),
                              torch.tensor([10]), torch.zeros(1, 6, R), torch.zeros(6, R), 0.0)
    lines = {x.split(" at ")[0]: x for x in DC.imbalance_answer(res, DC.DecouplingConfig(ratios=(1.0, 0.1),
                                                                                      probe_max=0.5))}
    assert lines["identical copies"] == (
        "identical copies at eps_min/eps_max = 0.1: minority probe MSE 0.100 [0.100, 0.100] (recovered at the "
        "threshold 0.5), majority 0.300 [0.300, 0.300] (recovered); the minority is better than the majority (gap "
        "-0.200 [-0.200, -0.200]).")
    assert lines["RandomMask"] == (
        "RandomMask at eps_min/eps_max = 0.1: minority probe MSE 0.800 [0.800, 0.800] (not recovered at the "
        "threshold 0.5), majority 0.600 [0.600, 0.600] (not recovered); the minority is worse than the majority "
        "(gap +0.200 [+0.200, +0.200]).")
    sd = float(torch.tensor([0.4, 0.6, 0.4, 0.6]).std())          # the paper pairs' minority: ±0.1 around 0.5
    hw = sps.t.ppf(0.975, 3) * sd / 2                                # 95% t half-width over 4 replicates
    assert lines["the main paper's pairs"] == (
        f"the main paper's pairs at eps_min/eps_max = 0.1: minority probe MSE 0.500 [{0.5 - hw:.3f}, {0.5 + hw:.3f}] "
        "(undecided at the threshold 0.5), majority 0.500 [0.500, 0.500] (recovered); the minority is not "
        f"distinguishable from the majority (gap +0.000 [{-hw:+.3f}, {hw:+.3f}]).")
    row = next(t for t in DC.imbalance_table(res) if t["kind"] == "identical" and t["ratio"] == 0.1)
    assert (row["cover_major"], row["cover_minor"], row["cover_gap"]) == ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0),
                                                                         (-1.0, -1.0, -1.0))
    assert row["probe_major"] == pytest.approx((0.3,) * 3) and row["probe_gap"] == pytest.approx((-0.2,) * 3)


def test_differences_are_the_paired_differences_of_every_final_summary():
    res = _result({("share", "identical"): [0.1, 0.2, 0.3, 0.4], ("share", "paper"): [0.0, 0.1, 0.2, 0.3],
                   ("probe", "identical"): [0.5, 0.5, 0.5, 0.5]})
    diffs = DC.differences(res, "identical", "paper")
    assert list(diffs) == ["share", "align", "removal", "coverage", "probe"]
    assert diffs["share"] == pytest.approx((0.1, 0.1, 0.1)) and diffs == {
        name: DC.paired_difference(res, name, "identical", "paper") for name in diffs}
    assert diffs["probe"][0] == pytest.approx(0.5 - float(res.series("probe", "paper")[-1].float().mean()))


def _three_checkpoints(res):
    """`res` with a first checkpoint prepended, far from the other two (so [1] and [-1], or [-2] and [0], differ)."""
    import dataclasses
    def early(x):
        return torch.cat([x[:1] + 7, x]) if x.dtype.is_floating_point else torch.cat([x[:1], x])
    return dataclasses.replace(res, steps=[1, *res.steps], share=early(res.share), align=early(res.align),
                               removal=early(res.removal), probe=early(res.probe), singles=early(res.singles))


def test_a_rows_settling_is_how_far_its_mean_moved_over_the_last_interval_and_reads_as_written():
    cfg = DC.DecouplingConfig(ratios=(1.0,), tol_converged=0.05)
    series = torch.tensor([[0.0], [0.5], [0.52]])                    # (T = 3, R = 1)
    from imbalanced_cl.claims.decoupling.verdicts import settled_row
    r = settled_row(cfg, series, "identical_align")
    assert (r.id, r.kind, r.quantity, r.verdict) == ("stage_reached__identical_align", "premise", "positive", V.HOLDS)
    assert r.measured == pytest.approx(0.02) and (r.band_lo, r.band_hi) == (0.0, 0.05)
    assert (r.claim, r.source, r.predicted, r.rule) == (
        "t ≥ T3 for identical_align: how far its mean moved over the last checkpoint interval",
        f"{DC.COMPANION}, Thm 3.4 (t ≥ T3)", "≤ 0.05", "holds when the mean moved by ≤ 0.05")
    one = settled_row(cfg, series[-1:], "identical_align")         # one checkpoint: no interval to move over
    assert one.measured == math.inf and one.verdict == V.FAILS


def test_an_undecided_companion_row_asks_for_the_replicates_its_band_edge_needs():
    """A bound row's band edge is bound − tol (at least) or bound + tol (at most); a gap row's is probe_gap_min: an
    inconclusive row states n (half-width / |mean − edge|)² replicates; rows read the last checkpoint."""
    cfg = DC.DecouplingConfig(ratios=(1.0,))
    res = _three_checkpoints(_result({("align", "identical"): [0.80, 0.86, 0.92, 0.98],      # around 0.9 − 0.02
                                      ("align", "random_mask"): [0.40, 0.48, 0.56, 0.64],    # around 0.5 + 0.02
                                      ("probe", "identical"): [0.60, 0.62, 0.64, 0.66],
                                      ("probe", "random_mask"): [0.45, 0.50, 0.55, 0.60]}))   # gap around 0.1
    rows = {r.id: r for r in DC.verdict_rows(res, cfg)}
    for rid, edge in (("identical_align", 0.9 - 0.02), ("random_mask_align", 0.5 + 0.02),
                      ("probe_gap_random_mask", 0.1)):
        r = rows[rid]
        assert r.verdict == V.INCONCLUSIVE, rid
        assert r.n_needed == math.ceil(4 * ((r.hi - r.lo) / 2 / abs(r.measured - edge)) ** 2), rid
    assert rows["identical_align"].measured == pytest.approx(0.89)            # the last checkpoint, not the first
    assert rows["probe_gap_random_mask"].measured == pytest.approx(0.63 - 0.525)

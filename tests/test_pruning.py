"""Notebook 04's measurements (claims.pruning): config validation, feature statistics, rates, mechanism, census."""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.claims import pruning as pa
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.sim.train import train
from imbalanced_cl.verdict import FAILS, HOLDS, PARTLY, UNTESTED
from imbalanced_cl import verdict as V

TINY = dict(d=4, d1=8, L=2, m=6, n_pairs=16, R=2, record_every=5, progress=False, vanilla_steps=20,
            prune_steps=20, rate_window=10, top_k=2, alpha_grid=(0.2, 0.5), alpha_main=0.2,
            eps_min_grid=(0.5, 1.0))


@pytest.mark.parametrize("field,value", [
    ("alpha_grid", (0.1, 1.0)), ("alpha_grid", (0.0,)), ("alpha_grid", ()), ("alpha_main", 0.0),
    ("alpha_main", 1.2), ("eps_min_grid", (0.5, 1.5)), ("rate_window", 100), ("rate_window", 1),
    ("vanilla_steps", 0), ("top_k", 7), ("tol_slope", (0.5, 0.2)), ("tol_factor", (3.0,)),
    ("cos_threshold", 0.0), ("degrade_tol", 1.0), ("n_minority", 0), ("prune_alpha", 1.0),
])
def test_config_rejects_bad_values_naming_the_parameter(field, value):
    with pytest.raises(ParameterError, match=field):
        pa.PruningConfig(**{**TINY, field: value})


def test_config_from_namespace_and_protocol_configs():
    cfg = pa.PruningConfig.from_namespace({**TINY, "alpha_grid": [0.2, 0.5]})
    assert cfg.alpha_grid == (0.2, 0.5)
    v = cfg.vanilla()
    assert (v.steps, v.prune_alpha) == (20, 0.0)
    b = cfg.branch(0.3, "literal")
    assert (b.steps, b.prune_alpha, b.prune_start, b.prune_backward) == (40, 0.3, 20, "literal")
    s = cfg.from_start(0.3)
    assert (s.steps, s.prune_start) == (40, 0)


def test_feature_statistics_on_constructed_weights():
    M = torch.eye(5, 3).unsqueeze(0)                     # features = first 3 coordinates
    W = torch.tensor([[[1.0, 0.0, 0.0, 0.0, 0.0],        # pure feature 0
                       [0.6, 0.8, 0.0, 0.0, 0.0],        # mixed 0/1 (N_i = {0, 1})
                       [0.0, 0.0, 0.2, 1.0, 0.0],        # weak feature 2 (cos ~ 0.196)
                       [0.0, 0.0, 0.0, 0.0, 1.0]]])      # no feature
    cfg = pa.PruningConfig(d=3, d1=5, m=4, n_minority=1, top_k=1, **{k: v for k, v in TINY.items()
                                                                      if k not in ("d", "d1", "m", "top_k")})
    assert pa.aligned_counts(W, M, 0.3).tolist() == [[2.0, 1.0, 0.0]]
    torch.testing.assert_close(pa.max_cosine(W, M), torch.tensor([[1.0, 0.8, 0.2 / math.sqrt(1.04)]]))
    # neuron 3 has all-zero coefficients: every feature ties at 0, so N_i is all features, not a single one
    assert pa.single_feature_counts(W, M, 0.5).tolist() == [[1.0, 0.0, 1.0]]
    A = pa.amplitudes(W, M)
    torch.testing.assert_close(A, torch.tensor([[1.0, 0.8, 0.2]]))
    torch.testing.assert_close(pa.amplitude_ratio(W, M, cfg), torch.tensor([0.2 / 0.9]))
    assert pa.minority_index(cfg) == [2]


def test_gap_by_feature_means():
    gap = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    S = torch.tensor([[[1, 0], [1, 1], [0, 0], [0, 1]]], dtype=torch.bool)
    w, wo = pa.gap_by_feature(gap, S)
    torch.testing.assert_close(w, torch.tensor([[1.5, 3.0]]))
    torch.testing.assert_close(wo, torch.tensor([[3.5, 2.0]]))


def test_degradation_threshold():
    maj = torch.tensor([[1.0, 0.95, 0.8, 0.5], [1.0, 1.0, 1.0, 1.0]])
    thr = pa.degradation_threshold([0.1, 0.2, 0.3, 0.4], maj, torch.tensor([1.0, 1.0]), 0.1)
    assert thr[0] == pytest.approx(0.3) and math.isnan(float(thr[1]))


@pytest.fixture(scope="module")
def tiny_runs():
    cfg = pa.PruningConfig(**TINY)
    base = train(cfg.vanilla())
    return cfg, base, pa.run_branches(cfg, [0.5], base)


def test_excess_growth_is_zero_against_itself_and_finite_under_pruning(tiny_runs):
    cfg, base, runs = tiny_runs
    mi, ma = pa.excess_growth(runs[0.0], runs[0.0], cfg)
    assert torch.all(mi == 0) and torch.all(ma == 0)
    mi, ma = pa.excess_growth(runs[0.5], runs[0.0], cfg)
    assert mi.shape == (cfg.R,) and torch.isfinite(mi).all() and torch.isfinite(ma).all()
    assert not torch.equal(runs[0.5].W, runs[0.0].W)


def test_mechanism_and_mask_census_shapes_and_ranges(tiny_runs):
    cfg, base, _ = tiny_runs
    mech = pa.mechanism(base, 0.5)
    assert mech["rise_with"].shape == (cfg.R, cfg.d)
    assert int((mech["mask"] == 0).sum()) == cfg.R * 3
    assert torch.all(mech["gap_full"] > 0) and torch.all(mech["gap_full"] < 1)
    none = pa.positive_gap(base.W, base.bias, base, None)
    torch.testing.assert_close(none, mech["gap_full"])
    cen = pa.mask_census(base, 0.5, cfg)
    for key in ("minority_aligned", "minority_dominant", "dead", "lucky_init", "lucky_init_minority"):
        assert cen[key].shape == (cfg.R,) and torch.all((cen[key] >= 0) & (cen[key] <= 1)), key
    assert torch.equal(cen["pruned"], mech["mask"] == 0)


def test_mask_persistence_is_one_on_unchanged_weights(tiny_runs):
    cfg, base, _ = tiny_runs
    assert torch.all(pa.mask_persistence(base, cfg, 0.5, base.W) == 1)


def test_t5_elapsed_matches_formula():
    cfg = pa.PruningConfig(**{**TINY, "d": 20, "d1": 40, "m": 10}, eps_min=0.5)
    want = (2.0 - 1.0) * 20 / (cfg.lr * 0.1 * 0.25 * math.log(math.log(20)))
    assert pa.t5_elapsed(cfg, 0.1) == pytest.approx(want)



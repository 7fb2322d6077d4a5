"""Census of Def. B.1: exact expectations against large Monte-Carlo samples, exponent fits, grid validation."""
import math

import numpy as np
import pytest

from imbalanced_cl.claims import census as C
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.claims.lucky import LuckyConfig
from imbalanced_cl.claims.scaling import ScalingConfig
from imbalanced_cl.claims.census import exact as CE
from imbalanced_cl import stats
from imbalanced_cl.claims import lucky


def test_ordinary_probability_matches_monte_carlo():
    d, rho, gamma = 10, 0.8, 0.1
    mc = C.mc_census(d, rho, gamma, n_neurons=100000, R=2, seed=1)
    p = CE.p_ordinary(d, rho, gamma)
    n = 2 * 100000 * d
    se = math.sqrt(p * (1 - p) / n) * 3  # neurons share s_i, so allow a wider band than independent pairs
    assert abs(mc["p_ord"].mean() - p) < 4 * se
    assert abs(mc["Ni"].mean() - CE.expected_Ni(d, rho, gamma)) < 0.01 * d * p + 4 * se * d


def test_ordinary_probability_enumerable_case():
    # d = 2: u_1^2 = cos^2(theta), theta uniform, so P(u_1^2 >= b) = 1 - (2/pi) asin(sqrt(b)) exactly.
    d, rho, gamma = 2, 1.0, 0.3
    _, b = C.thresholds(d, rho, gamma)
    assert CE.p_ordinary(d, rho, gamma) == pytest.approx(1 - 2 / math.pi * math.asin(math.sqrt(b)), rel=1e-9)


@pytest.mark.parametrize("d,rho", [(10, 1.0), (30, 1.0), (10, 0.8)])
def test_lucky_and_single_match_monte_carlo(d, rho):
    gamma = 0.1
    mc = C.mc_census(d, rho, gamma, n_neurons=200000, R=2, seed=2)
    a, b = C.thresholds(d, rho, gamma)
    lp, rse = CE.log_p_one_above(d, a, b, n=20000)
    assert math.exp(lp) == pytest.approx(mc["p_lucky"].mean(), rel=0.1 + 3 * rse)
    assert CE.p_single(d, rho, gamma) == pytest.approx(mc["single"].mean(), rel=0.08)
    assert CE.p_B_exact(d, rho, gamma) == pytest.approx(mc["B"].mean(), rel=0.08)


def test_lucky_is_subset_of_ordinary_and_unique():
    g = C.gaussian_coef(2, 5000, 8, seed=3)
    c = C.census_of(g, 8, 1.0, 0.0)
    assert not (c["lucky"] & ~c["ordinary"]).any()
    assert int(c["lucky"].sum(-1).max()) <= 1


def test_paper_pr_B_tends_to_zero_for_imbalance():
    # brief §6 item 1: (1 - p2)^(d-1) -> 0 when rho < 1, so Pr[B_i] = 1 (L1967) cannot hold
    vals = [CE.paper_pr_B(d, 0.8, 0.1) for d in (10, 100, 1000, 10000)]
    assert all(x > y for x, y in zip(vals, vals[1:], strict=False)) and vals[-1] < 0.01


def test_fit_recovers_known_slope():
    rng = np.random.default_rng(0)
    x = np.logspace(1, 4, 12)
    y = 3.0 * x ** 0.7 * np.exp(0.02 * rng.standard_normal(x.size))
    fit = stats.fit_loglog(x, y)
    assert fit.lo <= 0.7 <= fit.hi and abs(fit.slope - 0.7) < 0.02
    Y = np.stack([2.0 * x ** -1.0 * np.exp(0.05 * rng.standard_normal(x.size)) for _ in range(5)])
    fr = stats.fit_loglog_replicates(x, Y)
    assert fr.lo <= -1.0 <= fr.hi
    # and it can fail: a slope of 0.7 is not inside the interval of a slope-1 fit
    assert not (fr.lo <= 0.7 <= fr.hi)


@pytest.mark.parametrize("kw,name", [
    (dict(census_ds=()), "census_ds"),
    (dict(census_ratios=(0.5, 1.2)), "census_ratios[1]"),
    (dict(census_ds=(1, 10)), "census_ds[0]"),
])
def test_bad_census_grid(kw, name):
    with pytest.raises(ParameterError, match=name.replace("[", r"\[").replace("]", r"\]")):
        lucky.CensusConfig(**kw)
    with pytest.raises(ParameterError, match=name.replace("[", r"\[").replace("]", r"\]")):
        LuckyConfig(**kw)


@pytest.mark.parametrize("kw,name", [(dict(ratios=[]), "ratios"), (dict(ratios=(1.5,)), r"ratios\[0\]"),
                                     (dict(ds=(1,)), r"ds\[0\]"), (dict(ni_rel=0.0), "ni_rel")])
def test_bad_scaling_grid(kw, name):
    with pytest.raises(ParameterError, match=name):
        ScalingConfig.from_namespace(kw)


def test_error_names_allowed_range():
    with pytest.raises(ParameterError, match=r"\(0.0, 1.0\]"):
        ScalingConfig(ratios=(2.0,))


@pytest.mark.parametrize("k", [1.0, 0.0, 0.4])
def test_tracking_slope_recovers_known_scaling(k):
    """|N_i| = c d^(k (1 - rho^2)) with replicate noise: the exponent-on-(1 - rho^2) slope recovers k."""
    from imbalanced_cl.claims.scaling import ni_exponents, tracking_slope
    rng = np.random.default_rng(0)
    ds, ratios = np.array([10.0, 20, 40, 80]), np.array([1.0, 0.7, 0.5, 0.3])
    base = 3.0 * ds[None, None, :] ** (k * (1 - ratios ** 2))[None, :, None]
    Ni = base * np.exp(rng.normal(0, 0.02, size=(6, 4, 4)))
    E = ni_exponents(ds, Ni)
    assert E.shape == (6, 4) and np.allclose(E.mean(0), k * (1 - ratios ** 2), atol=0.05)
    fit = tracking_slope(ds, ratios, Ni)
    assert fit.lo <= k <= fit.hi and fit.hi - fit.lo < 0.2


def test_minority_ratio_over_time():
    import torch
    from imbalanced_cl.claims.scaling import minority_ratio_over_time
    coef = torch.zeros(2, 1, 3, 4)            # (T, R, m, d); features 2, 3 are minority
    coef[0, 0, 0] = torch.tensor([2.0, -4.0, 1.0, 1.0])
    coef[1, 0, 1] = torch.tensor([1.0, 1.0, -3.0, 1.0])
    minority = torch.tensor([False, False, True, True])
    out = minority_ratio_over_time(coef, minority)
    assert torch.allclose(out[:, 0], torch.tensor([1.0 / 3.0, 2.0 / 1.0]))


# ---------------------------------------------------------------- the census's array work on the run's device

def test_the_census_device_is_checked_in_one_line_and_carried_from_notebook_02s_config():
    """CensusConfig.device: one of auto, cpu, cuda; 'cuda' without CUDA is refused before any compute; notebook 02's
    config hands its own device to the census it builds."""
    import torch
    with pytest.raises(ParameterError, match="parameter device='gpu' is invalid"):
        lucky.CensusConfig(device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ParameterError, match="device='cuda' is invalid here: no CUDA device"):
            lucky.CensusConfig(device="cuda")
    assert LuckyConfig(device="cpu").census().torch_device == torch.device("cpu")
    assert lucky.CensusConfig().torch_device.type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_def_b1_runs_on_the_meta_device_without_reading_a_value():
    """census_of is array work: on `meta` (shapes, no values) it gives every membership array its shape, so no step
    reads a number back to the host (a meta tensor cannot be read), as a GPU's census needs."""
    import torch
    g = torch.empty(3, 50, 20, device="meta")
    c = C.census_of(g, 20, 0.8, 0.1)
    assert {k: (v.device.type, tuple(v.shape), v.dtype) for k, v in c.items()} == {
        "ordinary": ("meta", (3, 50, 20), torch.bool), "lucky": ("meta", (3, 50, 20), torch.bool),
        "Ni": ("meta", (3, 50), torch.int64)}


def test_kappa_runs_on_the_meta_device_with_the_gpus_batched_draw(monkeypatch):
    """kappa_j's Monte Carlo (sim.theory.kappa_mc) on `meta` with the batched draw a GPU uses: the dictionary goes
    there, the pairs are drawn and reduced there, and d numbers' shape comes out: no value is read on the way."""
    from imbalanced_cl.sim import data, theory
    from imbalanced_cl.sim.config import SimConfig
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cuda", "meta"))
    kappa = theory.kappa_mc(SimConfig(d=6, d1=30, L=3), n=64, device="meta")
    assert kappa.device.type == "meta" and kappa.shape == (6,)


def test_kappa_under_the_gpus_batched_draw_follows_its_closed_form_at_one_token(monkeypatch):
    """kappa_j under the batched (Philox) draw a GPU uses, run on the CPU, against its closed form at L = 1, where
    attention returns the token itself: <M_j, U_X> = z_Xj + <M_j, xi_X>, the two views share support and sign and
    draw their magnitudes and noise independently (Assumptions 3.3-3.4), so kappa_j = q_j E[mag]^2 = p_j ((lo + hi)
    / 2)^2 with p_j = min(1, p_scale eps_j loglog d / d) (Def. 3.1); within 5% at 80,000 pairs."""
    import torch
    from imbalanced_cl.sim import data, theory
    from imbalanced_cl.sim.config import SimConfig
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cfg = SimConfig(d=4, d1=16, L=1, p_scale=3.0, sigma_xi=0.1, eps_max=1.0, eps_min=0.3, n_minority=1,
                    mag_lo=0.5, mag_hi=1.5)
    kappa = theory.kappa_mc(cfg, n=40000, replicates=2, device="cpu")
    p = [min(1.0, 3.0 * eps * math.log(math.log(4)) / 4) for eps in (1.0, 1.0, 1.0, 0.3)]
    assert torch.allclose(kappa, torch.tensor(p) * 1.0 ** 2, rtol=0.05), (kappa, p)


def test_the_exact_census_draws_once_per_d_whatever_the_event():
    """log_p_one_above's draws depend on (d, n, seed) alone: the three events notebook 02 asks at one d (lucky,
    single, B) read one set of draws, and a second d draws anew."""
    CE._other_squares.cache_clear()
    a, b = C.thresholds(40, 0.8, 0.1)
    for ev in ((a, b), (b, b), (0.0, b)):
        CE.log_p_one_above(40, *ev, n=500)
    assert CE._other_squares.cache_info().misses == 1
    CE.log_p_one_above(41, a, b, n=500)
    assert CE._other_squares.cache_info().misses == 2

"""Issue 63: the target-cell rule at two d's against hand-worked numbers (Def. B.1's count checked by plain Monte Carlo,
Lemma B.1's K, the proof's lambda, the window's end), a premise out of reach and a cell too large said before any
training, and the convergence thresholds of notebooks 04 and 10 pinned to the paper's reading."""
import math
from types import SimpleNamespace

import pytest
import torch

from imbalanced_cl.claims import premise_map as PM
from imbalanced_cl.claims import pruning as pa
from imbalanced_cl.claims.premise_map import target as T

# Lemma B.1 deviations as a map measures them: (K, ||g_K - g_pop|| / ||w||, d1), by d
DEVS = {10: [(512, 0.0193, 50), (512, 0.0352, 50)], 20: [(512, 0.0220, 100)]}
GiB = 2 ** 30


def test_lucky_margin_and_lemma_b1_k_by_hand():
    # one replicate: (1 - e^-mu) = 0.9, mu = ln 10 = 2.302585; four: 0.9^(1/4) = 0.973999, mu = -ln 0.026001 = 3.6497
    assert T.lucky_expected(1, 0.9) == pytest.approx(2.302585, rel=1e-6)
    assert T.lucky_expected(4, 0.9) == pytest.approx(3.6497, rel=1e-4)
    assert (1 - math.exp(-T.lucky_expected(8, 0.95))) ** 8 == pytest.approx(0.95)
    # 512 (0.022 x 100)^2 = 512 x 4.84 = 2478.08; at p = 2 the bound is 100^-2: 512 (0.022 x 10^4)^2
    assert T.k_needed(512, 0.022, 100) == pytest.approx(2478.08)
    assert T.k_needed(512, 0.022, 100, poly=2.0) == pytest.approx(512 * 220.0 ** 2)


@pytest.mark.parametrize("d, m_one, lam, t4, K", [
    # m_one: the table (the map's conclusion, rho = 0.8); lambda = d^-1.49: 10^-1.49 = 0.032359,
    # 20^-1.49 = e^(-1.49 x 2.995732) = e^-4.463641 = 0.011520; T4 = d^1.99 / 0.5: 195.45, 776.39;
    # K: 512 (0.0352 x 50)^2 = 1585.97 (the larger of d = 10's two deviations), 512 (0.022 x 100)^2 = 2478.08
    (10, 4176, 0.032359, 195.45, 1586),
    (20, 4129, 0.011520, 776.39, 2479),
])
def test_target_settings_at_two_ds_by_hand(d, m_one, lam, t4, K):
    cfg = PM.PremiseMapConfig()                      # R = 4, d1 = 5 d, one minority feature, gamma = 0.1, eta = 0.5
    t = T.target(cfg, d, 0.8, DEVS, available=64 * GiB)
    assert t.d1 == 5 * d and t.R == 4
    assert t.m_one == pytest.approx(m_one, rel=2e-3)
    assert t.m == math.ceil(t.lucky_mu * t.m_one) and t.m == pytest.approx(3.6497 * m_one, rel=3e-3)
    assert t.K == K and f"at d={d}" in t.K_source
    assert t.lam_name == "bottom" and t.lam == pytest.approx(lam, rel=1e-4)
    assert t.lam_range[0] <= t.lam <= t.lam_range[1]
    assert t.window[1] == pytest.approx(t4, abs=0.01) and t.vanilla_max == math.floor(t4)   # the last step inside
    assert t.fits and t.runnable and not t.problems
    line = t.line()
    assert "\n" not in line and f"m = {t.m:,}" in line and f"K = {K:,}" in line and f"up to {math.floor(t4):,}" in line
    c = T.cell(cfg, t)                               # the map's cell at these settings
    assert (c.m, c.K, c.cfg.vanilla_steps) == (t.m, K, math.floor(t4))
    assert c.cfg.weight_decay == pytest.approx(lam, rel=1e-4) and c.cfg.d1 == 5 * d


def _plain_mc_p_lucky(d: int, rho: float, gamma: float, n: int, seed: int) -> float:
    """P(i in M*_j) by counting Def. B.1's event (eq. 27) on n Gaussian neurons in the feature span: g_j^2 >= c1 log d
    / d ||g||^2 and g_j'^2 <= c2 log d / d ||g||^2 for every j' != j; the census's exact law is not used."""
    c1, c2 = 2 * (1 + gamma) / rho ** 2, 2 * (1 - gamma) * rho ** 2
    a, b = c1 * math.log(d) / d, c2 * math.log(d) / d
    gen, hits = torch.Generator().manual_seed(seed), 0
    for _ in range(n // 500_000):
        g2 = torch.randn(500_000, d, generator=gen, dtype=torch.float64) ** 2
        s = g2.sum(-1)
        hits += int(((g2[:, 0] >= a * s) & (g2[:, 1:] <= (b * s)[:, None]).all(-1)).sum())
    return hits / n


@pytest.mark.parametrize("d", [10, 20])
def test_the_lucky_count_agrees_with_a_plain_monte_carlo_count(d):
    # about 2e6 / 4150 = 480 hits: a relative standard error of 4.6%, so 20% is over four standard errors
    t = T.target(PM.PremiseMapConfig(), d, 0.8, DEVS, available=64 * GiB)
    assert _plain_mc_p_lucky(d, 0.8, 0.1, 2_000_000, seed=d) * t.m_one == pytest.approx(1.0, abs=0.2)


def test_k_from_the_nearest_measured_d_and_none_without_a_measurement():
    cfg = PM.PremiseMapConfig()
    # only d = 20 measured: at d = 10, 512 (0.022 x 100)^2 (50 / 100)^2 = 619.52
    t = T.target(cfg, 10, 0.8, {20: DEVS[20]}, available=64 * GiB)
    assert t.K == 620 and "at d=20, scaled" in t.K_source
    none = T.target(cfg, 10, 0.8, {}, available=64 * GiB)
    assert none.K == 0 and not none.runnable and "one cell must be run first" in none.line()


def test_a_premise_out_of_reach_is_named_with_its_threshold_not_searched():
    # rho = 0.3, gamma = 0.1: c1 = 2.2 / 0.09 = 24.444; c1 ln 10 / 10 = 5.6286 >= 1: no unit vector is lucky
    t = T.target(PM.PremiseMapConfig(), 10, 0.3, DEVS, available=64 * GiB)
    assert t.m == 0 and not t.runnable and t.peak_bytes == 0.0
    assert len(t.problems) == 1 and "5.63 ≥ 1" in t.problems[0] and "any m" in t.problems[0]
    assert t.line().startswith("target cell d=10 ρ=0.3: not built: lucky minority neurons")


def test_a_cell_too_large_for_the_memory_is_one_line_with_its_size():
    cfg = PM.PremiseMapConfig()
    big = T.target(cfg, 20, 0.8, DEVS, available=1 * GiB)
    assert not big.fits and not big.runnable and not big.problems
    line = big.line()
    assert "\n" not in line and "too large for this machine, not trained" in line and "of 1.0 GiB" in line
    assert big.peak_bytes > 1 * GiB


# The convergence premise (Thm 3.1 eq. (11): the loss o(1); App. F: l'_p = 1 - Theta(1/tau) at T4) read at finite d:
# the loss at most half of ln K, an untrained encoder's, and l'_p at least 1 - c/tau with c at most 1/2. Each
# criterion is tested alone on a flat history, at the defaults of both notebooks that judge it.
def _flat(frac: float, lp: float, K: int = 512, steps: int = 500):
    t = torch.arange(0, steps + 1, 50)
    return t, torch.full((len(t), 2), frac * math.log(K)), torch.full((len(t), 2), lp)


def _judges():
    """(name, judge(frac, lp) -> holds) at each notebook's defaults, through the code each notebook calls."""
    p = pa.PruningConfig()

    def nb04(frac, lp):
        s, loss, pp = _flat(frac, lp)
        return pa.convergence(s, loss, pp, 512, p.tau, p.converge_loss_frac, p.converge_lp_c, p.converge_change,
                              p.converge_window).holds

    cell = PM.PremiseMapConfig().cell("plane", 10, "mid", 0.8)

    def nb10(frac, lp):
        s, loss, pp = _flat(frac, lp)
        hist = {"steps": s, "loss": loss, "pos_prob": pp}
        return PM.protocol.converged(SimpleNamespace(history=SimpleNamespace(get=hist.get)), cell).holds

    return [("04", nb04, p), ("10", nb10, PM.PremiseMapConfig())]


@pytest.mark.parametrize("name, holds, cfg", _judges())
def test_convergence_thresholds_are_pinned_to_the_papers_reading(name, holds, cfg):
    assert cfg.tau == 1.0 and cfg.converge_loss_frac <= 0.5 and cfg.converge_lp_c <= 0.5
    assert holds(0.30, 0.60)                        # learned: well below ln K, l'_p above 1 - 0.5 / tau
    # the loss alone: the recorded d = 10 plateau at 0.90 ln K (issue 63) is no convergence, whatever l'_p says;
    # a default loosened to 0.9 ln K would pass it
    assert not holds(0.90, 0.95) and not holds(0.60, 0.95)
    # l'_p alone: the b = 0 ceiling's l'_p at d = 20 (0.41) is short of 1 - 0.5 / tau
    assert not holds(0.30, 0.41)
    # the recorded plateaus as they were: d = 10 (0.90 ln K, l'_p 0.005), d = 20 (0.69, 0.05)
    assert not holds(0.90, 0.005) and not holds(0.69, 0.05)


@pytest.mark.parametrize("profile", ["ci", "default", "paper"])
def test_no_profile_loosens_the_convergence_thresholds(profile):
    from imbalanced_cl.book.build.profiles import params
    for nb, cfg in (("04_pruning_gains", pa.PruningConfig), ("10_premise_map", PM.PremiseMapConfig)):
        p = params(profile, nb)
        built = cfg(**{k: v for k, v in p.items() if k in ("converge_loss_frac", "converge_lp_c", "tau")})
        assert built.converge_loss_frac <= 0.5 and built.converge_lp_c <= 0.5, (profile, nb)

"""Target cells (issue 63): a cell's settings derived from what the premises of Theorems 3.1 and 3.2 require, not
chosen on a grid, so that one cell can meet every premise together where the map's star (one axis at a time) cannot.

The rule, one requirement per setting:
  * m from Definition B.1's count: the lucky minority neurons of a replicate number about Poisson(m / m_1), m_1 the m
    at which E|M*_j*| = 1 (eq. (27), the census's exact law); m is the smallest with every one of the R replicates
    holding at least one with probability `lucky_confidence` (the margin);
  * K from Lemma B.1's estimate: the K-pair gradient deviates from the population gradient by about K^-1/2, so a
    deviation `dev` measured at K pairs meets the bound ||w|| / d1^p at K (dev d1^p)^2 pairs (the largest over the
    cells measured at that d; from the nearest measured d, scaled by (d1 / d1')^2, where none was measured there);
  * lambda inside the proof's range [d^-1.49, d^-1.01] (App. E.3), by name;
  * the vanilla run allowed up to the end of Theorem 3.1's window, d^1.99 / eta, before convergence is judged.
A premise no m or K can meet (Def. B.1's threshold c1 log d / d >= 1 empties the lucky set) is named with its
threshold, and a cell too large for this machine's memory is one line with its size, both before any training.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...sim import memory, runtime
from ..census.sets import thresholds
from .config import Cell, PremiseMapConfig, lambda_value, window
from .metrics import neurons_needed

LUCKY_CONFIDENCE = 0.9     # every replicate holds a minority lucky neuron with this probability (Poisson)
TARGET_LAMBDA = "bottom"   # the b = 0 weight-decay equilibrium rises with lambda (docs/claim4-convergence.md)


def k_needed(K: int, dev: float, d1: int, poly: float = 1.0) -> float:
    """Lemma B.1's K: a deviation `dev` = ||g_K - g_pop|| / ||w|| measured at K pairs, scaled as K^-1/2, reaches the
    bound d1^-poly at K (dev d1^poly)^2 pairs."""
    return K * (dev * d1 ** poly) ** 2


def lucky_expected(R: int, confidence: float = LUCKY_CONFIDENCE) -> float:
    """The expected count mu per replicate at which all R replicates hold at least one, with Poisson(mu) counts, with
    probability `confidence`: (1 - e^-mu)^R = confidence, mu = -ln(1 - confidence^(1/R))."""
    return -math.log(-math.expm1(math.log(confidence) / R))


def measured_deviations(results) -> dict[int, list[tuple[int, float, int]]]:
    """{d: [(K, deviation, d1), ...]} of the cells that were run (notebook 10's CellResults, computed or recorded):
    the Lemma B.1 deviations the K estimate reads."""
    out: dict[int, list] = {}
    for res in results:
        if res.ran and "lemma_b1" in res.premises:
            out.setdefault(res.cell.d, []).append((res.cell.K, res.premises["lemma_b1"].value, res.cell.cfg.d1))
    return out


@dataclass(frozen=True)
class Target:
    """A target cell's settings, each with the requirement it meets, and what stops it (problems, too large)."""

    d: int
    d1: int
    ratio: float
    R: int
    m_one: float            # m at which E|M*_j*| = 1 (Def. B.1, exact law); inf where no m reaches it
    lucky_mu: float         # the expected count per replicate the margin asks for
    m: int                  # ceil(lucky_mu m_one); 0 when no m meets the premise
    K_needed: float         # Lemma B.1's estimate (nan where no deviation was measured)
    K: int                  # ceil(K_needed); 0 when unknown
    K_source: str           # which measurement the estimate comes from
    lam_name: str
    lam: float
    lam_range: tuple
    window: tuple           # Theorem 3.1's (T3, T4)
    vanilla_max: int        # floor(T4): the vanilla run's cap, the last step inside the window
    peak_bytes: float = 0.0
    available_bytes: float = 0.0
    seconds: float = math.nan    # training time at the measured loop rate (nan: no rate)
    problems: tuple = field(default_factory=tuple)   # premises no m or K can meet, with their thresholds

    @property
    def fits(self) -> bool:
        """Whether the estimated peak memory fits this machine's."""
        return self.peak_bytes <= self.available_bytes

    @property
    def runnable(self) -> bool:
        """Every setting derived, no premise out of reach, and it fits: a cell to train."""
        return not self.problems and self.m > 0 and self.K > 0 and self.fits

    def line(self) -> str:
        """The settings and why, in one line (printed with the cell); what stops it first, where something does."""
        head = f"target cell d={self.d} ρ={self.ratio:g}"
        if self.problems:
            return f"{head}: not built: " + "; ".join(self.problems)
        size = (f"peak memory about {memory.human(self.peak_bytes)} of {memory.human(self.available_bytes)}"
                + ("" if self.fits else ": too large for this machine, not trained"))
        when = "" if math.isnan(self.seconds) else f", about {runtime.duration(self.seconds)} of training"
        return (f"{head}: m = {_count(self.m)} ({self.lucky_mu:.2f} × {_count(self.m_one)}: every one of R = {self.R} "
                f"replicates holds a minority lucky neuron with probability {LUCKY_CONFIDENCE:g}, Def. B.1); "
                f"K = {_count(self.K)} (Lemma B.1: {self.K_source}); λ = {self.lam_name} = {self.lam:.3g} in "
                f"[{self.lam_range[0]:.3g}, {self.lam_range[1]:.3g}]; vanilla run up to {self.vanilla_max:,} steps "
                f"(window [{self.window[0]:.0f}, {self.window[1]:.0f}], d^1.99/η); {size}{when}")


def _count(n: float) -> str:
    """A count as text: with thousands separators, or a power of ten past 10^7."""
    return f"{n:,.0f}" if n < 1e7 else f"about 10^{math.log10(n):.0f}"


def k_estimate(d: int, d1: int, deviations: dict, poly: float) -> tuple[float, str]:
    """(K needed, its source) from the deviations measured at d, else at the nearest measured d (scaled by
    (d1/d1')^2: the bound moves with d1 while the deviation at fixed K barely moves with d); (nan, why) with none."""
    if not deviations:
        return math.nan, "no Lemma B.1 deviation measured at any d: one cell must be run first"
    near = d if d in deviations else min(deviations, key=lambda x: (abs(math.log(x / d)), x))
    K, dev, d1_ref = max(deviations[near], key=lambda t: k_needed(t[0], t[1], t[2], poly))
    k = k_needed(K, dev, d1_ref, poly) * (d1 / d1_ref) ** (2 * poly)
    at = f"at d={near}" + ("" if near == d else f", scaled by (d1/{d1_ref})^{2 * poly:g}")
    return k, f"{K} × ({dev:.3g} × {d1_ref}^{poly:g})² from the largest deviation measured {at}"


def target(cfg: PremiseMapConfig, d: int, ratio: float, deviations: dict, lam_name: str = TARGET_LAMBDA,
           confidence: float = LUCKY_CONFIDENCE, available: float | None = None) -> Target:
    """The target cell at (d, ratio) for the map's model (cfg's d1_over_d, n_minority, lucky_gamma, lr, R,
    regime_grad_poly): see the module docstring. `deviations` as measured_deviations returns them."""
    d1 = cfg.d1_over_d * d
    problems = []
    a = thresholds(d, ratio, cfg.lucky_gamma)[0]
    m_one = neurons_needed(d, ratio, cfg.n_minority, cfg.lucky_gamma)
    if a >= 1.0:
        problems.append(f"lucky minority neurons: Def. B.1's threshold c1 log d/d = {a:.3g} ≥ 1 empties the lucky "
                        f"set at any m (eq. (28), γ = {cfg.lucky_gamma:g}, ρ = {ratio:g})")
    elif not math.isfinite(m_one):
        problems.append("lucky minority neurons: one needs m > 10^300 (Def. B.1, exact law)")
    mu = lucky_expected(cfg.R, confidence)
    m = math.ceil(mu * m_one) if not problems else 0
    k, source = k_estimate(d, d1, deviations, cfg.regime_grad_poly)
    K = math.ceil(k) if math.isfinite(k) else 0
    lam = lambda_value(lam_name, d, cfg.weight_decay)
    t3, t4 = window(d, cfg.lr)
    out = Target(d, d1, ratio, cfg.R, m_one, mu, m, k, K, source, lam_name, lam, (d ** -1.49, d ** -1.01),
                 (t3, t4), math.floor(t4), problems=tuple(problems))
    if out.m and out.K:
        peak = memory.peak_bytes(d, d1, out.m, out.K, cfg.L, cfg.R)["total"]
        have = memory.available_bytes() if available is None else available
        c = cell(cfg, out)
        rate = runtime.load_rates().get("cpu")
        secs = math.nan if rate is None else sum(
            rate.seconds(steps * runtime.step_flops(s, s.R, linear=False), steps)
            for s, steps in ((c.cfg.vanilla(), out.vanilla_max), (c.cfg.sim(), 6 * cfg.prune_max)))
        out = Target(**{**out.__dict__, "peak_bytes": peak, "available_bytes": have, "seconds": secs})
    return out


def targets(cfg: PremiseMapConfig, results, ds) -> list[Target]:
    """The target cells at each d of ds and the map's largest ratio, K estimated from the deviations `results`
    measured (notebook 10 prints their lines)."""
    devs = measured_deviations(results)
    return [target(cfg, d, max(cfg.ratios), devs) for d in ds]


def cell(cfg: PremiseMapConfig, t: Target, bias_onset: str = "crossing") -> Cell:
    """The map's Cell at a target's settings: its m, K and lambda, the vanilla run capped at the window's end."""
    wide = cfg.replace(vanilla_max=max(t.vanilla_max, cfg.vanilla_block))
    return wide.cell("plane", t.d, t.lam_name, t.ratio, m_over_d=t.m / t.d, K=t.K, bias_onset=bias_onset)

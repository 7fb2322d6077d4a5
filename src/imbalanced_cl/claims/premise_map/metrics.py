"""The premises of Theorems 3.1 and 3.2 at one cell, and the predictions judged there: closed forms (no training)
and measurements on its runs.

A condition is a `Premise` record: its key, the condition id it checks (premises.CONDITIONS: a premise, or a
prediction), the value found, the threshold, and whether it holds. Only premises gate; predictions are judged.
Closed-form premises (the cell's config only):
  * lambda inside the proof's range [d^-1.49, d^-1.01] (App. E.3);
  * sigma_xi^2 on Assumption 3.3's scale sqrt(log d)/d (ratio within 1 +- 0.9; reported, required on request);
  * a minority coefficient grows in Stage 1: gain * kappa_min - lambda > 0 (eq. 7, sim/theory.py's closed form);
  * minority lucky neurons exist at initialisation: E|M*_j*| = m P(i in M*_j) n_minority >= 1 (Def. B.1, eq. 27).
Measured premises (the vanilla run at its branch point T4):
  * the vanilla steps T4 inside Theorem 3.1's window [d^1.01/eta, d^1.99/eta] (L277);
  * Lemma B.1: ||g_K - g_pop|| / ||w|| <= d1^-1 (L519);
  * convergence: InfoNCE <= converge_loss_frac ln K, mean l'_p >= 1 - converge_lp_c/tau, and the loss flat over
    the last block (eq. (11), L1768).
Predictions (judged, never gates): weights in the feature span (Thm 3.1's beta bound); a minority-dominant neuron
exists (Thm 3.1); the minority-dominant neurons are the smallest (Remark 2); the magnitude mask's share on them
(Remark 1, Thm F.1's P ⊆ M*_j*).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ... import stats
from ...sim import regime, theory
from ...sim.prune import mask_for
from ...sim.train import Run
from ..census.exact import log_p_lucky
from ..census.sets import thresholds
from ...premises import PREDICTION, condition
from ..pruning.metrics import Convergence, amplitude_ratio, minority_dominant, minority_index
from ..pruning.config import PruningConfig
from .config import Cell, PremiseMapConfig, lambda_value, window

CLOSED = ("lambda", "sigma", "growth", "lucky")
MEASURED = ("window", "lemma_b1", "convergence", "share", "dominant", "mask", "smallest")
# key -> the condition id it checks (premises.CONDITIONS); share, dominant, mask and smallest are predictions
IDS = {"lambda": "lambda_range", "window": "step_window", "sigma": "noise_scale", "growth": "minority_growth",
       "lucky": "lucky_exist", "lemma_b1": "k_poly", "convergence": "convergence", "share": "feature_span",
       "dominant": "minority_dominant_exist", "mask": "mask_share", "smallest": "minority_smallest",
       "prune_T": "prune_from_t4", "bound": "alpha_bound", "bound_ext": "alpha_bound_extended"}
SHORT = {"lambda": "λ in range", "window": "T4 in window", "sigma": "σ scale", "growth": "minority grows",
         "lucky": "lucky minority", "share": "feature span", "lemma_b1": "Lemma B.1", "dominant": "minority neurons",
         "mask": "mask on minority", "smallest": "minority smallest", "convergence": "converged",
         "prune_T": "paper's T", "bound": "α·m ≤ |M*_j*|", "bound_ext": "α·m ≤ |{j* ∈ N_i}|"}

# What each premise's value is, with its unit: a premise row's label names the number it shows
VALUE = {"lambda": "weight decay λ", "sigma": "ratio of σ_ξ² to √(log d)/d", "growth": "net rate gain κ_min − λ",
         "lucky": "expected minority lucky neurons", "window": "branch point T4, in steps",
         "lemma_b1": "||g_K − g_pop|| / ||w||", "convergence": "InfoNCE at T4, in nats",
         "share": "share of ||w||² in the feature span", "dominant": "fewest minority-dominant neurons",
         "mask": "mean share of the mask", "smallest": "mean share among the smallest",
         "prune_T": "pruning length, in steps", "bound": "α·m, in neurons", "bound_ext": "α·m, in neurons"}


@dataclass(frozen=True)
class Premise:
    """One premise at one cell: the value found, the threshold, whether it holds and whether it is required."""

    key: str             # one of CLOSED + MEASURED (or an arm's "prune_T", "bound", "bound_ext")
    text: str            # what is required, in words, with the paper's reference
    value: float
    threshold: str       # the threshold, as text
    holds: bool
    required: bool = True   # a premise the map holds cells to (a prediction is never required)

    def __post_init__(self):
        if self.prediction:      # predictions never gate (premises.py)
            object.__setattr__(self, "required", False)

    @property
    def cid(self) -> str:
        """The condition id this checks (premises.CONDITIONS)."""
        return IDS[self.key]

    @property
    def prediction(self) -> bool:
        """Whether this is a prediction of the paper (judged), not a premise (gating)."""
        return condition(IDS[self.key]).kind == PREDICTION

    @property
    def short(self) -> str:
        """A few words for figure labels."""
        return SHORT.get(self.key, self.key)


def minority_rates(cfg: PruningConfig, kappa: torch.Tensor) -> tuple[float, float]:
    """(majority, minority) Stage-1 net rates per unit eta: gain * kappa_j - lambda (eq. 7), averaged per group."""
    mino = minority_index(cfg)
    is_min = torch.zeros(cfg.d, dtype=torch.bool)
    is_min[mino] = True
    g = theory.gain(cfg)
    return (g * float(kappa[~is_min].mean()) - cfg.weight_decay, g * float(kappa[is_min].mean()) - cfg.weight_decay)


def expected_lucky_minority(cfg: PruningConfig) -> float:
    """E|M*_j*| summed over the minority features: m n_minority P(i in M*_j) (Def. B.1 eq. 27, exact law)."""
    lp = log_p_lucky(cfg.d, cfg.eps_min / cfg.eps_max, cfg.lucky_gamma)
    return math.exp(min(lp + math.log(cfg.m * cfg.n_minority), 700.0))


def neurons_needed(d: int, ratio: float, n_minority: int, gamma: float) -> float:
    """The m at which E|M*_j*| reaches 1: 1 / (n_minority P(i in M*_j)); inf where the probability underflows."""
    lp = log_p_lucky(d, ratio, gamma) + math.log(n_minority)
    return math.exp(-lp) if -lp < 700 else math.inf


def rule(key: str, value: float, cfg: PruningConfig, T: float = math.nan) -> tuple[str, bool] | None:
    """(threshold, holds) of a condition whose rule reads its value alone, at a cell's config (T: an arm's App. F.4
    T, for prune_T); None where the rule reads more than the value (share, convergence, the arm bounds).

    One place per rule: a cell measured now and a cell read from a campaign record are judged by it alike, so a
    moved threshold reaches recorded cells too (issue 47: a record keeps measurements, verdicts are recomputed)."""
    if key == "lambda":
        lo, hi = regime.lambda_range(cfg)
        return f"[{lo:.3g}, {hi:.3g}]", lo <= value <= hi
    if key == "sigma":
        return "[0.1, 1.9]", 0.1 <= value <= 1.9
    if key == "growth":
        return "> 0", value > 0
    if key == "lucky":
        return "≥ 1", value >= 1.0
    if key == "window":
        t3, t4 = window(cfg.d, cfg.lr)
        return f"[{t3:.0f}, {t4:.0f}]", t3 <= value <= t4
    if key == "lemma_b1":
        bound = cfg.d1 ** -cfg.regime_grad_poly
        return f"≤ {bound:.3g}", value <= bound
    if key == "dominant":                   # value: the fewest minority-dominant neurons over replicates
        return "≥ 1 (fewest over replicates)", value >= 1
    if key == "mask":
        return f"≥ {cfg.mask_share_min:g} (mean share)", value >= cfg.mask_share_min
    if key == "smallest":                   # NaN (no replicate has one) fails
        return f"≥ {cfg.mask_share_min:g} (mean over replicates that have some)", value >= cfg.mask_share_min
    if key == "prune_T":
        return f"≥ T = {T:.4g} steps", value >= T
    return None


def judged(key: str, text: str, value: float, cfg: PruningConfig, required: bool = True, T: float = math.nan,
           **kept) -> Premise:
    """A condition judged by its rule (rule()); where the rule reads more than the value, `kept` gives its threshold
    and holds (as measured now, or as recorded)."""
    again = rule(key, value, cfg, T)
    threshold, holds = again if again is not None else (kept["threshold"], kept["holds"])
    return Premise(key, text, value, threshold, bool(holds), required)


def closed_form(cfg: PruningConfig, kappa: torch.Tensor, require_sigma: bool = False) -> dict:
    """The closed-form premises of a cell's config (see the module docstring), keyed as CLOSED."""
    _, r_min = minority_rates(cfg, kappa)
    return {
        "lambda": judged("lambda", "λ inside the proof's range [d^-1.49, d^-1.01] (proof of Thm 3.1)",
                         cfg.weight_decay, cfg),
        "sigma": judged("sigma", "σ_ξ² on Assumption 3.3's scale √(log d)/d (ratio within 1 ± 0.9)",
                        regime.sigma_ratio(cfg), cfg, required=require_sigma),
        "growth": judged("growth", "a minority coefficient grows in Stage 1: gain κ_min − λ > 0 (eq. 7)", r_min, cfg),
        "lucky": judged("lucky", "minority lucky neurons at init: m n_min P(i ∈ M*_j) ≥ 1 (Def. B.1, Thm 3.2(a))",
                        expected_lucky_minority(cfg), cfg),
    }


def mask_share(W: torch.Tensor, M: torch.Tensor, alpha: float, cfg: PruningConfig) -> torch.Tensor:
    """(R,) share of the neurons the magnitude mask removes (the alpha m smallest ||w_i||) that are
    minority-dominant."""
    pruned = mask_for(W, alpha, "neuron") == 0
    dom = minority_dominant(W, M, cfg)
    return (pruned & dom).sum(-1).float() / pruned.sum(-1).clamp(min=1).float()


def smallest_share(W: torch.Tensor, M: torch.Tensor, cfg: PruningConfig) -> torch.Tensor:
    """(R,) share of minority-dominant neurons among the k smallest ||w_i||, k = their number (NaN where k = 0).

    This is the mask's share at the largest ratio Remark 1 allows (alpha m = |minority-dominant|): 1 when the
    minority neurons are exactly the smallest, as Remark 2 argues; about k/m when norm says nothing about them."""
    dom = minority_dominant(W, M, cfg)
    k = dom.sum(-1)
    rank = torch.argsort(torch.argsort(W.norm(dim=-1), dim=-1), dim=-1)        # 0 = smallest
    inside = (dom & (rank < k.unsqueeze(-1))).sum(-1).float()
    return torch.where(k > 0, inside / k.clamp(min=1).float(), torch.nan)


def measured(base: Run, cfg: PruningConfig, reg: regime.Regime, conv: Convergence) -> dict:
    """The measured premises and the predictions at the branch point T4 (the vanilla run's final weights), keyed as
    MEASURED."""
    share = stats.ci(reg.share)
    count = minority_dominant(base.W, base.M, cfg).sum(-1).float()
    small = float(torch.nanmean(smallest_share(base.W, base.M, cfg)))
    return {
        "window": judged("window", "the branch point T4 inside Theorem 3.1's window [d^1.01/η, d^1.99/η]",
                         float(base.step), cfg),
        "lemma_b1": judged("lemma_b1", "K-pair gradient within ||w||/d1 of the population gradient (Lemma B.1)",
                           float(reg.grad_dev.mean()), cfg),
        "convergence": Premise("convergence", "the vanilla run converged at T4: InfoNCE well below ln K, l'_p near "
                               "1 − Θ(1/τ), the loss flat (eq. (11), App. F)", conv.loss,
                               f"InfoNCE ≤ {conv.loss_max:.3g} (ln K = {conv.ln_k:.3g}); l'_p ≥ {conv.lp_min:.3g} "
                               f"(found {conv.pos_prob:.3g}); change ≤ {conv.change_max:g} (found {conv.change:.3g})",
                               conv.holds),
        "share": Premise("share", "weights in the feature span: share ≥ regime_share_min (Thm 3.1, β bound)",
                         share[0], f"≥ {cfg.regime_share_min:g} (lower 95% end)", share[1] >= cfg.regime_share_min),
        "dominant": judged("dominant", "a minority-dominant neuron at the branch point, in every replicate",
                           float(count.min()), cfg),
        "mask": judged("mask", "the magnitude mask holds minority-dominant neurons (Remark 1, Thm F.1)",
                       float(mask_share(base.W, base.M, cfg.alpha_main, cfg).mean()), cfg),
        "smallest": judged("smallest", "the minority-dominant neurons are the smallest (Remark 2): their share of "
                           "the k smallest neurons, k = their number (the mask at Remark 1's largest alpha)",
                           small, cfg),
    }


def gain_of_pruning(control: Run, pruned: Run, cfg: PruningConfig) -> torch.Tensor:
    """(R,) change of A_j*/A_maj at the end of the pruned branch over its control (Thm 3.2(c): the ratio rises)."""
    return amplitude_ratio(pruned.W, pruned.M, cfg) - amplitude_ratio(control.W, control.M, cfg)


def kappa(cfg: PruningConfig, pairs: int) -> torch.Tensor:
    """kappa_j of a cell's config (Monte Carlo, sim/theory.kappa_mc with `pairs` pairs and 2 replicates)."""
    return theory.kappa_mc(cfg, n=pairs, replicates=2)


def rate_table(cfg: PremiseMapConfig, ds, ratios) -> list[dict]:
    """Closed forms along d (no training): Stage-1 net rates of majority and minority at the bottom, middle and
    top of the lambda range and at the book's lambda, and the neurons needed for one minority lucky neuron."""
    out = []
    for d in ds:
        for r in ratios:
            c = cfg.cell("plane", d, "book", r).cfg
            r_maj, r_min = minority_rates(c, kappa(c, cfg.kappa_pairs))        # net of the book's lambda: add it back
            a = thresholds(d, r, c.lucky_gamma)[0]             # c1 log d / d: a lucky neuron needs u_ij^2 >= a
            row = {"d": d, "ratio": r, "growth_max": r_maj + c.weight_decay, "growth_min": r_min + c.weight_decay,
                   "m_needed": neurons_needed(d, r, c.n_minority, c.lucky_gamma), "m": c.m, "lucky_threshold": a}
            for name in ("book", "bottom", "mid", "top"):
                row[f"lambda_{name}"] = lambda_value(name, d, cfg.weight_decay)
            out.append(row)
    return out


def cell_premises(cell: Cell, kap: torch.Tensor, base: Run | None = None, reg: regime.Regime | None = None,
                  conv: Convergence | None = None) -> dict:
    """Every premise and prediction of a cell: the closed forms, and the measured ones when the cell was run."""
    out = closed_form(cell.cfg, kap, cell.require_sigma)
    if base is not None and reg is not None and conv is not None:
        out.update(measured(base, cell.cfg, reg, conv))
    return out

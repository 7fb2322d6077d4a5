"""Notebook 04's measurements on trained Runs: feature statistics, growth rates, the Remark 2 mechanism, the mask
census.

Everything here is a pure function of weights, histories or Runs (sim/); the protocol and the verdicts are in
protocol.py and verdicts.py. The minority features j* are the last `n_minority` ones (data.eps_vector).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ... import stats
from ...sim import metrics
from ...sim.config import SimConfig
from ...sim.encoder import embed
from ...sim.loss import softmax_logits
from ...sim.prune import mask_for
from ...sim.train import Run
from ..census.sets import census_of
from .config import PruningConfig


def minority_index(cfg: SimConfig) -> list[int]:
    """Indices j* of the minority features (the last n_minority, data.eps_vector)."""
    return list(range(cfg.d - cfg.n_minority, cfg.d))


def aligned_counts(W: torch.Tensor, M: torch.Tensor, thr: float) -> torch.Tensor:
    """Per feature, the number of neurons with cos(w_i, M_j) >= thr (App. A.2, Fig. 1): (R, d)."""
    return (metrics.cosine_matrix(W, M) >= thr).sum(1).float()


def max_cosine(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """Per feature, max_i cos(w_i, M_j) (App. A.2, Fig. 2): (R, d)."""
    return metrics.cosine_matrix(W, M).amax(1)


def single_feature_counts(W: torch.Tensor, M: torch.Tensor, rel: float) -> torch.Tensor:
    """Per feature j, the number of neurons whose empirical N_i (metrics.dominant_sets) is exactly {j}: (R, d).

    Thm 3.1 / Thm 3.2(d) count neurons with N_i = {j}; N_i = features within a factor `rel` of the
    neuron's largest feature coefficient.
    """
    N = metrics.dominant_sets(W @ M, rel)
    return (N & (N.sum(-1, keepdim=True) == 1)).sum(1).float()


def amplitudes(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """A_j = max_i |<w_i, M_j>| (brief P8): (R, d)."""
    return (W @ M).abs().amax(1)


def split_mean(x: torch.Tensor, cfg: SimConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean over minority features and over majority features of a (..., d) statistic."""
    k = cfg.d - cfg.n_minority
    return x[..., k:].mean(-1), x[..., :k].mean(-1)


def amplitude_ratio(W: torch.Tensor, M: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """A_j*/A_maj (R,): the minority amplitude over the mean majority amplitude (Thm 3.1 eq. 13 vs Thm 3.2(c))."""
    mino, majo = split_mean(amplitudes(W, M), cfg)
    return mino / majo


def amplitude_ratio_history(run: Run) -> tuple[torch.Tensor, torch.Tensor]:
    """A_j*/A_maj at every recorded step: (steps (T,), ratio (T, R))."""
    A = run.history.get("coef").abs().amax(2)  # (T, R, d)
    mino, majo = split_mean(A, run.cfg)
    return run.history.get("steps"), mino / majo


def growth_rates(run: Run, lo: int, hi: int) -> torch.Tensor:
    """Least-squares slope of log|<w_i, M_j>| per step over recorded steps lo <= t <= hi: (R, m, d)."""
    return metrics.log_slope(run.history.get("coef").abs(), run.history.get("steps"), lo, hi + 1)


def top_neurons(coef: torch.Tensor, k: int) -> torch.Tensor:
    """Per replicate and feature, the k neurons with the largest |<w_i, M_j>|: indices (R, k, d)."""
    return coef.abs().topk(k, dim=1).indices


def excess_growth_per_feature(branch: Run, control: Run, cfg: PruningConfig) -> torch.Tensor:
    """Excess per-step growth rate of log|<w_i, M_j>| in the branch over the control, per feature (R, d).

    For each feature j, the top_k neurons by |<w_i, M_j>| at the branch point T_a stand in for M_j*
    (Thm 3.2(a)) and for "neurons associated with other features" (Thm 3.2(b)); the rate is fitted over
    [T_a, T_a + rate_window] in both runs, on the same neurons, and the control's rate is subtracted.
    """
    lo, hi = cfg.vanilla_steps, cfg.vanilla_steps + cfg.rate_window
    diff = growth_rates(branch, lo, hi) - growth_rates(control, lo, hi)  # (R, m, d)
    coef0 = control.history.coef[control.history.steps.index(cfg.vanilla_steps)]
    idx = top_neurons(coef0, cfg.top_k)                                    # (R, k, d)
    return diff.gather(1, idx).mean(1)


def excess_growth(branch: Run, control: Run, cfg: PruningConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """(minority excess (R,), majority excess (R,)): excess_growth_per_feature averaged over each group."""
    return split_mean(excess_growth_per_feature(branch, control, cfg), cfg)


def positive_gap(W: torch.Tensor, b: torch.Tensor, run: Run, mask: torch.Tensor | None) -> torch.Tensor:
    """1 - l'_p for every training pair under the (masked) model (eq. 5, Lemma F.2): (R, n)."""
    Wm = W if mask is None else W * (mask.unsqueeze(-1) if mask.dim() == 2 else mask)
    FX = embed(Wm, run.pairs.UX, b)[0]
    FY = embed(Wm, run.pairs.UY, b)[0]
    Q = softmax_logits(FX, FY, run.cfg.tau)
    return 1.0 - torch.diagonal(Q, dim1=-2, dim2=-1)


def gap_by_feature(gap: torch.Tensor, S: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean of a per-pair quantity (R, n) over pairs that contain feature j and over pairs that do not: (R, d) each."""
    S = S.float()
    with_j = (gap.unsqueeze(-1) * S).sum(1) / S.sum(1).clamp(min=1)
    without = (gap.unsqueeze(-1) * (1 - S)).sum(1) / (1 - S).sum(1).clamp(min=1)
    return with_j, without


def mechanism(run: Run, alpha: float, unit: str = "neuron") -> dict:
    """Remark 2 at the branch point: rise of 1 - l'_p under the mask, on pairs with vs without each feature.

    Returns {"rise_with": (R, d), "rise_without": (R, d), "gap_full": (R, n), "gap_mask": (R, n)}; the rise
    is (masked - full) averaged over the pairs that contain feature j (resp. do not).
    """
    b = run.bias
    mask = mask_for(run.W, alpha, unit)
    full, masked = positive_gap(run.W, b, run, None), positive_gap(run.W, b, run, mask)
    w_full, wo_full = gap_by_feature(full, run.pairs.S)
    w_mask, wo_mask = gap_by_feature(masked, run.pairs.S)
    return {"rise_with": w_mask - w_full, "rise_without": wo_mask - wo_full, "gap_full": full,
            "gap_mask": masked, "mask": mask}


def mask_census(run: Run, alpha: float, cfg: PruningConfig) -> dict:
    """Shares of the neurons a neuron mask removes at the current weights (R,) each.

    minority_aligned: cos(w_i, M_j*) >= cos_threshold for a minority j*;  minority_dominant: the neuron's
    largest feature coefficient is a minority one;  dead: ||w_i|| < dead_rel * median ||w||;  lucky_init:
    lucky at initialisation for some feature (Def. B.1 eq. 27, census.census_of on W0 M);  lucky_init_minority:
    lucky at init for a minority feature. Also the mean norm rank (0 = smallest) of minority-dominant neurons.
    """
    W, M = run.W, run.M
    pruned = mask_for(W, alpha, "neuron") == 0                       # (R, m)
    cos = metrics.cosine_matrix(W, M)
    jstar = minority_index(cfg)
    mino_aligned = (cos[..., jstar] >= cfg.cos_threshold).any(-1)
    mino_dom = torch.isin(cos.argmax(-1), torch.tensor(jstar))
    norm = W.norm(dim=-1)
    dead = norm < cfg.dead_rel * norm.median(dim=-1, keepdim=True).values
    rho = cfg.eps_min / cfg.eps_max
    lucky = census_of(run.W0 @ M, cfg.d, rho, cfg.lucky_gamma)["lucky"]  # (R, m, d)
    def share(sel):
        return (sel & pruned).sum(-1).float() / pruned.sum(-1).clamp(min=1).float()
    rank = torch.argsort(torch.argsort(norm, dim=-1), dim=-1).float() / (cfg.m - 1)
    dom_rank = torch.where(mino_dom, rank, torch.nan)
    return {"minority_aligned": share(mino_aligned), "minority_dominant": share(mino_dom),
            "dead": share(dead), "lucky_init": share(lucky.any(-1)),
            "lucky_init_minority": share(lucky[..., jstar].any(-1)),
            "lucky_init_count": lucky.any(-1).sum(-1).float(),
            "lucky_init_minority_count": lucky[..., jstar].any(-1).sum(-1).float(),
            "minority_aligned_count": mino_aligned.sum(-1).float(),
            "minority_dominant_rank": torch.nanmean(dom_rank, dim=-1),
            "pruned": pruned}


def mask_persistence(run: Run, cfg: PruningConfig, alpha: float, first_W: torch.Tensor) -> torch.Tensor:
    """Fraction of the neurons pruned at the branch point that are still pruned at the end (R,)."""
    a = mask_for(first_W, alpha, cfg.prune_unit) == 0
    b = mask_for(run.W, alpha, cfg.prune_unit) == 0
    return (a & b).sum(-1).float() / a.sum(-1).clamp(min=1).float()


def degradation_threshold(alphas, majority: torch.Tensor, control: torch.Tensor, tol: float) -> torch.Tensor:
    """Per replicate, the smallest alpha whose majority statistic fell below (1 - tol) x control; NaN if none.

    majority: (R, k) over the sorted alphas; control: (R,).
    """
    alphas = torch.tensor([float(a) for a in alphas])
    drop = majority < (1.0 - tol) * control.unsqueeze(-1)
    first = torch.where(drop.any(-1), drop.float().argmax(-1), torch.full(drop.shape[:1], -1))
    return torch.where(first >= 0, alphas[first.clamp(min=0)], torch.full(first.shape, float("nan")))


def t5_elapsed(cfg: SimConfig, alpha: float, C_z: float = 1.0) -> float:
    """Theorem 3.2 proof (F.4): steps after T4 to convergence,
    ((eps_max/eps_j*) - 1) d / (eta alpha eps_j*^2 C_z loglog d).

    eps is taken relative to eps_max (eps_max = 1 in the paper's normalisation); C_z = 1 is a free constant.
    """
    e = cfg.eps_min / cfg.eps_max
    return (1.0 / e - 1.0) * cfg.d / (cfg.lr * alpha * e ** 2 * C_z * math.log(math.log(cfg.d)))


# --- the measurements of notebook 04, one function per step; each returns per-replicate tensors ---

FEATURE_STATS = ("aligned", "max cosine", "single-feature neurons", "amplitude A_j")


def feature_stats(run: Run, cfg: PruningConfig) -> dict:
    """Per statistic of FEATURE_STATS, (minority mean (R,), majority mean (R,)) at the run's final weights."""
    W, M = run.W, run.M
    raw = {"aligned": aligned_counts(W, M, cfg.cos_threshold), "max cosine": max_cosine(W, M),
           "single-feature neurons": single_feature_counts(W, M, cfg.single_rel), "amplitude A_j": amplitudes(W, M)}
    return {k: split_mean(v, cfg) for k, v in raw.items()}


def by_run(tables: dict, keys, stat: str) -> dict:
    """One statistic of feature_stats across runs: {"minority j*": (R, k), "majority (mean)": (R, k)}."""
    return {label: torch.stack([tables[k][stat][side] for k in keys], 1)
            for side, label in ((0, "minority j*"), (1, "majority (mean)"))}


def vanilla_summary(base: Run, cfg: PruningConfig) -> dict:
    """Step 1: loss at T_a (mean, lo, hi), its relative change over the last 20% of vanilla training, the
    realised frequency of minority and majority features, and lucky-at-init neuron counts (Def. B.1)."""
    steps, loss = base.history.get("steps"), base.history.get("loss")
    late = loss[steps >= 0.8 * cfg.vanilla_steps]
    fm, fmaj = split_mean(base.pairs.realised_frequency(), cfg)
    cen = mask_census(base, cfg.alpha_main, cfg)
    mean, lo, hi = stats.mean_ci(loss, dim=1)
    return {"loss_end": (float(mean[-1]), float(lo[-1]), float(hi[-1])),
            "loss_change": float((late[0] - late[-1]).mean() / late[0].mean()),
            "freq_minority": float(fm.mean()), "freq_majority": float(fmaj.mean()),
            "lucky_any": cen["lucky_init_count"].tolist(), "lucky_minority": cen["lucky_init_minority_count"].tolist()}


def main_index(alphas: list, cfg: PruningConfig) -> int:
    """Index of alpha_main in the sorted grid, or the middle of the grid if alpha_main is not in it."""
    return alphas.index(cfg.alpha_main) if cfg.alpha_main in alphas else len(alphas) // 2


def excess_by_alpha(runs: dict, alphas: list, cfg: PruningConfig) -> dict:
    """Step 3 (Thm 3.2(a, b)): excess growth rates over the control per alpha, minority and majority (R, k);
    the log-log slope of the minority excess against alpha (mean, lo, hi); at alpha_main their ratio (R,)."""
    return excess_summary(alphas, [excess_growth(runs[a], runs[0.0], cfg) for a in alphas], cfg)


def excess_summary(alphas: list, pairs: list, cfg: PruningConfig) -> dict:
    """excess_by_alpha from each alpha's excess_growth (minority (R,), majority (R,)), in the order of `alphas`: what
    a run split into parts (split.py) puts back together."""
    mino, majo = torch.stack([p[0] for p in pairs], 1), torch.stack([p[1] for p in pairs], 1)
    k = main_index(alphas, cfg)
    return {"minority": mino, "majority": majo, "slope": stats.loglog_slope_ci(torch.tensor(alphas), mino),
            "k_main": k, "ratio_main": mino[:, k] / majo[:, k]}


def mechanism_summary(base: Run, runs: dict, cfg: PruningConfig) -> dict:
    """Step 4 (Remark 2, Lemma F.2) at the branch point with the alpha_main neuron mask.

    gaps: mean 1 - l'_p on pairs with / without j*, with / without the mask (R,) each; gap_diff: rise with j*
    minus rise without (R,); per feature j (R, d): share_pruned (share of pruned neurons whose dominant
    feature is j), rise_excess (rise of 1 - l'_p on pairs with j minus without) and excess_growth (branch at
    alpha_main over the control, None if alpha_main is not a branch); their correlations with share_pruned
    (corr_growth NaN without that branch).
    """
    mech = mechanism(base, cfg.alpha_main, "neuron")   # the theory prunes whole neurons
    rw, rwo = mech["rise_with"], mech["rise_without"]
    gap_diff = split_mean(rw, cfg)[0] - split_mean(rwo, cfg)[0]
    full_w, full_wo = gap_by_feature(mech["gap_full"], base.pairs.S)
    mask_w, mask_wo = gap_by_feature(mech["gap_mask"], base.pairs.S)
    gaps = {"with j*, no mask": full_w, "with j*, mask": mask_w, "without j*, no mask": full_wo,
            "without j*, mask": mask_wo}
    dom = torch.nn.functional.one_hot(metrics.cosine_matrix(base.W, base.M).argmax(-1), cfg.d).float()
    pruned = (mech["mask"] == 0).float()
    share = (dom * pruned.unsqueeze(-1)).sum(1) / pruned.sum(1, keepdim=True).clamp(min=1)   # (R, d)
    exc = excess_growth_per_feature(runs[cfg.alpha_main], runs[0.0], cfg) if cfg.alpha_main in runs else None
    def corr(y):
        return float(torch.corrcoef(torch.stack([share.flatten(), y.flatten()]))[0, 1])
    return {"gaps": {k: split_mean(v, cfg)[0] for k, v in gaps.items()}, "gap_diff": gap_diff,
            "share_pruned": share, "rise_excess": rw - rwo, "excess_growth": exc,
            "corr_rise": corr(rw - rwo), "corr_growth": float("nan") if exc is None else corr(exc)}


def degradation(runs: dict, tables: dict, census: dict, alphas: list, cfg: PruningConfig) -> dict:
    """Step 5 (Remark 1): majority amplitude and aligned count per alpha (R, k) and in the control (R,),
    the first alpha whose drop exceeds degrade_tol (R,), and the bound |M_j*|/m (minority-aligned neurons at
    T_a over m) (R,)."""
    return degradation_of({a: majority_amplitude(runs[a], cfg) for a in (0.0, *alphas)}, tables, census, alphas, cfg)


def majority_amplitude(run: Run, cfg: PruningConfig) -> torch.Tensor:
    """The mean majority amplitude A_maj at the run's final weights (R,)."""
    return split_mean(amplitudes(run.W, run.M), cfg)[1]


def degradation_of(amaj: dict, tables: dict, census: dict, alphas: list, cfg: PruningConfig) -> dict:
    """degradation from each run's majority_amplitude ({0.0 (the control) | alpha: (R,)}) and feature tables."""
    A, A0 = torch.stack([amaj[a] for a in alphas], 1), amaj[0.0]
    N = torch.stack([tables[a]["aligned"][1] for a in alphas], 1)           # the majority side, (R, k)
    N0 = tables[0.0]["aligned"][1]
    return {"A_maj": A, "A_maj0": A0, "N_maj": N, "N_maj0": N0,
            "thr_A": degradation_threshold(alphas, A, A0, cfg.degrade_tol),
            "thr_N": degradation_threshold(alphas, N, N0, cfg.degrade_tol),
            "bound": census[alphas[0]]["minority_aligned_count"] / cfg.m}


def pruned_norm_history(run: Run, pruned: torch.Tensor, cfg: PruningConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean ||w_i|| over the neurons `pruned` (R, m) selects, at every recorded step from T_a:
    (steps (T',), (T', R))."""
    s, n = run.history.get("steps"), run.history.get("norm2").sqrt()
    sel = s >= cfg.vanilla_steps
    return s[sel], (n[sel] * pruned).sum(-1) / pruned.sum(-1).clamp(min=1)


# --- Theorem 3.2's premises on a run: convergence at T4, the paper's T, Remark 1's bounds; the oracle sets ---

def paper_T(cfg: SimConfig, alpha: float, C_z: float = 1.0) -> float:
    """App. F.4's elapsed time after T4, T = ((eps_max/eps_j*) - 1) d / (eta alpha eps_j*^2 C_z loglog d) (t5_elapsed);
    inf for alpha = 0 (an empty mask never converges to Thm 3.2(c))."""
    return math.inf if alpha <= 0 else t5_elapsed(cfg, alpha, C_z)


@dataclass(frozen=True)
class Convergence:
    """The convergence premise on a vanilla run's history (Thm 3.1 eq. (11); App. F: l'_p = 1 - Theta(1/tau)):
    the worst replicate's final InfoNCE, l'_p and relative change over the last window, against fixed tolerances."""

    loss: float          # largest final InfoNCE over replicates
    ln_k: float          # ln K: the InfoNCE of an encoder that has learned nothing
    loss_max: float      # the tolerance: loss_frac * ln K ("well below ln K")
    pos_prob: float      # smallest final mean l'_p over replicates
    lp_min: float        # the tolerance: 1 - lp_c / tau ("near 1 - Theta(1/tau)")
    change: float        # largest relative change of the loss over the last `window` steps (the plateau)
    change_max: float    # the tolerance on it
    step: int            # the step these were read at (T4, the branch point)

    @property
    def holds(self) -> bool:
        """All three: the loss is well below ln K, l'_p is near 1 - Theta(1/tau), and the loss stopped moving."""
        return self.loss <= self.loss_max and self.pos_prob >= self.lp_min and self.change <= self.change_max

    @property
    def flat(self) -> bool:
        """Only the plateau part: the loss stopped moving (a stopping rule, not the premise)."""
        return self.change <= self.change_max


def convergence(steps: torch.Tensor, loss: torch.Tensor, pos_prob: torch.Tensor, K: int, tau: float,
                loss_frac: float, lp_c: float, change_max: float, window: int) -> Convergence:
    """Convergence of a history: steps (T,), loss and pos_prob (T, R); the plateau compares the last snapshot with
    the last one at least `window` steps before it (the change is inf when the history is shorter than the window)."""
    last = int(steps[-1])
    early = (steps <= last - window).nonzero().flatten()
    if len(early):
        ref = loss[int(early[-1])]
        change = float(((loss[-1] - ref).abs() / ref.abs().clamp(min=1e-12)).max())
    else:
        change = math.inf
    ln_k = math.log(K)
    return Convergence(float(loss[-1].max()), ln_k, loss_frac * ln_k, float(pos_prob[-1].min()), 1.0 - lp_c / tau,
                       change, change_max, last)


def minority_dominant(W: torch.Tensor, M: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """(R, m) bool: the neuron's largest |cos(w_i, M_j)| is on a minority feature."""
    cos = metrics.cosine_matrix(W, M)
    return torch.isin(cos.argmax(-1), torch.tensor(minority_index(cfg)))


def lucky_minority(W0: torch.Tensor, M: torch.Tensor, cfg: PruningConfig) -> torch.Tensor:
    """(R, m) bool: Def. B.1's lucky minority neurons, i in M*_j* for a minority j*, on the initial weights W0
    (eqs. 26-28 with gamma = lucky_gamma): the set Theorem F.1 prunes (P ⊆ M*_j*) and Remark 1's strict bound."""
    lucky = census_of(W0 @ M, cfg.d, cfg.eps_min / cfg.eps_max, cfg.lucky_gamma)["lucky"]
    return lucky[..., minority_index(cfg)].any(-1)


def learned_minority(W: torch.Tensor, M: torch.Tensor, cfg: PruningConfig) -> torch.Tensor:
    """(R, m) bool: neurons with j* in N_i at the current weights (Def. B.1's ordinary threshold c2 log d / d on
    u_ij*^2 applied to the trained coefficients): Remark 1's extended bound, "any neurons that have learned
    minority features"."""
    ordinary = census_of(W @ M, cfg.d, cfg.eps_min / cfg.eps_max, cfg.lucky_gamma)["ordinary"]
    return ordinary[..., minority_index(cfg)].any(-1)

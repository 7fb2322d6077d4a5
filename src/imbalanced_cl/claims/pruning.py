"""Notebook 04: does Algorithm 1's magnitude pruning rescue minority features? (Thm 3.2, Thm F.1, Remarks 1-3)

Protocol (Thm F.1 prunes from T4, after vanilla convergence): train vanilla for `vanilla_steps`, then branch
from that checkpoint with the same training set (full-batch GD, so every step is one epoch) into a control
(alpha = 0) and pruned runs. Everything here measures Runs produced by train.train; nothing is fitted to
the claim. The minority features j* are the last `n_minority` ones (data.eps_vector).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..sim import metrics
from ..sim.config import SimConfig
from ..sim.encoder import embed
from ..sim.loss import softmax_logits
from ..sim.prune import mask_for
from ..sim.train import Run, train
from ..validate import check, check_float, check_grid, check_int
from .census import census_of


@dataclass(frozen=True)
class PruningConfig(SimConfig):
    """Notebook 04: vanilla run, branches over an alpha grid, backward variants, and an eps_min sweep.

    SimConfig's `steps`, `prune_alpha`, `prune_start` and `prune_backward` are set by the protocol (see
    `vanilla`, `branch`); `prune_unit` and `prune_every` are used as given.
    """

    vanilla_steps: int = 1500        # T_a: vanilla training before the branch (>= T4 = d^1.99/eta = 775 at d=20)
    prune_steps: int = 1000          # T_b - T_a: length of every branch
    alpha_grid: tuple = (0.02, 0.05, 0.1, 0.2, 0.4)  # pruning ratios of the branches
    alpha_main: float = 0.05          # ratio used for the backward, t = 0 and eps_min comparisons
    progress: bool = False            # tqdm progress bar
    eps_min_grid: tuple = (0.3, 0.5, 0.7, 1.0)  # eps_min sweep for A_j*/A_maj and excess growth vs eps_j*
    cos_threshold: float = 0.3       # "aligned" means cos(w_i, M_j) >= this (App. A.2, Fig. 1)
    single_rel: float = 0.5          # N_i = {j : |<w_i,M_j>| >= single_rel * max_j' |<w_i,M_j'>|}
    top_k: int = 3                   # neurons per feature whose growth rate is measured (largest |<w_i,M_j>| at T_a)
    rate_window: int = 100           # steps after the branch over which growth rates are fitted
    dead_rel: float = 0.1            # a neuron is dead if ||w_i|| < dead_rel * median_i ||w_i||
    lucky_gamma: float = 0.1         # gamma of eq. (28) for the lucky-at-init census
    degrade_tol: float = 0.1         # majority features "degrade" when A_maj drops by more than this fraction
    tol_slope: tuple = (0.25, 0.5)   # |slope - predicted| for holds / partly
    tol_factor: tuple = (3.0, 10.0)  # ratio within this factor of d for holds / partly
    threads: int = 0                 # torch threads for the notebook (0: torch's default); results do not depend on it

    def validate(self) -> None:
        """SimConfig's checks plus the protocol's grids, windows and tolerances."""
        super().validate()
        check_int("vanilla_steps", self.vanilla_steps, 1)
        check_int("prune_steps", self.prune_steps, 2)
        alpha = lambda n, v: check_float(n, v, 0.0, 1.0, lo_open=True, hi_open=True)
        check_grid("alpha_grid", self.alpha_grid, alpha)
        alpha("alpha_main", self.alpha_main)
        check_grid("eps_min_grid", self.eps_min_grid,
                   lambda n, v: check_float(n, v, 0.0, self.eps_max, lo_open=True))
        check("n_minority", self.n_minority, 1 <= self.n_minority < self.d,
              f"an integer in [1, d-1] (d={self.d}): the notebook needs minority and majority features")
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)
        check_float("single_rel", self.single_rel, 0.0, 1.0, lo_open=True, hi_open=True)
        check_int("top_k", self.top_k, 1, self.m)
        check_int("rate_window", self.rate_window, 2 * self.record_every, self.prune_steps)
        check_float("dead_rel", self.dead_rel, 0.0, 1.0)
        check_float("lucky_gamma", self.lucky_gamma, 0.0, 1.0, hi_open=True)
        check_float("degrade_tol", self.degrade_tol, 0.0, 1.0, lo_open=True, hi_open=True)
        check_int("threads", self.threads, 0, 256)
        for name in ("tol_slope", "tol_factor"):
            v = getattr(self, name)
            check(name, v, isinstance(v, (tuple, list)) and len(v) == 2 and 0 < v[0] <= v[1],
                  "a pair (holds, partly) with 0 < holds <= partly")

    # --- the runs of the protocol ---
    def vanilla(self, **changes) -> SimConfig:
        """Vanilla training to T_a (no mask)."""
        return self.sim(steps=self.vanilla_steps, prune_alpha=0.0, prune_start=0, **changes)

    def branch(self, alpha: float, backward: str = "faithful", **changes) -> SimConfig:
        """A branch from T_a to T_a + prune_steps with the mask on from T_a (alpha = 0: the control)."""
        return self.sim(steps=self.vanilla_steps + self.prune_steps, prune_alpha=alpha,
                        prune_start=self.vanilla_steps, prune_backward=backward, **changes)

    def from_start(self, alpha: float) -> SimConfig:
        """Algorithm 1 as written: the mask is on from t = 0, same total length as a branch."""
        return self.sim(steps=self.vanilla_steps + self.prune_steps, prune_alpha=alpha, prune_start=0,
                        prune_backward="faithful")


def run_branches(cfg: PruningConfig, alphas, base: Run, backward: str = "faithful", **changes) -> dict:
    """Control (alpha = 0) and one branch per alpha, all resumed from the same vanilla checkpoint `base`."""
    out = {0.0: train(cfg.branch(0.0, **changes), resume=base)}
    for a in alphas:
        out[float(a)] = train(cfg.branch(float(a), backward, **changes), resume=base)
    return out


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
    share = lambda sel: (sel & pruned).sum(-1).float() / pruned.sum(-1).clamp(min=1).float()
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
    """Theorem 3.2 proof (F.4): steps after T4 to convergence, ((eps_max/eps_j*) - 1) d / (eta alpha eps_j*^2 C_z loglog d).

    eps is taken relative to eps_max (eps_max = 1 in the paper's normalisation); C_z = 1 is a free constant.
    """
    e = cfg.eps_min / cfg.eps_max
    return (1.0 / e - 1.0) * cfg.d / (cfg.lr * alpha * e ** 2 * C_z * math.log(math.log(cfg.d)))

"""Notebook 08's runs: every ratio group of one d trained through its stages in one batched call, then measured; the
whole grid (run)."""
from __future__ import annotations

import time

import numpy as np
import torch

from ... import workers as W
from ...sim import data as D
from ...sim.config import SimConfig
from ...sim.encoder import init_weights
from ...sim.train import History, Run, train
from .. import draws, lucky, stage1
from .. import pruning as PA
from .. import scaling as SC
from ..census import sets as CS
from .config import ScaleConfig, ScaleResult, clock
from .metrics import alignment, group_loss, minority_dominant, plateau, rate_ratio


# ----------------------------------------------------------------------------------------------------------------
# training one grid point: every ratio group in one batched call, in stages
# ----------------------------------------------------------------------------------------------------------------
def take(run: Run, idx: list[int], cfg: SimConfig, replicates: list[int]) -> Run:
    """The slots `idx` of a batched run as a Run of its own (pruning.select), with its group's config and its slots
    labelled by replicate index again."""
    one = PA.select(run, idx, cfg)
    one.replicates = list(replicates)
    return one


def sampler(groups: list[SimConfig], R: int, M: torch.Tensor):
    """sampler(t, slots) for train(): slot k R + r gets replicate r's pairs of step t with group k's eps, exactly
    as train() would draw them for that group alone (sub-stream t + 1; 0, the fixed set, when sampling is "fixed").
    The groups read the same random numbers (they differ in eps only), so each replicate's are drawn once per step
    and built into every group's pairs (claims.draws: common random numbers)."""
    fixed = groups[0].sampling == "fixed"
    plan = draws.common_plan(groups, groups[0].n_pairs)
    where = D.draw_device(groups[0], M.device)

    def sample(t: int, slots: list) -> D.Pairs:
        reps = sorted({s % R for s in slots})
        u = [x.to(M.device) for x in draws.raw(groups[0], plan, reps, 0 if fixed else t + 1, where)]
        parts = []
        for k, g in enumerate(groups):
            mine = [s for s in slots if s // R == k]
            if mine:
                pos = [reps.index(s % R) for s in mine]
                parts.append(D.pairs_from_draws(g, M[mine], [x[pos] for x in u]))
        return D.Pairs(*(torch.cat([getattr(p, f) for p in parts]) for f in ("UX", "UY", "S", "ZX", "ZY")))
    return sample


def start(groups: list[SimConfig], R: int) -> tuple[Run, callable]:
    """Step 0 of a batched run: replicate r's dictionary and initial weights in every group's slot (paired)."""
    reps = list(range(R))
    M = D.make_dictionaries(groups[0], reps).repeat(len(groups), 1, 1)
    W0 = init_weights(groups[0], reps).repeat(len(groups), 1, 1)
    slots = list(range(len(groups) * R))
    sample = sampler(groups, R, M.to(groups[0].torch_device))
    T1 = torch.full((len(slots),), -1, dtype=torch.long)
    return Run(groups[0], slots, M, W0, T1, 0, History(), sample(-1, slots).to("cpu"), W0), sample


def advance(run: Run, steps: int, record_every: int, sample=None) -> Run:
    """Continue a run (same data stream) to `steps` in total, recording every `record_every` steps."""
    return train(run.cfg.replace(steps=steps, record_every=record_every), resume=run, sampler=sample)


def t2_of(run: Run, factor: float) -> np.ndarray:
    """T2 per slot (lucky.detect_t2, eq. 61); -1 where not reached."""
    return lucky.detect_t2(run, factor)


def train_point(cfg: ScaleConfig, d: int) -> dict:
    """Train every ratio group of one d through the stages; returns per-group vanilla runs at T_a and T1, T2."""
    groups = [cfg.point(d, r) for r in cfg.groups]
    tau = clock(groups[0])
    run, sample = start(groups, cfg.R)
    every = max(1, round(tau / cfg.records_per_tau))
    cap1, cap2, cap3 = max(2, round(cfg.t1_cap * tau)), round(cfg.t2_cap * tau), round(cfg.t3_cap * tau)
    def step(frac):
        return max(2, round(frac * tau))
    while bool((run.T1 < 0).any()) and run.step < cap1:              # Stage 1, every step recorded
        run = advance(run, min(cap1, run.step + step(0.05)), 1, sample)
    while (t2_of(run, cfg.t2_factor) < 0).any() and run.step < cap2:  # Stage 2
        run = advance(run, min(cap2, run.step + step(0.25)), every, sample)
    T2 = t2_of(run, cfg.t2_factor)
    R = cfg.R
    run = advance(run, max(round(cfg.t3_min * tau), run.step), every, sample)   # Stage 3, until the loss levels off
    while True:
        level = plateau(run.history.get("steps").numpy(), group_loss(run, len(groups), R), tau, cfg.plateau_tol,
                        cfg.loss_drop)
        if level[0] or run.step >= cap3:
            break
        run = advance(run, min(cap3, run.step + step(0.25)), every, sample)
    parts = [take(run, list(range(k * R, (k + 1) * R)), g, list(range(R))) for k, g in enumerate(groups)]
    return {"groups": groups, "runs": parts, "tau": tau, "T_a": run.step, "every": every,
            "T1": run.T1.view(len(groups), R).numpy(), "T2": T2.reshape(len(groups), R), "plateau": level}


def branches(cfg: ScaleConfig, vanilla: Run, every: int, length: int) -> tuple[Run, Run]:
    """Control (alpha = 0) and pruned (alpha = prune_alpha) branches from the vanilla checkpoint, trained in one batch
    on the same pairs (pruning.train_branches)."""
    T_a = vanilla.step
    base = vanilla.cfg.replace(steps=T_a + length, record_every=every)
    control, pruned = PA.train_branches(vanilla, [base, base.replace(prune_alpha=cfg.prune_alpha, prune_start=T_a)])
    return control, pruned


def lucky_fraction(run: Run, T2: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Per replicate, the fraction of lucky (i, j) pairs that reach eq. (9) at T2 (lucky.lemma32), and their count.

    NaN where the replicate has no lucky pair or never reached T2."""
    frac, count = np.full(len(T2), np.nan), np.zeros(len(T2))
    for r in range(len(T2)):
        one = PA.select(run, [r])
        a = lucky.lemma32(one, T2[r:r + 1], gamma)["a_ratio"]
        count[r] = a.size
        if a.size:
            frac[r] = float((a >= 1).mean())
    return frac, count


def pruning_config(run: Run, cfg: ScaleConfig) -> PA.PruningConfig:
    """The PruningConfig that pruning.mask_census reads (this point's model, this notebook's definitions)."""
    return PA.PruningConfig(**run.cfg.to_dict(), cos_threshold=cfg.cos_threshold, lucky_gamma=cfg.gamma)


def measure_point(cfg: ScaleConfig, d: int) -> dict:
    """Train one d and measure everything notebook 08 reports there (numpy arrays; the runs are not kept)."""
    tp = train_point(cfg, d)
    runs, groups = tp["runs"], tp["groups"]
    low = runs[-1]                                     # the minority group (smallest ratio)
    control, pruned = branches(cfg, low, tp["every"], round(cfg.branch_tau * tp["tau"]))
    Ni = np.stack([SC.stage3(r, cfg.ni_rel, cfg.gamma)["Ni_final"] for r in runs])            # (G, R)
    lf = [lucky_fraction(r, tp["T2"][k], cfg.gamma) for k, r in enumerate(runs)]
    dom = minority_dominant(low)
    mask = PA.mask_census(low, cfg.prune_alpha, pruning_config(low, cfg))   # the mask at T_a: whom it removes
    s_low, a_low = PA.amplitude_ratio_history(low)
    s_c, a_c = PA.amplitude_ratio_history(control)
    s_p, a_p = PA.amplitude_ratio_history(pruned)
    freq = torch.stack([r.pairs.realised_frequency() for r in runs])                          # (G, R, d)
    cen = [CS.census_of(r.W0 @ r.M, d, g.eps_min / g.eps_max, cfg.gamma)["lucky"]
           for r, g in zip(runs, groups, strict=True)]
    return {
        "d": d, "d1": groups[0].d1, "m": groups[0].m, "n_minority": groups[0].n_minority, "tau": tp["tau"],
        "T_a": tp["T_a"], "branch": control.step - tp["T_a"], "T1": tp["T1"], "T2": tp["T2"],
        "stage3": tp["plateau"][0], "loss_change": tp["plateau"][1],
        "t5": PA.t5_elapsed(groups[-1], cfg.prune_alpha),
        "freq_major": PA.split_mean(freq, groups[0])[1].numpy(), "active": freq.sum(-1).numpy() / d,
        "q_max": np.array([float(D.sample_prob(g).max()) for g in groups]),
        "lucky_init": np.stack([c.sum((-1, -2)).numpy() for c in cen]).astype(float),           # (G, R)
        "rate_ratio": rate_ratio(low, cfg.fit_start),
        "window": stage1.fit_window(low, cfg.fit_start),
        "lucky_frac": np.stack([f for f, _ in lf]), "lucky_pairs": np.stack([c for _, c in lf]),
        "alignment": alignment(low), "Ni": Ni,
        "share": mask["minority_dominant"].numpy(), "dead": mask["dead"].numpy(),
        "dominant": dom.sum(-1).numpy().astype(float), "chance": dom.float().mean(-1).numpy(),
        "gain": (PA.amplitude_ratio(pruned.W, pruned.M, groups[-1])
                 - PA.amplitude_ratio(control.W, control.M, groups[-1])).numpy(),
        "loss": np.stack([r.history.get("loss")[-1].numpy() for r in runs]),
        "series": {"t": s_low.numpy() / tp["tau"], "A": a_low.numpy(),
                   "loss": np.stack([r.history.get("loss").mean(1).numpy() for r in runs], 1),
                   "tb": s_c.numpy() / tp["tau"], "A_control": a_c.numpy(), "A_pruned": a_p.numpy()},
    }


def run(cfg: ScaleConfig) -> ScaleResult:
    """Train and measure every d of the grid (torch threads set from cfg.threads while it runs).

    The values of d are independent, so they run in worker processes of one thread each when cfg.workers gives
    several (0: one per core this process may use, decided before cfg.threads pins this process; one on CUDA); a
    point's numbers do not depend on where it runs."""
    t0, prev = time.time(), torch.get_num_threads()
    workers = cfg.workers or W.plan(0, len(cfg.ds), cfg.torch_device.type == "cuda")
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    try:
        _, points = W.pieces(measure_point, [(cfg, d) for d in cfg.ds], [f"d={d}" for d in cfg.ds], workers,
                             settings=f"notebook 08, ds {list(cfg.ds)}, R {cfg.R}, K {cfg.n_pairs}")
        res = ScaleResult(cfg, list(points))
    finally:
        torch.set_num_threads(prev)
    res.seconds = time.time() - t0
    return res

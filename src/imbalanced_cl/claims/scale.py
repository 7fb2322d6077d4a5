"""Notebook 08: each headline claim along d. Does the gap between a measurement and the paper's prediction close as d
grows, with the paper's assumptions kept?

The scaling rule (one grid point per d, every other setting fixed):
  * d1 = c1 d: the ambient dimension is poly(d) (brief §2; Def. 3.1 L244 needs only d1 >= d);
  * m = round(d^C_m): Theorem 3.1 (L277) takes m = d^{C_m}; lucky sets grow like d^{C_m - (1+gamma)/rho^2}
    (Lemma B.2(c)), so C_m > 1.1 keeps them growing in the balanced group;
  * n_minority = round(minority_share d): the minority keeps the same share of the features;
  * K = n_pairs fresh pairs every step (sampling = "fresh", the population regime of Lemma B.1, L519);
    Def. 3.1's Pr(z_j != 0) = eps_j loglog d / d shrinks with d by itself (data.token_prob);
  * time is counted in the paper's clock tau_d = d log d / (eps_max eta loglog d), the scale of T2 - T1 (eq. 60)
    and of T1 in the workshop version (W351). Stage 1 runs until T1 is reached (eq. 34), Stage 2 until T2 is
    reached (eq. 61), and Stage 3 until the training loss has levelled off (Theorem 3.1's convergence, eq. (11):
    its group means change by less than plateau_tol x their start between two windows 0.5 tau_d apart), each with a cap in tau_d.
    That step is T_a: the Stage-3 quantities are measured there and the pruning branch starts there; the branch
    lasts branch_tau tau_d. Reaching the same stage at every d is what makes the grid points comparable.
Every ratio group of one d trains in one batched call (slot = group x replicate; the groups share the dictionary
and initial weights of a replicate and draw their pairs from the same random numbers, a paired design).

The trend rule (written once, in `judge_trend`). For each quantity the gap at one d is
(measured - predicted) / tol in units of the claim's own tolerance, oriented so that + is away from the prediction
(for a one-sided claim "x >= target", + is a shortfall). Per replicate, a least-squares slope of that gap over
log2 d (per doubling of d); then the mean slope and its 95% t-interval over replicates. With s = trend_sesoi:
  the gap closes      the interval lies below -s                        -> holds
  no gap at any d     every per-d interval lies inside the claim's band   -> holds
  the gap stays       the interval lies inside [-s, s]                  -> does not hold
  the gap grows       the interval lies above +s                        -> does not hold
  the gap overshoots  the gap is outside the band on opposite sides at the first and last d (two-sided claims)
                                                                        -> does not hold
  inconclusive        otherwise (with the replicates that would settle it) -> inconclusive
A failed premise (a stage not reached, data not sparse, no lucky pair, Remark 1's alpha m bound) makes the row
"not comparable" and names the premise (verdict.row).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..sim import data as D
from ..sim import metrics
from ..sim.config import SimConfig
from ..sim.encoder import init_weights
from ..sim.train import History, Run, train
from ..validate import check, check_float, check_grid, check_int
from . import census as CS
from . import lucky, pruning as PA, scaling as SC, stage1

# Fields of SimConfig that the scaling rule sets at every grid point: a value other than the default is refused,
# so a reader who sets d = 40 learns to set ds instead (name -> where the value comes from).
DERIVED = {"d": "ds", "d1": "c1 (d1 = c1 d)", "m": "C_m (m = d^C_m)", "n_minority": "minority_share",
           "eps_min": "ratios (eps_min = rho eps_max)", "steps": "the stage rules (t1_cap, t2_cap, t3_min, t3_cap)",
           "record_every": "records_per_tau", "prune_start": "the branch point T_a"}


@dataclass(frozen=True)
class ScaleConfig(SimConfig):
    """Notebook 08: a grid over d with d1, m and the step budget scaled as the paper's assumptions require."""

    ds: tuple = (20, 40, 80)          # grid of d (increasing; >= 3 points for the local |N_i| exponents)
    c1: float = 5.0                   # d1 = round(c1 d): d1 = poly(d) (brief §2)
    C_m: float = 1.25                 # m = round(d^C_m) neurons (Thm 3.1, L277)
    ratios: tuple = (1.0, 0.5)        # eps_min/eps_max of the groups trained at every d (the smallest one < 1)
    minority_share: float = 0.25      # n_minority = max(1, round(minority_share d)) minority features
    t1_cap: float = 1.0               # Stage 1 runs until every slot reached T1 (eq. 34), at most t1_cap tau_d steps
    t2_cap: float = 2.0               # Stage 2 runs until every slot reached T2 (eq. 61), at most t2_cap tau_d steps
    t3_min: float = 1.5               # Stage 3: at least t3_min tau_d steps, then until the loss levels off (T_a)
    t3_cap: float = 4.0               # ... at most t3_cap tau_d steps
    plateau_tol: float = 0.02         # the loss has levelled off when it changes by less than this x its start over 0.5 tau_d
    loss_drop: float = 0.1            # ... and it lies this fraction below its start (the flat start is not Stage 3)
    branch_tau: float = 0.5           # the pruning branch and its control last branch_tau tau_d steps
    records_per_tau: int = 50         # history records per tau_d after Stage 1 (Stage 1 is recorded every step)
    fit_start: int = 3                # first step of the Stage-1 rate fit (stage1.measured_rates)
    gamma: float = 0.1                # the constant of eq. (28) for lucky and ordinary sets
    t2_factor: float = 0.0            # T2: some ||w_i||^2 >= t2_factor ||w_i(T1)||^2 (eq. 61); 0 means d
    ni_rel: float = 0.5               # empirical N_i: j with |<w_i,M_j>| >= ni_rel max_j' |<w_i,M_j'>|
    cos_threshold: float = 0.3        # "aligned" means cos(w_i, M_j) >= this (App. A.2), for the mask census
    sparsity_max: float = 0.3         # premise: the largest per-sample feature frequency q_j of the model stays <= this
    tol_ratio: float = 0.1            # Stage-1 rate ratio: band eps_max/eps_min x (1 ± tol_ratio)
    tol_fraction: float = 0.1         # Lemma 3.2 lucky-pair fraction: band [1 - tol_fraction, 1]
    sesoi_alignment: float = 0.05     # Fig. 1: majority - minority best cos^2 must exceed this (and it is the unit)
    tol_exponent: float = 0.2         # local |N_i| exponent: band 1 - rho^2 ± tol_exponent
    tol_tracking: float = 0.3         # slope of the |N_i| exponent on 1 - rho^2: band 1 ± tol_tracking
    tol_share: float = 0.1            # share of the mask on minority-dominant neurons: band [1 - tol_share, 1]
    tol_gain: float = 0.1             # pruning gain in A_j*/A_maj: band (1 - rho) ± tol_gain
    trend_sesoi: float = 0.25         # smallest slope of interest of the gap, in tolerance units per doubling of d
    threads: int = 1                  # torch threads while training (0: torch's default); 1 is robust on a shared 2-core machine, where 2 threads oversubscribe; results do not depend on it
    # SimConfig fields with another default here
    R: int = 4                        # replicates per ratio group and d (intervals are over these)
    n_pairs: int = 256                # K: fresh pairs per step, the same at every d (Lemma B.1 asks K = poly(d1))
    prune_alpha: float = 0.1          # alpha: fraction of neurons the pruning branch masks (Alg. 1, whole neurons)
    progress: bool = False            # tqdm progress bar

    def validate(self) -> None:
        """SimConfig's checks, the grid, the rule and the tolerances; derived fields must keep their defaults."""
        base = SimConfig()
        for name, source in DERIVED.items():   # checked first, so the parameters cell states where they come from
            default = getattr(base, name)
            check(name, getattr(self, name), getattr(self, name) == default,
                  f"{default!r} only: set at every grid point from {source}")
        super().validate()
        check_grid("ds", self.ds, lambda n, v: check_int(n, v, 4))
        check("ds", self.ds, list(self.ds) == sorted(set(self.ds)) and len(self.ds) >= 2,
              "at least 2 distinct values of d, increasing")
        check_float("c1", self.c1, 1.0)
        check_float("C_m", self.C_m, 0.5, 3.0)
        check_grid("ratios", self.ratios, CS.check_ratio)
        check("ratios", self.ratios, len(set(self.ratios)) == len(self.ratios) and min(self.ratios) < 1.0,
              "distinct values in (0, 1], the smallest < 1 (claims 1 and 4 need a minority)")
        check_float("minority_share", self.minority_share, 0.0, 0.5, lo_open=True, hi_open=True)
        for d in self.ds:
            check("minority_share", self.minority_share, 1 <= self.n_min(d) <= d - 1,
                  "a share giving 1 <= n_minority <= d - 1 at every d", given=f"ds={list(self.ds)}")
        check_float("t1_cap", self.t1_cap, 0.0, lo_open=True)
        check_float("t2_cap", self.t2_cap, self.t1_cap, given=f"t1_cap={self.t1_cap}")
        check_float("t3_min", self.t3_min, 0.0, lo_open=True)
        check_float("t3_cap", self.t3_cap, max(self.t3_min, self.t2_cap),
                    given=f"t3_min={self.t3_min}, t2_cap={self.t2_cap}")
        check_float("plateau_tol", self.plateau_tol, 0.0, lo_open=True)
        check_float("loss_drop", self.loss_drop, 0.0, 1.0, hi_open=True)
        check_float("branch_tau", self.branch_tau, 0.0, lo_open=True)
        check_int("records_per_tau", self.records_per_tau, 1)
        check_int("fit_start", self.fit_start, 0)
        check_float("gamma", self.gamma, 0.0, 1.0, hi_open=True)
        check_float("t2_factor", self.t2_factor, 0.0)
        check_float("ni_rel", self.ni_rel, 0.0, 1.0, lo_open=True)
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)
        check_float("sparsity_max", self.sparsity_max, 0.0, 1.0, lo_open=True)
        for name in ("tol_ratio", "tol_fraction", "sesoi_alignment", "tol_exponent", "tol_tracking", "tol_share",
                     "tol_gain", "trend_sesoi"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)
        check_float("prune_alpha", self.prune_alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        check_int("threads", self.threads, 0, 256)

    # --- the scaling rule ---
    def n_min(self, d: int) -> int:
        """Minority features at d: max(1, round(minority_share d))."""
        return max(1, round(self.minority_share * d))

    def point(self, d: int, ratio: float) -> SimConfig:
        """The SimConfig of one grid point and ratio group: d1 = c1 d, m = d^C_m, eps_min = ratio eps_max."""
        return self.sim(d=d, d1=max(d, round(self.c1 * d)), m=max(2, round(d ** self.C_m)), n_minority=self.n_min(d),
                        eps_min=ratio * self.eps_max, prune_alpha=0.0, steps=1, record_every=1)

    @property
    def groups(self) -> list[float]:
        """The ratios, largest first (the first group has the most lucky neurons, the last is the minority test)."""
        return sorted(self.ratios, reverse=True)


def clock(cfg: SimConfig) -> float:
    """tau_d = d log d / (eps_max eta loglog d): the scale of T2 - T1 (eq. 60) and of the workshop's T1 (W351)."""
    return cfg.d * math.log(cfg.d) / (cfg.eps_max * cfg.lr * math.log(math.log(cfg.d)))


def plan(cfg: ScaleConfig) -> list[dict]:
    """The grid before any training: sizes, clock, horizons, and Thm 3.2's T5 - T4 (C_z = 1) for the branch."""
    out = []
    for d in cfg.ds:
        p = cfg.point(d, min(cfg.ratios))
        tau = clock(p)
        out.append({"d": d, "d1": p.d1, "m": p.m, "n_minority": p.n_minority, "K": p.n_pairs, "tau_d": tau,
                    "T_a": (round(cfg.t3_min * tau), round(cfg.t3_cap * tau)), "branch": round(cfg.branch_tau * tau),
                    "T5_minus_T4": PA.t5_elapsed(p, cfg.prune_alpha),
                    "q_max": float(D.sample_prob(cfg.point(d, max(cfg.ratios))).max())})
    return out


# ----------------------------------------------------------------------------------------------------------------
# training one grid point: every ratio group in one batched call, in stages
# ----------------------------------------------------------------------------------------------------------------
def take(run: Run, idx: list[int], cfg: SimConfig, replicates: list[int]) -> Run:
    """The slots `idx` of a batched run as a Run of its own, with its group's config and replicate indices."""
    h = History(steps=list(run.history.steps))
    for name in ("coef", "norm2", "bias", "loss", "pos_prob"):
        setattr(h, name, [v[idx] for v in getattr(run.history, name)])
    p = run.pairs
    pairs = D.Pairs(p.UX[idx], p.UY[idx], p.S[idx], p.ZX[idx], p.ZY[idx])
    return Run(cfg, list(replicates), run.M[idx], run.W[idx], run.T1[idx], run.step, h, pairs, run.W0[idx])


def sampler(groups: list[SimConfig], R: int, M: torch.Tensor):
    """sampler(t, slots) for train(): slot k R + r draws replicate r's pairs of step t with group k's eps, exactly
    as train() would for that group alone (sub-stream t + 1; 0, the fixed set, when sampling is "fixed")."""
    fixed = groups[0].sampling == "fixed"

    def sample(t: int, slots: list) -> D.Pairs:
        parts = []
        for k, g in enumerate(groups):
            mine = [s for s in slots if s // R == k]
            if mine:
                parts.append(D.make_pairs(g, M[mine], [s % R for s in mine], extra=0 if fixed else t + 1))
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


def group_loss(run: Run, G: int, R: int) -> np.ndarray:
    """Recorded training loss, mean over the replicates of each group: (T, G)."""
    return run.history.get("loss").view(-1, G, R).mean(-1).numpy()


def plateau(steps: np.ndarray, loss: np.ndarray, tau: float, tol: float, drop: float) -> tuple[bool, np.ndarray]:
    """Has the loss levelled off after its Stage-3 fall? Mean of the records in (t - tau/4, t] against those in
    (t - 3tau/4, t - tau/2], t the last record: levelled off when, in every column of loss (T, G), the change between
    the windows is below `tol` times the first record (the start, log K for uniform logits: one scale at every d)
    and the loss lies at least `drop` x its start below it (before Stage 3 the loss is flat too, near log K).
    Returns (levelled off, change per column in units of its start)."""
    t = steps[-1]
    now = loss[steps > t - 0.25 * tau].mean(0)
    sel = (steps > t - 0.75 * tau) & (steps <= t - 0.5 * tau)
    if not sel.any():
        return False, np.full(loss.shape[1], np.nan)
    before = loss[sel].mean(0)
    rel = np.abs(now - before) / np.abs(loss[0])
    fell = now <= (1.0 - drop) * loss[0]
    return bool((rel < tol).all() and fell.all()), rel


def train_point(cfg: ScaleConfig, d: int) -> dict:
    """Train every ratio group of one d through the stages; returns per-group vanilla runs at T_a and T1, T2."""
    groups = [cfg.point(d, r) for r in cfg.groups]
    tau = clock(groups[0])
    run, sample = start(groups, cfg.R)
    every = max(1, round(tau / cfg.records_per_tau))
    cap1, cap2, cap3 = max(2, round(cfg.t1_cap * tau)), round(cfg.t2_cap * tau), round(cfg.t3_cap * tau)
    step = lambda frac: max(2, round(frac * tau))
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
    """Control (alpha = 0) and pruned (alpha = prune_alpha) branches from the vanilla checkpoint, same pairs."""
    T_a = vanilla.step
    base = vanilla.cfg.replace(steps=T_a + length, record_every=every)
    control = train(base, resume=vanilla)
    pruned = train(base.replace(prune_alpha=cfg.prune_alpha, prune_start=T_a), resume=vanilla)
    return control, pruned


# ----------------------------------------------------------------------------------------------------------------
# measurements of one grid point (each (R,) over replicates unless stated)
# ----------------------------------------------------------------------------------------------------------------
def rate_ratio(run: Run, fit_start: int) -> np.ndarray:
    """Stage-1 majority/minority ratio of rate/eta + lambda (stage1.measured_rates; eq. 7 predicts eps_max/eps_min)."""
    cfg = run.cfg
    y = stage1.measured_rates(run, fit_start) / cfg.lr + cfg.weight_decay          # (R, d)
    mino, majo = PA.split_mean(y, cfg)
    return (majo / mino).numpy()


def lucky_fraction(run: Run, T2: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Per replicate, the fraction of lucky (i, j) pairs that reach eq. (9) at T2 (lucky.lemma32), and their count.

    NaN where the replicate has no lucky pair or never reached T2."""
    frac, count = np.full(len(T2), np.nan), np.zeros(len(T2))
    for r in range(len(T2)):
        one = take(run, [r], run.cfg, [run.replicates[r]])
        a = lucky.lemma32(one, T2[r:r + 1], gamma)["a_ratio"]
        count[r] = a.size
        if a.size:
            frac[r] = float((a >= 1).mean())
    return frac, count


def alignment(run: Run) -> np.ndarray:
    """Workshop Fig. 1: mean over majority atoms of the best cos^2(w_i, M_j) minus the same over minority atoms."""
    best = metrics.cosine_matrix(run.W, run.M).pow(2).amax(1)                      # (R, d)
    mino, majo = PA.split_mean(best, run.cfg)
    return (majo - mino).numpy()


def pruning_config(run: Run, cfg: ScaleConfig) -> PA.PruningConfig:
    """The PruningConfig that pruning.mask_census reads (this point's model, this notebook's definitions)."""
    return PA.PruningConfig(**run.cfg.to_dict(), cos_threshold=cfg.cos_threshold, lucky_gamma=cfg.gamma)


def minority_dominant(run: Run) -> torch.Tensor:
    """Per neuron, whether its largest cos(w_i, M_j) is on a minority feature: (R, m)."""
    jstar = torch.tensor(PA.minority_index(run.cfg))
    return torch.isin(metrics.cosine_matrix(run.W, run.M).argmax(-1), jstar)


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
    cen = [CS.census_of(r.W0 @ r.M, d, g.eps_min / g.eps_max, cfg.gamma)["lucky"] for r, g in zip(runs, groups)]
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


@dataclass
class ScaleResult:
    """What notebook 08 measured: one dict per d (measure_point), the config and the wall time."""

    cfg: ScaleConfig
    points: list = field(default_factory=list)
    seconds: float = 0.0

    def stack(self, key: str) -> np.ndarray:
        """One measurement over the grid, d last: (..., len(ds))."""
        return np.stack([p[key] for p in self.points], -1)


def run(cfg: ScaleConfig) -> ScaleResult:
    """Train and measure every d of the grid (torch threads set from cfg.threads while it runs)."""
    import time
    t0, prev = time.time(), torch.get_num_threads()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    try:
        res = ScaleResult(cfg, [measure_point(cfg, d) for d in cfg.ds])
    finally:
        torch.set_num_threads(prev)
    res.seconds = time.time() - t0
    return res


# The trend rule lives in scale_trends.py; its public names are also reachable from here.
from .scale_trends import CLOSES, GROWS, NO_GAP, OVERSHOOTS, STAYS, TREND_INCONCLUSIVE, TREND_VERDICT, Quantity, judge_trend, oriented, quantities, trend_slope, verdict_rows  # noqa: E402,F401 (re-exported)

"""Notebook 04: does Algorithm 1's magnitude pruning rescue minority features? (Thm 3.2, Thm F.1, Remarks 1-3)

Protocol (Thm F.1 prunes from T4, after vanilla convergence): train vanilla for `vanilla_steps`, then branch
from that checkpoint with the same training set (full-batch GD, so every step is one epoch) into a control
(alpha = 0) and pruned runs. This module holds the configuration, the runs of the protocol and the verdict
rows; the measurements on the runs are in pruning_metrics.py (re-exported here, so a notebook reads
`pruning.amplitudes`, `pruning.excess_by_alpha`, ...). Nothing is fitted to the claim.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import stats
from ..sim.config import SimConfig
from ..sim.prune import mask_for  # noqa: F401  (re-exported for the notebook)
from ..sim.train import Run, train
from ..validate import check, check_float, check_grid, check_int
from ..verdict import (UNTESTED, Verdict, judge_at_least, judge_factor, judge_positive, judge_share, judge_target,
                       with_premises)
from .pruning_control import control_rows
from .pruning_metrics import (FEATURE_STATS, aligned_counts, amplitude_ratio, amplitude_ratio_history,  # noqa: F401
                              amplitudes, by_run, degradation, degradation_threshold, excess_by_alpha, excess_growth,
                              excess_growth_per_feature, feature_stats, gap_by_feature, growth_rates, main_index,
                              mask_census, mask_persistence, max_cosine, mechanism, mechanism_summary, minority_index,
                              positive_gap, pruned_norm_history, single_feature_counts, split_mean, t5_elapsed,
                              top_neurons, vanilla_summary)


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
    tol_slope: float = 0.25   # band predicted ± tol_slope for the log-log slopes
    tol_factor: float = 3.0   # band [d / tol_factor, d × tol_factor] for the minority-excess ratio
    threads: int = 0                 # torch threads for the notebook (0: torch's default); results do not depend on it
    mask_control: bool = True        # run the 2x2 random-mask control of Step 8 (beyond the paper, issue 14); True or False
    mask_share_min: float = 0.9      # "the mask removes minority-aligned neurons" holds if the share's interval is ≥ this
    effect_tol: float = 0.02         # smallest effect of interest for Step 8's paired differences of A_j*/A_maj
    threshold_alphas: tuple = (0.6, 0.8)  # Step 8's threshold curve only: ratios above alpha_grid, all four cells

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
        check("mask_control", self.mask_control, isinstance(self.mask_control, bool), "True or False")
        check_float("effect_tol", self.effect_tol, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("mask_share_min", self.mask_share_min, 0.0, 1.0, lo_open=True)
        top = max(self.alpha_grid)
        check("threshold_alphas", self.threshold_alphas, isinstance(self.threshold_alphas, (tuple, list)) and all(
            isinstance(a, (int, float)) and not isinstance(a, bool) and top < a < 1 for a in self.threshold_alphas),
              f"a list (may be empty) of ratios in ({top:g}, 1), above alpha_grid", given=f"alpha_grid={list(self.alpha_grid)}")
        check_float("tol_slope", self.tol_slope, 0.0, lo_open=True)
        check_float("tol_factor", self.tol_factor, 1.0, lo_open=True)

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


def feature_tables(runs: dict, base: Run, cfg: PruningConfig) -> dict:
    """feature_stats of every branch (keyed by alpha, 0.0 = control) and of the vanilla model ("vanilla T_a")."""
    out = {a: feature_stats(r, cfg) for a, r in runs.items()}
    out["vanilla T_a"] = feature_stats(base, cfg)
    return out


def census_by_alpha(base: Run, alphas: list, cfg: PruningConfig) -> dict:
    """mask_census of the magnitude mask at the branch point, for every alpha of the grid."""
    return {a: mask_census(base, a, cfg) for a in alphas}


VARIANTS = ("control", "faithful (branch)", "literal (branch)", "Alg. 1 from t=0")


def run_variants(cfg: PruningConfig, base: Run, runs: dict) -> dict:
    """Step 6 at alpha_main: the control, the faithful and literal backward branches, and Alg. 1 from t = 0."""
    lit = train(cfg.branch(cfg.alpha_main, "literal"), resume=base)
    faith = runs[cfg.alpha_main] if cfg.alpha_main in runs else train(cfg.branch(cfg.alpha_main), resume=base)
    return dict(zip(VARIANTS, (runs[0.0], faith, lit, train(cfg.from_start(cfg.alpha_main)))))


def variant_stats(variants: dict, base: Run, cfg: PruningConfig) -> dict:
    """Per variant: A_j*/A_maj, minority and majority aligned counts (R,), final loss, and (branches only) the
    share of the neurons pruned at T_a still pruned at the end (R,)."""
    out = {}
    for name, r in variants.items():
        mi, ma = split_mean(aligned_counts(r.W, r.M, cfg.cos_threshold), cfg)
        out[name] = {"A_j*/A_maj": amplitude_ratio(r.W, r.M, cfg), "minority aligned": mi, "majority aligned": ma,
                     "loss": float(r.history.get("loss")[-1].mean())}
        if name != "Alg. 1 from t=0":
            out[name]["still pruned"] = mask_persistence(r, cfg, cfg.alpha_main, base.W)
    return out


def eps_sweep(cfg: PruningConfig, base: Run, control: Run, pruned: Run) -> dict:
    """Step 7: control and alpha_main branch at every eps_min of the grid (the main eps_min reuses the runs given).

    Returns runs {eps: (cfg, control, pruned)}, xr = eps / eps_max (k,), A_j*/A_maj of control and pruned
    (R, k), the minority excess rate (R, k) and their log-log slopes against xr (mean, lo, hi).
    """
    grid = sorted(float(e) for e in cfg.eps_min_grid)
    runs = {}
    for e in grid:
        c = cfg.replace(eps_min=e)
        b = base if e == cfg.eps_min else train(c.vanilla())
        ctl = control if e == cfg.eps_min else train(c.branch(0.0), resume=b)
        runs[e] = (c, ctl, pruned if e == cfg.eps_min else train(c.branch(cfg.alpha_main), resume=b))
    ratio = lambda k: torch.stack([amplitude_ratio(runs[e][k].W, runs[e][k].M, runs[e][0]) for e in grid], 1)
    xr = torch.tensor(grid) / cfg.eps_max
    ar_ctl, ar_pr = ratio(1), ratio(2)
    exc = torch.stack([excess_growth(runs[e][2], runs[e][1], runs[e][0])[0] for e in grid], 1)
    return {"eps": grid, "runs": runs, "xr": xr, "ar_ctl": ar_ctl, "ar_pr": ar_pr, "exc": exc,
            "slope_ctl": stats.loglog_slope_ci(xr, ar_ctl), "slope_pr": stats.loglog_slope_ci(xr, ar_pr),
            "slope_exc": stats.loglog_slope_ci(xr, exc)}


def final_ratios(runs: dict, variants: dict, cfg: PruningConfig) -> dict:
    """A_j*/A_maj at the end of every branch (keyed by alpha, 0.0 = control) and of the variants (by name): (R,)."""
    out = {a: amplitude_ratio(r.W, r.M, cfg) for a, r in runs.items()}
    out.update({name: amplitude_ratio(r.W, r.M, cfg) for name, r in variants.items()})
    return out


def _effect_word(lo: float, hi: float) -> str:
    return "helps" if lo > 0 else "hurts" if hi < 0 else "no clear effect"


def where_it_helps(ratios: dict, census: dict, sweep: dict, cfg: PruningConfig) -> dict:
    """Per alpha, then per eps_min: change of A_j*/A_maj over the control (R,), its reading, and the mean share of
    the mask on minority-dominant neurons (per eps_min: the mask on the control's final weights)."""
    out = {}
    for a in sorted(k for k in ratios if isinstance(k, float) and k > 0):
        d = ratios[a] - ratios[0.0]
        c = stats.ci(d)
        out[f"alpha grid: alpha={a:g} (eps ratio {cfg.eps_min / cfg.eps_max:g})"] = {
            "change of A_j*/A_maj": d, "reading": _effect_word(c[1], c[2]),
            "mask on minority-dominant": stats.ci(census[a]["minority_dominant"])[0]}
    for e, (c_e, ctl, pr) in sweep["runs"].items():
        d = amplitude_ratio(pr.W, pr.M, c_e) - amplitude_ratio(ctl.W, ctl.M, c_e)
        cen, c = mask_census(ctl, cfg.alpha_main, c_e), stats.ci(d)
        out[f"eps sweep: eps ratio {e / cfg.eps_max:g} (alpha={cfg.alpha_main:g})"] = {
            "change of A_j*/A_maj": d, "reading": _effect_word(c[1], c[2]),
            "mask on minority-dominant": stats.ci(cen["minority_dominant"])[0],
            "minority-dominant norm rank": stats.ci(cen["minority_dominant_rank"])[0]}
    return out


@dataclass
class Results:
    """What notebook 04's verdict rows read: per-replicate tensors, (R,) or (R, k) over the sorted alpha grid."""

    alphas: list              # the sorted alpha grid
    features: dict            # feature_tables: {0.0 | alpha: {stat: (minority (R,), majority (R,))}}
    excess: dict              # excess_by_alpha
    gap_diff: torch.Tensor    # mechanism_summary: rise of 1 - l'_p with j* minus without (R,)
    mask_share: torch.Tensor  # share of the alpha_main mask at T_a on minority-aligned neurons (R,)
    degradation: dict         # degradation
    ratios: dict              # final_ratios
    sweep: dict               # eps_sweep: xr (k,), ar_ctl, ar_pr, exc (R, k)
    control: dict | None = None  # pruning_control.cell_stats of the 2x2 mask control (None: not run)


def mask_share(census: dict, base: Run, cfg: PruningConfig) -> torch.Tensor:
    """Share of the alpha_main mask at the branch point that sits on minority-aligned neurons (R,)."""
    cen = census[cfg.alpha_main] if cfg.alpha_main in census else mask_census(base, cfg.alpha_main, cfg)
    return cen["minority_aligned"]


def _nan3() -> tuple:
    return (float("nan"),) * 3


def verdict_rows(res: Results, cfg: PruningConfig) -> list:
    """The verdict rows of notebook 04, judged with the tolerances of cfg (tol_slope, tol_factor, degrade_tol,
    effect_tol): 16 rows on the paper's claims, then the 2 rows of the random-mask control (beyond the paper)."""
    ts = cfg.tol_slope
    al, ex, sw, dg, R = res.alphas, res.excess, res.sweep, res.degradation, res.ratios
    k = ex["k_main"]
    rows = []
    add = lambda claim, src, pred, v, judged: rows.append(Verdict(claim, src, pred, *v, *judged))
    change = "> 0 (pruned - control)"
    ek = stats.ci(ex["minority"][:, k])
    add("Pruning adds growth along the minority feature (excess rate > 0)", "Thm 3.2(a), eq. (15)", "> 0", ek,
        judge_positive(ek[1], ek[2], f"minority excess rate at alpha={al[k]:g}"))
    sa = ex["slope"]
    add("Minority excess rate grows linearly in alpha", "Thm 3.2(a), eq. (15)", "log-log slope 1", sa,
        judge_target(sa[1], sa[2], 1.0, ts))
    se = stats.loglog_slope_ci(sw["xr"], sw["exc"])
    add("Minority excess rate grows like eps_j*^2", "Thm 3.2(a), eq. (15)", "log-log slope 2", se,
        judge_target(se[1], se[2], 2.0, ts))
    rk = stats.ci(ex["ratio_main"])
    add("Minority excess is about d times the excess of other features", "Thm 3.2(a,b), eqs. (15)-(16)",
        f"about d = {cfg.d}", rk, judge_factor(rk[1], rk[2], float(cfg.d), cfg.tol_factor))
    sc, sp = stats.loglog_slope_ci(sw["xr"], sw["ar_ctl"]), stats.loglog_slope_ci(sw["xr"], sw["ar_pr"])
    add("Without pruning, A_j*/A_maj scales like eps_min/eps_max", "Thm 3.1, eq. (13)", "log-log slope 1", sc,
        judge_target(sc[1], sc[2], 1.0, ts))
    add("With pruning, A_j*/A_maj no longer depends on eps_min/eps_max", "Thm 3.2(c), eq. (18)", "log-log slope 0",
        sp, judge_target(sp[1], sp[2], 0.0, ts))
    d_ar = stats.ci(R["faithful (branch)"] - R[0.0])
    add(f"Pruning (alpha={cfg.alpha_main:g}) raises A_j*/A_maj at eps_min/eps_max = {cfg.eps_min / cfg.eps_max:g}",
        "Thm 3.2(c), Remark 3", change, d_ar, judge_positive(d_ar[1], d_ar[2], "change", cfg.effect_tol))
    d_top = stats.ci(R[al[-1]] - R[0.0])
    add(f"Pruning raises A_j*/A_maj at the largest alpha of the grid ({al[-1]:g})", "Thm 3.2(c), Remark 3",
        change, d_top, judge_positive(d_top[1], d_top[2], "change", cfg.effect_tol))
    F, main = res.features, cfg.alpha_main
    d_al = stats.ci(F[main]["aligned"][0] - F[0.0]["aligned"][0]) if main in F else _nan3()
    add(f"Pruning adds neurons aligned with j* (cos >= {cfg.cos_threshold:g})", "Thm 3.2, Remark 3; App. A.2 metric",
        change, d_al, judge_positive(d_al[1], d_al[2], "change"))
    sf = stats.ci(F[main]["single-feature neurons"][0]) if main in F else _nan3()
    add("At least m/d neurons with N_i = {j*} after pruning", "Thm 3.2(d)", f">= m/d = {cfg.m / cfg.d:g}", sf,
        judge_at_least(sf[1], sf[2], cfg.m / cfg.d, "single-feature count"))
    gd = stats.ci(res.gap_diff)
    add("Under the mask, 1 - l'_p rises more on pairs containing j*", "Remark 2, Lemma F.2, eq. (181)",
        "> 0 (rise with j* - rise without)", gd, judge_positive(gd[1], gd[2], "difference"))
    sh = stats.ci(res.mask_share)
    add("The mask removes minority-aligned neurons", "Remark 1, Thm F.1 (P ⊆ M*_j*)", "share 1", sh,
        judge_share(sh[1], sh[2], cfg.mask_share_min, "share of minority-aligned neurons in the mask"))
    ri = stats.ci(majority_change_within_bound(al, dg["A_maj"], dg["A_maj0"], dg["bound"]))
    add("Majority amplitude intact for alpha within |M_j*|/m", "Remark 1", "relative change 0", ri,
        judge_target(ri[1], ri[2], 0.0, cfg.degrade_tol))
    th, bound = stats.ci(dg["thr_A"]), float(dg["bound"].mean())
    th_v = ((UNTESTED, f"no alpha in the grid lowered A_maj by more than {cfg.degrade_tol:.0%}") if math.isnan(th[0])
            else judge_at_least(th[1], th[2], bound, "first degrading alpha"))
    add("Majority features degrade only beyond alpha = |M_j*|/m", "Remark 1 (implicit bound)",
        f">= |M_j*|/m ≈ {bound:.3g}", th, th_v)
    dsl = stats.ci(stats.loglog_slopes(sw["xr"], sw["ar_ctl"]) - stats.loglog_slopes(sw["xr"], sw["ar_pr"]))
    add("Pruning removes the dependence on eps_min/eps_max", "Thm 3.1 eq. (13) vs Thm 3.2(c)",
        "slope(control) - slope(pruned) = 1", dsl, judge_target(dsl[1], dsl[2], 1.0, ts))
    d_s = stats.ci(R["Alg. 1 from t=0"] - R[0.0])
    add("Algorithm 1 from t = 0 raises A_j*/A_maj over vanilla", "Algorithm 1, Sec. 2 (K3)",
        "> 0 (pruned - vanilla, same steps)", d_s, judge_positive(d_s[1], d_s[2], "change", cfg.effect_tol))
    # Thm 3.2 prunes minority lucky neurons (Remark 1, P ⊆ M*_j*): where the mask holds none, its rows say nothing
    # about the theorem, for or against.
    share = float(res.mask_share.mean())
    rows = with_premises(rows, [(f"the alpha_main mask holds minority-aligned neurons (mean share {share:.2g} > 0; "
                                 "Remark 1, P ⊆ M*_j*)", share > 0)], MECHANISM_ROWS)
    return rows + control_rows(res.control, al, cfg)


# The rows whose statement presupposes that the mask removes minority neurons (Thm 3.2's mechanism).
MECHANISM_ROWS = {"Pruning adds growth along the minority feature (excess rate > 0)",
                  "Minority excess rate grows linearly in alpha", "Minority excess rate grows like eps_j*^2",
                  "Minority excess is about d times the excess of other features",
                  "With pruning, A_j*/A_maj no longer depends on eps_min/eps_max",
                  "At least m/d neurons with N_i = {j*} after pruning",
                  "Pruning removes the dependence on eps_min/eps_max", "Pruning (alpha=", "Pruning raises A_j*/A_maj",
                  "Pruning adds neurons aligned"}


def majority_change_within_bound(alphas: list, A: torch.Tensor, A0: torch.Tensor, bound: torch.Tensor) -> torch.Tensor:
    """Per replicate, A_maj at the largest grid alpha <= bound over the control's, minus 1 (R,); NaN if none is inside.

    Remark 1: within alpha <= |M_j*|/m every pruned neuron is a minority neuron, so the majority should be intact.
    """
    inside = torch.tensor(alphas).unsqueeze(0) <= bound.unsqueeze(-1) + 1e-9        # (R, k)
    k_in = torch.where(inside.any(-1), inside.float().cumsum(-1).argmax(-1), torch.full(bound.shape, -1))
    return torch.where(k_in >= 0, A.gather(1, k_in.clamp(min=0).unsqueeze(1)).squeeze(1) / A0 - 1.0,
                       torch.full(bound.shape, float("nan")))
